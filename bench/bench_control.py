"""What a RunControl costs a turn: `lw.run`-style runs with and without one, side by side.

    .venv/bin/python bench/bench_control.py [--turns 2000] [--runs 7]

Under a RunControl (the client, the SDK protocol, ACP) the model's stream and each turn's tool
calls run in tasks of their own, so that interrupt() cancels just them (loop/stream.py,
loop/turn.py); without one (`lw.run`, `-p`) nothing can interrupt and the loop awaits them in
place. Each run is a fresh process that builds a run of bench_overhead.py's zero-latency model
and async no-op tool, with and without a RunControl (after a 50-turn warm-up of each), and times
`--turns` turns; medians of µs per turn over interleaved runs, and the median of each run's own
difference. Writes bench/results/control.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent / "src")
CODE = """
import asyncio, json, sys, time
sys.path.insert(0, {bench!r})
import bench_overhead as b
import loopwright as lw
from loopwright.assemble import build_run
from loopwright.loop import RunControl, run_query

def per_turn(turns, control):
    async def go():
        run = build_run(lw.AgentOptions(model=b.model_for(turns), tools=[b.TOOL]), "go", control=control)
        t0 = time.perf_counter()
        async for m in run_query(run, "go"):
            last = m
        assert last.subtype == "success" and last.num_turns == turns, last
        return (time.perf_counter() - t0) / turns * 1e6
    return asyncio.run(go())

per_turn(50, None), per_turn(50, RunControl())
print(json.dumps({{"none": per_turn({turns}, None), "control": per_turn({turns}, RunControl())}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = SRC  # this checkout's package, not the venv's install
    rs = [json.loads(subprocess.run([sys.executable, "-c", CODE.format(bench=str(HERE), turns=args.turns)], env=env,
                                    capture_output=True, text=True, check=True).stdout) for _ in range(args.runs)]
    none, control = statistics.median(r["none"] for r in rs), statistics.median(r["control"] for r in rs)
    text = "\n".join([
        f"{args.turns}-turn run (zero-latency model, async no-op tool), {args.runs} runs; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.", "",
        "| run | µs/turn |", "|---|---:|",
        f"| no RunControl (`lw.run`, `-p`) | {none:.1f} |",
        f"| under a RunControl (a task for the stream and one for the tools) | {control:.1f} |",
        f"| difference (median of runs) | {statistics.median(r['control'] - r['none'] for r in rs):+.1f} |", ""])
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "control.md").write_text(text)


if __name__ == "__main__":
    main()
