"""Room: built-in tools (on tools.base). Owns ModelRetry and the output guardrails' check; may
import tools.base only.

Output guardrails (pydantic-ai's output validators, the Agents SDK's output guardrails): functions
on the run's final answer, `fn(output)` or `fn(ctx, output)` (ctx: the run's RunContext[Deps]),
sync or async, run in order. Each returns the answer to keep (a changed value replaces it; None
keeps it as it is) or rejects it by raising `ModelRetry(reason)`. A rejection becomes a bounded
reminder turn, as structured output's: the model reads the reason (as the StructuredOutput call's
is_error result, or as a user message after a text answer) and answers again; after
`AgentOptions.output_retries` reminders the run ends with `error_output_rejected` and the reason.
The retries are model calls like any other: T, the budget and the usage limits bound them too.
Input guardrails are UserPromptSubmit hooks (docs/guardrails.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from .tools.base import ToolContext

OutputGuardrail = Callable[..., Any]
DEFAULT_OUTPUT_RETRIES = 2  # reminder turns after a rejected answer: 3 answers in all, as structured output's


class ModelRetry(Exception):  # noqa: N818 - pydantic-ai's name, kept for porting
    """Raise from an output guardrail (or a tool) to reject the answer: the model reads the reason
    and tries again (bounded by AgentOptions.output_retries)."""


def reminder(reason: str) -> str:
    """What the model reads after its answer was rejected."""
    return f"Your answer was rejected: {reason}\nAnswer again, fixing this."


def _takes_ctx(fn: OutputGuardrail) -> bool:
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        return False
    return len(params) >= 2


def check_guardrails(value: Any) -> list[OutputGuardrail]:
    """AgentOptions.output_guardrails as a list of functions; anything else is a TypeError."""
    if callable(value):
        raise TypeError("output_guardrails must be a list of functions; write output_guardrails=[fn]")
    if not isinstance(value, Sequence) or isinstance(value, str) or not all(callable(f) for f in value):
        raise TypeError("output_guardrails must be a list of functions fn(output) or fn(ctx, output)")
    return list(value)


async def check_output(guardrails: Sequence[OutputGuardrail], ctx: ToolContext, output: Any) -> tuple[Any, str | None]:
    """(the answer to keep, None), or (the answer, the reason) when a guardrail rejected it."""
    for fn in guardrails:
        try:
            value = fn(ctx, output) if _takes_ctx(fn) else fn(output)
            if inspect.isawaitable(value):
                value = await value
        except ModelRetry as e:
            return output, str(e) or f"{getattr(fn, '__name__', 'a guardrail')} rejected it"
        if value is not None:
            output = value
    return output, None


__all__ = ["DEFAULT_OUTPUT_RETRIES", "ModelRetry", "OutputGuardrail", "check_guardrails", "check_output", "reminder"]
