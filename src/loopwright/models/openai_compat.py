"""Room: providers (on models.base). Owns OpenAICompatModel; may import data types, models.base,
models.http and models.retry.

OpenAICompatModel: any OpenAI-compatible chat completions server (OpenAI, vLLM,
Ollama, llama.cpp server, LM Studio, OpenRouter, ...) over HTTP (models/http.py), no SDK
needed: the key goes as `Authorization: Bearer`.

The loop's history stays Anthropic-shaped; this module maps it to chat messages and
back:
- the system prompt becomes a system message;
- an assistant message's text and tool_use blocks become `content` + `tool_calls`
  (input object -> JSON `arguments`); thinking and unknown blocks are not sent;
- a user message's tool_result blocks become role "tool" messages in order, then its
  other blocks (text, images) one user message;
- finish_reason tool_calls / stop / length / content_filter -> stop_reason tool_use /
  end_turn / max_tokens / refusal (a server that says "stop" while calling tools, as
  some local servers do, gets tool_use; other values map by whether tools were called).
Streaming accumulates tool-call deltas by index; usage (with cached tokens) comes from
the final chunk requested with stream_options.include_usage. Reasoning deltas
(`reasoning_content`) are passed on as partial events only: they have no signature and
are not part of the history. A tool call whose arguments are not a JSON object is
answered with an is_error tool_result the model can correct (models/base.py
`parse_input`); one cut off by the length limit is not run.

A server that answers the streamed request with a plain chat.completion JSON body is
understood. `client=AsyncOpenAI(...)` sends the calls through that SDK client instead
(pip install 'loopwright[openai]').
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Unpack

from ..blocks import Block, TextBlock, wire_blocks
from ..history import FrozenList, frozen
from ..ids import new_hex
from ..messages import StreamEvent
from ..usage import Usage, count
from .base import ModelError, ModelEvent, ModelRequest, ModelResponse, tool_use
from .catalog import output_limit
from .http import USER_AGENT, HTTPModel, HTTPOptions, PerMessage
from .reasoning import openai_params
from .retry import (
    AttemptFailed,
    drain,
    error_from_body,
    is_retryable_status,
    iter_sse,
    sse_object,
)

FINISH_TO_STOP = {
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "stop": "end_turn",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_NOT_RETRYABLE_TYPES = frozenset({"invalid_request_error", "authentication_error", "permission_error",
                                  "not_found_error", "context_length_exceeded"})


class OpenAICompatModel(HTTPModel):
    """`OpenAICompatModel(model, base_url=None, api_key=None, max_retries=4, max_tokens=None,
    include_partial_messages=False, *, stream_usage=True, retry_base_delay=0.5,
    retry_max_delay=32.0, timeout=600.0, connect_timeout=10.0, total_timeout=1800.0, client=None)`.

    `base_url` defaults to OPENAI_BASE_URL (else api.openai.com); `api_key` to
    OPENAI_API_KEY, or "none" when a base_url is given (local servers need no key).
    `stream_usage=False` leaves out stream_options for servers that refuse it. `client` is
    an `openai.AsyncOpenAI` to send the calls through."""

    provider = "OpenAI-compatible"
    sdk = "openai"
    sdk_error = "OpenAIError"
    env_base_url = "OPENAI_BASE_URL"
    env_api_key = "OPENAI_API_KEY"
    default_base_url = "https://api.openai.com/v1"
    path = "/chat/completions"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 4,
        max_tokens: int | None = None,
        include_partial_messages: bool = False,
        *,
        stream_usage: bool = True,
        **options: Unpack[HTTPOptions],
    ) -> None:
        super().__init__(model, base_url, api_key, max_retries, max_tokens or output_limit(model),
                         include_partial_messages, **options)
        if self.api_key is None and self.base_url:
            self.api_key = "none"
        self.stream_usage = stream_usage
        # a server of the user's own (not OpenAI's): its window is asked before the first call (models/window.py)
        self.discovers_window = bool(self.base_url) and "api.openai.com" not in str(self.base_url)
        self._tools_key: Any = None  # the definitions _tools_built was made of
        self._per_message: PerMessage[list[dict[str, Any]]] = PerMessage(self.message_items)  # (each message once)
        self._tools_built: list[dict[str, Any]] = []

    def headers(self) -> dict[str, str]:
        if not self.api_key:
            raise ModelError("no OpenAI API key: set OPENAI_API_KEY or pass api_key (AgentOptions.api_key), "
                             "or a base_url of a local server")
        return {"authorization": f"Bearer {self.api_key}", "content-type": "application/json",
                "accept": "text/event-stream, application/json", "user-agent": USER_AGENT}

    # --- request mapping ---------------------------------------------------------------------

    @staticmethod
    def message_items(m: dict[str, Any]) -> list[dict[str, Any]]:
        """One history message in this API's shape (the Responses model's: its `input` items)."""
        return chat_messages(m)

    def _tools_param(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tools in this API's shape: once for a run's (frozen) definitions, each time for a
        caller's plain list (it may have changed in place since: issue 41)."""
        if self._tools_key is not tools or type(tools) is not FrozenList:
            self._tools_key = tools
            self._tools_built = frozen([
                {"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                  "parameters": t.get("input_schema") or {"type": "object"}}}
                for t in tools
            ])
        return self._tools_built

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.name,
            "messages": to_openai_messages(request.system, request.messages, self._per_message),
        }
        max_tokens = request.max_tokens or self.max_tokens
        if max_tokens:
            # OpenAI's own API wants max_completion_tokens; compatible servers know max_tokens
            official = self.base_url is None or "api.openai.com" in self.base_url
            params["max_completion_tokens" if official else "max_tokens"] = max_tokens
        if request.tools:
            params["tools"] = self._tools_param(request.tools)
        if self.stream_usage and self.stream_calls:
            params["stream_options"] = {"include_usage": True}
        if request.effort is not None or request.thinking is not None:  # reasoning_effort (models/reasoning.py)
            params.update(openai_params(self.name, request.effort, request.thinking))
        if request.extra:  # temperature, tool_choice, ...: sent as they are
            params.update(request.extra)
        return params

    # --- the call ----------------------------------------------------------------------------

    async def _sdk_open(self, body: dict[str, Any], request_headers: dict[str, str] | None = None) -> Any:
        kwargs = {k: body[k] for k in ("model", "messages")}
        extra = {k: v for k, v in body.items() if k not in kwargs}
        stream = await self.sdk_client.chat.completions.create(**kwargs, stream=True, extra_body=extra or None)
        return stream.response

    async def _read_stream(self, lines: AsyncIterator[str]) -> AsyncGenerator[ModelEvent, None]:
        acc = _Accumulator()
        events = iter_sse(lines)
        async for sse in events:
            data = sse.data.strip()
            if not data:
                continue
            if data == "[DONE]":
                acc.done = True
                await drain(events)  # keep-alive: the connection serves the next call
                break
            chunk = sse_object(data)
            if chunk.get("error") is not None:
                raise _stream_error(chunk)
            if self.include_partial_messages:
                yield StreamEvent(chunk)
            acc.feed(chunk)
        yield acc.response(self.name)

    def _read_json(self, obj: Any) -> ModelResponse:
        """A whole chat.completion (a server that answered the streamed request without
        streaming): read as one chunk whose delta is the message."""
        if obj.get("error") is not None:
            raise _stream_error(obj)
        choices = obj.get("choices")
        if not isinstance(choices, list):
            raise AttemptFailed(f"the server's answer is not a chat completion: {json.dumps(obj)[:200]}",
                                retryable=False)
        acc = _Accumulator()
        acc.feed({**obj, "choices": [{**c, "delta": c.get("message") or {}} for c in choices if isinstance(c, dict)]})
        acc.done = True
        return acc.response(self.name)


