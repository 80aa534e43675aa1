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

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data":  # 1x1 px
                                     "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"}}


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


@pytest.mark.parametrize("block", [
    {"type": "text"}, {"type": "text", "text": 5}, {"type": "tool_use", "id": "x", "name": "Bash", "input": {}},
    {"type": "thinking", "thinking": "hm"}, {"type": "frobnicate"},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
    {"type": "image"},
], ids=["text-without-text", "text-not-a-string", "tool_use", "thinking", "unknown", "no-image", "image-no-source"])
def test_a_block_a_tool_result_cannot_hold_is_named_not_sent(tmp_path: Path, block: dict[str, object]) -> None:
    """A PostToolUse hook's updatedToolOutput blocks go to the model as the tool's result: one a
    tool result cannot hold (a text with no text, a tool_use, a type nobody knows, an image that
    does not decode) made every later request one the Messages API refuses, and the session with
    it. It is named in a text block instead; the hook's other blocks stay."""
    out = {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                  "updatedToolOutput": [block, {"type": "text", "text": "kept"}]}}
    r = lw.run("go", opts(tmp_path, [[use("echo x")], [text("ok")]], {"PostToolUse": hook(logger(tmp_path, "p", out))}))
    content = r.messages[2]["content"][0]["content"]
    assert isinstance(content, list) and content[-1] == {"type": "text", "text": "kept"}, content
    assert content[0]["type"] == "text" and ("left out" in content[0]["text"] or "not shown" in content[0]["text"]), content
    assert messages_problem(r.messages) is None


def test_a_hooks_image_that_decodes_is_sent() -> None:
    """(A PNG that decodes, as the first test's blocks hold: kept as the hook gave it.)"""
    import base64
    import io

    from PIL import Image

    Image.open(io.BytesIO(base64.b64decode(IMAGE["source"]["data"]))).load()  # type: ignore[index]
