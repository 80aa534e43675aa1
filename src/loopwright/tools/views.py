"""Room: bases. Owns what a tool may read of its run's usage and budget (UsageView, BudgetView:
pydantic-ai's `RunContext.usage`); may import nothing of loopwright.

Apart from tools.base because only a tool that reads them needs them (`ctx.usage()`,
`ctx.ports.budget()`): a run whose model calls no such tool does not import this module (two
frozen data classes fewer on `-p`'s way to its first request, issue 41)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BudgetView", "UsageView"]


@dataclass(frozen=True, slots=True)
class UsageView:
    """What a tool may know of its run's usage so far (pydantic-ai's `RunContext.usage`): the model
    calls (`requests`) and the tokens, in the Messages API's convention (input_tokens excludes
    cache reads and writes)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Every token counted: input (cached or not) and output."""
        return (self.input_tokens + self.output_tokens + self.cache_read_input_tokens
                + self.cache_creation_input_tokens)


@dataclass(frozen=True, slots=True)  # (not a NamedTuple: its string annotations are compiled at import)
class BudgetView:
    """What a tool may know of its run's budget: the limit B (None: none) and the spend S so far."""

    limit_usd: float | None
    spent_usd: float
    exhausted: bool = False  # S >= B, or a batch's shared spend is spent: no model call may start

    @property
    def left_usd(self) -> float | None:
        return None if self.limit_usd is None else self.limit_usd - self.spent_usd