def _stream_error(chunk: dict[str, Any]) -> AttemptFailed:
    typ, msg = error_from_body(chunk)
    code = (chunk.get("error") or {}).get("code") if isinstance(chunk.get("error"), dict) else None
    status = code if isinstance(code, int) else None
    retryable = is_retryable_status(status) if status is not None else typ not in _NOT_RETRYABLE_TYPES
    return AttemptFailed(f"{typ or 'error'} (in stream): {msg or chunk}", status, retryable)


# --- history mapping -------------------------------------------------------------------------

def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text":
                parts.append(str(b.get("text", "")))
            elif isinstance(b, dict) and b.get("type") == "image":
                parts.append("[image omitted]")
        text = "\n".join(parts)
    else:
        text = ""
    return f"Error: {text}" if block.get("is_error") else text


def _image_part(block: dict[str, Any]) -> dict[str, Any] | None:
    src = block.get("source") or {}
    if src.get("type") == "base64":
        url = f"data:{src.get('media_type', 'image/png')};base64,{src.get('data', '')}"
    elif src.get("type") == "url":
        url = str(src.get("url"))
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def message_blocks(m: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """A message of an Anthropic-shaped history as (role, its blocks): a string content is one
    text block; what is not a block (a dict) is left out. Both OpenAI wire shapes read it."""
    return str(m.get("role")), wire_blocks(m)


def user_parts(blocks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A user message's tool results, and its texts and images (in order): OpenAI's wire shapes
    send the results as items of their own, before the message that carries the rest."""
    return ([b for b in blocks if b.get("type") == "tool_result"],
            [b for b in blocks if b.get("type") in ("text", "image")])


def to_openai_messages(system: str | None, history: list[dict[str, Any]],
                       per_message: PerMessage[list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """The chat-completions `messages` for an Anthropic-shaped history (the loop's own history is
    never changed). `per_message`: a model's PerMessage(chat_messages), which converts each
    message once in a run, not at every call."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for items in per_message.map(history) if per_message is not None else map(chat_messages, history):
        out += items
    return out


def chat_messages(m: dict[str, Any]) -> list[dict[str, Any]]:
    """One history message as chat-completions messages (a user message's tool results are
    messages of their own, before its text and images)."""
    role, blocks = message_blocks(m)
    if role == "assistant":
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        calls = [
            {"id": b.get("id"), "type": "function",
             "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)}}
            for b in blocks if b.get("type") == "tool_use"
        ]
        msg: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
        if calls:
            msg["tool_calls"] = calls
        return [msg]
    results, parts = user_parts(blocks)
    out = [{"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": _result_text(b)} for b in results]
    rest = [p for p in (_image_part(b) if b["type"] == "image" else {"type": "text", "text": str(b.get("text", ""))}
                        for b in parts) if p is not None]
    if rest:
        if all(p["type"] == "text" for p in rest):
            out.append({"role": "user", "content": "\n\n".join(p["text"] for p in rest)})
        else:
            out.append({"role": "user", "content": rest})
    return out


class _Accumulator:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.done = False

    def feed(self, chunk: dict[str, Any]) -> None:
        if chunk.get("model"):
            self.model = str(chunk["model"])
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self.text.append(delta["content"])
            for pos, tc in enumerate(delta.get("tool_calls") or []):
                idx = tc.get("index", pos)
                acc = self.calls.setdefault(idx, {"id": None, "name": "", "args": []})
                if tc.get("id"):
                    acc["id"] = tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name") and not acc["name"]:
                    acc["name"] = fn["name"]
                if fn.get("arguments"):
                    acc["args"].append(fn["arguments"])
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def response(self, model: str) -> ModelResponse:
        if self.finish is None:
            raise AttemptFailed(
                "the stream ended before a finish_reason" + ("" if self.done else " (no [DONE])"))
        content: list[Block] = []
        text = "".join(self.text)
        if text:
            content.append(TextBlock(text))
        last = max(self.calls, default=None) if self.finish == "length" else None  # the call being written
        for idx in sorted(self.calls):
            c = self.calls[idx]
            if not c["name"]:
                raise AttemptFailed(f"tool call {idx} has no function name")
            content.append(tool_use(c["id"] or f"call_{new_hex(24)}", c["name"], "".join(c["args"]),
                                    idx == last))
        stop = FINISH_TO_STOP.get(self.finish)
        if self.calls and stop in (None, "end_turn"):
            stop = "tool_use"
        elif stop is None:
            stop = "end_turn"
        u = self.usage or {}
        prompt = count(u.get("prompt_tokens"))
        details = u.get("prompt_tokens_details")
        cached = count(details.get("cached_tokens")) if isinstance(details, dict) else 0
        usage = Usage(input_tokens=max(0, prompt - cached), output_tokens=count(u.get("completion_tokens")),
                      cache_read_input_tokens=cached)
        # usage is keyed by the name asked for (a local server answers with its model file's path)
        return ModelResponse(content, stop, usage, model)
