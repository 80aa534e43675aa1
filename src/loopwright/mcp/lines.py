"""Room: mcp. Owns how a stdio server's output is cut into lines before the MCP SDK reads it.

The SDK's stdio reader joins its buffer with each new chunk (`buffer + chunk`), so one endless
line costs quadratic time and unbounded memory (a 200 MB line: minutes and a gigabyte). Its
stream of text chunks is replaced here by one that yields whole lines, joined once each (linear),
and cuts a line longer than MAX_LINE_CHARS: a response's id is taken from the line's head and
answered with a JSON-RPC error, so the call ends at once with a clear message instead of a
timeout; the rest of the line is read and dropped. Installed once, when a stdio server starts.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

MAX_LINE_CHARS = 64 * 1024 * 1024
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')
log = logging.getLogger("mcp.loopwright")  # the SDK's logger tree: written to the MCP log file


class LineStream:
    """anyio's TextReceiveStream, yielding whole lines (each ending in a newline)."""

    def __init__(self, stream: Any, encoding: str = "utf-8", errors: str = "strict") -> None:
        from anyio.streams.text import TextReceiveStream

        self._inner = TextReceiveStream(stream, encoding=encoding, errors=errors)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        parts: list[str] = []
        size = 0
        head = ""
        dropping = False
        async for chunk in self._inner:
            while chunk:
                i = chunk.find("\n")
                piece, chunk = (chunk, "") if i < 0 else (chunk[:i + 1], chunk[i + 1:])
                if not dropping:
                    if not parts:
                        head = piece[:4096]
                    parts.append(piece)
                    size += len(piece)
                    if size > MAX_LINE_CHARS:
                        parts, size, dropping = [], 0, True
                        log.warning("a line of more than %d characters from an MCP server: not read", MAX_LINE_CHARS)
                if i < 0:
                    continue
                if dropping:
                    dropping = False
                    reply = too_long_reply(head)
                    if reply is not None:
                        yield reply
                    continue
                yield "".join(parts)
                parts, size = [], 0
        if parts and not dropping:
            yield "".join(parts)


def too_long_reply(head: str) -> str | None:
    """A JSON-RPC error for the response that began with `head`, or None (no id in sight)."""
    m = _ID.search(head)
    if m is None:
        return None
    error = {"code": -32603, "message": f"the server's response was longer than {MAX_LINE_CHARS:,} characters; "
                                        "loopwright did not read it"}
    return json.dumps({"jsonrpc": "2.0", "id": json.loads(m.group(1)), "error": error}) + "\n"


def install() -> None:
    """Make the SDK's stdio client read lines through LineStream (once)."""
    try:
        from mcp.client import stdio
    except ImportError:
        return
    if getattr(stdio, "TextReceiveStream", None) is not LineStream and hasattr(stdio, "TextReceiveStream"):
        stdio.TextReceiveStream = LineStream  # type: ignore[attr-defined,misc,assignment,unused-ignore]
