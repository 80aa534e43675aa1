"""How cheaply can a sync call be handed to another thread and awaited? (Tool.call's worker
thread: a slow sync handler must not block the event loop, but most handlers are fast.)

    .venv/bin/python bench/bench_thread_handoff.py [--n 20000] [--rounds 7]

Each mechanism awaits `int()` in another thread n times; µs per round trip, median of the
rounds (interleaved, so a noisy neighbour hits them all alike):
- inline: no thread (the floor);
- run_in_executor: a ThreadPoolExecutor (concurrent.futures.Future + wrap_future chaining);
- to_thread-style pool with copy_context: what Tool.call did before;
- hand-off: loopwright.tools.base.run_in_worker (idle worker threads, a SimpleQueue each,
  loop.call_soon_threadsafe to set an asyncio Future);
- Tool.call inline vs in_thread: the whole call of a trivial sync tool.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import statistics
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.tools.base import ToolContext, run_in_worker


async def _time(n: int, once: Callable[[], Awaitable[Any]]) -> float:
    for _ in range(min(n, 500)):
        await once()
    t0 = time.perf_counter()
    for _ in range(n):
        await once()
    return (time.perf_counter() - t0) / n * 1e6


def measure(n: int, rounds: int) -> dict[str, float]:
    pool = ThreadPoolExecutor(4)
    tool = lw.Tool("t", "t", {"type": "object", "properties": {}}, lambda x: "ok")
    ctx = ToolContext(Path("."))

    async def inline() -> Any:
        return 0

    def kinds(loop: asyncio.AbstractEventLoop) -> dict[str, Callable[[], Awaitable[Any]]]:
        return {
            "inline (no thread)": inline,
            "run_in_executor (ThreadPoolExecutor)": lambda: loop.run_in_executor(pool, int),
            "run_in_executor + copy_context (before)":
                lambda: loop.run_in_executor(pool, contextvars.copy_context().run, int),
            "run_in_worker (now)": lambda: run_in_worker(int),
            "Tool.call, inline": lambda: tool.call({}, ctx),
            "Tool.call, in_thread": lambda: tool.call({}, ctx, in_thread=True),
        }

    times: dict[str, list[float]] = {}

    async def one_round() -> None:
        for k, f in kinds(asyncio.get_running_loop()).items():
            times.setdefault(k, []).append(await _time(n, f))

    for _ in range(rounds):
        asyncio.run(one_round())
    pool.shutdown()
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    res = measure(args.n, args.rounds)
    print(f"| hand-off to a thread and back (median of {args.rounds} rounds of {args.n}) | µs/call |")
    print("|---|---:|")
    for k, v in res.items():
        print(f"| {k} | {v:.1f} |")
    print(f"| cost of the thread in Tool.call | {res['Tool.call, in_thread'] - res['Tool.call, inline']:+.1f} |")


if __name__ == "__main__":
    main()
