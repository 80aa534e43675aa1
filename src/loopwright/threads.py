"""Room: bases. Owns the one thread runner for sync code the loop must not wait on (tool
handlers, hooks, a page's conversion); may import nothing of the package.

A sync handler runs in a worker thread so that a slow one cannot block the event loop (an
interrupt is answered at once; the thread finishes on its own). Idle threads wait on a
SimpleQueue each (no ThreadPoolExecutor, no concurrent.futures.Future, no callback chaining). A
lone call first waits for its result on a lock for at most `wait` seconds (most handlers take
microseconds: the loop thread is woken directly, without the self-pipe, epoll and two loop
iterations of call_soon_threadsafe), then yields to the loop and gets the result by
call_soon_threadsafe into an asyncio Future. A thread busy with a slow (or abandoned) call is
simply not idle: the next call gets another. The threads are daemons: one still running (a hook
past its timeout, an abandoned tool call) does not hold up the end of the process.
Costs: bench/bench_thread_handoff.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections.abc import Callable
from typing import Any

INLINE_WAIT_S = 0.001  # how long a lone call may hold the event loop waiting for a fast result

_IDLE: list[_Worker] = []
_MAX_IDLE = 64  # threads kept for whole read-only batches; more are made when needed, then end


def _settle(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if fut.cancelled():  # interrupted: nobody waits for this result any more
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


class _Job:
    """One call handed to a worker, and how its result gets back: `done` for a caller still
    waiting on the lock, else `fut` on the caller's loop."""

    __slots__ = ("fn", "args", "done", "ok", "value", "loop", "fut")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args
        self.done = threading.Lock()  # held until the result is in: the lone caller waits on it
        self.done.acquire()
        self.ok = False
        self.value: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.fut: asyncio.Future[Any] | None = None  # set by a caller that stopped waiting on `done`

    def result(self) -> Any:
        if self.ok:
            return self.value
        raise self.value


class _Worker(threading.Thread):
    def __init__(self) -> None:
        from queue import SimpleQueue  # (at the first call: ~0.5 ms of start-up)

        super().__init__(daemon=True, name="loopwright-tool")
        self.jobs: SimpleQueue[_Job] = SimpleQueue()

    def run(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                value, ok = job.fn(*job.args), True
            except BaseException as e:  # handed to the awaiting coroutine, as run_in_executor does
                value, ok = e, False
            idle = len(_IDLE) < _MAX_IDLE
            if idle:
                _IDLE.append(self)  # before the wake-up, so the caller's next call finds it
            job.value, job.ok = value, ok
            job.done.release()
            fut, loop = job.fut, job.loop  # (read after the release: see run_in_worker)
            if fut is not None and loop is not None:
                with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
                    loop.call_soon_threadsafe(_settle, fut, ok, value)
            del job, fut, loop, value
            if not idle:
                return


async def run_in_worker(fn: Callable[..., Any], *args: Any, wait: float = 0.0) -> Any:
    """`fn(*args)` in a worker thread, in a copy of the caller's context (as asyncio.to_thread).
    `wait`: seconds to block the loop waiting for a fast result before yielding to it (0 for
    calls that run side by side: each would wait in turn). Cancelling the await abandons the
    call: the thread finishes it on its own."""
    job = _Job(contextvars.copy_context().run, (fn, *args))
    try:
        w = _IDLE.pop()
    except IndexError:
        w = _Worker()
        w.start()
    w.jobs.put(job)
    if wait > 0 and job.done.acquire(True, wait):
        return job.result()
    # Past the wait: the result comes through a Future. The caller sets `fut` before it tries
    # `done` once more, the worker releases `done` before it reads `fut`: so either the caller
    # finds `done` released, or the worker finds `fut` (or both: the result is taken here and
    # the cancelled Future ignores it). One lock, no second one ordering the two.
    job.loop = loop = asyncio.get_running_loop()
    job.fut = fut = loop.create_future()
    if job.done.acquire(False):
        fut.cancel()
        return job.result()
    return await fut


os.register_at_fork(after_in_child=_IDLE.clear)  # a forked child has none of these threads
