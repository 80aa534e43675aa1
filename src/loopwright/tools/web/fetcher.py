"""Room: web tools (on tools.base). Owns the web tools' HTTP GET; may import tools.web.guard,
models.http and models.wire (the providers' transport).

One GET through the providers' transport (models/wire.py, the environment's proxy, the system's
trust store), with what a hostile server must not be able to do about it:

- every connection goes through the address policy (guard.py), each redirect hop too (through
  the environment's proxy, the target's name is resolved and checked here before the proxy is
  asked; the proxy resolves it again, so against DNS rebinding the proxy's own policy counts);
- redirects are followed only to the same host (`www.` aside, http to https, same port, no
  credentials), at most `max_redirects` times and never in a loop; a redirect to another
  host is returned as `Redirect` for the model to decide on (Claude Code's rule);
- `http://` is tried as `https://` first; only when that connection fails (nothing on the
  TLS port, or no TLS there) is the plain URL fetched;
- the body is read up to `max_bytes` (after decoding: a gzip bomb is stopped at the cap, not
  inflated), and the whole fetch, redirects included, ends at `timeout` seconds;
- response headers larger than h11's limit (100 KB) fail the fetch cleanly.
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from .guard import AddressPolicy, GuardedConnect, Resolver

MAX_BYTES = 10 * 1024 * 1024
TIMEOUT_S = 60.0
MAX_REDIRECTS = 10
MAX_URL_LENGTH = 2000
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORT = {"http": 80, "https": 443}


class FetchError(Exception):
    """A fetch that failed: the message says why, for the model."""


@dataclass(slots=True)
class Page:
    """A response the fetcher read: where its body came from, its status, type and body."""

    url: str  # the URL the body came from (after same-host redirects)
    status: int
    reason: str
    content_type: str
    body: bytes
    truncated: bool  # the body was cut at max_bytes


@dataclass(slots=True)
class Redirect:
    """A redirect to another host: not followed."""

    url: str
    location: str
    status: int


@dataclass(frozen=True, slots=True)
class Limits:
    """How much a fetch may read, for how long, through how many redirects."""

    max_bytes: int = MAX_BYTES
    timeout: float = TIMEOUT_S
    max_redirects: int = MAX_REDIRECTS


DEFAULT_LIMITS = Limits()


def check_url(url: str) -> str:
    """The URL as fetched, or FetchError saying what is wrong with it: stripped, spaces as %20, a
    non-ASCII host in IDNA and a non-ASCII path percent-encoded; control characters refused
    (a CR LF in a URL would be a header of its own)."""
    url = url.strip()
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise FetchError("the URL contains control characters")
    url = url.replace(" ", "%20")
    if not url.isascii():
        p = urlsplit(url)
        try:
            host = (p.hostname or "").encode("idna").decode("ascii")
        except UnicodeError as e:
            raise FetchError(f"the host of {url[:100]} is not a valid domain name: {e}") from None
        netloc = host if p.port is None else f"{host}:{p.port}"
        url = urlunsplit((p.scheme, netloc, quote(p.path, safe="/%:@!$&'()*+,;="),
                          quote(p.query, safe="=&%:@!$'()*+,;/?"), ""))
    if len(url) > MAX_URL_LENGTH:
        raise FetchError(f"the URL is {len(url)} characters long; at most {MAX_URL_LENGTH} are fetched")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchError(f"only http:// and https:// URLs are fetched, not {parts.scheme or 'a URL without a scheme'}"
                         f" ({url[:100]})")
    if not parts.hostname:
        raise FetchError(f"the URL {url[:100]} has no host")
    if parts.username is not None or parts.password is not None:
        raise FetchError("URLs with credentials (user:password@host) are not fetched")
    try:
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as e:
        raise FetchError(f"bad port in {url[:100]}: {e}") from None
    return url


def _origin(url: str) -> tuple[str, str, int]:
    p = urlsplit(url)
    host = (p.hostname or "").lower()
    return p.scheme, host.removeprefix("www."), p.port or _DEFAULT_PORT[p.scheme]


def same_host(url: str, location: str) -> bool:
    """Is following this redirect still fetching the host the call (and the gate) named?"""
    a, b = urlsplit(url), urlsplit(location)
    if b.username is not None or b.password is not None or b.scheme not in ("http", "https"):
        return False
    (sa, ha, pa), (sb, hb, pb) = _origin(url), _origin(location)
    if ha != hb:
        return False
    if sa == sb:
        return pa == pb
    # http -> https on the default ports (or the same explicit port) is the same site
    return sa == "http" and sb == "https" and (pa, pb) in ((80, 443), (a.port, b.port))


def _decoder(coding: str) -> Any:
    coding = coding.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return zlib.decompressobj(zlib.MAX_WBITS)  # zlib-wrapped, as RFC 9110 says
    raise FetchError(f"the server sent the body encoded as {coding!r}, which is not decoded here "
                     "(gzip and deflate are)")


async def _read(raw: Any, coding: str, max_bytes: int) -> tuple[bytes, bool]:
    """The body, decoded, up to max_bytes; (body, truncated). Decoding is bounded by the cap:
    at most max_bytes + 1 bytes are ever inflated."""
    dec = _decoder(coding)
    out = bytearray()
    async for chunk in raw.aiter_bytes():
        if dec is None:
            out += chunk
        else:
            try:
                out += dec.decompress(chunk, max_bytes + 1 - len(out))
            except zlib.error as e:
                raise FetchError(f"the body is not valid {coding}: {e}") from None
        if len(out) > max_bytes:
            return bytes(out[:max_bytes]), True
    if dec is not None:
        out += dec.flush()
    if len(out) > max_bytes:
        return bytes(out[:max_bytes]), True
    return bytes(out), False


async def _get(pool: Any, url: str, limits: Limits) -> tuple[int, str, dict[str, str], bytes, bool]:
    from ... import __version__
    from ...models.wire import Timeouts

    p = urlsplit(url)
    host = p.netloc.rpartition("@")[2]
    if p.port == _DEFAULT_PORT[p.scheme]:
        host = host.rsplit(":", 1)[0]
    t = limits.timeout
    headers = [(b"host", host.encode("idna") if not host.isascii() else host.encode()),
               (b"user-agent", f"loopwright/{__version__} (WebFetch)".encode()),
               (b"accept", b"text/markdown, text/html, application/xhtml+xml, application/json, text/plain;q=0.9, "
                           b"application/pdf;q=0.8, */*;q=0.5"),
               (b"accept-encoding", b"gzip, deflate")]
    raw = await pool.request("GET", url, headers, timeouts=Timeouts(min(t, 10.0), t, t))
    try:
        h, reason = raw.headers, raw.reason
        if raw.status_code in _REDIRECTS:
            return raw.status_code, reason, h, b"", False
        declared = h.get("content-length", "")
        if declared.isdigit() and int(declared) > limits.max_bytes and "content-encoding" not in h:
            raise FetchError(f"the response is {int(declared)} bytes; at most {limits.max_bytes} are fetched")
        body, truncated = await _read(raw, h.get("content-encoding", ""), limits.max_bytes)
        return raw.status_code, reason, h, body, truncated
    finally:
        await raw.aclose()


async def fetch(url: str, policy: AddressPolicy, limits: Limits = DEFAULT_LIMITS, *, upgrade: bool = True,
                resolver: Resolver | None = None) -> Page | Redirect:
    """GET `url` (see the module). FetchError (or AddressRefused) when it cannot be had."""
    url = check_url(url)
    try:
        async with asyncio.timeout(limits.timeout):
            if upgrade and url.lower().startswith("http://"):
                secure = urlunsplit(urlsplit(url)._replace(scheme="https"))
                try:
                    return await _follow(secure, policy, limits, resolver)
                except _NoTLS:
                    pass  # the host does not speak TLS there: fetch it as asked
            return await _follow(url, policy, limits, resolver, first_try=False)
    except TimeoutError:
        raise FetchError(f"the fetch took longer than {limits.timeout:g} s and was stopped") from None


class _NoTLS(Exception):
    pass


async def _follow(url: str, policy: AddressPolicy, limits: Limits, resolver: Resolver | None,
                  first_try: bool = True) -> Page | Redirect:
    """GET url, following redirects on its host (one to another host is returned as a Redirect)."""
    from ...models import wire
    from ...models.http import connection_pool, proxy_for
    from ...models.wire_tls import system_tls_context

    # Through a proxy, the proxy resolves the name and connects: each hop's name is checked here
    # instead (the proxy itself, of the user's own network, may well be at a private address).
    proxied = proxy_for(url) is not None
    connect = None if proxied else GuardedConnect(policy, resolver)
    seen = [url]
    try:
        pool = connection_pool(url, ssl_context=system_tls_context(), connect=connect, max_idle=4)
    except ValueError as e:
        raise FetchError(str(e)) from None
    async with pool:
        while True:
            if proxied:
                await _check_hop(url, policy, resolver)
            try:
                status, reason, headers, body, truncated = await _get(pool, url, limits)
            except (wire.NetworkError, wire.TimeoutException, wire.RemoteProtocolError, wire.LocalProtocolError,
                    wire.ProxyError) as e:
                err = _explained(e, url, first_try and len(seen) == 1)
                raise err from (e if isinstance(err, _NoTLS) else None)
            if status not in _REDIRECTS:
                return Page(url, status, reason, headers.get("content-type", ""), body, truncated)
            target = _next_hop(url, status, headers, seen, limits)
            if isinstance(target, Redirect):
                return target
            seen.append(target)
            url = target


async def _check_hop(url: str, policy: AddressPolicy, resolver: Resolver | None) -> None:
    """A hop through a proxy: its host's addresses, resolved here, must pass the policy."""
    from .guard import resolve

    p = urlsplit(url)
    host = p.hostname or ""
    policy.check(host, await (resolver or resolve)(host, p.port or _DEFAULT_PORT[p.scheme]))


