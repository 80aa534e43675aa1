"""Room: execute / invariant / context. Owns Inv (P1-P3) and its checks; may import
data types only.

The pairing invariant Inv of seed Def 3.3 (P1-P3), checked before every model call.

`InvariantChecker` is incremental: it remembers how much of the history it has already
verified, so each check costs time proportional to the messages added since the last one,
never to the whole history. That holds for a run's History (history.py: append-only, each
rewrite bumping its `generation`, which starts the check over); a plain list is checked whole.
What a run verified is noted in its History (`note`: History.note, a fact of the messages it
covers, dropped by a rewrite of one of them): a conversation's next run, continuing that History
(History.continuing), checks only what was appended after it.
"""

from __future__ import annotations

from typing import Any

from .blocks import WireMessage
from .history import History


class InvariantViolation(AssertionError):
    """Inv does not hold: a harness bug. The offending history never reaches a model."""


def _check_pair(i: int, content: list[Any] | tuple[()], pending: list[str]) -> None:
    """(P2)/(P3) for message i: its first q blocks answer `pending` in order; no other results."""
    q = len(pending)
    for j, b in enumerate(content):
        if isinstance(b, dict) and b.get("type") == "tool_result":
            if j >= q:
                raise InvariantViolation(f"(P3) message {i}: stray tool_result at block {j}")
            if b.get("tool_use_id") != pending[j]:
                raise InvariantViolation(
                    f"(P2) message {i}: block {j} answers {b.get('tool_use_id')!r}, expected {pending[j]!r}"
                )
        elif j < q:
            raise InvariantViolation(f"(P2) message {i}: block {j} should be the tool_result for {pending[j]!r}")
    if len(content) < q:
        raise InvariantViolation(f"(P2) message {i}: tool_use ids {pending[len(content):]} have no tool_result")


def _assistant_uses(i: int, content: list[Any] | tuple[()], pending: list[str]) -> list[str]:
    """(P2)/(P3) for assistant message i: nothing left unanswered before it, no tool_result in it;
    the ids of its tool_use blocks, which the next message must answer (one look at each block)."""
    if pending:
        raise InvariantViolation(f"(P2) message {i}: tool_use ids {pending} are not followed by a user message")
    ids = []
    for b in content:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind == "tool_use":
            ids.append(b["id"])
        elif kind == "tool_result":
            raise InvariantViolation(f"(P3) message {i}: tool_result in an assistant message")
    return ids


class InvariantChecker:
    """Checks Inv on a growing message list in time proportional to what was appended."""

    __slots__ = ("_checked", "_pending", "_h", "_generation", "tool_ids")

    def __init__(self) -> None:
        self._checked = 0  # messages already verified
        self._pending: list[str] = []  # tool_use ids the next message must answer
        self._h: Any = None  # the History verified so far, at `_generation` (history.py)
        self._generation: int | None = None
        # The tool_use ids of the history verified last, collected on the same walk: the Messages
        # API refuses a request whose tool_use ids repeat, so the loop gives a call whose id the
        # history already has a fresh one (loop/model_call.py) without walking h each turn.
        self.tool_ids: set[str] = set()

    def reset(self) -> None:
        """Forget what was verified (after the history is replaced: compaction, rewind, resume)."""
        self._checked = 0
        self._pending = []
        self.tool_ids = set()

    def check(self, h: list[WireMessage]) -> None:
        """Raise InvariantViolation unless h satisfies Inv."""
        n = len(h)
        gen = getattr(h, "generation", None)  # (None: a plain list, which may have changed anywhere)
        if gen is None or h is not self._h or gen != self._generation:
            self.reset()  # (not the History verified so far, or rewritten since: from the start)
            self._h, self._generation = h, gen
            proved = h.fact("inv") if isinstance(h, History) else None  # (what a run before verified of it)
            if proved is not None:
                self._checked, (pending, ids) = proved[0], proved[1]
                self._pending, self.tool_ids = list(pending), set(ids)
        if n == 0:
            raise InvariantViolation("(P1) the history is empty")
        pending = self._pending
        for i in range(self._checked, n):
            m = h[i]
            role = m.get("role")
            content = m.get("content")
            blocks = content if isinstance(content, list) else ()
            if role == "user":
                _check_pair(i, blocks, pending)
                pending = []
            elif role == "assistant" and i:
                pending = _assistant_uses(i, blocks, pending)
                if pending:
                    self.tool_ids.update(pending)
            elif i == 0:
                raise InvariantViolation("(P1) the first message must be a user message")
            else:
                raise InvariantViolation(f"message {i}: role must be 'user' or 'assistant', got {role!r}")
        self._checked = n
        self._pending = pending
        if h[-1].get("role") != "user":
            raise InvariantViolation("(P1) the last message must be a user message")


    def note(self, h: list[WireMessage]) -> None:
        """Note in `h` (a History) what was verified of it: its next run starts from there."""
        if isinstance(h, History) and self._h is h and self._generation == h.generation:
            h.note("inv", self._checked, (tuple(self._pending), frozenset(self.tool_ids)))


def check(h: list[WireMessage]) -> None:
    """Check Inv on a whole history (raises InvariantViolation)."""
    InvariantChecker().check(h)


def holds(h: list[WireMessage]) -> bool:
    try:
        check(h)
    except InvariantViolation:
        return False
    return True


def holds_final(h: list[WireMessage]) -> bool:
    """Inv for a run's final history: either h itself, or h·a with `a` a closing assistant
    message (no tool_use, no tool_result) after a history that satisfies Inv."""
    if h and h[-1].get("role") == "assistant":
        content = h[-1].get("content")
        if not isinstance(content, list) or any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            return False
        return holds(h[:-1])
    return holds(h)
