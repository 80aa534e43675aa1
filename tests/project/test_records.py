"""records.record is @dataclass with shared __repr__, __eq__ and __hash__: the same class built
both ways behaves the same, over arbitrary fields, options, values and class bodies."""

from __future__ import annotations

import dataclasses
import inspect
import math
import pickle
from dataclasses import field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright import records
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


KINDS = st.sampled_from(["plain", "default", "factory", "noinit_default", "noinit_factory", "noinit_bare"])


def build_fields(maker: Any, specs: list[tuple[str, str, bool]], post_init: bool, base: type | None = None) -> type:
    """A class of fields `specs` (name, kind, kw_only), with or without a __post_init__."""
    ns: dict[str, Any] = {"__annotations__": {}}
    for name, kind, kw in specs:
        ns["__annotations__"][name] = "Any"
        opts: dict[str, Any] = {"kw_only": kw}
        if kind in ("default", "noinit_default"):
            opts["default"] = f"d-{name}"
        if kind in ("factory", "noinit_factory"):
            opts["default_factory"] = list
        if kind.startswith("noinit"):
            opts["init"] = False
        ns[name] = field(**opts)
    if post_init:
        def __post_init__(self: Any) -> None:
            object.__setattr__(self, "_seen", [getattr(self, n, None) for n, _, _ in specs])
        ns["__post_init__"] = __post_init__
        ns["__annotations__"]["_seen"] = "Any"
        ns["_seen"] = field(default=None, init=False, repr=False, compare=False)
    return maker(type("F", (base,) if base else (), ns))


def field_facts(cls: type) -> list[Any]:
    """What introspection sees of a data class's fields: each Field, and the class attribute
    (the default, or a slot) of its name."""
    facts: list[Any] = [getattr(cls, "__slots__", None), dataclasses.is_dataclass(cls),
                        sorted(k for k in cls.__dict__ if not k.startswith("__"))]
    facts.append([(k, str(f._field_type), f.type, f.default, f.kw_only)  # pseudo-fields (ClassVars) too
                  for k, f in cls.__dict__["__dataclass_fields__"].items()])
    for f in dataclasses.fields(cls):
        attr = cls.__dict__.get(f.name, "<none>")
        facts.append((f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash, f.kw_only,
                      dict(f.metadata), type(attr).__name__ if type(attr).__name__ == "member_descriptor" else attr))
    return facts


