"""Room: mcp. Owns MCP results as tool_result blocks (content kinds, the output caps); may import blocks, ids, threads,
tools.base and tools.media.

Text, images and embedded resources become tool_result blocks, `isError` is is_error,
`structuredContent` is sent as JSON text when there is no text. Empty text blocks are dropped. Text beyond
`MAX_MCP_OUTPUT_TOKENS` (default 25,000, ~4 characters a token) is cut with a notice; the full
output is saved beside the session transcript (when the session is saved). Images are capped in
bytes: one image is resent with every later call. An image is decoded as Read decodes one
(tools.media): one that is no image (not base64, cut, corrupt) is named in text, one of another
type than the server said is sent as the type it is, one over the API's size limits is scaled
down: any of them in the history would have the API refuse every later request of the session.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..blocks import Block, ImageBlock, TextBlock, too_deep
from ..threads import run_in_worker
from ..tools.base import ToolContext, ToolOutput

MAX_OUTPUT_TOKENS = 25_000
CHARS_PER_TOKEN = 4  # a rough, conservative estimate: the cap is a guard, not an accounting
# Bytes caps for the blocks that are not text (text is capped in tokens above): an image is
# resent with every later call, so one 30 MB image would cost every turn after it.
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # the Messages API's limit for one image
MAX_RESULT_BYTES = 10 * 1024 * 1024  # all images of one result together
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def max_output_chars(ctx: ToolContext | None = None) -> int:
    """MAX_MCP_OUTPUT_TOKENS in characters: the run's env (a settings file's `env`, AgentOptions.env:
    Claude Code sets a settings file's env on its own process) over the process's."""
    raw = (ctx.env.get("MAX_MCP_OUTPUT_TOKENS") if ctx is not None else None) or os.environ.get("MAX_MCP_OUTPUT_TOKENS", "")
    tokens = int(raw) if raw.strip().isdigit() and int(raw) > 0 else MAX_OUTPUT_TOKENS
    return tokens * CHARS_PER_TOKEN



def content_blocks(items: list[Any]) -> list[Block]:
    """MCP content (text, image, audio, resource, resource_link) as tool_result blocks."""
    out: list[Block] = []
    for c in items:
        kind = getattr(c, "type", None)
        if kind == "text":
            out.append(TextBlock(c.text))
        elif kind == "image":
            out.extend(_image(c.data, c.mime_type) or [TextBlock(f"[image of type {c.mime_type} not shown: "
                                                                  "unsupported image type]")])
        elif kind == "audio":
            out.append(TextBlock(f"[audio ({c.mime_type}) not shown: the model takes no audio]"))
        elif kind == "resource":
            out.extend(resource_blocks([c.resource]))
        elif kind == "resource_link":
            desc = f": {c.description}" if getattr(c, "description", None) else ""
            out.append(TextBlock(f"[resource {c.uri} ({c.name}){desc}]"))
        else:
            out.append(TextBlock(f"[{kind} content not shown]"))
    return out


def resource_blocks(contents: list[Any]) -> list[Block]:
    out: list[Block] = []
    for r in contents:
        mime = getattr(r, "mime_type", None)
        text = getattr(r, "text", None)
        if text is not None:
            out.append(TextBlock(f"[resource {r.uri}]\n{text}"))
            continue
        blob = getattr(r, "blob", "") or ""
        img = _image(blob, mime) if mime else None
        out.extend(img or [TextBlock(f"[resource {r.uri}: {mime or 'binary'} data, {len(blob) * 3 // 4} bytes, "
                                     "not shown]")])
    return out


def _image(data: str, mime: str | None) -> list[Block] | None:
    """The image as blocks the Messages API takes (tools.media.sendable_image), None when `mime` is
    no image type. One over MAX_IMAGE_BYTES is left to cap_images (named there, undecoded)."""
    if mime not in IMAGE_TYPES:
        return None
    if not isinstance(data, str) or len(data) * 3 // 4 > MAX_IMAGE_BYTES:
        return [ImageBlock({"type": "base64", "media_type": mime, "data": data})]
    from ..tools.media import sendable_image

    return sendable_image(data, mime)


async def checked_output(result: Any, ctx: ToolContext | None, server_info: Any = None) -> ToolOutput:
    """result_output, in a worker thread (threads.run_in_worker) when the result holds an image or
    an embedded resource: each image is decoded (Pillow: one near MAX_PIXELS takes seconds and
    ~400 MB), which on the event loop froze the UI and every other session of an ACP/SDK server."""
    if any(getattr(c, "type", None) in ("image", "resource") for c in result.content or ()):
        out: ToolOutput = await run_in_worker(result_output, result, ctx, server_info)
        return out
    return result_output(result, ctx, server_info)


def result_output(result: Any, ctx: ToolContext | None, server_info: Any = None) -> ToolOutput:
    """A tools/call result as a tool's output. Empty or whitespace-only text blocks are dropped
    (the Messages API refuses them, so one would fail the next request); nothing left: "(no output)".
    Its details: mcp_details (`server_info`: the server's initialize answer's serverInfo)."""
    blocks = [b for b in content_blocks(list(result.content or []))
              if not isinstance(b, TextBlock) or (b.text and not b.text.isspace())]
    structured = getattr(result, "structured_content", None)
    if structured is not None and (deep := too_deep(structured)) is not None:
        # (an in-process server's Python objects: over stdio or HTTP the MCP library refuses JSON
        # nested past ~255 levels) json.dumps of thousands of levels raised RecursionError
        structured = f"[the tool's structuredContent left out: {deep}]"
    as_text = structured is not None and not any(isinstance(b, TextBlock) for b in blocks)
    if as_text:
        blocks.insert(0, TextBlock(json.dumps(structured, ensure_ascii=False)))
    blocks = cap(blocks, ctx)
    is_error = bool(getattr(result, "is_error", False))
    content: str | list[Block] = "(no output)" if not blocks else (
        blocks[0].text if len(blocks) == 1 and isinstance(blocks[0], TextBlock) else blocks)
    # (Claude Code's content: the blocks, but a text made of structuredContent alone as a string)
    shown: str | list[Block] = content if as_text or not blocks else blocks
    return ToolOutput(content, is_error, mcp_details(shown, is_error, structured, getattr(result, "meta", None),
                                                     server_info, max_output_chars(ctx)))


def mcp_details(content: str | list[Block], is_error: bool, structured: Any = None, meta: Any = None,
                server_info: Any = None, limit: int | None = None) -> Any:
    """An MCP tool's structured output as Claude Code gives it (tool_use_result): {content, the
    structuredContent, _meta with the server's name and version}, or the content alone when there
    is neither (an Agent SDK program's in-process server). `content` is what the model got, as
    blocks (a failure's: its text after "Error: "); structuredContent only up to
    MAX_MCP_OUTPUT_TOKENS (`limit` characters), as the text is (past that the content's cut text says what there was)."""
    shown: Any = content if isinstance(content, str) else [b.to_wire() for b in content]
    if is_error:
        text = content if isinstance(content, str) else "\n".join(b.text for b in content if isinstance(b, TextBlock))
        shown = f"Error: {text}"
    out: dict[str, Any] = {"content": shown}
    limit = max_output_chars() if limit is None else limit
    # the server's own _meta only up to the limit too: 3 MB of it made a 3 MB stream-json line
    # (the Python SDK's reader stops at 1 MB), and one nested thousands deep raised RecursionError
    meta = dict(meta) if isinstance(meta, dict) and _fits(meta, limit) else {}
    name = getattr(server_info, "name", None)
    if isinstance(name, str):
        meta["io.modelcontextprotocol/serverInfo"] = {"name": name, "version": str(getattr(server_info, "version", ""))}
    if meta:
        out["_meta"] = meta
    if structured is not None and _fits(structured, limit):
        out["structuredContent"] = structured
    return out if len(out) > 1 else shown


def _fits(value: Any, limit: int) -> bool:
    """Is `value` JSON data of at most `limit` characters (and not nested past blocks.too_deep)?"""
    if too_deep(value) is not None:
        return False
    try:
        return len(json.dumps(value, ensure_ascii=False)) <= limit
    except (TypeError, ValueError):
        return False


def cap_images(blocks: list[Block]) -> list[Block]:
    """Images over MAX_IMAGE_BYTES each, or past MAX_RESULT_BYTES together, become a notice."""
    out: list[Block] = []
    total = 0
    for b in blocks:
        if isinstance(b, ImageBlock):
            data = b.source.get("data")
            size = len(data) * 3 // 4 if isinstance(data, str) else 0
            total += size
            if size > MAX_IMAGE_BYTES or total > MAX_RESULT_BYTES:
                why = (f"over the {MAX_IMAGE_BYTES:,}-byte cap for one image" if size > MAX_IMAGE_BYTES
                       else f"past the {MAX_RESULT_BYTES:,}-byte cap for one result's images")
                out.append(TextBlock(f"[image ({b.source.get('media_type')}) of {size:,} bytes not shown: {why}]"))
                continue
        out.append(b)
    return out


def cap(blocks: list[Block], ctx: ToolContext | None) -> list[Block]:
    """Cut text beyond MAX_MCP_OUTPUT_TOKENS, with a notice; save the whole output beside the
    session transcript when there is one. Images are capped in bytes (cap_images)."""
    blocks = cap_images(blocks)
    limit = max_output_chars(ctx)
    total = sum(len(b.text) for b in blocks if isinstance(b, TextBlock))
    if total <= limit:
        return blocks
    full = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    saved = ctx.save_output(full) if ctx is not None else None
    out: list[Block] = []
    left = limit
    for b in blocks:
        if isinstance(b, TextBlock):
            if left <= 0:
                continue
            out.append(TextBlock(b.text[:left]))
            left -= len(b.text)
        else:
            out.append(b)
    where = f" The full output is saved in {saved} (read it in parts with Read's offset/limit)." if saved else ""
    out.append(TextBlock(f"[output cut: {total:,} characters (about {total // CHARS_PER_TOKEN:,} tokens) is more "
                         f"than MAX_MCP_OUTPUT_TOKENS={limit // CHARS_PER_TOKEN:,} tokens; the rest is not shown.{where}]"))
    return out
