"""Room: loop. The step loop: seed Def 3.1 (`_loop`) and run_query, which drives a Run the assembler built."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from ..blocks import (
    Prompt,
    ToolUseBlock,
    WireMessage,
    prompt_text,
    tool_uses,
)
from ..history import frozen_message
from ..messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    SystemMessage,
)
from ..models.base import ModelError, ModelResponse, api_key_source, close_model
from .caps import after_call, before_call
from .compaction import auto_compact
from .continuations import after_answer
from .model_call import call_model, discover_window
from .prompt import expand_command, include_mentions, mcp_prompt, prompt_stopped, start_hooks
from .run import Run
from .state import RunDeps, RunError
from .step import Continue, Finish, RunTools, Step
from .turn import relayed_tools, run_tools
from .watch import between_steps, watching

if TYPE_CHECKING:
    from ..event_types import InitData


async def _loop(run: Run) -> AsyncIterator[Message]:
    """Seed Def 3.1 (§9.1's run_loop): a = M(h), then its tool calls, each step saying what comes
    next, until one of its stops."""
    step: Step = Continue()
    while not isinstance(step, Finish):
        if isinstance(step, RunTools) and run.deps.inbox is None:  # 3 and 4: their messages, what comes next
            messages, step = await run_tools(run, step)
            for m in messages:
                yield m
            continue
        phase = relayed_tools(run, step) if isinstance(step, RunTools) else _call(run)  # (subagents: relay.py)
        async for ev in phase:
            if isinstance(ev, ModelResponse):  # 2. what a asks for comes next
                said = said_message(ev)  # (before anyone holds a's blocks: the caller, the hooks, the tools)
                if ev.content:  # (an answer with nothing in it is neither shown nor kept: continuations.py)
                    yield AssistantMessage(ev.content, ev.model, ev.stop_reason, run.state.budget.calls[-1])
                step = await _answered(run, ev, said)
                if not isinstance(step, RunTools):  # what the Stop hooks said (a systemMessage, a failure)
                    if isinstance(step, Continue) and step.shown is not None:  # (the empty answer's reminder)
                        yield step.shown
                    for m in run.hook_messages():
                        yield m
            elif isinstance(ev, (Finish, Continue, RunTools)):
                step = ev
            else:
                yield ev
    if step.result is not None:
        yield step.result


def _call(run: Run) -> AsyncIterator[Any]:
    """Steps 0 and 1: h compacted near W, the budget rule, then a = M(h) (its events, then a).
    Most steps have no step 0 to run (no usage cap, h far from W, budget left, no watched files):
    the model call's generator is the step's only one."""
    compaction = auto_compact(run)  # 0. near the window W: h's compaction (not started yet)
    if (compaction is None and run.deps.options.usage_limits is None and not run.state.budget.exhausted()
            and not watching(run)):
        return call_model(run)
    return _then_call(run, _step_zero(run, compaction))


async def _then_call(run: Run, before: AsyncIterator[Message | Finish]) -> AsyncIterator[Any]:
    async for ev in before:
        yield ev
        if isinstance(ev, Finish):
            return
    async for ev in call_model(run):
        yield ev


async def _answered(run: Run, a: ModelResponse, said: WireMessage) -> Step:
    """Step 2: a's tool calls run next; else h·a (`said`: a as the history keeps it), and a
    continuation or the run's end (continuations.py). Over a usage cap, or a paused turn at the
    budget, the run ends."""
    uses = tool_uses(a.content)
    if (stop := _stop_after_call(run, a, uses)) is not None:
        return Finish(stop)
    return RunTools(a, uses, said) if uses else await after_answer(run, a, said)


def said_message(a: ModelResponse) -> WireMessage:
    """`a` as the history keeps it: a read-only copy taken as the response comes, before it is
    persisted and yielded. a's blocks are the caller's, the hooks' and the tools' to read, and a
    tool call's input may be edited in place by any of them (a handler, a PreToolUse hook, the
    can_use_tool callback, the program reading the messages); the history, the next request, the
    transcript and `result.messages` still say what the model said (issue 41)."""
    return frozen_message("assistant", a.content)


async def _step_zero(run: Run, compaction: AsyncIterator[Message] | None) -> AsyncIterator[Message | Finish]:
    """Step 0, h compacted when near W, then the budget rule and the caps; a Finish ends the step."""
    if (stop := _capped(run, forecast_input=False)) is not None:
        yield Finish(stop)  # (a cap already reached: no compaction's summary call either; caps.py)
        return
    if compaction is not None:
        async for ev in compaction:
            yield ev
            if isinstance(ev, ResultMessage):  # (its cost reached the budget: yielded)
                yield Finish()
                return
    if (stop := _stop_before_call(run)) is not None:
        yield Finish(stop)
        return
    if watching(run):  # settings files and watched files changed since the last step (watch.py)
        async for m in between_steps(run):
            yield m


def _stop_before_call(run: Run) -> ResultMessage | None:
    """The budget rule (no call starts at S >= B, S shared in a batch), then the caller's usage
    limits (caps.py, limits.py: None unless the caller set some)."""
    if run.state.budget.exhausted():
        return run.budget_stop()
    return _capped(run)


def _stop_after_call(run: Run, a: ModelResponse, uses: list[ToolUseBlock]) -> ResultMessage | None:
    """Over a usage cap (a is not kept, as a turn over the budget), or a paused turn that reached
    the budget (the unfinished turn is not kept)."""
    limits = run.deps.options.usage_limits  # (caps.py, limits.py: None unless the caller set some)
    if limits is not None and (stop := after_call(run, limits)) is not None:
        return stop
    if a.stop_reason == "pause_turn" and run.state.budget.exhausted() and not uses:
        return run.budget_stop()
    return None


def _capped(run: Run, forecast_input: bool = True) -> ResultMessage | None:
    """The stop a usage limit's cap says before the next request (caps.py), if the caller set any."""
    limits = run.deps.options.usage_limits
    return before_call(run, limits, forecast_input) if limits is not None else None


