"""Room: bases. Owns how a protocol front end (the Agent SDK's stream-json, ACP) reads its peer's
lines: each line bounded in size and in nesting depth; imports nothing of loopwright.

A front end serves one peer for a long time, so no line may end it: a line longer than the limit
is skipped to its end (only its head is kept, to answer it), never read whole and never fatal;
JSON nested deeper than MAX_DEPTH (which would exhaust the parser's or a later walk's recursion)
is an error like any malformed line. Each front end then checks the parsed line against its
protocol's schema and answers a bad one in the protocol's words."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 100  # the protocols' real messages nest ~10 deep (content blocks, MCP configs, schemas)
HEAD = 4096  # what is kept of each end of a skipped line: enough to find its type and id
_CHUNK = 1 << 16


class BadLine(ValueError):
    """A line that is no JSON value, or nested too deep."""


@dataclass(frozen=True)
class TooLong:
    """Where a line longer than the limit was: its first and last HEAD bytes and its length (the rest
    was read and dropped)."""

    head: bytes
    size: int
    tail: bytes = b""

    def field(self, name: str) -> str | int | None:
        """A string or integer member `name` seen at either end of the line (to answer it by its id;
        JSON's members come in any order)."""
        pattern = rb'"' + re.escape(name.encode()) + rb'"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")'
        m = re.search(pattern, self.head) or re.search(pattern, self.tail)
        if m is None:
            return None
        value = json.loads(m.group(1))
        return value if isinstance(value, (str, int)) else None


async def fd_reader(fd: int) -> asyncio.StreamReader:
    """An asyncio reader of `fd` (a front end's stdin): a pipe or a socket is read by the event
    loop, anything else (a regular file: `< lines.jsonl`) by a thread, where the loop's pipe
    transport refused it ('Pipe transport is for pipes/sockets only', a traceback)."""
    import os
    import threading

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()  # (read in chunks: read_lines bounds each line itself)
    stream = os.fdopen(fd, "rb", buffering=0, closefd=False)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except ValueError:  # a regular file: no pipe transport for it
        def pump() -> None:
            while chunk := stream.read(1 << 16):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=pump, daemon=True).start()
    return reader


async def read_lines(reader: asyncio.StreamReader, limit: int) -> AsyncIterator[bytes | TooLong]:
    """The reader's lines (without their newline), each whole line joined once (linear time); a
    line over `limit` bytes is yielded as TooLong once its end is read, its body never kept."""
    parts: list[bytes] = []
    size = 0
    head = tail = b""
    dropping = False
    while chunk := await reader.read(_CHUNK):
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if len(head) < HEAD:
                head += piece[:HEAD - len(head)]
            if dropping:
                size += len(piece)
                tail = (tail + piece)[-HEAD:]
            else:
                parts.append(piece)
                size += len(piece)
                if size > limit:
                    tail = b"".join(parts[-2:])[-HEAD:]
                    parts, dropping = [], True
            if end < 0:
                break
            start = end + 1
            if dropping:
                yield TooLong(head, size, tail)
            else:
                yield b"".join(parts)
            parts, size, head, tail, dropping = [], 0, b"", b"", False
    if dropping:
        yield TooLong(head, size, tail)
    elif parts and size:
        yield b"".join(parts)


def parse_line(raw: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of a line, or BadLine (not JSON, not UTF-8, nested more than max_depth)."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise BadLine(f"JSON nested more than {max_depth} levels deep") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise BadLine(f"not JSON ({e})") from None
    if too_deep(value, max_depth):
        raise BadLine(f"JSON nested more than {max_depth} levels deep")
    return value


def too_deep(value: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Is `value` nested more than max_depth containers deep? (Iterative: a deep value cannot
    exhaust this check's own stack.)"""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        if d > max_depth:
            return True
        stack.extend((c, d + 1) for c in children if isinstance(c, (dict, list)))
    return False


# JSON-RPC 2.0, the envelope ACP and MCP share: what a well-formed message is, and how a bad one is
# answered (a request: -32700 parse error or -32600 invalid request, by its id when it has a valid
# one, else null; a notification or a response: not answered, only logged).
_ID = {"type": ["string", "integer", "null"]}
JSONRPC_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "object", "required": ["jsonrpc", "method"], "properties": {  # a request or a notification
        "jsonrpc": {"const": "2.0"}, "method": {"type": "string", "maxLength": 1000}, "id": _ID,
        "params": {"type": ["object", "array"]}}},
    {"type": "object", "required": ["jsonrpc", "id"], "not": {"required": ["method"]}, "properties": {  # a response
        "jsonrpc": {"const": "2.0"}, "id": _ID,
        "error": {"type": "object", "required": ["code", "message"],
                  "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}}},
     "anyOf": [{"required": ["result"]}, {"required": ["error"]}]},
]}
_check: Callable[[Any], Any] | None = None


def jsonrpc_problem(msg: Any) -> str | None:
    """What makes a parsed line no JSON-RPC 2.0 message (None: it is one)."""
    global _check
    if _check is None:
        import fastjsonschema

        _check = fastjsonschema.compile(JSONRPC_SCHEMA)
    try:
        _check(msg)
    except Exception as e:  # noqa: BLE001 - fastjsonschema's JsonSchemaValueException
        return f"not a JSON-RPC 2.0 message ({getattr(e, 'message', e)})"
    return None


def jsonrpc_error(id_: Any, code: int, message: str) -> bytes:
    """A JSON-RPC error response, as one line."""
    reply = {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}
    return json.dumps(reply).encode() + b"\n"


def jsonrpc_answer_id(msg: Any) -> tuple[bool, Any]:
    """(whether to answer, the id to answer with) for a bad message: requests are answered, by
    their id when it is a valid one, else with null; notifications and responses are not."""
    if isinstance(msg, dict):
        if "method" not in msg:
            return (False, None) if "id" in msg else (True, None)  # a response / neither: JSON-RPC's null id
        id_ = msg.get("id")
        if "id" not in msg:
            return False, None  # a notification
        return True, id_ if isinstance(id_, (str, int)) and not isinstance(id_, bool) else None
    return True, None


def jsonrpc_response_id(msg: Any) -> str | int | None:
    """The id of a malformed response (no method, a usable id), else None."""
    if isinstance(msg, dict) and "method" not in msg:
        id_ = msg.get("id")
        if isinstance(id_, (str, int)) and not isinstance(id_, bool):
            return id_
    return None
