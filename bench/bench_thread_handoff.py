"""How cheaply can a sync call be handed to another thread and awaited? (Tool.call's worker
thread: a slow sync handler must not block the event loop, but most handlers are fast.)

    .venv/bin/python bench/bench_thread_handoff.py [--n 20000] [--rounds 7]

Each mechanism awaits `int()` in another thread n times; µs per round trip, median of the
rounds (interleaved, so a noisy neighbour hits them all alike):
- inline: no thread (the floor);
- run_in_executor: a ThreadPoolExecutor (concurrent.futures.Future + wrap_future chaining);
- to_thread-style pool with copy_context: what Tool.call did before;
- run_in_worker (loopwright.threads): idle worker threads, a SimpleQueue each; with no
  wait (a batch's calls) the result comes by loop.call_soon_threadsafe into an asyncio Future;
  a lone call first waits up to INLINE_WAIT_S on a lock (the loop thread woken directly);
- Tool.call of a trivial sync tool: inline (the floor) and in a worker (what a lone call of a
  sync handler costs: it always runs in a worker).
Then, with perf (and hardware counters), instructions, CPU time and context switches per call
of the old and the new hand-off: figures a busy machine does not move. Writes
bench/results/thread_handoff.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.threads import INLINE_WAIT_S, run_in_worker
from loopwright.tools.base import ToolContext


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
    in_worker = _worker_tool()
    ctx = ToolContext(Path("."))

    async def inline() -> Any:
        return 0

    def kinds(loop: asyncio.AbstractEventLoop) -> dict[str, Callable[[], Awaitable[Any]]]:
        return {
            "inline (no thread)": inline,
            "run_in_executor (ThreadPoolExecutor)": lambda: loop.run_in_executor(pool, int),
            "run_in_executor + copy_context (before)":
                lambda: loop.run_in_executor(pool, contextvars.copy_context().run, int),
            "run_in_worker, no wait (a batch's calls)": lambda: run_in_worker(int),
            f"run_in_worker, wait {INLINE_WAIT_S * 1000:g} ms (a lone call in a worker)":
                lambda: run_in_worker(int, wait=INLINE_WAIT_S),
            "Tool.call, inline": lambda: tool.call({}, ctx),
            "Tool.call, in a worker (a lone call)":
                lambda: in_worker.call({}, ctx, in_thread=True, wait=INLINE_WAIT_S),
        }

    times: dict[str, list[float]] = {}

    async def one_round() -> None:
        for k, f in kinds(asyncio.get_running_loop()).items():
            times.setdefault(k, []).append(await _time(n, f))

    for _ in range(rounds):
        asyncio.run(one_round())
    pool.shutdown()
    return {k: statistics.median(v) for k, v in times.items()}


def _worker_tool() -> lw.Tool:
    """A trivial sync tool."""
    return lw.Tool("t", "t", {"type": "object", "properties": {}}, lambda x: "ok")


def _only(kind: str, n: int) -> None:
    """Run one mechanism n times (for perf stat)."""
    pool = ThreadPoolExecutor(4)

    tools = {"tool-worker": _worker_tool()}
    ctx = ToolContext(Path("."))

    async def go() -> None:
        loop = asyncio.get_running_loop()
        for _ in range(n):
            if kind in tools:
                await tools[kind].call({}, ctx, in_thread=True, wait=INLINE_WAIT_S)
            if kind == "executor":
                await loop.run_in_executor(pool, contextvars.copy_context().run, int)
            elif kind == "worker":
                await run_in_worker(int, wait=INLINE_WAIT_S)  # (in a copy of the context, as the executor's)
            elif kind == "worker-nowait":
                await run_in_worker(int)

    asyncio.run(go())
    pool.shutdown()


def perf_counts(n: int) -> dict[str, dict[str, float]] | None:
    """Instructions, CPU time and context switches per call (perf stat over the whole process,
    every thread, user and kernel), the start-up of a run with n=0 subtracted: what the machine
    does per call, whatever else runs beside it."""
    if shutil.which("perf") is None:
        return None
    out: dict[str, dict[str, float]] = {}
    for kind in ("executor", "worker-nowait", "worker", "tool-worker"):
        counts = []
        for calls in (0, n):
            p = subprocess.run(["perf", "stat", "-x,", "-e", "instructions,task-clock,context-switches", sys.executable,
                                __file__, "--only", kind, "--n", str(calls)], capture_output=True, text=True)
            c = {}
            for line in p.stderr.splitlines():
                f = line.split(",")
                if len(f) > 2 and f[0].replace(".", "").isdigit():
                    c[f[2]] = float(f[0])
            if "task-clock" not in c:
                return None
            counts.append(c)
        out[kind] = {k: (counts[1][k] - counts[0][k]) / n for k in counts[1]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.only:
        return _only(args.only, args.n)
    res = measure(args.n, args.rounds)
    lines = [f"Load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.", "",
             f"| hand-off to a thread and back (median of {args.rounds} rounds of {args.n}) | µs/call |",
             "|---|---:|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in res.items()]
    inline = res["Tool.call, inline"]
    lines.append(f"| cost of the thread in Tool.call | {res['Tool.call, in a worker (a lone call)'] - inline:+.1f} |")
    counts = perf_counts(args.n)
    if counts:
        # (instructions only where the machine has hardware counters: not in most VMs)
        lines += ["", f"| per call (perf stat over {args.n} calls, all threads) | instructions | CPU µs | "
                      "context switches |", "|---|---:|---:|---:|"]
        names = {"executor": "run_in_executor + copy_context (before)", "worker-nowait": "run_in_worker, no wait",
                 "worker": "run_in_worker, wait (a lone call)", "tool-worker": "Tool.call, in a worker"}
        for k, c in counts.items():
            ins = f"{c['instructions']:,.0f}" if "instructions" in c else "n/a"
            lines.append(f"| {names[k]} | {ins} | {c['task-clock'] * 1000:.1f} | {c.get('context-switches', 0):.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    (Path(__file__).parent / "results").mkdir(exist_ok=True)
    (Path(__file__).parent / "results" / "thread_handoff.md").write_text(text)


if __name__ == "__main__":
    main()
