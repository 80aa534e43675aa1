"""A sync hook's command and the statusLine command are loopwright's children like a Bash command
or an MCP server (children.py): a SIGTERM or SIGHUP while one runs ends it with loopwright, and a
SIGKILLed loopwright's watchdog ends it too. Before, both ran in a session of their own that
nothing owned: a hook whose wait was not cancelled (the process exiting at the bound) and a
statusLine command running when the interactive mode ended were left running.

Real subprocesses and real signals: `loopwright -p` and the SDK protocol with a PreToolUse
command hook that never ends (it and its child write their pids), and the interactive mode in a
real terminal (a private tmux server) with a statusLine command that never ends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import (
    cli_env,
    loopwright_cmd,
    loopwright_pid,
    process_alive,
    still_alive,
    text,
    use,
)

pytestmark = pytest.mark.e2e

MODEL = "claude-sonnet-4-5"
EXIT_BOUND_S = 6.0  # as tests/cli/test_front_end_signals.py: the promise is ~2-3 s
GONE_BOUND_S = 30.0  # (a wait with a deadline: the margin costs a passing run nothing)

# A command that never ends by itself: it starts a child, writes both pids, waits.
SLOW = '#!/bin/sh\ncat > /dev/null\nsleep 300 &\necho "$$ $!" >> "{pids}"\nwait\n'


class Setup:
    def __init__(self, tmp: Path, settings: dict[str, object]) -> None:
        self.tmp, self.home, self.work = tmp, tmp / "home", tmp / "work"
        (self.work / ".loopwright").mkdir(parents=True)
        self.home.mkdir()
        self.pids = tmp / "child.pids"
        self.script = tmp / "slow.sh"
        self.script.write_text(SLOW.format(pids=self.pids))
        self.script.chmod(0o755)
        (self.work / ".loopwright" / "settings.json").write_text(
            json.dumps(settings).replace("SLOW", str(self.script)))

    def env(self) -> dict[str, str]:
        return cli_env(ANTHROPIC_API_KEY="test", HOME=str(self.home), LOOPWRIGHT_HOME=str(self.home / ".loopwright"),
                       LOOPWRIGHT_TRUSTED_DIRS=str(self.work))

    def running(self, timeout: float = 60) -> list[int]:
        """Wait until the slow command runs; its pid and its child's."""
        deadline = time.monotonic() + timeout
        while not (self.pids.exists() and self.pids.read_text().strip()):
            assert time.monotonic() < deadline, "the slow command never started"
            time.sleep(0.05)
        return [int(p) for p in self.pids.read_text().split()]

    def gone(self, pids: list[int]) -> None:
        left = still_alive(pids, GONE_BOUND_S)
        for p in left:
            os.kill(p, signal.SIGKILL)
        assert not left, "the command (or its child) outlived loopwright"


HOOK = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "SLOW",
                                                                "timeout": 300}]}]}}


def wait_exit(p: subprocess.Popen[bytes]) -> None:
    try:
        p.wait(timeout=EXIT_BOUND_S + 30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail("loopwright did not exit (killed)")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
@pytest.mark.parametrize("front", ["-p", "sdk"])
def test_a_signal_during_a_slow_sync_hook_ends_the_hook(tmp_path: Path, front: str, sig: int) -> None:
    s = Setup(tmp_path, HOOK)
    with ScriptedServer([[use("u1", "Bash", command="true")], [text("never reached")]], model=MODEL) as srv:
        args = [*loopwright_cmd(), "--model", MODEL, "--base-url", srv.url, "--allowedTools", "Bash"]
        if front == "-p":
            args += ["-p", "go"]
        else:
            args += ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        p = subprocess.Popen(args, cwd=s.work, env=s.env(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        assert p.stdin is not None
        if front == "sdk":
            p.stdin.write(json.dumps({"type": "user", "session_id": "", "parent_tool_use_id": None,
                                      "message": {"role": "user", "content": "go"}}).encode() + b"\n")
            p.stdin.flush()
        pids = s.running()
        p.send_signal(sig)
        wait_exit(p)
    if sig != signal.SIGKILL:
        assert p.returncode == 128 + sig
    s.gone(pids)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP"])
def test_a_signal_during_a_slow_status_line_command_ends_it(tmp_path: Path, how: str) -> None:
    s = Setup(tmp_path, {"statusLine": {"type": "command", "command": "SLOW"}})
    socket = f"lwc-{uuid.uuid4().hex[:8]}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=20).stdout

    with ScriptedServer([[text("unused")]], model=MODEL) as srv:
        env = " ".join(f"{k}='{v}'" for k, v in s.env().items())
        cmd = " ".join(f"'{a}'" for a in [*loopwright_cmd(), "--model", MODEL, "--base-url", srv.url,
                                           "--settings", str(s.work / ".loopwright" / "settings.json")])
        try:
            tmux("new-session", "-d", "-s", "main", "-x", "150", "-y", "40", "-c", str(s.work),
                 f"env -i {env} {cmd}; sleep 30")
            pids = s.running()
            lw = loopwright_pid(s.work / ".loopwright" / "settings.json")
            os.kill(lw, getattr(signal, how))
            deadline = time.monotonic() + EXIT_BOUND_S + 30
            while process_alive(lw) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not process_alive(lw), tmux("capture-pane", "-p", "-t", "main")
        finally:
            tmux("kill-server")
    s.gone(pids)



@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_during_a_slow_api_key_helper_ends_it_at_once(tmp_path: Path, sig: int) -> None:
    """Settings' apiKeyHelper runs while the event loop goes on (a worker thread) and is owned: a
    SIGTERM is answered within the bound, not after the helper (it held the loop: ~28 s for a 30 s
    helper), and the helper and its child end with loopwright, a SIGKILLed one's too (the watchdog)."""
    s = Setup(tmp_path, {"apiKeyHelper": "SLOW"})
    env = {k: v for k, v in s.env().items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    with ScriptedServer([[text("never reached")]], model=MODEL) as srv:
        p = subprocess.Popen([*loopwright_cmd(), "--model", MODEL, "--base-url", srv.url, "-p", "go"], cwd=s.work,
                             env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pids = s.running()
        t0 = time.monotonic()
        p.send_signal(sig)
        wait_exit(p)
        took = time.monotonic() - t0
    if sig != signal.SIGKILL:
        assert p.returncode == 128 + sig and took < EXIT_BOUND_S, (p.returncode, took)
    s.gone(pids)
