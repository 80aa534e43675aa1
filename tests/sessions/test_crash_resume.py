"""Crash safety: SIGKILL a `loopwright -p` run at many points, then `--resume` it.

The run is a scripted multi-turn agent whose every turn runs one Bash command that logs
`start i`, sleeps, then logs `done i`. Each scenario kills the whole process tree (the CLI
and the Bash children it started in their own process groups, as a power cut would) at
one point: during a model call (scripted "delay"), during a tool (the Bash `sleep`), or
right between the two. Then it resumes with a script for the steps still missing and checks:
the loaded history satisfies Inv, no tool call that completed runs again (each `done i`
exactly once), and the resumed run ends with success (exit 0). One more scenario crashes the
resumed run as well and resumes a second time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from loopwright.invariant import holds_final
from loopwright.sessions import cwd_slug, load_transcript
from tests.helpers import cli_env, loopwright_cmd

pytestmark = pytest.mark.e2e  # every test here runs programs as subprocesses

pytest.importorskip("loopwright.tools.builtin", reason="the -p CLI needs the built-in tools")

N = 3  # tool-use steps in the run
MODEL_DELAY = 0.4
TOOL_SLEEP = 0.6
DEADLINE = 30.0


def step(i: int, log: Path, suffix: str = "") -> dict[str, Any]:
    cmd = f"echo start {i} >> {log}; sleep {TOOL_SLEEP}; echo done {i} >> {log}"
    return {"content": [{"type": "text", "text": f"step {i}"},
                        {"type": "tool_use", "id": f"s{i}{suffix}", "name": "Bash", "input": {"command": cmd}}],
            "delay": MODEL_DELAY}


FINAL = {"content": [{"type": "text", "text": "all steps done"}], "delay": MODEL_DELAY}


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def crash(proc: subprocess.Popen[str]) -> None:
    """Stop the whole tree first (nothing moves on), then SIGKILL it: a crash of everything."""
    os.kill(proc.pid, signal.SIGSTOP)
    tree = descendants(proc.pid)
    for p in tree:
        try:
            os.kill(p, signal.SIGSTOP)
        except ProcessLookupError:
            pass
    for p in [proc.pid, *tree]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=10)


def transcript_text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def has_result(path: Path, tool_id: str) -> bool:
    return f'"tool_use_id":"{tool_id}"' in transcript_text(path)


def wait_for(cond: Any, what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def log_lines(log: Path) -> list[str]:
    try:
        return log.read_text().split("\n")
    except FileNotFoundError:
        return []


def remaining_steps(path: Path) -> list[int]:
    """The steps without a real (non-error) result in the transcript: what is left to do."""
    loaded = load_transcript(path)
    done = {b["tool_use_id"].rstrip("r") for m in loaded.history if m["role"] == "user" for b in m["content"]
            if b.get("type") == "tool_result" and not b.get("is_error")}
    return [i for i in range(1, N + 1) if f"s{i}" not in done]


def scenario(root: Path, kind: str, k: int, then_tool: int | None = None) -> str | None:
    """Run, crash at (kind, k), resume (crashing the resumed run too, during its step
    `then_tool`, when given, and resuming again). Returns None, or what went wrong."""
    home, work = root / "home", root / "work"
    work.mkdir(parents=True)
    log = root / "tools.log"
    sid = str(uuid.uuid4())
    path = home / "projects" / cwd_slug(work) / f"{sid}.jsonl"
    script = root / "script.json"
    script.write_text(json.dumps([step(i, log) for i in range(1, N + 1)] + [FINAL]))
    base = [*loopwright_cmd(), "--output-format", "json", "--permission-mode", "bypassPermissions"]
    proc = subprocess.Popen([*base, "-p", "do the steps", "--model", f"scripted:{script}", "--session-id", sid],
                            cwd=work, env=cli_env(LOOPWRIGHT_HOME=str(home)), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        if kind == "model":  # during model call k (k=1: the first; else after step k-1's result)
            if k == 1:
                wait_for(lambda: '"isPrompt":true' in transcript_text(path), "the prompt line")
            else:
                wait_for(lambda: has_result(path, f"s{k - 1}"), f"result of step {k - 1}")
            time.sleep(0.05)  # inside the call: it lasts MODEL_DELAY
        elif kind == "tool":  # while step k's Bash sleeps
            wait_for(lambda: f"start {k}" in log_lines(log), f"start {k}")
            time.sleep(0.05)  # inside the sleep: it lasts TOOL_SLEEP
        else:  # "between": the instant step k's result is on disk, before the next model call ends
            wait_for(lambda: has_result(path, f"s{k}"), f"result of step {k}")
        if proc.poll() is not None:
            return f"{kind}-{k}: the run ended before the crash: {proc.communicate()}"
        crash(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # What survived the crash: the steps with a real (non-error) result are done.
    loaded = load_transcript(path)
    if not holds_final(loaded.history):
        return f"{kind}-{k}: loaded history breaks Inv: {loaded.history}"
    suffix = "r"
    if then_tool is not None:  # crash the resumed run as well, while its step `then_tool` runs
        again = root / "resume0.json"
        again.write_text(json.dumps([step(i, log, "r") for i in remaining_steps(path)] + [FINAL]))
        starts = log_lines(log).count(f"start {then_tool}")
        proc = subprocess.Popen([*base, "-p", "continue", "--resume", sid, "--model", f"scripted:{again}"],
                                cwd=work, env=cli_env(LOOPWRIGHT_HOME=str(home)), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: log_lines(log).count(f"start {then_tool}") > starts, f"start {then_tool} (resumed)")
            time.sleep(0.05)
            crash(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if not holds_final(load_transcript(path).history):
            return f"{kind}-{k}+{then_tool}: history breaks Inv after the second crash"
        suffix = "rr"
    resume_script = root / "resume.json"
    resume_script.write_text(json.dumps([step(i, log, suffix) for i in remaining_steps(path)] + [FINAL]))
    res = subprocess.run([*base, "-p", "continue", "--resume", sid, "--model", f"scripted:{resume_script}"],
                         cwd=work, env=cli_env(LOOPWRIGHT_HOME=str(home)), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=60)
    if res.returncode != 0:
        return f"{kind}-{k}: resume exited {res.returncode}: {res.stdout} {res.stderr}"
    out = json.loads(res.stdout)
    if out["subtype"] != "success" or out["session_id"] != sid:
        return f"{kind}-{k}: resume result {out}"
    lines = log_lines(log)
    counts = {i: lines.count(f"done {i}") for i in range(1, N + 1)}
    if any(c != 1 for c in counts.values()):
        return f"{kind}-{k}: tool completions {counts} (each step must complete exactly once); log={lines}"
    final = load_transcript(path).history
    if not holds_final(final):
        return f"{kind}-{k}: final history breaks Inv"
    if final[-1]["content"] != [{"type": "text", "text": "all steps done"}]:
        return f"{kind}-{k}: final message {final[-1]}"
    results = [b for m in final if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    ok = [r["tool_use_id"].rstrip("r") for r in results if not r.get("is_error")]
    if ok != [f"s{i}" for i in range(1, N + 1)]:
        return f"{kind}-{k}: successful tool results {ok}"
    if kind == "tool":  # the call killed mid-run is shown to the model as interrupted, then redone
        killed = [r for r in results if r["tool_use_id"] == f"s{k}"]
        if not (len(killed) == 1 and killed[0].get("is_error") and "Interrupted" in str(killed[0]["content"])):
            return f"{kind}-{k}: the killed call's result is {killed}"
    return None


SCENARIOS = [("model", k) for k in range(1, N + 2)] + [("tool", k) for k in range(1, N + 1)] + \
            [("between", k) for k in range(1, N + 1)]


def test_sigkill_at_every_stage_then_resume(tmp_path: Path) -> None:
    # Scenarios are independent (own dirs, own sessions): run them side by side.
    with ThreadPoolExecutor(max_workers=len(SCENARIOS) + 1) as pool:
        futures = [pool.submit(scenario, tmp_path / f"{kind}-{k}", kind, k) for kind, k in SCENARIOS]
        # and a crash of the resumed run itself: killed in step 1, resumed, killed in step 2, resumed
        futures.append(pool.submit(scenario, tmp_path / "twice", "tool", 1, 2))
        problems = [f.result() for f in futures]
    assert [p for p in problems if p] == []

