"""Room: models (data only). Owns the model catalog: names, aliases, prices, the cost formula; may import usage only.

The model catalog: what loopwright knows about each model family, in one table.

One row per model-id prefix: its price (USD per million tokens, see `usage.Price`), its
context window, the output limit a call asks for when the caller does not say
(`max_tokens`), and the short aliases. `normalize()` is the one way ids are compared:
provider prefixes and Bedrock/Vertex spellings are dropped, and Claude's dotted
versions match their dashed ids ("claude-opus-4.6" is "claude-opus-4-6"). For each
field, the longest matching prefix that gives it wins, so "claude-opus-4-1" beats
"claude-opus-4", and "claude" gives the defaults of every Claude model.

`cost_of(usage, model, prices)` is the one cost formula: a caller's own `prices` first,
then this table; `call_cost` is one call's cost as every room counts it (the model's own
report first). Sources: Anthropic's and OpenAI's pricing and model pages (checked 2026-11).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from ..usage import Price, Usage

ALIASES: dict[str, str] = {"sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5-5", "haiku": "claude-haiku-5-5",
                           "fable": "claude-fable-5-2"}  # (Claude Code 2.1.332's aliases)


@dataclass(frozen=True, slots=True)
class Entry:
    """One row: the fields a prefix gives (None: ask a shorter prefix)."""

    price: Price | None = None
    context_window: int | None = None
    max_output: int | None = None


_1M = 1_000_000
_P = Price.from_input
CATALOG: dict[str, Entry] = {
    # Claude: 200k context and a 16k default output unless a longer prefix says otherwise;
    # 5.x and Opus/Sonnet 4.6+ have 1M tokens (older models: 1M was an opt-in beta).
    "claude": Entry(context_window=200_000, max_output=16_384),
    "claude-opus-5-5": Entry(_P(4, 20, cache_read=0.20), _1M),
    "claude-sonnet-5-5": Entry(_P(2, 10, cache_read=0.10), _1M),
    "claude-sonnet-5": Entry(_P(2, 10, cache_read=0.20), _1M),
    "claude-haiku-5-5": Entry(_P(0.10, 0.50, cache_read=0.01, above=(100_000, _P(0.50, 2.50, cache_read=0.05))), _1M),
    "claude-haiku-5": Entry(context_window=_1M),
    "claude-fable-5-1": Entry(_P(10, 50, cache_read=0.25), _1M),
    "claude-mythos-5-1": Entry(_P(10, 50, cache_read=0.25), _1M),
    "claude-fable-5": Entry(_P(10, 50, cache_read=1.0), _1M),
    "claude-mythos-5": Entry(_P(10, 50, cache_read=1.0), _1M),
    "claude-opus-5": Entry(_P(5, 25), _1M),
    "claude-opus-4-8": Entry(_P(5, 25), _1M),
    "claude-opus-4-7": Entry(_P(5, 25), _1M),
    "claude-opus-4-6": Entry(_P(5, 25), _1M),
    "claude-opus-4-5": Entry(_P(5, 25)),
    "claude-opus-4-1": Entry(_P(15, 75)),
    "claude-opus-4": Entry(_P(15, 75)),
    "claude-sonnet-4-6": Entry(context_window=_1M),
    "claude-sonnet-4": Entry(_P(3, 15)),
    "claude-3-7-sonnet": Entry(_P(3, 15)),
    "claude-haiku-4-5": Entry(_P(1, 5)),
    "claude-3-5": Entry(max_output=8_192),
    "claude-3-5-haiku": Entry(_P(0.8, 4)),
    "claude-3-haiku": Entry(_P(0.25, 1.25), max_output=4_096),
    "claude-3-opus": Entry(max_output=4_096),
    "claude-3-sonnet": Entry(max_output=4_096),
    # OpenAI: the documented API context windows and output limits (prices vary by tier: pass prices={...}).
    "gpt-4o": Entry(context_window=128_000, max_output=16_384),
    "gpt-4.1": Entry(context_window=1_047_576, max_output=32_768),
    "gpt-5": Entry(context_window=400_000, max_output=128_000),
    "o3": Entry(context_window=200_000, max_output=100_000),
    "o4-mini": Entry(context_window=200_000, max_output=100_000),
}
# The output limit asked for on a model the catalog does not know (a local model): without one a
# weak model can write until the window is full. A known window lowers it further (loop.py).
UNKNOWN_MAX_OUTPUT = 4_096
# The price rows alone (usage.PRICES, kept for callers of the old name).
PRICES: dict[str, Price] = {k: e.price for k, e in CATALOG.items() if e.price is not None}


def normalize(model: str) -> str:
    """The id as the table spells it: lower case, no provider prefix ("anthropic:", "openai:", "responses:",
    "anthropic/", Bedrock's "us.anthropic."), Claude's dots and Vertex's "@" as dashes."""
    key = model.strip().lower()
    i = key.find("claude")
    if i >= 0:
        return key[i:].replace(".", "-").replace("@", "-")
    for prefix in ("openai:", "responses:", "anthropic:", "openai/"):
        key = key.removeprefix(prefix)
    return key


# Claude Code's variables choosing the model an alias names (a gateway's or Bedrock's id, a pinned version)
ALIAS_VARIABLES = {"sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL", "opus": "ANTHROPIC_DEFAULT_OPUS_MODEL",
                   "haiku": "ANTHROPIC_DEFAULT_HAIKU_MODEL"}


def resolve_alias(model: str) -> str:
    """"sonnet" / "opus" / "haiku" as the model id its ANTHROPIC_DEFAULT_*_MODEL variable names, else
    the current one; any other name as it is."""
    key = model.strip().lower()
    var = ALIAS_VARIABLES.get(key)
    chosen = os.environ.get(var, "").strip() if var else ""
    return chosen or ALIASES.get(key, model)


def _longest(table: Mapping[str, object], key: str, has: str | None = None) -> str | None:
    best: str | None = None
    for prefix, row in table.items():
        if key.startswith(prefix) and (best is None or len(prefix) > len(best)):
            if has is None or getattr(row, has) is not None:
                best = prefix
    return best


@lru_cache(maxsize=512)
def _field(key: str, name: str) -> object:
    best = _longest(CATALOG, key, name)
    return getattr(CATALOG[best], name) if best is not None else None


def price_for(model: str, table: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model`: from `table` (a caller's own prices, prefix-matched on normalized
    ids) when given, else from the catalog; None if unknown."""
    key = normalize(model)
    if table is not None:
        own = {normalize(k): v for k, v in table.items()}
        best = _longest(own, key)
        return own[best] if best is not None else None
    p = _field(key, "price")
    return p if isinstance(p, Price) else None


def context_window(model: str) -> int | None:
    w = _field(normalize(model), "context_window")
    return w if isinstance(w, int) else None


def max_output(model: str) -> int | None:
    """The output limit asked for when the caller gives none: one every model of the family accepts."""
    m = _field(normalize(model), "max_output")
    return m if isinstance(m, int) else None


def output_limit(model: str) -> int:
    """The output limit a call asks for when the caller gives none: the catalog's, else UNKNOWN_MAX_OUTPUT."""
    return max_output(model) or UNKNOWN_MAX_OUTPUT


def cost_of(usage: Usage, model: str, prices: Mapping[str, Price] | None = None) -> float | None:
    """USD cost of one call's `usage` at `model`'s price (`prices` first, then the catalog);
    None when the price is unknown."""
    price = (price_for(model, prices) if prices else None) or price_for(model)
    return price.cost(usage) if price is not None else None


def call_cost(usage: Usage, model: str, reported: float | None = None,
              prices: Mapping[str, Price] | None = None, priced_as: str | None = None) -> float:
    """The cost of one model call, as every room counts it: what the model reported (a model
    that knows its own cost), else `model`'s price (else `priced_as`'s: the run's model when the
    response names another), else 0 (an unknown price counts nothing)."""
    if reported is not None:
        return reported
    cost = cost_of(usage, model, prices)
    if not cost and priced_as is not None:
        cost = cost_of(usage, priced_as, prices)
    return cost or 0.0
