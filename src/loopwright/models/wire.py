"""Room: providers (on the standard library and h11). The HTTP/1.1 client under the providers
(models/http.py) and the web tools: h11 writes the requests and reads the answers, asyncio's
streams carry them.

- `Pool(...).request(method, url, headers, body)` sends one request and answers with the
  `Response` once its head has arrived; the body is read with `aiter_bytes()` / `aiter_lines()`
  / `aread()`. A response read to its end gives its connection back for the next request
  (HTTP/1.1 keep-alive: one connection for a whole run); one closed early, cancelled or broken
  closes it, as does one h11 calls not reusable ("connection: close"). An idle one the server
  closed is never reused; a request that met its close unanswered is sent again (`Pool.request`).
- Timeouts: `connect` (TCP, a proxy's CONNECT, TLS), `read` (each silence while the response is
  awaited or read), `write` (the request going out).
- TLS with the context given (wire_tls.py's `system_tls_context()`: the system's trust store, as
  httpx2 and the official SDKs build it), the certificate checked against the URL's host name.
- A proxy: `http://` / `https://` (a plain URL goes to the proxy whole; an https:// one is
  tunnelled with CONNECT, then TLS to the host through it) or `socks5://` / `socks5h://`
  (with the optional `socksio`; wire_proxy.py). A proxy's refusal of a tunnel is a ProxyError with
  its status.
- `connect`: how TCP connections are made (the web tools' guard resolves the name and checks
  every address first); TLS is still checked against the URL's host name.
- Errors are this module's (their home is wire_errors.py): ConnectError, ConnectTimeout, ReadError, ReadTimeout, WriteError,
  WriteTimeout, DeadlineExceeded (a body still arriving at `Response.deadline`),
  RemoteProtocolError (a server that breaks HTTP/1.1 or goes away mid-answer), ResponseTooLarge
  (a body or a line past the reader's limit), LocalProtocolError, ProxyError,
  UnsupportedProtocol; the cause (an OSError, an ssl.SSLError) is chained.

Why not httpcore2, on which this transport was first built: it is the same HTTP/1.1 engine (h11)
with its own connection pool, and to import it (both its sync and async halves and its
backends) and anyio (whose asyncio backend its pool's first lock loads) is ~25 ms on the way to
every run's first request here: a quarter of the 100 ms budget for that, for a pool of one
connection (issue 41 measured it again: +39 % of `-p` start → first request, httpx2 +104 %;
bench/bench_transport.py, docs/benchmarks.md). What it does that we use is here: pooling,
keep-alive, timeouts, proxies, TLS.
"""

from __future__ import annotations

import asyncio
import codecs
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import h11

from ..idle import IDLE_S, pending, waited
from .wire_errors import (  # (this module's errors: they live there, with the proxies' and TLS's)
    ConnectError,
    ConnectTimeout,
    DeadlineExceeded,
    HTTPError,
    LocalProtocolError,
    NetworkError,
    ProtocolError,
    ProxyError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    ResponseTooLarge,
    TimeoutException,
    UnsupportedProtocol,
    WriteError,
    WriteTimeout,
)

