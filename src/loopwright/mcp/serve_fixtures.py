"""Room: cli. Owns `loopwright mcp serve --conformance-fixtures`: the test tools, resources and
prompts MCP's conformance suite (@modelcontextprotocol/conformance) calls by fixed names; may import
the MCP SDK's types.

Off by default, and nothing else uses them: the suite's server scenarios ask for `test_simple_text`,
`test://static-text`, `test_simple_prompt` and the like by name, which no real server has. With the
flag they are served beside loopwright's own tools, resources and prompts (which the other
scenarios — initialize, ping, logging, completion, tools/list, DNS rebinding, SSE — exercise), so
the suite can check the protocol machinery they go through (content types, log and progress
notifications, sampling and elicitation requests to the client, subscriptions, SSE resumption).
Their contents are the suite's own examples (its everything-server).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio

# a 1x1 red PNG and a short silent WAV: the smallest valid images and sounds
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="
TEXT = "This is the content of the static text resource."

_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS: dict[str, dict[str, Any]] = {
    "test_simple_text": {"description": "Returns simple text (conformance fixture)", "inputSchema": _NO_ARGS},
    "test_image_content": {"description": "Returns an image (conformance fixture)", "inputSchema": _NO_ARGS},
    "test_audio_content": {"description": "Returns audio (conformance fixture)", "inputSchema": _NO_ARGS},
    "test_embedded_resource": {"description": "Returns an embedded resource (conformance fixture)",
                               "inputSchema": _NO_ARGS},
    "test_multiple_content_types": {"description": "Returns text, image and resource (conformance fixture)",
                                    "inputSchema": _NO_ARGS},
    "test_tool_with_logging": {"description": "Sends three log messages (conformance fixture)", "inputSchema": _NO_ARGS},
    "test_tool_with_progress": {"description": "Reports progress 0, 50, 100 (conformance fixture)",
                                "inputSchema": _NO_ARGS},
    "test_error_handling": {"description": "Returns isError (conformance fixture)", "inputSchema": _NO_ARGS},
    "test_reconnection": {"description": "Closes its SSE stream mid-call (conformance fixture)", "inputSchema": _NO_ARGS},
    "test_sampling": {"description": "Asks the client's model (conformance fixture)",
                      "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}},
                                      "required": ["prompt"]}},
    "test_elicitation": {"description": "Asks the client's user (conformance fixture)",
                         "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                                         "required": ["message"]}},
    "test_elicitation_sep1034_defaults": {"description": "Elicitation with defaults (conformance fixture)",
                                          "inputSchema": _NO_ARGS},
    "test_elicitation_sep1330_enums": {"description": "Elicitation with enums (conformance fixture)",
                                       "inputSchema": _NO_ARGS},
    "json_schema_2020_12_tool": {"description": "A JSON Schema 2020-12 input schema (conformance fixture)",
                                 "inputSchema": {
                                     "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                                     "$defs": {"address": {"type": "object", "properties": {
                                         "street": {"type": "string"}, "city": {"type": "string"}}}},
                                     "properties": {"name": {"type": "string"},
                                                    "address": {"$ref": "#/$defs/address"}},
                                     "additionalProperties": False}},
}
DEFAULTS_SCHEMA = {"type": "object", "required": [], "properties": {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
               "default": "active"},
    "verified": {"type": "boolean", "description": "Verification status", "default": True}}}
_OPTIONS = ["option1", "option2", "option3"]
ENUMS_SCHEMA = {"type": "object", "required": [], "properties": {
    "untitledSingle": {"type": "string", "description": "Select one option", "enum": _OPTIONS},
    "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
        {"const": f"value{i}", "title": t} for i, t in ((1, "First Option"), (2, "Second Option"), (3, "Third Option"))]},
    "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"],
                   "enumNames": ["Option One", "Option Two", "Option Three"]},
    "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                      "items": {"type": "string", "enum": _OPTIONS}},
    "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1,
                    "maxItems": 3, "items": {"anyOf": [
                        {"const": f"value{i}", "title": t}
                        for i, t in ((1, "First Choice"), (2, "Second Choice"), (3, "Third Choice"))]}}}}

RESOURCES = [
    {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain", "description": "fixture"},
    {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png", "description": "fixture"},
    {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain",
     "description": "fixture"},
]
TEMPLATES = [{"uriTemplate": "test://template/{id}/data", "name": "template", "mimeType": "application/json",
              "description": "fixture"}]
PROMPTS: dict[str, dict[str, Any]] = {
    "test_simple_prompt": {"description": "A simple prompt (conformance fixture)", "arguments": []},
    "test_prompt_with_arguments": {"description": "A prompt with arguments (conformance fixture)", "arguments": [
        {"name": "arg1", "description": "First argument", "required": True},
        {"name": "arg2", "description": "Second argument", "required": True}]},
    "test_prompt_with_embedded_resource": {"description": "A prompt with a resource (conformance fixture)",
                                           "arguments": [{"name": "resourceUri", "required": True}]},
    "test_prompt_with_image": {"description": "A prompt with an image (conformance fixture)", "arguments": []},
}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image() -> dict[str, Any]:
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


def _embedded(uri: str, text: str, mime: str = "text/plain") -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime, "text": text}}


async def _logging(ctx: Any, args: dict[str, Any], log: Any) -> dict[str, Any]:
    for i, said in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if i:
            await anyio.sleep(0.05)
        await log("info", said)
    return {"content": [_text("Tool with logging executed successfully")]}


async def _progress(ctx: Any, args: dict[str, Any], log: Any) -> dict[str, Any]:
    for i, p in enumerate((0, 50, 100)):
        if i:
            await anyio.sleep(0.05)
        await ctx.session.report_progress(p, 100, f"Completed step {p} of 100")
    return {"content": [_text("Tool with progress executed successfully")]}


async def _reconnection(ctx: Any, args: dict[str, Any], log: Any) -> dict[str, Any]:
    if ctx.close_sse_stream is not None:
        await ctx.close_sse_stream()
    await anyio.sleep(0.1)
    return {"content": [_text("Reconnection test completed successfully. If you received this, the client "
                              "properly reconnected after stream closure.")]}


# the fixture tools whose result is fixed, by name
_FIXED: dict[str, Callable[[], dict[str, Any]]] = {
    "test_simple_text": lambda: {"content": [_text("This is a simple text response for testing.")]},
    "test_image_content": lambda: {"content": [_image()]},
    "test_audio_content": lambda: {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]},
    "test_embedded_resource": lambda: {
        "content": [_embedded("test://embedded-resource", "This is an embedded resource content.")]},
    "test_multiple_content_types": lambda: {"content": [
        _text("Multiple content types test:"), _image(),
        _embedded("test://mixed-content-resource", json.dumps({"test": "data", "value": 123}), "application/json")]},
    "test_error_handling": lambda: {
        "content": [_text("This tool intentionally returns an error for testing")], "isError": True},
}


async def call(name: str, args: dict[str, Any], ctx: Any, log: Any) -> dict[str, Any]:
    """A fixture tool's result (as the wire's dict). `log(level, text)` sends a log message."""
    if name in _FIXED:
        return _FIXED[name]()
    acting = {"test_tool_with_logging": _logging, "test_tool_with_progress": _progress,
              "test_reconnection": _reconnection}.get(name)
    if acting is not None:
        return await acting(ctx, args, log)
    if name == "test_sampling":
        return await _sampling(ctx, str(args.get("prompt", "")))
    if name in ("test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"):
        return await _elicit(ctx, name, args)
    return {"content": [_text(f"JSON Schema 2020-12 tool called with: {json.dumps(args)}")]}


async def _sampling(ctx: Any, prompt: str) -> dict[str, Any]:
    import mcp_types as types

    try:
        result = await ctx.session.create_message(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(text=prompt))], max_tokens=100,
            related_request_id=ctx.request_id)
        content = result.content
        said = getattr(content, "text", None) or "No response"
        return {"content": [_text(f"LLM response: {said}")]}
    except Exception as e:  # noqa: BLE001 - the client without sampling: said in the result
        return {"content": [_text(f"Sampling not supported or error: {e}")]}


async def _elicit(ctx: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    if name == "test_elicitation":
        message, schema = str(args.get("message", "")), {
            "type": "object", "properties": {"response": {"type": "string", "description": "User's response"}},
            "required": ["response"]}
    elif name == "test_elicitation_sep1034_defaults":
        message, schema = "Please review and update the form fields with defaults", DEFAULTS_SCHEMA
    else:
        message, schema = "Please select options from the enum fields", ENUMS_SCHEMA
    try:
        result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        return {"content": [_text(f"User response: action={result.action}, "
                                  f"content={json.dumps(result.content or {})}")]}
    except Exception as e:  # noqa: BLE001 - the client without elicitation: said in the result
        return {"content": [_text(f"Elicitation not supported or error: {e}")]}


def read(uri: str) -> dict[str, Any] | None:
    """A fixture resource's contents, or None for a URI that is none of them."""
    if uri == "test://static-text":
        return {"uri": uri, "mimeType": "text/plain", "text": TEXT}
    if uri == "test://static-binary":
        return {"uri": uri, "mimeType": "image/png", "blob": PNG}
    if uri == "test://watched-resource":
        return {"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"}
    if uri.startswith("test://template/") and uri.endswith("/data"):
        rid = uri[len("test://template/"):-len("/data")]
        return {"uri": uri, "mimeType": "application/json",
                "text": json.dumps({"id": rid, "templateTest": True, "data": f"Data for ID: {rid}"})}
    return None


def prompt(name: str, args: dict[str, str]) -> dict[str, Any] | None:
    """A fixture prompt's messages, or None for a name that is none of them."""
    if name == "test_simple_prompt":
        return {"messages": [{"role": "user", "content": _text("This is a simple prompt for testing.")}]}
    if name == "test_prompt_with_arguments":
        text = f"Prompt with arguments: arg1='{args.get('arg1', '')}', arg2='{args.get('arg2', '')}'"
        return {"messages": [{"role": "user", "content": _text(text)}]}
    if name == "test_prompt_with_embedded_resource":
        uri = args.get("resourceUri", "test://example-resource")
        return {"messages": [{"role": "user", "content": _embedded(uri, "Embedded resource content for testing.")},
                             {"role": "user", "content": _text("Please process the embedded resource above.")}]}
    if name == "test_prompt_with_image":
        return {"messages": [{"role": "user", "content": _image()},
                             {"role": "user", "content": _text("Please analyze the image above.")}]}
    return None
