"""Room: loop. A turn of tool calls (seed Def 3.1 steps 3 and 4): the budget rule and the turn limit,
then the gate and the tools, their results appended to h with a (both, or neither)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ..blocks import (
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from ..execute import INTERRUPTED, TurnOutcome
from ..history import frozen_message
from ..messages import (
    Message,
    UserMessage,
)
from ..models.base import ModelResponse
from .continuations import after_turn
from .relay import Relay
from .run import Run
from .state import RunError
from .step import Finish, RunTools, Step


async def run_tools(run: Run, step: RunTools) -> tuple[list[Message], Step]:
    """Steps 3 and 4 for `step`'s tool calls: the messages they make, and what comes next.
    A coroutine, not a generator (~6,000 instructions a turn less): a run whose tools can spawn
    subagents passes their messages on live while it runs (relayed_tools)."""
    s, a, uses = run.state, step.a, step.uses
    if len(uses) > 1 and len({u.id for u in uses}) != len(uses):  # a malformed a: run nothing
        raise RunError(_repeated(uses))
    if s.budget.exhausted():  # budget rule (Prop 5.4)
        return [], Finish(run.budget_stop())
    if s.t == run.deps.options.max_turns:  # 3. turn limit: h unchanged
        return [], Finish(run.result("error_max_turns", error=f"reached max_turns={s.t}"))
    b, outcome = await execute(run, a, uses)  # 4. gate + execute
    results = frozen_message("user", b)  # a and b: both, or neither (a as the model said it: steps.said_message)
    s.h.append(step.said)
    s.h.append(results)
    s.t += 1
    if outcome.interrupted and (task := asyncio.current_task()) is not None and task.cancelling():
        # The consumer itself was cancelled (not RunControl.interrupt()): keep the
        # transcript paired, then let the cancellation go on (asyncio.timeout, TaskGroup).
        run.persist(UserMessage(b))
        raise asyncio.CancelledError
    out: list[Message] = [UserMessage(b), *run.hook_messages()]
    if (switch := run.deps.handoffs) is not None:
        # (imported here: only a run with handoffs needs it; start-up, issue 41)
        from .handoff import apply_handoff

        if (handoff := apply_handoff(run, switch)) is not None:
            out.append(handoff)  # the next call is the target agent's (its system prompt, tools and model)
    return out, after_turn(run, uses, b, outcome)


def _repeated(uses: list[ToolUseBlock]) -> str:
    ids = [u.id for u in uses]
    return f"model response repeats tool_use ids {sorted({i for i in ids if ids.count(i) > 1})}; nothing was run"


async def relayed_tools(run: Run, step: RunTools) -> AsyncIterator[Message | Step]:
    """run_tools for a run whose tools can spawn subagents: their messages passed on live while
    the tools run (in a Relay's task), then the turn's. The second path stays by issue 41's rule
    (above 1 % of the CLI's per-turn gap): the task and the iterator cost ~90,000 instructions a
    turn more than awaiting the turn in place (211,000 -> 301,500, `bench/bench_instructions.py
    --paths`), ~2 % of the gap (~4.6 M instructions a turn of Read); a run without an inbox
    awaits run_tools."""
    assert run.deps.inbox is not None
    relay = Relay(run_tools(run, step), run.deps.inbox)
    async for m in relay:
        yield m
    messages, next_step = relay.value
    for m in messages:
        yield m
    yield next_step


async def execute(run: Run, a: ModelResponse, uses: list[ToolUseBlock]) -> tuple[list[Any], TurnOutcome]:
    """Step 4: one result per tool_use, in order, then any queued user text."""
    control, executor = run.deps.control, run.deps.executor
    run.state.cut_off_text.clear()  # a cut-off answer went on with tool calls: not the final answer
    # Under a RunControl the tools run in a task of their own, so interrupt() cancels just them;
    # without one nothing can interrupt and they are awaited in place (the second path and its
    # figure: loop/stream.py, ~4 % of the CLI's per-turn gap with the stream's task).
    if control is None:  # (a call cut off at max_tokens is answered with CUT_OFF: models/base.py)
        outcome = await executor.run(uses)
    elif control.interrupted:  # interrupted between the model call and its tools: run none
        outcome = TurnOutcome([ToolResultBlock(u.id, INTERRUPTED, True) for u in uses], interrupted=True)
    else:
        task = asyncio.ensure_future(executor.run(uses))
        control._task = task
        try:
            outcome = await task
        finally:
            control._task = None
    run.state.denials.extend(outcome.denials)
    b: list[Any] = outcome.results
    hooks, hooked = run.deps.hooks, executor.hooked  # (hooks.active, known once: its registry is frozen)
    if hooked and not outcome.interrupted and outcome.stop_message is None:  # PostToolBatch
        calls = [{"tool_name": u.name, "tool_input": u.input, "tool_use_id": u.id,
                  "tool_response": r.content if isinstance(r.content, str) else [x.to_wire() for x in r.content]}
                 for u, r in zip(uses, outcome.results, strict=True)]
        said = await hooks.post_tool_batch(calls)
        if said:
            b = [*b, TextBlock(said)]
    if hooked and outcome.results:
        late = hooks.take_late()  # `async` hooks that exited meanwhile: with the last result, as Claude Code
        if late:
            i = len(outcome.results) - 1  # (b begins with the results)
            r = b[i]
            r = ToolResultBlock(r.tool_use_id, f"{r.content}\n\n{late}" if isinstance(r.content, str)
                                else [*r.content, TextBlock(late)], r.is_error, r.extra, r.details)
            b = [*b[:i], r, *b[i + 1:]]
    # Text sent during calls the user interrupted stays queued: the client delivers it as the
    # next prompt, as after an interrupted model call (here the model would never read it).
    if run.memory is not None:
        b = [*b, *run.nested_memory(uses)]
    if control is not None and not outcome.interrupted and control.queued:
        b = [*b, *(TextBlock(q) for q in control.take_queued())]
    return b, outcome