if TYPE_CHECKING:
    from .wire_proxy import Proxy

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]
# (host, port, timeout) -> a TCP connection; an OSError is a ConnectError (any other, the caller's own)
Connector = Callable[[str, int, float | None], Awaitable[Streams]]
Headers = Sequence[tuple[bytes, bytes]]
_PORTS = {"http": 80, "https": 443}
_CHUNK = 65536
_MAX_HEAD = 100 * 1024  # a response head larger than this is a RemoteProtocolError (as httpcore2 had it)
MAX_LINE = 16 * 1024 * 1024  # aiter_lines: no event stream sends a line this long


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds, None for none."""

    connect: float | None = 10.0
    read: float | None = 600.0
    write: float | None = 600.0


_DEFAULT_TIMEOUTS = Timeouts()


async def open_tcp(host: str, port: int, timeout: float | None) -> Streams:
    """A TCP connection to host:port (the name resolved by the system; every address tried, a
    name's by Happy Eyeballs: an IPv6 address that does not answer costs 0.25 s, not the
    timeout). An address has one way to reach it: no race (~0.2 ms less to a local server). The
    pool bounds it by the connect timeout and makes an OSError a ConnectError (`Pool._open`)."""
    if _is_address(host):
        return await asyncio.open_connection(host, port)
    return await asyncio.open_connection(host, port, happy_eyeballs_delay=0.25)


def _is_address(host: str) -> bool:
    """Is `host` an IPv4 or IPv6 address (as asyncio reads one: no lookup)?"""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host.partition("%")[0])
            return True
        except (OSError, ValueError):
            pass
    return False


def _request(method: str, target: str, headers: list[tuple[bytes, bytes]]) -> h11.Request:
    """h11's request; its refusal (a header HTTP/1.1 cannot carry: a CR LF in a value, say) a LocalProtocolError."""
    try:
        return h11.Request(method=method, target=target, headers=headers)
    except h11.LocalProtocolError as e:
        raise LocalProtocolError(str(e)) from e


class _Connection:
    """One HTTP/1.1 connection: its streams, its h11 state (from its first request on), when it
    went idle, how many bytes came since its last request went out."""

    __slots__ = ("h11", "idle_since", "reader", "received", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h11: h11.Connection | None = None
        self.idle_since, self.received = 0.0, 0

    def usable(self, expiry: float) -> bool:
        """Idle, open, and not closed by the server while it was idle (its EOF is waiting)."""
        return (not self.writer.is_closing() and not self.reader.at_eof()
                and time.monotonic() - self.idle_since < expiry)

    def close(self) -> None:
        self.writer.close()

    async def send(self, request: h11.Request, body: bytes, timeout: float | None) -> None:
        """Write the request as h11 frames it (all of it framed before a byte goes: a refusal sends nothing)."""
        if self.h11 is None:
            self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)
        conn = self.h11
        self.received = 0
        try:
            parts = [conn.send(request), conn.send(h11.Data(data=body)) if body else None, conn.send(h11.EndOfMessage())]
        except h11.LocalProtocolError as e:  # (a body longer or shorter than its Content-Length, say)
            raise LocalProtocolError(str(e)) from e
        try:
            for part in parts:
                if part:
                    self.writer.write(part)
            async with asyncio.timeout(timeout):
                await self.writer.drain()
        except TimeoutError:
            raise WriteTimeout(f"the request could not be sent in {timeout:g} s") from None
        except OSError as e:
            raise WriteError(f"the connection broke while sending: {e.strerror or e}") from e

    async def next_event(self, timeout: float | None) -> h11.Event | type[h11.PAUSED]:
        """The next event from the server, reading as needed (after `send`)."""
        conn = self.h11
        assert conn is not None
        while True:
            try:
                ev = conn.next_event()
            except h11.RemoteProtocolError as e:
                raise RemoteProtocolError(str(e)) from e
            if ev is not h11.NEED_DATA:
                return ev  # type: ignore[return-value]
            # (a read that waits IDLE_S while work is pending for an idle moment starts it: idle.py)
            waiting = asyncio.get_running_loop().call_later(IDLE_S, waited) if pending() else None
            try:
                async with asyncio.timeout(timeout):
                    data = await self.reader.read(_CHUNK)
            except TimeoutError:
                raise ReadTimeout(f"the server sent nothing for {timeout:g} s") from None
            except OSError as e:
                raise ReadError(f"the connection broke: {e.strerror or e}") from e
            finally:
                if waiting is not None:
                    waiting.cancel()
            self.received += len(data)
            if not data and conn.their_state is h11.SEND_RESPONSE:
                raise RemoteProtocolError("the server closed the connection without answering")
            try:
                conn.receive_data(data)
            except h11.RemoteProtocolError as e:
                raise RemoteProtocolError(str(e)) from e


