"""A command's double-forked daemon (`setsid sh -c 'sleep 1000 &'`: its parent gone at once, so
it is re-parented away and no longer a descendant of anything loopwright started) is ended with
the Bash call that started it (the CLI is a child subreaper: children.py), and with a SIGKILLed
loopwright (the watchdog finds it by its group's tag). Before, both lived on for good."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.bases.test_children_hostile import left_after, tagged
from tests.helpers import bash, cli_env, loopwright_cmd, result_text, text

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")]


@pytest.fixture
def env_and_tag(tmp_path: Path) -> tuple[dict[str, str], str]:
    (tmp_path / "home").mkdir()
    return cli_env(ANTHROPIC_API_KEY="x", HOME=str(tmp_path / "home")), f"lws{uuid.uuid4().hex[:8]}"


def daemon(tag: str, then: str = "") -> str:
    """A double-forked, setsid daemon named `tag` (bash's exec -a), the form that escaped."""
    return f"setsid bash -c '(exec -a {tag} sleep 1000) &'; {then}"


# A command's looks poll up to 30 s (600 x 50 ms), each then printing what it found: the daemon is
# started, signalled and reaped when the processes are scheduled, which on a loaded machine (CI: 2
# cores, 3 workers) takes longer than any fixed pause. `up`: until the daemon runs; `gone`: until it
# has ended and no zombie child of loopwright ($PPID) is left (a killed daemon is one until reaped).
def up(tag: str) -> str:
    return f"for i in $(seq 600); do pgrep -f '^{tag}' >/dev/null && break; sleep 0.05; done"


def gone(tag: str) -> str:
    return (f"for i in $(seq 600); do ! pgrep -f '^{tag}' >/dev/null && ! ps -o stat= --ppid $PPID | grep -q Z "
            "&& break; sleep 0.05; done")


def run_turns(turns: list[list[dict[str, object]]], tmp_path: Path, env: dict[str, str],
              tools: str = "Bash") -> list[str]:
    """`loopwright -p` through the scripted turns; the text of each tool result, in order."""
    with ScriptedServer(turns) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--base-url", srv.url,
                            "--allowedTools", tools], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return [result_text(b) for q in srv.loop_requests[1:] for b in q.body["messages"][-1]["content"]]


def test_a_bash_calls_double_forked_daemon_is_gone_after_the_call(tmp_path: Path,
                                                                   env_and_tag: tuple[dict[str, str], str]) -> None:
    env, tag = env_and_tag
    turns = [[bash(daemon(tag, f"{up(tag)}; pgrep -c -f '^{tag}'"), "t1")],
             [bash(f"{gone(tag)}; pgrep -f '^{tag}' || echo none left; ps -o stat= --ppid $PPID | grep -c Z || true",
                   "t2")],
             [text("done")]]
    try:
        results = run_turns(turns, tmp_path, env)
        assert results[0].strip() == "1"  # it was running during its call
        assert results[1].split() == ["none", "left", "0"]  # ended with the call, not the run; and reaped
        # ($PPID: loopwright, now the daemon's parent: no zombie of it is left)
    finally:
        assert left_after(tag) == []


def test_the_daemon_of_a_sigkilled_loopwrights_call_is_ended_by_the_watchdog(
        tmp_path: Path, env_and_tag: tuple[dict[str, str], str]) -> None:
    env, tag = env_and_tag
    go = tmp_path / "go"
    with ScriptedServer([[bash(daemon(tag, f"touch {go}; sleep 60"))], [text("done")]]) as srv:
        p = subprocess.Popen([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--base-url", srv.url,
                              "--allowedTools", "Bash"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not go.exists() or not tagged(tag):
                assert p.poll() is None and time.monotonic() < deadline, "the daemon never started"
                time.sleep(0.05)
            p.send_signal(signal.SIGKILL)
            p.wait(timeout=10)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert left_after(tag) == [], "a daemon outlived a SIGKILLed loopwright"


def test_a_background_shells_daemon_lives_while_the_shell_runs(tmp_path: Path,
                                                               env_and_tag: tuple[dict[str, str], str]) -> None:
    """run_in_background is managed, not killed early: its daemon is there after the call that
    started it, and is ended with the shell (KillShell here)."""
    env, tag = env_and_tag
    start = bash(daemon(tag, "sleep 1000"), "t1")
    start["input"]["run_in_background"] = True
    # (the daemon ends after KillShell's SIGTERM or its SIGKILL after a 1 s grace)
    turns = [[start], [bash(f"{up(tag)}; pgrep -c -f '^{tag}'", "t2")],
             [{"type": "tool_use", "id": "t3", "name": "KillShell", "input": {"shell_id": "bash_1"}}],
             [bash(f"{gone(tag)}; pgrep -f '^{tag}' || echo none left", "t4")], [text("done")]]
    try:
        results = run_turns(turns, tmp_path, env, "Bash,KillShell")
        assert results[1].strip() == "1", results
        assert results[3].strip() == "none left", results
    finally:
        assert left_after(tag) == []


def test_an_orphan_that_ended_during_its_call_is_reaped(tmp_path: Path,
                                                         env_and_tag: tuple[dict[str, str], str]) -> None:
    """`(sleep 0.1 &)`: the orphan comes to loopwright and ends on its own; loopwright reaps it
    (as init would), no zombie is left."""
    env, tag = env_and_tag
    # (t2 looks once they have ended and no zombie is left, up to 30 s: on a loaded machine the
    # orphans end, and are reaped, when they are scheduled)
    turns = [[bash(f"(exec -a {tag} sleep 0.1 &); (exec -a {tag} sleep 0.1 &); sleep 0.5", "t1")],
             [bash(f"{gone(tag)}; ps -o stat= --ppid $PPID | grep -c Z || true", "t2")],
             [text("done")]]
    results = run_turns(turns, tmp_path, env)
    assert results[1].strip() == "0", results
