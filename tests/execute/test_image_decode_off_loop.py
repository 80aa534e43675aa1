"""An image a tool result brings (an MCP server's, a Python tool's, a PostToolUse hook's
updatedToolOutput) is decoded (tools.media: one near 100 megapixels takes seconds and ~400 MB)
in a worker thread: on the event loop it froze the interactive UI and every other session of an
ACP/SDK server. Each test holds the decode until another coroutine on the loop has run while it
was under way: on the loop that coroutine could not run, and the decode would wait in vain."""

from __future__ import annotations

import asyncio
import base64
import io
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import loopwright as lw
from loopwright.blocks import ImageBlock
from loopwright.tools import media
from tests.helpers import text, use

WIDE = Image.new("RGB", (9000, 10), (200, 30, 30))  # over the API's 8000 px a side: decoded, scaled down


def _png() -> str:
    buf = io.BytesIO()
    WIDE.save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


class Gate:
    """image_blocks held until the loop has served another coroutine while it was under way."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.served = threading.Event()
        self.seen: list[bool] = []  # per decode: whether the loop served meanwhile

    async def ticker(self) -> None:
        while not self.started.is_set():
            await asyncio.sleep(0.005)
        self.served.set()  # (runs only when the loop is free while the decode waits)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    g = Gate()
    real = media.image_blocks

    def held(path: Path, data: bytes) -> Any:
        g.started.set()
        g.seen.append(g.served.wait(15))  # on the loop's thread: nobody sets it, False after 15 s
        return real(path, data)

    monkeypatch.setattr(media, "image_blocks", held)
    yield g


def _beside(g: Gate, work: Callable[[], Awaitable[Any]]) -> Any:
    async def both() -> Any:
        tick = asyncio.create_task(g.ticker())
        try:
            return await work()
        finally:
            tick.cancel()

    return asyncio.run(both())


def _scaled(blocks: Any) -> None:
    images = [b for b in blocks if isinstance(b, ImageBlock)]
    assert len(images) == 1, blocks
    with Image.open(io.BytesIO(base64.b64decode(images[0].source["data"]))) as img:
        assert img.size[0] <= media.MAX_IMAGE_SIDE  # really decoded and scaled down


def test_an_mcp_servers_image_is_decoded_while_the_loop_serves(gate: Gate) -> None:
    types = pytest.importorskip("mcp.types", reason="the MCP SDK is an extra: pip install 'loopwright[mcp]'")
    from loopwright.mcp.results import checked_output

    result = types.CallToolResult(content=[types.ImageContent(type="image", data=_png(), mimeType="image/png")])
    out = _beside(gate, lambda: checked_output(result, None))
    assert gate.seen == [True], "the loop served nothing while the image was decoded"
    _scaled(out.content)


def _run(tmp_path: Path, **options: Any) -> Callable[[], Awaitable[Any]]:
    """A run calling Picture once, as a coroutine function giving its last message (the result)."""
    async def go() -> Any:
        last: Any = None
        async for m in lw.query("go", lw.AgentOptions(
                model=lw.ScriptedModel([[use("t1", "Picture", {})], [text("done")]]), cwd=tmp_path, **options)):
            last = m
        return last

    return go


def test_a_python_tools_image_is_decoded_while_the_loop_serves(gate: Gate, tmp_path: Path) -> None:
    async def picture(x: dict[str, Any]) -> Any:
        return [ImageBlock({"type": "base64", "media_type": "image/png", "data": _png()})]

    tool = lw.Tool("Picture", "an image", {"type": "object"}, picture)
    r = _beside(gate, _run(tmp_path, tools=[tool]))
    assert gate.seen == [True], "the loop served nothing while the image was decoded"
    _scaled([ImageBlock(b["source"]) for b in r.messages[2]["content"][0]["content"] if b["type"] == "image"])


def test_a_hooks_image_is_decoded_while_the_loop_serves(gate: Gate, tmp_path: Path) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png()}}

    def post(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": [image]}}

    tool = lw.Tool("Picture", "no image", {"type": "object"}, lambda x: "none")
    r = _beside(gate, _run(tmp_path, tools=[tool],
                           hooks={"PostToolUse": [lw.HookMatcher("Picture", [post])]}))
    assert gate.seen == [True], "the loop served nothing while the image was decoded"
    _scaled([ImageBlock(b["source"]) for b in r.messages[2]["content"][0]["content"] if b["type"] == "image"])
