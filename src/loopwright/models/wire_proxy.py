"""Room: providers (on the standard library, and socksio for a SOCKS proxy). Owns the transport's
proxies (models/wire.py): a proxy URL parsed (http, https, socks5, socks5h), its Basic credentials,
and the SOCKS5 handshake (the HTTP CONNECT tunnel is the pool's own: an HTTP/1.1 exchange). Loaded
only when a proxy is configured.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from .wire_errors import ProxyError, UnsupportedProtocol

_CHUNK = 65536  # (one read of the proxy's replies)


@dataclass(slots=True)  # (not frozen: never changed nor hashed, and frozen doubles what declaring it costs every start, issue 41)
class Proxy:
    """A proxy URL, parsed: its scheme, host, port and credentials."""

    scheme: str  # http, https, socks5, socks5h
    host: str
    port: int
    auth: tuple[str, str] | None


def basic_auth(auth: tuple[str, str]) -> bytes:
    """The value of a Proxy-Authorization header for these credentials."""
    return b"Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode())


def parse_proxy(url: str) -> Proxy:
    """A proxy URL (http, https, socks5, socks5h), parsed; another is an UnsupportedProtocol."""
    p = urlsplit(url)
    scheme = p.scheme.lower()
    if scheme not in ("http", "https", "socks5", "socks5h") or not p.hostname:
        raise UnsupportedProtocol(f"the proxy {url!r} is not http, https or socks5")
    try:
        port = p.port or {"http": 80, "https": 443}.get(scheme, 1080)
    except ValueError as e:
        raise UnsupportedProtocol(f"a bad port in the proxy {url!r}: {e}") from None
    auth = (unquote(p.username), unquote(p.password or "")) if p.username else None
    return Proxy(scheme, p.hostname, port, auth)


async def socks5_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, p: Proxy, host: str,
                  port: int) -> None:
    """Ask a SOCKS5 proxy for a connection to host:port (the proxy resolves the name, for socks5://
    as for socks5h://, as httpx2 does)."""
    try:
        import socksio
        from socksio import socks5
    except ImportError:
        raise ProxyError("a SOCKS proxy needs the socksio package (pip install socksio)") from None
    conn = socks5.SOCKS5Connection()
    method = socks5.SOCKS5AuthMethod.USERNAME_PASSWORD if p.auth else socks5.SOCKS5AuthMethod.NO_AUTH_REQUIRED

    async def exchange(request: object) -> object:
        conn.send(request)
        writer.write(conn.data_to_send())
        await writer.drain()
        while True:
            data = await reader.read(_CHUNK)
            if not data:
                raise ProxyError(f"the SOCKS proxy {p.host}:{p.port} closed the connection")
            reply = conn.receive_data(data)
            if reply is not None:
                return reply

    try:
        reply = await exchange(socks5.SOCKS5AuthMethodsRequest([method]))
        if getattr(reply, "method", None) != method:
            raise ProxyError(f"the SOCKS proxy {p.host}:{p.port} refused the authentication method")
        if p.auth:
            auth = await exchange(socks5.SOCKS5UsernamePasswordRequest(p.auth[0].encode(), p.auth[1].encode()))
            if not getattr(auth, "success", False):
                raise ProxyError(f"the SOCKS proxy {p.host}:{p.port} refused the credentials")
        done = await exchange(socks5.SOCKS5CommandRequest.from_address(
            socks5.SOCKS5Command.CONNECT, (host, port)))
        if getattr(done, "reply_code", None) != socks5.SOCKS5ReplyCode.SUCCEEDED:
            raise ProxyError(f"the SOCKS proxy {p.host}:{p.port} refused to connect to {host}:{port}: "
                             f"{getattr(done, 'reply_code', done)}")
    except (OSError, socksio.SOCKSError) as e:
        raise ProxyError(f"the SOCKS proxy {p.host}:{p.port} failed: {e}") from e
