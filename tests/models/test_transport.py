"""The providers' HTTP transport (models/http.py) against loopback servers only: no SDK
needed, the headers Claude Code sends, a user's own SDK client, and bad input on the wire
(a refused connection, a TLS failure, a proxy answering 407, a body that is not JSON,
an SSE stream with an unknown event or a truncated line, a plain JSON answer to a
streamed request). Each is a clear error or a retry, never a hang; Inv holds and the
session stays resumable."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.invariant import check, holds_final
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.http import USER_AGENT, HTTPModel, _env_proxy
from loopwright.models.openai_compat import OpenAICompatModel
from loopwright.testing import Fault, ScriptedServer, strip_cache_control
from tests.helpers import held_port, text, use

pytestmark = pytest.mark.timeout(60)


CALLS: list[dict[str, Any]] = []
NOTE = lw.Tool("note", "note a value", {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]},
               lambda x: CALLS.append(x) or f"noted {x['v']}")
SCRIPT = [[text("step one"), use("t1", "note", {"v": "1"})], [text("finished")]]


def anthropic(url: str, **kw: Any) -> AnthropicModel:
    kw.setdefault("retry_base_delay", 0.01)
    kw.setdefault("api_key", "test-key")
    return AnthropicModel("claude-sonnet-4-6", base_url=url, **kw)


def openai(url: str, **kw: Any) -> OpenAICompatModel:
    kw.setdefault("retry_base_delay", 0.01)
    return OpenAICompatModel("local-model", base_url=url, **kw)


def make(provider: str, srv: ScriptedServer, **kw: Any) -> HTTPModel:
    return anthropic(srv.url, **kw) if provider == "anthropic" else openai(srv.openai_url, **kw)


def run_all(m: lw.Model, **opts: Any) -> list[Any]:
    async def go() -> list[Any]:
        return [x async for x in lw.query("go", lw.AgentOptions(model=m, tools=[NOTE], **opts))]
    return asyncio.run(go())


def retries(msgs: list[Any]) -> list[dict[str, Any]]:
    return [m.data for m in msgs if isinstance(m, lw.SystemMessage) and m.subtype == "api_retry"]


@pytest.fixture(autouse=True)
def _no_proxy_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The transport reads proxies from the environment: a developer's proxy must not
    change these results (the proxy tests set their own)."""
    for var in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
                "ANTHROPIC_BETAS", "ANTHROPIC_CUSTOM_HEADERS"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    CALLS.clear()


# --- no SDK, headers ---------------------------------------------------------------------------

