"""An `async: true` hook that exits after its run has ended (issue 42's gap): in a session, what
it says (systemMessage, additionalContext) goes with the next prompt, each as a system reminder
before the prompt's text, as Claude Code 2.1.332 sends it. Through the official Python Agent SDK
with each CLI on the same scripted turns, and loopwright's own LoopwrightClient."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.testing import ScriptedServer
from tests.helpers import bash, text
from tests.sdkproto.test_sdk_protocol import CLIS

OUT = {"systemMessage": "ASYNC SYS", "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                             "additionalContext": "ASYNC CTX"}}
SETTINGS = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": f"sleep 1; echo '{json.dumps(OUT)}'", "async": True}]}]}}
TURNS = [[bash("echo one")], [text("ok")], [text("second")]]


def reminders_before_the_prompt(request: Any, prompt: str) -> list[str]:
    """The system reminders that carry the hook's words, in order, in the prompt's message before
    its text (Claude Code's own reminders, such as its token count, left out)."""
    content = request.body["messages"][-1]["content"]
    texts = [b["text"] for b in content if b.get("type") == "text"]
    before = texts[:texts.index(prompt)]
    return [t.strip() for t in before if "ASYNC" in t]


WANT = ["<system-reminder>\nASYNC SYS\n</system-reminder>", "<system-reminder>\nASYNC CTX\n</system-reminder>"]


@pytest.mark.e2e
@pytest.mark.parametrize("cli", CLIS)
def test_in_an_sdk_session_it_goes_with_the_next_prompt(cli: str, tmp_path: Path) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    from tests.sdkproto.test_sdk_protocol import options

    (tmp_path / "home").mkdir()
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))

    async def go(srv: ScriptedServer) -> None:
        async with sdk.ClaudeSDKClient(options(cli, srv, tmp_path, env={"HOME": str(tmp_path / "home")},
                                               setting_sources=["project"], permission_mode="acceptEdits",
                                               allowed_tools=["Bash"])) as client:
            await client.query("one")
            [m async for m in client.receive_response()]  # ends while the hook still sleeps
            await asyncio.sleep(3)
            await client.query("two")
            [m async for m in client.receive_response()]

    with ScriptedServer(TURNS) as srv:
        asyncio.run(go(srv))
        requests = srv.loop_requests
    assert "ASYNC" not in json.dumps([q.body["messages"] for q in requests[:2]]), cli
    assert reminders_before_the_prompt(requests[2], "two") == WANT, cli


def test_a_loopwright_client_sends_it_with_the_next_query(tmp_path: Path) -> None:
    with ScriptedServer([*TURNS, [text("third")]]) as srv:
        options = lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="k", cwd=tmp_path,
                                  max_retries=0, settings=SETTINGS, tools=lw.default_tools(),
                                  permission_mode="acceptEdits", allowed_tools=["Bash"])

        async def go() -> None:
            async with lw.LoopwrightClient(options) as client:
                await client.query("one")
                [m async for m in client.receive_response()]
                await asyncio.sleep(2)
                await client.query("two")
                [m async for m in client.receive_response()]
                await client.query("three")  # said once
                [m async for m in client.receive_response()]

        asyncio.run(go())
        requests = srv.loop_requests
    assert reminders_before_the_prompt(requests[2], "two") == WANT
    assert "ASYNC" not in json.dumps(requests[3].body["messages"][-1])
