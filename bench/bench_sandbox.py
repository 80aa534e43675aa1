"""The OS sandbox: start-up cost per command, the worker-thread cost of sync tools, and the
escape corpus of tests/sandbox/test_sandbox.py run against loopwright's and Claude Code's sandboxes.

    .venv/bin/python bench/bench_sandbox.py [--quick] [--no-claude]

1. Start-up: the Bash tool running `true`, plain vs in the sandbox (no network) vs in the
   sandbox with allowedDomains (the proxy bridge) or allowLocalBinding (the bridge to the
   host's loopback servers), interleaved, median of N.
2. Sync handlers: Tool.call of a trivial sync handler inline vs in the worker thread, the
   hand-off alone, and a bare run_in_executor for reference (bench_thread_handoff.py compares
   more mechanisms).
3. The corpus (each attempt checked on the file system, loopback TCP/UDP/unix-socket servers
   that count hits, and the process table), side by side:
   - loopwright: `bypassPermissions` + `sandbox` (only the sandbox stands in the way);
   - Claude Code (tests/node/node_modules/.bin/claude): offline against loopwright.testing's
     loopback Messages-API server with a scripted model that emits each Bash command;
     as root it refuses bypassPermissions, so `--permission-mode acceptEdits` with
     `sandbox.enabled` + `autoAllowBashIfSandboxed` in a --settings file. Needs bubblewrap
     and socat (Claude Code refuses to start its sandbox without socat).
Writes bench/results/sandbox.md.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright import sandbox as sbx
from loopwright.testing import ScriptedServer
from loopwright.threads import INLINE_WAIT_S, run_in_worker
from loopwright.tools.base import ToolContext
from loopwright.tools.bash import bash

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CLAUDE = ROOT / "tests" / "node" / "node_modules" / ".bin" / "claude"


def load_corpus_module() -> Any:
    """The corpus and its checks live in the tests (one copy); they import the tests' helpers."""
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location("test_sandbox", ROOT / "tests" / "test_sandbox.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- 1. start-up cost -------------------------------------------------------------------------

def startup(n: int, work: Path) -> list[tuple[str, float, float]]:
    from loopwright.settings import build_run_config

    def ctx_for(sandbox: Any) -> ToolContext:
        cfg = build_run_config(lw.AgentOptions(cwd=str(work), sandbox=sandbox), work)
        return ToolContext(work, sandbox=cfg.sandbox)

    kinds = {"plain Bash": ctx_for(None), "sandboxed Bash": ctx_for(True),
             "sandboxed Bash + allowedDomains (proxy bridge)": ctx_for({"network": {"allowedDomains": ["pypi.org"]}}),
             "sandboxed Bash + allowLocalBinding (bridge to the host's loopback servers)":
                 ctx_for({"network": {"allowLocalBinding": True}})}
    times: dict[str, list[float]] = {k: [] for k in kinds}

    async def go() -> None:
        for _ in range(3):  # warm-up
            for c in kinds.values():
                await bash({"command": "true"}, c)
        for _ in range(n):
            for k, c in kinds.items():
                t0 = time.perf_counter()
                out = await bash({"command": "true"}, c)
                times[k].append(time.perf_counter() - t0)
                assert not getattr(out, "is_error", False), out

    asyncio.run(go())
    base = statistics.median(times["plain Bash"])
    return [(k, statistics.median(v) * 1000, (statistics.median(v) - base) * 1000) for k, v in times.items()]


# --- 2. sync handlers in a worker thread ---------------------------------------------------------

def thread_cost(n: int) -> tuple[float, float, float, float]:
    tool = lw.Tool("t", "t", {"type": "object", "properties": {}}, lambda x: "ok")
    ctx = ToolContext(Path("."))

    async def go(in_thread: bool) -> float:
        for _ in range(200):
            await tool.call({}, ctx, in_thread=in_thread, wait=INLINE_WAIT_S)
        t0 = time.perf_counter()
        for _ in range(n):
            await tool.call({}, ctx, in_thread=in_thread, wait=INLINE_WAIT_S)
        return (time.perf_counter() - t0) / n * 1e6

    async def handoff() -> float:  # the bare thread round trip, for reference
        loop = asyncio.get_running_loop()
        pool = ThreadPoolExecutor(1)
        for _ in range(200):
            await loop.run_in_executor(pool, int)
        t0 = time.perf_counter()
        for _ in range(n):
            await loop.run_in_executor(pool, int)
        pool.shutdown()
        return (time.perf_counter() - t0) / n * 1e6

    async def worker() -> float:  # the hand-off Tool.call uses, without the tool
        for _ in range(200):
            await run_in_worker(int, wait=INLINE_WAIT_S)
        t0 = time.perf_counter()
        for _ in range(n):
            await run_in_worker(int, wait=INLINE_WAIT_S)
        return (time.perf_counter() - t0) / n * 1e6

    inline, threaded, bare, own = [], [], [], []
    for _ in range(5):
        inline.append(asyncio.run(go(False)))
        threaded.append(asyncio.run(go(True)))
        bare.append(asyncio.run(handoff()))
        own.append(asyncio.run(worker()))
    return (statistics.median(inline), statistics.median(threaded), statistics.median(bare),
            statistics.median(own))


# --- 3. the corpus, side by side ------------------------------------------------------------------

def corpus_loopwright(t: Any, tmp: Path) -> dict[str, Any]:
    tmp.mkdir(parents=True)
    os.environ.update({"ANTHROPIC_API_KEY": t.API_KEY, "GITHUB_TOKEN": t.TOKEN})  # as the test sets them
    with t.make_world(tmp) as w:
        attempts = t.corpus(w)
        before = t.snapshot(w)
        t0 = time.perf_counter()
        res = t.run_script([t.use(i, c) for i, c in attempts], w["proj"], permission_mode="bypassPermissions",
                           disallowed_tools=[f"Read(/{w['outside']}/rule_secret/**)"], sandbox=t.corpus_sandbox(w))
        wall = time.perf_counter() - t0
        time.sleep(0.3)
        out = t.results(res)
        esc = t.find_escapes(w, before, out)
        ran = sum(1 for i, _ in attempts if i in out)
        return {"attempts": len(attempts), "ran": ran - len(res.permission_denials),
                "refused": len(res.permission_denials), "escapes": esc, "wall": wall, "out": out}


def corpus_claude(t: Any, tmp: Path) -> dict[str, Any]:
    tmp.mkdir(parents=True)
    with t.make_world(tmp) as w:
        attempts = t.corpus(w)
        ids = {f"toolu_{k:03d}": i for k, (i, _) in enumerate(attempts)}
        turns: list[Any] = [[{"type": "tool_use", "id": uid, "name": "Bash",
                              "input": {"command": c, "description": "corpus attempt"}}]
                            for uid, (_, c) in zip(ids, attempts, strict=True)]
        turns.append([{"type": "text", "text": "done"}])
        sb = t.corpus_sandbox(w)
        sb.pop("env")  # no such setting in Claude Code
        settings = {"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": True, "allowUnsandboxedCommands": False,
                                "failIfUnavailable": True, **sb},
                    "permissions": {"deny": [f"Read(/{w['outside']}/rule_secret/**)"]}}
        home = tmp / "cc-home"
        home.mkdir(exist_ok=True)
        before = t.snapshot(w)
        with ScriptedServer(turns, strict=False) as srv:
            env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": t.API_KEY,
                   "GITHUB_TOKEN": t.TOKEN, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
            t0 = time.perf_counter()
            p = subprocess.run([str(CLAUDE), "-p", "go", "--output-format", "json", "--model", "claude-sonnet-4-5",
                                "--permission-mode", "acceptEdits", "--settings", json.dumps(settings)],
                               cwd=w["proj"], env=env, capture_output=True, text=True, timeout=1800)
            wall = time.perf_counter() - t0
            hist = srv.histories()
        time.sleep(0.3)
        if p.returncode != 0 and not hist:
            return {"error": (p.stderr or p.stdout).strip()[-500:]}
        out: dict[str, tuple[str, bool]] = {}
        for m in hist[-1] if hist else []:
            if m["role"] == "user" and isinstance(m["content"], list):
                for b in m["content"]:
                    if b.get("type") == "tool_result" and b["tool_use_id"] in ids:
                        c = b["content"]
                        out[ids[b["tool_use_id"]]] = (c if isinstance(c, str) else json.dumps(c), bool(b.get("is_error")))
        try:
            denials = json.loads(p.stdout).get("permission_denials", [])
        except json.JSONDecodeError:
            denials = []
        esc = t.find_escapes(w, before, out)
        refused = sorted(ids.get(d.get("tool_use_id", ""), "?") for d in denials)
        return {"attempts": len(attempts), "ran": len(out) - len(denials), "refused": len(denials),
                "refused_ids": refused, "escapes": esc, "wall": wall, "out": out, "version": _claude_version()}


