"""Room: testing (beside the core). Owns the scripted server's Responses API shapes; may import
data types only.

What `POST /v1/responses` of the loopback server reads and writes, as OpenAI's Responses API
does: `input` items back to an Anthropic-shaped history (for the script and the Inv check),
and a scripted turn as a `response` object or its event stream (response.created,
response.output_item.added / .done, response.output_text.delta,
response.function_call_arguments.delta, then response.completed or, at max_tokens,
response.incomplete with incomplete_details.reason max_output_tokens).

A scripted turn's block `{"type": "openai_reasoning", "item": {...}}` is answered as that
reasoning item verbatim; a `thinking` block as a reasoning item whose summary is its text and
whose encrypted_content is its signature.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

REASONING = "openai_reasoning"


def responses_to_anthropic(body: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]], list[dict[str, Any]]]:
    """(system, Anthropic-shaped history, tools) of a Responses API request body."""
    system: list[str] = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
    raw = body.get("input")
    items: list[Any] = [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw or [])
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for item in items:
        if not isinstance(item, dict):
            continue
        t = item.get("type")
        if t == "function_call":
            try:
                args = json.loads(item.get("arguments") or "{}")
            except ValueError:
                args = {"_invalid_json": item.get("arguments")}
            add("assistant", [{"type": "tool_use", "id": item.get("call_id"), "name": item.get("name"), "input": args}])
        elif t == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            add("user", [{"type": "tool_result", "tool_use_id": item.get("call_id"), "content": text}])
        elif t == "reasoning":
            add("assistant", [{"type": REASONING, "item": item}])
        elif item.get("role") in ("system", "developer"):
            system.append(_text(item.get("content")))
        elif item.get("role") in ("user", "assistant"):
            content = item.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [
                _block(p) for p in content or [] if isinstance(p, dict)]
            add(str(item["role"]), [b for b in blocks if b])
    tools = [{"name": t.get("name"), "description": t.get("description", ""),
              "input_schema": t.get("parameters") or {"type": "object"}}
             for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
    return ("\n\n".join(system) or None), out, tools


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))


def _block(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") in ("input_text", "output_text"):
        return {"type": "text", "text": str(part.get("text", ""))}
    if part.get("type") == "input_image":
        return {"type": "image", "source": {"type": "url", "url": str(part.get("image_url", ""))}}
    return {}


def output_items(content: list[dict[str, Any]], bad_json: bool = False) -> list[dict[str, Any]]:
    """A scripted turn's blocks as Responses output items."""
    items: list[dict[str, Any]] = []
    for b in content:
        t = b.get("type")
        if t == "text":
            items.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:24], "status": "completed",
                          "role": "assistant", "content": [{"type": "output_text", "text": b.get("text", ""),
                                                            "annotations": []}]})
        elif t == "tool_use":
            args = json.dumps(b.get("input", {}))
            if bad_json and not any(i["type"] == "function_call" for i in items):
                args = args[:-1] + ',"'
            items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:24], "status": "completed",
                          "call_id": b.get("id"), "name": b.get("name"), "arguments": args})
        elif t == REASONING and isinstance(b.get("item"), dict):
            items.append(dict(b["item"]))
        elif t == "thinking":
            items.append({"type": "reasoning", "id": "rs_" + uuid.uuid4().hex[:24],
                          "summary": [{"type": "summary_text", "text": b.get("thinking", "")}],
                          "encrypted_content": b.get("signature", "")})
    return items


def responses_usage(usage: dict[str, Any]) -> dict[str, Any]:
    cached = int(usage.get("cache_read_input_tokens") or 0)
    total = int(usage.get("input_tokens") or 0) + cached + int(usage.get("cache_creation_input_tokens") or 0)
    out = int(usage.get("output_tokens") or 0)
    return {"input_tokens": total, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": total + out}


def response_object(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any],
                    bad_json: bool = False) -> dict[str, Any]:
    incomplete = stop in ("max_tokens", "refusal")
    return {"id": "resp_" + uuid.uuid4().hex[:24], "object": "response", "created_at": int(time.time()),
            "status": "incomplete" if incomplete else "completed", "model": model,
            "incomplete_details": ({"reason": "max_output_tokens" if stop == "max_tokens" else "content_filter"}
                                   if incomplete else None),
            "output": output_items(content, bad_json), "usage": responses_usage(usage)}


def response_events(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any],
                    stream_error: str | None = None, message: str | None = None, malformed: bool = False,
                    no_stop: bool = False, bad_json: bool = False) -> list[tuple[str, dict[str, Any] | str]]:
    """The event stream of one response: (event name, data) pairs, data a str when malformed."""
    final = response_object(model, content, stop, usage, bad_json)
    head = {**final, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    evs: list[tuple[str, dict[str, Any] | str]] = [("response.created", {"type": "response.created",
                                                                          "response": head})]
    if stream_error:
        evs.append(("error", {"type": "error", "code": stream_error, "message": message or "Overloaded"}))
        return evs
    if malformed:
        evs.append(("response.output_text.delta", '{"type": "response.output_text.delta", "delta": '))
    for i, item in enumerate(final["output"]):
        empty = ({**item, "content": []} if item["type"] == "message" else
                 {**item, "arguments": ""} if item["type"] == "function_call" else item)
        evs.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                   "item": empty}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            for k in range(0, len(text), 24):
                evs.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": i,
                                                           "content_index": 0, "item_id": item["id"],
                                                           "delta": text[k:k + 24]}))
        elif item["type"] == "function_call":
            args = item["arguments"]
            for k in range(0, len(args), 16):
                evs.append(("response.function_call_arguments.delta", {
                    "type": "response.function_call_arguments.delta", "output_index": i, "item_id": item["id"],
                    "delta": args[k:k + 16]}))
        evs.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                  "item": item}))
    if not no_stop:
        kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
        evs.append((kind, {"type": kind, "response": final}))
    return evs
