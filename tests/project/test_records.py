"""records.record is @dataclass with shared __repr__, __eq__ and __hash__: the same class built
both ways behaves the same, over arbitrary fields, options, values and class bodies."""

from __future__ import annotations

import dataclasses
import math
import pickle
from dataclasses import field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.records import record

NAMES = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), unique=True, max_size=5)
FLAGS = st.fixed_dictionaries({"repr": st.booleans(), "compare": st.booleans(), "hash": st.sampled_from([None, True, False])})
VALUES = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none(), st.just(math.nan),
                   st.lists(st.integers(0, 2), max_size=2).map(tuple))


def build(maker: Any, names: list[str], flags: list[dict[str, Any]], body: dict[str, Any]) -> type:
    ns: dict[str, Any] = {"__annotations__": {n: "Any" for n in names}, **body}
    for n, f in zip(names, flags, strict=True):
        ns[n] = field(default=None, **f)
    return maker(type("R", (), ns))


@settings(max_examples=300, deadline=None)
@given(names=NAMES, data=st.data(), frozen=st.booleans(), slots=st.booleans(),
       body=st.sampled_from(["none", "eq", "repr", "hash", "eq+hash"]))
def test_a_record_behaves_as_the_same_dataclass(names: list[str], data: st.DataObject, frozen: bool, slots: bool,
                                                body: str) -> None:
    flags = [data.draw(FLAGS) for _ in names]
    methods: dict[str, Any] = {}
    if "eq" in body:
        methods["__eq__"] = lambda self, other: "own eq"
    if "repr" in body:
        methods["__repr__"] = lambda self: "own repr"
    if "hash" in body:
        methods["__hash__"] = lambda self: 7
    std = build(dataclasses.dataclass(frozen=frozen, slots=slots), names, flags, dict(methods))
    rec = build(record(frozen=frozen, slots=slots), names, flags, dict(methods))
    assert dataclasses.is_dataclass(rec) and [f.name for f in dataclasses.fields(rec)] == names
    assert ("__hash__" in rec.__dict__) == ("__hash__" in std.__dict__)
    assert (rec.__hash__ is None) == (std.__hash__ is None)

    vals = [data.draw(VALUES) for _ in names]
    others = [data.draw(VALUES) for _ in names]
    s1, s2, s3 = std(*vals), std(*vals), std(*others)
    r1, r2, r3 = rec(*vals), rec(*vals), rec(*others)
    assert repr(r1) == repr(s1)
    assert (r1 == r2) == (s1 == s2) and (r1 == r3) == (s1 == s3) and (r1 != r3) == (s1 != s3)
    if "eq" not in body:
        assert (r1 == s1) is False  # another class, even with the same fields
        assert (r1 == object()) is False
    if std.__hash__ is not None:
        try:
            want: Any = (hash(s1), hash(s2), hash(s3))
        except TypeError:  # a field value is unhashable: both refuse
            with pytest.raises(TypeError):
                hash((hash(r1), hash(r2), hash(r3)))
        else:
            got = (hash(r1), hash(r2), hash(r3))
            assert (got[0] == got[1]) == (want[0] == want[1]) and (got[0] == got[2]) == (want[0] == want[2])
    else:
        with pytest.raises(TypeError):
            hash(r1)
    if frozen and names:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(r1, names[0], 1)
    copy = dataclasses.replace(r1)
    assert type(copy) is rec and repr(copy) == repr(r1)


@record(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = field(default=(), compare=False, repr=False)


@record
class Node:
    name: str
    children: list[Any] = field(default_factory=list)


def test_records_keep_what_dataclasses_give() -> None:
    p = Point(1, 2, ("t",))
    assert repr(p) == "Point(x=1, y=2)" and p == Point(1, 2) and hash(p) == hash(Point(1, 2))
    assert Point.__match_args__ == ("x", "y", "tags") and not hasattr(p, "__dict__")
    assert dataclasses.asdict(p) == {"x": 1, "y": 2, "tags": ("t",)}
    assert pickle.loads(pickle.dumps(p)) == p
    assert Point.__eq__.__qualname__ == "Point.__eq__"
    n = Node("root")
    n.children.append(n)  # a record that holds itself
    assert repr(n) == "Node(name='root', children=[...])"
    with pytest.raises(TypeError):
        hash(n)