class Response:
    """A response whose head has arrived: `status_code`, `reason`, `headers` (lower-case names;
    a repeated one joined with ", "), `raw_headers`; the body read once, by one of the
    `aiter_*` / `aread`, then `aclose()` (which a body read to its end does itself)."""

    def __init__(self, pool: Pool, key: tuple[str, ...], conn: _Connection, head: h11.Response,
                 timeout: float | None) -> None:
        self._pool, self._key, self._conn, self._timeout = pool, key, conn, timeout
        self.status_code: int = head.status_code
        self.reason = head.reason.decode("latin-1", "replace")
        self.raw_headers: list[tuple[bytes, bytes]] = list(head.headers)
        values: dict[str, list[str]] = {}
        for k, v in self.raw_headers:  # (a list per name: thousands of one name stay linear)
            values.setdefault(k.decode("latin-1"), []).append(v.decode("latin-1"))
        self.headers = {k: v[0] if len(v) == 1 else ", ".join(v) for k, v in values.items()}
        self._done = False
        self.deadline: float | None = None  # (time.monotonic()) the body must be whole by then

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives (chunked or not, decoded of its framing)."""
        conn = self._conn
        if self._done or conn is None:
            return
        try:
            while True:
                ev = await self._next(conn)
                if type(ev) is h11.Data:
                    yield bytes(ev.data)
                elif type(ev) is h11.EndOfMessage:
                    break
                else:  # PAUSED, ConnectionClosed: nothing more can come
                    raise RemoteProtocolError(f"the server ended the response with {ev!r}")
        except BaseException:
            await self.aclose()
            raise
        self._done = True
        self._conn = None  # type: ignore[assignment]
        self._pool._release(self._key, conn)

    async def _next(self, conn: _Connection) -> h11.Event | type[h11.PAUSED]:
        """The next event of the body, within the read timeout and before the deadline."""
        if self.deadline is None:
            return await conn.next_event(self._timeout)
        left = self.deadline - time.monotonic()
        try:
            if left > 0:
                return await conn.next_event(left if self._timeout is None else min(self._timeout, left))
        except ReadTimeout:
            if time.monotonic() < self.deadline:
                raise
        raise DeadlineExceeded("the response was still arriving at its deadline")

    async def aiter_lines(self, max_line: int = MAX_LINE) -> AsyncIterator[str]:
        """The body's lines, as httpx splits them: at \\n, \\r\\n or \\r (a \\r at the end of a
        chunk waits for the next one, which may start with its \\n), the last one even
        without an end; UTF-8, bad bytes replaced. A line longer than `max_line` characters is
        ResponseTooLarge (memory is not the server's to fill)."""
        decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        rest = ""
        async for chunk in self.aiter_bytes():
            text = rest + decode(chunk)
            held = "\r" if text.endswith("\r") else ""
            *lines, rest = text[:len(text) - len(held)].replace("\r\n", "\n").replace("\r", "\n").split("\n")
            rest += held
            if len(rest) > max_line:
                await self.aclose()
                raise ResponseTooLarge(f"the server sent a line longer than {max_line} characters")
            for line in lines:
                yield line
        text = rest + decode(b"", True)
        if text:
            *lines, last = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for line in lines:
                yield line
            if last:
                yield last

    async def aread(self, limit: int | None = None) -> bytes:
        """The whole body; past `limit` bytes, ResponseTooLarge."""
        chunks, size = [], 0
        async for chunk in self.aiter_bytes():
            size += len(chunk)
            if limit is not None and size > limit:
                await self.aclose()
                raise ResponseTooLarge(f"the response body is larger than {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def aclose(self) -> None:
        """Done with the response: a body not read to its end closes the connection."""
        conn, self._conn = self._conn, None  # type: ignore[assignment]
        if conn is not None:
            self._done = True
            conn.close()


class Pool:
    """Connections kept for reuse, per origin (scheme, host, port) and route, on one event loop.

    `ssl_context` for https:// URLs (and an https:// proxy); `proxy`: a proxy URL for every
    request (None: direct); `connect`: makes the TCP connections (default `open_tcp`);
    `max_idle` idle connections kept per origin for `keepalive_expiry` seconds."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None, proxy: str | None = None,
                 connect: Connector | None = None, max_idle: int = 10, keepalive_expiry: float = 60.0) -> None:
        self.ssl_context = ssl_context
        self.proxy: Proxy | None = None
        if proxy:
            from .wire_proxy import parse_proxy  # (a proxy's code loads only with a proxy)

            self.proxy = parse_proxy(proxy)
        self._connect = connect or open_tcp
        self.max_idle = max_idle
        self.keepalive_expiry = keepalive_expiry
        self._idle: dict[tuple[str, ...], list[_Connection]] = {}
        self._closed = False

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the idle connections (a response still being read closes its own)."""
        self._closed = True
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for c in conns:
                c.close()

    async def request(self, method: str, url: str, headers: Headers = (), body: bytes = b"",
                      timeouts: Timeouts | None = None) -> Response:
        """Send one request (`headers` as given: the caller sets Host and Content-Length);
        the response once its head has arrived."""
        timeouts = timeouts or _DEFAULT_TIMEOUTS
        u = urlsplit(url)
        scheme = u.scheme.lower()
        if scheme not in _PORTS or not u.hostname:
            raise UnsupportedProtocol(f"not an http:// or https:// URL: {url[:200]!r}")
        try:
            port = u.port or _PORTS[scheme]
        except ValueError as e:  # a port that is not a number, or out of range
            raise UnsupportedProtocol(f"a bad port in {url[:200]!r}: {e}") from None
        host = u.hostname
        target = (u.path or "/") + (f"?{u.query}" if u.query else "")
        p = self.proxy
        sent = list(headers)
        if p is not None and p.scheme in ("http", "https") and scheme == "http":
            target = f"http://{u.netloc.rpartition('@')[2]}{target}"  # the proxy forwards it
            key: tuple[str, ...] = ("forward", p.scheme, p.host, str(p.port))
            if p.auth:
                from .wire_proxy import basic_auth

                sent.append((b"proxy-authorization", basic_auth(p.auth)))
        else:
            key = (scheme, host, str(port))
        request = _request(method, target, sent)  # (before a connection is taken: a bad header takes none)
        reused = self._take(key)
        if reused is not None:
            try:
                return await self._exchange(key, reused, request, body, timeouts)
            except (WriteError, ReadError, RemoteProtocolError):
                if reused.received:
                    raise
            # A server may close an idle connection at any time, crossing our next request (RFC 9112 §9.3.1;
            # llama-server does, after each streamed answer). The standard rule: a request that met a reused
            # connection's close before any byte of an answer came is sent again, once, on a new one.
        conn = await self._open(scheme, host, port, timeouts.connect)
        return await self._exchange(key, conn, request, body, timeouts)

    async def _exchange(self, key: tuple[str, ...], conn: _Connection, request: h11.Request, body: bytes,
                        timeouts: Timeouts) -> Response:
        """Send the request on `conn` and read the response's head (`conn` closed on any failure)."""
        try:
            await conn.send(request, body, timeouts.write)
            while True:
                ev = await conn.next_event(timeouts.read)
                if type(ev) is h11.Response:
                    return Response(self, key, conn, ev, timeouts.read)
                if type(ev) is not h11.InformationalResponse:  # 100 Continue and the like: wait on
                    raise RemoteProtocolError(f"the server answered with {ev!r}")
        except BaseException:
            conn.close()
            raise

    def _take(self, key: tuple[str, ...]) -> _Connection | None:
        conns = self._idle.get(key)
        while conns:
            c = conns.pop()
            if c.usable(self.keepalive_expiry):
                return c
            c.close()
        return None

    def _release(self, key: tuple[str, ...], conn: _Connection) -> None:
        h = conn.h11
        if self._closed or h is None or h.our_state is not h11.DONE or h.their_state is not h11.DONE:
            conn.close()  # h11: not reusable (MUST_CLOSE: "connection: close", HTTP/1.0), or cut short
            return
        h.start_next_cycle()
        conn.idle_since = time.monotonic()
        conns = self._idle.setdefault(key, [])
        conns.append(conn)
        while len(conns) > self.max_idle:
            conns.pop(0).close()

    async def _open(self, scheme: str, host: str, port: int, timeout: float | None) -> _Connection:
        """A new connection to host:port, through the proxy if any, TLS if https."""
        p = self.proxy
        writer: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await self._connect(host if p is None else p.host, port if p is None else p.port,
                                                     timeout)
                if p is not None and p.scheme == "https":
                    await self._tls(writer, p.host)
                if p is not None and p.scheme in ("http", "https") and scheme == "https":
                    await self._tunnel(reader, writer, host, port, timeout)
                elif p is not None and p.scheme.startswith("socks5"):
                    from .wire_proxy import socks5_connect

                    await socks5_connect(reader, writer, p, host, port)
                if scheme == "https":  # (through a forwarding proxy a plain URL is sent to it as it is)
                    await self._tls(writer, host)
        except BaseException as e:
            if writer is not None:
                writer.close()
            if isinstance(e, TimeoutError):
                raise ConnectTimeout(f"connecting to {host}:{port} took longer than {timeout:g} s") from None
            if isinstance(e, OSError):  # from a `connect` of the caller's
                raise ConnectError(f"cannot connect to {host}:{port}: {e.strerror or e}") from e
            raise
        return _Connection(reader, writer)

    async def _tls(self, writer: asyncio.StreamWriter, host: str) -> None:
        if self.ssl_context is None:
            raise ConnectError(f"no TLS context to speak TLS with {host}")
        try:
            await writer.start_tls(self.ssl_context, server_hostname=host)
        except (ssl.SSLError, OSError) as e:
            raise ConnectError(f"TLS with {host} failed: {e}") from e

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int,
                      timeout: float | None) -> None:
        """CONNECT host:port through the proxy; a refusal is a ProxyError with its status."""
        p = self.proxy
        assert p is not None
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        headers = [(b"host", authority.encode())]
        if p.auth:
            from .wire_proxy import basic_auth

            headers.append((b"proxy-authorization", basic_auth(p.auth)))
        conn = _Connection(reader, writer)
        await conn.send(_request("CONNECT", authority, headers), b"", timeout)
        ev = await conn.next_event(timeout)
        while type(ev) is h11.InformationalResponse:
            ev = await conn.next_event(timeout)
        if type(ev) is not h11.Response or not 200 <= ev.status_code < 300:
            status = f"{ev.status_code} {ev.reason.decode('latin-1', 'replace')}".strip() \
                if type(ev) is h11.Response else repr(ev)
            raise ProxyError(f"the proxy {p.host}:{p.port} refused to connect to {authority}: {status}")


__all__ = ["MAX_LINE", "ConnectError", "ConnectTimeout", "Connector", "DeadlineExceeded", "HTTPError", "Headers",
           "LocalProtocolError", "NetworkError", "Pool", "ProtocolError", "ProxyError", "ReadError", "ReadTimeout",
           "RemoteProtocolError", "Response", "ResponseTooLarge", "Streams", "TimeoutException", "Timeouts",
           "UnsupportedProtocol", "WriteError", "WriteTimeout", "open_tcp"]


def __getattr__(name: str) -> Any:
    """system_tls_context, from wire_tls.py (where TLS's trust lives; loaded on first use: a run over
    plain http:// never needs it)."""
    if name == "system_tls_context":
        from .wire_tls import system_tls_context

        return system_tls_context
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
