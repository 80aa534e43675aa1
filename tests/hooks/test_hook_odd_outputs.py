"""A PostToolUse hook's updatedToolOutput of content blocks is what the model sees; a blank text
block in it would make every later request one the Messages API refuses (api_rules), so it is
dropped, as an MCP result's is (tests/mcp/test_mcp_odd_results.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopwright as lw
from loopwright.testing.api_rules import messages_problem
from tests.helpers import bash as use
from tests.helpers import text
from tests.hooks.test_hooks_claude_events import hook, logger, opts

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}


@pytest.mark.parametrize(("blocks", "content"), [
    ([{"type": "text", "text": ""}, IMAGE, {"type": "text", "text": " "}, {"type": "text", "text": "kept"}],
     [IMAGE, {"type": "text", "text": "kept"}]),
    ([{"type": "text", "text": ""}, {"type": "text", "text": "\n"}], "(no output)"),
], ids=["some", "all-blank"])
def test_blank_text_blocks_of_an_updated_tool_output_are_dropped(tmp_path: Path, blocks: list[object],
                                                                 content: object) -> None:
    out = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": blocks}}
    r = lw.run("go", opts(tmp_path, [[use("echo x")], [text("ok")]], {"PostToolUse": hook(logger(tmp_path, "p", out))}))
    assert r.messages[2]["content"][0]["content"] == content
    assert messages_problem(r.messages) is None
