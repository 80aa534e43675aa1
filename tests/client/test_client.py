"""LoopwrightClient and RunControl: conversations, interrupts (tool and model calls), queued text."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.execute import INTERRUPTED
from loopwright.invariant import holds, holds_final
from loopwright.models.base import ModelRequest, ModelResponse
from loopwright.usage import Usage
from tests.helpers import Recording, text, use


class Probe:
    """Tool side effects the tests look at."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.started_event = asyncio.Event()

    def tools(self) -> list[lw.Tool]:
        async def wait(inp: dict[str, Any]) -> str:
            self.started.append(inp["id"])
            self.started_event.set()
            try:
                await asyncio.sleep(float(inp["s"]))
            except asyncio.CancelledError:
                self.cancelled.append(inp["id"])
                raise
            self.finished.append(inp["id"])
            return f"waited {inp['s']}"

        schema = {"type": "object", "properties": {"s": {"type": "number"}, "id": {"type": "string"}}}
        return [lw.Tool("Wait", "wait s seconds", schema, wait),
                lw.Tool("Peek", "read-only wait", schema, wait, read_only=True)]


class SlowModel:
    """A model whose call hangs until cancelled (and says whether it was)."""

    name = "slow"
    has_own_cost = True

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.cancelled = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        self.entered.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        yield ModelResponse([], "end_turn", Usage(), self.name, cost_usd=0.0)


async def collect(client: lw.LoopwrightClient) -> list[lw.Message]:
    return [m async for m in client.receive_response()]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_conversation_continues_across_queries() -> None:
    model = Recording([[text("one")], [use("t", "Wait", s=0, id="t")], [text("two")]])

    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel(model), tools=Probe().tools())) as c:
            await c.query("first")
            msgs = await collect(c)
            assert isinstance(msgs[-1], lw.ResultMessage) and msgs[-1].result == "one"
            await c.query("second")
            msgs = await collect(c)
            assert msgs[-1].subtype == "success"  # type: ignore[union-attr]
            assert model.seen[1] == [{"role": "user", "content": [text("first")]},
                                     {"role": "assistant", "content": [text("one")]},
                                     {"role": "user", "content": [text("second")]}]
            assert holds_final(c.history or []) and len(c.history or []) == 6
            assert c.session_id == msgs[-1].session_id == c.results[0].session_id  # type: ignore[union-attr]

    run(go())


def test_a_result_keeps_its_own_runs_history_after_later_queries() -> None:
    """A ResultMessage is what its run ended with: a later query of the same client does not
    grow, rewrite or take back the messages of a result already returned (68f4c70 shared one
    History across a client's results, so results[0].messages grew with every later prompt)."""
    model = Recording([[text("one")], [text("two")], [text("three")]])

    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel(model))) as c:
            for p in ("first", "second", "third"):
                await c.query(p)
                await collect(c)
            firsts = [list(r.messages) for r in c.results]
            assert [len(m) for m in firsts] == [2, 4, 6]
            assert firsts[0] == [{"role": "user", "content": [text("first")]},
                                 {"role": "assistant", "content": [text("one")]}]
            assert len(c.history or []) == 6

    run(go())


def test_interrupt_during_a_tool_call() -> None:
    probe = Probe()
    model = Recording([[use("a", "Wait", s=30, id="a"), use("b", "Wait", s=0, id="b")], [text("after")]])

    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel(model), tools=probe.tools())) as c:
            await c.query("go")
            await probe.started_event.wait()
            await c.interrupt()  # the SDK's awaitable form
            msgs = await collect(c)
            user = next(m for m in msgs if isinstance(m, lw.UserMessage))
            assert [(r.tool_use_id, r.is_error, r.content) for r in user.tool_results] == [
                ("a", True, INTERRUPTED), ("b", True, INTERRUPTED)]
            res = msgs[-1]
            assert isinstance(res, lw.ResultMessage) and res.subtype == "error_during_execution"
            assert probe.cancelled == ["a"] and probe.finished == [] and holds(res.messages)
            await c.query("carry on")  # the conversation goes on from a valid history
            msgs = await collect(c)
            assert msgs[-1].subtype == "success"  # type: ignore[union-attr]
            assert model.seen[1][-1] == {"role": "user", "content": [text("carry on")]}

    run(go())


def test_interrupt_concurrent_read_only_calls() -> None:
    probe = Probe()
    model = Recording([[use("p1", "Peek", s=30, id="p1"), use("p2", "Peek", s=30, id="p2")]])

    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel(model), tools=probe.tools())) as c:
            await c.query("go")
            await probe.started_event.wait()
            c.interrupt()
            msgs = await collect(c)
            res = msgs[-1]
            assert isinstance(res, lw.ResultMessage) and holds(res.messages)
            assert [b["is_error"] for b in res.messages[-1]["content"]] == [True, True]

    run(go())


