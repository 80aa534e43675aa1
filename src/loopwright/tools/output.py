"""Room: bases. Owns what a tool call returns: ToolOutput, ToolError and to_output (a handler's
return value as tool_result content); may import data types only.

A handler returns a string, a list of blocks, a `ToolOutput`, MCP's CallToolResult shape, bytes
or any other data (sent as JSON); raising `ToolError` is a clean is_error result.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import typing
from dataclasses import dataclass
from typing import Any

from ..blocks import (
    Block,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    WireFormatError,
    block_from_wire,
)

_BLOCK_CLASSES: tuple[type, ...] = typing.get_args(Block)


class ToolError(Exception):
    """Raise from a handler to return a clean is_error result with just this message."""


@dataclass(slots=True)
class ToolOutput:
    """What a tool handler returns: text or blocks, and whether the call failed (an is_error result).

    `details`: the call's structured output, beside what the model reads (JSON data: Claude Code's
    `tool_use_result`, e.g. Bash's {stdout, stderr, interrupted, ...}). Front ends render it
    (stream-json, the Agent SDKs' `UserMessage.tool_use_result`); the model never sees it, and it
    is not kept in the history. Keep it bounded: what it repeats of the content, at most as much
    (a whole PDF read: the file, as Claude Code gives it, bounded as Read bounds it)."""

    content: str | list[Block]
    is_error: bool = False
    details: Any = None


# Blocks that may not sit inside a tool_result: the API rejects them, and a nested
# tool_result would be a stray result for (P3).
_NOT_IN_RESULT = (ToolUseBlock, ToolResultBlock, ThinkingBlock, RedactedThinkingBlock)
_NOT_IN_RESULT_TYPES = frozenset({"server_tool_use", "mcp_tool_use", "mcp_tool_result"})


def _result_blocks(raw: list[Any]) -> list[Block]:
    """A handler's list as tool_result content: wire dicts parsed, strings as text blocks.
    Raises WireFormatError for anything else, so it never reaches the history."""
    return [_result_block(b) for b in raw]


def _result_block(item: Any) -> Block:
    b: Any = TextBlock(item) if isinstance(item, str) else block_from_wire(item) if isinstance(item, dict) else item
    if not isinstance(b, Block):
        raise WireFormatError(f"content block must be a block or an object, got {type(b).__name__}")
    if isinstance(b, _NOT_IN_RESULT) or (isinstance(b, UnknownBlock) and b.type in _NOT_IN_RESULT_TYPES):
        raise WireFormatError(f"a {b.to_wire().get('type')} block cannot be part of a tool result")
    return b


# Block types: a list of strings, blocks and dicts of one of these "type"s is meant as content
# (and checked as such: a tool_use in a result is an error); any other list is data, sent as JSON.
_BLOCK_TYPES = frozenset({"text", "image", "document", "search_result", "tool_use", "tool_result", "thinking",
                          "redacted_thinking", *_NOT_IN_RESULT_TYPES})
_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
                (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))


def _is_content(items: list[Any]) -> bool:
    """A list the handler meant as content blocks (not data such as rows or numbers)."""
    return bool(items) and all(
        isinstance(b, (str, *_BLOCK_CLASSES)) or (isinstance(b, dict) and b.get("type") in _BLOCK_TYPES)
        for b in items)


# The keys of MCP's CallToolResult, which the Agent SDK's tool handlers return:
# {"content": [blocks], "is_error": True}.
_CALL_TOOL_RESULT_KEYS = frozenset({"content", "is_error", "isError", "structuredContent", "_meta"})


def _is_call_tool_result(d: dict[str, Any]) -> bool:
    """{"content": [content blocks], "is_error"?: bool}: a result, not data to send as JSON."""
    content = d.get("content")
    return isinstance(content, list) and d.keys() <= _CALL_TOOL_RESULT_KEYS and (not content or all(
        isinstance(b, dict) and b.get("type") in _BLOCK_TYPES for b in content))


def _from_mcp_block(b: dict[str, Any]) -> dict[str, Any]:
    """MCP's image block {type, data, mimeType} as the Messages API's {type, source}."""
    if b.get("type") == "image" and "source" not in b and isinstance(b.get("data"), str):
        return {"type": "image", "source": {"type": "base64", "media_type": b.get("mimeType") or b.get("mime_type")
                                            or "image/png", "data": b["data"]}}
    return b


def _jsonable(value: Any) -> Any:
    """`json.dumps` default: pydantic models, dataclasses, bytes, paths and sets as JSON data."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)  # Path, datetime, Decimal, UUID, enums...


def _bytes_output(data: bytes, is_error: bool) -> ToolOutput:
    """An image when the bytes are one (PNG, JPEG, GIF, WebP), else base64 text that says so."""
    media = next((m for magic, m in _IMAGE_MAGIC if data.startswith(magic)), None)
    if media is None and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        media = "image/webp"
    encoded = base64.b64encode(data).decode("ascii")
    if media is not None:
        return ToolOutput([ImageBlock({"type": "base64", "media_type": media, "data": encoded})], is_error)
    return ToolOutput(f"(the tool returned {len(data)} bytes of binary data, base64-encoded below)\n{encoded}",
                      is_error)


def to_output(raw: Any) -> ToolOutput:
    """Normalize a handler's return value: a string as is; content blocks as blocks; bytes as an
    image (or base64 text); any other data (dicts, lists, numbers, pydantic models, dataclasses)
    as JSON text, never Python's repr."""
    if type(raw) is str:  # (what most handlers return: as the checks below would, without them)
        return ToolOutput(raw, False)
    if not isinstance(raw, ToolOutput):
        return _data_output(raw, False)
    if isinstance(raw.content, str):
        return raw
    out = _blocks_output(raw.content, raw.is_error) if isinstance(raw.content, list) else (
        _data_output(raw.content, raw.is_error))  # (a ToolOutput's list is content by construction)
    out.details = raw.details if out.is_error == raw.is_error else None  # (not when its content was refused)
    return out


def _blocks_output(content: list[Any], is_error: bool) -> ToolOutput:
    try:
        return ToolOutput(_result_blocks(content), is_error)
    except WireFormatError as e:
        return ToolOutput(f"tool returned malformed content: {e}", is_error=True)


def _data_output(content: Any, is_error: bool) -> ToolOutput:
    """Anything but a ToolOutput: content when it is content, else JSON text the model reads as data."""
    if isinstance(content, dict) and _is_call_tool_result(content):  # MCP's CallToolResult shape
        is_error = is_error or bool(content.get("is_error") or content.get("isError"))
        content = [_from_mcp_block(b) for b in content["content"]] or ""
    if content is None:
        return ToolOutput("", is_error)
    if isinstance(content, str):
        return ToolOutput(content, is_error)
    if isinstance(content, (bytes, bytearray)):
        return _bytes_output(bytes(content), is_error)
    if isinstance(content, _BLOCK_CLASSES):
        content = [content]
    if isinstance(content, list) and _is_content(content):
        return _blocks_output(content, is_error)
    try:
        return ToolOutput(json.dumps(content, ensure_ascii=False, default=_jsonable), is_error)
    except (TypeError, ValueError) as e:  # a circular structure, a NaN-free encoder, ...
        return ToolOutput(f"tool returned a value that is not JSON data: {type(e).__name__}: {e}", is_error=True)
