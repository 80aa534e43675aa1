"""A stdio MCP server is spawned before the MCP SDK is imported (mcp/spawn.py), so it boots while
the SDK loads; the SDK's stdio_client takes that very process. Checked against the real test
server (tests/mcp/mcp_test_server.py, which writes its pid): the hand-over, a fresh process where
`mcp` was never imported, the fallback when the SDK asks for something else, and the early
process ended when nothing takes it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.mcp import client, spawn
from loopwright.mcp.config import parse_server
from tests.helpers import still_alive
from tests.mcp.test_mcp import (
    SERVER,
    collect,
    pids,
    results_by_id,
    server,
    text_of,
    use,
)

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not spawn.enabled(), reason="early spawn is POSIX only")]


def early_pids(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the pid of each process spawn.spawn starts."""
    seen: list[int] = []
    real = spawn.spawn

    async def recording(command: str, args: list[str], env: dict[str, str], cwd: str, errlog: Any) -> None:
        await real(command, args, env, cwd, errlog)
        process = spawn._EARLY[errlog][1]
        if not isinstance(process, BaseException):
            seen.append(process.pid)

    monkeypatch.setattr(spawn, "spawn", recording)
    return seen


def echo_run(tmp_path: Path) -> lw.AgentOptions:
    model = lw.ScriptedModel([[use("mcp__t__echo", 1, text="hi")], [{"type": "text", "text": "done"}]])
    return lw.AgentOptions(model=model, cwd=tmp_path, permission_mode="bypassPermissions",
                           mcp_servers={"t": server(tmp_path)})


