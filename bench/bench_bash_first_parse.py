"""The first Bash verdict of a process: what bashlex's import costs it, side by side for source
trees (e.g. with and without bashparse's grammar-table cache, issue 41).

    .venv/bin/python bench/bench_bash_first_parse.py [--runs 9] [--src DIR ...]

Each run is a fresh process (bytecode compiled: the trees were imported once before timing)
that imports the gate, then times its first `Permissions.evaluate("Bash", "ls -la")` (which
imports bashlex and parses) and a second one. Runs of the trees interleave; medians are
printed and written to bench/results/bash_first_parse.md. Each tree gets its own
LOOPWRIGHT_HOME, warmed by a first untimed run (a cache, if the tree keeps one, is warm).
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

HERE = Path(__file__).resolve().parent
CODE = """
import json, time
from loopwright.gate import Permissions
p = Permissions("default", cwd=".")
t0 = time.perf_counter()
p.evaluate("Bash", {"command": "ls -la"})
t1 = time.perf_counter()
p.evaluate("Bash", {"command": "git status && ls"})
t2 = time.perf_counter()
print(json.dumps({"first_ms": (t1 - t0) * 1000, "next_ms": (t2 - t1) * 1000}))
"""


def one(src: str, home: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": src, "LOOPWRIGHT_HOME": home}
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True,
                         cwd=tempfile.gettempdir())
    return dict(json.loads(out.stdout))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--src", action="append", help="a source tree (its src/ directory); default: this tree's")
    a = ap.parse_args()
    srcs = a.src or [str(HERE.parent / "src")]
    homes = {s: tempfile.mkdtemp(prefix="lw-bench-home-") for s in srcs}
    for s in srcs:
        one(s, homes[s])  # warm: bytecode, and a tree's cache if it keeps one
    runs: dict[str, list[dict[str, float]]] = {s: [] for s in srcs}
    for _ in range(a.runs):
        for s in srcs:
            runs[s].append(one(s, homes[s]))
    lines = ["# The first Bash verdict of a process", "",
             f"`bench/bench_bash_first_parse.py --runs {a.runs}`, median of {a.runs} fresh processes, "
             f"Python {sys.version.split()[0]}.", "",
             "| source tree | first verdict (imports bashlex) | next verdict |", "|---|---|---|"]
    for s in srcs:
        first = statistics.median(r["first_ms"] for r in runs[s])
        nxt = statistics.median(r["next_ms"] for r in runs[s])
        lines.append(f"| `{s}` | {first:.1f} ms | {nxt:.2f} ms |")
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results" / "bash_first_parse.md").write_text(text)


if __name__ == "__main__":
    main()
