"""Room: bases. Owns the `@tool` decorator (a Tool from a function's signature and docstring, or
the Agent SDK's `@tool(name, description, input_schema)`); may import tools.base and tools.schema.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Any

from .base import Tool, ToolContext
from .schema import model_schema, sdk_schema


def _doc_description(fn: Callable[..., Any]) -> str:
    return inspect.cleandoc(fn.__doc__ or "").strip() or fn.__name__


def _schema_from_signature(fn: Callable[..., Any]) -> tuple[dict[str, Any], Callable[[dict[str, Any]], Any]]:
    """Build input_schema from type hints with pydantic; return (schema, converter).

    Supports Annotated[T, "description"], pydantic models, TypedDict, Literal, defaults.
    A parameter annotated `ToolContext` is passed the context and left out of the schema."""
    hints = typing.get_type_hints(fn, include_extras=True)
    params = {pname: (hints.get(pname, Any), p.default if p.default is not inspect.Parameter.empty else ...)
              for pname, p in inspect.signature(fn).parameters.items() if not _is_ctx(hints.get(pname, Any))}
    schema, model = model_schema(f"{fn.__name__}_input", params)
    fields = list(params)

    def convert(data: dict[str, Any]) -> Any:
        obj = model.model_validate(data)
        return {name: getattr(obj, name) for name in fields}

    return schema, convert


def _hint(annotations: Any, key: str) -> Any:
    """An MCP tool annotation (ToolAnnotations object or dict), in its camelCase or snake_case name."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
    if isinstance(annotations, dict):
        return annotations.get(key, annotations.get(snake))
    return getattr(annotations, key, getattr(annotations, snake, None))


def _is_ctx(ann: Any) -> bool:
    """`ToolContext` (`ToolContext[Deps]`, `RunContext[Deps]`), or `ToolContext | None` (an
    optional context is still the context)."""
    return ann is ToolContext or typing.get_origin(ann) is ToolContext or any(
        a is ToolContext or typing.get_origin(a) is ToolContext for a in typing.get_args(ann))


def _check_signature(fn: Callable[..., Any]) -> None:
    """The model calls a tool with named arguments: every parameter must be one it can name."""
    where = getattr(fn, "__qualname__", repr(fn))
    for p in inspect.signature(fn).parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            raise TypeError(f"@tool {where}: *{p.name} cannot be called with named arguments; "
                            "declare each parameter (with a type hint) instead")
        if p.kind == p.VAR_KEYWORD:
            raise TypeError(f"@tool {where}: **{p.name} gives the model no schema to fill; "
                            "declare each parameter (with a type hint) instead")
        if p.kind == p.POSITIONAL_ONLY:
            raise TypeError(f"@tool {where}: parameter {p.name!r} is positional-only, but tools are "
                            "called with named arguments; remove the '/'")


@typing.overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@typing.overload
def tool(*, name: str | None = None, description: str | None = None,
         read_only: bool = False) -> Callable[[Callable[..., Any]], Tool]: ...


@typing.overload
def tool(name: str, description: str, input_schema: Any, /, annotations: Any = None, *,
         read_only: bool = False) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | str | None = None,
    /,
    *sdk: Any,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    annotations: Any = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a Tool from a function: `@tool`, or `@tool(name=..., read_only=True)`.

    The schema comes from the type hints, the description from the docstring. The
    function is called with keyword arguments; a parameter annotated `ToolContext` gets the
    call's context. `*args`, `**kwargs` and positional-only parameters are a TypeError here.

    The Agent SDK's form works too: `@tool("add", "Add two numbers", {"a": float, "b": float})`
    on `async def add(args)`, which gets the input dict and returns `{"content": [...]}` (with
    `"is_error": True` for a failed call); `annotations` with `readOnlyHint` marks it read-only.

    A sync function runs in a worker thread (threads.run_in_worker), every call: a slow one
    never blocks the event loop (an interrupt is answered, read-only calls overlap, other runs
    on the loop go on), and `asyncio.run` inside it works. An `async def` runs on the loop."""
    if isinstance(fn, str):  # the SDK's positional form
        if not 2 <= len(sdk) <= 3:
            raise TypeError("@tool(name, description, input_schema, annotations=None): "
                            f"got {1 + len(sdk)} positional arguments")
        sdk_name, (sdk_description, input_schema, *rest) = fn, sdk
        hints = rest[0] if rest else annotations
        ro = read_only or (hints is not None and bool(_hint(hints, "readOnlyHint")))
        schema = sdk_schema(sdk_name, input_schema)
        return lambda f: Tool(sdk_name, sdk_description, schema, f, read_only=ro)
    if sdk:
        raise TypeError("@tool takes a function, or name, description and input_schema (the Agent SDK's form)")

    def wrap(f: Callable[..., Any]) -> Tool:
        _check_signature(f)
        schema, convert = _schema_from_signature(f)
        ctx_name = next((n for n, a in typing.get_type_hints(f).items() if _is_ctx(a)), None)
        is_async = inspect.iscoroutinefunction(f)

        if is_async:
            async def handler(kwargs: dict[str, Any], ctx: ToolContext) -> Any:
                if ctx_name:
                    kwargs = {**kwargs, ctx_name: ctx}
                return await f(**kwargs)
        else:
            def handler(kwargs: dict[str, Any], ctx: ToolContext) -> Any:  # type: ignore[misc]
                if ctx_name:
                    kwargs = {**kwargs, ctx_name: ctx}
                return f(**kwargs)

        return Tool(
            name or f.__name__,
            description if description is not None else _doc_description(f),
            schema,
            handler,
            read_only=read_only,
            _convert=convert,
        )

    return wrap(fn) if fn is not None else wrap
