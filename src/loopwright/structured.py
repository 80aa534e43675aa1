"""Room: built-in tools (on tools.base). Owns StructuredOutput; may import tools.base only.

Structured output: the run ends with a JSON value that fits the user's schema (Claude Code's
`--json-schema`, the Agent SDK's `output_format`, and in Python a pydantic `output_type`).

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

from .tools.base import Tool

TOOL_NAME = "StructuredOutput"
MAX_FAILURES = 3
REMINDER = (f"Your answer must be given by calling the {TOOL_NAME} tool, with input that matches its schema. "
            f"Call {TOOL_NAME} now.")
DESCRIPTION = ("Return your final answer in the requested structured format. You MUST call this tool exactly "
               "once, at the end, with input that matches its schema; the run ends when it is accepted.")


class StructuredOutput:
    """One run's structured output: the schema, the tool, and what the model gave."""

    def __init__(self, schema: dict[str, Any], output_type: Any = None) -> None:
        self.schema = schema
        self.output_type = output_type
        self.value: Any = None
        self.done = False
        self.failures = 0
        # read-only: it changes nothing outside this run, so the gate never asks for it
        self.tool = Tool(TOOL_NAME, DESCRIPTION, schema, self._accept, read_only=True)

    def _accept(self, data: dict[str, Any]) -> str:
        """Called only with input the tool's validation passed."""
        if self.output_type is not None:  # pydantic's own checks (validators) on top of the schema
            self.value = self.output_type.model_validate(data)
        else:
            self.value = data
        self.done = True
        return "Structured output accepted."

    def as_json(self) -> Any:
        v = self.value
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
            if not hasattr(output_type, "model_json_schema"):
                raise TypeError(f"output_type must be a pydantic model class, got {output_type!r}")
            schema = output_type.model_json_schema()
        else:
            if not isinstance(output_format, dict) or output_format.get("type") != "json_schema" \
                    or not isinstance(output_format.get("schema"), dict):
                raise ValueError('output_format must be {"type": "json_schema", "schema": {...}}, '
                                 f"got {output_format!r}")
            schema = output_format["schema"]
        check_schema(schema)
        return cls(schema, output_type)


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
