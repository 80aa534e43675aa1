"""Room: data types. Owns usage, prices and the budget rule; may import nothing of loopwright.

Tokens, prices and the budget rule (seed §5: Def 5.1, Prop 5.2, Prop 5.4).

The price of each model is in the model catalog (models/catalog.py, `cost_of`).

`CallUsage` is one model call's record: n_k (all input tokens of call k, cached or
not), output tokens, cache writes and reads, and the call's cost in USD.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


def count(v: Any) -> int:
    """A reported token count as an int (None: 0). (An int as is: Python 3.11's int() costs ~600
    instructions a call, and a usage has six; type(v), not v.__class__: that read is never specialized.)
    A count that is negative or no number (a broken proxy's, a hostile server's) is 0: a negative
    one made the run's cost go down, so --max-budget-usd never tripped, and one that is no number
    ended the run (ValueError), its answer lost."""
    return v if type(v) is int and v >= 0 else _odd_count(v)


def _odd_count(v: Any) -> int:
    try:
        n = int(v or 0)
    except (TypeError, ValueError, OverflowError):  # ("abc", [1], inf, nan)
        return 0
    return n if n > 0 else 0


@dataclass(slots=True)
class Usage:
    """Token counts as the Messages API reports them (input_tokens excludes cache hits/writes)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    # split of cache_creation_input_tokens by TTL; tokens not in either count as 5m writes
    cache_creation_1h_input_tokens: int = 0
    # server tools' requests (usage.server_tool_use.web_search_requests): priced per request
    web_search_requests: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> Usage:
        """Read an API's `usage` object in the Messages API's convention (None or {}: all zero)."""
        if not d:
            return cls()
        cc = d.get("cache_creation")  # (d.get(...), not a bound `get`: Python 3.11 specializes these calls)
        stu = d.get("server_tool_use")
        return cls(
            count(d.get("input_tokens")),
            count(d.get("output_tokens")),
            count(d.get("cache_creation_input_tokens")),
            count(d.get("cache_read_input_tokens")),
            count(cc.get("ephemeral_1h_input_tokens")) if cc else 0,
            count(stu.get("web_search_requests")) if stu else 0,
        )

    def to_json(self) -> dict[str, Any]:
        """The Messages API's `usage` object (the web searches under `server_tool_use`)."""
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }
        if self.web_search_requests:
            out["server_tool_use"] = {"web_search_requests": self.web_search_requests}
        return out

    @property
    def total_input_tokens(self) -> int:
        """n_k of seed Def 5.1: everything the model read in this call."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def add(self, other: Usage) -> None:
        """Add another call's counts to these (a run's total)."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cache_creation_1h_input_tokens += other.cache_creation_1h_input_tokens
        self.web_search_requests += other.web_search_requests


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    # (threshold, price): a request whose prompt (input + cache writes + reads) is over the
    # threshold pays that price on all its tokens (e.g. Claude Haiku 5.5 above 100k tokens).
    above: tuple[int, Price] | None = None
    # USD per server-side web search request (not per million: per request)
    web_search: float = 0.0

    @classmethod
    def from_input(cls, input: float, output: float, cache_read: float | None = None,
                   above: tuple[int, Price] | None = None, web_search: float = 0.01) -> Price:
        """Anthropic's multipliers: 5-minute write 1.25x, 1-hour write 2x, read 0.1x input;
        web search $10 per 1,000 requests."""
        return cls(input, output, input * 1.25, input * 2, input * 0.1 if cache_read is None else cache_read, above,
                   web_search)

    def cost(self, u: Usage) -> float:
        """The USD cost of one call's usage at this price (the long-context tier above its threshold)."""
        if self.above is not None and u.total_input_tokens > self.above[0]:
            return self.above[1].cost(u)
        w1h = min(u.cache_creation_1h_input_tokens, u.cache_creation_input_tokens)
        w5m = u.cache_creation_input_tokens - w1h
        return (
            u.input_tokens * self.input
            + u.output_tokens * self.output
            + w5m * self.cache_write_5m
            + w1h * self.cache_write_1h
            + u.cache_read_input_tokens * self.cache_read
        ) / 1_000_000 + u.web_search_requests * self.web_search


@dataclass(slots=True)
class CallUsage:
    """One model call k: n_k, a_k (output), cache traffic and its cost (seed §5)."""

    input_tokens: int  # n_k: all input tokens of this call (fresh + cache write + cache read)
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cost_usd: float
    model: str = ""
    web_search_requests: int = 0  # server-side searches of this call (priced in cost_usd)
    price_known: bool = True  # False: no price for `model` (cost_usd counts 0; give one with --price)

    @classmethod
    def of(cls, usage: Usage, cost_usd: float, model: str = "", price_known: bool = True) -> CallUsage:
        """The record of a call that reported `usage` (n_k: everything it read, Usage.total_input_tokens)."""
        return cls(usage.total_input_tokens, usage.output_tokens, usage.cache_creation_input_tokens,
                   usage.cache_read_input_tokens, cost_usd, model, usage.web_search_requests, price_known)

    def to_json(self) -> dict[str, Any]:
        """The usage of a transcript's or stream-json's assistant line, in the Messages API's
        convention that Claude Code's readers (and `loopwright view`, `stats`, `sessions list`)
        expect: `input_tokens` without the cache reads and writes beside it, so n_k is their sum.
        (Writing n_k there counted the cached tokens twice, issue 47.)"""
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens - self.cache_creation_input_tokens - self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cost_usd": self.cost_usd,
            "model": self.model,
            **({} if self.price_known else {"price_known": False}),
        }
        if self.web_search_requests:
            out["web_search_requests"] = self.web_search_requests
        return out


class SharedSpend(Protocol):
    """Spend counted across runs against one limit (batch.py's LocalSpend and RaySpend)."""

    def add(self, usd: float) -> None: ...

    @property
    def spent_usd(self) -> float: ...

    @property
    def exhausted(self) -> bool: ...


@dataclass(slots=True, eq=False, repr=False)  # (identity: one run's mutable accounting)
class Budget:
    """The budget rule of seed Prop 5.4: add each response's cost, then compare with B."""

    limit_usd: float | None
    spent_usd: float = 0.0
    calls: list[CallUsage] = field(default_factory=list)
    subagent_calls: list[CallUsage] = field(default_factory=list)  # subagents' calls (agents.py)

    # A spend shared with other runs (a batch's, batch.py): charged with every call, and the
    # budget is exhausted when either is.
    shared: SharedSpend | None = None

    def charge(self, call: CallUsage) -> None:
        self.calls.append(call)
        self.spent_usd += call.cost_usd
        if self.shared is not None:
            self.shared.add(call.cost_usd)

    def charge_outside(self, cost_usd: float) -> None:
        """A cost that is no call of the loop's (compaction's summarizing call): it counts in S
        (and the shared spend), not in `calls` (which are the loop's context sizes n_k)."""
        self.spent_usd += cost_usd
        if self.shared is not None:
            self.shared.add(cost_usd)

    def absorb(self, sub: Budget) -> None:
        """Add a finished subagent's spending (its calls count against this budget too)."""
        self.spent_usd += sub.spent_usd
        self.subagent_calls.extend([*sub.calls, *sub.subagent_calls])

    def exhausted(self) -> bool:
        """S >= B, here or in the shared spend. (A method, not a property: Python 3.11 specializes
        a method call, never a property read, and the loop asks three times a turn.)"""
        return (self.limit_usd is not None and self.spent_usd >= self.limit_usd) or (
            self.shared is not None and self.shared.exhausted)

