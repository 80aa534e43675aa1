"""Room: loop. A text answer through the output guardrails (guardrails.py owns them): kept, or a
bounded reminder turn with the rejection's reason, or the run's end with error_output_rejected."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .step import Continue, Finish

if TYPE_CHECKING:
    from ..messages import ResultMessage
    from .run import Run


async def guard_answer(run: Run, success: ResultMessage) -> Finish | Continue:
    """The success `success` if every guardrail keeps its answer (a changed one replaces its
    text), else a reminder turn; after output_retries reminders, the run's end."""
    from ..guardrails import DEFAULT_OUTPUT_RETRIES, check_output, reminder

    o, s = run.deps.options, run.state
    output, reason = await check_output(o.output_guardrails, run.deps.executor.ctx, success.result or "")
    if reason is None:
        success.result = output if isinstance(output, str) else str(output)
        return Finish(success)
    retries = DEFAULT_OUTPUT_RETRIES if o.output_retries is None else o.output_retries
    if s.output_rejections >= retries:
        return Finish(run.result("error_output_rejected", error=(
            f"an output guardrail rejected the answer {s.output_rejections + 1} times; last: {reason}")))
    s.output_rejections += 1
    s.cut_off_text.clear()  # (an answer continued after max_tokens: the whole of it was rejected)
    s.h.append({"role": "user", "content": [{"type": "text", "text": reminder(reason)}]})
    run.persist_user()
    return Continue()
