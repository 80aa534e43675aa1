"""A sync `@lw.tool` against an async one, per turn of `lw.run`, side by side with git revision REF.

    .venv/bin/python bench/bench_sync_vs_async.py [--turns 1000] [--runs 7] [--before REF]

Each run is a fresh process that times one `lw.run` of `--turns` turns with bench_overhead.py's
zero-latency model and its async no-op tool, then one with its sync no-op tool (each after a
20-turn warm-up run); the trees' processes are interleaved run by run, bytecode compiled and
used (PYTHONDONTWRITEBYTECODE unset). Medians of µs per turn, and the median of each run's own
sync ÷ async ratio (the figure a busy machine moves least). Writes bench/results/sync_vs_async.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_request import SRC, extract_src  # noqa: E402

HERE = Path(__file__).resolve().parent
CODE = """
import json, sys, time
sys.path.insert(0, {bench!r})
import bench_overhead as b
import loopwright as lw
out = {{}}
for name, tool in (("async", b.TOOL), ("sync", b.SYNC_TOOL)):
    lw.run("go", lw.AgentOptions(model=b.model_for(20), tools=[tool]))
    t0 = time.perf_counter()
    r = lw.run("go", lw.AgentOptions(model=b.model_for({turns}), tools=[tool]))
    out[name] = (time.perf_counter() - t0) / {turns} * 1e6
    assert r.subtype == "success" and r.num_turns == {turns}
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--before", help="a git revision to measure side by side")
    args = ap.parse_args()
    trees: dict[str, str | None] = {"this tree": None}
    if args.before:
        trees = {f"before {args.before}": str(extract_src(args.before, Path(tempfile.mkdtemp()))), **trees}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    res: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    for _ in range(args.runs):
        for label, path in trees.items():
            e = {**env, "PYTHONPATH": path or SRC}  # None: this checkout's src, not the venv's install
            p = subprocess.run([sys.executable, "-c", CODE.format(bench=str(HERE), turns=args.turns)], env=e,
                               capture_output=True, text=True, check=True)
            res[label].append(json.loads(p.stdout))
    lines = [f"{args.turns}-turn `lw.run`, {args.runs} interleaved runs per tree; load average "
             f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.", "",
             "| tree | async tool µs/turn | sync tool µs/turn | sync ÷ async (median of runs) |", "|---|---:|---:|---:|"]
    for label, rs in res.items():
        lines.append(f"| {label} | {statistics.median(r['async'] for r in rs):.1f} | "
                     f"{statistics.median(r['sync'] for r in rs):.1f} | "
                     f"{statistics.median(r['sync'] / r['async'] for r in rs):.2f}× |")
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "sync_vs_async.md").write_text(text)


if __name__ == "__main__":
    main()
