"""Room: loop. The model's event stream; under a RunControl in a task of its own, so that
interrupt() cancels just the model call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ..models.base import Model, ModelRequest
from .run import Run


def stream(run: Run, req: ModelRequest) -> AsyncIterator[Any]:
    """The model's events. Under a RunControl the stream runs in its own task, so that
    interrupt() cancels just the model call (never the caller's code between two events): the
    run then ends with h intact. Without one nothing can interrupt, and the model's own stream
    is iterated in place. The second path stays by issue 41's rule (above 1 % of the CLI's
    per-turn gap): the task and its queue, with the tools' task (loop/turn.py), cost a
    zero-latency turn ~179,000 instructions more than the direct path (211,000 -> 390,500,
    `bench/bench_instructions.py --paths`), ~4 % of the CLI's per-turn gap (~4.6 M instructions
    a turn of Read, `--gap`); in wall time +93 µs a turn (`bench/bench_control.py`)."""
    control, model = run.deps.control, run.deps.model
    if control is None:
        return model.stream(req)
    return _controlled_stream(req, control, model)


async def _controlled_stream(req: ModelRequest, control: Any, model: Model) -> AsyncIterator[Any]:
    if control.interrupted:
        raise asyncio.CancelledError
    queue: asyncio.Queue[Any] = asyncio.Queue()
    done = object()

    async def pump() -> None:
        async for ev in model.stream(req):
            queue.put_nowait(ev)

    task = asyncio.ensure_future(pump())
    # A callback, not a `finally` in pump: a task cancelled before it first ran never enters it
    task.add_done_callback(lambda _: queue.put_nowait(done))
    control._task = task
    try:
        while (ev := await queue.get()) is not done:
            yield ev
        await task  # re-raises the model's error, or CancelledError after interrupt()
    finally:
        control._task = None
        if not task.done():
            task.cancel()
