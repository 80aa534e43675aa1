"""Room: bases. Owns tool input schemas: checking an input against a tool's JSON Schema, and
building a schema from Python types (pydantic); may import nothing of the package.

A valid input is recognised by fastjsonschema, compiled once per tool (loading it and compiling a
tool takes ~10x less than loading jsonschema); only an invalid input, or a schema fastjsonschema
does not take, loads jsonschema, for its messages. A schema's remote `$ref` is never fetched.
"""

from __future__ import annotations

import typing
from typing import Any


def remote_refs(schema: Any) -> list[str]:
    """The `$ref`s of a schema that point outside it (a URL, a file): never fetched, by anyone
    (a tool's schema from an MCP server would make this machine send requests: SSRF)."""
    out: list[str] = []
    stack = [schema]
    while stack and len(out) < 10:
        x = stack.pop()
        if isinstance(x, dict):
            ref = x.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                out.append(ref)
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


def _fast_validator(schema: Any) -> Any:
    """fastjsonschema's compiled check of `schema`, or False (a draft it does not know, a schema
    it refuses: jsonschema decides). No defaults filled in, no formats checked, as jsonschema.
    A schema with a remote `$ref` is never given to it (it would GET the URL)."""
    draft = str(schema.get("$schema", "draft-07")) if isinstance(schema, dict) else ""
    if not draft.rstrip("/#").endswith(("draft-04/schema", "draft-06/schema", "draft-07/schema", "draft-07")):
        return False
    if remote_refs(schema):
        return False
    try:
        import fastjsonschema

        return fastjsonschema.compile(schema, use_default=False, use_formats=False)
    except Exception:
        return False



class InputCheck:
    """A tool's input schema, compiled at its first use (jsonschema is not imported at startup)."""

    __slots__ = ("name", "schema", "_fast", "_full")

    def __init__(self, name: str, schema: dict[str, Any]) -> None:
        self.name, self.schema = name, schema
        self._fast: Any = None  # fastjsonschema's check, compiled at the first call (False: not usable)
        self._full: Any = None  # jsonschema's validator, for the messages of an invalid input

    def problem(self, data: Any) -> str | None:
        """None if `data` fits the schema, else a message that says what is wrong. Raises
        jsonschema.SchemaError when the schema itself is broken (and tries again next time)."""
        fast = self._fast
        if fast is None:
            fast = self._fast = _fast_validator(self.schema)
        if fast:
            try:
                fast(data)
                return None
            except Exception:  # JsonSchemaValueException: jsonschema says what is wrong, below
                pass
        errors = sorted(self._validator().iter_errors(data), key=lambda e: list(e.path))
        if not errors:
            return None
        parts = ("{}: {}".format("/".join(str(p) for p in e.path) or "(input)", e.message) for e in errors[:5])
        return f"Invalid input for tool {self.name}: " + "; ".join(parts)

    def _validator(self) -> Any:
        if self._full is None:
            import jsonschema
            from jsonschema_specifications import REGISTRY  # the drafts' own schemas, no retrieval

            cls = jsonschema.validators.validator_for(self.schema)
            cls.check_schema(self.schema)
            self._full = cls(self.schema, registry=REGISTRY)  # a remote $ref: an error, never a GET
        return self._full


def model_schema(title: str, params: dict[str, tuple[Any, Any]]) -> tuple[dict[str, Any], Any]:
    """The JSON Schema of fields {name: (type, default or ...)} and the pydantic model behind it.
    `Annotated[T, "description"]` describes a field."""
    import pydantic

    fields: dict[str, Any] = {}
    for pname, (ann, default) in params.items():
        if typing.get_origin(ann) is typing.Annotated:
            base, *meta = typing.get_args(ann)
            descs = [m for m in meta if isinstance(m, str)]
            others = [m for m in meta if not isinstance(m, str)]
            if descs:
                ann = typing.Annotated[(base, *others)] if others else base
                fields[pname] = (ann, pydantic.Field(default, description=descs[0]))
                continue
        fields[pname] = (ann, default)
    model = pydantic.create_model(title, **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema, model


def sdk_schema(name: str, input_schema: Any) -> dict[str, Any]:
    """The Agent SDK's `@tool(name, description, input_schema)` schema forms: a JSON Schema, a
    dict of parameter names to types (all required), or a TypedDict class."""
    if isinstance(input_schema, dict) and isinstance(input_schema.get("type"), str) and "properties" in input_schema:
        return input_schema
    if isinstance(input_schema, dict):
        return model_schema(f"{name}_input", {k: (t, ...) for k, t in input_schema.items()})[0]
    if typing.is_typeddict(input_schema):
        required: frozenset[str] = getattr(input_schema, "__required_keys__", frozenset())
        hints = typing.get_type_hints(input_schema, include_extras=True)
        params = {}
        for k, t in hints.items():
            while typing.get_origin(t) in (typing.NotRequired, typing.Required):
                t = typing.get_args(t)[0]
            params[k] = (t, ... if k in required else None)
        return model_schema(f"{name}_input", params)[0]
    raise TypeError(f"@tool({name!r}, ...): input_schema must be a JSON Schema, a dict of parameter names to "
                    f"types, or a TypedDict, got {type(input_schema).__name__}")


