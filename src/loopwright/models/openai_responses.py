"""Room: providers (on models.base). Owns OpenAIResponsesModel; may import data types, models.base,
models.http, models.retry and models.openai_compat.

OpenAIResponsesModel: OpenAI's Responses API (`POST {base_url}/responses`), as OpenAI, Codex,
llama.cpp's llama-server, vLLM and Ollama serve it. Chosen by the model string
`responses:<model>` (e.g. `responses:gpt-5`); the base URL and key are the OpenAI-compatible
provider's (OPENAI_BASE_URL, OPENAI_API_KEY, `--base-url`).

The loop's history stays Anthropic-shaped; this module maps it to input items and back:
- the system prompt is `instructions`; tools are `{"type": "function", name, description,
  parameters}`;
- a user message's text and images become one `message` item (input_text / input_image), its
  tool_result blocks `function_call_output` items (call_id = the tool_use id);
- an assistant message's blocks, in order: text as an assistant `message` item (output_text),
  tool_use as a `function_call` item (call_id, name, JSON arguments), and a reasoning item as
  it came: kept in the history as the block `{"type": "openai_reasoning", "item": {...}}` and
  sent back verbatim (its id, summary, content and encrypted_content), as the API asks for the
  reasoning of a turn with tool calls. On OpenAI itself calls are sent with `store: false` and
  `include: ["reasoning.encrypted_content"]`, so nothing is kept server side;
- status `incomplete` with reason max_output_tokens / content_filter -> stop_reason max_tokens
  / refusal; a response with function calls -> tool_use; else end_turn;
- usage: input_tokens (cached ones included) less input_tokens_details.cached_tokens, the
  cached ones as cache reads, output_tokens.
Streaming reads the output items as `response.output_item.done` delivers them and takes the
final `response.completed` / `response.incomplete` (its output and usage) as the answer; a
stream without one is retried like any broken stream. `max_output_tokens` is sent on every
call (the model catalog's default, or AgentOptions.max_tokens).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ..blocks import Block, TextBlock, UnknownBlock
from ..ids import new_hex
from ..messages import StreamEvent
from ..usage import Usage, count
from .base import ModelEvent, ModelRequest, ModelResponse, tool_use
from .http import PerMessage
from .openai_compat import OpenAICompatModel, _image_part, _result_text, message_blocks, user_parts
from .reasoning import openai_params
from .retry import AttemptFailed, drain, error_from_body, iter_sse, sse_object

REASONING = "openai_reasoning"  # the history block that keeps a reasoning item verbatim
_DONE = ("response.completed", "response.incomplete")


class OpenAIResponsesModel(OpenAICompatModel):
    """`OpenAIResponsesModel(model, base_url=None, api_key=None, max_retries=4, max_tokens=None,
    include_partial_messages=False, *, retry_base_delay=0.5, ..., client=None)`: as
    OpenAICompatModel, on `/responses`."""

    provider = "OpenAI Responses"
    path = "/responses"
    history_key = "input"

    @staticmethod
    def message_items(m: dict[str, Any]) -> list[dict[str, Any]]:
        return responses_items(m)

    @property
    def official(self) -> bool:
        return self.base_url is None or "api.openai.com" in self.base_url

    def _response_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"type": "function", "name": t["name"], "description": t.get("description", ""),
                 "parameters": t.get("input_schema") or {"type": "object"}} for t in tools]

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.name, "input": to_responses_input(request.messages, self._per_message)}
        if request.system:
            params["instructions"] = request.system
        limit = request.max_tokens or self.max_tokens
        if limit:
            params["max_output_tokens"] = limit
        if request.tools:
            params["tools"] = self._response_tools(request.tools)
        if self.official:  # stateless: the reasoning comes back encrypted and is sent back with the history
            params["store"] = False
            params["include"] = ["reasoning.encrypted_content"]
        if request.effort is not None or request.thinking is not None:
            effort = openai_params(self.name, request.effort, request.thinking).get("reasoning_effort")
            if effort:
                params["reasoning"] = {"effort": effort}
        if request.extra:
            params.update(request.extra)
        return params

    async def _sdk_open(self, body: dict[str, Any], request_headers: dict[str, str] | None = None) -> Any:
        kwargs = {k: body[k] for k in ("model", "input")}
        extra = {k: v for k, v in body.items() if k not in kwargs}
        stream = await self.sdk_client.responses.create(**kwargs, stream=True, extra_body=extra or None)
        return stream.response

    async def _read_stream(self, lines: AsyncIterator[str]) -> AsyncGenerator[ModelEvent, None]:
        items: dict[int, dict[str, Any]] = {}
        events = iter_sse(lines)
        async for sse in events:
            data = sse.data.strip()
            if not data or data == "[DONE]":
                continue
            ev = sse_object(data)
            kind = ev.get("type") or sse.event
            if kind == "error" or kind == "response.failed":
                raise _failure(ev)
            if self.include_partial_messages:
                yield StreamEvent(ev)
            if kind == "response.output_item.done" and isinstance(ev.get("item"), dict):
                idx = ev.get("output_index")
                items[idx if isinstance(idx, int) else len(items)] = ev["item"]
            elif kind in _DONE:
                got = ev.get("response")
                response: dict[str, Any] = got if isinstance(got, dict) else {}
                if not response.get("output") and items:  # a server that lists the items only as they came
                    response = {**response, "output": [items[i] for i in sorted(items)]}
                await drain(events)
                yield read_response(response, self.name, kind)
                return
        raise AttemptFailed("the stream ended before response.completed")

    def _read_json(self, obj: Any) -> ModelResponse:
        if obj.get("error") and obj.get("object") != "response":
            raise _failure(obj)
        if not isinstance(obj.get("output"), list):
            raise AttemptFailed(f"the server's answer is not a response: {json.dumps(obj)[:200]}",
                                retryable=False)
        return read_response(obj, self.name, "response." + str(obj.get("status") or "completed"))


def _failure(ev: dict[str, Any]) -> AttemptFailed:
    """An `error` event ({code, message}), a `response.failed` ({response: {error}}) or an error body."""
    src: Any = ev.get("response") if isinstance(ev.get("response"), dict) else ev
    src = src.get("error") if isinstance(src.get("error"), dict) else src
    code = src.get("code") if src.get("type") in (None, "error") else src.get("type") or src.get("code")
    msg = src.get("message")
    if code is None and msg is None:
        code, msg = error_from_body(ev)
    retryable = str(code) in ("server_error", "rate_limit_exceeded", "overloaded", "api_error", "None")
    return AttemptFailed(f"{code or 'error'} (in stream): {msg or ev}", retryable=retryable)


def read_response(response: dict[str, Any], model: str, kind: str) -> ModelResponse:
    """A Responses API `response` object as a ModelResponse (see the module's mapping)."""
    output = [i for i in response.get("output") or [] if isinstance(i, dict)]
    details = response.get("incomplete_details") or {}
    reason = details.get("reason") if isinstance(details, dict) else None
    incomplete = response.get("status") == "incomplete" or kind == "response.incomplete"
    stop = ("max_tokens" if reason in (None, "max_output_tokens") else "refusal") if incomplete else None
    content: list[Block] = []
    calls = [i for i, item in enumerate(output) if item.get("type") == "function_call"]
    for i, item in enumerate(output):
        t = item.get("type")
        if t == "reasoning":
            content.append(UnknownBlock({"type": REASONING, "item": item}))
        elif t == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "output_text":
                    content.append(TextBlock(str(part.get("text", ""))))
                elif isinstance(part, dict) and part.get("type") == "refusal":
                    content.append(TextBlock(str(part.get("refusal", ""))))
                    stop = stop or "refusal"
        elif t == "function_call":
            if not item.get("name"):
                raise AttemptFailed(f"function call {i} has no name")
            cut = stop == "max_tokens" and i == calls[-1]  # the call being written when the limit hit
            content.append(tool_use(str(item.get("call_id") or f"call_{new_hex(24)}"),
                                    str(item["name"]), str(item.get("arguments") or ""), cut))
    if stop is None:
        stop = "tool_use" if calls else "end_turn"
    u = response.get("usage") or {}
    details = u.get("input_tokens_details")
    cached = count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    usage = Usage(input_tokens=max(0, count(u.get("input_tokens")) - cached),
                  output_tokens=count(u.get("output_tokens")), cache_read_input_tokens=cached)
    return ModelResponse(content, stop, usage, model)  # keyed by the name asked for


def to_responses_input(history: list[dict[str, Any]],
                       per_message: PerMessage[list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """The `input` items for an Anthropic-shaped history (the history itself is never changed).
    `per_message`: a model's PerMessage(responses_items), which converts each message once in a
    run, not at every call."""
    out: list[dict[str, Any]] = []
    for items in per_message.map(history) if per_message is not None else map(responses_items, history):
        out += items
    return out


def responses_items(m: dict[str, Any]) -> list[dict[str, Any]]:
    """One history message as `input` items (a user message's tool results are items of their
    own, before its text and images)."""
    role, blocks = message_blocks(m)
    if role == "assistant":
        return _assistant_items(blocks)
    results, rest = user_parts(blocks)
    out = [{"type": "function_call_output", "call_id": b.get("tool_use_id"), "output": _result_text(b)}
           for b in results]
    parts: list[dict[str, Any]] = []
    for b in rest:
        if b["type"] == "text":
            parts.append({"type": "input_text", "text": str(b.get("text", ""))})
        elif (img := _image_part(b)) is not None:
            parts.append({"type": "input_image", "image_url": str(img["image_url"]["url"])})
    if parts:
        out.append({"type": "message", "role": "user", "content": parts})
    return out


def _assistant_items(blocks: list[Any]) -> list[dict[str, Any]]:
    """An assistant message's blocks as items, in order (consecutive texts as one message item)."""
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    b: Any
    for b in [*blocks, None]:
        t = b.get("type") if isinstance(b, dict) else None
        if t == "text":
            texts.append(str(b.get("text", "")))
            continue
        if texts:
            out.append({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": "".join(texts)}]})
            texts = []
        if t == "tool_use":
            out.append({"type": "function_call", "call_id": b.get("id"), "name": b.get("name"),
                        "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)})
        elif t == REASONING and isinstance(item := b.get("item"), dict):
            out.append(item)  # verbatim
    return out
