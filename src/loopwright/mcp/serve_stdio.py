"""Room: cli. Owns `loopwright mcp serve`'s stdio transport: the client's lines, vetted, into the MCP
SDK's server, and `initialize` answered at once; may import protolines, mcp.server and the MCP SDK.

A client's bad line never ends the server (issue 40): each line is bounded in size (a longer one is
read to its end and dropped, never held whole) and in nesting depth (protolines), checked against
JSON-RPC 2.0's envelope and then the SDK's message types, and a bad request is answered with
JSON-RPC's error — -32700 for what is no JSON, -32600 for what is no request (by its id when it
has a usable one, else null); a bad notification or response is only logged to stderr. Only
well-formed messages reach the SDK, which answers unknown methods (-32601) and bad params (-32602).

Importing the SDK takes 0.5-1.5 s, longer than a client like Claude Code waits for a server before
its first model call (then the server's tools are missing from it), so the first requests are
answered before the SDK is loaded (`App.early`, server.py): the handshake (`initialize`, or
`server/discover` of the 2026-07-28 protocol, which Claude Code speaks) at once, before the tools are
built, and the listings (tools, prompts, resources) once the tools are built (~0.1 s), from the same
code the SDK server's handlers use. The SDK still gets every request (its session needs the
client's capabilities and version; but a `server/discover` probe the client gave up on, see `feed`)
and its own answer to an early-answered one is dropped — after a check that it says the same, with
one stderr line if not (tests/mcp check they agree).

While serving, fd 0 reads the null device and fd 1 writes to stderr (the wire is on private
duplicates), so nothing a tool prints reaches the client as a broken message.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from ..protolines import (
    BadLine,
    TooLong,
    fd_reader,
    jsonrpc_answer_id,
    jsonrpc_error,
    jsonrpc_problem,
    parse_line,
    read_lines,
)

MAX_LINE = 32 * 1024 * 1024  # a Write of a large file fits; a runaway client's line does not


def note(text: str) -> None:
    """One line on stderr (the MCP client's log of this server)."""
    print(f"loopwright mcp serve: {text}", file=sys.stderr, flush=True)


class Wire:
    """The private stdin/stdout the client speaks on; fd 0 and 1 are pointed elsewhere meanwhile."""

    def __init__(self) -> None:
        self.in_fd = os.dup(0)
        self.out_fd = os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        """Write whole lines (called from worker threads: the lock keeps lines whole)."""
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.out_fd, view):]

    def close(self) -> None:
        for fd, std in ((self.in_fd, 0), (self.out_fd, 1)):
            try:
                os.dup2(fd, std)
                os.close(fd)
            except OSError:
                pass


def vet(line: bytes | TooLong) -> tuple[dict[str, Any] | None, bytes | None]:
    """(the message, None) for a well-formed JSON-RPC line, else (None, the error line to answer
    with, or None when the bad line is a notification or a response)."""
    if isinstance(line, TooLong):
        note(f"skipped a message of {line.size:,} bytes (the limit is {MAX_LINE:,})")
        if line.field("method") is not None or line.field("id") is None:
            return None, jsonrpc_error(line.field("id"), -32600,
                                       f"Invalid Request: message of {line.size:,} bytes, over the limit "
                                       f"of {MAX_LINE:,}: not read")
        return None, None
    try:
        msg = parse_line(line)
    except BadLine as e:
        note(f"skipped a line that is {e}: {line[:80]!r}")
        return None, jsonrpc_error(None, -32700, f"Parse error: {e}")
    problem = jsonrpc_problem(msg)
    if problem is None:
        return msg, None
    note(f"skipped a line that is {problem}: {line[:80]!r}")
    answer, id_ = jsonrpc_answer_id(msg)
    return None, jsonrpc_error(id_, -32600, f"Invalid Request: {problem}") if answer else None


def types_problem(e: Any) -> str:
    """What the MCP types refuse in a message, from pydantic's ValidationError `e` (its first error)."""
    errors = e.errors()
    return f"{'.'.join(map(str, errors[0]['loc']))}: {errors[0]['msg']}" if errors else str(e)


