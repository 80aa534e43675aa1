"""The official Python Agent SDK (claude-agent-sdk) with loopwright vs Claude Code as its CLI, side
by side on the same scripted turns at the loopback server (offline), interleaved:

- `query()` round trip: one `query("What is 2 + 2?")`, one model call;
- a 10-turn `ClaudeSDKClient` session: connect, 10 queries (one model call each), disconnect.

Per run: SDK start → first model request (the SDK's query()/connect() called → the server has
read the first model request; both on the monotonic clock), wall (the same start → the SDK's
iterator / `async with` done, the CLI gone), and the CLI's peak RSS (the largest sum of the
resident sets of the CLI process and its descendants, sampled every 5 ms) and CPU time (user +
system of the CLI and what it ran, from the driver's RUSAGE_CHILDREN: less sensitive to a
loaded machine than wall time). Each run is a fresh
driver process (`--driver`), so one run's SDK import and caches do not help the next. Bytecode is
compiled and used, as users have it: PYTHONDONTWRITEBYTECODE is unset for the driver and the CLI,
and one warm-up run of each cell is not counted.

`--before REF` adds loopwright at git revision REF (its `src/` extracted and put first on the
CLI's PYTHONPATH) as a third CLI, interleaved run by run with the working tree's.

`--floor` adds bench/sdk_floor_cli.py as a CLI: Python, asyncio and h11 answering the same
protocol lines with nothing else, the floor a Python CLI on loopwright's HTTP stack cannot go below.

    .venv/bin/python bench/bench_sdk.py [--runs 5] [--before REF] [--floor] [--no-claude]

Writes bench/results/sdk.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOOPWRIGHT = Path(sys.executable).parent / "loopwright"
CLAUDE = ROOT / "tests" / "node" / "node_modules" / ".bin" / "claude"
MODEL = "claude-sonnet-4-6"
SESSION_TURNS = 10
SCENARIOS = {"query() round trip": "query", f"{SESSION_TURNS}-turn client session": "session"}


# --- the driver: one run, in its own process ------------------------------------------------

class TreePeak(threading.Thread):
    """The largest summed RSS of this process's descendants (the CLI and what it starts)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_kib = 0
        self.done = threading.Event()

    def run(self) -> None:
        import psutil

        me = psutil.Process()
        mine = me.cmdline()
        while not self.done.is_set():
            total = 0
            for c in me.children(recursive=True):
                try:
                    if c.cmdline() == mine:  # forked, not yet exec'd: a copy of this driver, not the CLI
                        continue
                    total += c.memory_info().rss
                except psutil.Error:
                    pass
            self.peak_kib = max(self.peak_kib, total // 1024)
            self.done.wait(0.005)


async def drive(kind: str, cli: str, cwd: str) -> dict[str, Any]:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, query

    opts = ClaudeAgentOptions(cli_path=cli, cwd=cwd, model=MODEL, permission_mode="acceptEdits")
    results: list[str] = []
    sampler = TreePeak()
    sampler.start()
    t0 = time.monotonic()
    if kind == "query":
        async for m in query(prompt="What is 2 + 2?", options=opts):
            if isinstance(m, ResultMessage):
                results.append(m.subtype)
    else:
        async with ClaudeSDKClient(opts) as client:
            for i in range(SESSION_TURNS):
                await client.query(f"Question {i + 1}?")
                async for m in client.receive_response():
                    if isinstance(m, ResultMessage):
                        results.append(m.subtype)
    t1 = time.monotonic()
    sampler.done.set()
    sampler.join()
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # the CLI (and what it ran), waited for by the SDK
    return {"start": t0, "end": t1, "peak_kib": sampler.peak_kib, "results": results,
            "cpu_s": ru.ru_utime + ru.ru_stime}


# --- the bench ------------------------------------------------------------------------------

def extract_src(ref: str, into: Path) -> Path:
    """The src/ directory of git revision `ref`, extracted under `into`."""
    import tarfile
    from io import BytesIO

    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def floor_cli(work: Path) -> Path:
    """sdk_floor_cli.py as an executable with this interpreter's shebang (the SDK runs cli_path itself)."""
    exe = work / "floor-cli"
    exe.write_text(f"#!{sys.executable}\n" + (HERE / "sdk_floor_cli.py").read_text())
    exe.chmod(0o755)
    return exe


def one_run(harness: str, kind: str, work: Path, before_src: Path | None = None) -> dict[str, Any]:
    from loopwright.testing import ScriptedServer

    calls = 1 if kind == "query" else SESSION_TURNS
    turns = [[{"type": "text", "text": f"Answer {i + 1}."}] for i in range(calls)]
    home = work / f"home-{harness}"
    home.mkdir(exist_ok=True)
    cli = str({"claude": CLAUDE, "floor": work / "floor-cli"}.get(harness, LOOPWRIGHT))
    with ScriptedServer(turns, model=MODEL, strict=False) as srv:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "LOOPWRIGHT_"))}
        env.update(HOME=str(home), LOOPWRIGHT_HOME=str(home / "lw"), ANTHROPIC_API_KEY="test",
                   ANTHROPIC_BASE_URL=srv.url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # .pyc files written and used, as in any installed package
        env.pop("PYTHONPATH", None)
        if harness == "before" and before_src is not None:
            env["PYTHONPATH"] = str(before_src)
        p = subprocess.run([sys.executable, __file__, "--driver", kind, cli, str(work)], capture_output=True,
                           text=True, env=env, timeout=600)
        loop = [r for r in srv.requests if r.loop_call]
    if p.returncode != 0:
        return {"ok": False, "why": p.stderr.strip().splitlines()[-1:] or [f"exit {p.returncode}"]}
    d = json.loads(p.stdout.strip().splitlines()[-1])
    ok = d["results"] == ["success"] * calls and len(loop) == calls
    return {"ok": ok, "why": "" if ok else f"results {d['results']}, {len(loop)} model calls",
            "first_s": loop[0].received - d["start"] if loop else float("nan"), "wall_s": d["end"] - d["start"],
            "peak_kib": d["peak_kib"], "cpu_s": d["cpu_s"]}


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--driver", nargs=3, metavar=("KIND", "CLI", "CWD"))
    ap.add_argument("--before", metavar="REF", help="also loopwright at git revision REF, side by side")
    ap.add_argument("--floor", action="store_true", help="also the floor: Python, asyncio and h11 alone")
    ap.add_argument("--no-claude", action="store_true", help="leave Claude Code out")
    args = ap.parse_args()
    if args.driver:
        print(json.dumps(asyncio.run(drive(*args.driver))))
        return 0
    import claude_agent_sdk

    claude = CLAUDE.exists() and not args.no_claude
    work = Path(tempfile.mkdtemp(prefix="lw-bench-sdk-"))
    before_src = extract_src(args.before, work / "before") if args.before else None
    harnesses = (["loopwright"] + (["before"] if before_src else []) + (["floor"] if args.floor else [])
                 + (["claude"] if claude else []))
    if args.floor:
        floor_cli(work)
    cc = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True).stdout.strip() if claude else "-"
    samples: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for kind in SCENARIOS.values():  # a warm-up run of each cell (page cache, .pyc files), not counted
        for h in harnesses:
            one_run(h, kind, work, before_src)
    for i in range(args.runs):  # interleaved: each run of each scenario, harness after harness,
        order = harnesses[i % len(harnesses):] + harnesses[:i % len(harnesses)]  # in turn (none always follows another)
        for kind in SCENARIOS.values():
            for h in order:
                s = one_run(h, kind, work, before_src)
                samples.setdefault((h, kind), []).append(s)
                if not s["ok"]:
                    print(f"{h} {kind}: FAILED {s['why']}", file=sys.stderr)
    load = os.getloadavg()[0]
    lines = [f"claude-agent-sdk {claude_agent_sdk.__version__}; Claude Code {cc}; {args.runs} interleaved runs "
             f"per cell after a warm-up run, medians, bytecode compiled; {os.cpu_count()} CPUs, load average {load:.1f}. "
             "`.venv/bin/python bench/bench_sdk.py`", "",
             "| scenario | CLI | ok | SDK start → first model request ms | wall ms | CLI CPU ms | CLI peak RSS MiB |",
             "|---|---|---:|---:|---:|---:|---:|"]
    ratios: list[str] = []
    for name, kind in SCENARIOS.items():
        row: dict[str, tuple[float, float, float, float]] = {}
        for h in harnesses:
            ss = [s for s in samples[(h, kind)] if s["ok"]]
            f, w, c, r = (med([s["first_s"] * 1000 for s in ss]), med([s["wall_s"] * 1000 for s in ss]),
                          med([s["cpu_s"] * 1000 for s in ss]), med([s["peak_kib"] / 1024 for s in ss]))
            row[h] = (f, w, c, r)
            label = {"loopwright": "loopwright", "before": f"loopwright at {args.before}",
                     "floor": "floor (sdk_floor_cli.py)"}.get(h, "Claude Code")
            lines.append(f"| {name} | {label} | {len(ss)}/{args.runs} | {f:.0f} | {w:.0f} | {c:.0f} | {r:.1f} |")
        if "claude" in row:
            (lf, lw, lc, lr), (cf, cw, cc_, cr) = row["loopwright"], row["claude"]
            ratios.append(f"{name}: start {lf / cf:.2f}×, wall {lw / cw:.2f}×, CLI CPU {lc / cc_:.2f}×, "
                          f"peak RSS {lr / cr:.2f}× Claude Code's")
        if "floor" in row:
            ratios.append(f"{name}: loopwright − floor: start {row['loopwright'][0] - row['floor'][0]:.0f} ms, "
                          f"CLI CPU {row['loopwright'][2] - row['floor'][2]:.0f} ms")
        if "before" in row:
            (lf, lw, lc, _), (bf, bw, bc, _) = row["loopwright"], row["before"]
            ratios.append(f"{name}: this tree ÷ {args.before}: start {lf / bf:.2f}×, wall {lw / bw:.2f}×, "
                          f"CLI CPU {lc / bc:.2f}×")
    lines += ["", "Ratios (goal: start ≤ 0.3× Claude Code's, peak RSS ≤ 0.25×): " + "; ".join(ratios) + "."]
    text = "\n".join(lines) + "\n"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "sdk.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
