"""Room: acp. Owns the editor's lines before the ACP library reads them: each bounded in size and
nesting (protolines), checked against JSON-RPC 2.0's message schema, and a bad one answered with
JSON-RPC's error; may import protolines and the rooms below the front ends.

The library's receive loop ends the connection on a line it cannot take (a line over its buffer
limit, JSON that is no object, an id that is an object), which would stop the agent for good.
Only well-formed messages reach it; it then checks each method's params against ACP's own schema
(pydantic) and answers bad params with -32602 itself. Per JSON-RPC, a bad request is answered
(-32700 parse error, -32600 invalid request; id null when its id cannot be read), a bad
notification is only logged, and a malformed response to one of the agent's requests reaches
the library as an error response to it (so the request fails instead of waiting for ever)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from ..protolines import BadLine, TooLong, parse_line, read_lines

MAX_LINE = 50 * 1024 * 1024  # the ACP library's own stdio limit (a prompt's embedded files)
log = logging.getLogger("loopwright.acp")

_ID = {"type": ["string", "integer", "null"]}
MESSAGE_SCHEMA: dict[str, Any] = {"anyOf": [
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


def message_problem(msg: Any) -> str | None:
    """What makes a parsed line no JSON-RPC 2.0 message (None: it is one)."""
    global _check
    if _check is None:
        import fastjsonschema

        _check = fastjsonschema.compile(MESSAGE_SCHEMA)
    try:
        _check(msg)
    except Exception as e:  # noqa: BLE001 - fastjsonschema's JsonSchemaValueException
        return f"not a JSON-RPC 2.0 message ({getattr(e, 'message', e)})"
    return None


def _error(id_: Any, code: int, message: str) -> bytes:
    reply = {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}
    return json.dumps(reply).encode() + b"\n"


def _answer_id(msg: Any) -> tuple[bool, Any]:
    """(whether to answer, the id to answer with): requests are answered, by their id when it is a
    valid one, else with null; notifications and responses are not."""
    if isinstance(msg, dict):
        if "method" not in msg:
            return (False, None) if "id" in msg else (True, None)  # a response / neither: JSON-RPC's null id
        id_ = msg.get("id")
        if "id" not in msg:
            return False, None  # a notification
        return True, id_ if isinstance(id_, (str, int)) and not isinstance(id_, bool) else None
    return True, None


def _response_id(msg: Any) -> str | int | None:
    """The id of a malformed response (no method, a usable id), else None."""
    if isinstance(msg, dict) and "method" not in msg:
        id_ = msg.get("id")
        if isinstance(id_, (str, int)) and not isinstance(id_, bool):
            return id_
    return None


async def vetted(src: asyncio.StreamReader, dst: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
    """Pump the editor's lines from `src` into `dst` (the library's reader), only the well-formed
    ones; answer the others on `out`. Ends (EOF into dst) when the editor closes stdin."""
    try:
        async for line in read_lines(src, MAX_LINE):
            reply: bytes | None = None
            if isinstance(line, TooLong):
                log.error("skipped a message of %d bytes (the limit is %d)", line.size, MAX_LINE)
                if line.field("method") is not None or line.field("id") is None:  # a request (or unknown): answer
                    reply = _error(line.field("id"), -32600, f"message of {line.size:,} bytes, over the limit "
                                                             f"of {MAX_LINE:,}: not read")
            elif line.strip():
                try:
                    msg = parse_line(line)
                except BadLine as e:
                    log.error("skipped a line that is %s: %.80r", e, line)
                    reply = _error(None, -32700, f"Parse error: {e}")
                else:
                    problem = message_problem(msg)
                    if problem is None:
                        dst.feed_data(line + b"\n")
                        continue
                    log.error("skipped a line that is %s: %.80r", problem, line)
                    waiting = _response_id(msg)
                    if waiting is not None:  # a malformed answer to our request: the request fails, never waits on
                        dst.feed_data(_error(waiting, -32603, f"the editor's answer was {problem}"))
                        continue
                    answer, id_ = _answer_id(msg)
                    reply = _error(id_, -32600, f"Invalid Request: {problem}") if answer else None
            if reply is not None:
                out.write(reply)
                await out.drain()
    except (OSError, ConnectionError) as e:  # a broken pipe: the editor is gone
        log.error("stopped reading the editor's messages: %s", e)
    finally:
        dst.feed_eof()
