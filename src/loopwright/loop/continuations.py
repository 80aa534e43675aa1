"""Room: loop. Continuations: what follows an answer without tool calls (a reminder when it was cut
off at max_tokens or a structured answer is owed, a blocking Stop hook, else success) and what
follows a turn of tool calls (a StructuredOutput answer, a tool that ended the run, the budget)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..blocks import (
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    WireMessage,
    text_of,
)
from ..execute import TurnOutcome
from ..messages import (
    ResultMessage,
    UserMessage,
)
from ..models.base import ModelResponse

if TYPE_CHECKING:
    pass
from .run import Run
from .state import (
    MAX_OUTPUT_CONTINUATIONS,
    MAX_STOP_CONTINUATIONS,
    NO_OUTPUT_REMINDER,
    NO_OUTPUT_TEXT,
    OUTPUT_REMINDER,
    hook_reminder,
)
from .step import Continue, Finish


async def after_answer(run: Run, a: ModelResponse, said: WireMessage) -> Finish | Continue:
    """Step 2, done: h·a (`said`: a as the history keeps it, steps.said_message); then a
    continuation when one is owed, else the run's success.

    An answer with nothing in it (no blocks, or only blank text: model_call.sendable) is not a
    message the history can keep: the Messages API refuses an empty message anywhere but last
    ("all messages must have non-empty content except for the optional final assistant message"),
    so a next prompt, a reminder or a resume would be refused. It is not kept (h stays h), and, as
    Claude Code 2.1.332 does on the same turns, the model is asked once more (NO_OUTPUT_REMINDER, a
    user message of its own; a second empty answer right after it ends the run with an empty
    result), at most `max_empty_answer_reminders` times a run. The reader of the run sees the
    reminder as Claude Code's stream-json shows it: a synthetic user message with its bare text. For seed Def 3.1 that call is not a
    turn (t counts tool-use turns: Thm 4.1's T + 1 grows by at most that many calls, as by the
    bounded reminders after a cut-off answer), and for Prop 5.2 its a_i is 0 (nothing of it is in
    h) and its r_i the reminder."""
    s = run.state
    if not said["content"]:
        if not _reminded(s.h) and s.empty_reminders < run.deps.options.max_empty_answer_reminders:
            s.empty_reminders += 1
            s.h.append({"role": "user", "content": [{"type": "text", "text": NO_OUTPUT_REMINDER}]})
            # (persisted as it is yielded: the transcript keeps h's form, recorder.record)
            return Continue(UserMessage([TextBlock(NO_OUTPUT_TEXT)], is_synthetic=True))
    else:
        s.h.append(said)
        if a.stop_reason == "max_tokens":  # cut off: a reminder turn asks for the rest (bounded)
            return _unless(output_reminder(run, a))
    if run.structured is not None:  # owed a structured answer: a reminder turn (bounded)
        return _unless(structured_reminder(run))
    reason = await stop_hook(run)
    if reason is None:
        if run.deps.options.output_guardrails:  # (guarded.py: a rejected answer gets a bounded reminder;
            from .guarded import guard_answer  # imported by a run with guardrails only)

            return await guard_answer(run, run.result("success", a))
        return Finish(run.result("success", a))
    # the hook asked for more: in a reminder that says it is the hook's, not the user's (state.hook_reminder)
    run.state.h.append({"role": "user", "content": [{"type": "text", "text": hook_reminder("Stop", reason)}]})
    # (shown as Claude Code 2.1.332 shows it, a synthetic user message; persisted as it is yielded, marked
    # as the hook's, so a replay never shows it as the user's words)
    return Continue(UserMessage([TextBlock(f"Stop hook feedback:\n{reason}")], is_synthetic=True, hook_event="Stop"))


def after_turn(run: Run, uses: list[ToolUseBlock], b: list[Any], outcome: TurnOutcome) -> Finish | Continue:
    """After step 4: the run ends when the user interrupted, a hook stopped it, StructuredOutput took
    an answer (or failed too often), a tool ended it (a plan, headless) or subagents spent B."""
    s = run.state
    if outcome.interrupted or outcome.stop_message:
        return Finish(run.result("error_during_execution", error=outcome.stop_message or "interrupted by user"))
    if run.structured is not None and (stop := structured_outcome(run, uses, b)) is not None:
        return Finish(stop)
    if s.final is not None:  # its text is the result
        r = run.result("success")
        r.result = s.final
        return Finish(r)
    if s.budget.exhausted():
        return Finish(run.budget_stop())
    return Continue()


def _reminded(h: list[WireMessage]) -> bool:
    """Was h's last message the reminder after an empty answer (then a second one ends the run)?"""
    last = h[-1]["content"] if h and h[-1].get("role") == "user" else None
    return isinstance(last, (list, tuple)) and len(last) == 1 and last[0].get("text") == NO_OUTPUT_REMINDER


