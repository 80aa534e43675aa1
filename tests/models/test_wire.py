"""The HTTP/1.1 client (models/wire.py) against hostile and broken servers on loopback: each is a
clear error of the transport's own (retryable or not, as models/http.py classifies it), never a
hang, and a connection that may be broken is never reused. Then keep-alive, proxies (forwarding,
CONNECT tunnels, SOCKS5) and TLS through a tunnel."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from loopwright.models import wire
from loopwright.models.retry import is_transport_error
from tests.helpers import held_port
from tests.models.test_transport import self_signed  # noqa: F401 - a fixture

pytestmark = pytest.mark.timeout(30)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


@contextlib.asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback server running `handler` per connection; yields its URL and the client ports seen."""
    ports: list[int] = []

    async def on(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ports.append(writer.get_extra_info("peername")[1])
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # (cancelled: the test ended with the connection open)
        finally:
            writer.close()

    server = await asyncio.start_server(on, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", ports
    finally:
        server.close()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            await reader.readexactly(int(line.split(b":")[1]))
    return head


def answering(*responses: bytes, close: bool = False) -> Handler:
    """Answers the requests with `responses` in turn, whichever connection each comes on;
    `close`: each connection closed after one answer."""
    todo = list(responses)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while todo:
            await read_request(reader)
            writer.write(todo.pop(0))
            await writer.drain()
            if close:
                return
        await reader.read()  # until the client goes
    return handler


def host(url: str) -> list[tuple[bytes, bytes]]:
    return [(b"host", url.split("//")[1].encode())]


async def get(pool: wire.Pool, url: str, timeouts: wire.Timeouts | None = None) -> tuple[int, bytes]:
    r = await pool.request("GET", url + "/x", host(url), timeouts=timeouts)
    return r.status_code, await r.aread()


def run(coro: Awaitable[object]) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


# --- connecting -------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "race"), [("127.0.0.1", False), ("localhost", True)])
def test_an_address_is_connected_to_directly_and_a_name_by_happy_eyeballs(name: str, race: bool,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A name may have IPv6 and IPv4 addresses, one of them dead: they race (RFC 8305). An
    address has one way to reach it: no race, which costs ~0.2 ms of the first request."""
    seen: list[dict[str, object]] = []
    real = asyncio.open_connection

    async def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs)
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(wire.asyncio, "open_connection", spy)

    async def go() -> None:
        async with serve(answering(OK)) as (url, _), wire.Pool() as pool:
            assert await get(pool, url.replace("127.0.0.1", name)) == (200, b"ok")
    run(go())
    assert [("happy_eyeballs_delay" in k) for k in seen] == [race]
    assert [wire._is_address(h) for h in ("127.0.0.1", "::1", "fe80::1%lo", "localhost", "api.anthropic.com", "1.2.3")] \
        == [True, True, True, False, False, False]


# --- keep-alive -------------------------------------------------------------------------------

def test_keep_alive_reuses_one_connection_and_a_closed_idle_one_is_not_reused() -> None:
    async def go() -> None:
        async with serve(answering(OK, OK)) as (url, ports), wire.Pool() as pool:
            assert await get(pool, url) == (200, b"ok") and await get(pool, url) == (200, b"ok")
            assert len(ports) == 1
        # the server closes the idle connection after one answer: the next request opens another
        async with serve(answering(OK, OK, close=True)) as (url, ports), wire.Pool() as pool:
            assert await get(pool, url) == (200, b"ok")
            await asyncio.sleep(0.05)  # its EOF arrives
            assert await get(pool, url) == (200, b"ok")
            assert len(ports) == 2
    run(go())


def test_connection_close_and_early_close_are_not_reused() -> None:
    async def go() -> None:
        closing = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok"
        async with serve(answering(closing, closing, close=True)) as (url, ports), wire.Pool() as pool:
            assert await get(pool, url) == (200, b"ok") and await get(pool, url) == (200, b"ok")
            assert len(ports) == 2
        big = b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n" + b"x" * 100000
        async with serve(answering(big, OK)) as (url, ports), wire.Pool() as pool:
            r = await pool.request("GET", url + "/", host(url))
            async for _ in r.aiter_bytes():
                break  # read part of the body, then give up on it
            await r.aclose()
            assert await get(pool, url) == (200, b"ok")
            assert len(ports) == 2  # the half-read connection was closed, not handed out again
    run(go())


def _numbered(head: bytes) -> bytes:
    return next(line.split(b":")[1].strip() for line in head.split(b"\r\n") if line.lower().startswith(b"x-n:"))


async def post(pool: wire.Pool, url: str, n: int) -> list[str]:
    """POST request number `n` (its x-n header) and read its streamed answer's lines."""
    r = await pool.request("POST", url + "/v1/chat/completions",
                           [*host(url), (b"x-n", b"%d" % n), (b"content-length", b"2")], b"{}")
    return [line async for line in r.aiter_lines()]


STREAMED = [b"data: 1\n\n", b"data: [DONE]\n\n"]


def test_a_connection_the_server_closes_after_a_streamed_answer_costs_no_request_twice() -> None:
    """llama-server (cpp-httplib) closes the connection after a streamed answer without saying so
    (no "connection: close": h11 calls it reusable). Its close crossed the next request, which
    went out on it and met the EOF: an error, retried by the provider after a back-off. Here the
    close is made to cross every next request (the server reads it and closes unanswered, as the
    socket's close drops it): each is sent again at once on a new connection, and every request
    is answered once."""
    answered: list[bytes] = []  # x-n of each request answered
    crossed: list[bytes] = []  # x-n of each request that arrived on a connection being closed

    async def streaming(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        answered.append(_numbered(await read_request(reader)))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                     b"keep-alive: timeout=5, max=100\r\n\r\n")
        for part in STREAMED:
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        crossed.append(_numbered(await asyncio.wait_for(read_request(reader), 20)))
        # (then closed unanswered by serve(); the client's pool closing this last idle one: EOF)

    async def go() -> None:
        async with serve(streaming) as (url, ports), wire.Pool() as pool:
            for n in range(3):
                assert await post(pool, url, n) == ["data: 1", "", "data: [DONE]", ""]
            assert len(ports) == 3
    run(go())
    assert answered == [b"0", b"1", b"2"] and crossed == [b"1", b"2"]


@pytest.mark.parametrize("case", ["a byte of the answer came", "the connection was new"])
def test_a_close_is_not_a_reason_to_send_again_once_an_answer_began_or_on_a_new_connection(case: str) -> None:
    """The re-send is for a request that met a reused connection's close before any byte of an
    answer: a server that began answering, or closed a fresh connection, may have acted on it."""
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if case == "a byte of the answer came":
            seen.append(_numbered(await read_request(reader)))
            writer.write(OK)
        seen.append(_numbered(await read_request(reader)))
        writer.write(b"HTTP/1.1 2" if case == "a byte of the answer came" else b"")
        await writer.drain()

    async def go() -> None:
        async with serve(handler) as (url, ports), wire.Pool() as pool:
            if case == "a byte of the answer came":
                r = await pool.request("POST", url + "/", [*host(url), (b"x-n", b"0"), (b"content-length", b"0")])
                assert await r.aread() == b"ok"
            with pytest.raises(wire.RemoteProtocolError):
                await post(pool, url, 1)
            assert len(ports) == 1
    run(go())
    assert seen == ([b"0", b"1"] if case == "a byte of the answer came" else [b"1"])


def test_a_cancelled_read_closes_its_connection_and_the_pool_goes_on() -> None:
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nab")
        await writer.drain()
        await asyncio.sleep(10)

    async def go() -> None:
        async with serve(slow) as (url, ports), wire.Pool() as pool:
            r = await pool.request("GET", url + "/", host(url))
            task = asyncio.ensure_future(r.aread())
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert pool._idle == {} or all(not c for c in pool._idle.values())
            r2 = await pool.request("GET", url + "/", host(url))
            assert r2.status_code == 200 and len(ports) == 2
            await r2.aclose()
    run(go())


# --- broken and hostile servers ---------------------------------------------------------------

@pytest.mark.parametrize(("reply", "kind", "says"), [
    (b"", wire.RemoteProtocolError, "without answering"),
    (b"SSH-2.0-OpenSSH_9.6\r\n", wire.RemoteProtocolError, ""),  # not HTTP at all
    (b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * 200_000, wire.RemoteProtocolError, ""),  # a head past 100 KB
    (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc", wire.RemoteProtocolError, ""),  # cut short
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab", wire.RemoteProtocolError, ""),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok", wire.RemoteProtocolError, ""),
    (b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n", wire.RemoteProtocolError, ""),
])
def test_a_broken_answer_is_a_protocol_error_and_a_transport_error(reply: bytes, kind: type[Exception],
                                                                 says: str) -> None:
    async def go() -> BaseException:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await read_request(reader)
            writer.write(reply)
            await writer.drain()
            writer.close()

        async with serve(handler) as (url, ports), wire.Pool() as pool:
            with pytest.raises(wire.HTTPError) as e:
                await get(pool, url)
            assert not any(pool._idle.values())
            return e.value
    err = run(go())
    assert isinstance(err, kind) and says in str(err)
    assert isinstance(err, BaseException) and is_transport_error(err)  # retried by the providers


def test_a_silent_server_meets_the_read_timeout_and_a_slow_connect_the_connect_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(10)

    async def never(host: str, port: int, timeout: float | None) -> wire.Streams:
        await asyncio.sleep(10)
        raise AssertionError("unreachable")

    async def go() -> None:
        async with serve(silent) as (url, _), wire.Pool() as pool:
            t = asyncio.get_running_loop().time()
            with pytest.raises(wire.ReadTimeout):
                await get(pool, url, wire.Timeouts(read=0.2))
            assert asyncio.get_running_loop().time() - t < 8  # the read timeout, not the server's 10 s (margin: load)
        async with wire.Pool(connect=never) as pool:
            with pytest.raises(wire.ConnectTimeout):
                await get(pool, "http://example.invalid", wire.Timeouts(connect=0.2))
    run(go())


def test_refused_bad_urls_and_bad_headers_are_clear_errors() -> None:
    async def go() -> None:
        async with wire.Pool() as pool:
            with held_port() as port, pytest.raises(wire.ConnectError, match="cannot connect"):
                await get(pool, f"http://127.0.0.1:{port}")  # nothing listens there (nor can, meanwhile)
            for url in ("ftp://x/", "http:///nohost", "http://x:99999/", "http://x:port/"):
                with pytest.raises(wire.UnsupportedProtocol):
                    await pool.request("GET", url, [(b"host", b"x")])
        async with serve(answering(OK)) as (url, ports), wire.Pool() as pool:
            with pytest.raises(wire.LocalProtocolError):  # header injection is refused, not sent
                await pool.request("GET", url + "/", [*host(url), (b"x-a", b"1\r\nx-injected: 2")])
        async with serve(answering(OK)) as (url, ports), wire.Pool() as pool:  # no TLS context: TLS fails closed
            with pytest.raises(wire.ConnectError, match="no TLS context"):
                await get(pool, url.replace("http://", "https://"))
    run(go())


def test_informational_answers_are_skipped_and_a_close_delimited_body_is_read_whole() -> None:
    async def go() -> None:
        reply = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
        async with serve(answering(reply)) as (url, _), wire.Pool() as pool:
            assert await get(pool, url) == (200, b"ok")
        async with serve(answering(b"HTTP/1.1 200 OK\r\n\r\nuntil close", close=True)) as (url, _), \
                wire.Pool() as pool:
            assert await get(pool, url) == (200, b"until close")
    run(go())


def test_lines_split_at_every_line_end_across_chunks() -> None:
    async def chunks(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for piece in (b"a\r", b"\nb\xc3", b"\xa9\rc\n\n", b"last"):
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")
        await reader.read()

    async def go() -> list[str]:
        async with serve(chunks) as (url, _), wire.Pool() as pool:
            r = await pool.request("GET", url + "/", host(url))
            return [line async for line in r.aiter_lines()]
    assert run(go()) == ["a", "b\u00e9", "c", "", "last"]


# --- proxies ----------------------------------------------------------------------------------

async def pipe(a: asyncio.StreamReader, b: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await a.read(65536):
            b.write(data)
            await b.drain()
    b.close()


def tunnel_proxy(seen: list[bytes]) -> Handler:
    """An HTTP proxy that forwards plain requests (absolute-form) and tunnels CONNECTs."""
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        method, target, _ = head.split(b"\r\n")[0].split(b" ")
        if method == b"CONNECT":
            h, _, p = target.rpartition(b":")
            up_r, up_w = await asyncio.open_connection(h.decode(), int(p))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            authority = target.split(b"/")[2]
            h, _, p = authority.rpartition(b":")
            up_r, up_w = await asyncio.open_connection(h.decode(), int(p))
            path = b"/" + b"/".join(target.split(b"/")[3:])
            up_w.write(head.replace(target, path, 1))
        await writer.drain()
        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))
    return handler


def test_a_plain_url_goes_to_a_forwarding_proxy_whole_with_its_credentials() -> None:
    async def go() -> list[bytes]:
        seen: list[bytes] = []
        async with serve(answering(OK)) as (url, _), serve(tunnel_proxy(seen)) as (proxy, _):
            auth_proxy = proxy.replace("http://", "http://us%40er:p%3Ass@")
            async with wire.Pool(proxy=auth_proxy) as pool:
                assert await get(pool, url) == (200, b"ok")
        return seen
    (head,) = run(go())  # type: ignore[misc]
    assert head.startswith(b"GET http://127.0.0.1:") and b"/x HTTP/1.1" in head.split(b"\r\n")[0]
    assert b"proxy-authorization: Basic " + base64.b64encode(b"us@er:p:ss") in head


@pytest.mark.e2e  # openssl makes the certificate
def test_tls_through_a_connect_tunnel_checks_the_hosts_certificate(self_signed: tuple[Path, Path]) -> None:  # noqa: F811
    cert, key = self_signed
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)

    async def go() -> tuple[list[bytes], object]:
        seen: list[bytes] = []
        server = await asyncio.start_server(answering(OK), "127.0.0.1", 0, ssl=server_ctx)
        url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            async with serve(tunnel_proxy(seen)) as (proxy, _):
                async with wire.Pool(proxy=proxy, ssl_context=ssl.create_default_context(cafile=str(cert))) as pool:
                    got = await get(pool, url)
                async with wire.Pool(proxy=proxy, ssl_context=ssl.create_default_context()) as pool:
                    with pytest.raises(wire.ConnectError) as e:  # a certificate nothing trusts: refused
                        await get(pool, url)
                    assert isinstance(e.value.__cause__, ssl.SSLCertVerificationError)
        finally:
            server.close()
        return seen, got
    seen, got = run(go())  # type: ignore[misc]
    assert got == (200, b"ok")
    assert [h.split(b"\r\n")[0].split(b" ")[0] for h in seen] == [b"CONNECT", b"CONNECT"]


def test_a_refused_tunnel_is_a_proxy_error_with_its_status() -> None:
    async def go() -> str:
        refuse = answering(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
        async with serve(refuse) as (proxy, _), wire.Pool(proxy=proxy, ssl_context=ssl.create_default_context()) as p:
            with pytest.raises(wire.ProxyError) as e:
                await get(p, "https://api.example.invalid")
            return str(e.value)
    said = run(go())
    assert "403 Forbidden" in str(said) and "api.example.invalid:443" in str(said)


def socks5_proxy(seen: list[tuple[str, int, bytes]], credentials: tuple[bytes, bytes] | None = None) -> Handler:
    """A SOCKS5 proxy (RFC 1928, RFC 1929 auth) that connects to what it is asked."""
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _, n = await reader.readexactly(2)
        methods = await reader.readexactly(n)
        want = 2 if credentials else 0
        if want not in methods:
            writer.write(b"\x05\xff")
            return
        writer.write(bytes([5, want]))
        user = b""
        if credentials:
            _, ulen = await reader.readexactly(2)
            user = await reader.readexactly(ulen)
            (plen,) = await reader.readexactly(1)
            password = await reader.readexactly(plen)
            ok = (user, password) == credentials
            writer.write(b"\x01\x00" if ok else b"\x01\x01")
            if not ok:
                return
        _, cmd, _, atyp = await reader.readexactly(4)
        if atyp == 3:
            (ln,) = await reader.readexactly(1)
            name = (await reader.readexactly(ln)).decode()
        else:
            name = ".".join(str(b) for b in await reader.readexactly(4))
        port = int.from_bytes(await reader.readexactly(2), "big")
        seen.append((name, port, user))
        up_r, up_w = await asyncio.open_connection("127.0.0.1" if name == "example.test" else name, port)
        writer.write(b"\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x00")
        await writer.drain()
        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))
    return handler


def test_socks5_with_and_without_credentials_and_the_proxy_resolves_the_name() -> None:
    pytest.importorskip("socksio")

    async def go() -> list[tuple[str, int, bytes]]:
        seen: list[tuple[str, int, bytes]] = []
        async with serve(answering(OK, OK)) as (url, _):
            port = int(url.rsplit(":", 1)[1])
            async with serve(socks5_proxy(seen)) as (proxy, _), \
                    wire.Pool(proxy=proxy.replace("http", "socks5")) as pool:
                assert await get(pool, f"http://example.test:{port}") == (200, b"ok")
            async with serve(socks5_proxy(seen, (b"me", b"pw"))) as (proxy, _):
                async with wire.Pool(proxy=proxy.replace("http://", "socks5h://me:pw@")) as pool:
                    assert await get(pool, f"http://example.test:{port}") == (200, b"ok")
                async with wire.Pool(proxy=proxy.replace("http://", "socks5://me:wrong@")) as pool:
                    with pytest.raises(wire.ProxyError, match="refused the credentials"):
                        await get(pool, f"http://example.test:{port}")
        return seen
    assert [s[::2] for s in run(go())] == [("example.test", b""), ("example.test", b"me")]  # type: ignore[attr-defined]


def test_socks_without_socksio_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "socksio", None)

    async def go() -> None:
        async with serve(answering()) as (proxy, _), wire.Pool(proxy=proxy.replace("http", "socks5")) as pool:
            with pytest.raises(wire.ProxyError, match="pip install socksio"):
                await get(pool, "http://example.test")
    run(go())


def test_a_proxy_of_an_unknown_kind_is_refused() -> None:
    with pytest.raises(wire.UnsupportedProtocol, match="not http, https or socks5"):
        wire.Pool(proxy="ftp://proxy.test:21")


def test_a_body_or_a_line_past_the_limit_is_refused_not_held() -> None:
    async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        with contextlib.suppress(ConnectionError):
            for _ in range(4096):  # up to 256 MB, never a newline: the reader must stop first
                writer.write(b"10000\r\n" + b"x" * 0x10000 + b"\r\n")
                await writer.drain()

    async def go() -> tuple[BaseException, BaseException]:
        async with serve(endless) as (url, _), wire.Pool() as pool:
            r = await pool.request("GET", url + "/", host(url))
            with pytest.raises(wire.ResponseTooLarge) as line:
                async for _ in r.aiter_lines(max_line=1_000_000):
                    pass
            r = await pool.request("GET", url + "/", host(url))
            with pytest.raises(wire.ResponseTooLarge) as body:
                await r.aread(limit=2_000_000)
            return line.value, body.value
    line, body = run(go())  # type: ignore[misc]
    assert "longer than 1000000" in str(line) and "larger than 2000000" in str(body)


def test_repeated_headers_are_joined_as_httpx_joins_them() -> None:
    async def go() -> dict[str, str]:
        reply = b"HTTP/1.1 200 OK\r\nx-a: 1\r\nX-A: 2\r\nx-b: 3\r\ncontent-length: 0\r\n\r\n"
        async with serve(answering(reply)) as (url, _), wire.Pool() as pool:
            r = await pool.request("GET", url + "/", host(url))
            await r.aread()
            return r.headers
    got = run(go())
    assert got == {"x-a": "1, 2", "x-b": "3", "content-length": "0"}


@pytest.mark.e2e  # openssl makes the certificate
def test_tls_to_an_https_proxy_and_through_it_to_the_host(self_signed: tuple[Path, Path]) -> None:  # noqa: F811
    cert, key = self_signed
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)

    async def go() -> tuple[list[bytes], object, object]:
        seen: list[bytes] = []
        host = await asyncio.start_server(answering(OK), "127.0.0.1", 0, ssl=server_ctx)
        proxy = await asyncio.start_server(tunnel_proxy(seen), "127.0.0.1", 0, ssl=server_ctx)
        url = f"https://127.0.0.1:{host.sockets[0].getsockname()[1]}"
        try:
            trust = ssl.create_default_context(cafile=str(cert))
            async with serve(answering(OK)) as (plain_url, _), \
                    wire.Pool(proxy=f"https://127.0.0.1:{proxy.sockets[0].getsockname()[1]}", ssl_context=trust) as pool:
                tunnelled = await get(pool, url)  # TLS inside the proxy's TLS
                plain = await get(pool, plain_url)  # a plain URL, sent whole to the proxy over TLS
        finally:
            host.close()
            proxy.close()
        return seen, tunnelled, plain
    seen, tunnelled, plain = run(go())  # type: ignore[misc]
    assert tunnelled == plain == (200, b"ok")
    assert seen[0].startswith(b"CONNECT 127.0.0.1:") and seen[1].startswith(b"GET http://127.0.0.1:")


# --- idle time --------------------------------------------------------------------------------

def test_a_read_that_waits_on_the_server_runs_the_work_pending_for_an_idle_moment_once_unless_forgotten() -> None:
    from loopwright import idle

    done: list[str] = []

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            await asyncio.sleep(idle.IDLE_S * 2)  # the model thinks
            writer.write(OK)
            await writer.drain()

    async def main() -> None:
        async with serve(answering(OK, OK)) as (quick, _), serve(slow) as (thinking, _), wire.Pool() as pool:
            idle.when_idle(lambda: done.append("work"))
            assert await get(pool, quick) == (200, b"ok") and done == [] and idle.pending()  # a quick answer
            assert await get(pool, thinking) == (200, b"ok") and done == ["work"] and not idle.pending()
            assert await get(pool, thinking) == (200, b"ok") and done == ["work"]  # once
            def late() -> None:
                done.append("late")

            idle.when_idle(late)
            idle.forget(late)  # its moment passed (the model call it was for ended)
            assert not idle.pending() and await get(pool, thinking) == (200, b"ok") and done == ["work"]

    run(main())
