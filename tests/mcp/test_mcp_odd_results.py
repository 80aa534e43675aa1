"""An MCP server's odd results (hostile or sloppy): what reaches the model is always a tool_result
the Messages API takes (loopwright.testing.api_rules: no empty or whitespace-only text block)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loopwright.blocks import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from loopwright.testing.api_rules import messages_problem

types = pytest.importorskip("mcp.types", reason="the MCP SDK is an extra: pip install 'loopwright[mcp]'")
from loopwright.mcp.results import result_output  # noqa: E402

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"  # 1x1 px


def _encoded(fmt: str, size: tuple[int, int]) -> str:
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buf, fmt)
    return base64.b64encode(buf.getvalue()).decode()


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


@pytest.mark.parametrize("data", ["iVBORw0KGgo=", "not base64 at all!", PNG[:-10]])
def test_an_image_that_is_no_image_is_a_notice_not_an_image_block(data: str) -> None:
    """An image whose data is not base64, or decodes to no image (a PNG's signature alone, a cut
    one): the Messages API answers 'Could not process image' to every later request of the session
    (the image stays in the history), so it is named in text instead. Read decodes its images."""
    result = types.CallToolResult(content=[types.ImageContent(type="image", data=data, mimeType="image/png"),
                                           types.TextContent(type="text", text="kept")])
    out = result_output(result, None)
    blocks = out.content if isinstance(out.content, list) else [TextBlock(out.content)]
    assert not any(isinstance(b, ImageBlock) for b in blocks), blocks
    assert "image (image/png) not shown" in blocks[0].text and blocks[-1].text == "kept", blocks


def test_an_image_is_sent_as_the_type_it_is() -> None:
    """A JPEG the server calls image/png: the API refuses an image whose bytes are not of its media
    type; it is sent as image/jpeg, byte for byte."""
    jpeg = _encoded("JPEG", (4, 4))
    result = types.CallToolResult(content=[types.ImageContent(type="image", data=jpeg, mimeType="image/png")])
    out = result_output(result, None)
    assert isinstance(out.content, list) and isinstance(out.content[0], ImageBlock), out.content
    assert out.content[0].source == {"type": "base64", "media_type": "image/jpeg", "data": jpeg}


def test_an_image_over_the_apis_side_limit_is_scaled_down() -> None:
    """9000 px a side (the API takes at most 8000): scaled down as Read scales an image, and said."""
    from loopwright.tools.media import MAX_IMAGE_SIDE

    result = types.CallToolResult(content=[types.ImageContent(type="image", data=_encoded("PNG", (9000, 10)),
                                                              mimeType="image/png")])
    out = result_output(result, None)
    assert isinstance(out.content, list) and isinstance(out.content[0], ImageBlock), out.content
    import base64
    import io

    from PIL import Image

    img = Image.open(io.BytesIO(base64.b64decode(out.content[0].source["data"])))
    assert max(img.size) <= MAX_IMAGE_SIDE
    assert any(isinstance(b, TextBlock) and "scaled down" in b.text for b in out.content), out.content


def test_an_embedded_resources_image_blob_is_checked_too() -> None:
    res = types.BlobResourceContents(uri="file:///x.png", mimeType="image/png", blob="iVBORw0KGgo=")
    result = types.CallToolResult(content=[types.EmbeddedResource(type="resource", resource=res)])
    out = result_output(result, None)
    blocks = out.content if isinstance(out.content, list) else [TextBlock(out.content)]
    assert not any(isinstance(b, ImageBlock) for b in blocks), blocks


@pytest.mark.e2e
@pytest.mark.parametrize("prompt", ["some", "blank"])
def test_an_mcp_prompts_blank_messages_never_reach_the_model(tmp_path: Path, prompt: str) -> None:
    """/mcp__hostile__some sends its one non-blank text; /mcp__hostile__blank, nothing but blank
    text, leaves the typed text as it is with a warning (the strict server refuses a blank text
    block as the Messages API does: the run failed with a 400)."""
    import json
    import subprocess
    import sys

    from loopwright.testing import ScriptedServer
    from tests.helpers import TESTS, cli_env, loopwright_cmd, text

    cfg = json.dumps({"mcpServers": {"hostile": {"command": sys.executable,
                                                 "args": [str(TESTS / "mcp" / "hostile_mcp_server.py"), "--blank-prompt"]}}})
    env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "home"))
    with ScriptedServer([[text("done")]]) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", f"/mcp__hostile__{prompt}", "--model", "claude-sonnet-4-6",
                            "--base-url", srv.url, "--no-session-persistence", "--mcp-config", cfg],
                           cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        sent = srv.loop_requests[-1].body["messages"][-1]["content"]
    said = [b["text"] for b in sent if b.get("type") == "text" and "<system-reminder>" not in b["text"]]
    if prompt == "some":
        assert said == ["do it"], sent
    else:
        assert said == ["/mcp__hostile__blank"] and "gave no text" in r.stderr, (sent, r.stderr)


def test_a_structured_content_nested_5000_deep_is_named_not_a_recursion_error() -> None:
    """Over stdio or HTTP the MCP library refuses JSON nested deeper than ~255 levels; an in-process
    server hands its Python objects over, and json.dumps of 5,000 levels raised RecursionError. It is
    bounded as a tool input is (blocks.too_deep, 100 levels): named in text, the call's output."""
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    out = result_output(types.CallToolResult(content=[], structuredContent={"a": deep}), None)
    assert isinstance(out.content, str) and "nested more than 100 levels deep" in out.content, out.content
    shallow = result_output(types.CallToolResult(content=[], structuredContent={"a": [[1]]}), None)
    assert shallow.content == '{"a": [[1]]}'


def test_a_meta_over_the_output_limit_is_left_out_of_the_tools_details() -> None:
    """A server's _meta goes into the call's tool_use_result (stream-json, the SDKs) beside the
    content, which MAX_MCP_OUTPUT_TOKENS caps; a 3 MB _meta made a 3 MB stream-json line (the
    Python SDK's reader stops at 1 MB: the SDK program's session ended). Left out past the limit as
    structuredContent is; the server's name stays. A _meta nested 5,000 deep (an in-process
    server's objects) is left out too, not a RecursionError."""
    import json

    from loopwright.mcp.results import max_output_chars

    big = types.CallToolResult(content=[types.TextContent(type="text", text="small")],
                               _meta={"big": "x" * 3_000_000, "note": "kept when it fits"})
    out = result_output(big, None, types.Implementation(name="srv", version="1"))
    shown = json.dumps(out.details)
    assert len(shown) < max_output_chars() and "xxxx" not in shown, len(shown)
    assert out.details["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "srv", out.details
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    nested = result_output(types.CallToolResult(content=[types.TextContent(type="text", text="small")],
                                                _meta={"a": deep}), None)
    json.dumps(nested.details)
    fits = result_output(types.CallToolResult(content=[types.TextContent(type="text", text="small")],
                                              _meta={"note": "kept"}), None)
    assert fits.details["_meta"] == {"note": "kept"}, fits.details
