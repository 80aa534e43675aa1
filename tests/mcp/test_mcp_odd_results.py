"""An MCP server's odd results (hostile or sloppy): what reaches the model is always a tool_result
the Messages API takes (loopwright.testing.api_rules: no empty or whitespace-only text block)."""

from __future__ import annotations

from typing import Any

import pytest

from loopwright.blocks import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from loopwright.testing.api_rules import messages_problem

types = pytest.importorskip("mcp.types", reason="the MCP SDK is an extra: pip install 'loopwright[mcp]'")
from loopwright.mcp.results import result_output  # noqa: E402

PNG = "iVBORw0KGgo="


def _problem(content: Any, is_error: bool) -> str | None:
    msgs = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": [ToolUseBlock("t1", "mcp__s__x", {}).to_wire()]},
            {"role": "user", "content": [ToolResultBlock("t1", content, is_error).to_wire()]}]
    return messages_problem(msgs)


@pytest.mark.parametrize("is_error", [False, True])
def test_blank_text_blocks_are_dropped_and_the_others_kept(is_error: bool) -> None:
    result = types.CallToolResult(content=[
        types.TextContent(type="text", text=""), types.ImageContent(type="image", data=PNG, mimeType="image/png"),
        types.TextContent(type="text", text=" \n"), types.TextContent(type="text", text="kept")], isError=is_error)
    out = result_output(result, None)
    assert out.is_error is is_error
    assert isinstance(out.content, list)
    assert [type(b) for b in out.content] == [ImageBlock, TextBlock] and out.content[1].text == "kept"
    assert _problem(out.content, is_error) is None


@pytest.mark.parametrize("texts", [[""], ["", ""], ["", "  ", "\n"]])
def test_only_blank_text_is_still_a_valid_non_empty_result(texts: list[str]) -> None:
    result = types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in texts])
    out = result_output(result, None)
    assert out.content == "(no output)"
    assert _problem(out.content, False) is None


def test_one_blank_text_beside_an_image_leaves_the_image_alone() -> None:
    result = types.CallToolResult(content=[types.ImageContent(type="image", data=PNG, mimeType="image/png"),
                                           types.TextContent(type="text", text="")])
    out = result_output(result, None)
    assert isinstance(out.content, list) and [type(b) for b in out.content] == [ImageBlock]
    assert _problem(out.content, False) is None
