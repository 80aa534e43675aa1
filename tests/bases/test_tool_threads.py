"""A sync handler runs in a worker thread (threads.run_in_worker), never on the event loop: a slow
one never blocks an interrupt, a handler that needs the loop never deadlocks, calls side by side
overlap, asyncio.run and context variables in a handler behave as in any thread, and the result
(or the error) comes back whether the call finished within the lone call's wait or after it."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.threads import INLINE_WAIT_S
from loopwright.tools.base import ToolContext
from tests.helpers import interrupted

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
CTX = ToolContext(Path("."))
CALLS = 8


def _thread_tool(**kw: Any) -> tuple[lw.Tool, list[str]]:
    seen: list[str] = []

    def where(x: dict[str, Any]) -> str:
        seen.append(threading.current_thread().name)
        if x.get("sleep"):
            time.sleep(x["sleep"])
        return "ok"

    return lw.Tool("where", "names its thread", SCHEMA, where, **kw), seen


def _calls(tool: lw.Tool, inputs: list[dict[str, Any]], wait: float = INLINE_WAIT_S) -> list[lw.ToolOutput]:
    async def go() -> list[lw.ToolOutput]:
        return [await tool.call(x, CTX, in_thread=True, wait=wait) for x in inputs]

    return asyncio.run(go())


def test_a_quick_handler_runs_in_a_worker_every_time() -> None:
    tool, seen = _thread_tool()
    outs = _calls(tool, [{}] * CALLS)
    assert [o.content for o in outs] == ["ok"] * CALLS
    assert seen == ["loopwright-tool"] * CALLS


def test_a_call_slower_than_the_wait_still_returns_its_result() -> None:
    # past INLINE_WAIT_S the call yields to the loop and its result comes back through a Future
    tool, seen = _thread_tool()
    outs = _calls(tool, [{"sleep": INLINE_WAIT_S * 20}, {}, {"sleep": INLINE_WAIT_S * 5}])
    assert [o.content for o in outs] == ["ok"] * 3
    assert seen == ["loopwright-tool"] * 3


def test_calls_side_by_side_overlap_in_threads() -> None:
    barrier = threading.Barrier(3, timeout=10)  # each call waits for the other two: only side by side they end

    def meet(x: dict[str, Any]) -> str:
        barrier.wait()
        return threading.current_thread().name

    tool = lw.Tool("meet", "waits for its siblings", SCHEMA, meet, read_only=True)

    async def go() -> list[lw.ToolOutput]:
        return list(await asyncio.gather(*(tool.call({}, CTX, in_thread=True) for _ in range(3))))

    outs = asyncio.run(asyncio.wait_for(go(), 30))
    assert [o.content for o in outs] == ["loopwright-tool"] * 3 and not any(o.is_error for o in outs)


def test_an_error_is_an_is_error_result_each_time() -> None:
    n = {"k": 0}

    def flaky(x: dict[str, Any]) -> str:
        n["k"] += 1
        if n["k"] % 2:
            raise ValueError(f"odd {n['k']}")
        return "even"

    tool = lw.Tool("flaky", "fails every other call", SCHEMA, flaky)
    outs = _calls(tool, [{}] * CALLS)
    assert [(o.content, o.is_error) for o in outs] == [
        (f"ValueError: odd {k}", True) if k % 2 else ("even", False) for k in range(1, CALLS + 1)]


def test_a_handler_that_needs_the_loop_never_deadlocks() -> None:
    # run_coroutine_threadsafe(...).result() on the loop's own thread would wait forever.
    loop_box: dict[str, asyncio.AbstractEventLoop] = {}

    async def answer() -> str:
        return "from the loop"

    def needs_loop(x: dict[str, Any]) -> str:
        return asyncio.run_coroutine_threadsafe(answer(), loop_box["loop"]).result(5)

    tool = lw.Tool("needs_loop", "calls back into the loop", SCHEMA, needs_loop)

    async def go() -> list[str]:
        loop_box["loop"] = asyncio.get_running_loop()
        return [str((await tool.call({}, CTX, in_thread=True, wait=INLINE_WAIT_S)).content) for _ in range(CALLS)]

    assert asyncio.run(asyncio.wait_for(go(), 30)) == ["from the loop"] * CALLS


def test_asyncio_run_and_context_variables_inside_a_handler() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="outer")

    async def inner() -> str:
        return "inner"

    def handler(x: dict[str, Any]) -> str:
        before = var.get()
        var.set("set by the handler")  # a copy of the context: the caller never sees it
        return f"{asyncio.run(inner())} {before} {threading.current_thread().name}"

    tool = lw.Tool("nested", "runs its own loop", SCHEMA, handler)

    async def go() -> tuple[list[str], str]:
        var.set("caller")
        outs = [str((await tool.call({}, CTX, in_thread=True, wait=INLINE_WAIT_S)).content) for _ in range(CALLS)]
        await asyncio.sleep(0)  # the outer loop still runs
        return outs, var.get()

    outs, after = asyncio.run(go())
    assert after == "caller"
    assert outs == ["inner caller loopwright-tool"] * CALLS


def test_a_quick_tool_still_gives_up_the_loop_for_an_interrupt_once_it_turns_slow() -> None:
    # Quick calls, then one that blocks: an interrupt during it is answered at once.
    gate = threading.Event()
    started = threading.Event()
    n = {"k": 0}

    def sometimes_slow(x: dict[str, Any]) -> str:
        n["k"] += 1
        if n["k"] > CALLS:
            started.set()
            gate.wait(60)
        return "ok"

    tool = lw.Tool("Slow", "slow later", SCHEMA, sometimes_slow)
    turns: list[Any] = [[{"type": "tool_use", "id": f"s{i}", "name": "Slow", "input": {}}]
                        for i in range(CALLS + 1)] + [[{"type": "text", "text": "after"}]]

    async def ready() -> None:
        while not started.is_set():
            await asyncio.sleep(0.01)

    t0 = time.monotonic()
    try:
        res = asyncio.run(interrupted("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[tool]), ready))
        took = time.monotonic() - t0  # the whole run: on the loop, the last call would hold it 60 s
    finally:
        gate.set()
    assert isinstance(res, lw.ResultMessage)
    assert res.subtype == "error_during_execution"
    assert took < 30  # not the handler's 60 s (the margin: a loaded machine)



def test_a_result_that_lands_as_the_wait_runs_out_still_comes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # The worker finishes after the lone call stopped waiting on its lock but before the caller
    # made the Future the worker would settle: the caller must find the result itself, not
    # wait for a Future nobody will settle.
    from loopwright import threads

    go_on = threading.Event()
    real = asyncio.get_running_loop

    def in_the_window() -> asyncio.AbstractEventLoop:  # what the caller asks for its Future's loop
        go_on.set()  # the handler returns now, and its worker finds no Future yet
        time.sleep(0.2)
        return real()

    async def go() -> str:
        monkeypatch.setattr(asyncio, "get_running_loop", in_the_window)  # (run_in_worker asks it after the wait)
        return str(await threads.run_in_worker(lambda: go_on.wait(10) and "landed", wait=INLINE_WAIT_S))

    assert asyncio.run(asyncio.wait_for(go(), 10)) == "landed"
