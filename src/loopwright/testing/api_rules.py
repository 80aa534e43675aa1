"""Room: testing (beside the core). Owns the rules a request's conversation must keep for each
provider to accept it, beyond Inv (the Messages API's refusals in its own words; OpenAI's Chat
Completions and Responses pairing of calls and outputs); may import invariant.

The scripted server refuses a request that breaks them (strict mode), as the real APIs answer
400, and the loop's tests hold every request to them (tests/loop/test_odd_models.py)."""

from __future__ import annotations

import re
from typing import Any

from ..invariant import InvariantViolation, check


def _blank(text: Any) -> bool:
    return not isinstance(text, str) or not text or text.isspace()


def _blank_text_at(content: Any) -> str | None:
    """Where a content list holds a text block without non-whitespace text (in a tool_result's
    content too), as `content.J`; None when it holds none."""
    if not isinstance(content, list):
        return None
    for j, b in enumerate(content):
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and _blank(b.get("text")):
            return f"content.{j}"
        if b.get("type") == "tool_result" and (inner := _blank_text_at(b.get("content"))) is not None:
            return f"content.{j}.{inner}"
    return None


_PIL_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


def _image_problem(content: Any) -> str | None:
    """Why the Messages API refuses a base64 image in a content list (in a tool_result's content
    too), as `content.J...: <its words>`; None when it takes them all. Its data must be base64 of
    an image that decodes, of the media type given, at most 8000 px a side."""
    if not isinstance(content, list):
        return None
    for j, b in enumerate(content):
        if not isinstance(b, dict):
            continue
        if b.get("type") == "tool_result" and (inner := _image_problem(b.get("content"))) is not None:
            return f"content.{j}.{inner}"
        src = b.get("source")
        if b.get("type") != "image" or not isinstance(src, dict) or src.get("type") != "base64":
            continue
        if (why := _base64_image_problem(src.get("data"), src.get("media_type"))) is not None:
            return f"content.{j}.image.source.base64{why}"
    return None


def _base64_image_problem(data: Any, mime: Any) -> str | None:
    import base64
    import binascii
    import io

    from PIL import Image

    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, TypeError):
        return ".data: The image data is not valid base64"
    try:
        img = Image.open(io.BytesIO(raw))
        img.load()
    except Exception:  # noqa: BLE001 - whatever Pillow raises on a cut or corrupt image: the API cannot process it
        return ": Could not process image"
    actual = _PIL_TYPES.get(img.format or "")
    if actual != mime:
        return (f": The image was specified using the {mime} media type, but the image appears to be "
                f"a {actual or img.format} image")
    if max(img.size) > 8000:
        return ".data: At least one of the image dimensions exceed max allowed size: 8000 pixels"
    return None


def messages_problem(messages: list[Any]) -> str | None:
    """Why the Messages API refuses `messages` (its error message), or None when it takes them:
    content_problem's rules, and Inv (P1-P3) for what comes before a final assistant message (a
    prefill). (Consecutive user messages are taken: the API joins them into one turn.)"""
    if (problem := content_problem(messages)) is not None:
        return problem
    h = [m for m in messages if m.get("role") != "system"]  # (newer API versions take role "system" messages)
    try:
        check(h[:-1] if len(h) > 1 and h[-1].get("role") == "assistant" else h)
    except InvariantViolation as e:
        return f"messages: {e}"
    return None


def content_problem(messages: list[Any]) -> str | None:
    """The Messages API's rules on what messages hold (its error messages), or None: every message
    but an optional final assistant one has content; no text block is empty or whitespace only;
    tool_use ids are unique in the whole request, and they and the tool_results' tool_use_ids have
    the API's shape ('^[a-zA-Z0-9_-]+$'); a base64 image is one it can process (_image_problem)."""
    seen: set[Any] = set()
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        content = m.get("content")
        last_assistant = i == len(messages) - 1 and m.get("role") == "assistant"
        if not content and not last_assistant:
            return (f"messages.{i}: all messages must have non-empty content except for the optional final "
                    "assistant message")
        if isinstance(content, str):
            if _blank(content) and not last_assistant:
                return "messages: text content blocks must contain non-whitespace text"
            continue
        if (where := _blank_text_at(content)) is not None:
            return f"messages.{i}.{where}: text content blocks must contain non-whitespace text"
        if (image := _image_problem(content)) is not None:
            return f"messages.{i}.{image}"
        for j, b in enumerate(content or []):
            if isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result"):
                key = "id" if b["type"] == "tool_use" else "tool_use_id"
                if not isinstance(b.get(key), str) or not re.fullmatch(r"[a-zA-Z0-9_-]+", b[key]):
                    return f"messages.{i}.content.{j}.{b['type']}.{key}: String should match pattern '^[a-zA-Z0-9_-]+$'"
            if isinstance(b, dict) and b.get("type") == "tool_use":
                if b.get("id") in seen:
                    return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
                seen.add(b.get("id"))
    return None


def chat_problem(messages: list[Any]) -> str | None:
    """Why OpenAI's Chat Completions refuses `messages` (its wording where it has one), or None:
    an assistant message has content or tool calls; the tool messages right after an assistant's
    tool calls answer each of its ids once (and no tool message answers anything else); a call id
    is not used twice (which tool message answers which call would be ambiguous)."""
    ids: set[Any] = set()
    waiting: list[Any] = []
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role == "tool":
            if m.get("tool_call_id") not in waiting:
                return (f"messages[{i}]: messages with role 'tool' must be a response to a preceeding message "
                        "with 'tool_calls'")
            waiting.remove(m.get("tool_call_id"))
            continue
        if waiting:
            return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                    f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(map(str, waiting))}")
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if not m.get("content") and not calls:
                return f"messages[{i}]: an assistant message needs content or tool_calls"
            for c in calls:
                if c.get("id") in ids:
                    return f"messages[{i}]: tool call id {c.get('id')!r} is used twice"
                ids.add(c.get("id"))
                waiting.append(c.get("id"))
    if waiting:
        return f"the tool calls {', '.join(map(str, waiting))} have no tool message"
    return None


def responses_problem(items: list[Any]) -> str | None:
    """Why OpenAI's Responses API refuses `input` (its wording where it has one), or None: a function_call_output
    answers an earlier function_call, each call is answered, and a call id is not used twice."""
    calls: set[Any] = set()
    answered: set[Any] = set()
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "function_call":
            if item.get("call_id") in calls:
                return f"function call id {item.get('call_id')!r} is used twice"
            calls.add(item.get("call_id"))
        elif kind == "function_call_output":
            if item.get("call_id") not in calls:
                return f"No tool call found for function call output with call_id {item.get('call_id')}."
            answered.add(item.get("call_id"))
    for c in calls - answered:
        return f"No tool output found for function call {c}."
    return None
