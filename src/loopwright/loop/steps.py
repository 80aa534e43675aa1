"""Room: loop. The step loop: seed Def 3.1 (`_loop`) and run_query, which drives a Run the assembler built."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING

from ..blocks import (
    Prompt,
    blocks_to_wire,
    prompt_text,
    tool_uses,
)
from ..messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    UserMessage,
)
from ..models.base import ModelError, ModelResponse, close_model

if TYPE_CHECKING:
    pass

from .compaction import auto_compact
from .model_call import call_model, discover_window
from .relay import Relay
from .run import Run
from .state import RunError


async def _loop(run: Run) -> AsyncIterator[Message]:
    """Seed Def 3.1, step after step, until one of its stops."""
    s = run.state
    T = run.deps.options.max_turns
    while True:
        if (compaction := auto_compact(run)) is not None:          # 0. near the window W: compact h
            async for ev in compaction:
                yield ev
                if isinstance(ev, ResultMessage):                   #    (its cost reached the budget)
                    return
        if s.budget.exhausted():                                    # budget rule: no call starts at
            yield run.budget_stop()                                 #    S >= B (S shared in a batch)
            return
        a: ModelResponse | None = None
        async for ev in call_model(run):                           # 1. a = M(h)
            if isinstance(ev, ModelResponse):
                a = ev
            else:
                yield ev
        if a is None:                                               #    (compacting to fit W spent B:
            return                                                  #     its result was yielded)
        yield AssistantMessage(a.content, a.model, a.stop_reason, s.budget.calls[-1])
        if a.stop_reason == "pause_turn" and s.budget.exhausted() and not tool_uses(a.content):
            yield run.budget_stop()
            return                                                  # (the unfinished turn is not kept)
        uses = tool_uses(a.content)
        if not uses:                                                # 2. done: h·a
            s.h.append({"role": "assistant", "content": blocks_to_wire(a.content)})
            if a.stop_reason == "max_tokens":                       #    (cut off: a reminder turn asks
                stop = run.output_reminder(a)                       #     for the rest, bounded)
                if stop is not None:
                    yield stop
                    return
                continue
            if run.structured is not None:                          #    (owed a structured answer:
                stop = run.structured_reminder()                    #     a reminder turn, bounded)
                if stop is not None:
                    yield stop
                    return
                continue
            reason = await run.stop_hook()
            if reason is None:
                yield run.result("success", a)
                return
            s.h.append({"role": "user", "content": [{"type": "text", "text": reason}]})
            run.persist_user()
            continue                                                # a Stop hook asked for more
        if len(uses) > 1 and len({u.id for u in uses}) != len(uses):  # a malformed a: run nothing
            ids = [u.id for u in uses]
            raise RunError(f"model response repeats tool_use ids {sorted({i for i in ids if ids.count(i) > 1})}; nothing was run")
        if s.budget.exhausted():                                    # budget rule (Prop 5.4)
            yield run.budget_stop()
            return
        if s.t == T:                                                # 3. turn limit: h unchanged
            yield run.result("error_max_turns", error=f"reached max_turns={T}")
            return
        if run.deps.inbox is None:                                  # 4. gate + execute
            b, outcome = await run.execute(a, uses)
        else:                                                       #    (subagents' messages
            relay = Relay(run.execute(a, uses), run.deps.inbox)     #     pass on live)
            async for m in relay:
                yield m
            b, outcome = relay.value
        a_wire, b_wire = blocks_to_wire(a.content), blocks_to_wire(b)  # both, or neither
        s.h.append({"role": "assistant", "content": a_wire})
        s.h.append({"role": "user", "content": b_wire})
        s.t += 1
        if outcome.interrupted and (task := asyncio.current_task()) is not None and task.cancelling():
            # The consumer itself was cancelled (not RunControl.interrupt()): keep the
            # transcript paired, then let the cancellation go on (asyncio.timeout, TaskGroup).
            run.persist(UserMessage(b))
            raise asyncio.CancelledError
        yield UserMessage(b)
        for m in run.hook_messages():
            yield m
        if outcome.interrupted or outcome.stop_message:
            yield run.result("error_during_execution", error=outcome.stop_message or "interrupted by user")
            return
        if run.structured is not None:                              # a valid StructuredOutput call
            stop = run.structured_outcome(uses, b)                  #    ends the run at once
            if stop is not None:
                yield stop
                return
        if s.final is not None:                                     # a tool ended the run (a plan,
            r = run.result("success")                               #    headless): its text is the result
            r.result = s.final
            yield r
            return
        if s.budget.exhausted():                                    # subagents spent the rest of B
            yield run.budget_stop()
            return


def run_query(run: Run, prompt: Prompt) -> AsyncGenerator[Message, None]:
    """query() on a Run already built (assemble.build_run), inside its telemetry span."""
    return run.obs.run(run, _run_query(run, prompt))


async def _run_query(run: Run, prompt: Prompt) -> AsyncGenerator[Message, None]:
    text = prompt_text(prompt)  # what hooks and mentions read (the blocks are in h already)
    d = run.deps
    control = d.control
    try:
        await run.open_mcp()  # servers start together before the first call; they end in `finally`
        d = run.deps
        yield run.persist(run.init_message())
        discovered = await discover_window(run)
        if discovered is not None:
            yield run.persist(discovered)
        blocked = await run.start_hooks(text)
        for m in run.hook_messages():
            yield run.persist(m)
        if blocked is None and d.options.file_mentions and run.is_top:
            await run.include_mentions(text)  # `@file`s, gated as Reads (mentions.py)
        run.persist_prompt()  # before the first model call: a crash from here on can be resumed
        if blocked is not None:
            yield run.persist(run.result("error_during_execution", error=f"prompt blocked by a UserPromptSubmit hook: {blocked}"))
            return
        if d.recorder is None:  # (not persisting: the loop's messages as they come)
            async for msg in _loop(run):
                yield msg
        else:
            async for msg in _loop(run):
                yield run.persist(msg)
    except asyncio.CancelledError:
        if control is None or not control.interrupted:
            raise
        yield run.persist(run.result("error_during_execution", error="interrupted by user"))
    except (ModelError, RunError) as e:
        yield run.persist(run.result("error_during_execution", error=str(e)))
    except Exception as e:  # a harness bug or a broken model: report it, keep the history valid
        yield run.persist(run.result("error_during_execution", error=f"{type(e).__name__}: {e}"))
    finally:
        if d.mcp is not None:  # every server process ends with its run, whatever the ending
            await d.mcp.aclose()
        if d.executor.ctx.state.bash.shells:  # background shells end with their run
            from ..tools.bash import kill_all_shells

            await kill_all_shells(d.executor.ctx)
        if d.recorder is not None:
            d.recorder.close()
        if d.hooks.active:
            await d.hooks.session_end("other")
        if isinstance(d.options.model, str) or d.options.model is None:  # the run made it: close it
            with contextlib.suppress(Exception):
                await close_model(d.model)
