"""What the model said stays what it said: a tool call's input edited in place after the response
came (by the tool itself, a PreToolUse hook, the can_use_tool callback, or the program reading
the run's messages) never changes the assistant message the history keeps. The next request, the
transcript on disk, the session a resume loads and `result.messages` all hold the input as the
model wrote it (issue 41: the history is append-only, and the transcript and the request agree).
Real HTTP to the loopback server; the transcript is read back from disk."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.hooks import HookMatcher
from loopwright.sessions import get_session_messages
from loopwright.testing import ScriptedServer, strip_cache_control
from tests.helpers import text, use


def _raw_handler(data: dict[str, Any]) -> str:
    data["cmd"] += " +tool"  # (a handler given the input dict itself may edit it: it is its own)
    return "ok"


RAW = lw.Tool("Raw", "run a command", {"type": "object", "properties": {"cmd": {"type": "string"}}}, _raw_handler)


def _can_use_tool(name: str, tool_input: dict[str, Any], *rest: Any) -> bool:
    tool_input["cmd"] += " +callback"
    return True


def _pre_hook(payload: dict[str, Any], *rest: Any) -> dict[str, Any]:
    payload["tool_input"]["cmd"] += " +hook"
    return {}


def _run(tmp_path: Path, edit_as_consumer: bool, **kw: Any) -> tuple[Any, list[Any], list[dict[str, Any]], list[Any]]:
    turns = [[use("t1", "Raw", cmd="ls")], [text("done")]]
    with ScriptedServer(turns) as srv:
        options = lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="k", tools=[RAW],
                                  persist_session=True, sessions_dir=tmp_path / "s", cwd=tmp_path, **kw)

        async def go() -> list[Any]:
            out = []
            async for m in lw.query("go", options):
                if edit_as_consumer and isinstance(m, lw.AssistantMessage):
                    for b in m.content:
                        if isinstance(b, lw.ToolUseBlock):
                            b.input["cmd"] += " +consumer"
                out.append(m)
            return out

        msgs = asyncio.run(go())
        sent = [r.body["messages"] for r in srv.requests if r.loop_call]
    [transcript] = (tmp_path / "s").rglob("*.jsonl")
    lines = [json.loads(x) for x in transcript.read_text().splitlines()]
    return msgs[-1], sent, lines, get_session_messages(msgs[-1].session_id, tmp_path / "s")


def _inputs(messages: list[Any]) -> list[Any]:
    return [b["input"] for m in messages if m.get("role") == "assistant" for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"]


@pytest.mark.parametrize("who", ["tool", "can_use_tool", "PreToolUse hook", "the program reading the messages"])
def test_an_input_edited_in_place_after_the_response_changes_nothing_said(tmp_path: Path, who: str) -> None:
    kw: dict[str, Any] = {"can_use_tool": _can_use_tool} if who == "can_use_tool" else \
        {"hooks": {"PreToolUse": [HookMatcher(hooks=[_pre_hook])]}} if who == "PreToolUse hook" else {}
    result, sent, lines, resumed = _run(tmp_path, who.startswith("the program"), **kw)
    assert result.subtype == "success", result.errors
    said = {"cmd": "ls"}
    on_disk = [b["input"] for x in lines if x.get("type") == "assistant" for b in x["message"]["content"]
               if b.get("type") == "tool_use"]
    assert on_disk == [said]
    assert _inputs(sent[1]) == [said]  # the second request: the first call's tool_use as the model wrote it
    assert _inputs(result.messages) == [said]
    assert _inputs(resumed) == [said]
    # the request is the history encoded (its cache breakpoints aside): the history the run ended
    # with, and what a resume loads
    n = len(sent[1])
    assert json.loads(json.dumps(result.messages[:n])) == strip_cache_control(sent[1]) == resumed[:n]
