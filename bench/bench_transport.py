"""The transport's share of `-p` start → first request: models/wire.py beside httpcore2 and httpx2.

    .venv/bin/python bench/bench_transport.py [--runs 9]

Issue 41's rule: models/wire.py (h11 over asyncio's streams) stays only if the kept library costs
more than ~20 % of `-p` start → first request. Each case is a fresh process that loads what a
`-p` run loads anyway before its transport (asyncio, json, ssl, loopwright.models), then the
transport, and sends one streamed Messages request to a loopback `ScriptedServer`, reading the
answer to its end:

- `wire`: `models.wire.Pool().request(...)` (what the providers use today);
- `httpcore2`: `httpcore2.AsyncConnectionPool().request(...)` (the pool wire.py replaced);
- `httpx2`: `httpx2.AsyncClient().post(...)` (the client the official SDKs use).

Figures, side by side in one run: instructions to the first request's `send()` (callgrind's
`--dump-before=send`, which repeat to a few instructions; bytecode compiled and used, one warm-up
run each), and the median of `--runs` interleaved runs of spawn → the server's receipt of the
request and of the process's CPU time. The share is (a library's − wire's) over this tree's `-p`
start → first request (bench_instructions.py's `--start` run). Writes bench/results/transport.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_request import MODEL  # noqa: E402
from bench_instructions import start_instructions  # noqa: E402

from loopwright.testing import ScriptedServer  # noqa: E402

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent / "src")

PRELUDE = """
import asyncio, json, os, ssl, sys
from urllib.parse import urlsplit
import loopwright.models
URL = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
BODY = json.dumps({"model": MODEL_NAME, "max_tokens": 64, "stream": True,
                   "messages": [{"role": "user", "content": "hi"}]}).encode()
HEAD = [(b"host", urlsplit(URL).netloc.encode()), (b"content-type", b"application/json"),
        (b"content-length", str(len(BODY)).encode()), (b"x-api-key", b"k"), (b"anthropic-version", b"2023-06-01")]
""".replace("MODEL_NAME", repr(MODEL))

CASES = {
    "wire": """
from loopwright.models import wire
async def main():
    async with wire.Pool() as pool:
        r = await pool.request("POST", URL, HEAD, BODY)
        assert r.status_code == 200 and b"message_stop" in await r.aread()
asyncio.run(main())
""",
    "httpcore2": """
import httpcore2
async def main():
    async with httpcore2.AsyncConnectionPool() as pool:
        r = await pool.request("POST", URL, headers=HEAD, content=BODY)
        assert r.status == 200 and b"message_stop" in r.content
asyncio.run(main())
""",
    "httpx2": """
import httpx2
async def main():
    async with httpx2.AsyncClient() as client:
        r = await client.post(URL, headers=HEAD[1:], content=BODY)
        assert r.status_code == 200 and b"message_stop" in r.content
asyncio.run(main())
""",
}


def env_for(srv: ScriptedServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "ANTHROPIC_BASE_URL")}
    env.update(ANTHROPIC_BASE_URL=srv.url, PYTHONPATH=SRC, PYTHONHASHSEED="0", NO_PROXY="127.0.0.1,localhost")
    for k in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"):
        env.pop(k, None)
    return env


def instructions(case: str) -> int:
    """Instructions of the case's process up to its first send()."""
    out = Path(tempfile.mkdtemp(prefix="lw-tr-"))
    with ScriptedServer([[{"type": "text", "text": "hi"}]], model=MODEL) as srv:
        p = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=send", f"--callgrind-out-file={out}/cg",
                            sys.executable, "-c", PRELUDE + CASES[case]], env=env_for(srv), capture_output=True,
                           text=True, timeout=600)
    first = out / "cg.1"
    if p.returncode != 0 or not first.exists():
        raise SystemExit(f"{case}: {p.stderr[-3000:]}")
    m = re.search(r"^summary: (\d+)", first.read_text(), re.M) or re.search(r"^totals: (\d+)", first.read_text(), re.M)
    shutil.rmtree(out, ignore_errors=True)
    if not m:
        raise SystemExit(f"{case}: no count in callgrind's dump")
    return int(m.group(1))


def timed(case: str) -> tuple[float, float]:
    """Spawn → the server's receipt of the request (ms), and the process's CPU time (ms)."""
    with ScriptedServer([[{"type": "text", "text": "hi"}]], model=MODEL) as srv:
        t0 = time.monotonic()
        p = subprocess.Popen([sys.executable, "-c", PRELUDE + CASES[case]], env=env_for(srv))
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0 or not srv.loop_requests:
            raise SystemExit(f"{case} failed")
        received = srv.loop_requests[0].received
    return (received - t0) * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    for case in CASES:  # bytecode written, page cache warm
        timed(case)
    counts = {case: instructions(case) for case in CASES}
    home = Path(tempfile.mkdtemp(prefix="lw-tr-home-"))
    start_instructions(SRC, home)  # (its bytecode)
    p_start = start_instructions(SRC, home)[1]
    times: dict[str, list[tuple[float, float]]] = {case: [] for case in CASES}
    for _ in range(args.runs):
        for case in CASES:
            times[case].append(timed(case))
    load = os.getloadavg()[0]
    lines = [f"One streamed request from a fresh process (asyncio, json, ssl and loopwright.models loaded first), "
             f"{args.runs} interleaved runs, medians; load {load:.1f}. `-p` start → first request (this tree): "
             f"{p_start:,} instructions. `python bench/bench_transport.py --runs {args.runs}`", "",
             "| transport | instructions to the first send | − wire's | share of `-p` start → first request "
             "| start → request, ms | CPU, ms |", "|---|---:|---:|---:|---:|---:|"]
    for case in CASES:
        extra = counts[case] - counts["wire"]
        first = statistics.median(t for t, _ in times[case])
        cpu = statistics.median(c for _, c in times[case])
        lines.append(f"| {case} | {counts[case]:,} | {extra:+,} | {extra / p_start:+.0%} | {first:.0f} | {cpu:.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "transport.md").write_text(text)


if __name__ == "__main__":
    main()
