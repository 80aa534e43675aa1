"""Room: testing (beside the core). Owns the scripted server's OpenAI chat completions shapes (the
request mapped to the Anthropic-shaped history the script reads, the answer whole or as its stream
of chunks); may import testing.faults and testing.sse."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from .faults import Fault
from .sse import chunks, sse

STOP_TO_FINISH = {
    "end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "stop_sequence": "stop",
    "refusal": "content_filter", "pause_turn": "stop", "model_context_window_exceeded": "length",
}


def openai_to_anthropic(messages: list[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """Map chat-completions messages back to (system, Anthropic-shaped history): role
    "tool" messages become tool_result blocks of one user message, followed by the text
    of a user message that comes right after them."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    after_tools = False
    for m in messages:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        content = m.get("content")
        if role in ("system", "developer"):
            system.append(_oa_text(content))
            continue
        if role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.get("tool_call_id"), "content": _oa_text(content)}
            if after_tools:
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
            after_tools = True
            continue
        if role == "user":
            blocks = _oa_user_blocks(content)
            if after_tools:
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": "user", "content": blocks})
        elif role == "assistant":
            blocks = []
            text = _oa_text(content)
            if text:
                blocks.append({"type": "text", "text": text})
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                try:
                    inp = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    inp = {"_invalid_json": fn.get("arguments")}
                blocks.append({"type": "tool_use", "id": tc.get("id"), "name": fn.get("name"), "input": inp})
            out.append({"role": "assistant", "content": blocks})
        after_tools = False
    return ("\n\n".join(system) or None), out


def _oa_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _oa_user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for p in content or []:
        if isinstance(p, dict) and p.get("type") == "text":
            blocks.append({"type": "text", "text": p.get("text", "")})
        elif isinstance(p, dict) and p.get("type") == "image_url":
            blocks.append({"type": "image", "source": {"type": "url", "url": (p.get("image_url") or {}).get("url")}})
    return blocks


def openai_tools_to_anthropic(tools: list[Any]) -> list[dict[str, Any]]:
    out = []
    for t in tools or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict):
            out.append({"name": fn.get("name"), "description": fn.get("description", ""),
                        "input_schema": fn.get("parameters") or {"type": "object"}})
    return out


def chat_usage(usage: dict[str, Any]) -> dict[str, Any]:
    cached = int(usage.get("cache_read_input_tokens") or 0)
    prompt = int(usage.get("input_tokens") or 0) + cached + int(usage.get("cache_creation_input_tokens") or 0)
    out = int(usage.get("output_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
            "prompt_tokens_details": {"cached_tokens": cached}}


def chat_parts(content: list[dict[str, Any]], bad_json: bool = False) -> tuple[str, list[dict[str, Any]]]:
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    calls: list[dict[str, Any]] = []
    for b in content:
        if b.get("type") == "tool_use":
            args = json.dumps(b.get("input", {}))
            if bad_json and not calls:
                args = args[:-1] + ',"'
            calls.append({"id": b.get("id"), "type": "function", "function": {"name": b.get("name"), "arguments": args}})
    return text, calls


def chat_message(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any]) -> dict[str, Any]:
    text, calls = chat_parts(content)
    msg: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        msg["tool_calls"] = calls
    return {"id": "chatcmpl-" + uuid.uuid4().hex[:24], "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": msg, "finish_reason": STOP_TO_FINISH.get(stop, "stop")}],
            "usage": chat_usage(usage)}


def chat_chunks(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any],
                   body: dict[str, Any], fault: Fault | None) -> list[bytes]:
    cid = "chatcmpl-" + uuid.uuid4().hex[:24]
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    evs = [chunk({"role": "assistant", "content": ""})]
    if fault is not None and fault.stream_error:
        evs.append(sse(None, {"error": {"message": fault.message or "Overloaded", "type": fault.stream_error,
                                         "code": fault.stream_error}}))
        return evs
    if fault is not None and fault.malformed_sse:
        evs.append(b"data: {\"id\": \"broken\", \"choices\": [\n\n")
    text, calls = chat_parts(content, bad_json=fault is not None and fault.bad_tool_json)
    if text:
        for part in chunks(text):
            evs.append(chunk({"content": part}))
    for i, c in enumerate(calls):
        evs.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                          "function": {"name": c["function"]["name"], "arguments": ""}}]}))
        for part in chunks(c["function"]["arguments"], 16):
            evs.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
    if fault is not None and fault.no_stop:
        return evs
    evs.append(chunk({}, STOP_TO_FINISH.get(stop, "stop")))
    if (body.get("stream_options") or {}).get("include_usage"):
        evs.append(sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                               "choices": [], "usage": chat_usage(usage)}))
    evs.append(b"data: [DONE]\n\n")
    return evs