def test_interrupt_during_a_model_call_keeps_h() -> None:
    slow = SlowModel()

    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=slow)) as c:
            await c.query("hello")
            await slow.entered.wait()
            c.interrupt()
            msgs = await collect(c)
            res = msgs[-1]
            assert isinstance(res, lw.ResultMessage) and res.subtype == "error_during_execution"
            assert res.result == "interrupted by user" and slow.cancelled
            assert res.messages == [{"role": "user", "content": [text("hello")]}]
            assert not any(isinstance(m, lw.AssistantMessage) for m in msgs)

    run(go())


def test_run_control_interrupt_with_plain_query() -> None:
    """RunControl works without the client: interrupt() from another task during the model call."""
    slow = SlowModel()

    async def go() -> lw.ResultMessage:
        control = lw.RunControl()

        async def stop_soon() -> None:
            await slow.entered.wait()
            control.interrupt()

        asyncio.get_running_loop().create_task(stop_soon())
        last = None
        async for m in lw.query("x", lw.AgentOptions(model=slow), control=control):
            last = m
        assert isinstance(last, lw.ResultMessage)
        return last

    res = run(go())
    assert res.subtype == "error_during_execution" and res.messages == [{"role": "user", "content": [text("x")]}]


def test_send_while_a_tool_runs_is_delivered_after_its_result_same_turn() -> None:
    probe = Probe()
    model = Recording([[use("a", "Wait", s=0.3, id="a")], [text("got it")]])

    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel(model), tools=probe.tools())) as c:
            await c.query("go")
            await probe.started_event.wait()
            c.send("also check the README")
            msgs = await collect(c)
            user = next(m for m in msgs if isinstance(m, lw.UserMessage))
            assert [type(b).__name__ for b in user.content] == ["ToolResultBlock", "TextBlock"]
            assert model.seen[1][-1]["content"][1] == text("also check the README")
            assert probe.finished == ["a"] and c.pending == []

    run(go())


def test_send_with_no_tool_turn_left_goes_with_the_next_query() -> None:
    model = Recording([{"content": [text("slow answer")], "delay": 0.3}, [text("ok")]])

    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel(model))) as c:
            await c.query("q1")
            await asyncio.sleep(0.05)
            c.send("late note")
            await collect(c)
            assert c.pending == ["late note"]
            c.send("idle note")
            await c.query("q2")
            await collect(c)
            assert model.seen[1][-1] == {"role": "user", "content": [text("late note\n\nidle note\n\nq2")]}
            assert c.pending == []

    run(go())


def test_query_while_running_is_refused() -> None:
    slow = SlowModel()

    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=slow)) as c:
            await c.query("a")
            await slow.entered.wait()
            with pytest.raises(RuntimeError, match="already running"):
                await c.query("b")
            c.interrupt()
            await collect(c)

    run(go())


def test_model_error_is_a_result_not_an_exception() -> None:
    async def go() -> None:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel([lw.ModelError("boom")]))) as c:
            await c.query("a")
            msgs = await collect(c)
            assert msgs[-1].subtype == "error_during_execution" and "boom" in (msgs[-1].result or "")  # type: ignore[union-attr]

    run(go())


def test_client_persists_one_session_and_resumes_it(tmp_path: Path) -> None:
    o = lw.AgentOptions(model=lw.ScriptedModel([[text("a")], [text("b")]]), cwd=tmp_path,
                        sessions_dir=tmp_path / "s", persist_session=True)

    async def go() -> str:
        async with lw.LoopwrightClient(o) as c:
            for p in ("one", "two"):
                await c.query(p)
                await collect(c)
            assert lw.get_session_messages(c.session_id or "", tmp_path / "s") == c.history
            return c.session_id or ""

    sid = run(go())
    assert len(list((tmp_path / "s").rglob("*.jsonl"))) == 1
    model = Recording([[text("c")]])
    o2 = lw.AgentOptions(model=lw.ScriptedModel(model), cwd=tmp_path, sessions_dir=tmp_path / "s",
                         persist_session=True, resume=sid)

    async def again() -> None:
        async with lw.LoopwrightClient(o2) as c:
            await c.query("three")
            await collect(c)
            assert c.session_id == sid and len(model.seen[0]) == 5

    run(again())


def test_disconnect_interrupts_a_running_query() -> None:
    slow = SlowModel()

    async def go() -> None:
        c = lw.LoopwrightClient(lw.AgentOptions(model=slow))
        await c.connect()
        await c.query("a")
        await slow.entered.wait()
        await c.disconnect()
        assert slow.cancelled and not c.running
        assert c.results[-1].subtype == "error_during_execution"

    run(go())


def test_client_queries_chain_parent_uuids_in_one_transcript(tmp_path: Path) -> None:
    o = lw.AgentOptions(model=lw.ScriptedModel([[text("a")], [text("b")]]), cwd=tmp_path,
                        sessions_dir=tmp_path / "s", persist_session=True)

    async def go() -> None:
        async with lw.LoopwrightClient(o) as c:
            for p in ("one", "two"):
                await c.query(p)
                await collect(c)

    run(go())
    from loopwright.sessions import read_lines

    lines = read_lines(next((tmp_path / "s").rglob("*.jsonl")))
    assert [ln["parentUuid"] for ln in lines] == [None, *[ln["uuid"] for ln in lines[:-1]]]
