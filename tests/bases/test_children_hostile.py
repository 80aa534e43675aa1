"""Commands that try to outlive loopwright (real `-p` runs, real signals): one ignores SIGTERM,
one leaves the command's process group with setsid, one stays; SIGTERM to loopwright, or the
Bash call's own timeout, ends all three. Before, the setsid one (a new session, so no longer
in the group loopwright kills) lived on after loopwright had exited."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import bash, cli_env, loopwright_cmd, text, until

pytestmark = pytest.mark.e2e


def tagged(tag: str) -> list[int]:
    """The live processes whose argv[0] starts with `tag` (each sleeper is named by `exec -a`)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argv0.startswith(tag) and state not in (b"Z", b"X"):
            out.append(int(pid))
    return out


def sleepers(tag: str, go: Path) -> str:
    return (f"trap '' TERM; (trap '' TERM; exec -a {tag}-deaf sleep 300) & "
            f"setsid bash -c 'exec -a {tag}-setsid sleep 301' & (exec -a {tag}-plain sleep 302) & "
            f"touch {go}; wait")


def left_after(tag: str, seconds: float = 30) -> list[int]:
    """The tagged processes still running once none is or `seconds` passed (a kill is sent, not
    waited for: a SIGKILL after a 1 s grace on a loaded machine), each then SIGKILLed."""
    until(lambda: not tagged(tag), seconds)
    left = tagged(tag)
    for pid in left:  # (by pid: nothing of another test's)
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.fixture
def env_and_tag(tmp_path: Path) -> tuple[dict[str, str], str]:
    (tmp_path / "home").mkdir()
    return cli_env(ANTHROPIC_API_KEY="x", HOME=str(tmp_path / "home")), f"lwt{uuid.uuid4().hex[:8]}"


def test_sigterm_ends_a_commands_setsid_and_deaf_children(tmp_path: Path,
                                                         env_and_tag: tuple[dict[str, str], str]) -> None:
    env, tag = env_and_tag
    go = tmp_path / "go"
    with ScriptedServer([[bash(sleepers(tag, go))], [text("done")]]) as srv:
        p = subprocess.Popen([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--base-url", srv.url,
                              "--allowedTools", "Bash"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while not go.exists():
                assert p.poll() is None and time.monotonic() < deadline, "the command never started its sleepers"
                time.sleep(0.05)
            while len(tagged(tag)) < 3:
                assert time.monotonic() < deadline, f"the sleepers did not start: {tagged(tag)}"
                time.sleep(0.05)
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=30) == 143
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert left_after(tag) == [], "a command's child outlived loopwright"


def test_a_timed_out_command_leaves_no_setsid_child(tmp_path: Path, env_and_tag: tuple[dict[str, str], str]) -> None:
    env, tag = env_and_tag
    call = bash(sleepers(tag, tmp_path / "go"))
    call["input"]["timeout"] = 3000
    with ScriptedServer([[call], [text("done")]]) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--base-url", srv.url,
                            "--allowedTools", "Bash"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        result = srv.loop_requests[-1].body["messages"][-1]["content"][0]["content"]
        assert "timed out" in result, result
    assert left_after(tag) == [], "a timed-out command's child outlived its call"


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux's (5.3+)")
def test_a_pid_reused_after_the_scan_is_never_signalled() -> None:
    """signal_group scans /proc, then signals the escaped children: a pid that ended between the
    two and went to another process (another parent) must not be signalled. _pinned holds each
    by a pidfd and checks its parent is still the one the scan saw."""
    from loopwright.children import _pinned

    p = subprocess.Popen(["sleep", "30"])
    try:
        reused = _pinned([p.pid], {p.pid: (os.getpid() + 1, 0, b"S")})  # the scan saw another parent
        assert reused == []
        (fd,) = _pinned([p.pid], {p.pid: (os.getpid(), 0, b"S")})  # the same process: held, then signalled
        signal.pidfd_send_signal(fd, signal.SIGTERM)
        os.close(fd)
        assert p.wait(timeout=10) == -signal.SIGTERM
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
