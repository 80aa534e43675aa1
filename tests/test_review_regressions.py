"""Regression tests for bugs found in a review: each test failed before its fix."""

from __future__ import annotations

from typing import Any

import pytest

import loopwright as lw
from loopwright.invariant import holds_final


def use(i: str, name: str, x: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": name, "input": x or {}}


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


# --- a handler's odd return values --------------------------------------------------------------

def _run_returning(value: Any) -> lw.ResultMessage:
    t = lw.Tool("t", "returns a fixed value", {"type": "object", "properties": {}}, lambda x: value)
    return lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "t")], [text("done")]]), tools=[t]))


def _result_block(r: lw.ResultMessage) -> dict[str, Any]:
    block: dict[str, Any] = r.messages[2]["content"][0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "u1"
    return block


def test_handler_returning_a_list_of_strings_gives_text_blocks() -> None:
    # Before: AttributeError 'str' has no to_wire, the run ended with an assistant tool_use
    # and no result in result.messages (Inv broken).
    r = _run_returning(["first", "second"])
    assert r.subtype == "success" and holds_final(r.messages)
    assert _result_block(r)["content"] == [text("first"), text("second")]


@pytest.mark.parametrize("value", [
    [1, 2],
    lw.ToolOutput([object()]),  # type: ignore[list-item]
    [{"type": "tool_result", "tool_use_id": "u1", "content": "nested"}],
    [{"type": "tool_use", "id": "x", "name": "t", "input": {}}],
    [{"type": "thinking", "thinking": "hm", "signature": "s"}],
])
def test_handler_returning_blocks_that_cannot_be_a_result_is_an_error_result(value: Any) -> None:
    r = _run_returning(value)
    assert r.subtype == "success" and holds_final(r.messages)
    block = _result_block(r)
    assert block["is_error"] is True and "malformed content" in block["content"]


def test_tool_output_keeps_its_error_flag_with_list_content() -> None:
    r = _run_returning(lw.ToolOutput(["bad thing"], is_error=True))
    block = _result_block(r)
    assert block["is_error"] is True and block["content"] == [text("bad thing")]
