"""Room: cli (the Agent SDK protocol). Owns the schema of the lines an Agent SDK writes to the CLI's stdin; may import
protolines and the rooms below cli.

The SDK → CLI messages of Claude Code's stream-json protocol (/work/shared/notes/agent-sdk-protocol.md
§3–§5), as JSON Schema: a `user` line (the prompt), `control_request` (the SDK's requests),
`control_response` (its answers to ours), `control_cancel_request` and `keep_alive`. Members the
schema does not name are allowed (the SDKs add fields release by release); a line of another
type is named on stderr and skipped. Compiled once, at the first line, with fastjsonschema
(already what checks tool inputs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_ID = {"type": "string", "minLength": 1, "maxLength": 1000}
_BLOCK = {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}}

LINE_SCHEMAS: dict[str, dict[str, Any]] = {
    "user": {"type": "object", "required": ["message"], "properties": {
        "message": {"type": "object", "required": ["content"], "properties": {
            "role": {"const": "user"},
            "content": {"anyOf": [{"type": "string"}, {"type": "array", "items": _BLOCK}]}}},
        "parent_tool_use_id": {"type": ["string", "null"]},
        "session_id": {"type": "string"}}},
    "control_request": {"type": "object", "required": ["request_id", "request"], "properties": {
        "request_id": _ID,
        "request": {"type": "object", "required": ["subtype"], "properties": {"subtype": {"type": "string"}}}}},
    "control_response": {"type": "object", "required": ["response"], "properties": {
        "response": {"type": "object", "required": ["subtype", "request_id"], "properties": {
            "subtype": {"enum": ["success", "error"]},
            "request_id": _ID,
            "response": {"type": ["object", "null"]},
            "error": {"type": "string"}}}}},
    "control_cancel_request": {"type": "object", "required": ["request_id"], "properties": {"request_id": _ID}},
    "keep_alive": {"type": "object"},
}

_checks: dict[str, Callable[[Any], Any]] = {}


def line_problem(msg: Any) -> str | None:
    """What is wrong with a parsed stdin line (None: it is a message of the protocol, or of a type
    it does not name, which the caller skips)."""
    if not isinstance(msg, dict):
        return f"a line must be a JSON object, not {type(msg).__name__}"
    kind = msg.get("type")
    if not isinstance(kind, str):
        return "a line needs a string `type`"
    schema = LINE_SCHEMAS.get(kind)
    if schema is None:
        return None
    check = _checks.get(kind)
    if check is None:
        import fastjsonschema

        check = _checks[kind] = fastjsonschema.compile(schema)
    try:
        check(msg)
    except Exception as e:  # noqa: BLE001 - fastjsonschema's JsonSchemaValueException: its message says what
        return f"a {kind} line that does not match the protocol: {getattr(e, 'message', e)}"
    return None
