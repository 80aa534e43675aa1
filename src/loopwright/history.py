"""Room: data types (the bottom). Owns History, the run's append-only message list, and the
read-only message containers it keeps; may import data types only.

The model is sent the whole history every call, and what the loop and the providers compute from
it is kept per message from call to call (models/http.py's PerMessage: each message's JSON once,
a 1,000-turn run's request 9.0 -> 1.7 ms; the Inv checker and the Anthropic provider's scan each
look at the messages appended since their last call). All of that holds only while nothing
already in the history changes. This module makes that a property of the type, not a convention:

- `History` is a `list` (so every reader, `json.dumps`, `result.messages` and slicing work as
  before) that refuses every in-place change (`h[i] = m`, `del h[i]`, `pop`, `insert`, `remove`,
  `clear`, `sort`, `reverse`, `*=`) with a TypeError. What the loop does besides appending is
  three named rewrites, `replace_last`, `drop_last` and `replace_all`, and each bumps
  `generation`: whatever remembers a prefix of the history starts over when it changed.
- Each message is stored as a deep read-only copy (`frozen`: `FrozenDict`/`FrozenList`, still a
  `dict`/`list` to every reader), so that editing a message already sent (its content, a block,
  a tool's input) is refused too. A cache keyed on a frozen object can therefore never serve a
  stale result; PerMessage caches only those.

Copies made of a history's messages (`copy.deepcopy`, `dict(m)`, `{**m}`, `list(c)`, a slice)
are ordinary mutable dicts and lists: a caller that wants to edit one edits its own copy.

What was found of a history's first n messages stays true while they are unchanged, so a History
keeps such facts itself (`note`, `fact`: Inv proved of them, the tokens a model counted of them)
and each rewrite drops those of the messages it changed. A conversation's next run continues
from them (`History.continuing`): its start is not a walk of the whole conversation again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn, SupportsIndex

from .blocks import Block, WireMessage

_REWRITES = "History.replace_last, drop_last or replace_all"


def _refuse(what: str) -> NoReturn:
    raise TypeError(f"a run's history is append-only: {what} is refused ({_REWRITES} say what changes; "
                    "edit a copy: copy.deepcopy(m), {**m})")


class FrozenDict(dict[str, Any]):
    """A dict of a history's message that refuses every change (a TypeError); reads as a dict."""

    __slots__ = ()

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        _refuse(f"setting [{key!r}] of a message")

    def __delitem__(self, key: str) -> NoReturn:
        _refuse(f"deleting [{key!r}] of a message")

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refuse("|= on a message")

    def clear(self) -> NoReturn:
        _refuse("clear() of a message")

    def pop(self, *args: Any) -> NoReturn:
        _refuse("pop() of a message")

    def popitem(self) -> NoReturn:
        _refuse("popitem() of a message")

    def setdefault(self, *args: Any) -> NoReturn:
        _refuse("setdefault() of a message")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse("update() of a message")

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {k: thawed(v) for k, v in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (thawed(self),))


class FrozenList(list[Any]):
    """A list of a history's message (a content list, a tool's list input) that refuses every
    change (a TypeError); reads as a list."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _refuse("setting an item of a message's list")

    def __delitem__(self, index: Any) -> NoReturn:
        _refuse("deleting an item of a message's list")

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refuse("+= on a message's list")

    def __imul__(self, n: Any) -> NoReturn:  # type: ignore[misc]
        _refuse("*= on a message's list")

    def append(self, value: Any) -> NoReturn:
        _refuse("append() to a message's list")

    def extend(self, values: Any) -> NoReturn:
        _refuse("extend() of a message's list")

    def insert(self, index: Any, value: Any) -> NoReturn:
        _refuse("insert() into a message's list")

    def pop(self, *args: Any) -> NoReturn:
        _refuse("pop() of a message's list")

    def remove(self, value: Any) -> NoReturn:
        _refuse("remove() of a message's list")

    def clear(self) -> NoReturn:
        _refuse("clear() of a message's list")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse("sort() of a message's list")

    def reverse(self) -> NoReturn:
        _refuse("reverse() of a message's list")

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [thawed(v) for v in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (thawed(self),))


_LEAVES = frozenset({str, int, float, bool, type(None), FrozenDict, FrozenList})  # (immutable, or frozen already)


def frozen(obj: Any) -> Any:
    """A deep read-only copy of a JSON-like value (dicts and lists become FrozenDict and
    FrozenList; a value already frozen is itself: freezing a history again costs nothing)."""
    t = type(obj)
    if t in _LEAVES:
        return obj
    if isinstance(obj, dict):  # (copied whole by dict's own code; only the values that are containers again)
        out = FrozenDict(obj)
        for k, v in obj.items():
            if type(v) not in _LEAVES:
                dict.__setitem__(out, k, frozen(v))
        return out
    if isinstance(obj, list):
        return FrozenList([v if type(v) in _LEAVES else frozen(v) for v in obj])
    if t is tuple:
        return tuple(frozen(v) for v in obj)
    return obj


def frozen_message(role: str, blocks: list[Block]) -> WireMessage:
    """A message of `blocks` as a History keeps it (what the loop appends each turn): each block's
    wire form frozen, in a message and a content list made read-only as they are built, not
    copied again by `frozen`'s walk (~15,000 instructions a turn of two messages less)."""
    return FrozenDict({"role": role, "content": FrozenList([frozen(b.to_wire()) for b in blocks])})


