"""Harness overhead per turn: zero-latency scripted model, trivial tool, 10..10,000 turns.

Per-turn work must be proportional to the new blocks only, never to the history, so
the overhead per turn stays flat. For contrast, the same run through a loop that
redoes whole-history work each turn (full Inv check + re-serializing the history,
as many harnesses do) is measured side by side in the same process.

    .venv/bin/python bench/bench_overhead.py [--quick]
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.invariant import check


async def _noop(x: dict[str, Any]) -> str:
    return "ok"


# The loop's own cost: an async tool runs on the event loop. A sync handler (SYNC_TOOL) is
# handed to a worker thread so it cannot block interrupts; that hand-off is measured beside it.
TOOL = lw.Tool("noop", "does nothing", {"type": "object", "properties": {}}, _noop)
SYNC_TOOL = lw.Tool("noop", "does nothing", {"type": "object", "properties": {}}, lambda x: "ok")


def model_for(turns: int, marks: tuple[int, ...] = ()) -> lw.ScriptedModel:
    """`turns` turns of one call to the tool, then an answer. `marks`: the calls at which the model
    calls os.getppid(), where callgrind dumps its counts (bench_instructions.py --window)."""
    state = {"k": 0}

    def fn(h: list[dict[str, Any]]) -> dict[str, Any]:  # O(1): never looks at the history
        state["k"] += 1
        if state["k"] in marks:
            os.getppid()
        if state["k"] > turns:
            return {"content": [{"type": "text", "text": "done"}], "usage": {"input_tokens": 1, "output_tokens": 1}}
        return {"content": [{"type": "tool_use", "id": f"t{state['k']}", "name": "noop", "input": {}}],
                "usage": {"input_tokens": 1, "output_tokens": 1}}

    return lw.ScriptedModel(fn)


def run_seconds(turns: int, tool: lw.Tool = TOOL) -> float:
    opts = lw.AgentOptions(model=model_for(turns), tools=[tool])
    gc.collect()
    t0 = time.perf_counter()
    r = lw.run("go", opts)
    dt = time.perf_counter() - t0
    assert r.subtype == "success" and r.num_turns == turns, r.subtype
    return dt


def loopwright_run(turns: int, startup: float, tool: lw.Tool = TOOL) -> float:
    """Seconds per turn, not counting the fixed cost of starting a run (event loop, options)."""
    return (run_seconds(turns, tool) - startup) / turns


def naive_run(turns: int) -> float:
    """The same loop, but each turn re-checks and re-serializes the whole history."""
    m = model_for(turns)

    def step(h: list[dict[str, Any]]) -> dict[str, Any]:
        check(h)  # full, non-incremental check
        json.dumps(h)  # a full re-serialization of the request
        return m._fn(h)  # type: ignore[misc]

    h: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    gc.collect()
    t0 = time.perf_counter()
    while True:
        a = step(h)
        uses = [b for b in a["content"] if b["type"] == "tool_use"]
        if not uses:
            break
        h = h + [{"role": "assistant", "content": a["content"]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": u["id"], "content": "ok"} for u in uses]}]
    return (time.perf_counter() - t0) / turns


def peak_memory_kib(turns: int) -> float:
    tracemalloc.start()
    lw.run("go", lw.AgentOptions(model=model_for(turns), tools=[TOOL]))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1024


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = [10, 100, 1000] if quick else [10, 100, 1000, 10_000]
    reps = 3 if quick else 5
    run_seconds(50)  # warm up imports and caches
    startup = statistics.median(run_seconds(0) for _ in range(20))
    rows = []
    for n in sizes:
        ours = statistics.median(loopwright_run(n, startup) for _ in range(reps if n < 10_000 else 3))
        sync = statistics.median(loopwright_run(n, startup, SYNC_TOOL) for _ in range(reps if n < 10_000 else 3))
        naive = statistics.median(naive_run(n) for _ in range(1 if n >= 10_000 else reps)) if n <= 10_000 else float("nan")
        rows.append((n, ours * 1e6, sync * 1e6, naive * 1e6, peak_memory_kib(n) / n))
    base = rows[0][1]
    lines = [
        "| turns | loopwright µs/turn | vs 10 turns | with a sync tool (worker thread) µs/turn "
        "| whole-history loop µs/turn | peak memory / turn (KiB) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n, ours, sync, naive, mem in rows:
        lines.append(f"| {n:,} | {ours:.1f} | {ours / base:.2f}× | {sync:.1f} | {naive:.1f} | {mem:.2f} |")
    table = "\n".join(lines)
    print(table)
    print(f"\nfixed cost of starting a run (asyncio.run, options, init): {startup * 1e6:.0f} µs")
    flat = rows[-1][1] / base
    print(f"\nflatness (largest/smallest run): {flat:.2f}× (target ≤ 2×); max µs/turn: {max(r[1] for r in rows):.1f} (target < 100)")
    out = Path(__file__).parent / "results" / "overhead.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(f"{table}\n\nrun start-up {startup * 1e6:.0f} µs; flatness {flat:.2f}×\n")


if __name__ == "__main__":
    main()
