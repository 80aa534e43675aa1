"""Room: loop. Compaction of a running loop: step 0 when the next input is forecast near the
window W, and on demand (a window overflow); context.py holds the pure operation (imported when
a run compacts: most runs never do, issue 41)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..autocompact import DEFAULT_KEEP_TURNS
from ..messages import (
    Message,
    SystemMessage,
)
from ..models.base import ModelRequest, ModelResponse
from .run import Run
from .stream import stream

if TYPE_CHECKING:
    from ..context import CompactResult, SummaryPlan


def auto_compact(run: Run) -> AsyncIterator[Message] | None:
    """The loop's step 0: the compaction of h when the next call's input is forecast above
    threshold * W, else None (most steps: nothing to iterate, not even an empty iterator)."""
    c, h = run.compactor, run.state.h
    if not c.enabled or c.failed:  # (before the forecast)
        return None
    n = c.due(run.state.budget.calls, h, run._fixed_chars())
    if n is None:
        return None
    keep = c.keep_turns(h)
    if keep is None:
        return None
    return compact(run, "auto", keep_last_turns=keep, extra={"forecast_tokens": n, "context_window": c.window})


async def compact(run: Run, trigger: str, *, keep_last_turns: int = DEFAULT_KEEP_TURNS,
                  instructions: str | None = None, extra: dict[str, Any] | None = None
                  ) -> AsyncIterator[Message]:
    """Compact the running loop's history: PreCompact hook, the summarizing call (interruptible,
    charged), then h replaced, Inv's checker reset and compact_boundary yielded (the session
    recorder saves the new h with it). Ends the run with error_max_budget_usd if its cost
    reached B (a ResultMessage, the last message yielded)."""
    from ..context import CompactError, plan_summary

    s, hooks = run.state, run.deps.hooks
    if hooks.active:
        blocked = await hooks.pre_compact(trigger, instructions or "")
        for m in run.hook_messages():
            yield m
        if blocked is not None:
            yield SystemMessage("compact_error", {"trigger": trigger, "error": f"blocked by a PreCompact hook: {blocked}"})
            return
    c = run.compactor
    told = c.window if c.source in ("server", "error") else None  # a window a server told: must fit
    try:  # when h exceeds it, one summarizing call per chunk that fits
        plan = plan_summary(s.h, keep_last_turns, instructions, told, c.chars_per_token)
    except CompactError as e:
        yield SystemMessage("compact_error", {"trigger": trigger, "error": str(e)})
        return
    summary = _Summary(run, trigger)
    async for ev in summary.made(plan):
        yield ev
    if summary.result is None:
        if trigger == "auto":
            c.failed = True
        yield SystemMessage("compact_error", {"trigger": trigger, "error": summary.error})
    else:
        async for msg in _replaced(run, trigger, summary.result, {"calls": len(plan.chunks), **(extra or {})}):
            yield msg
    if summary.charged and s.budget.exhausted():  # the budget rule: this response counts like any other
        yield run.result("error_max_budget_usd",
                         error=f"spent ${s.budget.spent_usd:.4f} of ${s.budget.limit_usd} (compaction)")


async def _replaced(run: Run, trigger: str, result: CompactResult, data: dict[str, Any]) -> AsyncIterator[Message]:
    """h replaced by the compacted history (Inv's checker reset), compact_boundary, then PostCompact."""
    s, hooks = run.state, run.deps.hooks
    s.h.replace_all(result.history)  # (a rewrite: its generation tells the caches and Inv's checker)
    s.inv.reset()
    yield SystemMessage("compact_boundary", {**result.boundary_data(trigger), **data})
    if hooks.active:  # PostCompact, with the summary
        await hooks.post_compact(trigger, result.summary)
        for m in run.hook_messages():
            yield m


class _Summary:
    """One compaction's summarizing calls: interruptible (h intact), charged outside the loop's
    calls; what they made of h (`result`), or why not (`error`)."""

    def __init__(self, run: Run, trigger: str) -> None:
        self.run, self.trigger = run, trigger
        self.charged = False
        self.result: CompactResult | None = None
        self.error: str | None = None

    def call(self, req: ModelRequest) -> AsyncIterator[Any]:  # interrupt() cancels it, h intact
        run = self.run
        return run.obs.model_call(run, req, stream(run, req), charged=False, purpose=f"compact_{self.trigger}")

    def charge(self, response: ModelResponse) -> float:
        """The summarizing calls count in usage and cost, not in the loop's calls (context.py)."""
        s = self.run.state
        s.usage.add(response.usage)
        s.summary_calls += 1  # (a request all the same: usage limits count it, caps.py)
        cost = self.run.cost(response)
        s.budget.charge_outside(cost)
        self.charged = True
        return cost

    async def made(self, plan: SummaryPlan) -> AsyncIterator[Message]:
        """Run the plan's calls: their api_retry messages (partial StreamEvents of the summary
        are not shown); any failure leaves h as it was (CancelledError passes)."""
        from ..context import CompactError, CompactResult, summarize

        s = self.run.state
        t0 = time.perf_counter()
        try:
            async for ev in summarize(s.h, plan, self.call, self.charge):
                if isinstance(ev, CompactResult):
                    self.result = ev
                elif isinstance(ev, SystemMessage):
                    yield ev
        except CompactError as e:
            self.error = str(e)
        except Exception as e:  # noqa: BLE001 - any failure leaves h as it was (CancelledError passes)
            self.error = f"the summarizing call failed: {type(e).__name__}: {e}"
        finally:
            s.api_seconds += time.perf_counter() - t0
