"""The Task tools' list lasts as long as the session (issue 42's gap), as in Claude Code 2.1.332:
a `--resume` or `--continue` of the session finds the tasks, a new session or a fork starts with
none, and the next prompt of an Agent SDK session finds them. Claude Code and loopwright on the
same scripted turns."""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text, use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
pytestmark = pytest.mark.e2e


def results(requests: list[Any]) -> list[str]:
    """The tool results of the last request that sent some (Claude Code's reminders cut off; it
    may make a request of its own after the run's)."""
    for q in reversed(requests):
        content = q.body["messages"][-1]["content"]
        out = [b["content"] if isinstance(b["content"], str) else "".join(x.get("text", "") for x in b["content"])
               for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        if out:
            return [o.split("\n\n<system-")[0] for o in out]
    return []


def cli(who: str, proj: Path, home: Path, turns: list[Any], *args: str) -> tuple[str, list[str]]:
    """One `-p` run; (its session id, the tool results the model was sent last)."""
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json", *args],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (who, r.stderr)
        return json.loads(r.stdout)["session_id"], results(srv.requests)


def listing(uid: str) -> list[Any]:
    """TaskList, then an answer (each run's call its own id: a conversation's ids are unique)."""
    return [[use(uid, "TaskList", {})], [text("ok")]]


# six CLI runs one after the other: Claude Code's took 85 s on 2 cores at load 10 (the suite's 120 s
# hang guard is per test)
@pytest.mark.timeout(360)
@pytest.mark.parametrize("who", WHO)
def test_resume_and_continue_find_the_tasks_a_new_session_or_a_fork_does_not(tmp_path: Path, who: str) -> None:
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    sid, said = cli(who, proj, home, [[use("c", "TaskCreate", subject="Write tests", description="d")],
                                      [use("u", "TaskUpdate", taskId="1", status="in_progress")], [text("ok")]])
    assert said == ["Updated task #1 status"], who
    assert cli(who, proj, home, listing("l1"), "--resume", sid) == (sid, ["#1 [in_progress] Write tests"]), who
    assert cli(who, proj, home, listing("l2"), "--continue") == (sid, ["#1 [in_progress] Write tests"]), who
    assert cli(who, proj, home, listing("l3"), "--resume", sid, "--fork-session")[1] == ["No tasks found"], who
    assert cli(who, proj, home, listing("l4"))[1] == ["No tasks found"], who
    # the resumed list goes on: the next id follows the kept ones
    turns = [[use("c9", "TaskCreate", subject="Ship", description="d")], [use("l9", "TaskList", {})], [text("ok")]]
    assert cli(who, proj, home, turns, "--resume", sid)[1] == ["#1 [in_progress] Write tests\n#2 [pending] Ship"], who
    if who == "loopwright":  # beside the transcript, private
        (kept,) = home.glob(f".loopwright/projects/*/{sid}.tasks.json")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600


def test_a_list_that_cannot_be_read_is_said_not_emptied(tmp_path: Path) -> None:
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    sid, _ = cli("loopwright", proj, home, [[use("c", "TaskCreate", subject="Keep me", description="d")], [text("ok")]])
    (kept,) = home.glob(f".loopwright/projects/*/{sid}.tasks.json")
    kept.write_text("{not json")
    _, said = cli("loopwright", proj, home, listing("l1"), "--resume", sid)
    assert said[0].startswith(f"the session's task list {kept} could not be read"), said
    assert kept.read_text() == "{not json"  # nothing written over it


@pytest.mark.parametrize("who", WHO)
def test_the_next_prompt_of_an_sdk_session_finds_the_tasks(tmp_path: Path, who: str) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    from tests.sdkproto.test_sdk_protocol import options

    (tmp_path / "home").mkdir()

    async def go(srv: ScriptedServer) -> None:
        async with sdk.ClaudeSDKClient(options(who, srv, tmp_path, env={"HOME": str(tmp_path / "home")},
                                               allowed_tools=["TaskCreate", "TaskList"])) as client:
            for prompt in ("plan", "list"):
                await client.query(prompt)
                [m async for m in client.receive_response()]

    turns = [[use("c", "TaskCreate", subject="Write tests", description="d")], [text("planned")], *listing("l1")]
    with ScriptedServer(turns) as srv:
        asyncio.run(go(srv))
        assert results(srv.loop_requests) == ["#1 [pending] Write tests"], who