def _claude_version() -> str:
    try:
        return subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-claude", action="store_true")
    args = ap.parse_args()
    why = sbx.unavailable_reason()
    if why is not None:
        sys.exit(f"the sandbox cannot run here: {why}")
    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"bubblewrap {subprocess.run(['bwrap', '--version'], capture_output=True, text=True).stdout.split()[-1]}, "
             f"{'root' if os.geteuid() == 0 else 'non-root'}, load average at start "
             f"{os.getloadavg()[0]:.1f}", ""]
    with tempfile.TemporaryDirectory() as d:
        work = Path(d) / "work"
        work.mkdir()
        n = 15 if args.quick else 60
        lines += ["**Start-up per Bash command** (`true`, median of "
                  f"{n}, interleaved; target: < 10 ms over plain Bash)", "",
                  "| command | median ms | over plain Bash ms |", "|---|---:|---:|"]
        for k, ms, delta in startup(n, work):
            lines.append(f"| {k} | {ms:.1f} | {delta:+.1f} |")
        inline, threaded, bare, own = thread_cost(2000 if args.quick else 10000)
        lines += ["", "**Sync tool handler in a worker thread** (Tool.call of a trivial handler; target: < 50 µs)", "",
                  "| call | µs/call |", "|---|---:|",
                  f"| inline (on the event loop) | {inline:.1f} |", f"| in the worker thread | {threaded:.1f} |",
                  f"| cost of the thread | {threaded - inline:+.1f} |",
                  f"| the hand-off alone (run_in_worker: an idle thread, a lone call's wait on a lock) | {own:.1f} |",
                  f"| reference: a bare run_in_executor round trip (what Tool.call used before) | {bare:.1f} |"]
        t = load_corpus_module()
        rows = [("loopwright (bypassPermissions + sandbox)", corpus_loopwright(t, Path(d) / "lw"))]
        if not args.no_claude:
            if not CLAUDE.exists():
                rows.append(("Claude Code", {"error": f"not installed at {CLAUDE}"}))
            else:
                rows.append(("Claude Code (acceptEdits + sandbox, autoAllowBashIfSandboxed)",
                             corpus_claude(t, Path(d) / "cc")))
    lines += ["", "**Escape corpus** (tests/sandbox/test_sandbox.py: each attempt checked on the file system, loopback "
              "servers that count hits, the process table)", "",
              "| harness | attempts | ran in the sandbox | refused before running | escapes | wall s |",
              "|---|---:|---:|---:|---|---:|"]
    for name, r in rows:
        if "error" in r:
            lines.append(f"| {name} | — | — | — | could not run: {r['error']} | — |")
            continue
        esc = ", ".join(sorted(r["escapes"])) or "0"
        if r["escapes"]:
            esc = f"{len(r['escapes'])}: {esc}"
        label = f"{name} {r.get('version', '')}".strip()
        lines.append(f"| {label} | {r['attempts']} | {r['ran']} | {r['refused']} | {esc} | {r['wall']:.1f} |")
    for name, r in rows:
        if r.get("refused_ids"):
            lines += ["", f"{name}: refused by its permission check before running: "
                          + ", ".join(f"`{i}`" for i in r["refused_ids"])]
        if r.get("escapes"):
            lines += ["", f"{name}, what got through:", ""]
            lines += [f"- `{k}`: {str(v)[:300]!r}" for k, v in r["escapes"].items()]
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "sandbox.md").write_text(text)


if __name__ == "__main__":
    main()
