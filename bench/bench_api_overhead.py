"""The per-turn overhead of a library run that uses none of issue 45's features (deps, output
types, usage limits, guardrails, handoffs), side by side with git revision REF (for issue 45:
main without them); and, this tree only, of runs that use deps, a request limit, token limits.

    .venv/bin/python bench/bench_api_overhead.py --before REF [--rounds 7] [--turns 300]

Each measurement is a child process (bytecode compiled and used, one warm-up run first), the
two trees' children interleaved round by round so a busy machine hits both alike; medians (and
minima: the least disturbed round) over the rounds. A run: a zero-latency scripted model and a no-op tool, N turns, less the cost of a
run of 0 turns (event loop, options, init). Writes bench/results/api_overhead.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent / "src")

CHILD = r"""
import gc, json, statistics, sys, time
import loopwright as lw

turns, features = int(sys.argv[1]), sys.argv[2]

async def noop(x):
    return "ok"

TOOLS = {"async": lw.Tool("noop", "n", {"type": "object", "properties": {}}, noop),
         "sync": lw.Tool("noop", "n", {"type": "object", "properties": {}}, lambda x: "ok")}

def model(n):
    k = [0]
    def fn(h):
        k[0] += 1
        if k[0] > n:
            return {"content": [{"type": "text", "text": "done"}], "usage": {"input_tokens": 1, "output_tokens": 1}}
        return {"content": [{"type": "tool_use", "id": f"t{k[0]}", "name": "noop", "input": {}}],
                "usage": {"input_tokens": 1, "output_tokens": 1}}
    return lw.ScriptedModel(fn)

def seconds(n, tool):
    extra = {}  # (built only for its series: the tree before has none of these names)
    if features == "deps":
        extra = dict(deps=object())
    elif features == "requests":
        extra = dict(usage_limits=lw.UsageLimits(request_limit=10**9))
    elif features == "tokens":
        extra = dict(usage_limits=lw.UsageLimits(input_tokens_limit=10**12, total_tokens_limit=10**12))
    opts = lw.AgentOptions(model=model(n), tools=[TOOLS[tool]], **extra)
    gc.collect()
    t0 = time.perf_counter()
    r = lw.run("go", opts)
    dt = time.perf_counter() - t0
    assert r.subtype == "success" and r.num_turns == n, r.subtype
    return dt

out = {}
for tool in ("async", "sync"):
    seconds(50, tool)
    start = statistics.median(seconds(0, tool) for _ in range(9))
    out[tool] = statistics.median((seconds(turns, tool) - start) / turns * 1e6 for _ in range(3))
print(json.dumps(out))
"""


def extract(ref: str, into: Path) -> str:
    sys.path.insert(0, str(HERE))
    from bench_first_request import extract_src

    return str(extract_src(ref, into))


def child(pythonpath: str, turns: int, features: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = pythonpath
    r = subprocess.run([sys.executable, "-c", CHILD, str(turns), features], env=env,
                       capture_output=True, text=True, timeout=600, check=True)
    return dict(json.loads(r.stdout))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, metavar="REF", help="the git revision to measure side by side")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--turns", type=int, default=300)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = extract(a.before, Path(tmp))
        series = {"before": (before, "none"), "this tree": (SRC, "none"), "this tree, deps=": (SRC, "deps"),
                  "this tree, a request_limit": (SRC, "requests"),
                  "this tree, input and total token limits": (SRC, "tokens")}
        for path, _ in series.values():  # compile the bytecode once (the rounds use it)
            subprocess.run([sys.executable, "-m", "compileall", "-q", path], check=True)
        got: dict[str, list[dict[str, float]]] = {k: [] for k in series}
        t0 = time.perf_counter()
        for _ in range(a.rounds):
            for name, (path, features) in series.items():
                got[name].append(child(path, a.turns, features))
    lines = [f"Per-turn overhead, {a.turns} turns, a no-op tool, medians of {a.rounds} interleaved rounds "
             f"(before = {a.before}):", "",
             "| series | async tool µs/turn: median (min) | sync tool µs/turn: median (min) |", "|---|---:|---:|"]
    for name, rows in got.items():
        cells = [f"{statistics.median(r[k] for r in rows):.1f} ({min(r[k] for r in rows):.1f})" for k in ("async", "sync")]
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    table = "\n".join(lines)
    print(table)
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    out = HERE / "results" / "api_overhead.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table + "\n")


if __name__ == "__main__":
    main()
