"""Room: cli. Owns `loopwright mcp serve --http [HOST:]PORT`: the server over MCP's streamable HTTP,
bound to loopback unless told otherwise, with the spec's DNS-rebinding protection and a bearer
token; may import the MCP SDK, starlette and uvicorn.

The MCP SDK does the protocol (sessions with `Mcp-Session-Id`, POST answered as JSON or SSE, the
GET stream, DELETE, its request-size bound, Host/Origin checks); this module chooses its settings:
- Host and Origin: only the listening address's own names (loopback: 127.0.0.1, localhost, [::1])
  and `--allow-host` names are accepted; anything else is a 421/403 before the request is read, so a
  web page that rebinds a name to 127.0.0.1 cannot drive the server.
- Bearer token, always unless `--no-auth` (loopback only): every request must carry
  `Authorization: Bearer TOKEN` (compared in constant time), else 401 — other local users and their
  programs reach 127.0.0.1 too, and the tools run commands. The token is `--auth-token-file FILE`'s
  (a file only its owner can read: mode 0600 or stricter, refused otherwise, as ssh refuses a
  readable key), else $LOOPWRIGHT_MCP_TOKEN, else $LOOPWRIGHT_HOME/mcp-serve-token, made on first use
  (0600, 32 random bytes).
- A POST body that is no JSON-RPC message is answered as the stdio door answers such a line: 400
  with -32700 for no JSON, -32600 Invalid Request for no valid message (JsonRpcBodies).
- Resumability: events are kept in memory (the last EVENTS per server), so a client whose SSE
  stream broke reconnects with `Last-Event-ID` and gets what it missed.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import socket
import stat
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .serve_stdio import vet_body

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
EVENTS = 10_000
TOKEN_ENV = "LOOPWRIGHT_MCP_TOKEN"


def parse_listen(value: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[V6]:PORT` → (host, port); the host defaults to 127.0.0.1."""
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http {value}: give PORT or HOST:PORT (a port from 0 to 65535; 0 picks a free one)")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_token_file() -> Path:
    from ..home import loopwright_home

    return loopwright_home() / "mcp-serve-token"


def token_for(path: str | None, no_auth: bool, host: str) -> tuple[str | None, str]:
    """(the token every request must carry, or None; where it came from, for the first stderr line).
    Given no token, one is made once (32 random bytes, hex) in $LOOPWRIGHT_HOME/mcp-serve-token
    (0600): other local users and their programs reach 127.0.0.1 too. `--no-auth` serves without
    one, on loopback only."""
    if no_auth:
        if path is not None:
            raise ValueError("--no-auth and --auth-token-file contradict each other: give one")
        if not is_loopback(host):
            raise ValueError(f"--no-auth on {host}: only on a loopback address (the served tools run commands)")
        return None, "no token: --no-auth"
    token = read_token(path)
    if token is not None:
        return token, path or f"${TOKEN_ENV}"
    default = default_token_file()
    if not default.exists():
        import secrets

        from ..home import write_private

        write_private(default, secrets.token_hex(32) + "\n")
    token = read_token(str(default))
    assert token is not None  # (read_token refuses an empty file)
    return token, str(default)


def read_token(path: str | None) -> str | None:
    """The bearer token from `path` (owner-only, one line) or $LOOPWRIGHT_MCP_TOKEN, or None."""
    if path is None:
        token = os.environ.get(TOKEN_ENV, "").strip()
        return token or None
    p = Path(path).expanduser()
    try:
        mode = p.stat().st_mode
        text = p.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise ValueError(f"--auth-token-file {path}: {e.strerror or e}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ValueError(f"--auth-token-file {path}: readable by others (mode {stat.S_IMODE(mode):o}); "
                         f"chmod 600 {path}")
    if not text:
        raise ValueError(f"--auth-token-file {path}: empty")
    return text