@pytest.mark.e2e
def test_both_providers_run_without_any_sdk_installed() -> None:
    """`pip install loopwright` (no extras) runs Anthropic and OpenAI-compatible models."""
    with ScriptedServer([[text("hello")], [text("hello again")]]) as srv:
        code = (
            "import sys; sys.modules['anthropic'] = None; sys.modules['openai'] = None\n"
            "import loopwright as lw\n"
            "from loopwright.models.anthropic import AnthropicModel\n"
            "from loopwright.models.openai_compat import OpenAICompatModel\n"
            f"a = lw.run('hi', lw.AgentOptions(model=AnthropicModel('claude-x', base_url={srv.url!r}, api_key='k')))\n"
            f"o = lw.run('hi', lw.AgentOptions(model=OpenAICompatModel('m', base_url={srv.openai_url!r})))\n"
            "print(a.subtype, o.subtype, a.result, '|', o.result)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        kinds = [r.kind for r in srv.loop_requests]
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["success", "success", "hello", "|", "hello", "again"]
    assert kinds == ["messages", "chat"]


def test_anthropic_sends_claude_codes_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer([[text("a")], [text("b")], [text("c")]]) as srv:
        lw.run("hi", lw.AgentOptions(model=anthropic(srv.url)))
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-123")
        monkeypatch.setenv("ANTHROPIC_BETAS", "beta-one, beta-two")
        monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Team: infra\nbroken line")
        lw.run("hi", lw.AgentOptions(model=anthropic(srv.url, api_key=None, cache_ttl="1h")))
        plain, token = (r.headers for r in srv.loop_requests)
    assert plain["x-api-key"] == "test-key" and plain["anthropic-version"] == "2023-06-01"
    assert plain["user-agent"] == USER_AGENT and "authorization" not in plain and "anthropic-beta" not in plain
    assert plain["host"] == srv.url.split("://")[1].rstrip("/") and plain["accept-encoding"] == "identity"
    assert token["authorization"] == "Bearer tok-123" and "x-api-key" not in token
    assert token["anthropic-beta"] == "beta-one,beta-two,extended-cache-ttl-2025-04-11"
    assert token["x-team"] == "infra"


def test_openai_sends_a_bearer_key() -> None:
    with ScriptedServer([[text("a")]]) as srv:
        lw.run("hi", lw.AgentOptions(model=openai(srv.openai_url, api_key="sk-local")))
        [req] = srv.loop_requests
    assert req.headers["authorization"] == "Bearer sk-local" and req.headers["user-agent"] == USER_AGENT
    assert req.body["stream"] is True and req.body["stream_options"] == {"include_usage": True}


def test_no_anthropic_credentials_is_a_clear_error_without_a_request() -> None:
    with ScriptedServer([[text("a")]]) as srv:
        r = lw.run("hi", lw.AgentOptions(model=anthropic(srv.url, api_key=None)))
        n = len(srv.requests)
    assert r.subtype == "error_during_execution" and "ANTHROPIC_API_KEY" in r.errors[0] and n == 0


# --- a user's own SDK client -------------------------------------------------------------------

def test_a_users_anthropic_sdk_client_is_used() -> None:
    sdk = pytest.importorskip("anthropic")
    with ScriptedServer(SCRIPT) as srv:
        srv.inject(Fault.overloaded())
        client = sdk.AsyncAnthropic(base_url=srv.url, api_key="sdk-key", max_retries=3)
        msgs = run_all(AnthropicModel("claude-sonnet-4-6", client=client, retry_base_delay=0.01))
        reqs = srv.loop_requests
    res = msgs[-1]
    assert res.subtype == "success", res.errors
    assert CALLS == [{"v": "1"}] and holds_final(res.messages)
    # sent by the SDK (its own auth header and user-agent), not by loopwright's transport
    assert all("sdk-key" in r.headers.get("x-api-key", r.headers.get("authorization", ""))
               and r.headers["user-agent"] != USER_AGENT for r in reqs)
    # the 529 was retried by loopwright, visibly, not by the SDK behind its back
    assert len(retries(msgs)) == 1 and [r.status for r in reqs] == [529, 200, 200]


def test_a_users_openai_sdk_client_is_used() -> None:
    sdk = pytest.importorskip("openai")
    with ScriptedServer(SCRIPT) as srv:
        srv.inject(Fault.error(400, "no such model"))
        client = sdk.AsyncOpenAI(base_url=srv.openai_url, api_key="sdk-key", max_retries=3)

        async def both() -> tuple[list[Any], list[Any]]:  # one event loop: the SDK client's pool is bound to it
            runs = []
            for _ in range(2):
                m = OpenAICompatModel("m", client=client, retry_base_delay=0.01)
                runs.append([x async for x in lw.query("go", lw.AgentOptions(model=m, tools=[NOTE]))])
            return runs[0], runs[1]

        bad, good = asyncio.run(both())
        reqs = srv.loop_requests
    assert bad[-1].subtype == "error_during_execution" and "no such model" in bad[-1].errors[0]
    assert retries(bad) == []  # a 400 through the SDK: mapped like ours, not retried
    assert good[-1].subtype == "success", good[-1].errors
    assert all(r.headers["authorization"] == "Bearer sdk-key" and r.headers["user-agent"] != USER_AGENT for r in reqs)


# --- bad input on the wire ----------------------------------------------------------------------

@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_refused_connection_is_retried_then_a_clear_error(provider: str) -> None:
    with held_port() as port:  # nothing listens there, and no other worker's server can take it meanwhile
        url = f"http://127.0.0.1:{port}"
        m = anthropic(url, max_retries=2) if provider == "anthropic" else openai(url + "/v1", max_retries=2)
        msgs = run_all(m)
    res = msgs[-1]
    assert res.subtype == "error_during_execution"
    assert "after 3 attempts" in res.errors[0] and "ConnectError" in res.errors[0]
    assert len(retries(msgs)) == 2 and res.messages == [{"role": "user", "content": [text("go")]}]


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (needed to make a test certificate)")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.fixture()
def tls_front(self_signed: tuple[Path, Path]) -> Iterator[tuple[str, ScriptedServer]]:
    """An HTTPS front for a ScriptedServer: TLS with the self-signed certificate, bytes
    passed through to the plain server."""
    cert, key = self_signed
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    with ScriptedServer(SCRIPT) as srv:
        backend = ("127.0.0.1", int(srv.url.rsplit(":", 1)[1]))

        def pipe(a: socket.socket, b: socket.socket) -> None:
            try:
                while data := a.recv(65536):
                    b.sendall(data)
            except OSError:
                pass
            finally:
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        def serve() -> None:
            while True:
                try:
                    raw, _ = listener.accept()
                except OSError:
                    return
                try:
                    conn = ctx.wrap_socket(raw, server_side=True)
                except (OSError, ssl.SSLError):  # the client refused our certificate
                    raw.close()
                    continue
                up = socket.create_connection(backend)
                threading.Thread(target=pipe, args=(conn, up), daemon=True).start()
                threading.Thread(target=pipe, args=(up, conn), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        try:
            yield f"https://127.0.0.1:{listener.getsockname()[1]}", srv
        finally:
            listener.close()


@pytest.mark.e2e
def test_an_untrusted_certificate_is_a_clear_error_not_retried(tls_front: tuple[str, ScriptedServer]) -> None:
    url, srv = tls_front
    msgs = run_all(anthropic(url))
    res = msgs[-1]
    assert res.subtype == "error_during_execution"
    assert "TLS error" in res.errors[0] and "CERTIFICATE_VERIFY_FAILED" in res.errors[0]
    assert retries(msgs) == [] and srv.requests == []  # deterministic: no second try
    check(res.messages)


@pytest.mark.e2e
def test_tls_trusts_what_ssl_cert_file_names(tls_front: tuple[str, ScriptedServer], self_signed: tuple[Path, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    url, srv = tls_front
    monkeypatch.setenv("SSL_CERT_FILE", str(self_signed[0]))  # e.g. a corporate proxy's CA
    res = run_all(anthropic(url))[-1]
    assert res.subtype == "success", res.errors
    assert CALLS == [{"v": "1"}] and len(srv.loop_requests) == 2


def test_tls_also_trusts_what_node_extra_ca_certs_names(tls_front: tuple[str, ScriptedServer],
                                                        self_signed: tuple[Path, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's NODE_EXTRA_CA_CERTS (a corporate proxy's CA, set for Claude Code) is trusted besides
    the system's store (it was refused: a certificate error)."""
    url, srv = tls_front
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("NODE_EXTRA_CA_CERTS", str(self_signed[0]))
    res = run_all(anthropic(url))[-1]
    assert res.subtype == "success", res.errors
    assert CALLS == [{"v": "1"}] and len(srv.loop_requests) == 2


class _Proxy407(BaseHTTPRequestHandler):
    """A proxy that wants credentials: 407 to every request, CONNECT included. It never
    connects anywhere."""

    seen: list[str] = []

    def _deny(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        body = b"proxy authentication required"
        self.send_response(407)
        self.send_header("proxy-authenticate", 'Basic realm="test"')
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_CONNECT = do_POST = do_GET = _deny

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_proxy_answering_407_is_a_clear_error_not_retried(scheme: str, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy407)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    _Proxy407.seen.clear()
    try:
        monkeypatch.setenv(f"{scheme.upper()}_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
        # a name that never resolves: the proxy answers before anything would look it up
        msgs = run_all(anthropic(f"{scheme}://api.anthropic.invalid"))
    finally:
        proxy.shutdown()
        proxy.server_close()
    res = msgs[-1]
    assert res.subtype == "error_during_execution"
    assert "407" in res.errors[0] and "proxy" in res.errors[0].lower()
    assert retries(msgs) == [] and len(_Proxy407.seen) == 1
    assert _Proxy407.seen[0].startswith("CONNECT api.anthropic.invalid:443" if scheme == "https" else "POST http://")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_body_past_the_limit_is_a_clear_error_not_retried(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import loopwright.models.http as http

    monkeypatch.setattr(http, "MAX_BODY", 1000)  # (64 MB in use: a server cannot fill memory)
    with ScriptedServer(SCRIPT) as srv:
        srv.inject(Fault(raw_body=json.dumps({"junk": "x" * 5000}), content_type="application/json"))
        msgs = run_all(make(provider, srv))
        n = len(srv.loop_requests)
    res = msgs[-1]
    assert res.subtype == "error_during_execution" and n == 1 and retries(msgs) == []
    assert "larger than 1000 bytes" in res.errors[0]
    check(res.messages)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_200_body_that_is_not_json_is_a_clear_error_not_retried(provider: str) -> None:
    with ScriptedServer(SCRIPT) as srv:
        srv.inject(Fault(raw_body="<html><body>Sign in to the Wi-Fi</body></html>"))
        msgs = run_all(make(provider, srv))
        n = len(srv.loop_requests)
    res = msgs[-1]
    assert res.subtype == "error_during_execution" and n == 1 and retries(msgs) == []
    assert "neither an event stream nor JSON" in res.errors[0] and "Sign in to the Wi-Fi" in res.errors[0]
    check(res.messages)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_html_error_page_is_retried_by_its_status(provider: str) -> None:
    with ScriptedServer(SCRIPT) as srv:
        srv.inject(Fault(status=502, raw_body="<html>502 Bad Gateway</html>"))
        msgs = run_all(make(provider, srv))
    res = msgs[-1]
    assert res.subtype == "success", res.errors
    [ev] = retries(msgs)
    assert ev["error_status"] == 502 and "502 Bad Gateway" in ev["error"]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_plain_json_answer_to_a_streamed_request_is_understood(provider: str) -> None:
    with ScriptedServer(SCRIPT) as srv:
        srv.inject(Fault(no_stream=True, times=2))  # both calls, the one with a tool call too
        msgs = run_all(make(provider, srv))
        streamed = [r.body["stream"] for r in srv.loop_requests]
    res = msgs[-1]
    assert res.subtype == "success", res.errors
    assert retries(msgs) == [] and streamed == [True, True]
    assert CALLS == [{"v": "1"}] and res.result == "finished" and res.usage.output_tokens > 0


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_unknown_sse_event_is_tolerated(provider: str) -> None:
    with ScriptedServer(SCRIPT) as srv:
        srv.inject(Fault(unknown_event=True, times=2))
        msgs = run_all(make(provider, srv))
    assert msgs[-1].subtype == "success" and retries(msgs) == [] and CALLS == [{"v": "1"}]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_truncated_sse_line_is_retried_and_the_session_resumes(provider: str, tmp_path: Path) -> None:
    with ScriptedServer([*SCRIPT, [text("resumed")]]) as srv:
        srv.inject(Fault(truncated_line=True, times=9))
        msgs = run_all(make(provider, srv, max_retries=1), cwd=str(tmp_path), persist_session=True)
        res = msgs[-1]
        assert res.subtype == "error_during_execution" and len(retries(msgs)) == 1
        assert "malformed SSE" in res.errors[0]
        assert res.messages == [{"role": "user", "content": [text("go")]}]  # nothing partial got in
        srv.faults.clear()
        again = run_all(make(provider, srv), cwd=str(tmp_path), persist_session=True, resume=res.session_id)[-1]
        sent = srv.histories()[-1]
    assert again.subtype == "success", again.errors
    assert holds_final(again.messages) and again.session_id == res.session_id
    # the resumed call carried the first run's prompt: the failed run left a valid session
    assert strip_cache_control(sent) == [{"role": "user", "content": [text("go")]}] * 2


def test_a_stream_that_never_ends_meets_total_timeout() -> None:
    with ScriptedServer([[text("x" * 4000)]]) as srv:  # a long answer: many lines, the deadline checked on each
        m = anthropic(srv.url, total_timeout=1e-9)
        res = run_all(m)[-1]
    assert res.subtype == "error_during_execution" and "total_timeout" in res.errors[0]


def test_keep_alive_one_connection_for_a_whole_run() -> None:
    with ScriptedServer([[use(f"t{k}", "note", {"v": str(k)})] for k in range(4)] + [[text("end")]]) as srv:
        res = run_all(anthropic(srv.url))[-1]
        ports = {r.client_port for r in srv.loop_requests}
    assert res.subtype == "success" and len(ports) == 1


def test_request_body_is_the_api_json() -> None:
    req = lw.ModelRequest("sys", [], [{"role": "user", "content": [text("hi")]}], extra={"temperature": 0.2})
    body = AnthropicModel("claude-sonnet-4-6", api_key="k").build_params(req)
    assert body["temperature"] == 0.2 and "extra_body" not in body
    assert json.loads(json.dumps(body)) == body


def test_the_system_trust_store_is_loaded_only_where_tls_can_happen(monkeypatch: pytest.MonkeyPatch) -> None:
    assert anthropic("http://127.0.0.1:8080")._tls_context() is None  # nothing for a plain-HTTP local server
    remote = anthropic("https://api.example.invalid")._tls_context()
    assert remote is anthropic("https://other.example.invalid")._tls_context()  # loaded once per process
    monkeypatch.setenv("HTTPS_PROXY", "https://proxy.example.invalid:3128")
    assert anthropic("http://127.0.0.1:8080")._tls_context() is remote  # TLS to the proxy


# --- what the transport does itself on top of httpcore2 ---------------------------------------------


class _Pieces(BaseHTTPRequestHandler):
    """An event stream written in pieces cut between a \\r and its \\n and inside a UTF-8
    character, each piece flushed on its own (chunked, no Nagle delay)."""

    protocol_version = "HTTP/1.1"
    PIECES = [b"event: a\r", b"\ndata: h\xc3", b"\xa9llo\r\n\r", b"\n", b"data: 2\rdata: 3\n", b"last"]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"] or 0))
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for piece in self.PIECES:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            time.sleep(0.02)
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_stream_lines_are_split_as_httpx_splits_them_across_pieces() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pieces)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    async def lines() -> list[str]:
        m = anthropic(f"http://127.0.0.1:{server.server_address[1]}")
        response = await m._open({"model": "m"})
        try:
            return [line async for line in response.aiter_lines()]
        finally:
            await response.aclose()
            await m.aclose()

    try:
        got = asyncio.run(lines())
    finally:
        server.shutdown()
        server.server_close()
    # a \\r\\n cut in two is one line end, not two (an empty line would end an SSE event early)
    assert got == ["event: a", "data: h\u00e9llo", "", "data: 2", "data: 3", "last"]


def test_the_proxy_comes_from_the_environment_by_httpx_rules() -> None:
    p, url = "http://proxy.test:3128", "https://api.x.test/v1/messages"
    assert _env_proxy(url, {"HTTPS_PROXY": p}) == p
    assert _env_proxy(url, {"HTTP_PROXY": p}) is None  # another scheme's proxy
    assert _env_proxy(url, {"ALL_PROXY": "proxy.test:1"}) == "http://proxy.test:1"  # no scheme: http://
    assert _env_proxy(url, {"ALL_PROXY": "http://all", "HTTPS_PROXY": p}) == p
    assert _env_proxy(url, {"HTTPS_PROXY": "http://upper", "https_proxy": "http://lower"}) == "http://lower"
    assert _env_proxy("http://h.test", {"HTTP_PROXY": p, "REQUEST_METHOD": "GET"}) is None  # CGI: a header
    for no in ("*", "x.test", "api.x.test", ".x.test", "API.X.test:443", "https://api.x.test", "a.test, x.test"):
        assert _env_proxy(url, {"HTTPS_PROXY": p, "NO_PROXY": no}) is None, no
    for no in ("wx.test", "api.x.test:8443", "http://api.x.test", ".api.x.test", "x"):
        assert _env_proxy(url, {"HTTPS_PROXY": p, "no_proxy": no}) == p, no
    assert _env_proxy("http://10.1.2.3:8080", {"HTTP_PROXY": p, "NO_PROXY": "10.0.0.0/8"}) is None
    assert _env_proxy("http://10.1.2.3:8080", {"HTTP_PROXY": p, "NO_PROXY": "10.1.2.4"}) == p
    assert _env_proxy("http://[::1]:8080", {"HTTP_PROXY": p, "NO_PROXY": "::1"}) is None
    assert _env_proxy("http://[::1]:8080", {"HTTP_PROXY": p, "NO_PROXY": "[::1]:8080"}) is None


class _Trickle(BaseHTTPRequestHandler):
    """An event stream that never ends a line: one byte every 50 ms, forever (a read timeout never
    fires and no line ever completes)."""

    protocol_version = "HTTP/1.1"
    head_first = True

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"] or 0))
        if not self.head_first:  # the head itself trickles in
            for b in b"HTTP/1.1 200 OK\r\n":
                self.wfile.write(bytes([b]))
                self.wfile.flush()
                time.sleep(0.05)
        else:
            self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for _ in range(2000):
                self.wfile.write(b"1\r\nx\r\n")
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("head_first", [True, False])
def test_a_stream_that_trickles_without_a_line_end_meets_total_timeout(head_first: bool) -> None:
    _Trickle.head_first = head_first
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        t = time.monotonic()
        msgs = run_all(anthropic(f"http://127.0.0.1:{server.server_address[1]}", total_timeout=0.5, timeout=5))
        took = time.monotonic() - t
    finally:
        server.shutdown()
        server.server_close()
    res = msgs[-1]
    assert res.subtype == "error_during_execution" and "total_timeout=0.5" in res.errors[0], res.errors
    assert retries(msgs) == [] and took < 30, took  # not the trickle's 100 s (the margin: a loaded machine)
    check(res.messages)
