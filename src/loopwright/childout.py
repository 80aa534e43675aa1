"""Room: bases. Owns reading what a child process prints (a hook, the statusLine command,
apiKeyHelper) with a cap applied while it is read; imports nothing of loopwright.

`communicate()` reads a stream whole before anything can cap it: a hook printing gigabytes, or
one that never stops, filled memory (Claude Code reads it all too: 300 MB printed by a hook took
~450 MB and 28 s). Here each of stdout and stderr keeps at most `limit` bytes; once one passes
it the reading stops and the caller is told (`Output.truncated`) so that it ends the child
(children.signal_group) and says the output was cut.

It also owns starting such a child (`start`) so that its transport can be closed (`close`):
`create_subprocess_*` keeps the transport private, and Process.wait() (3.11) waits for the pipes
to close too, so a child whose pipe a daemon it started still held could not be closed before
the event loop ended: its transport's __del__ then closed the pipes on a closed loop ("Exception
ignored in: BaseSubprocessTransport.__del__ ... RuntimeError: Event loop is closed")."""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

CHUNK = 65536
CANCEL_BOUND_S = 5.0  # a child cancelled as it started: how long its exit is waited for


@dataclass(eq=False, repr=False)
class Output:
    """What a child printed, each stream cut to the reader's limit; `truncated` names the stream
    that passed it ("" when neither did)."""

    stdout: bytes
    stderr: bytes
    truncated: str = ""


@dataclass(eq=False, repr=False)
class Child:
    """A child process with pipes, and the transport that holds them (closed by `close`)."""

    proc: asyncio.subprocess.Process
    transport: asyncio.SubprocessTransport


async def start(command: str, args: Sequence[str] | None, end: Callable[[int], None], **options: Any) -> Child:
    """`command` with `args` (exec'd), or through the shell when `args` is None, as
    create_subprocess_exec/_shell start it (`options` are theirs), keeping its transport.
    Raises OSError when it cannot start. The child runs before its pipes are connected: a
    cancel in that window waits for them (shielded), has `end` end the child (its pid), closes
    it and goes on (asyncio's own clean-up there waited for the pipes to close: for as long as
    a daemon the child started held them)."""
    loop = asyncio.get_running_loop()

    def protocol() -> asyncio.subprocess.SubprocessStreamProtocol:
        return asyncio.subprocess.SubprocessStreamProtocol(limit=CHUNK, loop=loop)

    spawn = asyncio.ensure_future(loop.subprocess_shell(protocol, command, **options) if args is None
                                  else loop.subprocess_exec(protocol, command, *args, **options))
    try:
        transport, proto = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(OSError):  # (it could not start: nothing to end)
            transport, proto = await spawn
            child = Child(asyncio.subprocess.Process(transport, proto, loop), transport)
            end(child.proc.pid)
            await close(child, CANCEL_BOUND_S)
        raise
    return Child(asyncio.subprocess.Process(transport, proto, loop), transport)


async def read_async(proc: asyncio.subprocess.Process, data: bytes | None, limit: int) -> Output:
    """Give `data` to `proc`'s stdin (then close it) and read its stdout and stderr (those that are
    pipes) until both close, keeping at most `limit` bytes of each. When one passes `limit` the
    reading stops there, the child still running: the caller ends it. Otherwise the child is
    also waited for. Cancellation (a timeout) is the caller's to handle, as with communicate()."""
    bufs = {"stdout": bytearray(), "stderr": bytearray()}

    async def feed() -> None:
        if proc.stdin is None:
            return
        try:
            if data:
                proc.stdin.write(data)
                await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # (a child that does not read its input: as communicate() takes it)
        finally:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    async def take(name: str, stream: asyncio.StreamReader) -> str:
        buf = bufs[name]
        while len(buf) <= limit:
            chunk = await stream.read(CHUNK)
            if not chunk:
                return ""
            buf += chunk
        return name

    tasks = [asyncio.ensure_future(take(n, s)) for n, s in (("stdout", proc.stdout), ("stderr", proc.stderr))
             if s is not None]
    feeder = asyncio.ensure_future(feed())
    truncated = ""
    try:
        pending = set(tasks)
        while pending and not truncated:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            truncated = next((t.result() for t in done if t.result()), "")
        if not truncated:
            await feeder
            await proc.wait()
    finally:
        for t in (*tasks, feeder):
            t.cancel()
    return Output(bytes(bufs["stdout"][:limit]), bytes(bufs["stderr"][:limit]), truncated)


async def finish(child: Child, bound: float) -> None:
    """After `read_async` stopped (at its cap, or a timeout) and the child was ended: read what is
    left in its pipes to their end, discarding it, and reap it, within `bound` seconds (a
    descendant that left its group may hold them open); then `close` it."""
    async def drain(stream: asyncio.StreamReader | None) -> None:
        while stream is not None and await stream.read(CHUNK):
            pass

    proc = child.proc
    with contextlib.suppress(TimeoutError, ProcessLookupError):
        await asyncio.wait_for(asyncio.gather(drain(proc.stdout), drain(proc.stderr), proc.wait()), bound)
    await close(child, bound)


async def close(child: Child, bound: float) -> None:
    """Close the child's pipes and transport, whoever still holds the other ends (the child is
    killed if it still runs: the caller has ended its group), and wait up to `bound` seconds for
    the loop to see it exit: a loop that ends first leaves the exit to a closed loop. Nothing
    then is left for the transport's __del__. At once for a child read to its end and reaped."""
    stdin = child.proc.stdin.transport if child.proc.stdin is not None else None
    if stdin is not None and (not stdin.is_closing() or stdin.get_write_buffer_size()):
        stdin.abort()  # (close() would wait for a reader of what is still unwritten: none may come)
    child.transport.close()
    with contextlib.suppress(TimeoutError, ProcessLookupError):
        await asyncio.wait_for(child.proc.wait(), bound)


def read_sync(proc: subprocess.Popen[bytes], limit: int, timeout: float) -> Output:
    """`read_async` for a Popen whose stdin is not a pipe (blocking: for a worker thread). Raises
    subprocess.TimeoutExpired when the streams are still open `timeout` seconds on (the caller
    ends the child)."""
    bufs: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            if stream is not None:
                sel.register(stream.fileno(), selectors.EVENT_READ, name)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout)
            for key, _ in sel.select(left):
                try:
                    chunk = os.read(key.fd, CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                bufs[key.data] += chunk
                if len(bufs[key.data]) > limit:
                    return Output(bytes(bufs["stdout"][:limit]), bytes(bufs["stderr"][:limit]), key.data)
    proc.wait(max(deadline - time.monotonic(), 0.01))
    return Output(bytes(bufs["stdout"]), bytes(bufs["stderr"]))
