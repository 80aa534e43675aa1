"""How long an editor waits for `loopwright acp`: process start to the answer of `initialize`
(and of the first `session/new`), beside the floor under it, side by side in one run (the
commands take turns, so load on the machine falls on all of them alike).

    .venv/bin/python bench/bench_acp_start.py [--runs 11]

An editor starts one agent process per session (Zed, acpx), so this is paid per session.
Rows: `python -c pass`; `import acp` (the official ACP library alone: its pydantic schema is
most of the wait); `loopwright --version`; `loopwright acp` to initialize's answer; to
session/new's answer (options, tools and settings of the first session). Writes
bench/results/acp_start.md.
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
INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOPWRIGHT_", "OPENAI_"))}
    e.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled bytecode, as users have it
    e["ANTHROPIC_API_KEY"] = "bench"
    return e


def timed_exit(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env(), stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000


def timed_acp(cwd: str, with_session: bool) -> float:
    """Start → initialize's answer (or → session/new's answer), in ms."""
    t0 = time.perf_counter()
    p = subprocess.Popen([str(BIN), "acp", "--model", "claude-sonnet-4-6"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, env=env())
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(INIT)
    if with_session:
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                                  "params": {"cwd": cwd, "mcpServers": []}}).encode() + b"\n")
    p.stdin.flush()
    want = 1 if with_session else 0
    while True:
        msg = json.loads(p.stdout.readline())
        if msg.get("id") == want and "method" not in msg:
            break
    ms = (time.perf_counter() - t0) * 1000
    p.stdin.close()
    p.wait(timeout=30)
    return ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    runs = ap.parse_args().runs
    py = sys.executable
    with tempfile.TemporaryDirectory() as cwd:
        rows = {
            "`python -c pass` (baseline)": lambda: timed_exit([py, "-c", "pass"]),
            "`python -c 'import acp'` (the ACP library alone)": lambda: timed_exit([py, "-c", "import acp"]),
            "`loopwright --version`": lambda: timed_exit([str(BIN), "--version"]),
            "`loopwright acp`: start → initialize answered": lambda: timed_acp(cwd, False),
            "`loopwright acp`: start → first session/new answered": lambda: timed_acp(cwd, True),
        }
        times: dict[str, list[float]] = {k: [] for k in rows}
        for f in rows.values():  # warm the page cache and the bytecode
            f()
        for _ in range(runs):
            for name, f in rows.items():
                times[name].append(f())
    lines = ["| command | runs | median ms | min ms |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | {len(v)} | {statistics.median(v):.0f} | {min(v):.0f} |" for k, v in times.items()]
    table = "\n".join(lines)
    print(table)
    out = HERE / "results" / "acp_start.md"
    out.parent.mkdir(exist_ok=True)
    load = os.getloadavg()[0]
    out.write_text(f"Measured with load average {load:.1f} at the end.\n\n{table}\n")


if __name__ == "__main__":
    main()