def thawed(obj: Any) -> Any:
    """A deep mutable copy of a (frozen or not) JSON-like value: plain dicts and lists."""
    if isinstance(obj, dict):
        return {k: thawed(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [thawed(v) for v in obj]
    if type(obj) is tuple:
        return tuple(thawed(v) for v in obj)
    return obj


class History(list[WireMessage]):
    """The run's history h (seed Def 3.1): appended to (`append`, `extend`, `+=`), read as a list,
    and changed otherwise only by the named rewrites, each of which bumps `generation`. Every
    message is stored frozen (see the module's docstring)."""

    __slots__ = ("generation", "_facts")

    def __init__(self, messages: Iterable[WireMessage] = ()) -> None:
        super().__init__([frozen(m) for m in messages])
        self.generation = 0  # bumped by each rewrite: a remembered prefix is valid only within one
        self._facts: dict[str, tuple[int, Any]] = {}  # key -> (n, what was found of the first n messages)

    @classmethod
    def continuing(cls, history: History, count: int, messages: Iterable[WireMessage]) -> History:
        """A new History of `history`'s first `count` messages (frozen already: not walked again)
        and `messages`: a conversation's next run. The facts of at most those `count` messages
        move to it (`history` keeps none: a conversation of many runs holds them once, not once
        per run's result)."""
        h = cls()
        list.extend(h, history[:count])
        h.extend(messages)
        h._facts = {k: f for k, f in history._facts.items() if f[0] <= count}
        history._facts = {}
        return h

    # --- facts of a prefix -------------------------------------------------------------------

    def note(self, key: str, count: int, value: Any) -> None:
        """Remember `value`, found of the first `count` messages: it is known (`fact`) while none of
        them changes (a rewrite of one drops it). `value` must not change afterwards."""
        if not 0 <= count <= len(self):
            raise ValueError(f"a fact of the first {count} messages of a history of {len(self)}")
        self._facts[key] = (count, value)

    def fact(self, key: str) -> tuple[int, Any] | None:
        """(count, value) noted under `key`, if its first `count` messages are unchanged since."""
        return self._facts.get(key)

    def _changed_from(self, index: int) -> None:
        """Messages from `index` on were rewritten: the facts of any of them go; the generation moves."""
        self._facts = {k: f for k, f in self._facts.items() if f[0] <= index}
        self.generation += 1

    # --- appending ---------------------------------------------------------------------------

    def append(self, message: WireMessage) -> None:
        """h·m: the one change the loop makes each step (stored frozen; a message frozen already,
        as the loop's are (frozen_message), as it is)."""
        # (list.append, not super(): ~2,000 instructions of the loop's two appends a turn, with the
        # frozen() call a frozen message does not need)
        list.append(self, message if type(message) is FrozenDict else frozen(message))

    def extend(self, messages: Iterable[WireMessage]) -> None:
        super().extend([frozen(m) for m in messages])

    def __iadd__(self, messages: Iterable[WireMessage]) -> History:  # type: ignore[override,misc]
        self.extend(messages)
        return self

    # --- the named rewrites ------------------------------------------------------------------

    def replace_last(self, message: WireMessage) -> None:
        """The last message replaced (the prompt's message, before it is sent, gaining context:
        hooks' additionalContext, @-mentions, an MCP prompt's expansion, a subagent's context)."""
        if not self:
            raise IndexError("replace_last on an empty history")
        super().__setitem__(-1, frozen(message))
        self._changed_from(len(self) - 1)

    def drop_last(self) -> WireMessage:
        """The last message removed and returned (a paused turn's partial answer, sent back for
        the model to continue, replaced by the whole answer)."""
        m = super().pop()
        self._changed_from(len(self))
        return m

    def replace_all(self, messages: Iterable[WireMessage]) -> None:
        """Every message replaced (compaction: the summary and the turns kept)."""
        super().__setitem__(slice(None), [frozen(m) for m in messages])
        self._changed_from(0)

    # --- refused: every other in-place change ------------------------------------------------

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _refuse("h[i] = m")

    def __delitem__(self, index: Any) -> NoReturn:
        _refuse("del h[i]")

    def __imul__(self, n: Any) -> NoReturn:  # type: ignore[misc]
        _refuse("h *= n")

    def insert(self, index: SupportsIndex, value: Any) -> NoReturn:
        _refuse("insert()")

    def pop(self, index: SupportsIndex = -1) -> NoReturn:
        _refuse("pop()")

    def remove(self, value: Any) -> NoReturn:
        _refuse("remove()")

    def clear(self) -> NoReturn:
        _refuse("clear()")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse("sort()")

    def reverse(self) -> NoReturn:
        _refuse("reverse()")

    # --- copies are plain lists --------------------------------------------------------------

    def __copy__(self) -> list[WireMessage]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[WireMessage]:
        return thawed(list(self))  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (History, (list(self),))
