"""Grep on a large tree: ripgrep vs the pure-Python engine, same queries, same formatter.

Usage: .venv/bin/python bench/bench_grep.py [TREE] [--runs N]
Prints a markdown table (median wall time of N runs per engine, and whether the two outputs
are identical) and writes it to bench/results/grep.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from loopwright.tools.base import ToolContext
from loopwright.tools.grep import make_grep_tool
from loopwright.workspace import SearchState, ToolState

HERE = Path(__file__).resolve().parent
DEFAULT_TREE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"

QUERIES: list[dict[str, Any]] = [
    {"pattern": "def __init__"},
    {"pattern": r"class \w+Error\b", "output_mode": "count"},
    {"pattern": "todo", "-i": True, "output_mode": "content", "type": "py"},
    {"pattern": "asyncio", "glob": "**/*.pyi", "output_mode": "content", "-C": 2},
    {"pattern": "zzq_never_matches_zzq"},
]


def run_once(tool: Any, query: dict[str, Any], tree: Path, engine: str) -> tuple[float, str, bool]:
    ctx = ToolContext(tree, state=ToolState(search=SearchState(engine=engine)))
    t0 = time.perf_counter()
    out = asyncio.run(tool.call(query, ctx))
    return time.perf_counter() - t0, str(out.content), out.is_error


def describe(q: dict[str, Any]) -> str:
    extra = " ".join(f"{k}={v}" for k, v in q.items() if k != "pattern")
    return f"`{q['pattern']}` {extra}".strip()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?", default=str(DEFAULT_TREE))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    rg = shutil.which("rg")
    if rg is None:
        print("rg is not installed: nothing to compare", file=sys.stderr)
        return 1
    n_files = sum(len(files) for _, _, files in os.walk(tree))
    tool = make_grep_tool()
    rows = []
    for q in QUERIES:
        times: dict[str, list[float]] = {"rg": [], "python": []}
        outs: dict[str, tuple[str, bool]] = {}
        for _ in range(args.runs):
            for engine in ("rg", "python"):
                dt, out, err = run_once(tool, q, tree, engine)
                times[engine].append(dt)
                outs[engine] = (out, err)
        t_rg, t_py = statistics.median(times["rg"]), statistics.median(times["python"])
        same = outs["rg"] == outs["python"]
        first = outs["rg"][0].splitlines()[0] if outs["rg"][0] else ""
        rows.append(f"| {describe(q)} | {t_rg * 1000:.0f} | {t_py * 1000:.0f} | {t_py / t_rg:.1f}x | "
                    f"{'yes' if same else 'NO'} | {first[:40]} |")
    header = [
        "# Grep: ripgrep vs the pure-Python engine",
        "",
        f"Tree: `{tree}` ({n_files} files on disk, before ignore rules). "
        f"Median of {args.runs} runs, wall time in ms, through `Tool.call` (same formatter for both).",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"rg at {rg}.",
        "",
        "| query | rg ms | python ms | python/rg | identical output | first line |",
        "|---|---:|---:|---:|:---:|---|",
    ]
    table = "\n".join(header + rows) + "\n"
    print(table)
    result_file = HERE / "results" / "grep.md"
    result_file.parent.mkdir(parents=True, exist_ok=True)
    result_file.write_text(table)
    return 0 if all("| yes |" in r for r in rows) else 2


if __name__ == "__main__":
    raise SystemExit(main())