def _explained(e: Exception, url: str, first: bool) -> Exception:
    """What a failed GET of url raises: _NoTLS when the first try of an upgraded http:// URL
    found no TLS there (it is fetched as asked), else a FetchError that says what went wrong."""
    from ...models import wire

    host, what = urlsplit(url).netloc, f"{e or type(e).__name__}"
    if first and isinstance(e, (wire.ConnectError, wire.ConnectTimeout, wire.ReadError, wire.ProxyError)):
        return _NoTLS()
    if isinstance(e, (wire.ConnectError, wire.ConnectTimeout)):
        return FetchError(f"cannot connect to {host}: {what}")
    if isinstance(e, wire.TimeoutException):
        return FetchError(f"{host} stopped answering ({type(e).__name__})")
    if isinstance(e, (wire.RemoteProtocolError, wire.LocalProtocolError, wire.ReadError)):
        return FetchError(f"{host} sent a broken HTTP response: {what}")
    if isinstance(e, wire.NetworkError):
        return FetchError(f"network error talking to {host}: {what}")
    return FetchError(f"the proxy refused the request for {url[:200]}: {e}")  # the environment's proxy (a CONNECT)


def _next_hop(url: str, status: int, headers: dict[str, str], seen: list[str], limits: Limits) -> str | Redirect:
    """Where a redirect leads: the next URL on the same host, or a Redirect to another host (not
    followed); a FetchError for one without a Location, a loop, or too many."""
    location = headers.get("location")
    if not location:
        raise FetchError(f"{url} answered {status} (a redirect) without a Location")
    target: str = urljoin(url, location.strip())
    if not same_host(url, target):
        return Redirect(url, target, status)
    if target in seen:
        raise FetchError(f"redirect loop: {' -> '.join([*seen[seen.index(target):], target])}")
    if len(seen) > limits.max_redirects:
        raise FetchError(f"more than {limits.max_redirects} redirects from {seen[0]}")
    return target
