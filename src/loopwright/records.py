"""Room: data types. Owns `record`, how loopwright declares its data classes; imports nothing of loopwright.

A record is a standard dataclass: `dataclasses.fields`, `replace`, `asdict` and `is_dataclass`
work on it, and its `__init__`, `__setattr__` (frozen), `__match_args__` and slots are the ones
`@dataclass` makes. Only its `__repr__`, `__eq__` and `__hash__` differ in how they are made: shared
functions over the class's field names (`operator.attrgetter`), with `@dataclass`'s semantics —
the same text, equal only to an instance of the very same class with equal fields, hashable when
frozen, unhashable when not, and a method the class body writes itself wins — instead of source
that `@dataclass` compiles per class with `exec`. On Python 3.11 each such `exec` is ~50 µs here,
and the CLI (a process per SDK or editor session) builds some 60 data classes on its way to the
first model request: about 10 ms of its start.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T", bound=type)


@overload
def record(cls: _T, /) -> _T: ...


@overload
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field,))
def record(cls: Any = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """`@record`, `@record(frozen=True)`, `@record(slots=True)`: `@dataclass` with those options."""

    def make(c: type) -> type:
        own = c.__dict__
        # As @dataclass reads the class body: a __hash__ Python set to None beside an __eq__ is not "explicit".
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        keep_repr, keep_eq = "__repr__" in own, "__eq__" in own
        out: type = dataclasses.dataclass(c, frozen=frozen, slots=slots, repr=False, eq=False)
        fields = dataclasses.fields(out)
        name = out.__qualname__
        if not keep_repr:
            _put(out, "__repr__", _repr([f.name for f in fields if f.repr]), name)
        if not keep_eq:
            _put(out, "__eq__", _eq(_values([f.name for f in fields if f.compare])), name)
        if not explicit_hash:
            if frozen:
                _put(out, "__hash__", _hash(_values([f.name for f in fields if (f.compare if f.hash is None
                                                                                  else f.hash)])), name)
            else:
                out.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable
        return out

    return make if cls is None else make(cls)


def _put(cls: type, attr: str, fn: Callable[..., Any], owner: str) -> None:
    fn.__qualname__ = f"{owner}.{attr}"
    setattr(cls, attr, fn)


def _values(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of an instance's values of `names` (as @dataclass's generated methods build it)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return lambda self: ()


def _repr(names: list[str]) -> Callable[[Any], str]:
    values = _values(names)

    @reprlib.recursive_repr()  # a record that holds itself: "...", as @dataclass's repr does
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(names, values(self), strict=True))
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__
