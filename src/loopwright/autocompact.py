"""Room: execute / invariant / context. Owns when automatic compaction is due (`AutoCompactor`:
seed Def 5.1's forecast n_{k+1} against the window W) and the window a model has; may import
data types, models.catalog, tokens and usage (types).

Apart from the compaction itself (context.py: the summarizing calls, their plan and result)
because every run asks this before each call and most never compact: a run loads context.py
only when it compacts (~5 M instructions of a `-p` start, issue 41)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .blocks import WireMessage
from .history import History
from .models.catalog import context_window
from .tokens import estimate_tokens

if TYPE_CHECKING:
    from .usage import CallUsage

DEFAULT_KEEP_TURNS = 2  # turns kept verbatim when the caller does not say


def default_context_window(model: str) -> int | None:
    """The model's context window from the model catalog (models/catalog.py), None if unknown."""
    return context_window(model)


def turn_starts(history: list[WireMessage]) -> list[int]:
    """Where turns start: the indexes of assistant messages (the only safe cut points)."""
    return [i for i, m in enumerate(history) if i > 0 and m.get("role") == "assistant"]


class AutoCompactor:
    """When automatic compaction is due (pure: the loop's Run does the compaction itself)."""

    def __init__(self, context_window: int | None, compact_threshold: float, enabled: bool, model_name: str) -> None:
        window = context_window if context_window is not None else default_context_window(model_name)
        if window is not None and window <= 0:
            raise ValueError(f"context_window must be positive, got {window}")
        if not 0 < compact_threshold <= 1:
            raise ValueError(f"compact_threshold must be in (0, 1], got {compact_threshold}")
        self.window = window
        self.threshold = compact_threshold
        self.wanted = enabled
        self.enabled = enabled and window is not None
        self.failed = False
        self.source = "options" if context_window is not None else "catalog" if window is not None else None
        self.chars_per_token = 4.0  # the estimate's; calibrated by a server's own count (learn)
        self.model_name = model_name

    def learn(self, window: int, source: str, chars_per_token: float | None = None) -> None:
        """W as a server said it ("server": asked before the first call; "error": its context-window
        error): compaction and the output limit follow it from now on."""
        self.window, self.source = window, source
        self.enabled = self.wanted
        if chars_per_token is not None:
            self.chars_per_token = min(6.0, max(1.5, chars_per_token))

    @staticmethod
    def forecast(calls: list[CallUsage], h: list[WireMessage], fixed_chars: int, model: str | None = None) -> int:
        """n_{k+1} = n_k + a_k + r_k (seed Def 5.1): the last call's measured input and output,
        plus an estimate of what was appended after its response. Before any call of this run:
        the conversation's last call when its history noted it (`measured`: the same model and
        system prompt and tool definitions, `fixed_chars` of them), else an estimate of all."""
        # the last assistant message, from the end (a step or two back: not a scan of all of h)
        last_a = next((i for i in range(len(h) - 1, -1, -1) if h[i].get("role") == "assistant"), None)
        if calls and last_a is not None:
            return calls[-1].input_tokens + calls[-1].output_tokens + estimate_tokens(h[last_a + 1:])
        fact = h.fact("measured") if not calls and model and isinstance(h, History) else None
        if fact is not None and fact[1][1:] == (model, fixed_chars):
            return int(fact[1][0]) + estimate_tokens(h[fact[0]:])
        return fixed_chars // 4 + estimate_tokens(h)

    def measured(self, calls: list[CallUsage], h: History, fixed_chars: int) -> None:
        """Note in `h` what the run's last call counted (a run's end): the next run of the
        conversation forecasts its first call from it (forecast), not from an estimate of all."""
        last_a = next((i for i in range(len(h) - 1, -1, -1) if h[i].get("role") == "assistant"), None)
        if calls and last_a is not None:
            h.note("measured", last_a + 1, (calls[-1].input_tokens + calls[-1].output_tokens, self.model_name,
                                             fixed_chars))

    def keep_turns(self, h: list[WireMessage]) -> int | None:
        """How many turns to keep: DEFAULT_KEEP_TURNS, fewer if the kept tail would be large or
        there would be nothing left to summarize; None if no turn can be summarized at all."""
        starts = turn_starts(h)
        if not starts:
            return None
        keep = min(DEFAULT_KEEP_TURNS, len(starts) - 1)
        limit = self.threshold * (self.window or 0) / 4
        while keep > 0 and estimate_tokens(h[starts[len(starts) - keep]:]) > limit:
            keep -= 1
        return keep

    def due(self, calls: list[CallUsage], h: list[WireMessage], fixed_chars: int) -> int | None:
        """The forecast when compaction is due before the next call, else None."""
        if not self.enabled or self.failed or self.window is None:
            return None
        n = self.forecast(calls, h, fixed_chars, self.model_name)
        return n if n > self.threshold * self.window else None
