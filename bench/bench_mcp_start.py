"""The cost of starting N stdio MCP servers at the start of a run: concurrently (what a run
does) against one after another, side by side in one run.

    .venv/bin/python bench/bench_mcp_start.py [--runs 3]

Three kinds of server:
- `waits 1 s`: a stdio server that spends 1 s before answering (stands for `npx` fetching a
  package or a server connecting to its backend: waiting, not computing); plain JSON-RPC,
  written here with the standard library so the figure is the harness's, not a CPU's;
- `Python SDK server`: tests/mcp/mcp_test_server.py (imports the `mcp` SDK: ~1.7 s of CPU each);
- `filesystem (node)`: the official @modelcontextprotocol/server-filesystem (if installed).
Each figure is McpRuntime.start() (spawn, handshake, tools/list) to all connected, median of
--runs; the servers are then stopped (not timed). Writes bench/results/mcp_start.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FS = ROOT / "tests" / "node" / "node_modules" / ".bin" / "mcp-server-filesystem"

WAITING_SERVER = r'''
import json, sys, time
time.sleep(1.0)
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    m = msg.get("method")
    if m == "initialize":
        res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
               "serverInfo": {"name": "waits", "version": "1"}}
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": res}
    elif m == "tools/list":
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object", "properties": {}}}]}}
    else:
        out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "method not found"}}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
'''


async def start(configs: list[dict[str, object]], concurrent: bool) -> float:
    from loopwright.mcp.client import McpRuntime
    from loopwright.mcp.config import parse_server

    parsed = [parse_server(f"s{i}", c) for i, c in enumerate(configs)]
    runtimes = [McpRuntime(parsed, Path.cwd())] if concurrent else [McpRuntime([p], Path.cwd()) for p in parsed]
    t0 = time.perf_counter()
    try:
        for rt in runtimes:
            await rt.start()
        dt = time.perf_counter() - t0
        bad = [s for rt in runtimes for s in rt.status() if s["status"] != "connected"]
        if bad:
            raise SystemExit(f"a server did not start: {bad}")
        return dt
    finally:
        for rt in runtimes:
            await rt.aclose()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the servers (children) write and use .pyc files, as users have
    tmp = Path(tempfile.mkdtemp(prefix="lw-mcp-bench-"))
    waiting = tmp / "waits.py"
    waiting.write_text(WAITING_SERVER)
    kinds: list[tuple[str, dict[str, object]]] = [
        ("waits 1 s (stdlib JSON-RPC)", {"command": sys.executable, "args": [str(waiting)]}),
        ("Python SDK server", {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "mcp_test_server.py")]}),
    ]
    if FS.exists():
        kinds.append(("filesystem (node)", {"command": str(FS), "args": [str(tmp)]}))
    import mcp  # noqa: F401  - imported once up front: the SDK's own import is not the servers' cost

    rows = []
    for label, cfg in kinds:
        one = statistics.median(asyncio.run(start([cfg], True)) for _ in range(args.runs))
        five = statistics.median(asyncio.run(start([cfg] * 5, True)) for _ in range(args.runs))
        seq = statistics.median(asyncio.run(start([cfg] * 5, False)) for _ in range(args.runs))
        rows.append(f"| {label} | {one:.2f} | {five:.2f} | {five / one:.2f}× | {seq:.2f} | {seq / one:.2f}× |")
        print(rows[-1], flush=True)
    table = ("| server | 1 server s | 5 servers, concurrent (a run) s | vs 1 | 5 servers, one after another s | vs 1 |\n"
             "|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n")
    out = HERE / "results" / "mcp_start.md"
    out.write_text(f"Median of {args.runs} runs. `.venv/bin/python bench/bench_mcp_start.py`\n\n{table}")
    print(f"\n{table}\nwritten to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