def outcome(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What constructing cls(*args, **kwargs) gives: the fields' values, or the error's text."""
    try:
        obj = cls(*args, **kwargs)
    except TypeError as e:
        return ("TypeError", str(e).partition("__init__()")[2] or str(e))
    return [getattr(obj, f.name, "<unset>") for f in dataclasses.fields(cls)]


@settings(max_examples=300, deadline=None)
@given(specs=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), KINDS, st.booleans()), max_size=4,
                      unique_by=lambda t: t[0]),
       frozen=st.booleans(), slots=st.booleans(), post_init=st.booleans(), inherit=st.booleans(), data=st.data())
def test_a_records_init_and_frozenness_are_dataclasses_own(specs: list[tuple[str, str, bool]], frozen: bool,
                                                           slots: bool, post_init: bool, inherit: bool,
                                                           data: st.DataObject) -> None:
    def both(maker_std: Any, maker_rec: Any) -> tuple[Any, Any]:
        try:
            std: Any = build_fields(maker_std, specs, post_init)
        except TypeError as e:  # an order @dataclass refuses: the record refuses it the same way
            with pytest.raises(TypeError) as got:
                build_fields(maker_rec, specs, post_init)
            assert str(got.value) == str(e)
            return None, None
        return std, build_fields(maker_rec, specs, post_init)

    std, rec = both(dataclasses.dataclass(frozen=frozen, slots=slots), record(frozen=frozen, slots=slots))
    if std is None:
        return
    if inherit:  # one more field, in a subclass of the same kind
        extra = [("e", data.draw(KINDS), True)]
        std = build_fields(dataclasses.dataclass(frozen=frozen, slots=slots), extra, False, std)
        rec = build_fields(record(frozen=frozen, slots=slots), extra, False, rec)
    assert str(inspect.signature(rec)) == str(inspect.signature(std))  # before its __init__ is compiled
    assert rec.__dataclass_params__.frozen == std.__dataclass_params__.frozen == frozen
    assert rec.__match_args__ == std.__match_args__
    assert rec.__doc__ == std.__doc__  # (the docstring @dataclass writes for an undocumented class)
    # its params are @dataclass's for what records asks of it (no generated __init__, __repr__ or __eq__)
    made = dataclasses.dataclass(init=False, repr=False, eq=False, frozen=frozen, slots=slots)(type("P", (), {}))
    assert repr(rec.__dataclass_params__) == repr(made.__dataclass_params__)
    assert field_facts(rec) == field_facts(std)
    names = [f.name for f in dataclasses.fields(std) if f.init]
    for _ in range(3):
        args = tuple(data.draw(st.lists(st.integers(0, 9), max_size=len(names) + 1)))
        kwargs = {n: data.draw(st.integers(0, 9)) for n in data.draw(st.lists(st.sampled_from([*names, "zz"]),
                                                                              unique=True, max_size=3)) if n}
        assert outcome(rec, args, kwargs) == outcome(std, args, kwargs)
    full = {n: 1 for n in names}
    s, r = std(**full), rec(**full)
    if post_init:
        assert r._seen == s._seen
    factories = [f.name for f in dataclasses.fields(rec) if f.default_factory is not dataclasses.MISSING]
    for n in factories:
        if n not in full:
            assert getattr(r, n) is not getattr(rec(**full), n)  # a fresh value each time
    if frozen:
        for n in names:
            with pytest.raises(dataclasses.FrozenInstanceError) as got:
                setattr(r, n, 2)
            with pytest.raises(dataclasses.FrozenInstanceError) as want:
                setattr(s, n, 2)
            assert str(got.value) == str(want.value)
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(r, n)
        # any other name too (Python 3.11's own frozen slots class raises a TypeError from super()
        # there instead: its __setattr__ holds the class from before the slots were added; a frozen
        # record that extends another is @dataclass's own, so it does the same)
        if not (slots and inherit):
            with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'other'"):
                r.other = 2
    if all(f.init or f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
           for f in dataclasses.fields(rec)):  # (a field nothing sets is unset: no == either way)
        assert dataclasses.replace(r) == r


@record(frozen=True, slots=True)
class Kinds:
    """Every kind of field in a frozen slotted record."""

    a: int
    b: list[int] = field(default_factory=list)
    c: str = field(default="c", init=False)
    d: list[int] = field(default_factory=list, init=False)
    e: int = field(default=0, kw_only=True)


def test_a_frozen_slotted_record_pickles_and_copies() -> None:
    import copy

    k = Kinds(1, [2], e=3)
    for again in (pickle.loads(pickle.dumps(k)), copy.copy(k), copy.deepcopy(k), dataclasses.replace(k, a=1)):
        assert again == k and (again.a, again.b, again.c, again.d, again.e) == (1, [2], "c", [], 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pickle.loads(pickle.dumps(k)).a = 5


def test_a_frozen_record_is_frozen_to_its_subclasses() -> None:
    @record(frozen=True)
    class A:
        """A frozen record."""

        x: int

    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):
        dataclasses.dataclass(type("B", (A,), {"__annotations__": {"y": "int"}}))
    C = dataclasses.dataclass(frozen=True)(type("C", (A,), {"__annotations__": {"y": "int"}}))
    c = C(1, 2)
    assert (c.x, c.y) == (1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.x = 3


def _own_record() -> type:
    """A record as loopwright's own modules declare them (only theirs are cached)."""
    cls = type("Cached", (), {"__annotations__": {"a": "int", "b": "str"}, "b": "x", "__module__": "loopwright.records"})
    return record(frozen=True)(cls)


def test_loopwright_records_compiled_init_is_cached_beside_the_pyc(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Any) -> None:
    from loopwright import records

    path = tmp_path / "__pycache__" / "records.inits"
    monkeypatch.setattr(records, "_cache_path", lambda: str(path))
    monkeypatch.setattr(records, "_codes", None)
    monkeypatch.setattr(records, "_compiled_here", {})
    monkeypatch.setattr(records.sys, "dont_write_bytecode", False)
    assert _own_record()(1).b == "x"  # compiled here, written at exit
    records._write_cache()
    assert path.read_bytes().startswith(records._CACHE_HEADER)

    def no_compile(*args: Any) -> Any:
        raise AssertionError("compiled again")

    monkeypatch.setattr(records, "_codes", None)  # another process: the cache is read, nothing compiled
    monkeypatch.setattr(records, "compile", no_compile, raising=False)
    obj = _own_record()(3, "y")
    assert (obj.a, obj.b) == (3, "y")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        _own_record()()
    monkeypatch.undo()


@pytest.mark.parametrize("damage", [b"", b"LWRI\x00\x00\x00\x00junk", b"not a cache", "header+garbage"])
def test_a_damaged_or_foreign_cache_is_ignored_and_rewritten(damage: Any, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Any) -> None:
    from loopwright import records

    path = tmp_path / "records.inits"
    path.write_bytes(records._CACHE_HEADER + b"\xff\x00garbage" if damage == "header+garbage" else damage)
    monkeypatch.setattr(records, "_cache_path", lambda: str(path))
    monkeypatch.setattr(records, "_codes", None)
    monkeypatch.setattr(records, "_compiled_here", {})
    monkeypatch.setattr(records.sys, "dont_write_bytecode", False)
    assert _own_record()(5).a == 5  # compiled anew
    records._write_cache()
    monkeypatch.setattr(records, "_codes", None)
    assert len(records._read_cache()) == 1


def test_the_cache_is_not_written_without_bytecode_nor_for_others_records(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Any) -> None:
    from loopwright import records

    path = tmp_path / "records.inits"
    monkeypatch.setattr(records, "_cache_path", lambda: str(path))
    monkeypatch.setattr(records, "_codes", None)
    monkeypatch.setattr(records, "_compiled_here", {})
    monkeypatch.setattr(records.sys, "dont_write_bytecode", True)  # PYTHONDONTWRITEBYTECODE
    _own_record()(1)
    records._write_cache()
    assert not path.exists()
    monkeypatch.setattr(records.sys, "dont_write_bytecode", False)
    monkeypatch.setattr(records, "_compiled_here", {})
    Point(1)  # a test module's record: compiled, never cached
    Kinds(1)
    records._write_cache()
    assert not path.exists()


SPECIAL_BODIES: dict[str, Any] = {
    "classvar": {"__annotations__": {"a": "int", "k": "ClassVar[int]"}, "k": 3},
    "classvar first, no default": {"__annotations__": {"k": "ClassVar[int]", "a": "int", "b": "str"}, "b": ""},
    "classvar, mutable default": {"__annotations__": {"a": "int", "k": "ClassVar[list[int]]"}, "k": []},
    "classvar alias": {"__annotations__": {"a": "int", "k": "IntClassVar"}, "k": 3},
    "classvar field": {"__annotations__": {"a": "int", "k": "ClassVar[int]"}, "k": field(default=1)},  # noqa: RUF009
    "classvar factory": {"__annotations__": {"a": "int", "k": "ClassVar[list]"}, "k": field(default_factory=list)},
    "another module's name": {"__annotations__": {"a": "math.Whatever", "b": "asyncio.Queue[int]"}, "b": None},
    "a name whose == raises": {"__annotations__": {"a": "weird.Thing"}},
    "dataclasses.initvar": {"__annotations__": {"a": "int", "v": "dataclasses.InitVar[int]"}},
    "typing.classvar": {"__annotations__": {"a": "int", "k": "typing.ClassVar[int]"}, "k": 3},
    "initvar": {"__annotations__": {"a": "int", "v": "InitVar[int]"}},
    "kw_only marker": {"__annotations__": {"a": "int", "_": "KW_ONLY", "b": "int"}},
    "real annotations": {"__annotations__": {"a": int, "b": list}},
    "mutable default": {"__annotations__": {"a": "list"}, "a": []},
    "mutable field default": {"__annotations__": {"a": "dict"}, "a": field(default={})},  # noqa: RUF009
    "field without annotation": {"__annotations__": {"a": "int"}, "b": field(default=1)},  # noqa: RUF009
    "own slots": {"__annotations__": {"a": "int"}, "__slots__": ("a",)},
    "inherited default": {"__annotations__": {"x": "int"}},  # (a plain base's class attribute is the default)
}


class _PlainBase:
    x = 5


class _Weird:
    """An object whose == raises (as a numpy array's truth does): only identity may be asked of it."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("ambiguous")

    __hash__ = object.__hash__


@pytest.mark.parametrize("kind", sorted(SPECIAL_BODIES))
@pytest.mark.parametrize("slots", [False, True])
def test_what_a_record_leaves_to_dataclass_it_makes_as_dataclass_does(kind: str, slots: bool) -> None:
    """ClassVars, InitVars, KW_ONLY, real annotations, the errors: the same class or the same error."""
    import asyncio
    import typing
    from dataclasses import KW_ONLY, InitVar
    from typing import ClassVar

    globals().update(ClassVar=ClassVar, InitVar=InitVar, KW_ONLY=KW_ONLY, typing=typing,  # as a module imports them
                     IntClassVar=ClassVar[int], asyncio=asyncio, dataclasses=dataclasses, weird=_Weird())
    bases = (_PlainBase,) if kind == "inherited default" else ()

    def make(maker: Any) -> Any:
        try:
            return maker(type("S", bases, dict(SPECIAL_BODIES[kind], __annotations__=dict(
                SPECIAL_BODIES[kind]["__annotations__"])))), None
        except (TypeError, ValueError) as e:
            return None, (type(e), str(e))

    (std, std_err), (rec, rec_err) = make(dataclasses.dataclass(slots=slots)), make(record(slots=slots))
    assert rec_err == std_err
    if std is not None:
        assert field_facts(rec) == field_facts(std) and rec.__match_args__ == std.__match_args__
        assert str(inspect.signature(rec)) == str(inspect.signature(std))


@pytest.mark.parametrize("kind", ["classvar", "classvar first, no default", "classvar, mutable default", "classvar alias",
                                  "another module's name", "a name whose == raises"])
def test_classvars_and_other_modules_names_are_declared_by_records_itself(kind: str) -> None:
    """The fast path takes these (on Python 3.11, where it exists): what they make is checked above."""
    import asyncio
    import typing

    if not records._FAST:
        pytest.skip("records declares classes itself on Python 3.11 only")
    globals().update(ClassVar=typing.ClassVar, IntClassVar=typing.ClassVar[int], asyncio=asyncio, weird=_Weird())
    body = dict(SPECIAL_BODIES[kind], __annotations__=dict(SPECIAL_BODIES[kind]["__annotations__"]))
    assert records._plain(type("S", (), body)) is not None
