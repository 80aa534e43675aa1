"""How long an MCP client (Claude Code, Claude Desktop) waits for `loopwright mcp serve`: process
start to the answer of `initialize`, and to the answer of the first `tools/list`, beside the floor
under them, side by side in one run (the commands take turns, so load on the machine falls on all
of them alike).

    .venv/bin/python bench/bench_mcp_serve_start.py [--runs 11]

Rows: `python -c pass`; `import mcp.server.lowlevel` (the MCP SDK's server alone); `loopwright
--version`; `loopwright mcp serve` to initialize's answer (given by the transport before the SDK is
imported and the tools are built); to tools/list's answer (tools built, SDK maybe not); to the
answers of Claude Code's first four requests (2026-07-28's server/discover, prompts/list,
resources/list, tools/list); to a first tools/call's answer (which needs the SDK). Writes
bench/results/mcp_serve_start.md.
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
INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}}}).encode() + b"\n"
LIST = (b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}\n')
_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
         "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
         "io.modelcontextprotocol/clientCapabilities": {}}
CLAUDE_CODE = b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": {"_meta": _META}}).encode() + b"\n"
                       for i, m in enumerate(["server/discover", "prompts/list", "resources/list", "tools/list"]))
CALL = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                   "params": {"name": "Glob", "arguments": {"pattern": "*"}, "_meta": _META}}).encode() + b"\n"


def env(home: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOPWRIGHT_", "OPENAI_"))}
    e.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled bytecode, as users have it
    e.update(HOME=home, LOOPWRIGHT_HOME=os.path.join(home, ".loopwright"))
    return e


def timed_exit(cmd: list[str], home: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env(home), stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000


def timed_serve(cwd: str, home: str, send: bytes, want: set[int]) -> float:
    """Start → the answers to the requests `want` names, in ms."""
    t0 = time.perf_counter()
    p = subprocess.Popen([str(BIN), "mcp", "serve", "--cwd", cwd], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=env(home))
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(send)
    p.stdin.flush()
    want = set(want)
    while want:
        msg = json.loads(p.stdout.readline())
        if "method" not in msg:
            want.discard(msg.get("id"))
    ms = (time.perf_counter() - t0) * 1000
    p.stdin.close()
    p.wait(timeout=30)
    return ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    runs = ap.parse_args().runs
    py = sys.executable
    with tempfile.TemporaryDirectory() as cwd, tempfile.TemporaryDirectory() as home:
        rows = {
            "`python -c pass` (baseline)": lambda: timed_exit([py, "-c", "pass"], home),
            "`python -c 'import mcp.server.lowlevel'` (the MCP SDK's server alone)":
                lambda: timed_exit([py, "-c", "import mcp.server.lowlevel"], home),
            "`loopwright --version`": lambda: timed_exit([str(BIN), "--version"], home),
            "`loopwright mcp serve`: start → initialize answered": lambda: timed_serve(cwd, home, INIT, {0}),
            "`loopwright mcp serve`: start → first tools/list answered": lambda: timed_serve(cwd, home, INIT + LIST, {1}),
            "`loopwright mcp serve`: start → Claude Code's first 4 requests answered (discover, 3 listings)":
                lambda: timed_serve(cwd, home, CLAUDE_CODE, {0, 1, 2, 3}),
            "`loopwright mcp serve`: start → a first tools/call answered (SDK loaded)":
                lambda: timed_serve(cwd, home, CLAUDE_CODE + CALL, {9}),
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
    out = HERE / "results" / "mcp_serve_start.md"
    out.parent.mkdir(exist_ok=True)
    load = os.getloadavg()[0]
    out.write_text(f"Measured with load average {load:.1f} at the end.\n\n{table}\n")


if __name__ == "__main__":
    main()
