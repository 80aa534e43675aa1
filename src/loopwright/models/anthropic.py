"""Room: providers (on models.base). Owns AnthropicModel; may import data types, models.base,
models.http and models.retry.

AnthropicModel: the Messages API over HTTP (models/http.py), no SDK needed.

- Streams every call (SSE) and assembles the message from the raw events itself, so
  thinking / redacted_thinking / unknown blocks come back byte for byte and are sent
  back verbatim. Only a message whose `message_stop` arrived becomes a ModelResponse.
- Sends what Claude Code sends: the key as `x-api-key` (or `Authorization: Bearer` for
  ANTHROPIC_AUTH_TOKEN), `anthropic-version: 2023-06-01`, `anthropic-beta` when a
  feature needs it (or ANTHROPIC_BETAS lists some), ANTHROPIC_CUSTOM_HEADERS.
- Prompt caching is on by default: breakpoints on the last tool, the system prompt,
  the newest message and the previous user message (at most 4), so each call reads
  the prefix the previous call wrote.
- Retries are loopwright's own (models/retry.py).
- `client=AsyncAnthropic(...)` (or AsyncAnthropicBedrock / AsyncAnthropicVertex) sends the
  calls through that SDK client instead (pip install anthropic).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, Unpack

from ..blocks import InvalidInput, ToolUseBlock, blocks_from_wire
from ..ccenv import flag
from ..history import FrozenList, frozen
from ..messages import StreamEvent
from ..usage import Usage
from .base import ModelError, ModelEvent, ModelRequest, ModelResponse, parse_input
from .catalog import max_output
from .http import USER_AGENT, HTTPModel, HTTPOptions
from .reasoning import anthropic_params
from .retry import (
    AttemptFailed,
    drain,
    error_from_body,
    is_retryable_status,
    iter_sse,
    sse_object,
)

API_VERSION = "2023-06-01"
_NO_CACHE_TYPES = frozenset({"thinking", "redacted_thinking"})  # blocks that cannot carry cache_control
MAX_BREAKPOINTS = 4
# status of an `event: error` in the stream, from its error type
_STREAM_ERROR_STATUS = {
    "overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "timeout_error": 504,
    "invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413, "billing_error": 402,
}
# the SDK's keyword arguments of messages.create; everything else goes in extra_body
_SDK_ARGS = ("model", "max_tokens", "messages")


def default_max_tokens(model: str) -> int:
    """A per-model output limit that every model of the family accepts (the catalog's)."""
    return max_output(model) or 16_384


class AnthropicModel(HTTPModel):
    """`AnthropicModel(model, base_url=None, api_key=None, max_retries=4, max_tokens=None,
    include_partial_messages=False, *, prompt_caching=True, cache_ttl=None, auth_token=None,
    betas=(), retry_base_delay=0.5, retry_max_delay=32.0, timeout=600.0, connect_timeout=10.0,
    total_timeout=1800.0, client=None)`.

    `api_key` / `auth_token` / `base_url` default to ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN /
    ANTHROPIC_BASE_URL. `cache_ttl="1h"` asks for one-hour cache entries (2x write price)
    instead of 5 min. Keys of `ModelRequest.extra` (thinking, temperature, tool_choice,
    metadata, ...) are sent in the request body as they are. `client` is an SDK client
    (AsyncAnthropic, AsyncAnthropicBedrock, AsyncAnthropicVertex) to send the calls through."""

    provider = "Anthropic"
    sdk = "anthropic"
    sdk_error = "AnthropicError"
    env_base_url = "ANTHROPIC_BASE_URL"
    env_api_key = "ANTHROPIC_API_KEY"
    key_helper: Callable[[], str] | None = None  # settings' apiKeyHelper (apikeyhelper.py): the key when none is given
    default_base_url = "https://api.anthropic.com"
    path = "/v1/messages"

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
        auth_token: str | None = None,
        betas: tuple[str, ...] | list[str] = (),
        **options: Unpack[HTTPOptions],
    ) -> None:
        if cache_ttl not in (None, "5m", "1h"):
            raise ValueError(f"cache_ttl must be '5m' or '1h', got {cache_ttl!r}")
        if cache_ttl is None and flag(os.environ, "ENABLE_PROMPT_CACHING_1H") and not flag(os.environ, "FORCE_PROMPT_CACHING_5M"):
            cache_ttl = "1h"  # Claude Code's opt-in to one-hour entries (FORCE_PROMPT_CACHING_5M over it: 5 min)
        super().__init__(model, base_url, api_key, max_retries, max_tokens or default_max_tokens(model),
                         include_partial_messages, **options)
        self.auth_token = auth_token or os.environ.get("ANTHROPIC_AUTH_TOKEN") or None
        env_betas = [b.strip() for b in os.environ.get("ANTHROPIC_BETAS", "").split(",") if b.strip()]
        # the 1-hour cache TTL is a beta feature: the header says so, as Claude Code does
        needed = ["extended-cache-ttl-2025-04-11"] if cache_ttl == "1h" and prompt_caching else []
        self.betas = list(dict.fromkeys([*betas, *env_betas, *needed]))
        self.prompt_caching = prompt_caching
        self._mark: dict[str, Any] = {"type": "ephemeral", **({"ttl": cache_ttl} if cache_ttl else {})}
        # built once per (tools list, system string): byte-stable across calls
        self._tools_key: Any = None  # the definitions _tools_built was made of
        self._tools_built: list[dict[str, Any]] = []
        self._system_key: str | None = None
        self._system_built: Any = None
        # incremental scan of the history for cache_control marks it already carries
        self._scan_src: list[Any] | None = None
        self._scan_n = 0
        self._scan_last: Any = None
        self._scan_marked: list[int] = []
        self._scan_foreign: list[int] = []
        self._scan_gen: int | None = None

    def headers(self) -> dict[str, str]:
        """Claude Code's headers: every Anthropic-compatible gateway and proxy accepts them."""
        key = self.api_key
        if not key and not self.auth_token and self.key_helper is not None:  # settings' apiKeyHelper
            key = self.key_helper()
        if not key and not self.auth_token:
            raise ModelError("no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) "
                             "or pass api_key (AgentOptions.api_key), or an apiKeyHelper in settings")
        h = {"anthropic-version": API_VERSION, "content-type": "application/json",
             "accept": "text/event-stream, application/json", "user-agent": USER_AGENT}
        if key:
            h["x-api-key"] = key
        if self.auth_token:
            h["authorization"] = f"Bearer {self.auth_token}"
        if self.betas:
            h["anthropic-beta"] = ",".join(self.betas)
        for line in os.environ.get("ANTHROPIC_CUSTOM_HEADERS", "").splitlines():  # "Name: Value" per line
            name, sep, value = line.partition(":")
            if sep and name.strip():
                h[name.strip().lower()] = value.strip()
        return h

    # --- the request ------------------------------------------------------------------------

    def _tools_param(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tools with the last one's breakpoint: built once for a run's (frozen) definitions, each
        time for a caller's plain list (it may have changed in place since: issue 41)."""
        if self._tools_key is not tools or type(tools) is not FrozenList:
            built = list(tools)
            if self.prompt_caching and built:
                built[-1] = {**built[-1], "cache_control": self._mark}
            self._tools_key, self._tools_built = tools, frozen(built)
        return self._tools_built

    def _system_param(self, system: str) -> Any:
        if self._system_key != system:
            self._system_key = system
            self._system_built = (  # (frozen: the body encoder keeps its JSON)
                frozen([{"type": "text", "text": system, "cache_control": self._mark}]) if self.prompt_caching
                else system
            )
        return self._system_built

    def _scan(self, h: list[Any]) -> tuple[list[int], list[int]]:
        """Indices of messages that already carry cache_control (rare: imported histories), and
        of messages holding another provider's own blocks (a fallback's history). Scans only
        what was appended since the last call to the same History (loopwright.history: append-only,
        its `generation` bumped by each rewrite); any other list is scanned whole."""
        n, gen = len(h), getattr(h, "generation", None)  # (a History: rewritten since, or only appended to)
        if (self._scan_src is not h or n < self._scan_n or gen != self._scan_gen or gen is None
                or (self._scan_n and h[self._scan_n - 1] is not self._scan_last)):
            self._scan_src, self._scan_n, self._scan_marked, self._scan_foreign = h, 0, [], []
        self._scan_gen = gen
        for i in range(self._scan_n, n):
            content = h[i].get("content")
            if _has_mark(content):
                self._scan_marked.append(i)
            if isinstance(content, list) and any(_foreign(b) for b in content):
                self._scan_foreign.append(i)
        self._scan_n = n
        self._scan_last = h[n - 1] if n else None
        return self._scan_marked, self._scan_foreign

    def _messages_param(self, h: list[Any]) -> list[Any]:
        """A shallow copy of the live history with breakpoints on the newest message and on
        the previous user message; only the messages that change are copied."""
        msgs = list(h)
        marked, foreign = self._scan(h)
        for i in foreign:  # the Messages API refuses a block type it does not know: a 400 for the run
            kept = [b for b in msgs[i]["content"] if not _foreign(b)]
            msgs[i] = {**msgs[i], "content": kept or [{"type": "text", "text": FOREIGN_ONLY}]}
        if not self.prompt_caching or not msgs:
            return msgs
        for i in marked:  # ours replace any inherited marks: never more than 4
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
        """The JSON body of this request, without `stream` (public for tests and the bench)."""
        params: dict[str, Any] = {
            "model": self.name,
            "max_tokens": request.max_tokens or self.max_tokens,
            "messages": self._messages_param(request.messages),
        }
        if request.system:
            params["system"] = self._system_param(request.system)
        if request.tools:
            params["tools"] = self._tools_param(request.tools)
        if request.effort is not None or request.thinking is not None:  # as this model family takes them
            params.update(anthropic_params(self.name, request.effort, request.thinking, params["max_tokens"],
                                           bool(request.tools))[0])
        if request.extra:  # thinking, temperature, tool_choice, ...: sent as they are
            params.update(request.extra)
        return params

    def request_headers(self, request: ModelRequest) -> dict[str, str]:
        """The betas effort or thinking need on this model family (with the model's own), and the
        apiKeyHelper's key (asked each request: it reruns the helper when its TTL is over)."""
        out: dict[str, str] = {}
        if self.key_helper is not None and not self.api_key and not self.auth_token:
            out["x-api-key"] = self.key_helper()
        if request.effort is None and request.thinking is None:
            return out
        betas = anthropic_params(self.name, request.effort, request.thinking, request.max_tokens or self.max_tokens
                                 or 0, bool(request.tools))[1]
        if not betas:
            return out
        return {**out, "anthropic-beta": ",".join(dict.fromkeys([*self.betas, *betas]))}

    # --- the call ---------------------------------------------------------------------------

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The call; with settings' apiKeyHelper as the key, a 401 reruns the helper and the call is
        made once more with its new key, as Claude Code does (a rotated key is picked up)."""
        helper = self.key_helper if not self.api_key and not self.auth_token else None
        if helper is None or not hasattr(helper, "expire"):
            return super().stream(request)
        return self._stream_rekeyed(request, helper)

    async def _stream_rekeyed(self, request: ModelRequest, helper: Any) -> AsyncIterator[ModelEvent]:
        from ..threads import run_in_worker

        # The key is asked in a worker thread first (request_headers then finds it cached): a slow
        # helper command never holds the event loop, so a signal or an interrupt is answered at once.
        await run_in_worker(helper)
        try:
            async for ev in super().stream(request):
                yield ev
            return
        except ModelError as e:
            if e.status != 401:
                raise
        helper.expire()  # (a 401 comes before any event: nothing of the first call was passed on)
        await run_in_worker(helper)  # (the helper runs again: a rotated key)
        async for ev in super().stream(request):
            yield ev

    async def _sdk_open(self, body: dict[str, Any], request_headers: dict[str, str] | None = None) -> Any:
        kwargs = {k: body[k] for k in _SDK_ARGS if k in body}
        extra = {k: v for k, v in body.items() if k not in _SDK_ARGS}
        headers = request_headers or ({"anthropic-beta": ",".join(self.betas)} if self.betas else None)
        stream = await self.sdk_client.messages.create(**kwargs, stream=True, extra_body=extra or None,
                                                       extra_headers=headers)
        return stream.response

    async def _read_stream(self, lines: AsyncIterator[str]) -> AsyncGenerator[ModelEvent, None]:
        acc = _Accumulator()
        events = iter_sse(lines)
        async for sse in events:
            if not sse.data:
                continue
            data = sse_object(sse.data, sse.event or "message")
            kind = data.get("type") or sse.event
            if kind == "error" or sse.event == "error":
                raise _stream_error(data)
            if self.include_partial_messages:
                yield StreamEvent(data)
            if acc.feed(kind, data):
                result = acc.response(self.name)
                await drain(events)  # keep-alive: the connection serves the next call
                yield result
                return
        raise AttemptFailed("the stream ended before message_stop")

    def _read_json(self, obj: Any) -> ModelResponse:
        """A whole message as JSON (a server that does not stream): the same checks as a stream."""
        if obj.get("type") == "error" or "error" in obj:
            raise _stream_error(obj)
        if not isinstance(obj.get("content"), list):
            raise AttemptFailed(f"the server's answer is not a message: {json.dumps(obj)[:200]}",
                                retryable=False)
        acc = _Accumulator()
        acc.feed("message_start", {"message": obj})
        acc.stop_reason = obj.get("stop_reason")
        return acc.response(self.name)


# Another provider's own history blocks are typed "openai_*" (openai_responses keeps a reasoning
# item as an `openai_reasoning` block, to send it back to the Responses API): after a fallback from
# such a model to Claude mid-run they stay in the history but are not sent. An assistant message
# that held nothing else is sent as this text (the API refuses an empty one).
FOREIGN_PREFIX = "openai_"
FOREIGN_ONLY = "(another model's reasoning, not shown)"


def _foreign(block: Any) -> bool:
    return isinstance(block, dict) and str(block.get("type", "")).startswith(FOREIGN_PREFIX)


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


def _stream_error(data: dict[str, Any]) -> AttemptFailed:
    typ, msg = error_from_body(data)
    status = _STREAM_ERROR_STATUS.get(typ or "")
    retryable = status is None or is_retryable_status(status)
    return AttemptFailed(f"{typ or 'error'} (in stream): {msg or data}", status, retryable)


_TEXT_DELTAS = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}


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
            raise AttemptFailed(f"{data.get('type')} for unknown content block {idx!r}")
        return self.blocks[idx]

    def feed(self, kind: Any, data: dict[str, Any]) -> bool:
        """Apply one event; True when the message is complete (message_stop)."""
        if kind == "message_start":
            self._start(data)
            return False
        if self.message is None:
            if kind == "ping":
                return False
            raise AttemptFailed(f"{kind} event before message_start")
        if kind == "content_block_start":
            self._block_start(data)
        elif kind == "content_block_delta":
            self._delta(self._block(data), data)
        elif kind == "content_block_stop":
            self._block(data)
        elif kind == "message_delta":
            self._message_delta(data)
        elif kind == "message_stop":
            return True
        # ping and unknown event types: tolerated
        return False

    def _start(self, data: dict[str, Any]) -> None:
        msg = data.get("message")
        if not isinstance(msg, dict):
            raise AttemptFailed("message_start without a message")
        self.message = msg
        self.usage = dict(msg.get("usage") or {})
        for i, b in enumerate(msg.get("content") or []):  # normally empty
            self.blocks[i] = dict(b)

    def _block_start(self, data: dict[str, Any]) -> None:
        idx, block = data.get("index"), data.get("content_block")
        if not isinstance(idx, int) or not isinstance(block, dict):
            raise AttemptFailed("malformed content_block_start")
        self.blocks[idx] = dict(block)
        if block.get("type") == "tool_use" or "input" in block:
            self.json_parts[idx] = []

    def _delta(self, block: dict[str, Any], data: dict[str, Any]) -> None:
        delta = data.get("delta") or {}
        dt = delta.get("type")
        if dt == "input_json_delta":
            self.json_parts.setdefault(data["index"], []).append(delta.get("partial_json", ""))
        elif dt == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
        elif dt in _TEXT_DELTAS:  # text, thinking, signature: appended to the block's field of that name
            key = _TEXT_DELTAS[dt]
            block[key] = block.get(key, "") + delta.get(key, "")
        # other delta types: tolerated (nothing to accumulate that we know of)

    def _message_delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta") or {}
        if delta.get("stop_reason") is not None:
            self.stop_reason = delta["stop_reason"]
        if "stop_sequence" in delta:
            self.stop_sequence = delta.get("stop_sequence")
        for k, v in (data.get("usage") or {}).items():
            if v is not None:
                self.usage[k] = v

    def response(self, model: str) -> ModelResponse:
        if self.stop_reason is None:
            raise AttemptFailed("message_stop arrived without a stop_reason (no message_delta)")
        content: list[dict[str, Any]] = []
        invalid: dict[int, InvalidInput] = {}  # position -> the input text that is not a JSON object
        last = max(self.blocks, default=None)  # at max_tokens, the block being written was cut
        for idx in sorted(self.blocks):
            block = self.blocks[idx]
            parts = self.json_parts.get(idx)
            if parts is not None and (parts or "input" not in block):
                value = parse_input("".join(parts), self.stop_reason == "max_tokens" and idx == last)
                if isinstance(value, InvalidInput):
                    invalid[len(content)] = value
                    value = {}
                block["input"] = value
            content.append(block)
        try:
            blocks = blocks_from_wire(content)
        except ValueError as e:
            raise AttemptFailed(f"malformed content block: {e}", retryable=False) from None
        for pos, bad in invalid.items():
            use = blocks[pos]
            if isinstance(use, ToolUseBlock):
                use.invalid = bad
        # keyed by the name asked for, not the server's (a local server answers with its file's path)
        return ModelResponse(blocks, self.stop_reason, Usage.from_json(self.usage), model)
