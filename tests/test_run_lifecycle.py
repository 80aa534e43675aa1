"""What a run leaves behind: background shells end with their run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import loopwright as lw
from loopwright.tools.builtin import default_tools


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (no init reaping in containers) counts as dead
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_background_shell_is_killed_when_the_run_ends(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    turns = [
        [{"type": "tool_use", "id": "b1", "name": "Bash",
          "input": {"command": f"sleep 60 & echo $! > {pidfile}; wait", "run_in_background": True}}],
        [{"type": "tool_use", "id": "w1", "name": "Bash",
          "input": {"command": f"while [ ! -s {pidfile} ]; do sleep 0.02; done"}}],
        [{"type": "text", "text": "started"}],
    ]
    r = lw.run("start a server", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=tmp_path))
    assert r.subtype == "success"
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