def _unless(stop: ResultMessage | None) -> Finish | Continue:
    return Continue() if stop is None else Finish(stop)


def structured_outcome(run: Run, uses: list[ToolUseBlock], results: list[Any]) -> ResultMessage | None:
    """After a turn: the run's success when StructuredOutput accepted an answer; its end when
    the model has failed too often (structured.py)."""
    from ..structured import TOOL_NAME

    s = run.structured
    assert s is not None
    if s.done:
        r = run.result("success")
        r.result, r.structured_output, r.has_structured_output = s.text(), s.value, True
        return r
    calls = {u.id for u in uses if u.name == TOOL_NAME}
    s.failures += sum(1 for b in results if isinstance(b, ToolResultBlock) and b.tool_use_id in calls and b.is_error)
    if s.failures >= s.max_failures:
        if s.rejected is not None:  # the last answer was valid, and an output guardrail rejected it
            return run.result("error_output_rejected", error=f"an output guardrail rejected the answer "
                                                               f"{s.failures} times; last: {s.rejected}")
        return run.result("error_max_structured_output_retries",
                           error=f"no valid {TOOL_NAME} call after {s.failures} tries")
    return None

def structured_reminder(run: Run) -> ResultMessage | None:
    """A final answer in text while a structured one is owed: remind once more, or stop."""
    from ..structured import REMINDER, TOOL_NAME

    s = run.structured
    assert s is not None
    s.failures += 1
    if s.failures >= s.max_failures:
        return run.result("error_max_structured_output_retries",
                           error=f"the model answered without calling {TOOL_NAME} ({s.failures} times)")
    run.state.h.append({"role": "user", "content": [{"type": "text", "text": REMINDER}]})
    run.persist_user()
    return None

def output_reminder(run: Run, a: ModelResponse) -> ResultMessage | None:
    """A final answer cut off at max_tokens: a reminder turn asks for the rest (bounded, counted
    in model_calls like every call), or the run ends with the error saying what to raise."""
    s = run.state
    if s.output_continuations >= MAX_OUTPUT_CONTINUATIONS:
        return run.result("error_during_execution", error=(
            f"the answer was cut off at max_tokens {s.output_continuations + 1} times ({s.output_continuations} "
            "continuations asked for): raise --max-tokens (AgentOptions.max_tokens) or ask for a shorter answer"))
    s.output_continuations += 1
    s.cut_off_text.append(text_of(a.content))
    s.h.append({"role": "user", "content": [{"type": "text", "text": OUTPUT_REMINDER}]})
    run.persist_user()
    return None



async def stop_hook(run: Run) -> str | None:
    """A blocking Stop hook makes the agent continue, at most `max_stop_continuations` times."""
    s, hooks = run.state, run.deps.hooks
    if not hooks.active or s.stop_continuations >= MAX_STOP_CONTINUATIONS:
        return None
    last = s.h[-1] if s.h and s.h[-1].get("role") == "assistant" else None  # its text: Stop's last_assistant_message
    text = "".join(b.get("text", "") for b in last["content"] if b.get("type") == "text") if last else None
    reason = await hooks.stop(s.stop_continuations > 0, text)
    if reason is None or s.budget.exhausted():  # the budget rule: no call starts at S >= B
        return None
    s.stop_continuations += 1
    return reason