def test_the_sdk_takes_the_process_spawned_before_it_was_imported(tmp_path: Path) -> None:
    """In a fresh process: spawned while `mcp` is not imported yet, and the server the run talks
    to is that process (its own pid file says so)."""
    code = f"""
import asyncio, json, sys
import loopwright as lw
from loopwright.mcp import spawn
seen = []
real = spawn.spawn
async def recording(command, args, env, cwd, errlog):
    seen.append("mcp" in sys.modules)
    await real(command, args, env, cwd, errlog)
    seen.append(spawn._EARLY[errlog][1].pid)
spawn.spawn = recording
tmp = __import__("pathlib").Path({str(tmp_path)!r})
srv = {{"command": sys.executable, "args": [{SERVER!r}, "--pid-file", str(tmp / "pids")]}}
use = {{"type": "tool_use", "id": "c1", "name": "mcp__t__echo", "input": {{"text": "hi"}}}}
model = lw.ScriptedModel([[use], [{{"type": "text", "text": "done"}}]])
r = lw.run("go", lw.AgentOptions(model=model, cwd=tmp, permission_mode="bypassPermissions", mcp_servers={{"t": srv}}))
print(json.dumps({{"seen": seen, "echo": r.messages[2]["content"][0]["content"], "subtype": r.subtype}}))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["subtype"] == "success" and got["echo"] == "echo: hi"
    imported_before, early = got["seen"]
    assert imported_before is False  # the server started before the SDK loaded
    assert pids(tmp_path) == [early]  # the one server the run used is the early process, never a second


def test_a_hand_over_that_does_not_match_ends_the_early_process_and_the_sdk_spawns_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = early_pids(monkeypatch)
    env = client.Connection._server_env
    calls = {"n": 0}

    def drifting(self: client.Connection) -> dict[str, str]:  # the SDK's call sees another environment
        calls["n"] += 1
        return {**env(self), **({"DRIFT": "1"} if calls["n"] > 1 else {})}

    monkeypatch.setattr(client.Connection, "_server_env", drifting)
    msgs = asyncio.run(collect("go", echo_run(tmp_path)))
    assert msgs[-1].subtype == "success" and text_of(results_by_id(msgs)["c1"]) == "echo: hi"
    (early,) = seen
    assert not still_alive([early])  # (ended with SIGKILL: dying, not waited for)
    assert pids(tmp_path)[-1] != early


def test_an_early_process_the_sdk_never_takes_is_ended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = early_pids(monkeypatch)

    async def broken(self: client.Connection, stack: Any) -> Any:
        raise RuntimeError("the SDK did not load")

    monkeypatch.setattr(client.Connection, "_connect", broken)
    msgs = asyncio.run(collect("go", echo_run(tmp_path)))
    (status,) = msgs[0].data["mcp_servers"]
    assert status["status"] == "failed" and "the SDK did not load" in status["error"]
    (early,) = seen
    assert not still_alive([early])  # (ended with SIGKILL: dying, not waited for)


def test_a_start_cancelled_while_spawning_ends_what_it_spawned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = early_pids(monkeypatch)
    real = client.Connection.spawn_early

    async def second_cancelled(self: client.Connection) -> None:
        if seen:
            raise asyncio.CancelledError
        await real(self)

    monkeypatch.setattr(client.Connection, "spawn_early", second_cancelled)
    configs = [parse_server(n, server(tmp_path, name=n)) for n in ("a", "b")]

    async def go() -> None:
        rt = client.McpRuntime(configs, tmp_path)
        with pytest.raises(asyncio.CancelledError):
            await rt.start()

    asyncio.run(go())
    (early,) = seen
    assert not still_alive([early])  # (ended with SIGKILL: dying, not waited for)


def test_a_command_that_cannot_start_fails_as_the_sdk_would_say(tmp_path: Path) -> None:
    model = lw.ScriptedModel([[{"type": "text", "text": "done"}]])
    opts = lw.AgentOptions(model=model, cwd=tmp_path, mcp_servers={"nope": {"command": str(tmp_path / "missing")},
                                                                    "t": server(tmp_path)})
    msgs = asyncio.run(collect("go", opts))
    status = {s["name"]: s for s in msgs[0].data["mcp_servers"]}
    assert status["nope"]["status"] == "failed", status  # (both ways of starting it name the missing program)
    assert f"command not found: {tmp_path / 'missing'}" in status["nope"]["error"], status
    assert status["t"]["status"] == "connected"


def test_a_new_stderr_file_never_takes_the_process_spawned_for_a_file_that_is_gone(tmp_path: Path) -> None:
    """The hand-over table keeps the stderr file itself, not its id(): a file dropped without its
    connection's discard (its process stays the table's) cannot pass its process to a later
    file that CPython put at the same address. The case is forced: files are made until one has
    the dropped file's id (at once, with an id-keyed table: its memory is free); with the file
    kept by the table, no new file can have it, and the SDK's spawn must start its own."""
    import gc
    import tempfile

    from mcp.client import stdio

    command, args = sys.executable, ["-c", "import time; time.sleep(60)"]
    spawn.install()

    async def go() -> tuple[int, int, bool]:
        first = tempfile.TemporaryFile("w+")
        await spawn.spawn(command, args, {}, str(tmp_path), first)
        early_pid = spawn._EARLY[first][1].pid
        gone = id(first)
        first.close()
        del first
        gc.collect()
        kept: list[Any] = []
        for _ in range(200):
            kept.append(tempfile.TemporaryFile("w+"))
            if id(kept[-1]) == gone:
                break
        second = kept[-1]
        process = None
        try:
            process = await stdio._create_platform_compatible_process(command, args, {}, second, str(tmp_path))
            return process.pid, early_pid, id(second) == gone
        finally:
            await spawn.discard(second)
            for errlog in [k for k, (_, p) in spawn._EARLY.items() if getattr(p, "pid", None) == early_pid]:
                await spawn.discard(errlog)
            for f in kept:
                f.close()

    taken, early, reused = asyncio.run(go())
    assert taken != early, f"the new file (same id as the gone one: {reused}) took the gone file's process"
    assert not still_alive([early, taken]), "the process the SDK spawned outlived its discard"
