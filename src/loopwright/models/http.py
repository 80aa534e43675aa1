"""Room: providers (on models.base). Owns the HTTP transport the providers share; may import data
types, models.base and models.retry.

The HTTP transport the two providers share: one `POST` per model call, streamed (SSE),
with loopwright's own retries, and no provider SDK on the path.

- One `httpx2.AsyncClient` per event loop (its connection pool is bound to the loop):
  connection pooling and HTTP/1.1 keep-alive across the calls of a run; timeouts
  `connect_timeout` (TCP + TLS), `timeout` (the longest silence: waiting for the
  response, or between two reads of the stream) and `total_timeout` (one whole call,
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

Why httpx2 and not httpx: httpx2 is the HTTP client the current official SDKs
(anthropic >= 2, openai >= 3) are built on, so a user who installs an SDK extra has one
HTTP stack, not two; it is the maintained line (httpx's last release, 0.28.1, is from
2024-12); and it builds its TLS context from the system store (truststore on macOS and
Windows), which is what a corporate proxy's re-signed certificates need. Importing
either costs the same (~120 ms here, measured).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import ssl
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, ClassVar, TypedDict

from .. import __version__
from .base import ModelEvent, ModelRequest, ModelResponse
from .retry import (
    AttemptFailed,
    Failure,
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
# Errors of httpx2 that come out the same on every try: retrying them only delays the message.
_DETERMINISTIC = frozenset({"ProxyError", "UnsupportedProtocol", "InvalidURL", "LocalProtocolError"})


class HTTPOptions(TypedDict, total=False):
    """The keyword-only options every HTTP provider takes."""

    retry_base_delay: float | None
    retry_max_delay: float | None
    timeout: float
    connect_timeout: float
    total_timeout: float | None
    client: Any


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

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 max_retries: int = 4, max_tokens: int | None = None, include_partial_messages: bool = False,
                 *, retry_base_delay: float | None = None, retry_max_delay: float | None = None,
                 timeout: float = READ_TIMEOUT_S, connect_timeout: float = CONNECT_TIMEOUT_S,
                 total_timeout: float | None = TOTAL_TIMEOUT_S, client: Any = None) -> None:
        self.name = model
        self.base_url = base_url or os.environ.get(self.env_base_url) or None
        self.api_key = api_key or os.environ.get(self.env_api_key) or None
        self.max_tokens = max_tokens
        self.include_partial_messages = include_partial_messages
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
        self._http: Any = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._url = (self.base_url or self.default_base_url).rstrip("/") + self.path

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, base_url={self.base_url!r})"

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
        """This event loop's HTTP client (httpx2 pools are bound to their loop)."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._http_loop is not loop:
            import httpx2  # here, not at import: `import loopwright` stays light

            self._http = httpx2.AsyncClient(
                headers=self.headers(),
                verify=self._tls_context(),
                timeout=httpx2.Timeout(self.timeout, connect=self.connect_timeout),
                limits=httpx2.Limits(max_connections=20, max_keepalive_connections=10, keepalive_expiry=60.0),
                trust_env=True,  # HTTPS_PROXY / NO_PROXY, SSL_CERT_FILE / SSL_CERT_DIR
                follow_redirects=False,
            )
            self._http_loop = loop
        return self._http

    def _tls_context(self) -> ssl.SSLContext:
        """The system trust store (as httpx2 builds it: SSL_CERT_FILE / SSL_CERT_DIR first), loaded
        once per process, not once per client. Loading it costs ~100 ms, so when nothing can
        speak TLS here (an http:// base URL, no https:// proxy in the environment: a local
        server) the context has no CA loaded: it verifies, so any TLS would fail closed."""
        tls_proxy = any(v.lower().startswith("https://") for k, v in os.environ.items() if k.lower().endswith("_proxy"))
        if self._url.startswith("http://") and not tls_proxy:
            return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return _system_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))

    async def aclose(self) -> None:
        """Close this loop's connection pool. Left to the garbage collector, a client of a
        finished asyncio.run() is closed on the next run's loop, which fails ("Event loop is
        closed") and leaks sockets. A user's own SDK client is theirs to close."""
        client, self._http = self._http, None
        if client is not None and self._http_loop is asyncio.get_running_loop():
            await client.aclose()

    async def _open(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        """Send the request; the response with its headers read and its body not yet."""
        if self.sdk_client is not None:
            return await self._sdk_open(body, headers)
        client = self._client()
        data = json.dumps({**body, "stream": True}, ensure_ascii=False, separators=(",", ":")).encode()
        request = client.build_request("POST", self._url, content=data, headers=headers or None)
        response = await client.send(request, stream=True)
        if response.status_code >= 300:
            try:
                raw = await response.aread()
            finally:
                await response.aclose()
            raise AttemptFailed(self.status_failure(response.status_code, response.headers, _json_or_text(raw)))
        return response

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        body = self.build_params(request)
        headers = self.request_headers(request)
        return with_retries(lambda: self._attempt(body, headers), self._classify, self.retry, self.provider)

    async def _attempt(self, body: dict[str, Any], headers: dict[str, str] | None = None
                       ) -> AsyncGenerator[ModelEvent, None]:
        deadline = time.monotonic() + self.total_timeout if self.total_timeout else None
        response = await self._open(body, headers)
        try:
            ctype = response.headers.get("content-type", "").lower()
            if "text/event-stream" in ctype:
                async for ev in self._read_stream(self._lines(response, deadline)):
                    yield ev
                return
            raw = await response.aread()
            obj = _json_or_text(raw)
            if not isinstance(obj, dict):  # an HTML page of a wrong URL or a captive portal: same every time
                raise AttemptFailed(Failure(
                    f"the server answered {response.status_code} with {ctype or 'no content-type'}, neither an "
                    f"event stream nor JSON: {str(obj)[:200]!r} (is the base URL {self._url} right?)", retryable=False))
            yield self._read_json(obj)  # a plain JSON answer to a streamed request: understood
        finally:
            await response.aclose()

    async def _lines(self, response: Any, deadline: float | None) -> AsyncIterator[str]:
        """The response's lines; past `total_timeout` the call fails (the read timeout bounds
        each silence, this bounds a stream that trickles forever)."""
        async for line in response.aiter_lines():
            if deadline is not None and time.monotonic() > deadline:
                raise AttemptFailed(Failure(f"the call took longer than total_timeout={self.total_timeout:g} s",
                                            retryable=False))
            yield line

    # --- errors ----------------------------------------------------------------------------

    def status_failure(self, status: int, headers: Mapping[str, str], body: Any) -> Failure:
        """An HTTP error answer as a Failure: the API's own message, retryable by status unless
        the server says otherwise (`x-should-retry`), waiting as long as it asks."""
        typ, msg = error_from_body(body)
        retryable = is_retryable_status(status)
        should = (headers.get("x-should-retry") or "").lower()
        if should in ("true", "false"):
            retryable = should == "true"
        text = f"{typ}: {msg}" if typ and msg else (msg or typ or f"HTTP {status}")
        if status == 407:
            text += " (the proxy wants credentials: put them in HTTPS_PROXY, or list the host in NO_PROXY)"
        return Failure(text, status, retryable, parse_retry_after(headers))

    def _classify(self, e: BaseException) -> Failure | None:
        """An exception of one attempt as a Failure (retryable or not), or None: not ours."""
        sdk = sys.modules.get(self.sdk) if self.sdk_client is not None else None
        if sdk is not None and isinstance(e, sdk.APIStatusError):
            return self.status_failure(int(e.status_code), e.response.headers, e.body)
        if sdk is not None and isinstance(e, sdk.APIConnectionError):
            cause = e.__cause__ or e.__context__
            e = cause if isinstance(cause, Exception) else e
        if is_transport_error(e):
            name = type(e).__name__
            tls = _cause(e, ssl.SSLError)
            if tls is not None and not isinstance(tls, ssl.SSLEOFError):  # an EOF mid-handshake may be transient
                return Failure(f"TLS error talking to {self._url}: {tls} (a proxy that re-signs TLS needs its CA in "
                               "the system trust store or in SSL_CERT_FILE)", retryable=False)
            if name in _DETERMINISTIC:
                hint = " (check HTTPS_PROXY / NO_PROXY and the proxy's credentials)" if name == "ProxyError" else ""
                return Failure(f"{name}: {e}{hint}", retryable=False)
            return Failure(f"connection error: {name}: {e or 'no details'}")
        if sdk is not None and isinstance(e, getattr(sdk, self.sdk_error)):
            return Failure(f"{type(e).__name__}: {e}", retryable=False)
        if isinstance(e, TypeError) and "authentication" in str(e) and self.sdk_client is not None:
            return Failure(f"no {self.provider} credentials in the SDK client: {e}", retryable=False)
        return None


@functools.lru_cache(maxsize=4)
def _system_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """httpx2's own default context (keyed on the variables it reads)."""
    import httpx2

    return httpx2.create_ssl_context()


def _cause(e: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of type `kind` in e's chain of causes (httpx2 wraps httpcore2's,
    which wraps the ssl module's)."""
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
    except ValueError:
        return raw.decode("utf-8", errors="replace")
