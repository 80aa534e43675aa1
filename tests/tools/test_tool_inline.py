"""A sync handler runs on the event loop once proven quick, and goes back to a worker thread for
good the first time it is slow there (Tool._run_sync; the hand-off it saves: bench/bench_thread_handoff.py).
What must not change: a new or ever-slow handler never blocks an interrupt, a handler that needs
the loop never deadlocks, calls side by side still overlap, asyncio.run and context variables in
a handler behave as they did in a thread."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.tools.base import INLINE_WAIT_S, PROVE_CALLS, ToolContext
from tests.helpers import interrupted

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
CTX = ToolContext(Path("."))


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


def _promote(tool: lw.Tool, seen: list[str]) -> int:
    """Call until a call runs on the loop's thread (a busy machine may make a call slow and
    restart the proof); how many calls that took."""
    main = threading.current_thread().name
    for n in range(1, 200):
        _calls(tool, [{}])
        if seen[-1] == main:
            return n
    raise AssertionError(f"never moved onto the loop: {seen[-5:]}")


def test_a_quick_handler_moves_onto_the_loop_after_proving_itself() -> None:
    tool, seen = _thread_tool()
    outs = _calls(tool, [{}] * PROVE_CALLS)
    assert [o.content for o in outs] == ["ok"] * PROVE_CALLS
    assert seen == ["loopwright-tool"] * PROVE_CALLS  # a new handler starts in a worker
    _promote(tool, seen)


def test_one_slow_call_on_the_loop_sends_the_handler_back_to_prove_itself_twice_as_long() -> None:
    tool, seen = _thread_tool()
    _promote(tool, seen)
    before = len(seen)
    _calls(tool, [{"sleep": INLINE_WAIT_S * 5}] + [{}] * (2 * PROVE_CALLS))
    assert seen[before] == threading.current_thread().name  # the slow call itself ran on the loop
    assert seen[before + 1:] == ["loopwright-tool"] * (2 * PROVE_CALLS)  # back in threads
    _promote(tool, seen)  # then on the loop again
    before = len(seen)
    _calls(tool, [{"sleep": INLINE_WAIT_S * 5}] + [{}] * (4 * PROVE_CALLS))
    assert seen[before + 1:] == ["loopwright-tool"] * (4 * PROVE_CALLS)


def test_a_slow_call_in_the_worker_restarts_the_proof() -> None:
    tool, seen = _thread_tool()
    _calls(tool, [{}] * (PROVE_CALLS - 1) + [{"sleep": INLINE_WAIT_S * 2}])
    assert seen == ["loopwright-tool"] * PROVE_CALLS
    assert _promote(tool, seen) > PROVE_CALLS  # a whole new proof


def test_calls_side_by_side_prove_nothing_and_stay_in_threads() -> None:
    tool, seen = _thread_tool(read_only=True)
    _calls(tool, [{}] * (PROVE_CALLS + 2), wait=0.0)
    assert seen == ["loopwright-tool"] * (PROVE_CALLS + 2)


def test_an_error_counts_as_a_call_and_is_still_an_is_error_result() -> None:
    n = {"k": 0}

    def flaky(x: dict[str, Any]) -> str:
        n["k"] += 1
        if n["k"] % 2:
            raise ValueError(f"odd {n['k']}")
        return "even"

    tool = lw.Tool("flaky", "fails every other call", SCHEMA, flaky)
    outs = _calls(tool, [{}] * (PROVE_CALLS + 4))
    assert [(o.content, o.is_error) for o in outs] == [
        (f"ValueError: odd {k}", True) if k % 2 else ("even", False) for k in range(1, PROVE_CALLS + 5)]


def test_a_handler_that_needs_the_loop_is_never_moved_onto_it() -> None:
    # run_coroutine_threadsafe(...).result() on the loop's own thread would wait forever.
    loop_box: dict[str, asyncio.AbstractEventLoop] = {}

    async def answer() -> str:
        return "from the loop"

    def needs_loop(x: dict[str, Any]) -> str:
        return asyncio.run_coroutine_threadsafe(answer(), loop_box["loop"]).result(5)

    tool = lw.Tool("needs_loop", "calls back into the loop", SCHEMA, needs_loop)

    async def go() -> list[str]:
        loop_box["loop"] = asyncio.get_running_loop()
        return [str((await tool.call({}, CTX, in_thread=True, wait=INLINE_WAIT_S)).content)
                for _ in range(PROVE_CALLS * 3)]

    assert asyncio.run(asyncio.wait_for(go(), 30)) == ["from the loop"] * (PROVE_CALLS * 3)


def test_asyncio_run_and_context_variables_inside_a_handler_on_the_loop() -> None:
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
        outs = [str((await tool.call({}, CTX, in_thread=True, wait=INLINE_WAIT_S)).content)
                for _ in range(PROVE_CALLS + 2)]
        await asyncio.sleep(0)  # the outer loop still runs
        return outs, var.get()

    outs, after = asyncio.run(go())
    assert after == "caller"
    assert all(o.startswith("inner caller ") for o in outs), outs


def test_a_quick_tool_still_gives_up_the_loop_for_an_interrupt_once_it_turns_slow() -> None:
    # Proven quick, then slow on the loop once (that call holds the loop), then an interrupt
    # during a slow call is answered at once: the handler runs in a worker again.
    gate = threading.Event()
    started = threading.Event()
    n = {"k": 0}

    def sometimes_slow(x: dict[str, Any]) -> str:
        n["k"] += 1
        if n["k"] == PROVE_CALLS + 1:
            time.sleep(INLINE_WAIT_S * 5)
        elif n["k"] > PROVE_CALLS + 1:
            started.set()
            gate.wait(10)
        return "ok"

    tool = lw.Tool("Slow", "slow later", SCHEMA, sometimes_slow)
    turns: list[Any] = [[{"type": "tool_use", "id": f"s{i}", "name": "Slow", "input": {}}]
                        for i in range(PROVE_CALLS + 2)] + [[{"type": "text", "text": "after"}]]

    async def ready() -> None:
        while not started.is_set():
            await asyncio.sleep(0.01)

    t0 = time.monotonic()
    try:
        res = asyncio.run(interrupted("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[tool]), ready))
        took = time.monotonic() - t0  # the whole run: on the loop, the last call would hold it 10 s
    finally:
        gate.set()
    assert isinstance(res, lw.ResultMessage)
    assert res.subtype == "error_during_execution"
    assert took < 5  # not the handler's 10 s
