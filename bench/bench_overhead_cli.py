"""Startup and per-run overhead of the `loopwright` command.

    .venv/bin/python bench/bench_overhead_cli.py [--runs N]

Measures (medians of N runs, wall time of a fresh process each time):
- `loopwright --version` (target: well under 0.3 s);
- `python -c "import loopwright"` and the same for bare `python -c pass`;
- `loopwright -p` with a one-call scripted model (no network): the whole headless path;
- `loopwright demo` (seed Example 4.3 with real tools: 4 calls, 3 tool-use turns, 2 test runs).
Writes bench/results/overhead_cli.md.
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
BIN = Path(sys.executable).parent / "loopwright"


def wall(cmd: list[str], cwd: Path | None = None) -> tuple[float, int]:
    """Wall seconds and max RSS (KiB) of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # .pyc files used, as users have
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} exited {p.returncode}")
    return dt, ru.ru_maxrss


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lw-overhead-"))
    script = tmp / "script.json"
    script.write_text(json.dumps([[{"type": "text", "text": "hi"}]]))
    cases = [
        ("python -c pass (baseline)", [sys.executable, "-c", "pass"]),
        ("python -c 'import loopwright'", [sys.executable, "-c", "import loopwright"]),
        ("loopwright --version", [str(BIN), "--version"]),
        ("loopwright -p (1 scripted call)", [str(BIN), "-p", "hi", "--model", f"scripted:{script}",
                                             "--no-session-persistence", "--output-format", "json"]),
        ("loopwright demo (Ex 4.3, real tools)", [str(BIN), "demo"]),
    ]
    for _, cmd in cases:  # warm the page cache and the .pyc files once
        wall(cmd, tmp)
    rows = []
    for label, cmd in cases:
        n = args.runs if "demo" not in label else max(3, args.runs // 3)
        samples = [wall(cmd, tmp) for _ in range(n)]
        rows.append((label, n, statistics.median(s[0] for s in samples) * 1000,
                     min(s[0] for s in samples) * 1000, statistics.median(s[1] for s in samples) / 1024))
    lines = ["| command | runs | median ms | min ms | max RSS MiB |", "|---|---:|---:|---:|---:|"]
    lines += [f"| `{label}` | {n} | {med:.0f} | {mn:.0f} | {rss:.1f} |" for label, n, med, mn, rss in rows]
    table = "\n".join(lines)
    print(table)
    out = HERE / "results" / "overhead_cli.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("# loopwright CLI overhead\n\n"
                   f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; fresh process per run, medians.\n\n"
                   + table + "\n")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
