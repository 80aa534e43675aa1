"""Room: acp. Owns the editor's lines before the ACP library reads them: each bounded in size and
nesting (protolines), checked against JSON-RPC 2.0's message schema, and a bad one answered with
JSON-RPC's error; may import protolines, acp.session_params and the rooms below the front ends.

The library's receive loop ends the connection on a line it cannot take (a line over its buffer
limit, JSON that is no object, an id that is an object), which would stop the agent for good.
Only well-formed messages reach it; it then checks each method's params against ACP's own schema
(pydantic) and answers bad params with -32602 itself. Per JSON-RPC, a bad request is answered
(-32700 parse error, -32600 invalid request; id null when its id cannot be read), a bad
notification is only logged, and a malformed response to one of the agent's requests reaches
the library as an error response to it (so the request fails instead of waiting for ever)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..protolines import BadLine, TooLong, parse_line, read_lines
from ..protolines import jsonrpc_answer_id as _answer_id
from ..protolines import jsonrpc_error as _error
from ..protolines import jsonrpc_problem as message_problem
from ..protolines import jsonrpc_response_id as _response_id
from .session_params import SESSION_METHODS, session_params_problem

MAX_LINE = 50 * 1024 * 1024  # the ACP library's own stdio limit (a prompt's embedded files)
log = logging.getLogger("loopwright.acp")


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
                    if problem is None and (bad := _params_problem(msg)) is not None:
                        log.error("answered %s: %s: %s", msg.get("method"), *bad)
                        reply = _error(msg.get("id"), -32602, f"Invalid params: {bad[0]}: {bad[1]}")
                        if "id" not in msg:  # (a notification is not answered)
                            continue
                    elif problem is None:
                        dst.feed_data(line + b"\n")
                        continue
                    else:
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


def _params_problem(msg: Any) -> tuple[str, str] | None:
    """A session request's mcpServers that the library would drop entry by entry without a word
    (acp/session_params.py): (the field, what is wrong), or None."""
    if not isinstance(msg, dict) or msg.get("method") not in SESSION_METHODS:
        return None
    return session_params_problem(msg.get("params"))
