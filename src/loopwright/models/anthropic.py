"""Room: providers (on models.base). Owns AnthropicModel; may import data types, models.base,
models.http and models.retry (the SDK lazily).

AnthropicModel: the Messages API over HTTP with the official `anthropic` SDK.

- Streams every call (SSE) and assembles the message from the raw events itself, so
  thinking / redacted_thinking / unknown blocks come back byte for byte and are sent
  back verbatim. Only a message whose `message_stop` arrived becomes a ModelResponse.
- Prompt caching is on by default: breakpoints on the last tool, the system prompt,
  the newest message and the previous user message (at most 4), so each call reads
  the prefix the previous call wrote.
- Retries are loopwright's own (models/retry.py): the SDK client has max_retries=0.

The SDK is imported when the first call is made, never by `import loopwright`.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from typing import Any

from ..blocks import blocks_from_wire
from ..messages import StreamEvent
from ..usage import Usage
from .base import ModelEvent, ModelRequest, ModelResponse
from .http import SDKModel
from .retry import AttemptFailed, Failure, drain, error_from_body, is_retryable_status, iter_sse

_NO_CACHE_TYPES = frozenset({"thinking", "redacted_thinking"})  # blocks that cannot carry cache_control
MAX_BREAKPOINTS = 4
# status of an `event: error` in the stream, from its error type
_STREAM_ERROR_STATUS = {
    "overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "timeout_error": 504,
    "invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413, "billing_error": 402,
}


def default_max_tokens(model: str) -> int:
    """A per-model output limit that every model of the family accepts."""
    m = model.lower()
    if m.startswith(("claude-3-haiku", "claude-3-opus", "claude-3-sonnet")):
        return 4096
    if m.startswith(("claude-3-5", "claude-3.5")):
        return 8192
    return 16384


class AnthropicModel(SDKModel):
    provider = "Anthropic"
    sdk = "anthropic"
    client_class = "AsyncAnthropic"
    base_error = "AnthropicError"
    install_hint = "pip install anthropic"

    """`AnthropicModel(model, base_url=None, api_key=None, max_retries=4, max_tokens=None,
    include_partial_messages=False, *, prompt_caching=True, cache_ttl=None,
    retry_base_delay=0.5, retry_max_delay=32.0, timeout=600.0)`.

    `api_key` / `base_url` default to ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL.
    `cache_ttl="1h"` asks for one-hour cache entries (2x write price) instead of 5 min.
    Keys of `ModelRequest.extra` (thinking, temperature, tool_choice, metadata, ...) are
    passed to the API as they are."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 4,
        max_tokens: int | None = None,
        include_partial_messages: bool = False,
        *,
        prompt_caching: bool = True,
        cache_ttl: str | None = None,
        retry_base_delay: float | None = None,
        retry_max_delay: float | None = None,
        timeout: float = 600.0,
    ) -> None:
        if cache_ttl not in (None, "5m", "1h"):
            raise ValueError(f"cache_ttl must be '5m' or '1h', got {cache_ttl!r}")
        super().__init__(model, base_url or os.environ.get("ANTHROPIC_BASE_URL") or None, api_key,
                         max_retries, include_partial_messages, retry_base_delay, retry_max_delay, timeout)
        self.max_tokens = max_tokens or default_max_tokens(model)
        self.prompt_caching = prompt_caching
        self._mark: dict[str, Any] = {"type": "ephemeral", **({"ttl": cache_ttl} if cache_ttl else {})}
        # built once per (tools list, system string): byte-stable across calls
        self._tools_key: tuple[Any, int] | None = None
        self._tools_built: list[dict[str, Any]] = []
        self._system_key: str | None = None
        self._system_built: Any = None
        # incremental scan of the history for cache_control marks it already carries
        self._scan_src: list[Any] | None = None
        self._scan_n = 0
        self._scan_last: Any = None
        self._scan_marked: list[int] = []

    # --- the request ------------------------------------------------------------------------

    def _tools_param(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        key = (tools, len(tools))
        if self._tools_key is None or self._tools_key[0] is not tools or self._tools_key[1] != len(tools):
            built = list(tools)
            if self.prompt_caching and built:
                built[-1] = {**built[-1], "cache_control": self._mark}
            self._tools_key, self._tools_built = key, built
        return self._tools_built

    def _system_param(self, system: str) -> Any:
        if self._system_key != system:
            self._system_key = system
            self._system_built = (
                [{"type": "text", "text": system, "cache_control": self._mark}] if self.prompt_caching else system
            )
        return self._system_built

    def _existing_marks(self, h: list[Any]) -> list[int]:
        """Indices of messages that already carry cache_control (rare: imported histories).
        Scans only what was appended since the last call."""
        n = len(h)
        if (self._scan_src is not h or n < self._scan_n
                or (self._scan_n and h[self._scan_n - 1] is not self._scan_last)):
            self._scan_src, self._scan_n, self._scan_marked = h, 0, []
        for i in range(self._scan_n, n):
            if _has_mark(h[i].get("content")):
                self._scan_marked.append(i)
        self._scan_n = n
        self._scan_last = h[n - 1] if n else None
        return self._scan_marked

    def _messages_param(self, h: list[Any]) -> list[Any]:
        """A shallow copy of the live history with breakpoints on the newest message and on
        the previous user message; only the messages that change are copied."""
        msgs = list(h)
        if not self.prompt_caching or not msgs:
            return msgs
        for i in self._existing_marks(h):  # ours replace any inherited marks: never more than 4
            msgs[i] = {**msgs[i], "content": _strip_marks(msgs[i].get("content"))}
        last = len(msgs) - 1
        _mark_message(msgs, last, self._mark)
        j = last - 1
        while j >= 0 and msgs[j].get("role") != "user":  # at most a step or two
            j -= 1
        if j >= 0:
            _mark_message(msgs, j, self._mark)
        return msgs

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for this request (public for tests/bench)."""
        params: dict[str, Any] = {
            "model": self.name,
            "max_tokens": request.max_tokens or self.max_tokens,
            "messages": self._messages_param(request.messages),
        }
        if request.system:
            params["system"] = self._system_param(request.system)
        if request.tools:
            params["tools"] = self._tools_param(request.tools)
        if request.extra:  # thinking, temperature, tool_choice, ...: sent as JSON, whatever the SDK version knows
            params["extra_body"] = dict(request.extra)
        return params

    # --- the call ---------------------------------------------------------------------------

    async def _attempt(self, params: dict[str, Any]) -> AsyncGenerator[ModelEvent, None]:
        client = self._client()
        stream = await client.messages.create(**params, stream=True)
        response = stream.response
        acc = _Accumulator()
        try:
            events = iter_sse(response.aiter_lines())
            async for sse in events:
                if not sse.data:
                    continue
                try:
                    data = json.loads(sse.data)
                except ValueError:
                    raise AttemptFailed(Failure(
                        f"malformed SSE data in {sse.event or 'message'} event: {sse.data[:80]!r}")) from None
                if not isinstance(data, dict):
                    raise AttemptFailed(Failure(f"malformed SSE event: {sse.data[:80]!r}"))
                kind = data.get("type") or sse.event
                if kind == "error" or sse.event == "error":
                    raise AttemptFailed(_stream_error(data))
                if self.include_partial_messages:
                    yield StreamEvent(data)
                if acc.feed(kind, data):
                    result = acc.response(self.name)
                    await drain(events)  # keep-alive: the connection serves the next call
                    yield result
                    return
            raise AttemptFailed(Failure("the stream ended before message_stop"))
        finally:
            await response.aclose()

    def _classify(self, e: BaseException) -> Failure | None:
        if isinstance(e, TypeError) and "authentication" in str(e):  # the SDK's "no credentials"
            return Failure("no Anthropic credentials: set ANTHROPIC_API_KEY or pass api_key "
                           f"(AgentOptions.api_key). {e}", retryable=False)
        return super()._classify(e)


def _has_mark(content: Any) -> bool:
    if not isinstance(content, list):
        return False
    for b in content:
        if isinstance(b, dict):
            if "cache_control" in b:
                return True
            if b.get("type") == "tool_result" and _has_mark(b.get("content")):
                return True
    return False


def _strip_marks(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    out = []
    for b in content:
        if isinstance(b, dict) and ("cache_control" in b or b.get("type") == "tool_result"):
            b = {k: v for k, v in b.items() if k != "cache_control"}
            if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                b["content"] = _strip_marks(b["content"])
        out.append(b)
    return out


def _mark_message(msgs: list[Any], i: int, mark: dict[str, Any]) -> None:
    """Put a breakpoint on message i's last block that can carry one (copying that message)."""
    m = msgs[i]
    content = m.get("content")
    if isinstance(content, str):
        if content:
            msgs[i] = {**m, "content": [{"type": "text", "text": content, "cache_control": mark}]}
        return
    if not isinstance(content, list):
        return
    for j in range(len(content) - 1, -1, -1):
        b = content[j]
        if not isinstance(b, dict) or b.get("type") in _NO_CACHE_TYPES:
            continue
        if b.get("type") == "text" and not b.get("text"):
            continue  # the API refuses cache_control on empty text
        new = list(content)
        new[j] = {**b, "cache_control": mark}
        msgs[i] = {**m, "content": new}
        return


def _stream_error(data: dict[str, Any]) -> Failure:
    typ, msg = error_from_body(data)
    status = _STREAM_ERROR_STATUS.get(typ or "")
    retryable = status is None or is_retryable_status(status)
    return Failure(f"{typ or 'error'} (in stream): {msg or data}", status, retryable)


class _Accumulator:
    """Builds one message from raw stream events; raises AttemptFailed on a broken stream."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None

    def _block(self, data: dict[str, Any]) -> dict[str, Any]:
        idx = data.get("index")
        if not isinstance(idx, int) or idx not in self.blocks:
            raise AttemptFailed(Failure(f"{data.get('type')} for unknown content block {idx!r}"))
        return self.blocks[idx]

    def feed(self, kind: Any, data: dict[str, Any]) -> bool:
        """Apply one event; True when the message is complete (message_stop)."""
        if kind == "message_start":
            msg = data.get("message")
            if not isinstance(msg, dict):
                raise AttemptFailed(Failure("message_start without a message"))
            self.message = msg
            self.usage = dict(msg.get("usage") or {})
            for i, b in enumerate(msg.get("content") or []):  # normally empty
                self.blocks[i] = dict(b)
            return False
        if self.message is None:
            if kind == "ping":
                return False
            raise AttemptFailed(Failure(f"{kind} event before message_start"))
        if kind == "content_block_start":
            idx, block = data.get("index"), data.get("content_block")
            if not isinstance(idx, int) or not isinstance(block, dict):
                raise AttemptFailed(Failure("malformed content_block_start"))
            self.blocks[idx] = dict(block)
            if block.get("type") == "tool_use" or "input" in block:
                self.json_parts[idx] = []
        elif kind == "content_block_delta":
            block = self._block(data)
            delta = data.get("delta") or {}
            dt = delta.get("type")
            if dt == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif dt == "input_json_delta":
                self.json_parts.setdefault(data["index"], []).append(delta.get("partial_json", ""))
            elif dt == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            elif dt == "signature_delta":
                block["signature"] = block.get("signature", "") + delta.get("signature", "")
            elif dt == "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
            # other delta types: tolerated (nothing to accumulate that we know of)
        elif kind == "content_block_stop":
            self._block(data)
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            if delta.get("stop_reason") is not None:
                self.stop_reason = delta["stop_reason"]
            if "stop_sequence" in delta:
                self.stop_sequence = delta.get("stop_sequence")
            for k, v in (data.get("usage") or {}).items():
                if v is not None:
                    self.usage[k] = v
        elif kind == "message_stop":
            return True
        # ping and unknown event types: tolerated
        return False

    def response(self, model: str) -> ModelResponse:
        if self.stop_reason is None:
            raise AttemptFailed(Failure("message_stop arrived without a stop_reason (no message_delta)"))
        content = []
        for idx in sorted(self.blocks):
            block = self.blocks[idx]
            parts = self.json_parts.get(idx)
            if parts is not None and (parts or "input" not in block):
                raw = "".join(parts)
                try:
                    value = json.loads(raw) if raw.strip() else {}
                except ValueError as e:
                    if self.stop_reason == "max_tokens":
                        value = {}  # cut off mid-input: the loop will not run it
                    else:
                        raise AttemptFailed(Failure(
                            f"invalid JSON in the input of tool_use {block.get('name')!r}: {e}")) from None
                if not isinstance(value, dict):
                    raise AttemptFailed(Failure(f"tool_use {block.get('name')!r} input is not an object"))
                block["input"] = value
            content.append(block)
        try:
            blocks = blocks_from_wire(content)
        except ValueError as e:
            raise AttemptFailed(Failure(f"malformed content block: {e}", retryable=False)) from None
        msg = self.message or {}
        return ModelResponse(blocks, self.stop_reason, Usage.from_json(self.usage), str(msg.get("model") or model))
