"""`lw.batch` wall time vs concurrency, locally and on a local Ray: 100 scripted tasks, each two
model calls of DELAY seconds (a tool call, then the answer), so a task waits ~2*DELAY on its
"model". Ideal wall = tasks * 2 * DELAY / N; the overhead per task is (wall - ideal) / tasks.

    .venv/bin/python bench/bench_batch.py [--tasks 100] [--delay 0.05] [--no-ray]

Writes bench/results/batch.md."""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.batching import LocalExecutor, RayExecutor, Task, batch


def agent(delay: float) -> Any:
    def fn(h: list[dict[str, Any]]) -> Any:
        if len(h) == 1:
            return {"content": [{"type": "tool_use", "id": "e1", "name": "echo", "input": {}}], "delay": delay}
        return {"content": [{"type": "text", "text": "done"}], "delay": delay}
    return fn


def echo(x: dict[str, Any]) -> str:
    return "ok"


def measure(n_tasks: int, delay: float, concurrency: int, executor: Any, tmp: Path) -> float:
    tasks = []
    for i in range(n_tasks):
        d = tmp / f"c{concurrency}-{type(executor).__name__}-{i}"
        d.mkdir()
        tasks.append(Task(f"t{i}", "go", str(d), {"model": lw.ScriptedModel(agent(delay))}))
    base = lw.AgentOptions(tools=[lw.Tool("echo", "echo", {"type": "object"}, echo, read_only=True)],
                           sessions_dir=tmp / "sessions")

    async def go() -> int:
        return sum([1 async for r in batch(tasks, base, concurrency=concurrency, executor=executor)
                    if r["subtype"] == "success"])

    t0 = time.perf_counter()
    ok = asyncio.run(go())
    wall = time.perf_counter() - t0
    assert ok == n_tasks, f"{ok}/{n_tasks} succeeded"
    return wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    rows = []
    per_task_model_s = 2 * args.delay
    executors: list[tuple[str, Any]] = [("local", LocalExecutor)]
    if not args.no_ray:
        import ray

        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        ray.init(num_cpus=8, include_dashboard=False, log_to_driver=False)
        executors.append(("Ray (local, 8 worker slots)", lambda: RayExecutor()))
    with tempfile.TemporaryDirectory() as d:
        for name, make in executors:
            base_wall = None
            for n in (1, 2, 4, 8):
                wall = measure(args.tasks, args.delay, n, make(), Path(d))
                base_wall = base_wall or wall
                ideal = args.tasks * per_task_model_s / n
                rows.append(f"| {name} | {n} | {wall:.2f} s | {base_wall / wall:.2f}× | {ideal:.2f} s | "
                            f"{(wall - ideal) / args.tasks * 1000:.1f} ms |")
    table = "\n".join(["| executor | concurrency | wall | speed-up vs 1 | ideal (model wait only) | overhead per task |",
                       "|---|---:|---:|---:|---:|---:|", *rows])
    out = Path(__file__).resolve().parent / "results" / "batch.md"
    out.write_text(f"# lw.batch: {args.tasks} scripted tasks, 2 calls of {args.delay:g} s each\n\n{table}\n")
    print(table)


if __name__ == "__main__":
    main()
