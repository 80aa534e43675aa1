"""Room: loop. The usage limits' checks around a model call (limits.py owns the rules and their
bounds): before it, with the request's input forecast (seed Def 5.1); after it, with its output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..limits import UsageLimits
    from ..messages import ResultMessage
    from .run import Run


def _spent(run: Run) -> tuple[int, int, int]:
    """(requests, input tokens, output tokens) charged to the run so far (subagents' absorbed)."""
    s = run.state
    requests = len(s.budget.calls) + len(s.budget.subagent_calls) + s.summary_calls
    return requests, s.usage.total_input_tokens, s.usage.output_tokens


def before_call(run: Run, limits: UsageLimits, forecast_input: bool = True) -> ResultMessage | None:
    """The run's stop when a cap forbids the next request, else None. Without `forecast_input`
    (before compaction, which may shrink the input): only the caps already reached."""
    requests, i, o = _spent(run)
    forecast = 0
    if forecast_input and limits.forecasts:  # (the forecast only when a token cap needs it)
        c = run.compactor
        forecast = c.forecast(run.state.budget.calls, run.state.h, run._fixed_chars(), c.model_name)
    stop = limits.before_request(requests, i, o, forecast)
    return None if stop is None else run.result(stop[0], error=stop[1])


def after_call(run: Run, limits: UsageLimits) -> ResultMessage | None:
    """The run's stop when the response took it over a cap (the response is not kept), else None."""
    _, i, o = _spent(run)
    stop = limits.after_response(i, o)
    return None if stop is None else run.result(stop[0], error=stop[1])
