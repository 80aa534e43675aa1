"""Room: testing (beside the core). Owns the scripted server's Anthropic Messages API shapes (the
block types it takes, the answer whole or as its stream of events, the web_search server tool
played); may import testing.faults and testing.sse."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

from .faults import Fault
from .sse import chunks, sse

# The content block types the Messages API takes in a request (its server tools' blocks end in
# _tool_use / _tool_result), besides those it answered with itself (a newer block type comes back
# verbatim); any other type is a 400, as the real API answers.
MESSAGES_BLOCK_TYPES = frozenset({"text", "image", "document", "search_result", "thinking", "redacted_thinking",
                                  "tool_use", "tool_result", "server_tool_use", "container_upload"})


def unknown_block(messages: list[Any], served: set[str]) -> str | None:
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m, dict) else None
        for j, b in enumerate(content if isinstance(content, list) else []):
            t = str(b.get("type", "")) if isinstance(b, dict) else ""
            if t not in MESSAGES_BLOCK_TYPES and t not in served and not t.endswith(("_tool_use", "_tool_result")):
                return f"messages.{i}.content.{j}: Input tag '{t}' found using 'type' does not match any of the expected tags"
    return None


def play_web_search(content: list[dict[str, Any]], tools: list[Any],
                     search: Callable[[str], list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], int]:
    """The scripted answer with a web_search_tool_result after each web_search server_tool_use
    that has none, when the request offers the tool; (content, searches made)."""
    tool = next((t for t in tools if isinstance(t, dict) and str(t.get("type", "")).startswith("web_search_")), None)
    if tool is None:
        return content, 0
    answered = {b.get("tool_use_id") for b in content if b.get("type") == "web_search_tool_result"}
    allowed, blocked = tool.get("allowed_domains") or [], tool.get("blocked_domains") or []
    max_uses = tool.get("max_uses")

    def keep(url: str) -> bool:
        host = url.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower()
        return ((not allowed or any(host == d or host.endswith("." + d) for d in allowed))
                and not any(host == d or host.endswith("." + d) for d in blocked))

    out: list[dict[str, Any]] = []
    n = 0
    for b in content:
        out.append(b)
        if b.get("type") != "server_tool_use" or b.get("name") != "web_search" or b.get("id") in answered:
            continue
        if isinstance(max_uses, int) and n >= max_uses:
            result: Any = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
        else:
            n += 1
            query = str((b.get("input") or {}).get("query", ""))
            result = [{"type": "web_search_result", "url": r["url"], "title": r.get("title", ""),
                       "encrypted_content": "enc:" + hashlib.sha256(r["url"].encode()).hexdigest()[:32],
                       "page_age": r.get("page_age")} for r in search(query) if keep(r["url"])]
        out.append({"type": "web_search_tool_result", "tool_use_id": b.get("id"), "content": result})
    return out, n


def message_events(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any],
                      fault: Fault | None) -> list[bytes]:
    start_usage = {**usage, "output_tokens": 1}
    evs = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}}),
        sse("ping", {"type": "ping"})]
    if fault is not None and fault.stream_error:
        evs.append(sse("error", {"type": "error", "error": {"type": fault.stream_error,
                                                             "message": fault.message or "Overloaded"}}))
        return evs
    if fault is not None and fault.malformed_sse:
        evs.append(b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0,\n\n")
    bad_json = fault is not None and fault.bad_tool_json
    for i, b in enumerate(content):
        t = b.get("type")
        if t == "text":
            evs.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {**b, "text": ""}}))
            for part in chunks(b.get("text", "")):
                evs.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                        "delta": {"type": "text_delta", "text": part}}))
        elif t in ("tool_use", "server_tool_use"):  # input streamed as JSON deltas, as the API does
            evs.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {**b, "input": {}}}))
            js = json.dumps(b.get("input", {}))
            if bad_json:
                js, bad_json = js[:-1] + ',"', False
            for part in chunks(js, 16):
                evs.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                        "delta": {"type": "input_json_delta", "partial_json": part}}))
        elif t == "thinking":
            evs.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {**b, "thinking": "", "signature": ""}}))
            for part in chunks(b.get("thinking", "")):
                evs.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                        "delta": {"type": "thinking_delta", "thinking": part}}))
            evs.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "signature_delta",
                                                              "signature": b.get("signature", "")}}))
        else:  # redacted_thinking, server tools, unknown types: whole in the start event
            evs.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": b}))
        evs.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    end_usage = {"output_tokens": usage.get("output_tokens", 1),
                 **({"server_tool_use": usage["server_tool_use"]} if "server_tool_use" in usage else {})}
    evs.append(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": end_usage}))
    if fault is None or not fault.no_stop:
        evs.append(sse("message_stop", {"type": "message_stop"}))
    return evs


def message_object(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any]) -> dict[str, Any]:
    """A whole (not streamed) Messages answer."""
    return {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