def vet_body(body: bytes) -> bytes | None:
    """None for a body that is one message the MCP types take, else the JSON-RPC error to answer it
    with, as `vet` and the SDK's types would (HTTP's door: every POST is answered, so a bad
    notification or response gets one too, with a null id)."""
    import mcp_types as types
    from pydantic import ValidationError

    try:
        msg = parse_line(body)
    except BadLine as e:
        return jsonrpc_error(None, -32700, f"Parse error: {e}")
    problem = jsonrpc_problem(msg)
    if problem is None:
        try:
            types.jsonrpc_message_adapter.validate_python(msg, by_name=False)
            return None
        except ValidationError as e:
            problem = types_problem(e)
    note(f"refused a request body that is {problem}: {body[:80]!r}")
    answer, id_ = jsonrpc_answer_id(msg)
    return jsonrpc_error(id_ if answer else None, -32600, f"Invalid Request: {problem}")


class Serving:
    """What `App.load` hands back once the SDK is imported and the server built: how to run it on a
    pair of streams, and what to do when it ends."""

    def __init__(self, run: Callable[[Any, Any], Any], close: Callable[[], Any]) -> None:
        self.run = run
        self.close = close


class App(Protocol):
    """What the transport serves (server.py's): built in two steps, each in a worker thread."""

    def prepare(self) -> None:
        """Build what the early answers need (the tools, the gate), without the SDK."""

    def load(self) -> Serving:
        """Import the SDK and build its server (after prepare)."""

    async def early(self, method: str, params: Any) -> dict[str, Any] | None:
        """The result the SDK would give this request, when it can be told without the SDK (None:
        left to the SDK). Asked only before the SDK is loaded; the handshake (`initialize`,
        `server/discover`) before `prepare` is done, anything else after."""


HANDSHAKES = ("initialize", "server/discover")


