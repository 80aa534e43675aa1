"""Room: providers (on models.base). Owns the HTTP transport the providers share; may import data
types, models.base and models.retry.

The HTTP transport the two providers share: one `POST` per model call, streamed (SSE),
with loopwright's own retries, and no provider SDK on the path.

- One connection pool (models/wire.py) per event loop (a pool is bound to its loop):
  connection pooling and HTTP/1.1 keep-alive across the calls of a run; timeouts
  `connect_timeout` (TCP + TLS), `timeout` (the longest silence: waiting for the
  response, or between two reads of the stream; default Claude Code's `API_TIMEOUT_MS`,
  else 600 s) and `total_timeout` (one whole call, by default never less than `timeout`,
  checked as the stream arrives); proxies from the environment (`HTTPS_PROXY`,
  `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`); TLS from the system's trust store
  (`SSL_CERT_FILE` / `SSL_CERT_DIR` honoured).
- Errors are mapped once (`status_failure`, `_classify`): an HTTP status with the API's
  own error message, `retry-after(-ms)` and `x-should-retry`; transport errors
  (refused, reset, timed out, a stream cut mid-way) are retried; what fails the same way
  every time (a TLS certificate the system does not trust, a proxy refusing us, a 200
  answer that is neither SSE nor JSON) is not.
- A server that answers a streamed request with a plain JSON body (some
  OpenAI-compatible servers do, for requests with tools) is understood.
- A user's own SDK client (`client=AsyncAnthropic(...)`, a Bedrock or Vertex client,
  `AsyncOpenAI(...)`) is still accepted: the call then goes through it (its retries
  off), and the same SSE decoding and retry loop apply.

Why our own HTTP/1.1 client (models/wire.py: h11 over asyncio's streams) and not httpx2 or
its transport httpcore2: of HTTP we need one POST, streamed, on one kept-alive connection.
httpx2's layer (URL and header models, cookies, auth, redirects, content decoding) was ~12% of
the instructions from process start to the first request, and httpcore2's pool with its
backends and anyio under it ~25 ms more: more than everything they would do for us. From
httpx2 we keep its rules: the proxy from the environment (`_env_proxy`), the trust store
(`wire.system_tls_context`) and how a stream is split into lines (`Response.aiter_lines`).
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any, ClassVar, Generic, TypedDict, TypeVar
from urllib.parse import urlsplit

from .. import __version__
from ..blocks import utf8
from ..history import FrozenDict, FrozenList, frozen
from .base import ModelError, ModelEvent, ModelRequest, ModelResponse
from .retry import (
    AttemptFailed,
    RetryPolicy,
    error_from_body,
    is_retryable_status,
    is_transport_error,
    parse_retry_after,
    with_retries,
)

USER_AGENT = f"loopwright/{__version__}"
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 600.0
# Longer than any sound call (128k output tokens at ~80 tokens/s is ~27 min), so only a
# server that keeps a stream open without finishing it (keep-alive pings forever) meets it.
TOTAL_TIMEOUT_S = 1800.0
# Errors of the transport (or of a user's SDK client) that come out the same on every try:
# retrying them only delays the message.
_DETERMINISTIC = frozenset({"ProxyError", "UnsupportedProtocol", "InvalidURL", "LocalProtocolError",
                            "ResponseTooLarge"})
# The most of a whole (not streamed) answer or error body read: a model's JSON answer is well under
# a few MB; a server that sends more is not to fill memory.
MAX_BODY = 64 * 1024 * 1024


# The keyword-only options every HTTP provider takes (`stream` False: ask for whole answers,
# `"stream": false`, for a server whose streaming is broken). The functional form: the class form's
# annotations are strings here, and typing compiles each one at import.
HTTPOptions = TypedDict("HTTPOptions", {  # noqa: UP013 (see above)
    "retry_base_delay": float | None, "retry_max_delay": float | None, "timeout": float | None, "connect_timeout": float,
    "total_timeout": float | None, "client": Any, "stream": bool}, total=False)


class HTTPModel:
    """Base of AnthropicModel and OpenAICompatModel: the constructor, the transport, the
    error mapping. Subclasses give the class attributes, `headers()`, `build_params(request)`
    (the JSON body), `_read_stream(lines)` (SSE lines to events), `_read_json(obj)` (a plain
    JSON answer) and `_sdk_open(body)` (the same call through a user's SDK client)."""

    provider: ClassVar[str]  # for messages: "Anthropic", "OpenAI-compatible"
    sdk: ClassVar[str]  # the optional SDK's module: "anthropic", "openai"
    sdk_error: ClassVar[str]  # its root exception: "AnthropicError", "OpenAIError"
    env_base_url: ClassVar[str]
    env_api_key: ClassVar[str]
    default_base_url: ClassVar[str]
    path: ClassVar[str]  # appended to base_url: "/v1/messages", "/chat/completions"
    history_key: ClassVar[str] = "messages"  # the body's history (encoded a message at a time): "input"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 max_retries: int = 4, max_tokens: int | None = None, include_partial_messages: bool = False,
                 *, retry_base_delay: float | None = None, retry_max_delay: float | None = None,
                 timeout: float | None = None, connect_timeout: float = CONNECT_TIMEOUT_S,
                 total_timeout: float | None = TOTAL_TIMEOUT_S, client: Any = None, stream: bool = True) -> None:
        self.name = model
        self.stream_calls = stream
        self.base_url = base_url or os.environ.get(self.env_base_url) or None
        self.api_key = api_key or os.environ.get(self.env_api_key) or None
        self.max_tokens = max_tokens
        self.include_partial_messages = include_partial_messages
        if timeout is None:  # Claude Code's API_TIMEOUT_MS, as base_url and api_key come from the environment
            from ..ccenv import api_timeout

            timeout = api_timeout(os.environ) or READ_TIMEOUT_S
        if total_timeout == TOTAL_TIMEOUT_S:  # (the default whole call is never cut before one silence
            total_timeout = max(total_timeout, timeout)  # could end: API_TIMEOUT_MS=3600000 is a slow gateway's)
        self.timeout = timeout
        self.connect_timeout = min(connect_timeout, timeout)
        self.total_timeout = total_timeout
        self.retry = RetryPolicy(max_retries)
        if retry_base_delay is not None:
            self.retry.base_delay = retry_base_delay
        if retry_max_delay is not None:
            self.retry.max_delay = retry_max_delay
        # A user's SDK client: loopwright retries (visibly), so the SDK's own retries are off.
        self.sdk_client = client.with_options(max_retries=0) if hasattr(client, "with_options") else client
        self._http: Any = None  # the connection pool (wire.Pool), made at the first call
        self._headers: dict[str, str] = {}
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._url = (self.base_url or self.default_base_url).rstrip("/") + self.path
        self._encoder = BodyEncoder(self.history_key)
        self._timeouts: Any = None  # wire.Timeouts, made with the pool

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, base_url={shown_url(self.base_url)!r})"

    # --- what subclasses give ------------------------------------------------------------

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def request_headers(self, request: ModelRequest) -> dict[str, str]:
        """Headers this request needs beyond `headers()` (a beta a feature asks for)."""
        return {}

    def _read_stream(self, lines: AsyncIterator[str]) -> AsyncGenerator[ModelEvent, None]:
        raise NotImplementedError

    def _read_json(self, obj: Any) -> ModelResponse:
        raise NotImplementedError

    async def _sdk_open(self, body: dict[str, Any], request_headers: dict[str, str] | None = None) -> Any:
        raise NotImplementedError

    # --- the transport ---------------------------------------------------------------------

    def _client(self) -> Any:
        """This event loop's connection pool (a pool is bound to its loop)."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._http_loop is not loop:
            target = urlsplit(self._url)
            if target.scheme not in ("http", "https") or not target.hostname:
                raise ModelError(f"the base URL {shown_url(self.base_url or self.default_base_url)!r} "
                                 "is not an http(s) URL")
            # Host as httpx sends it (the port only when it is not the scheme's); identity, as without
            # an Accept-Encoding any coding is allowed and nothing here decodes one; the provider's.
            # A request's own headers replace these by name (_open), as httpx merges them.
            host = target.netloc.rpartition("@")[2]
            if target.port == {"http": 80, "https": 443}[target.scheme]:
                host = host.rsplit(":", 1)[0]
            self._headers = {"host": host.encode("idna").decode() if not host.isascii() else host,
                             "accept-encoding": "identity", **{k.lower(): v for k, v in self.headers().items()}}
            try:
                self._http = connection_pool(self._url, ssl_context=self._tls_context(), max_idle=10,
                                             keepalive_expiry=60.0)
            except ValueError as e:
                raise ModelError(str(e)) from None
            self._http_loop = loop
            from .wire import Timeouts

            self._timeouts = Timeouts(self.connect_timeout, self.timeout, self.timeout)
        return self._http

    def _tls_context(self) -> ssl.SSLContext | None:
        """The system trust store (as httpx2 builds it: SSL_CERT_FILE / SSL_CERT_DIR first), loaded
        once per process, not once per client. Loading it costs ~100 ms (and an empty context
        ~2 ms), so when nothing can speak TLS here (an http:// base URL, no https:// proxy in the
        environment: a local server) there is none, and any TLS fails closed (a ConnectError)."""
        tls_proxy = any(v.lower().startswith("https://") for k, v in os.environ.items() if k.lower().endswith("_proxy"))
        if self._url.startswith("http://") and not tls_proxy:
            return None
        from .wire_tls import system_tls_context

        return system_tls_context()

    async def probe(self, method: str, url: str, body: dict[str, Any] | None = None,
                    timeout: float = 3.0) -> Any:
        """One short side request to the server (window discovery, models/window.py): its JSON
        answer, or None on any failure (an error status, no JSON, no answer in `timeout` s)."""
        if self.sdk_client is not None or not url.startswith(("http://", "https://")):
            return None
        from .wire import Timeouts

        data = json.dumps(body).encode() if body is not None else b""
        try:
            pool = self._client()  # this provider's pool and headers (same host: the base URL's)
            headers = [(k.encode(), v.encode()) for k, v in self._headers.items() if k != "accept"]
            headers += [(b"accept", b"application/json"), (b"content-length", str(len(data)).encode())]
            response = await asyncio.wait_for(pool.request(method, url, headers, data,
                                                           Timeouts(timeout, timeout, timeout)), timeout)
            try:
                raw = await asyncio.wait_for(response.aread(MAX_BODY), timeout)
            finally:
                await response.aclose()
        except Exception:  # noqa: BLE001 - a probe that fails tells nothing: the caller goes on without it
            return None
        return _json_or_text(raw) if response.status_code < 300 else None

    async def aclose(self) -> None:
        """Close this loop's connection pool. Left to the garbage collector, a client of a
        finished asyncio.run() is closed on the next run's loop, which fails ("Event loop is
        closed") and leaks sockets. A user's own SDK client is theirs to close."""
        pool, self._http = self._http, None
        if pool is not None and self._http_loop is asyncio.get_running_loop():
            await pool.aclose()

    async def _open(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        """Send the request; the response with its headers read and its body not yet."""
        if self.sdk_client is not None:
            return await self._sdk_open(body, headers)
        pool = self._client()
        data = self._encoder.encode({**body, "stream": self.stream_calls})
        sent = self._headers if not headers else {**self._headers, **{k.lower(): v for k, v in headers.items()}}
        response = await pool.request(
            "POST", self._url,
            [*((k.encode(), v.encode()) for k, v in sent.items()), (b"content-length", str(len(data)).encode())],
            data, self._timeouts)
        if response.status_code >= 300:
            try:
                raw = await response.aread(MAX_BODY)
            finally:
                await response.aclose()
            raise self.status_failure(response.status_code, response.headers, _json_or_text(raw))
        return response

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        body = self.build_params(request)
        headers = self.request_headers(request)
        return with_retries(lambda: self._attempt(body, headers), self._classify, self.retry, self.provider)

    async def _attempt(self, body: dict[str, Any], headers: dict[str, str] | None = None
                       ) -> AsyncGenerator[ModelEvent, None]:
        deadline = time.monotonic() + self.total_timeout if self.total_timeout else None
        try:
            async with asyncio.timeout(self.total_timeout):  # a head that trickles in counts too
                response = await self._open(body, headers)
        except TimeoutError:
            raise self._took_too_long() from None
        if deadline is not None and self.sdk_client is None:
            response.deadline = deadline  # a body that trickles in forever, no line ever ending, too
        try:
            ctype = response.headers.get("content-type", "").lower()
            if "text/event-stream" in ctype:
                async for ev in self._read_stream(self._lines(response, deadline)):
                    yield ev
                return
            # (an SDK client's httpx2 response reads whole; ours stops at MAX_BODY)
            raw = await (response.aread() if self.sdk_client is not None else response.aread(MAX_BODY))
            obj = _json_or_text(raw)
            if not isinstance(obj, dict):  # an HTML page of a wrong URL or a captive portal: same every time
                raise AttemptFailed(
                    f"the server answered {response.status_code} with {ctype or 'no content-type'}, neither an "
                    f"event stream nor JSON: {str(obj)[:200]!r} (is the base URL {self._url} right?)", retryable=False)
            yield self._read_json(obj)  # a plain JSON answer to a streamed request: understood
        finally:
            await response.aclose()

    async def _lines(self, response: Any, deadline: float | None) -> AsyncIterator[str]:
        """The response's lines; past `total_timeout` the call fails (the read timeout bounds
        each silence, this bounds a stream that trickles forever)."""
        async for line in response.aiter_lines():  # (past the deadline with no line: wire.DeadlineExceeded)
            if deadline is not None and time.monotonic() > deadline:
                raise self._took_too_long()
            yield line

    def _took_too_long(self) -> AttemptFailed:
        return AttemptFailed(f"the call took longer than total_timeout={self.total_timeout:g} s", retryable=False)

    # --- errors ----------------------------------------------------------------------------

    def status_failure(self, status: int, headers: Mapping[str, str], body: Any) -> AttemptFailed:
        """An HTTP error answer as an AttemptFailed: the API's own message, retryable by status unless
        the server says otherwise (`x-should-retry`), waiting as long as it asks."""
        typ, msg = error_from_body(body)
        retryable = is_retryable_status(status)
        should = (headers.get("x-should-retry") or "").lower()
        if should in ("true", "false"):
            retryable = should == "true"
        text = f"{typ}: {msg}" if typ and msg else (msg or typ or f"HTTP {status}")
        if status == 407:
            text += " (the proxy wants credentials: put them in HTTPS_PROXY, or list the host in NO_PROXY)"
        elif status == 401 and self.sdk_client is None:  # the key (or token) the run sent: where it came from
            text += f" (check the API key: {self.env_api_key}, or the settings' apiKeyHelper)"
        elif status == 404 and "model" in text.lower():  # a mistyped model name (the servers' words all say "model")
            text += (f" (the model {self.name!r} may not exist or you may not have access to it; pick another "
                     "with --model, or /model at the interactive prompt)")
        elif status == 404:  # nothing at that address: a base URL without (or with one more) /v1
            text += f" (nothing at {self._url}: is the base URL right?)"
        return AttemptFailed(text, status, retryable, parse_retry_after(headers))

    def _classify(self, e: BaseException) -> AttemptFailed | None:
        """An exception of one attempt as an AttemptFailed (retryable or not), or None: not ours."""
        sdk = sys.modules.get(self.sdk) if self.sdk_client is not None else None
        if sdk is not None and isinstance(e, sdk.APIStatusError):
            return self.status_failure(int(e.status_code), e.response.headers, e.body)
        if sdk is not None and isinstance(e, sdk.APIConnectionError):
            cause = e.__cause__ or e.__context__
            e = cause if isinstance(cause, Exception) else e
        wire = sys.modules.get("loopwright.models.wire")  # (loaded before any of its errors can be)
        if wire is not None and isinstance(e, wire.DeadlineExceeded):
            return self._took_too_long()
        if is_transport_error(e):
            name = type(e).__name__
            tls = _cause(e, ssl.SSLError)
            if tls is not None and not isinstance(tls, ssl.SSLEOFError):  # an EOF mid-handshake may be transient
                return AttemptFailed(f"TLS error talking to {self._url}: {tls} (a proxy that re-signs TLS needs its CA in "
                               "the system trust store or in SSL_CERT_FILE)", retryable=False)
            if name in _DETERMINISTIC:
                hint = " (check HTTPS_PROXY / NO_PROXY and the proxy's credentials)" if name == "ProxyError" else ""
                return AttemptFailed(f"{name}: {e}{hint}", retryable=False)
            if _cause(e, ConnectionRefusedError) is not None:  # (the socket's words name no fix)
                return AttemptFailed(f"connection error: {name}: {e} (nothing is listening there: is the server at "
                               f"{shown_url(self.base_url or self.default_base_url)} running, or a proxy it goes "
                               "through?)")
            if name in ("ReadTimeout", "WriteTimeout") and self.sdk_client is None:  # (the knob that sets the wait, as Claude Code's users know it)
                return AttemptFailed(f"connection error: {name}: {e} (API_TIMEOUT_MS sets how long a model call waits: "
                               f"{self.timeout * 1000:.0f} ms here)")
            return AttemptFailed(f"connection error: {name}: {e or 'no details'}")
        if sdk is not None and isinstance(e, getattr(sdk, self.sdk_error)):
            return AttemptFailed(f"{type(e).__name__}: {e}", retryable=False)
        if isinstance(e, TypeError) and "authentication" in str(e) and self.sdk_client is not None:
            return AttemptFailed(f"no {self.provider} credentials in the SDK client: {e}", retryable=False)
        return None


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


T = TypeVar("T")


class PerMessage(Generic[T]):
    """`fn(m)` for each message of a history, computed once per message: the history is sent whole
    every turn, and redoing each message's work (its JSON, its items in another API's shape) was
    the largest per-turn cost of a long run (it grows with the history). Only a frozen message
    (history.FrozenDict: what a run's History holds, refusing every change) is remembered, by
    identity, so a result can never be stale; a plain dict (a provider's copy carrying a cache
    breakpoint, a caller's own list) is computed each time. A result kept is frozen too (so the
    items another API's shape makes of a message are remembered by the next PerMessage: their
    JSON). Results are dropped when a history no longer has their message."""

    __slots__ = ("_fn", "_known")

    def __init__(self, fn: Callable[[Any], T]) -> None:
        self._fn = fn
        self._known: dict[int, tuple[Any, T]] = {}  # id -> (message, result); holding it keeps its id unique

    def map(self, messages: list[Any]) -> list[T]:
        fn, known = self._fn, self._known
        get = known.get
        out: list[T] = []
        append = out.append
        for m in messages:  # (a hit, nearly every message of a long run, is a lookup and a check)
            hit = get(id(m))
            if hit is not None and hit[0] is m:
                append(hit[1])
            elif type(m) is FrozenDict:
                result = frozen(fn(m))
                known[id(m)] = (m, result)
                append(result)
            else:
                append(fn(m))
        if len(known) > 2 * len(messages) + 64:  # messages no longer in the history: let them go
            self._known = {id(m): known[id(m)] for m in messages if id(m) in known}
        return out


class BodyEncoder:
    """A request body as JSON bytes, the history under `key` encoded a message at a time, each
    message once (PerMessage), and the tool definitions and system prompt once while they are
    the same objects (the providers build them once per run: a run's largest fixed part). As in
    PerMessage, only what cannot change in place is remembered: a string, or a FrozenList (a run's
    tool definitions are frozen, loop/state.py's RunDeps); a caller's plain list is encoded anew
    each time (the same list of the same length was taken as unchanged, and an item replaced in
    place was never sent, issue 41). Each part is kept as the UTF-8 bytes it is sent as: the body
    is their join, not a text encoded again at every call (a long session's history is most of
    each request: 10 MB of it was two more copies and an encoding pass a turn)."""

    __slots__ = ("_json", "_key", "_fixed")

    def __init__(self, key: str = "messages") -> None:
        self._key = key
        self._json: PerMessage[bytes] = PerMessage(_dumps_utf8)
        self._fixed: dict[str, tuple[Any, bytes]] = {}  # body key -> (a str or FrozenList, its JSON)

    def encode(self, body: dict[str, Any]) -> bytes:
        msgs = body.get(self._key)
        if not isinstance(msgs, list) or not msgs:
            return _dumps_utf8(body)
        # the same bytes json.dumps gives for the whole body (keys in their order; a lone surrogate,
        # a non-UTF-8 file name as U+FFFD, part by part as in the whole: blocks.utf8)
        # (one join of all the parts, each message's JSON one of them: the history is copied once,
        # into the body, not first into a text of its own)
        parts = [b"{"]
        for k, v in body.items():
            parts.append(_dumps_utf8(str(k)) + b":" if len(parts) == 1 else b"," + _dumps_utf8(str(k)) + b":")
            if k == self._key:
                items = [b","] * (2 * len(msgs) + 1)  # [ m0 , m1 , ... ]: the messages between commas
                items[1::2] = self._json.map(msgs)
                items[0], items[-1] = b"[", b"]"
                parts += items
            else:
                parts.append(self._value(k, v))
        parts.append(b"}")
        return b"".join(parts)

    def _value(self, k: str, v: Any) -> bytes:
        if type(v) is not str and type(v) is not FrozenList:
            return _dumps_utf8(v)
        hit = self._fixed.get(k)  # (the same immutable object: its JSON of the last time)
        if hit is not None and hit[0] is v:
            return hit[1]
        data = _dumps_utf8(v)
        self._fixed[k] = (v, data)
        return data


def _dumps_utf8(obj: Any) -> bytes:
    return utf8(_dumps(obj))


def connection_pool(url: str, **pool: Any) -> Any:
    """A connection pool (wire.Pool) for requests to `url`: through the environment's proxy for
    it, if any (ValueError for a proxy that is not http, https or socks5). `pool`: the pool's own
    options (ssl_context, connect, max_idle, keepalive_expiry). Shared by the providers and the
    web tools."""
    from .wire import Pool, UnsupportedProtocol

    try:
        return Pool(proxy=_env_proxy(url), **pool)
    except UnsupportedProtocol as e:
        raise ValueError(f"{e} (from the environment)") from None


def proxy_for(url: str) -> str | None:
    """The environment's proxy for `url` (None: a direct connection), by httpx2's rules."""
    return _env_proxy(url)


def shown_url(url: str | None) -> str | None:
    """A URL as loopwright shows it in errors and reprs: without the `user:password@` a base URL may
    carry, nor its query (a gateway's `?key=...`), which a terminal, a log or a transcript must not
    hold."""
    if url is None:
        return None
    # The authority runs from after `scheme://` (or the start: a URL written without its scheme is
    # shown too) to the first /, ? or #; its user part ends at its last @.
    scheme, sep, rest = url.partition("//") if "//" in url.partition("@")[0] else ("", "", url)
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    if "?" in tail:
        tail = tail.partition("?")[0] + "?..."
    return scheme + sep + authority + tail


def _env_proxy(url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The proxy for `url` from the environment, by httpx2's rules: `<scheme>_proxy`, else
    `all_proxy` (a lower-case name wins over its upper-case one; a proxy without a scheme is
    http://), unless `no_proxy` lists the host: `*` (no proxy at all), a name (the host and
    its subdomains), `.name` (subdomains only), an IP address, a network (`10.0.0.0/8`),
    any of them with `:port`, or `scheme://host`."""
    env: dict[str, str] = {}
    for k, v in sorted((environ if environ is not None else os.environ).items(), key=lambda kv: kv[0].islower()):
        if k.lower().endswith("_proxy") and v:
            env[k.lower()] = v
    if "REQUEST_METHOD" in (environ if environ is not None else os.environ):  # a CGI script: HTTP_PROXY is a header
        env.pop("http_proxy", None)
    target = urlsplit(url)
    proxy = env.get(f"{target.scheme}_proxy") or env.get("all_proxy")
    if not proxy:
        return None
    host, port = (target.hostname or "").lower(), target.port or {"http": 80, "https": 443}.get(target.scheme)
    entries = (e.strip().lower() for e in env.get("no_proxy", "").split(","))
    if any(_bypasses(entry, target.scheme, host, port) for entry in entries if entry):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _bypasses(entry: str, scheme: str, host: str, port: int | None) -> bool:
    """Does this `no_proxy` entry (see _env_proxy) name the host?"""
    if entry == "*":
        return True
    entry_scheme, sep, entry = entry.rpartition("://")
    if sep and entry_scheme != scheme:
        return False
    name, want_port = entry, None
    if entry.startswith("["):  # [::1] or [::1]:8080
        name, _, rest = entry[1:].partition("]")
        want_port = rest[1:] or None
    elif entry.count(":") == 1:
        name, want_port = entry.split(":")
    if want_port is not None and want_port != str(port):
        return False
    import ipaddress  # (only with a NO_PROXY: start-up)

    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network(name, strict=False)
    except ValueError:  # a host name, or an entry that is not an address
        pass
    if name.startswith("."):
        return host.endswith(name)
    return host == name or host.endswith("." + name)


def _cause(e: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of type `kind` in e's chain of causes (the transport's wrap the ssl
    module's; an SDK's wrap httpx2's, which wrap httpcore2's)."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, kind):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def _json_or_text(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # (nested deeper than the parser goes: a hostile body, as text)
        return raw.decode("utf-8", errors="replace")
