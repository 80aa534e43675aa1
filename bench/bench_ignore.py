"""The ignore matcher (ignore.py) on an ordinary repository: Glob and Grep's Python engine over a
tree with a typical .gitignore, and the matcher alone; optionally side by side with another
checkout's src (`--compare OTHER/src`: each measurement alternates between the two, in child
processes, so both see the same machine load).

Usage: .venv/bin/python bench/bench_ignore.py [--runs N] [--compare /tmp/ignore-before/src]
Prints a markdown table (median of N runs, ms) and writes it to bench/results/ignore.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

GITIGNORE = """__pycache__/
*.py[cod]
*$py.class
*.so
.Python
build/
develop-eggs/
dist/
downloads/
eggs/
.eggs/
lib64/
parts/
sdist/
var/
wheels/
*.egg-info/
.installed.cfg
*.egg
MANIFEST
*.manifest
*.spec
pip-log.txt
htmlcov/
.tox/
.nox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
*.cover
*.py,cover
.hypothesis/
.pytest_cache/
*.mo
*.pot
*.log
local_settings.py
db.sqlite3
instance/
.webassets-cache
.scrapy
docs/_build/
target/
.ipynb_checkpoints
.env
.venv
env/
venv/
ENV/
node_modules/
/site
.mypy_cache/
.dmypy.json
dmypy.json
.pyre/
**/gen/**/*.tmp
src/**/fixtures/*.bin
!keep.log
""".splitlines()


def make_tree(root: Path) -> list[str]:
    """200 directories of 10 files, a few of them ignored; returns every relative path."""
    rels: list[str] = []
    for a in range(10):
        for b in range(20):
            d = root / f"src/pkg{a}/mod{b}" if b % 5 else root / f"src/pkg{a}/gen/mod{b}"
            d.mkdir(parents=True, exist_ok=True)
            for i, name in enumerate(["a.py", "b.py", "c.pyc", "d.log", "e.txt", "f.tmp", "g.md", "h.bin",
                                      "keep.log", "i.py"]):
                (d / name).write_text(f"line {i}\n")
                rels.append(str((d / name).relative_to(root)))
    (root / "build").mkdir()
    (root / "build" / "x.py").write_text("x\n")
    (root / ".gitignore").write_text("\n".join(GITIGNORE) + "\n")
    return rels


def measure(runs: int) -> dict[str, float]:
    from loopwright.ignore import IgnoreRules
    from loopwright.tools.base import ToolContext
    from loopwright.tools.builtin import make_glob_tool
    from loopwright.tools.grep import make_grep_tool
    from loopwright.workspace import SearchState, ToolState

    out: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rels = make_tree(root)
        glob, grep, rules = make_glob_tool(), make_grep_tool(), IgnoreRules(GITIGNORE)
        py = ToolContext(root, state=ToolState(search=SearchState(engine="python")))
        cases = {
            "Glob `**`": lambda: asyncio.run(glob.call({"pattern": "**"}, ToolContext(root))),
            "Glob `src/**/*.py`": lambda: asyncio.run(glob.call({"pattern": "src/**/*.py"}, ToolContext(root))),
            "Grep (python) `line 3`": lambda: asyncio.run(grep.call({"pattern": "line 3"}, py)),
            "Grep (python) glob `**/*.{py,md}`": lambda: asyncio.run(
                grep.call({"pattern": "line", "glob": "**/*.{py,md}", "output_mode": "count"}, py)),
            "IgnoreRules.check, 2000 paths": lambda: [rules.check(r, False) for r in rels],
        }
        for name, fn in cases.items():
            fn()  # warm: caches, imports
            for _ in range(runs):
                t0 = time.perf_counter()
                fn()
                out.setdefault(name, []).append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1000 for k, v in out.items()}


def child(src: Path, runs: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    p = subprocess.run([sys.executable, __file__, "--child", "--runs", str(runs)], env=env, capture_output=True,
                       text=True, check=True)
    return dict(json.loads(p.stdout))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compare", help="another checkout's src directory, measured side by side")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.runs)))
        return 0
    srcs = [SRC] + ([Path(args.compare).resolve()] if args.compare else [])
    results: list[dict[str, list[float]]] = [{} for _ in srcs]
    for _ in range(3):  # rounds alternate between the checkouts
        for i, src in enumerate(srcs):
            for k, v in child(src, args.runs).items():
                results[i].setdefault(k, []).append(v)
    med = [{k: statistics.median(v) for k, v in r.items()} for r in results]
    cols = "| case | this ms |" + (" other ms | this/other |" if args.compare else "")
    lines = ["# The ignore matcher on an ordinary repository", "",
             f"Tree: 2001 files in 201 directories, a {len(GITIGNORE)}-line .gitignore. Median of 3 rounds of "
             f"{args.runs} runs, ms. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
             f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}."
             + (f" Other: `{args.compare}`." if args.compare else ""), "",
             cols, "|---|---:|" + ("---:|---:|" if args.compare else "")]
    for k in med[0]:
        row = f"| {k} | {med[0][k]:.1f} |"
        if args.compare:
            row += f" {med[1][k]:.1f} | {med[0][k] / med[1][k]:.2f} |"
        lines.append(row)
    table = "\n".join(lines) + "\n"
    print(table)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "ignore.md").write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
