"""Room: testing (beside the core). Owns the loopback API server; may import data types, invariant,
models.base and models.scripted, never options or above.

A loopback HTTP server that speaks the Anthropic Messages API and the OpenAI chat
completions API, answering from a script, recording every request, and failing on
purpose when told to.

    from loopwright.testing import ScriptedServer, Fault

    with ScriptedServer([[tool_use...], [text...]]) as srv:
        srv.inject(Fault.overloaded())            # the next model call gets a 529
        model = AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="test")
        ...
        srv.requests                              # every request: headers + parsed JSON

Endpoints: POST /v1/messages (stream or not), POST /v1/messages/count_tokens,
POST /v1/chat/completions (stream or not, with the usage chunk when
stream_options.include_usage), POST /v1/responses (OpenAI's Responses API, stream or not:
testing/responses_wire.py), GET /v1/models, HEAD/GET / (health), and with a `window`,
GET /props (llama.cpp's).

Which requests consume script turns (the "loop calls"). Clients such as Claude Code
also send side requests: token counts, a quota probe with max_tokens 1, title or
topic requests without tools. The rule, in order:
  1. only POST /v1/messages, /v1/chat/completions and /v1/responses can be loop calls;
  2. max_tokens <= 1 is a probe: answered with a short canned text, no turn;
  3. a request without tools, once a request with tools has been seen, is a side
     request (canned text, no turn); before any request with tools every request is
     a loop call, so tool-less conversations can be scripted too;
  4. everything else is a loop call and gets the next turn.
`is_loop_call=` replaces rules 2-4 with your own predicate of the parsed body.

Server tools: with `web_search=` (a function of the query giving [{url, title}]), the server
plays the API's `web_search` tool: in a request that offers it (`web_search_20250305`), each
`server_tool_use` block of the scripted answer gets its `web_search_tool_result` (the
tool's allowed_domains / blocked_domains and max_uses applied, results with an
`encrypted_content` the client must send back verbatim), and the searches are counted in
usage.server_tool_use.web_search_requests.
A loop call whose response was not delivered completely (a fault, a dropped
connection) leaves its turn pending: the client's identical retry gets the same turn.

Usage is simulated like the real API: tokens are estimated at ~4 characters each,
and a prefix cache keyed on the request prefix (tools, system, messages) up to each
`cache_control` breakpoint reports cache_read_input_tokens / cache_creation_input_tokens
(20-block lookback, minimum cacheable prefix `min_cache_tokens`, 5 min or 1 h TTL).
The OpenAI endpoint caches every prefix automatically and reports
prompt_tokens_details.cached_tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import select
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..invariant import InvariantViolation, check
from ..models.base import ModelError, ModelRequest, ModelResponse, complete
from ..models.scripted import ScriptedModel
from ..tokens import estimate_tokens
from ..usage import Usage
from .responses_wire import response_events, response_object, responses_to_anthropic

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
    403: "permission_error", 404: "not_found_error", 408: "timeout_error", 409: "conflict_error",
    413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 502: "api_error",
    503: "api_error", 504: "timeout_error", 529: "overloaded_error",
}
WINDOW_STYLES = ("openai", "vllm", "llamacpp")


def overflow_error(kind: str, style: str, window: int, prompt: int, completion: int) -> dict[str, Any] | None:
    """The 400 body each server answers to a prompt over its window W (None: it fits). `kind`:
    messages | chat | responses; `style` says whose chat completions server this is."""
    if kind == "messages":
        if prompt <= window:
            return None
        return {"type": "error", "error": {"type": "invalid_request_error",
                                           "message": f"prompt is too long: {prompt} tokens > {window} maximum"}}
    if kind == "responses":
        if prompt <= window:
            return None
        return {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input "
                                     "and try again.", "type": "invalid_request_error", "param": "input",
                          "code": "context_length_exceeded"}}
    if style == "vllm":
        if prompt + completion <= window:
            return None
        return {"object": "error", "message": f"This model's maximum context length is {window} tokens. However, you "
                f"requested {prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). "
                "Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": None,
                "code": 400}
    if prompt <= window:
        return None
    if style == "llamacpp":
        return {"error": {"code": 400, "message": f"request ({prompt} tokens) exceeds the available context size "
                          f"({window} tokens), try increasing it", "type": "exceed_context_size_error",
                          "n_prompt_tokens": prompt, "n_ctx": window}}
    return {"error": {"message": f"This model's maximum context length is {window} tokens. However, your messages "
                      f"resulted in {prompt} tokens. Please reduce the length of the messages.",
                      "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}


STOP_TO_FINISH = {
    "end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "stop_sequence": "stop",
    "refusal": "content_filter", "pause_turn": "stop", "model_context_window_exceeded": "length",
}


# --- faults ---------------------------------------------------------------------------------

# The content block types the Messages API takes in a request (its server tools' blocks end in
# _tool_use / _tool_result), besides those it answered with itself (a newer block type comes back
# verbatim); any other type is a 400, as the real API answers.
MESSAGES_BLOCK_TYPES = frozenset({"text", "image", "document", "search_result", "thinking", "redacted_thinking",
                                  "tool_use", "tool_result", "server_tool_use", "container_upload"})


def _unknown_block(messages: list[Any], served: set[str]) -> str | None:
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m, dict) else None
        for j, b in enumerate(content if isinstance(content, list) else []):
            t = str(b.get("type", "")) if isinstance(b, dict) else ""
            if t not in MESSAGES_BLOCK_TYPES and t not in served and not t.endswith(("_tool_use", "_tool_result")):
                return f"messages.{i}.content.{j}: Input tag '{t}' found using 'type' does not match any of the expected tags"
    return None


@dataclass
class Fault:
    """What to do wrong with the next loop call(s) (`times` of them).

    status: answer with this HTTP status and an error body in the API's shape
    (`error_type`, `message`, extra `headers` such as retry-after). Otherwise the
    scripted turn is served with: `delay` seconds before answering; `drop_after` N
    stream events then the connection is cut; `malformed_sse` (a data line that is
    not JSON); `no_stop` (the stream ends cleanly without message_stop / finish /
    [DONE]); `stream_error` (an `event: error` of that type mid-stream);
    `bad_tool_json` (the first tool call's input JSON is cut short);
    `unknown_event` (an event of a type no client knows, mid-stream); `truncated_line`
    (the stream ends cleanly in the middle of a data line); `no_stream` (a streamed
    request is answered with the whole JSON response, as some servers do); `raw_body`
    (answer with this body as `content_type`, with `status` if given, else 200)."""

    status: int | None = None
    error_type: str | None = None
    message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop_after: int | None = None
    malformed_sse: bool = False
    no_stop: bool = False
    stream_error: str | None = None
    bad_tool_json: bool = False
    unknown_event: bool = False
    truncated_line: bool = False
    no_stream: bool = False
    raw_body: str | None = None
    content_type: str = "text/html; charset=utf-8"
    times: int = 1
    model: str | None = None  # only requests for this model (the body's "model") meet the fault

    def __post_init__(self) -> None:
        self.remaining = self.times  # `times` stays as given (a fault's label), this counts down

    @classmethod
    def overloaded(cls, times: int = 1, model: str | None = None) -> Fault:
        return cls(status=529, error_type="overloaded_error", message="Overloaded", times=times, model=model)

    @classmethod
    def rate_limited(cls, retry_after: float = 1.0, *, ms: bool = False, times: int = 1) -> Fault:
        h = {"retry-after-ms": str(int(retry_after * 1000))} if ms else {"retry-after": f"{retry_after:g}"}
        return cls(status=429, error_type="rate_limit_error",
                   message="Number of request tokens has exceeded your per-minute rate limit", headers=h, times=times)

    @classmethod
    def error(cls, status: int, message: str = "", error_type: str | None = None, times: int = 1) -> Fault:
        return cls(status=status, error_type=error_type, message=message or None, times=times)

    @classmethod
    def drop(cls, after: int = 3, times: int = 1) -> Fault:
        return cls(drop_after=after, times=times)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Fault:
        names = set(cls.__dataclass_fields__)
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
        return cls(**d)


@dataclass
class RecordedRequest:
    """One HTTP request the loopback server received, kept for the test to inspect."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None
    raw: bytes
    kind: str  # "messages" | "chat" | "count_tokens" | "models" | "health" | "other"
    loop_call: bool = False
    turn: int | None = None  # 1-based script turn served (loop calls)
    fault: Fault | None = None
    status: int = 200  # 0: the connection was cut on purpose
    received: float = field(default_factory=time.monotonic)  # arrival time (time.monotonic)
    client_port: int = 0  # the client's source port: equal ports = one kept-alive connection
    searches: int = 0  # web searches the server played in its answer (web_search=)


# --- the prompt cache simulation ------------------------------------------------------------

class PromptCache:
    """Anthropic-style prefix cache: entries are digests of the request prefix up to a
    breakpoint; a breakpoint reads the longest cached prefix within 20 blocks before it."""

    TTL = {"5m": 300.0, "1h": 3600.0}

    def __init__(self, min_tokens: int = 1024, lookback: int = 20,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.min_tokens = min_tokens
        self.lookback = lookback
        self.clock = clock
        self.entries: dict[bytes, float] = {}
        self.lock = threading.Lock()

    def usage(self, segments: list[tuple[Any, dict[str, Any] | None]]) -> dict[str, Any]:
        """Usage for one request given its segments (payload without cache_control, the
        segment's cache_control or None), in prefix order."""
        digests: list[bytes] = []
        cum: list[int] = []
        h, total = b"", 0
        for payload, _ in segments:
            s = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            h = hashlib.sha256(h + s.encode()).digest()
            total += estimate_tokens(s)
            digests.append(h)
            cum.append(total)
        bps = [i for i, (_, cc) in enumerate(segments) if cc is not None]
        now = self.clock()
        with self.lock:
            read_at = -1
            for b in bps:
                for j in range(b, max(-1, b - self.lookback), -1):
                    exp = self.entries.get(digests[j])
                    if exp is not None and exp > now:
                        read_at = max(read_at, j)
                        break
            read = cum[read_at] if read_at >= 0 else 0
            w5 = w1h = 0
            last = read_at
            for b in bps:
                cc = segments[b][1] or {}
                ttl = self.TTL.get(str(cc.get("ttl", "5m")), 300.0)
                if b <= read_at:
                    if b == read_at:
                        self.entries[digests[b]] = now + ttl  # a hit refreshes the entry
                    continue
                if cum[b] < self.min_tokens:
                    continue
                n = cum[b] - (cum[last] if last >= 0 else 0)
                if cc.get("ttl") == "1h":
                    w1h += n
                else:
                    w5 += n
                self.entries[digests[b]] = now + ttl
                last = b
        return {
            "input_tokens": total - read - w5 - w1h,
            "cache_creation_input_tokens": w5 + w1h,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1h},
        }

    def auto_usage(self, segments: list[Any]) -> tuple[int, int]:
        """OpenAI-style automatic caching: (prompt tokens, cached tokens). Every prefix is
        stored; hits count in 128-token steps from min_tokens up."""
        h, total = b"", 0
        read = 0
        now = self.clock()
        with self.lock:
            for payload in segments:
                s = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
                h = hashlib.sha256(b"oa" + h + s.encode()).digest()
                total += estimate_tokens(s)
                exp = self.entries.get(h)
                if exp is not None and exp > now and total >= self.min_tokens:
                    read = total
                self.entries[h] = now + 300.0
        if read:
            read = max(self.min_tokens, read - (read - self.min_tokens) % 128) if self.min_tokens else read
        return total, min(read, total)


def anthropic_segments(body: dict[str, Any]) -> list[tuple[Any, dict[str, Any] | None]]:
    """The cache prefix of a Messages request: tools, then system blocks, then every
    message block (tagged with its role and position)."""
    segs: list[tuple[Any, dict[str, Any] | None]] = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            segs.append(({k: v for k, v in t.items() if k != "cache_control"}, t.get("cache_control")))
    system = body.get("system")
    if isinstance(system, str) and system:
        segs.append(({"system": system}, None))
    elif isinstance(system, list):
        for b in system:
            if isinstance(b, dict):
                segs.append(({"system": {k: v for k, v in b.items() if k != "cache_control"}},
                             b.get("cache_control")))
    for i, m in enumerate(body.get("messages") or []):
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for b in blocks:
            if isinstance(b, dict):
                segs.append(({"m": i, "role": m.get("role"), "b": strip_cache_control(b)}, b.get("cache_control")))
    return segs


def strip_cache_control(obj: Any) -> Any:
    """A copy of a block / message / list without any cache_control keys."""
    if isinstance(obj, dict):
        return {k: strip_cache_control(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [strip_cache_control(v) for v in obj]
    return obj


def count_breakpoints(body: dict[str, Any]) -> int:
    n = 0

    def walk(o: Any) -> None:
        nonlocal n
        if isinstance(o, dict):
            if "cache_control" in o:
                n += 1
            for k, v in o.items():
                if k != "cache_control":
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(body.get("tools"))
    walk(body.get("system"))
    walk(body.get("messages"))
    return n


# --- OpenAI <-> Anthropic shapes ------------------------------------------------------------

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


# --- the server -----------------------------------------------------------------------------

TurnsArg = Sequence[Any] | Callable[[list[dict[str, Any]]], Any] | ScriptedModel


class ScriptedServer:
    """`ScriptedServer(turns, *, host="127.0.0.1", port=0, model="claude-sonnet-4-6",
    min_cache_tokens=1024, strict=True, side_reply="ok", is_loop_call=None, log=None)`.

    `turns`: a list of ScriptedModel turns (wire blocks, or {content, stop_reason?,
    usage?, delay?}, or an exception instance answered as an API error), a function of
    the Anthropic-shaped history, or a ScriptedModel. `strict` answers 400 like the
    real API to a history that breaks Inv or has more than 4 cache breakpoints. `log`
    is called with one line per request. `reply_model`: the model name every answer carries
    (as llama-server answers with its model file's path), instead of the one asked for.
    `window`: the context window W, enforced as the real servers do: a request whose prompt
    (estimated) is over W gets a 400 in that API's own words; on /v1/chat/completions in the
    words of `window_style` ("openai", "vllm": prompt + max_tokens > W, "llamacpp"); `/props`
    (llamacpp) and `/v1/models` (vllm: max_model_len) then tell W, as those servers do."""

    def __init__(
        self,
        turns: TurnsArg,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "claude-sonnet-4-6",
        min_cache_tokens: int = 1024,
        strict: bool = True,
        side_reply: str = "ok",
        is_loop_call: Callable[[dict[str, Any]], bool] | None = None,
        log: Callable[[str], None] | None = None,
        reply_model: str | None = None,
        window: int | None = None,
        window_style: str = "openai",
        web_search: Callable[[str], list[dict[str, Any]]] | None = None,
    ) -> None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(f"ScriptedServer binds only to loopback, not {host!r}")
        if isinstance(turns, ScriptedModel):
            self.model: ScriptedModel = turns
            self._turn_list: list[Any] | None = None
        elif callable(turns):
            self.model = ScriptedModel(turns)
            self._turn_list = None
        else:
            self._turn_list = list(turns)
            self.model = ScriptedModel(self._turn_list)
        self.host = host
        self.port = port
        self.model_name = model
        self.reply_model = reply_model  # the model name answers carry (a local server's file path), else the asked
        if window_style not in WINDOW_STYLES:
            raise ValueError(f"window_style must be one of {', '.join(WINDOW_STYLES)}, not {window_style!r}")
        self.window = window
        self.window_style = window_style
        self.cache = PromptCache(min_cache_tokens)
        self.strict = strict
        self.side_reply = side_reply
        self.is_loop_call = is_loop_call
        self.log = log
        self.web_search = web_search
        self.requests: list[RecordedRequest] = []
        self.faults: list[Fault] = []
        self.turns_served = 0
        self.served_types: set[str] = set()  # block types answered: a model's own blocks come back in its history
        self._seen_tools = False
        self._pending: tuple[str, ModelResponse, int, Usage | None] | None = None
        self._lock = threading.RLock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        handler = type("Handler", (_Handler,), {"server_obj": self})
        cls = _V6Server if ":" in self.host else _Server
        self._httpd = cls((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="scripted-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI-compatible clients (they append /chat/completions)."""
        return self.url + "/v1"

    # --- test helpers --------------------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Queue faults for the next loop calls, in order."""
        with self._lock:
            self.faults.extend(faults)

    @property
    def loop_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.loop_call]

    def histories(self) -> list[list[dict[str, Any]]]:
        """The Anthropic-shaped message list of every loop call (OpenAI ones mapped back)."""
        out = []
        for r in self.loop_requests:
            if r.kind == "chat":
                out.append(openai_to_anthropic(r.body.get("messages") or [])[1])
            elif r.kind == "responses":
                out.append(responses_to_anthropic(r.body)[1])
            else:
                out.append(r.body.get("messages") or [])
        return out

    # --- decisions (called from handler threads) -----------------------------------------

    def _classify(self, body: dict[str, Any]) -> bool:
        if self.is_loop_call is not None:
            return bool(self.is_loop_call(body))
        mt = body.get("max_tokens", body.get("max_completion_tokens", body.get("max_output_tokens")))
        if isinstance(mt, int) and mt <= 1:
            return False
        with self._lock:
            if body.get("tools"):
                self._seen_tools = True
                return True
            return not self._seen_tools

    def _take_fault(self, model: str | None = None) -> Fault | None:
        """The first queued fault for this request (a fault naming a model meets only its requests)."""
        with self._lock:
            for i, f in enumerate(self.faults):
                if f.model is not None and f.model != model:
                    continue
                f.remaining -= 1
                if f.remaining <= 0:
                    self.faults.pop(i)
                return f
            return None

    def _turn(self, fingerprint: str, system: str | None, tools: list[Any],
              messages: list[dict[str, Any]]) -> tuple[ModelResponse, int, Usage | None]:
        """The response for a loop call: the pending one for a retry, else the next turn.
        Also returns the turn's own usage when the script gives one (else it is simulated)."""
        with self._lock:
            if self._pending is not None and self._pending[0] == fingerprint:
                return self._pending[1:]
            resp = asyncio.run(complete(self.model, ModelRequest(system, tools, messages)))
            k = self.model.calls
            explicit: Usage | None = None
            if self._turn_list is not None and k <= len(self._turn_list):
                spec = self._turn_list[k - 1]
                if isinstance(spec, dict) and "usage" in spec:
                    explicit = resp.usage
            self._pending = (fingerprint, resp, k, explicit)
            return resp, k, explicit

    def _delivered(self, fingerprint: str) -> None:
        with self._lock:
            if self._pending is not None and self._pending[0] == fingerprint:
                self._pending = None
                self.turns_served += 1

    def _record(self, rec: RecordedRequest) -> None:
        """Record on arrival, so `requests` is in arrival order even before the answer ends."""
        with self._lock:
            self.requests.append(rec)

    def _log(self, rec: RecordedRequest) -> None:
        if self.log is not None:
            what = f"turn {rec.turn}" if rec.turn else ("side" if rec.kind in ("messages", "chat") else rec.kind)
            stream = " stream" if isinstance(rec.body, dict) and rec.body.get("stream") else ""
            fault = f" fault={_fault_label(rec.fault)}" if rec.fault else ""
            self.log(f"{rec.method} {rec.path} -> {rec.status} {what}{stream}{fault}")


def _fault_label(f: Fault) -> str:
    if f.status:
        return str(f.status)
    for name in ("drop_after", "malformed_sse", "no_stop", "stream_error", "bad_tool_json", "unknown_event",
                 "truncated_line", "no_stream", "raw_body", "delay"):
        if getattr(f, name):
            return name
    return "fault"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, _Dropped)):
            return  # a client that went away is not a server error
        super().handle_error(request, client_address)


class _V6Server(_Server):
    address_family = socket.AF_INET6


class _Dropped(Exception):
    """The connection was cut on purpose (or by the client)."""


class _Handler(BaseHTTPRequestHandler):
    server_obj: ScriptedServer
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as real API servers set it: otherwise Nagle holds a streamed answer's
    # last small write until the client's delayed ACK (~40 ms on Linux) on every call
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet: we log our own way
        pass

    # --- plumbing --------------------------------------------------------------------

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        try:
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            raise _Dropped() from None

    def _send_raw(self, status: int, data: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        try:
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            raise _Dropped() from None

    def _peer_closed(self) -> bool:
        """True if the client hung up (e.g. it timed out while a delay fault slept)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError:
            raise _Dropped() from None

    def _end_stream(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            raise _Dropped() from None

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _error(self, status: int, message: str, error_type: str | None = None,
               headers: dict[str, str] | None = None, openai: bool = False) -> None:
        typ = error_type or ANTHROPIC_ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        if openai:
            body: dict[str, Any] = {"error": {"message": message, "type": typ, "param": None, "code": typ}}
        else:
            body = {"type": "error", "error": {"type": typ, "message": message},
                    "request_id": "req_" + uuid.uuid4().hex[:20]}
        self._send_json(status, body, headers)

    # --- routing ---------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self._simple()

    def do_GET(self) -> None:
        self._simple()

    def _simple(self) -> None:
        srv = self.server_obj
        path = self.path.split("?")[0].rstrip("/")
        kind = "models" if path in ("/v1/models", "/models") else "health" if path == "" else "other"
        if path == "/props" and srv.window is not None and srv.window_style == "llamacpp":
            kind = "props"
        rec = RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, None, b"", kind)
        srv._record(rec)
        try:
            if kind == "models":
                entry: dict[str, Any] = {"id": srv.model_name, "type": "model", "object": "model",
                                         "display_name": srv.model_name}
                if srv.window is not None and srv.window_style == "vllm":
                    entry["max_model_len"] = srv.window
                self._send_json(200, {"object": "list", "data": [entry], "has_more": False})
            elif kind == "props":
                self._send_json(200, {"default_generation_settings": {"n_ctx": srv.window}, "total_slots": 1})
            elif kind == "health":
                self._send_json(200, {"ok": True})
            else:
                rec.status = 404
                self._error(404, f"no such endpoint: {self.command} {self.path}", "not_found_error")
        except _Dropped:
            rec.status = 0
        finally:
            srv._log(rec)

    def do_POST(self) -> None:
        srv = self.server_obj
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?")[0].rstrip("/")
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if path.endswith("/messages/count_tokens"):
            kind = "count_tokens"
        elif path.endswith("/messages"):
            kind = "messages"
        elif path.endswith("/chat/completions"):
            kind = "chat"
        elif path.endswith("/responses"):
            kind = "responses"
        else:
            kind = "other"
        rec = RecordedRequest("POST", self.path, headers, body, raw, kind, client_port=self.client_address[1])
        srv._record(rec)
        openai = kind in ("chat", "responses")  # OpenAI's error shape
        try:
            if kind == "other":
                rec.status = 404
                self._error(404, f"no such endpoint: POST {self.path}", "not_found_error", openai=openai)
            elif not isinstance(body, dict):
                rec.status = 400
                self._error(400, "request body is not a JSON object", openai=openai)
            elif kind == "count_tokens":
                segs = anthropic_segments(body)
                self._send_json(200, {"input_tokens": sum(estimate_tokens(p) for p, _ in segs) or 1})
            else:
                self._model_call(rec, body, openai)
        except _Dropped:  # the client went away mid-answer
            rec.status = 0
        finally:
            srv._log(rec)

    # --- model calls -------------------------------------------------------------------

    def _model_call(self, rec: RecordedRequest, body: dict[str, Any], openai: bool) -> None:
        srv = self.server_obj
        if rec.kind == "responses":
            system, history, tools = responses_to_anthropic(body)
            body = {**body, "messages": history}  # (the checks below read the history there)
        elif openai:
            system, history = openai_to_anthropic(body.get("messages") or [])
            tools = openai_tools_to_anthropic(body.get("tools") or [])
        else:
            history = strip_cache_control(body.get("messages") or [])
            sys_raw = body.get("system")
            system = sys_raw if isinstance(sys_raw, str) else (
                "\n\n".join(b.get("text", "") for b in sys_raw if isinstance(b, dict)) if isinstance(sys_raw, list) else None)
            tools = strip_cache_control(body.get("tools") or [])
        problem = self._validate(body, history, openai)
        if problem is not None:
            rec.status = 400
            self._error(400, problem, openai=openai)
            return
        if srv.window is not None:  # the window, as each server enforces it (before anything else)
            segs = [system, tools, history]
            mt = body.get("max_tokens", body.get("max_completion_tokens", body.get("max_output_tokens")))
            over = overflow_error(rec.kind, srv.window_style, srv.window, sum(estimate_tokens(x) for x in segs if x),
                                  mt if isinstance(mt, int) else 0)
            if over is not None:
                rec.status = 400
                self._send_json(400, over)
                return
        rec.loop_call = srv._classify(body)
        streaming = bool(body.get("stream"))
        if not rec.loop_call:
            content = [{"type": "text", "text": srv.side_reply}]
            stop = "end_turn"
            self._answer(rec, body, content, stop, None, openai, streaming, None)
            return
        fault = srv._take_fault(str(body.get("model") or ""))
        rec.fault = fault
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
            if self._peer_closed():  # nobody to answer: do not spend a turn on it
                rec.status = 0
                self.close_connection = True
                return
        if fault is not None and fault.raw_body is not None:
            rec.status = fault.status or 200
            self._send_raw(rec.status, fault.raw_body.encode(), fault.content_type, fault.headers)
            return
        if fault is not None and fault.status:
            rec.status = fault.status
            self._error(fault.status, fault.message or f"scripted fault {fault.status}", fault.error_type,
                        fault.headers, openai)
            return
        fingerprint = hashlib.sha256(json.dumps([system, history], sort_keys=True).encode()).hexdigest()
        try:
            resp, k, explicit = srv._turn(fingerprint, system, tools, history)
        except ModelError as e:
            rec.status = e.status or 400
            self._error(rec.status, f"scripted server: {e}", openai=openai)
            return
        except Exception as e:  # an exception turn, or a failing turn function
            status = getattr(e, "status", None) or 500
            rec.status = status
            self._error(status, f"scripted server: {type(e).__name__}: {e}", openai=openai)
            return
        rec.turn = k
        content = [b.to_wire() for b in resp.content]
        searches = 0
        if srv.web_search is not None and not openai:
            content, searches = _play_web_search(content, tools, srv.web_search)
        rec.searches = searches
        if not openai:  # what the Messages API answered it takes back (not what the OpenAI wires got)
            srv.served_types.update(str(b.get("type")) for b in content if isinstance(b, dict))
        if self._answer(rec, body, content, resp.stop_reason or "end_turn", explicit, openai, streaming, fault):
            srv._delivered(fingerprint)

    def _validate(self, body: dict[str, Any], history: list[Any], openai: bool) -> str | None:
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return "messages: at least one message is required"
        if not openai and not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        if not self.server_obj.strict:
            return None
        for t in body.get("tools") or []:
            if isinstance(t, dict) and str(t.get("type", "")).startswith("web_search_"):
                if t.get("name") != "web_search":
                    return f"tools: the {t['type']} tool must be named 'web_search'"
                if t.get("allowed_domains") and t.get("blocked_domains"):
                    return "tools: cannot specify both allowed_domains and blocked_domains in the web_search tool"
        if not openai:
            n = count_breakpoints(body)
            if n > 4:
                return f"A maximum of 4 blocks with cache_control may be provided. Found {n}."
            if (bad := _unknown_block(body["messages"], self.server_obj.served_types)) is not None:
                return bad
        # role "system" messages (newer API versions, sent by Claude Code) are outside Inv
        history = [m for m in history if not (isinstance(m, dict) and m.get("role") == "system")]
        try:
            if history and history[-1].get("role") == "assistant":
                if len(history) > 1:
                    check(history[:-1])  # an assistant prefill: what comes before it must hold
            else:
                check(history)
        except InvariantViolation as e:
            if "no tool_result" in str(e) or "should be the tool_result" in str(e) or "not followed" in str(e):
                return (f"messages: `tool_use` ids were found without `tool_result` blocks immediately after "
                        f"({e}). Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
            return f"messages: {e}"
        return None

    def _usage(self, body: dict[str, Any], openai: bool, explicit: Usage | None,
               content: list[dict[str, Any]]) -> dict[str, Any]:
        out_tokens = estimate_tokens(content) if content else 1
        if explicit is not None:
            u = explicit
            return {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                    "cache_creation_input_tokens": u.cache_creation_input_tokens,
                    "cache_read_input_tokens": u.cache_read_input_tokens,
                    "cache_creation": {"ephemeral_5m_input_tokens": u.cache_creation_input_tokens - u.cache_creation_1h_input_tokens,
                                       "ephemeral_1h_input_tokens": u.cache_creation_1h_input_tokens}}
        if openai:
            segs: list[Any] = list(body.get("tools") or []) + list(body.get("input") or body.get("messages") or [])
            total, cached = self.server_obj.cache.auto_usage(segs)
            return {"input_tokens": total - cached, "cache_read_input_tokens": cached,
                    "cache_creation_input_tokens": 0, "output_tokens": out_tokens}
        usage = self.server_obj.cache.usage(anthropic_segments(body))
        usage["output_tokens"] = out_tokens
        return usage

    def _answer(self, rec: RecordedRequest, body: dict[str, Any], content: list[dict[str, Any]], stop: str,
                explicit: Usage | None, openai: bool, streaming: bool, fault: Fault | None) -> bool:
        """Send the response; True if it was delivered completely."""
        srv = self.server_obj
        if fault is not None and fault.no_stream:
            streaming = False  # answered whole, as if the request had not asked for a stream
        usage = self._usage(body, openai, explicit, content)
        if rec.searches:
            usage["server_tool_use"] = {"web_search_requests": rec.searches}
        model = str(srv.reply_model or body.get("model") or srv.model_name)
        stream_fault = fault is not None and (fault.drop_after is not None or fault.malformed_sse or fault.no_stop
                                              or fault.stream_error or fault.bad_tool_json or fault.truncated_line)
        responses = rec.kind == "responses"
        if not streaming:
            if stream_fault:  # a broken non-streaming answer: cut the connection
                rec.status = 0
                self._drop()
                return False
            obj = response_object(model, content, stop, usage) if responses else _openai_message(
                model, content, stop, usage) if openai else {
                "id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
            self._send_json(200, obj)
            return True
        if responses:
            events = [_sse(name, data) for name, data in response_events(
                model, content, stop, usage, fault.stream_error if fault else None, fault.message if fault else None,
                bool(fault and fault.malformed_sse), bool(fault and fault.no_stop), bool(fault and fault.bad_tool_json))]
        else:
            events = (_openai_chunks(model, content, stop, usage, body, fault) if openai
                      else _anthropic_events(model, content, stop, usage, fault))
        if fault is not None and fault.unknown_event:  # after the first event, as a new API version might
            events.insert(1, _sse("future_event", {"type": "future_event", "note": "not known to clients yet"}) if not openai
                          else _sse(None, {"object": "future.event", "note": "not known to clients yet"}))
        if fault is not None and fault.truncated_line:  # the last JSON event cut mid-line, then a clean end
            i = max(k for k, ev in enumerate(events) if b"data: {" in ev)
            cut = events[i].index(b"data: {") + 7
            events[i:] = [events[i][:cut + (len(events[i]) - cut) // 2]]
        self._start_stream()
        for i, ev in enumerate(events):
            if fault is not None and fault.drop_after is not None and i >= fault.drop_after:
                rec.status = 0
                self._drop()
                return False
            self._chunk(ev)
        self._end_stream()
        return not stream_fault


def _play_web_search(content: list[dict[str, Any]], tools: list[Any],
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


def _sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "").encode() + f"data: {payload}\n\n".encode()


def _chunks(s: str, n: int = 24) -> list[str]:
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


def _anthropic_events(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any],
                      fault: Fault | None) -> list[bytes]:
    start_usage = {**usage, "output_tokens": 1}
    evs = [_sse("message_start", {"type": "message_start", "message": {
        "id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}}),
        _sse("ping", {"type": "ping"})]
    if fault is not None and fault.stream_error:
        evs.append(_sse("error", {"type": "error", "error": {"type": fault.stream_error,
                                                             "message": fault.message or "Overloaded"}}))
        return evs
    if fault is not None and fault.malformed_sse:
        evs.append(b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0,\n\n")
    bad_json = fault is not None and fault.bad_tool_json
    for i, b in enumerate(content):
        t = b.get("type")
        if t == "text":
            evs.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {**b, "text": ""}}))
            for part in _chunks(b.get("text", "")):
                evs.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                        "delta": {"type": "text_delta", "text": part}}))
        elif t in ("tool_use", "server_tool_use"):  # input streamed as JSON deltas, as the API does
            evs.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {**b, "input": {}}}))
            js = json.dumps(b.get("input", {}))
            if bad_json:
                js, bad_json = js[:-1] + ',"', False
            for part in _chunks(js, 16):
                evs.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                        "delta": {"type": "input_json_delta", "partial_json": part}}))
        elif t == "thinking":
            evs.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {**b, "thinking": "", "signature": ""}}))
            for part in _chunks(b.get("thinking", "")):
                evs.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                        "delta": {"type": "thinking_delta", "thinking": part}}))
            evs.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "signature_delta",
                                                              "signature": b.get("signature", "")}}))
        else:  # redacted_thinking, server tools, unknown types: whole in the start event
            evs.append(_sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": b}))
        evs.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    end_usage = {"output_tokens": usage.get("output_tokens", 1),
                 **({"server_tool_use": usage["server_tool_use"]} if "server_tool_use" in usage else {})}
    evs.append(_sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": end_usage}))
    if fault is None or not fault.no_stop:
        evs.append(_sse("message_stop", {"type": "message_stop"}))
    return evs


def _openai_usage(usage: dict[str, Any]) -> dict[str, Any]:
    cached = int(usage.get("cache_read_input_tokens") or 0)
    prompt = int(usage.get("input_tokens") or 0) + cached + int(usage.get("cache_creation_input_tokens") or 0)
    out = int(usage.get("output_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
            "prompt_tokens_details": {"cached_tokens": cached}}


def _openai_parts(content: list[dict[str, Any]], bad_json: bool = False) -> tuple[str, list[dict[str, Any]]]:
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    calls: list[dict[str, Any]] = []
    for b in content:
        if b.get("type") == "tool_use":
            args = json.dumps(b.get("input", {}))
            if bad_json and not calls:
                args = args[:-1] + ',"'
            calls.append({"id": b.get("id"), "type": "function", "function": {"name": b.get("name"), "arguments": args}})
    return text, calls


def _openai_message(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any]) -> dict[str, Any]:
    text, calls = _openai_parts(content)
    msg: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        msg["tool_calls"] = calls
    return {"id": "chatcmpl-" + uuid.uuid4().hex[:24], "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": msg, "finish_reason": STOP_TO_FINISH.get(stop, "stop")}],
            "usage": _openai_usage(usage)}


def _openai_chunks(model: str, content: list[dict[str, Any]], stop: str, usage: dict[str, Any],
                   body: dict[str, Any], fault: Fault | None) -> list[bytes]:
    cid = "chatcmpl-" + uuid.uuid4().hex[:24]
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    evs = [chunk({"role": "assistant", "content": ""})]
    if fault is not None and fault.stream_error:
        evs.append(_sse(None, {"error": {"message": fault.message or "Overloaded", "type": fault.stream_error,
                                         "code": fault.stream_error}}))
        return evs
    if fault is not None and fault.malformed_sse:
        evs.append(b"data: {\"id\": \"broken\", \"choices\": [\n\n")
    text, calls = _openai_parts(content, bad_json=fault is not None and fault.bad_tool_json)
    if text:
        for part in _chunks(text):
            evs.append(chunk({"content": part}))
    for i, c in enumerate(calls):
        evs.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                          "function": {"name": c["function"]["name"], "arguments": ""}}]}))
        for part in _chunks(c["function"]["arguments"], 16):
            evs.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
    if fault is not None and fault.no_stop:
        return evs
    evs.append(chunk({}, STOP_TO_FINISH.get(stop, "stop")))
    if (body.get("stream_options") or {}).get("include_usage"):
        evs.append(_sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                               "choices": [], "usage": _openai_usage(usage)}))
    evs.append(b"data: [DONE]\n\n")
    return evs


# --- the command ----------------------------------------------------------------------------

def load_script_file(path: str | Path) -> tuple[list[Any], list[Fault]]:
    """SCRIPT.json: a list of turns, or {"turns": [...], "faults": [...]}."""
    data = json.loads(Path(path).read_text())
    faults: list[Fault] = []
    if isinstance(data, dict):
        faults = [Fault.from_json(f) for f in data.get("faults") or []]
        data = data.get("turns")
    if not isinstance(data, list):
        raise ValueError('the script must be a list of turns or {"turns": [...]}')
    return data, faults


def serve_main(argv: Sequence[str]) -> int:
    """`loopwright serve-scripted SCRIPT.json [--port N] [--host 127.0.0.1]`: serve in the foreground."""
    p = argparse.ArgumentParser(
        prog="loopwright serve-scripted",
        description="Serve a scripted model over the Anthropic Messages API and the OpenAI chat completions API "
                    "on loopback. Point a client at it, e.g. ANTHROPIC_BASE_URL=<url> claude -p ... ; "
                    "OpenAI clients use <url>/v1. Requests with max_tokens<=1, and requests without tools once "
                    "a request with tools was seen, are side requests answered without using a turn.",
    )
    p.add_argument("script", help="JSON file: a list of turns, or {\"turns\": [...], \"faults\": [...]}")
    p.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    p.add_argument("--host", default="127.0.0.1", choices=LOOPBACK_HOSTS)
    p.add_argument("--model", default="claude-sonnet-4-6", help="model name reported in responses")
    p.add_argument("--min-cache-tokens", type=int, default=1024)
    p.add_argument("--no-strict", action="store_true", help="do not reject histories that break Inv")
    p.add_argument("--loop-model", metavar="SUBSTRING",
                   help="only requests whose model contains SUBSTRING (and max_tokens > 1) use turns; "
                        "e.g. 'sonnet' when a client sends side requests to a small model")
    p.add_argument("--quiet", action="store_true", help="do not print each request")
    args = p.parse_args(list(argv))
    try:
        turns, faults = load_script_file(args.script)
    except (OSError, ValueError) as e:
        print(f"loopwright serve-scripted: {e}", file=sys.stderr)
        return 2

    def log(line: str) -> None:
        print(line, flush=True)

    loop_model: str | None = args.loop_model

    def by_model(body: dict[str, Any]) -> bool:
        mt = body.get("max_tokens", body.get("max_completion_tokens"))
        return loop_model is not None and loop_model in str(body.get("model", "")) and not (
            isinstance(mt, int) and mt <= 1)

    srv = ScriptedServer(turns, host=args.host, port=args.port, model=args.model,
                         min_cache_tokens=args.min_cache_tokens, strict=not args.no_strict,
                         is_loop_call=by_model if loop_model else None, log=None if args.quiet else log)
    try:
        srv.start()
    except OSError as e:
        print(f"loopwright serve-scripted: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    srv.inject(*faults)
    print(f"loopwright scripted server listening on {srv.url} ({len(turns)} turns)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        srv.stop()
    return 0
