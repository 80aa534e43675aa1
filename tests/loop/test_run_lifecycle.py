"""What a run leaves behind: background shells end with their run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.invariant import holds
from loopwright.sessions import get_session_messages
from loopwright.tools.builtin import default_tools
from tests.helpers import interrupted, still_alive, text, use


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
    assert not still_alive([int(pidfile.read_text())])


# --- cancelling the consumer of query() -----------------------------------------------------------

def _blocking_tool(started: asyncio.Event) -> lw.Tool:
    async def wait_forever(x: dict[str, Any]) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    return lw.Tool("block", "waits forever", {"type": "object", "properties": {}}, wait_forever)


@pytest.mark.parametrize("with_control", [False, True])
def test_cancelling_the_consumer_while_a_tool_runs_propagates(with_control: bool) -> None:
    # Before: the executor swallowed the task's CancelledError and the run ended with an
    # "interrupted by user" result; the cancelled task then finished normally, so
    # asyncio.timeout() / TaskGroup cancellation silently did nothing.
    async def main() -> list[str]:
        started = asyncio.Event()
        seen: list[str] = []
        options = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "block")], [text("done")]]),
                                  tools=[_blocking_tool(started)])
        control = lw.RunControl() if with_control else None

        async def consume() -> None:
            async for m in lw.query("go", options, control=control):
                seen.append(type(m).__name__)

        task = asyncio.ensure_future(consume())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    assert asyncio.run(main()) == ["SystemMessage", "AssistantMessage"]


def test_asyncio_timeout_around_query_raises_timeout_error() -> None:
    async def main() -> None:
        started = asyncio.Event()
        options = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "block")], [text("done")]]),
                                  tools=[_blocking_tool(started)])
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                async for _ in lw.query("go", options):
                    pass

    asyncio.run(main())


def test_control_interrupt_still_ends_the_run_with_a_result() -> None:
    async def main() -> lw.ResultMessage:
        started = asyncio.Event()
        options = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "block")], [text("done")]]),
                                  tools=[_blocking_tool(started)])
        r: lw.ResultMessage = await interrupted("go", options, started.wait)
        return r

    r = asyncio.run(main())
    assert r.subtype == "error_during_execution" and holds(r.messages)
    assert r.messages[-1]["content"][0]["is_error"] is True


def test_cancelled_run_leaves_a_paired_transcript(tmp_path: Path) -> None:
    async def main() -> str:
        started = asyncio.Event()
        options = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "block")], [text("done")]]),
                                  tools=[_blocking_tool(started)], cwd=str(tmp_path),
                                  persist_session=True, sessions_dir=str(tmp_path / "s"))
        sid = ""

        async def consume() -> None:
            nonlocal sid
            async for m in lw.query("go", options):
                if isinstance(m, lw.SystemMessage) and m.subtype == "init":
                    sid = m.data["session_id"]

        task = asyncio.ensure_future(consume())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return sid

    sid = asyncio.run(main())
    h = get_session_messages(sid, sessions_dir=tmp_path / "s")
    assert [m["role"] for m in h] == ["user", "assistant", "user"] and holds(h)
    assert h[-1]["content"][0]["is_error"] is True  # the cancelled call's result was recorded

