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


@pytest.mark.parametrize("printed", ['{"x": 1' + "0" * 5000 + "}", '{"x": ' + "[" * 5000 + "]" * 5000 + "}"],
                         ids=["5000-digit-number", "nested-5000-deep"])
def test_a_hooks_json_that_python_cannot_read_is_its_error_not_the_runs_end(tmp_path: Path, printed: str) -> None:
    """Python's json refuses a number of more than 4300 digits (ValueError) and nesting past its
    recursion limit (RecursionError): a PreToolUse hook printing either ended the run there
    (error_during_execution, the turn lost). It is the hook's error, its output taken as text."""
    script = tmp_path / "odd.sh"
    script.write_text(f"#!/bin/sh\ncat > /dev/null\ncat <<'EOF'\n{printed}\nEOF\n")
    script.chmod(0o755)
    r = lw.run("go", opts(tmp_path, [[use("echo ran")], [text("ok")]], {"PreToolUse": hook(str(script))}))
    assert r.subtype == "success" and r.result == "ok", r.errors
    assert r.messages[2]["content"][0]["content"] == "ran"
