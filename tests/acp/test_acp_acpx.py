"""`loopwright acp` under a third-party ACP client nobody here wrote: the npm `acpx` headless
client (pinned in tests/node/package.json), on the loopback Messages server with scripted turns.
A prompt that edits a file; a cancelled one (no process left behind, the history paired, the
prompt ends `cancelled`, the next prompt in the same session works)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from loopwright.sessions import JsonlSessionStore
from loopwright.testing import ScriptedServer
from tests.helpers import (
    TESTS,
    bash,
    check_resumable,
    cli_env,
    loopwright_cmd,
    notes_project,
    still_alive,
    text,
    use,
)

pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")
ACPX = TESTS / "node" / "node_modules" / ".bin" / "acpx"
pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not ACPX.exists(), reason="acpx is not installed (cd tests/node && npm install)")]
MODEL = "claude-sonnet-4-6"


def acpx(srv: ScriptedServer, home: Path, work: Path, *args: str, **kw: Any) -> subprocess.Popen[str]:
    agent = " ".join([*loopwright_cmd(), "acp", "--model", MODEL, "--base-url", srv.url])
    env = cli_env(ANTHROPIC_API_KEY="test", HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright"))
    return subprocess.Popen([str(ACPX), "--agent", agent, "--cwd", str(work), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def finish(p: subprocess.Popen[str], timeout: float = 60) -> tuple[int, list[dict[str, Any]], str]:
    out, err = p.communicate(timeout=timeout)
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    return p.returncode, lines, err


def result_of(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The session/prompt response among the JSON-RPC lines acpx prints."""
    return [m for m in lines if "result" in m and "stopReason" in (m["result"] or {})][-1]["result"]


def agent_sid(lines: list[dict[str, Any]]) -> str:
    return next(m["params"]["sessionId"] for m in lines if m.get("method") == "session/prompt")


def agents_running(url: str) -> list[int]:
    """Processes whose command line names this test's server (the `loopwright acp` processes)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if url in cmd and " acp " in cmd and str(ACPX) not in cmd:
                out.append(int(d.name))
    return out


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return notes_project(tmp_path)


def test_acpx_prompt_edits_a_file(work: Path, tmp_path: Path) -> None:
    f = str(work / "notes.txt")
    turns = [[use("r1", "Read", file_path=f)],
             [use("e1", "Edit", file_path=f, old_string="beta", new_string="gamma")],
             [text("Changed beta to gamma.")]]
    with ScriptedServer(turns, model=MODEL) as srv:
        code, lines, err = finish(acpx(srv, tmp_path, work, "--approve-all", "--format", "json",
                                       "--model", "claude-opus-4-6", "exec", "change beta to gamma"))
        requests = srv.loop_requests
    assert code == 0, err
    assert result_of(lines)["stopReason"] == "end_turn"
    assert (work / "notes.txt").read_text() == "alpha\ngamma\n"
    methods = [m.get("method") for m in lines]
    # acpx offers fs: the edit went through the client, after the permission it granted
    assert methods.index("session/request_permission") < methods.index("fs/write_text_file")
    diff = next(c for m in lines if m.get("method") == "session/update"
                for c in m["params"]["update"].get("content") or [] if isinstance(c, dict) and c.get("type") == "diff")
    assert (diff["oldText"], diff["newText"]) == ("beta", "gamma")
    assert len(requests) == 3
    assert {r.body["model"] for r in requests} == {"claude-opus-4-6"}  # acpx's --model, a config option
    h = JsonlSessionStore(tmp_path / ".loopwright" / "projects").load(agent_sid(lines), work).history
    check_resumable(h)


def test_acpx_cancel_then_the_next_prompt(work: Path, tmp_path: Path) -> None:
    pid_file = work / "sleeper.pid"
    turns = [[bash(f"echo $$ > {pid_file}; exec sleep 60", "b1")], [text("next one is fine")]]
    with ScriptedServer(turns, model=MODEL) as srv:
        code, _, err = finish(acpx(srv, tmp_path, work, "sessions", "new"))
        assert code == 0, err
        running = acpx(srv, tmp_path, work, "--approve-all", "--format", "json", "prompt", "sleep a while")
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        code, _, err = finish(acpx(srv, tmp_path, work, "cancel"))
        assert code == 0, err
        code, lines, err = finish(running)
        assert code == 0, err
        assert result_of(lines)["stopReason"] == "cancelled"
        assert not still_alive([pid]), "the cancelled command is still running"
        code, again, err = finish(acpx(srv, tmp_path, work, "--approve-all", "--format", "json", "prompt", "next"))
        assert code == 0, err
        assert result_of(again)["stopReason"] == "end_turn"
        sid = agent_sid(lines)
        assert agent_sid(again) == sid  # the same ACP session went on
        sent = srv.loop_requests[-1].body["messages"]
        finish(acpx(srv, tmp_path, work, "sessions", "close"))
        deadline = time.monotonic() + 20
        while agents_running(srv.url) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert agents_running(srv.url) == []  # the agent process ended with its session
    assert sent[1]["content"][0]["id"] == "b1" and sent[2]["content"][0]["is_error"] is True
    h = JsonlSessionStore(tmp_path / ".loopwright" / "projects").load(sid, work).history
    check_resumable(h)