def run_query(run: Run, prompt: Prompt) -> AsyncGenerator[Message, None]:
    """query() on a Run already built (assemble.build_run), inside its telemetry span."""
    return run.obs.run(run, _run_query(run, prompt))


async def _run_query(run: Run, prompt: Prompt) -> AsyncGenerator[Message, None]:
    text = prompt_text(prompt)  # what hooks and mentions read (the blocks are in h already)
    control, d = run.deps.control, run.deps
    try:
        await run.open_mcp()  # servers start together before the first call; they end in `finally`
        d = run.deps
        await mcp_prompt(run)  # `/mcp__server__prompt`: the MCP prompt's messages (prompt.py)
        yield run.persist(_init_message(run))
        discovered = await discover_window(run)
        if discovered is not None:
            yield run.persist(discovered)
        stop, blocked = await start_hooks(run, text), None
        if isinstance(stop, str):  # an earlier hook's `continue: false` (Setup's)
            stop, blocked = None, f"prompt blocked by a UserPromptSubmit hook: {stop}"
        elif stop is None:  # a custom command or an MCP prompt expands (UserPromptExpansion, inline shell)
            stop, notes = await expand_command(run)
            for m in notes:
                yield run.persist(m)
        for m in run.hook_messages():
            yield run.persist(m)
        if stop is not None:  # a hook or the expansion stopped it: Claude Code's outcome (prompt.py)
            for ended in prompt_stopped(run, stop):
                yield ended
            return
        if blocked is None and d.options.file_mentions and run.is_top:
            await include_mentions(run, text)  # `@file`s, gated as Reads (mentions.py)
        run.persist_prompt()  # before the first model call: a crash from here on can be resumed
        if blocked is not None:
            yield run.persist(run.result("error_during_execution", error=blocked))
            return
        display = run.display()  # MessageDisplay hooks: what the caller is shown (loop/display.py)
        async for msg in _loop(run):
            msg = run.persist(msg)  # (the transcript keeps the original)
            yield msg if display is None else await display.shown(msg)
    except asyncio.CancelledError:
        if control is None or not control.interrupted:
            raise
        yield run.persist(run.result("error_during_execution", error="interrupted by user"))
    except Exception as e:
        yield run.persist(await _failed(run, e))
    finally:
        await _close(d)


async def _failed(run: Run, e: Exception) -> ResultMessage:
    """The result of a run a model error or a RunError ended (after the StopFailure hook), or
    a harness bug or a broken model: reported, the history kept valid."""
    if isinstance(e, ModelError) and run.deps.hooks.active:  # StopFailure: the turn ended on a model error
        await run.deps.hooks.stop_failure(_error_kind(e.status), str(e))
    if isinstance(e, ModelError):
        r = run.result("error_during_execution", error=str(e))
        r.api_error, r.api_error_status = True, e.status
        return r
    if isinstance(e, RunError):
        return run.result("error_during_execution", error=str(e))
    return run.result("error_during_execution", error=f"{type(e).__name__}: {e}")


def _init_message(run: Run) -> SystemMessage:
    """The run's first message: its session, model, tools, limits, and what it loaded or left out."""
    d = run.deps
    data: InitData = {
        "session_id": d.session_id, "model": d.model.name, "cwd": str(d.cwd),
        "tools": list(d.tools), "permission_mode": d.permission_mode,
        "max_turns": d.options.max_turns, "max_budget_usd": d.options.max_budget_usd,
        "apiKeySource": api_key_source(d.model),
    }
    if run.memory is not None:
        data["memory_files"] = run.memory.describe()
    if run.warnings:
        data["warnings"] = run.warnings
    out: dict[str, Any] = dict(data)
    if d.mcp is not None:
        out["mcp_servers"] = d.mcp.status()
    if run.trust.ignored:  # workspace trust (trust/): what this run left out
        out["trust"] = run.trust.to_json()
    return SystemMessage("init", out)


async def _close(d: RunDeps) -> None:
    """What a run holds ends with it, whatever the ending: its MCP servers, background shells,
    transcript, handoffs' models, the SessionEnd hook, and the model the run made."""
    if d.mcp is not None:
        await d.mcp.aclose()
    if d.executor.ctx.state.bash.shells:
        from ..tools.bash import kill_all_shells

        await kill_all_shells(d.executor.ctx)
    if d.recorder is not None:
        d.recorder.close()
    if d.handoffs is not None:  # the models its handoffs made (handoffs.py)
        await d.handoffs.aclose()
    if d.hooks.active:
        await d.hooks.session_end("other")
    if isinstance(d.options.model, str) or d.options.model is None:  # the run made it: close it
        with contextlib.suppress(Exception):
            await close_model(d.model)


def _error_kind(status: int | None) -> str:
    """A model error as Claude Code's StopFailure `error` (what its matchers match)."""
    return {401: "authentication_failed", 403: "authentication_failed", 402: "billing_error", 429: "rate_limit",
            400: "invalid_request", 413: "invalid_request"}.get(status or 0,
                                                                 "server_error" if (status or 0) >= 500 else "unknown")
