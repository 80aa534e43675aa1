"""loopwright vs Claude Code on the same scripted task: fix a failing test.

    (cd tests/node && npm install)          # once: Claude Code, pinned in tests/node/package.json
    .venv/bin/python bench/bench_vs_claude_code.py [--runs N]

(`bench/report.py` runs this task and a 50-tool-call loop side by side with the other peers.)

Both harnesses run headless (`-p`, `--output-format json`), offline, against the same
loopback Messages-API server (loopwright.testing.ScriptedServer) serving the same four
model turns of seed Example 4.3 (Bash runs the tests -> two Reads -> Edit + Bash ->
final text), with the same tool names and inputs Claude Code's model uses. Each run
starts from a fresh git repo holding the bundled demo project with one failing test,
and counts only if the harness reports success AND the tests pass afterwards.

Measured per run: wall time of the whole process; peak memory as ru_maxrss from
wait4() on the harness process (the largest resident set of the process or any
descendant it waited for) and, with psutil, the sampled peak of the whole process
tree's summed RSS (measure.py). Claude Code runs as root here, where it refuses
bypassPermissions, so both use `--permission-mode acceptEdits --allowedTools "Bash Read Edit"`.
Writes bench/results/vs_claude_code.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from measure import serve_and_run

from loopwright.cli.demo import PROJECT
from loopwright.invariant import holds

HERE = Path(__file__).resolve().parent
CLAUDE = HERE.parent / "tests" / "node" / "node_modules" / ".bin" / "claude"
LOOPWRIGHT = Path(sys.executable).parent / "loopwright"
MODEL = "claude-sonnet-4-5"
PROMPT = "Fix the failing test."
FINAL = "The cause was the boundary check; all tests pass now."
PERMS = ["--permission-mode", "acceptEdits", "--allowedTools", "Bash Read Edit"]


def use(uid: str, name: str, x: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": name, "input": x}


def script(repo: Path) -> list[Any]:
    cmd = f"{sys.executable} run_tests.py"
    return [
        [{"type": "text", "text": "I'll run the tests first."},
         use("toolu_01A", "Bash", {"command": cmd, "description": "Run the test suite"})],
        [use("toolu_02A", "Read", {"file_path": str(repo / "grades.py")}),
         use("toolu_02B", "Read", {"file_path": str(repo / "test_grades.py")})],
        [use("toolu_03A", "Edit", {"file_path": str(repo / "grades.py"), "old_string": "    if score > 90:",
                                   "new_string": "    if score >= 90:"}),
         use("toolu_03B", "Bash", {"command": cmd, "description": "Run the tests again"})],
        [{"type": "text", "text": FINAL}],
    ]


def fresh_repo(repo: Path) -> None:
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(PROJECT, repo, ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "failing test"]):
        subprocess.run([*git, *args], cwd=repo, check=True)


def suite_passes(repo: Path) -> bool:
    return subprocess.run([sys.executable, "run_tests.py"], cwd=repo, capture_output=True, timeout=60).returncode == 0


def loop_script(n: int) -> Callable[[Path], list[Any]]:
    """`n` turns that each Read the same small file, then the final text: the per-turn cost."""
    def turns(repo: Path) -> list[Any]:
        return [*([use(f"toolu_{k:03d}", "Read", {"file_path": str(repo / "grades.py")})] for k in range(1, n + 1)),
                [{"type": "text", "text": FINAL}]]
    return turns


@dataclass(frozen=True)
class Task:
    name: str
    turns: Callable[[Path], list[Any]]  # the model's turns, given the repo the run works in
    check_tests: bool  # the demo project's tests must pass after the run


FIX = Task("fix-the-test", script, True)


def loop_task(n: int) -> Task:
    return Task(f"{n}-tool-call loop", loop_script(n), False)


@dataclass
class Sample:
    ok: bool
    wall_s: float
    maxrss_kib: int
    why: str = ""
    loop_calls: int = 0
    inv_ok: bool = True  # every history met seed Inv, including (P2)'s result order
    first_request_s: float = 0.0  # process start -> first model request at the server (start-up cost)
    tree_peak_kib: int | None = None  # sampled peak of the whole process tree's summed RSS
    per_turn_s: float = float("nan")  # mean harness time between model calls (measure.Served.gaps)
    side: list[str] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)


def run_one(harness: str, repo: Path, home: Path, task: Task = FIX) -> Sample:
    fresh_repo(repo)
    turns = task.turns(repo)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "LOOPWRIGHT_"))}
    env.update(HOME=str(home), ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(home / "lw"),
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1",
               DISABLE_ERROR_REPORTING="1")
    head = ["-p", PROMPT, "--output-format", "json"]

    def cmd(url: str) -> list[str]:
        env["ANTHROPIC_BASE_URL"] = url
        if harness == "claude":
            return [str(CLAUDE), *head, "--model", MODEL, *PERMS]
        if harness == "loopwright-scripted":  # reference: same turns in-process, no SDK, no HTTP
            path = repo.parent / "turns.json"
            path.write_text(json.dumps(turns))
            return [str(LOOPWRIGHT), *head, "--model", f"scripted:{path}", *PERMS]
        return [str(LOOPWRIGHT), *head, "--model", MODEL, "--base-url", url, *PERMS]

    proc, served = serve_and_run(turns, cmd, cwd=repo, env=env, sample_tree=True, model=MODEL)
    loop = served.loop
    side = [f"{r.method} {r.path.split('?')[0]}" + (f" (max_tokens={r.body.get('max_tokens')}, "
            f"{len(r.body.get('tools') or [])} tools)" if isinstance(r.body, dict) else "") for r in served.side]
    gaps = served.gaps()
    s = Sample(False, proc.wall_s, proc.maxrss_kib, loop_calls=len(loop), side=side,
               inv_ok=all(holds(r.body["messages"]) for r in loop), first_request_s=served.first_request_s,
               tree_peak_kib=proc.tree_peak_kib, per_turn_s=statistics.fmean(gaps) if gaps else float("nan"))
    try:
        s.result = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        s.why = f"no JSON result (exit {proc.returncode})"
        return s
    if proc.returncode != 0 or s.result.get("subtype") != "success":
        s.why = f"exit {proc.returncode}, subtype {s.result.get('subtype')}"
    elif s.result.get("result") != FINAL:
        s.why = "unexpected final text"
    elif task.check_tests and not suite_passes(repo):
        s.why = "the tests still fail after the run"
    elif len(loop) != (0 if harness == "loopwright-scripted" else len(turns)):
        s.why = f"{len(loop)} loop calls at the server"
    else:
        s.ok = True
    return s


def import_ms(module: str) -> float:
    """Median wall ms of `python -c "import module"` (NaN when it is not installed)."""
    samples = []
    for _ in range(3):
        t0 = time.perf_counter()
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode:
            return float("nan")
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def claude_version() -> str | None:
    if not CLAUDE.exists():
        return None
    try:
        p = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        return f"cannot run: {e}"
    return p.stdout.strip() or f"exit {p.returncode}: {p.stderr.strip()[:200]}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    from loopwright import __version__

    version = claude_version()
    sdk_ms = import_ms("anthropic")
    bare_ms = import_ms("loopwright")
    work = Path(tempfile.mkdtemp(prefix="lw-vs-cc-"))
    repo, home = work / "repo", work / "home"
    home.mkdir()
    harnesses = [("loopwright", f"loopwright {__version__} (Python {platform.python_version()})")]
    if version and "(Claude Code)" in version:
        harnesses.append(("claude", f"Claude Code {version.split()[0]} (native binary from npm)"))
    harnesses.append(("loopwright-scripted", "reference: loopwright with the same turns as `--model scripted:` "
                      "(in-process, no SDK, no HTTP)"))
    results: dict[str, list[Sample]] = {name: [] for name, _ in harnesses}
    for name, _ in harnesses:
        run_one(name, repo, home)  # warm-up: page cache, .pyc files, Claude Code's first-run config
    for i in range(1, args.runs + 1):  # interleaved, so a busy moment of the machine hits both alike
        for name, _ in harnesses:
            s = run_one(name, repo, home)
            results[name].append(s)
            print(f"{name} run {i}: {'ok' if s.ok else 'FAILED: ' + s.why}  {s.wall_s * 1000:.0f} ms  "
                  f"{s.maxrss_kib / 1024:.1f} MiB", file=sys.stderr)
    lines = ["| harness | runs ok | median wall ms | min wall ms | median start → 1st model request ms | "
             "median peak RSS MiB | model calls | "
             "other requests to the server | runs with Inv (P2 order) on every request | reported num_turns | reported cost USD |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for name, label in harnesses:
        ss = results[name]
        ok = [s for s in ss if s.ok] or ss
        side = Counter(x for s in ok for x in s.side)
        side_txt = ", ".join(f"{k} ×{v / len(ok):g}" for k, v in side.items()) or "none"
        served = name != "loopwright-scripted"  # the reference row has no server in between
        first = f"{statistics.median(s.first_request_s for s in ok) * 1000:.0f}" if served else "—"
        calls = f"{statistics.median(s.loop_calls for s in ok):g}" if served else str(ok[0].result.get("model_calls"))
        inv = f"{sum(s.inv_ok for s in ss)}/{len(ss)}" if served else "(checked in-process)"
        lines.append(f"| {label} | {sum(s.ok for s in ss)}/{len(ss)} | {statistics.median(s.wall_s for s in ok) * 1000:.0f} | "
                     f"{min(s.wall_s for s in ok) * 1000:.0f} | {first} | "
                     f"{statistics.median(s.maxrss_kib for s in ok) / 1024:.1f} | "
                     f"{calls} | {side_txt if served else '—'} | {inv} | "
                     f"{ok[0].result.get('num_turns')} | {ok[0].result.get('total_cost_usd', 0):.4f} |")
    table = "\n".join(lines)
    print(table)
    notes = [
        "# loopwright vs Claude Code: the same scripted fix-the-test task",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}; "
        f"{args.runs} measured runs per harness after one warm-up run, the two harnesses interleaved; medians; "
        f"load average at the end {os.getloadavg()[0]:.1f}.",
        "",
        "Task: seed Example 4.3 served by `loopwright.testing.ScriptedServer` on 127.0.0.1 (offline): "
        "Bash runs the tests (1 failing) -> Read grades.py + Read test_grades.py -> Edit (the boundary "
        "`score > 90` -> `score >= 90`) + Bash (5 passed) -> final text. A run counts as ok only if the "
        "harness reports success, the final text is right, the tests pass afterwards (re-run by the bench), "
        "the server saw exactly 4 model calls. The server runs with strict=False, like the real API, which "
        "accepts a turn's tool_results in any order; the column 'Inv (P2 order)' counts runs in which every "
        "request also met the seed's stricter (P2): results in the order of the tool_use blocks.",
        "",
        "Both: `-p`, `--output-format json`, `--model claude-sonnet-4-5`, "
        "`--permission-mode acceptEdits --allowedTools \"Bash Read Edit\"` (Claude Code refuses "
        "bypassPermissions as root); Claude Code with ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY=test, "
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 and a bench-local HOME.",
        "",
        "Wall = the whole process, start to exit. Peak RSS = ru_maxrss of wait4() on the harness process: "
        "the largest resident set of that process or of any descendant it waited for (not a sum over the tree).",
        "",
        table,
        "",
        "Notes:",
        "- Claude Code's `num_turns` counts differently (it is not the seed's tool-use turns); loopwright "
        "reports 3 tool-use turns and 4 model calls (`model_calls`).",
        "- Reported costs differ because the two harnesses send different system prompts and tool definitions "
        "(Claude Code sends many more tools) and the server prices the prompt-cache traffic it simulates.",
        f"- loopwright's start-up is dominated by importing the anthropic Python SDK: `python -c 'import anthropic'` "
        f"takes {sdk_ms:.0f} ms (median of 3) here, against {bare_ms:.0f} ms for `python -c 'import loopwright'`. "
        "The reference row runs the same turns, tools, gate and checks with the in-process scripted model, "
        "so the difference between it and the first row is the provider path (SDK import, HTTP, SSE parsing).",
    ]
    if "claude" in results:
        bad = sum(not s.inv_ok for s in results["claude"])
        notes.append(f"- Claude Code sent the two concurrent Reads' tool_results in completion order, not in the order "
                     f"of the tool_use blocks, in {bad} of {len(results['claude'])} runs. The real API accepts that; "
                     "the seed's (P2) does not, and the project's server in its default strict mode answers it with "
                     "HTTP 400 (which is how this was found). loopwright always places results in emission order.")
    if len(harnesses) == 1:
        notes.append(f"- Claude Code did not run: {version or 'not installed (npm install --prefix bench/.node @anthropic-ai/claude-code)'}.")
    out = HERE / "results" / "vs_claude_code.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(notes) + "\n")
    print(f"\nwritten: {out}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(s.ok for ss in results.values() for s in ss) else 1


if __name__ == "__main__":
    sys.exit(main())
