"""Room: data types. Owns UsageLimits; may import nothing of loopwright.

Usage limits (pydantic-ai's UsageLimits, same field names): caps on a run's model requests and
tokens, beside max_turns (T) and max_budget_usd (B). Each stops the run with its own result
subtype. Where each is checked, and the bound it keeps (tests/loop/test_usage_limits.py proves
them as hypothesis properties over random runs):

- `request_limit` R: no request starts once R were made. Bound: requests <= R, exactly.
- `input_tokens_limit` L_in: before a request, its input n^ is forecast (seed Def 5.1:
  n_{k+1} = n_k + a_k + r_k, the last call's measured input and output plus an estimate of what
  was appended since; before the first call, an estimate); it does not start when
  I + n^ > L_in. Bound: I <= L_in + (n_k - n^_k) for the last request k, i.e. I <= L_in when
  the provider counts as it did for the call before (the forecast is then exact, Prop 5.2).
- `output_tokens_limit` L_out: unknown before the response, so checked after it (and no request
  starts at O >= L_out). Bound, as the budget's Prop 5.4: O < L_out + o_k, o_k the last
  response's output (at most its max_tokens). A response that took O over L_out is not kept.
- `total_tokens_limit` L_tot (I + O): before a request as the input's (I + O + n^ > L_tot: it
  does not start), after the response as the output's. Bound: I + O <= L_tot + o_k + (n_k - n^_k).

Requests and tokens are every model call charged to the run: its own, compaction summaries, a
tool's own calls (WebFetch), and subagents' once their turn ends (a subagent enforces the same
limits on its own calls). The caps already reached are checked before a compaction too, so no
summary call starts past them (its input is not forecast: a compaction is there to shrink it).
Checked only when set: a run without limits does not pay for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LimitSubtype = Literal["error_max_requests", "error_max_input_tokens", "error_max_output_tokens",
                       "error_max_total_tokens"]

_FIELDS = ("request_limit", "input_tokens_limit", "output_tokens_limit", "total_tokens_limit")


@dataclass(frozen=True, slots=True)
class UsageLimits:
    """Caps on a run's model requests and tokens (None: no cap). `AgentOptions(usage_limits=...)`."""

    request_limit: int | None = None
    input_tokens_limit: int | None = None
    output_tokens_limit: int | None = None
    total_tokens_limit: int | None = None

    def __post_init__(self) -> None:
        for name in _FIELDS:
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise ValueError(f"UsageLimits.{name} must be a non-negative integer or None, got {v!r}")

    def before_request(self, requests: int, input_tokens: int, output_tokens: int,
                       forecast: int) -> tuple[LimitSubtype, str] | None:
        """The cap that forbids the next request (its input forecast at `forecast` tokens), or None."""
        if self.request_limit is not None and requests >= self.request_limit:
            return "error_max_requests", f"reached request_limit={self.request_limit} ({requests} requests)"
        if self.input_tokens_limit is not None and input_tokens + forecast > self.input_tokens_limit:
            return "error_max_input_tokens", (
                f"the next request's ~{forecast} input tokens would take the run's {input_tokens} over "
                f"input_tokens_limit={self.input_tokens_limit}")
        if self.output_tokens_limit is not None and output_tokens >= self.output_tokens_limit:
            return "error_max_output_tokens", (
                f"reached output_tokens_limit={self.output_tokens_limit} ({output_tokens} output tokens)")
        total = input_tokens + output_tokens
        if self.total_tokens_limit is not None and total + forecast > self.total_tokens_limit:
            return "error_max_total_tokens", (
                f"the next request's ~{forecast} input tokens would take the run's {total} tokens over "
                f"total_tokens_limit={self.total_tokens_limit}")
        return None

    def after_response(self, input_tokens: int, output_tokens: int) -> tuple[LimitSubtype, str] | None:
        """The cap a response took the run over (its output could not be known before), or None."""
        if self.output_tokens_limit is not None and output_tokens > self.output_tokens_limit:
            return "error_max_output_tokens", (
                f"{output_tokens} output tokens exceed output_tokens_limit={self.output_tokens_limit}")
        total = input_tokens + output_tokens
        if self.total_tokens_limit is not None and total > self.total_tokens_limit:
            return "error_max_total_tokens", f"{total} tokens exceed total_tokens_limit={self.total_tokens_limit}"
        if self.input_tokens_limit is not None and input_tokens > self.input_tokens_limit:
            return "error_max_input_tokens", (
                f"{input_tokens} input tokens exceed input_tokens_limit={self.input_tokens_limit}")
        return None

    @property
    def forecasts(self) -> bool:
        """Whether a check before a request needs the request's input forecast."""
        return self.input_tokens_limit is not None or self.total_tokens_limit is not None


__all__ = ["LimitSubtype", "UsageLimits"]
