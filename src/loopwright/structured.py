"""Room: built-in tools (on tools.base). Owns StructuredOutput; may import tools.base and guardrails only.

Structured output: the run ends with a JSON value that fits the user's schema (Claude Code's
`--json-schema`, the Agent SDK's `output_format`, and in Python an `output_type`: any type
pydantic's TypeAdapter handles, as pydantic-ai's: a model, int, list[str], a TypedDict, a
dataclass, a union). A type whose schema is not an object is wrapped: the tool's input is
`{"result": <value>}`, unwrapped in the result (tool inputs are objects).

Owns: the schema from the options, the `StructuredOutput` tool whose input schema is that
schema, and the bookkeeping the loop asks about. The mechanism is Claude Code's: the model calls
the tool; input that fails the schema gets an is_error result naming the field (the tool's own
validation); a valid call ends the run at once, with no further model call. A final text answer
without the tool gets a reminder turn; after MAX_FAILURES reminders or invalid calls the run ends
with `error_max_structured_output_retries`. The call is a tool-use turn, so T and the budget
rule hold as for any tool. Imports tools.base only (pydantic and jsonschema lazily).
"""

from __future__ import annotations

import json
from typing import Any

from .tools.base import Tool, ToolContext, ToolError

TOOL_NAME = "StructuredOutput"
MAX_FAILURES = 3
REMINDER = (f"Your answer must be given by calling the {TOOL_NAME} tool, with input that matches its schema. "
            f"Call {TOOL_NAME} now.")
DESCRIPTION = ("Return your final answer in the requested structured format. You MUST call this tool exactly "
               "once, at the end, with input that matches its schema; the run ends when it is accepted.")


class StructuredOutput:
    """One run's structured output: the schema, the tool, and what the model gave."""

    def __init__(self, schema: dict[str, Any], output_type: Any = None, adapter: Any = None,
                 wrapped: bool = False) -> None:
        self.schema = schema
        self.output_type = output_type
        self.adapter = adapter  # a pydantic TypeAdapter: validates (and dumps) a non-model output_type
        self.wrapped = wrapped  # the answer is the input's "result" field
        # Output guardrails (guardrails.py): each may reject a valid answer with a reason, which the
        # model reads as the call's is_error result (a failure: bounded as the others).
        self.guardrails: list[Any] = []
        self.max_failures = MAX_FAILURES
        self.rejected: str | None = None  # the last failure's reason when a guardrail rejected the answer
        self.value: Any = None
        self.done = False
        self.failures = 0
        # read-only: it changes nothing outside this run, so the gate never asks for it
        self.tool = Tool(TOOL_NAME, DESCRIPTION, schema, self._accept, read_only=True)

    async def _accept(self, data: dict[str, Any], ctx: ToolContext) -> str:
        """Called only with input the tool's validation passed."""
        self.rejected = None
        raw: Any = data["result"] if self.wrapped else data
        if self.adapter is not None:  # pydantic's own checks (validators, coercion) on top of the schema
            value = self.adapter.validate_json(json.dumps(raw))
        elif self.output_type is not None:
            value = self.output_type.model_validate(raw)
        else:
            value = raw
        if self.guardrails:
            from .guardrails import check_output

            value, reason = await check_output(self.guardrails, ctx, value)
            if reason is not None:
                self.rejected = reason
                raise ToolError(f"The answer was rejected: {reason}")
        self.value, self.done = value, True
        return "Structured output accepted."

    def as_json(self) -> Any:
        v = self.value
        if self.adapter is not None:
            return self.adapter.dump_python(v, mode="json")
        return v.model_dump(mode="json") if hasattr(v, "model_dump") else v

    def text(self) -> str:
        return json.dumps(self.as_json(), ensure_ascii=False, separators=(",", ":"))  # as Claude Code

    @classmethod
    def from_options(cls, output_format: Any, output_type: Any) -> StructuredOutput | None:
        """From `output_format={"type": "json_schema", "schema": {...}}` or a pydantic
        `output_type`. A schema that is not valid JSON Schema, or not an object schema (tool
        inputs are objects), is a ValueError naming the problem, before any model call."""
        if output_format is None and output_type is None:
            return None
        if output_type is not None:
            if isinstance(output_type, type) and hasattr(output_type, "model_json_schema"):  # a pydantic model
                schema = output_type.model_json_schema()
            else:
                return cls.for_type(output_type)
        else:
            if not isinstance(output_format, dict) or output_format.get("type") != "json_schema" \
                    or not isinstance(output_format.get("schema"), dict):
                raise ValueError('output_format must be {"type": "json_schema", "schema": {...}}, '
                                 f"got {output_format!r}")
            schema = output_format["schema"]
        check_schema(schema)
        return cls(schema, output_type)


    @classmethod
    def for_type(cls, output_type: Any) -> StructuredOutput:
        """Any type pydantic's TypeAdapter handles; a non-object schema is wrapped in {"result": ...}."""
        import pydantic

        try:
            adapter: Any = pydantic.TypeAdapter(output_type)
            inner = adapter.json_schema()
        except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as e:
            raise TypeError(f"output_type {output_type!r} is not a type pydantic can validate and describe "
                            f"(a model, int, list[str], a TypedDict, a dataclass, a union of them): {e}") from None
        wrapped = inner.get("type") != "object"
        if wrapped:
            defs = inner.pop("$defs", None)  # ("#/$defs/..." refs resolve at the top level)
            inner.pop("title", None)
            schema: dict[str, Any] = {"type": "object", "properties": {"result": inner}, "required": ["result"],
                                      "additionalProperties": False}
            if defs:
                schema["$defs"] = defs
        else:
            schema = inner
        check_schema(schema)
        return cls(schema, output_type, adapter, wrapped)


def check_schema(schema: dict[str, Any]) -> None:
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        where = "/".join(str(p) for p in e.path) or "(top level)"
        raise ValueError(f"the output schema is not valid JSON Schema: {where}: {e.message}") from None
    if schema.get("type") != "object":
        raise ValueError('the output schema must describe an object ("type": "object"): the answer is '
                         f"given as a tool's input; got type {schema.get('type')!r}")


def load_schema_arg(value: str) -> dict[str, Any]:
    """`--json-schema`: a JSON string, or the path of a JSON file."""
    from pathlib import Path

    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as e:
            raise ValueError(f"--json-schema {value}: not JSON, and cannot read it as a file ({e.strerror})") from None
    try:
        schema = json.loads(text)
    except ValueError as e:
        raise ValueError(f"--json-schema: not valid JSON ({e})") from None
    if not isinstance(schema, dict):
        raise ValueError("--json-schema: must be a JSON object (a JSON Schema)")
    return schema