class _Stdio:
    """One stdio serving: the client's lines read and vetted into an inbox, the first requests answered
    early, then the SDK's server fed from the inbox and its messages written to the client."""

    def __init__(self, app: App, wire: Wire) -> None:
        self.app, self.wire = app, wire
        self.failed: list[Exception] = []

    async def run(self) -> None:
        import anyio

        # (anyio's events need the running loop: made here, not in __init__)
        self.inbox_send, self.inbox = anyio.create_memory_object_stream[dict[str, Any]](64)
        self.early: dict[str, Any] = {}  # the results answered before the SDK was loaded, by their id's JSON
        self.prepared, self.loaded = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.read_client)
            tg.start_soon(self.serve, tg.cancel_scope)

    async def out(self, data: bytes) -> None:
        import anyio

        await anyio.to_thread.run_sync(self.wire.write, data)

    async def answer_early(self, msg: dict[str, Any]) -> None:
        key = json.dumps(msg["id"])
        if key in self.early:
            return
        if msg["method"] not in HANDSHAKES:
            await self.prepared.wait()
        if self.loaded.is_set():
            return
        result = await self.app.early(msg["method"], msg.get("params"))
        if result is not None:
            self.early[key] = result
            await self.out(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode() + b"\n")

    async def read_client(self) -> None:
        reader = await fd_reader(self.wire.in_fd)
        async with self.inbox_send:
            async for line in read_lines(reader, MAX_LINE):
                if not isinstance(line, TooLong) and not line.strip():
                    continue
                msg, reply = vet(line)
                if reply is not None:
                    await self.out(reply)
                if msg is None:
                    continue
                if "id" in msg and "method" in msg and not self.loaded.is_set():
                    await self.answer_early(msg)
                await self.inbox_send.send(msg)

    async def serve(self, cancel: Any) -> None:
        import anyio

        try:
            await anyio.to_thread.run_sync(self.app.prepare)
            self.prepared.set()
            serving = await anyio.to_thread.run_sync(self.app.load)
        except Exception as e:  # settings the server cannot run with: said once, and the server ends
            note(str(e))
            self.failed.append(e)
            cancel.cancel()
            return
        self.loaded.set()
        try:
            await self.run_sdk(serving)
        finally:
            await serving.close()

    async def run_sdk(self, serving: Serving) -> None:
        import anyio

        to_sdk_send, to_sdk = anyio.create_memory_object_stream[Any](0)
        from_sdk, from_sdk_recv = anyio.create_memory_object_stream[Any](0)
        drained = anyio.Event()
        async with anyio.create_task_group() as inner:
            inner.start_soon(self.feed, to_sdk_send)
            inner.start_soon(self.drain, from_sdk_recv, drained)
            async with from_sdk:  # closed when the server ends: drain writes what is left, then ends
                await serving.run(to_sdk, from_sdk)
            await drained.wait()
            inner.cancel_scope.cancel()  # (feed only waits on a client that stopped being read)

    async def feed(self, to_sdk_send: Any) -> None:
        """The inbox's messages, as the SDK's types, to the SDK (one it refuses answered -32600).

        The SDK takes the connection's protocol era from the first request it gets. A `server/discover`
        answered early is the client's probe, which a client may have given up on: Claude Code waits a
        moment for its answer and, on stdio, then opens the handshake era with `initialize` (a server
        slow to start: a loaded machine). So the probe is held until the client's next request: an
        `initialize` drops it (the client already has its early answer), anything else sends it first."""
        async with to_sdk_send, self.inbox:
            probe: dict[str, Any] | None = None
            async for msg in self.inbox:
                if probe is not None and "method" in msg and "id" in msg:
                    if msg["method"] == "initialize":
                        self.early.pop(json.dumps(probe["id"]), None)
                    else:
                        await self.to_sdk(probe, to_sdk_send)
                    probe = None
                if msg.get("method") == "server/discover" and "id" in msg and json.dumps(msg["id"]) in self.early:
                    probe = msg
                    continue
                await self.to_sdk(msg, to_sdk_send)

    async def to_sdk(self, msg: dict[str, Any], to_sdk_send: Any) -> None:
        import mcp_types as types
        from mcp.shared.message import SessionMessage
        from pydantic import ValidationError

        try:
            message = types.jsonrpc_message_adapter.validate_python(msg, by_name=False)
        except ValidationError as e:
            await self.refuse(msg, types_problem(e))
            return
        await to_sdk_send.send(SessionMessage(message))

    async def refuse(self, msg: dict[str, Any], problem: str) -> None:
        answer, id_ = jsonrpc_answer_id(msg)
        note(f"skipped a message the MCP types refuse ({problem})")
        if answer:
            await self.out(jsonrpc_error(id_, -32600, f"Invalid Request: {problem}"))

    async def drain(self, from_sdk_recv: Any, drained: Any) -> None:
        """The SDK's messages to the client, but for its answers to early-answered requests."""
        try:
            async for sm in from_sdk_recv:
                wire_msg = sm.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                if self.answered_early(wire_msg):
                    continue
                await self.out(json.dumps(wire_msg, separators=(",", ":")).encode() + b"\n")
        finally:
            drained.set()

    def answered_early(self, wire_msg: dict[str, Any]) -> bool:
        """Whether the SDK's message answers a request already answered early (dropped: the client
        has its answer; one stderr line if the two differ)."""
        key = json.dumps(wire_msg.get("id"))
        if "method" in wire_msg or key not in self.early:
            return False
        said = self.early.pop(key)
        if wire_msg.get("result") != said:
            note(f"the SDK's answer {wire_msg} differs from the early one {said}")
        return True



def serve_stdio(app: App) -> int:
    """Serve `app` on stdio until the client closes stdin."""
    import anyio

    wire = Wire()
    stdio = _Stdio(app, wire)
    try:
        anyio.run(stdio.run)
    finally:
        wire.close()
    return 2 if stdio.failed else 0