def security_settings(host: str, port: int, allow_hosts: list[str]) -> Any:
    """The SDK's Host/Origin checks: the listening address's names (and loopback's when it is
    loopback) at this port, plus `--allow-host` names (HOST or HOST:PORT)."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = [*(LOOPBACK_NAMES if is_loopback(host) else ()), f"[{host}]" if ":" in host else host]
    hosts = [f"{n}:{port}" for n in dict.fromkeys(names)] + [h if ":" in h else f"{h}:{port}" for h in allow_hosts]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


def memory_event_store() -> Any:
    """The SDK's EventStore, in memory: the last EVENTS events, for `Last-Event-ID` replays."""
    from mcp.server.streamable_http import EventMessage, EventStore

    class MemoryEventStore(EventStore):
        def __init__(self) -> None:
            self.events: OrderedDict[str, tuple[str, Any]] = OrderedDict()
            self.count = 0

        async def store_event(self, stream_id: str, message: Any) -> str:
            self.count += 1
            event_id = f"{self.count}"
            self.events[event_id] = (stream_id, message)
            while len(self.events) > EVENTS:
                self.events.popitem(last=False)
            return event_id

        async def replay_events_after(self, last_event_id: str, send_callback: Any) -> str | None:
            if last_event_id not in self.events:
                return None
            stream_id = self.events[last_event_id][0]
            after = False
            for event_id, (sid, message) in list(self.events.items()):
                if after and sid == stream_id and message is not None:
                    await send_callback(EventMessage(message, event_id))
                after = after or event_id == last_event_id
            return stream_id

    return MemoryEventStore()


class BearerAuth:
    """ASGI middleware: HTTP requests without `Authorization: Bearer <token>` get 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error":"unauthorized","error_description":"a bearer token is required"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="loopwright"'),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


class JsonRpcBodies:
    """ASGI middleware: a POST whose body is no JSON-RPC message the MCP types take is answered here,
    as the stdio door answers such a line (400 with -32700 for no JSON, -32600 for no valid message,
    by its id when it has a usable one; serve_stdio.vet_body), where the SDK would say -32602. Only
    after the SDK's own Host/Origin/Content-Type checks pass (a request they refuse goes on to the SDK,
    which refuses it as before) and only for a body within the SDK's size bound (a larger one goes on
    to the SDK's 413)."""

    def __init__(self, app: Any, security: Any) -> None:
        from mcp.server.transport_security import (
            DEFAULT_MAX_REQUEST_BODY_SIZE,
            TransportSecurityMiddleware,
        )

        self.app, self.limit = app, DEFAULT_MAX_REQUEST_BODY_SIZE
        self.security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not await self.admitted(scope, receive):
            await self.app(scope, receive, send)
            return
        read, body, whole = await self.read(receive)
        reply = vet_body(body) if whole else None
        if reply is None:
            await self.app(scope, self.replay(read, receive), send)
            return
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(reply)).encode())]})
        await send({"type": "http.response.body", "body": reply})

    async def admitted(self, scope: Any, receive: Any) -> bool:
        from starlette.requests import Request

        return await self.security.validate_request(Request(scope, receive), is_post=True) is None

    async def read(self, receive: Any) -> tuple[list[Any], bytes, bool]:
        """(the messages read, the body, whether it is whole): read up to the size bound."""
        read: list[Any] = []
        size = 0
        while size <= self.limit:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                return read, b"", False
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                return read, b"".join(m.get("body", b"") for m in read), size <= self.limit
        return read, b"", False

    @staticmethod
    def replay(read: list[Any], receive: Any) -> Any:
        """`receive` with the messages already read given again first."""
        async def again() -> Any:
            return read.pop(0) if read else await receive()

        return again


def serve_http(server: Any, listen: str, token_file: str | None, allow_hosts: list[str],
               close: Any = None, no_auth: bool = False) -> int:
    """Serve `server` (the SDK's lowlevel Server) on `listen` until interrupted; the URL is the
    first stderr line (`listening on http://HOST:PORT/mcp`, the real port when 0 was asked)."""
    import anyio
    import uvicorn

    host, port = parse_listen(listen)
    token, source = token_for(token_file, no_auth, host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise ValueError(f"--http {listen}: cannot listen there ({e.strerror or e})") from None
    sock.listen(128)  # before the URL is printed: a client that reads it and connects waits in the backlog
    port = sock.getsockname()[1]
    security = security_settings(host, port, allow_hosts)
    app: Any = server.streamable_http_app(transport_security=security, event_store=memory_event_store(),
                                          retry_interval=1000, host=host)
    app = JsonRpcBodies(app, security)
    if token is not None:
        app = BearerAuth(app, token)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    shown = f"[{host}]" if ":" in host else host
    print(f"loopwright mcp serve: listening on http://{shown}:{port}/mcp"
          + (f" (bearer token required: {source})" if token else f" ({source})"), file=sys.stderr, flush=True)

    async def run() -> None:
        try:
            await uvicorn.Server(config).serve(sockets=[sock])
        finally:
            if close is not None:
                await close()

    anyio.run(run)
    return 0
