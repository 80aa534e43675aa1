"""Room: data types. Owns `record`, how loopwright declares its data classes; imports nothing of loopwright.

A record is a standard dataclass: `dataclasses.fields`, `replace`, `asdict` and `is_dataclass`
work on it, and its `__match_args__` and slots are the ones `@dataclass` makes. What differs is
how its methods are made, not what they do (`tests/project/test_records.py` compares arbitrary
classes built both ways). `@dataclass` compiles up to six methods per class from source with
`exec` (~50 µs each on Python 3.11 here, ~1.3 ms for AgentOptions' `__init__`), and the CLI (a
process per SDK or editor session) declares some 60 data classes on its way to its first model
request, more than half of which it never instantiates before it (the rest of the blocks, the
gate's rules and verdicts, hooks' matchers, MCP's configs, ...). So:

- `__repr__`, `__eq__`, `__hash__`: shared functions over the class's field names
  (`operator.attrgetter`) with `@dataclass`'s semantics — the same text, equal only to an instance
  of the very same class with equal fields, hashable when frozen, unhashable when not;
- frozen: `__setattr__` / `__delattr__` are closures over the class and its field names that raise
  FrozenInstanceError as `@dataclass`'s do (and, with slots, its `__getstate__` / `__setstate__`
  for pickling); `__dataclass_params__.frozen` is True, so subclasses are checked as usual. A
  frozen record extending another data class is left to `@dataclass` whole;
- `__init__`: the source `@dataclass` would compile (the same parameters, defaults, factories,
  kw_only, init=False fields, `__post_init__`), compiled at the class's first instantiation by
  a stand-in that then puts it in its place; `inspect.signature(cls)` gives the real signature
  at any time. A record with an InitVar (none has one) gets `@dataclass`'s at once. For
  loopwright's own records the compiled code is kept beside this module's .pyc, as Python keeps a
  module's (`__pycache__/records.<tag>.inits`, read once, written at exit after a compile, not
  with PYTHONDONTWRITEBYTECODE): compiling one is ~150 µs here, and a run compiles ~30 before
  its first model request.

And the fields: for a plain class, as loopwright's are (below, `_plain`), records declares them itself,
as Python 3.11's `@dataclass` does, and writes the docstring `@dataclass` would (from the fields,
not `inspect.signature`); every other class is `@dataclass`'s.

A method the class body writes itself wins, as with `@dataclass`.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import marshal
import os
import reprlib
import sys
from collections.abc import Callable
from operator import attrgetter
from types import CodeType, MemberDescriptorType, MethodType
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
        inherits = False
        for b in c.__mro__[1:]:
            if "__dataclass_fields__" in b.__dict__:
                inherits = True
                break
        own_frozen = frozen and not inherits  # (a subclass: @dataclass checks its bases' frozenness)
        # A plain class has no InitVar (_plain reads its annotations as @dataclass does): no need to look.
        classvars = _plain(c) if "__init__" not in own and not inherits else None
        plain = classvars is not None
        lazy = plain or ("__init__" not in own and not _has_initvar(c))
        undocumented = lazy and not own.get("__doc__")
        if undocumented:  # else @dataclass reads inspect.signature(c) for a docstring: ~0.1 ms each, ~3 ms the first
            c.__doc__ = "(set below)"
        out: type = (_declare(c, slots, classvars) if classvars is not None else
                     dataclasses.dataclass(c, frozen=frozen and not own_frozen, slots=slots, repr=False, eq=False,
                                           init=not lazy))
        fields = (tuple(out.__dict__["__dataclass_fields__"].values()) if classvars == frozenset()  # (no pseudo-fields)
                  else dataclasses.fields(out))
        name = out.__qualname__
        if lazy:
            _check_order(out, fields)
            out.__init__ = _LazyInit(out, frozen, slots)  # type: ignore[misc]
            if undocumented:
                out.__doc__ = out.__name__ + _text_signature(fields)
        if own_frozen:
            _freeze(out, fields, slots)
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


# @dataclass's own processing is most of a record's cost (~60 µs; a run declares ~65 before its
# first request). For a plain class, as loopwright's are (no data class base; string annotations, none
# of them an InitVar or KW_ONLY, a ClassVar only without a field(); no mutable default), `_declare` does
# what Python 3.11's `_process_class` does for them; anything else, and any other Python, is @dataclass's.
_FAST = sys.version_info[:2] == (3, 11) and hasattr(dataclasses, "_FIELD")
_LEADING_NAME = r"^(?:\s*(\w+)\s*\.)?\s*(\w+)"  # (dataclasses' own pattern for a string annotation's name)
_leading: Callable[[str], Any] | None = None  # its match, compiled at the first record
_Field: Any = dataclasses.Field  # (made with 3.11's eight arguments: field() checks what _plain did)


def _plain(c: type) -> frozenset[str] | None:
    """Can `_declare` make `c` (see above)? Its ClassVar names if so, else None."""
    if not _FAST or "__slots__" in c.__dict__:
        return None
    global _leading
    if _leading is None:
        import re

        _leading = re.compile(_LEADING_NAME).match
    module = sys.modules.get(c.__module__)
    ns = module.__dict__ if module is not None else {}
    typing = sys.modules["typing"]
    own = c.__dict__
    annotations = own.get("__annotations__", {})
    classvars: list[str] = []
    for name, annotation in annotations.items():
        if type(annotation) is not str:
            return None
        default = getattr(c, name, dataclasses.MISSING)
        m = _leading(annotation)
        if m:  # what it names, read as @dataclass reads it (dataclasses._is_type)
            if m[1] and ((owner := ns.get(m[1])) is typing or owner is dataclasses):
                return None  # typing.ClassVar, dataclasses.InitVar, ...: @dataclass's
            named: Any = None if m[1] else ns.get(m[2])
            if named is typing.ClassVar or (type(named) is typing._GenericAlias  # (ClassVar[int] under another name)
                                            and named.__origin__ is typing.ClassVar):
                if isinstance(default, dataclasses.Field):
                    return None  # (a ClassVar's field(): @dataclass's, and its errors)
                classvars.append(name)
                continue
            if (named is dataclasses.InitVar or type(named) is dataclasses.InitVar
                    or named is dataclasses.KW_ONLY):
                return None
        if isinstance(default, dataclasses.Field):
            default = default.default
        if default.__class__.__hash__ is None:  # a mutable default: @dataclass's error
            return None
    for k, v in own.items():
        if isinstance(v, dataclasses.Field) and k not in annotations:
            return None
    return frozenset(classvars)


def _declare(c: type, slots: bool, classvars: frozenset[str]) -> type:
    """`c` made a data class without an __init__, __repr__ or __eq__ (`make` adds them), as
    `@dataclass(init=False, repr=False, eq=False, slots=slots)` makes it, for a `_plain` class
    (`classvars`: its ClassVar names, which `_plain` found)."""
    fields: dict[str, Any] = {}
    f: Any
    for name, annotation in c.__dict__.get("__annotations__", {}).items():
        default: Any = getattr(c, name, dataclasses.MISSING)
        if name in classvars:  # a pseudo-field: in __dataclass_fields__, not in fields(); its class attribute stays
            f = _Field(dataclasses.MISSING if isinstance(default, MemberDescriptorType) else default,
                       dataclasses.MISSING, True, True, None, True, None, dataclasses.MISSING)
            f.name, f.type = name, annotation
            f._field_type = dataclasses._FIELD_CLASSVAR  # type: ignore[attr-defined]  # (private, and 3.11's)
            fields[name] = f
            continue
        if isinstance(default, dataclasses.Field):
            f = default
            if f.default is dataclasses.MISSING:
                delattr(c, name)
            else:
                setattr(c, name, f.default)
        else:
            # field(default=...) as 3.11 makes it (default, default_factory, init, repr, hash, compare, metadata, kw_only)
            f = _Field(dataclasses.MISSING if isinstance(default, MemberDescriptorType) else default,
                       dataclasses.MISSING, True, True, None, True, None, False)
        f.name, f.type = name, annotation
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
        if f.kw_only is dataclasses.MISSING:
            f.kw_only = False
        fields[name] = f
    c.__dataclass_params__ = _params(slots)  # type: ignore[attr-defined]
    c.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    names = tuple(n for n in fields if n not in classvars) if classvars else tuple(fields)
    if "__match_args__" not in c.__dict__:
        setattr(c, "__match_args__", tuple(n for n in names if fields[n].init and not fields[n].kw_only))  # noqa: B010
    if slots:
        c = _with_slots(c, names)
    abc.update_abstractmethods(c)
    return c


def _with_slots(c: type, names: tuple[str, ...]) -> type:
    """`c` again with `names` as its slots (a class's slots are fixed when it is made), as
    @dataclass's `_add_slots` makes it."""
    inherited: set[str] = set()
    for b in c.__mro__[1:-1]:
        declared = b.__dict__.get("__slots__")
        inherited.update([declared] if isinstance(declared, str) else declared or ())
    body = dict(c.__dict__)
    body["__slots__"] = tuple(n for n in names if n not in inherited)
    for n in (*names, "__dict__", "__weakref__"):
        body.pop(n, None)
    qualname = c.__qualname__
    out = type(c)(c.__name__, c.__bases__, body)
    out.__qualname__ = qualname
    return out


_PARAMS: dict[tuple[bool, bool], Any] = {}


def _params(slots: bool, frozen: bool = False) -> Any:
    """A record's `__dataclass_params__`: @dataclass(init=False, repr=False, eq=False) with these
    options (its __init__ is records'), made once; on Python 3.11 directly (its six fields),
    elsewhere taken from a class @dataclass makes. Subclasses' checks read `frozen` there."""
    key = (slots, frozen)
    if key not in _PARAMS:
        if _FAST:
            _PARAMS[key] = dataclasses._DataclassParams(False, False, False, False, False, frozen)  # type: ignore[attr-defined]
        else:
            proto: Any = dataclasses.dataclass(init=False, repr=False, eq=False, frozen=frozen, slots=slots)(
                type("_Params", (), {"__doc__": "-"}))
            _PARAMS[key] = proto.__dataclass_params__
    return _PARAMS[key]


def _has_initvar(c: type) -> bool:
    """Whether `c` or a data class it extends declares an InitVar (left to @dataclass's __init__)."""
    if any("InitVar" in str(t) for t in c.__dict__.get("__annotations__", {}).values()):
        return True
    return any("InitVar" in str(f.type) for b in c.__mro__[1:] for f in b.__dict__.get("__dataclass_fields__", {}).values())


def _check_order(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """@dataclass's own check, at the class statement as it makes it."""
    seen_default = False
    for f in fields:
        if f.init and not f.kw_only:
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")


class _Factory:
    """The default shown for a field with a default_factory ("<factory>", as @dataclass shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _init_source(cls: type, frozen: bool, slots: bool) -> tuple[str, dict[str, Any]]:
    """The source of the __init__ @dataclass writes for `cls`, and the names it uses."""
    ns: dict[str, Any] = {"__lw_factory": _FACTORY, "__lw_set": object.__setattr__}
    params: list[str] = ["self"]
    kw: list[str] = []
    body: list[str] = []
    for f in dataclasses.fields(cls):
        value = None
        if f.init:
            default = ""
            if f.default_factory is not dataclasses.MISSING:
                ns[f"__lw_f_{f.name}"] = f.default_factory
                default = "=__lw_factory"
                value = f"__lw_f_{f.name}() if {f.name} is __lw_factory else {f.name}"
            elif f.default is not dataclasses.MISSING:
                ns[f"__lw_d_{f.name}"] = f.default
                default = f"=__lw_d_{f.name}"
            (kw if f.kw_only else params).append(f"{f.name}{default}")
            value = value or f.name
        elif f.default_factory is not dataclasses.MISSING:
            ns[f"__lw_f_{f.name}"] = f.default_factory
            value = f"__lw_f_{f.name}()"
        elif f.default is not dataclasses.MISSING and slots:  # (without slots the class attribute serves)
            ns[f"__lw_d_{f.name}"] = f.default
            value = f"__lw_d_{f.name}"
        if value is not None:
            body.append(f"    __lw_set(self, {f.name!r}, {value})" if frozen else f"    self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    signature = ", ".join([*params, *(["*", *kw] if kw else [])])
    return f"def __init__({signature}):\n" + ("\n".join(body) or "    pass") + "\n", ns


def _text_signature(fields: tuple[dataclasses.Field[Any], ...]) -> str:
    """The signature @dataclass puts in an undocumented class's docstring, from the fields alone."""
    import inspect

    kinds = {False: inspect.Parameter.POSITIONAL_OR_KEYWORD, True: inspect.Parameter.KEYWORD_ONLY}
    params = [inspect.Parameter(f.name, kinds[bool(f.kw_only)], annotation=f.type,
                                default=_FACTORY if f.default_factory is not dataclasses.MISSING else
                                (inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default))
              for f in fields if f.init]
    params.sort(key=lambda p: p.kind)  # kw_only fields come after the rest, wherever they are declared
    return str(inspect.Signature(params))


class _LazyInit:
    """A record's `__init__` until its first call (see the module): it compiles @dataclass's own,
    puts it in its place and calls it."""

    __slots__ = ("cls", "frozen", "slots")

    def __init__(self, cls: type, frozen: bool, slots: bool) -> None:
        self.cls, self.frozen, self.slots = cls, frozen, slots

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        return self if obj is None else MethodType(self, obj)

    def __call__(self, obj: Any, /, *args: Any, **kwargs: Any) -> None:
        self.real()(obj, *args, **kwargs)

    def real(self) -> Callable[..., None]:
        """The class's real __init__, compiled now if it has not been yet."""
        init = self.cls.__dict__["__init__"]
        if init is self:
            source, ns = _init_source(self.cls, self.frozen, self.slots)
            exec(_compiled(source, self.cls.__module__), ns)  # noqa: S102 - our own source, as @dataclass's
            init = ns["__init__"]
            init.__qualname__ = f"{self.cls.__qualname__}.__init__"
            init.__module__ = self.cls.__module__
            init.__annotations__ = {**{f.name: f.type for f in dataclasses.fields(self.cls) if f.init},
                                    "return": None}
            type.__setattr__(self.cls, "__init__", init)
        return init  # type: ignore[no-any-return]

    @property
    def __signature__(self) -> Any:  # what inspect.signature(cls) reads: the real one
        import inspect

        return inspect.signature(self.real())


_CACHE_HEADER = b"LWRI" + sys.hexversion.to_bytes(4, "big")  # (code objects are the interpreter version's)
_CACHE_MAX = 512  # entries: past it, an old version's are dropped
_CACHE_MAX_BYTES = 8 << 20  # (~60 kB for loopwright's own: a larger file is not one of ours)
_codes: dict[str, CodeType] | None = None  # source -> code, once read
_compiled_here: dict[str, CodeType] = {}


def _compiled(source: str, module: str) -> CodeType:
    """`source` compiled; for loopwright's own records, from the cache (and into it at exit)."""
    global _codes
    if not module.startswith("loopwright."):
        return compile(source, "<string>", "exec")
    if _codes is None:
        _codes = _read_cache()
    code = _codes.get(source)
    if code is None:
        code = _codes[source] = compile(source, "<string>", "exec")
        if not _compiled_here:
            import atexit

            atexit.register(_write_cache)
        _compiled_here[source] = code
    return code


def _cache_path() -> str | None:
    cached = globals().get("__cached__")
    return cached[:-len(".pyc")] + ".inits" if isinstance(cached, str) and cached.endswith(".pyc") else None


def _read_cache() -> dict[str, CodeType]:
    """The cache's entries; none from a file that is missing, another interpreter's or damaged."""
    path = _cache_path()
    try:
        with open(path or "", "rb") as f:
            data = f.read(_CACHE_MAX_BYTES + 1)
        if data.startswith(_CACHE_HEADER) and len(data) <= _CACHE_MAX_BYTES:
            codes = marshal.loads(data[len(_CACHE_HEADER):])
            if isinstance(codes, dict) and all(type(k) is str and type(v) is CodeType for k, v in codes.items()):
                return codes
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return {}


def _write_cache() -> None:
    """Add this process's compiles to the cache file (merged with what other processes wrote since)."""
    path = _cache_path()
    if path is None or sys.dont_write_bytecode or not _compiled_here:
        return
    codes = _read_cache()
    if len(codes) + len(_compiled_here) > _CACHE_MAX:
        codes = {}
    codes.update(_compiled_here)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "xb") as f:
            f.write(_CACHE_HEADER + marshal.dumps(codes))
        os.replace(tmp, path)  # (atomic: a reader sees the old file or the new one)
    except OSError:  # a read-only install, as for .pyc files: compiled again next time
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _compiled_here.clear()


def _freeze(cls: type, fields: tuple[dataclasses.Field[Any], ...], slots: bool) -> None:
    """A frozen record's __setattr__ and __delattr__ (and, with slots, its pickling), as @dataclass's."""
    names = frozenset(f.name for f in fields)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    methods: dict[str, Callable[..., Any]] = {"__setattr__": __setattr__, "__delattr__": __delattr__}
    for attr, fn in methods.items():
        if attr in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {attr} in class {cls.__name__}")
        _put(cls, attr, fn, cls.__qualname__)
    if slots:
        order = [f.name for f in fields]

        def __getstate__(self: Any) -> list[Any]:
            return [getattr(self, n) for n in order]

        def __setstate__(self: Any, state: list[Any]) -> None:
            for n, v in zip(order, state, strict=False):
                object.__setattr__(self, n, v)

        state: dict[str, Callable[..., Any]] = {"__getstate__": __getstate__, "__setstate__": __setstate__}
        for attr, fn in state.items():
            if attr not in cls.__dict__:
                _put(cls, attr, fn, cls.__qualname__)
    cls.__dataclass_params__ = _params(slots, frozen=True)  # type: ignore[attr-defined]


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
