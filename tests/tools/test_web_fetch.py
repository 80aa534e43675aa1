"""WebFetch against a loopback web site: real HTML pages, JSON, text, a PDF made with fpdf2,
redirects (same and cross host, loops), and a hostile server's tricks (a gzip bomb, an endless
body, a slow body, huge headers, redirects to 127.0.0.1 and 169.254.169.254, DNS rebinding).
The tests allow their own server explicitly (webFetch.allowPrivateNetwork: ["127.0.0.1"]);
nothing is ever sent beyond loopback (the guard refuses before connecting)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import ipaddress
import json
import os
import subprocess
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.gate import Permissions
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.openai_compat import OpenAICompatModel
from loopwright.testing import ScriptedServer
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import default_tools
from loopwright.tools.web import make_web_fetch_tool
from loopwright.tools.web.fetcher import (
    FetchError,
    Limits,
    Page,
    Redirect,
    check_url,
    fetch,
    same_host,
)
from loopwright.tools.web.guard import AddressPolicy, AddressRefused
from tests.helpers import TESTS, interrupted, result_text, text, use

# HTML and PDF pages are converted in a worker process (tools/web/worker.py): these tests start it
pytestmark = pytest.mark.e2e

LOOPBACK = {"webFetch": {"allowPrivateNetwork": ["127.0.0.1"]}}

PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>Widget API</title>
<style>body { color: red }</style><script>var secret = "not content";</script></head>
<body><nav><a href="/">Home</a></nav>
<h1>Widget API</h1>
<p>Call <code>widget.spin(speed=3)</code> to spin. See <a href="/docs/spin">the spin docs</a>.</p>
<h2>Parameters</h2>
<table><tr><th>name</th><th>type</th></tr><tr><td>speed</td><td>int</td></tr></table>
<ul><li>fast</li><li>safe</li></ul>
<pre><code>widget.spin(speed=3)</code></pre>
</body></html>"""


def _pdf() -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    for line in ("Quarterly report: revenue grew 12 percent.", "Page two: costs fell."):
        pdf.add_page()
        pdf.set_font("Helvetica", size=14)
        pdf.cell(text=line)
    return bytes(pdf.output())


def bomb_pdf(inflated: int = 60 << 20) -> bytes:
    """~90 KB: one page whose content stream inflates to `inflated` bytes of empty text objects
    (pypdf spends seconds of CPU and hundreds of MB on it)."""
    stream = zlib.compress(b"BT ET " * (inflated // 6), 9)
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


class _Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    pdf = b""
    bomb = b""
    hits: list[str] = []
    barrier = threading.Barrier(2, timeout=30)
    graph: dict[int, Any] = {}

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, where: str, status: int = 302) -> None:
        self.send_response(status)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")  # the next hop opens a new connection (and is checked)
        self.end_headers()
        self.close_connection = True

    def do_GET(self) -> None:  # noqa: C901 - one route per branch
        path = self.path
        self.hits.append(path)
        port = self.server.server_address[1]
        if path == "/page.html":
            self._send(200, PAGE)
        elif path == "/data.json":
            self._send(200, b'{"name":"widget","versions":[1,2,3]}', "application/json")
        elif path == "/notes.txt":
            self._send(200, "plain notes: caf\u00e9\n".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif path == "/report.pdf":
            self._send(200, self.pdf, "application/pdf")
        elif path == "/bomb.pdf":
            self._send(200, self.bomb, "application/pdf")
        elif path == "/long.txt":  # 250,000 characters: "0000000 0000008 ..." (8 per number)
            self._send(200, "".join(f"{i:07d} " for i in range(0, 250_000, 8)).encode(), "text/plain")
        elif path == "/blob":
            self._send(200, bytes(range(256)) * 8, "application/octet-stream")
        elif path == "/missing":
            self._send(404, b"<h1>no such page</h1>")
        elif path == "/moved":
            self._redirect("/page.html", 301)
        elif path == "/to-other-host":
            self._redirect(f"http://localhost:{port}/page.html")
        elif path == "/to-metadata":
            self._redirect("http://169.254.169.254/latest/meta-data/iam/")
        elif path == "/to-loopback":
            self._redirect("http://127.0.0.1:1/admin")
        elif path == "/loop-a":
            self._redirect("/loop-b")
        elif path == "/loop-b":
            self._redirect("/loop-a")
        elif path.startswith("/chain/"):
            self._redirect(f"/chain/{int(path.rsplit('/', 1)[1]) + 1}")
        elif path == "/gzip":
            self._send(200, gzip.compress(PAGE), content_encoding="gzip")
        elif path == "/gzip-bomb":  # 64 MB of zeros in about 64 KB
            c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            zero = bytes(1 << 20)
            body = b"".join(c.compress(zero) for _ in range(64)) + c.flush()
            self._send(200, body, "text/plain", content_encoding="gzip")
        elif path == "/declared-huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(50 * 1024 * 1024))
            self.end_headers()
            self.wfile.write(b"x" * 1000)
        elif path in ("/endless", "/slow"):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"y" * (65536 if path == "/endless" else 1)
            try:
                for _ in range(100_000):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                    if path == "/slow":
                        time.sleep(0.1)
            except OSError:  # the client went away: what it should do
                pass
            self.close_connection = True
        elif path.startswith("/g/"):  # a node of the redirect graph a property test sets
            target = self.graph.get(int(path[3:]), "page")
            if target == "page":
                self._send(200, f"node {path}".encode(), "text/plain")
            elif target == "away":
                self._redirect(f"http://localhost:{port}/elsewhere")
            else:
                self._redirect(f"/g/{target}", 307)
        elif path.startswith("/together/"):  # answers only when both calls are in at once
            try:
                self.barrier.wait()
                self._send(200, f"together {path}".encode(), "text/plain")
            except threading.BrokenBarrierError:
                self._send(500, b"alone", "text/plain")
        elif path == "/huge-headers":
            self.send_response(200)
            for i in range(400):
                self.send_header(f"X-Junk-{i}", "z" * 1000)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        else:
            self._send(404, b"not found")


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-answer (the caps at work) is not an error here


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    _Site.pdf = _pdf()
    # made once, here: compressing its 60 MB in the handler would burn this process's CPU (and
    # memory) while test_a_conversion_given_up_stops_its_work measures what the give-up left behind
    _Site.bomb = bomb_pdf()
    httpd = _Quiet(("127.0.0.1", 0), _Site)
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def web_fetch(url: str, settings: dict[str, Any] | None = None, prompt: str = "what does it say?",
              **options: Any) -> dict[str, Any]:
    """One WebFetch call through the loop (a scripted model: the content comes back as fetched)."""
    turns = [{"content": [use("f1", "WebFetch", url=url, prompt=prompt)]}, {"content": [text("done")]}]
    options.setdefault("allowed_tools", ["WebFetch"])
    r = lw.run("fetch it", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[make_web_fetch_tool()],
                                           settings=json.dumps(settings if settings is not None else LOOPBACK),
                                           **options))
    assert r.subtype == "success", r.errors
    block: dict[str, Any] = r.messages[2]["content"][0]
    return block


def ok(url: str, settings: dict[str, Any] | None = None) -> str:
    b = web_fetch(url, settings)
    assert not b.get("is_error"), result_text(b)
    return result_text(b)


def err(url: str, settings: dict[str, Any] | None = None) -> str:
    b = web_fetch(url, settings)
    assert b.get("is_error"), result_text(b)
    return result_text(b)


# --- content ---------------------------------------------------------------------------------

def test_html_becomes_markdown_without_scripts_or_styles(site: str) -> None:
    out = ok(site + "/page.html")
    assert "# Widget API" in out and "## Parameters" in out
    assert "[the spin docs](/docs/spin)" in out
    assert "| speed | int |" in out.replace("  ", " ")
    assert "```" in out and "widget.spin(speed=3)" in out
    assert "secret" not in out and "color: red" not in out
    assert "no model is configured to answer the prompt" in out  # a scripted run: the content itself


def test_its_structured_output_is_claude_codes_web_fetch_output(site: str) -> None:
    """The details beside the result (Claude Code's tool_use_result of a WebFetch: WebFetchOutput)."""
    import asyncio

    from loopwright.messages import UserMessage

    turns = [{"content": [use("f1", "WebFetch", url=site + "/page.html", prompt="what?")]}, {"content": [text("done")]}]
    opts = lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[make_web_fetch_tool()], allowed_tools=["WebFetch"],
                           settings=json.dumps(LOOPBACK))

    async def go() -> list[Any]:
        return [m async for m in lw.query("fetch it", opts)]

    (turn,) = [m for m in asyncio.run(go()) if isinstance(m, UserMessage)]
    (r,) = turn.tool_results
    d = r.details
    assert (d["code"], d["codeText"], d["url"], d["result"]) == (200, "OK", site + "/page.html", r.content)
    assert d["bytes"] > 0 and isinstance(d["durationMs"], int)


def test_json_text_and_pdf_are_read(site: str) -> None:
    assert '"versions": [\n    1,' in ok(site + "/data.json")
    assert "plain notes: caf\u00e9" in ok(site + "/notes.txt")  # the charset of the content type
    pdf = ok(site + "/report.pdf")
    assert "--- page 1 ---" in pdf and "revenue grew 12 percent" in pdf
    assert "--- page 2 ---" in pdf and "costs fell" in pdf


def test_gzip_is_decoded(site: str) -> None:
    assert "# Widget API" in ok(site + "/gzip")


def test_binary_and_http_errors_are_is_error_results(site: str) -> None:
    assert "application/octet-stream" in err(site + "/blob")
    e = err(site + "/missing")
    assert "HTTP 404" in e and "no such page" in e
    assert "only http:// and https://" in err("file:///etc/passwd")
    assert "only http:// and https://" in err("ftp://127.0.0.1/x")


# --- redirects -------------------------------------------------------------------------------

def test_same_host_redirect_is_followed(site: str) -> None:
    assert "# Widget API" in ok(site + "/moved")


def test_cross_host_redirect_is_reported_not_followed(site: str) -> None:
    _Site.hits.clear()
    out = ok(site + "/to-other-host")
    port = site.rsplit(":", 1)[1]
    assert "REDIRECT DETECTED" in out and f"http://localhost:{port}/page.html" in out
    assert "/page.html" not in _Site.hits  # not fetched: the model decides (and the gate sees it)


def test_redirects_to_metadata_and_loopback_are_reported_and_refused_when_fetched(site: str) -> None:
    out = ok(site + "/to-metadata")
    assert "REDIRECT DETECTED" in out and "169.254.169.254" in out
    refused = err("http://169.254.169.254/latest/meta-data/iam/")
    assert "link-local" in refused and "allowPrivateNetwork" in refused
    assert "REDIRECT DETECTED" in ok(site + "/to-loopback")  # another port: another origin
    assert "loopback" in err("http://127.0.0.1:1/admin", settings={})  # no setting: loopback is refused


def test_redirect_loops_and_chains_end(site: str) -> None:
    assert "redirect loop" in err(site + "/loop-a")
    assert "more than 10 redirects" in err(site + "/chain/0")
    assert "more than 2 redirects" in err(site + "/chain/0", {**LOOPBACK, "webFetch": {
        **LOOPBACK["webFetch"], "maxRedirects": 2}})


def test_same_host_rule() -> None:
    assert same_host("http://a.com/x", "https://a.com/y")
    assert same_host("https://www.a.com/x", "https://a.com/y")
    assert not same_host("https://a.com/x", "http://a.com/y")  # no downgrade
    assert not same_host("https://a.com/x", "https://b.com/y")
    assert not same_host("https://a.com/x", "https://a.com:8443/y")
    assert not same_host("https://a.com/x", "https://u:p@a.com/y")


# --- a hostile server ------------------------------------------------------------------------

def cap(n: int) -> dict[str, Any]:
    # a generous time limit: what these tests judge is the byte cap (its own message), and on a loaded
    # machine the server's side alone (compressing the 64 MB bomb in this process) took over 5 s
    return {"webFetch": {**LOOPBACK["webFetch"], "maxBytes": n, "timeout": 60}}


def test_gzip_bomb_is_stopped_at_the_cap(site: str) -> None:
    out = ok(site + "/gzip-bomb", cap(1 << 20))
    assert f"the body was cut at {1 << 20} bytes" in out


def test_endless_body_is_cut_at_the_cap(site: str) -> None:
    t0 = time.monotonic()
    out = ok(site + "/endless", cap(1 << 20))
    assert "the body was cut at" in out and time.monotonic() - t0 < 30  # (at the cap, not the time limit)


def test_declared_huge_body_is_refused_before_reading(site: str) -> None:
    assert f"at most {1 << 20} are fetched" in err(site + "/declared-huge", cap(1 << 20))


def test_slow_body_meets_the_time_cap(site: str) -> None:
    t0 = time.monotonic()
    e = err(site + "/slow", {"webFetch": {**LOOPBACK["webFetch"], "timeout": 1}})
    assert "longer than 1 s" in e and time.monotonic() - t0 < 30  # not the body's 10,000 s (margin: a loaded machine)


def _children() -> dict[int, float]:
    """This process's child processes: pid -> CPU seconds used so far (from /proc)."""
    out: dict[int, float] = {}
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            with contextlib.suppress(OSError, IndexError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                out[int(pid)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def _rss_mb() -> float:
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_a_conversion_given_up_stops_its_work(site: str) -> None:
    """Issue 40, item 10: a PDF whose conversion outlasts the time limit is given up, and its work
    stops with it: no process left converting, no CPU burnt afterwards, no memory held."""
    import resource

    before_children = set(_children())
    threads = threading.active_count()
    rss = _rss_mb()
    t0 = time.monotonic()
    e = err(site + "/bomb.pdf", {"webFetch": {**LOOPBACK["webFetch"], "timeout": 1}})
    assert "took longer than 1 s and was given up" in e and time.monotonic() - t0 < 30  # (margin: a loaded machine)
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    kids0 = _children()
    time.sleep(1.0)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    kids1 = _children()
    burnt = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    assert burnt < 0.3, f"{burnt:.2f} s of CPU in the second after the give-up"
    assert set(kids1) <= before_children, f"a conversion process is still alive: {set(kids1) - before_children}"
    assert all(kids1[p] - kids0.get(p, 0.0) < 0.3 for p in kids1), "a child is still converting"
    assert threading.active_count() <= threads + 1  # (at most one new idle thread of the tool runner)
    assert _rss_mb() - rss < 100, f"{_rss_mb() - rss:.0f} MB more held after the give-up"
    assert "revenue grew 12 percent" in ok(site + "/report.pdf")  # and the next PDF is read


def test_huge_headers_fail_cleanly(site: str) -> None:
    assert "broken HTTP response" in err(site + "/huge-headers")


def test_dns_rebinding_is_checked_on_every_connection(site: str) -> None:
    """A name that resolves to an allowed address first and to the metadata address on the
    next hop: the second connection is refused, and connections go to the checked address."""
    port = int(site.rsplit(":", 1)[1])
    answers = [["127.0.0.1"], ["169.254.169.254"]]
    asked: list[str] = []

    async def resolver(host: str, p: int) -> list[str]:
        asked.append(host)
        return answers[min(len(asked), 2) - 1]

    policy = AddressPolicy(allowed=(ipaddress.ip_network("127.0.0.1/32"),))

    async def go() -> Page | Redirect:
        return await fetch(f"http://rebind.test:{port}/moved", policy, Limits(timeout=5), upgrade=False,
                           resolver=resolver)

    with pytest.raises(AddressRefused, match="169.254.169.254"):
        asyncio.run(go())
    assert asked == ["rebind.test", "rebind.test"]  # the redirect hop was resolved and checked again


def test_a_name_with_any_private_address_is_refused() -> None:
    policy = AddressPolicy()
    with pytest.raises(AddressRefused, match="private"):
        policy.check("mixed.test", ["93.184.216.34", "10.0.0.5"])
    with pytest.raises(AddressRefused, match="loopback"):
        policy.check("mapped.test", ["::ffff:127.0.0.1"])
    policy.check("public.test", ["93.184.216.34", "2606:2800:220:1::"])  # no exception: public


def test_a_workspace_setting_cannot_allow_private_addresses(tmp_path: Any, site: str) -> None:
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps(LOOPBACK))
    turns = [{"content": [use("f1", "WebFetch", url=site + "/page.html", prompt="p")]}, {"content": [text("done")]}]
    r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=lw.ScriptedModel(turns), tools=[make_web_fetch_tool()], cwd=str(tmp_path),
                                    setting_sources=["project"]))
    block = r.messages[2]["content"][0]
    assert block["is_error"] and "loopback" in result_text(block)


# --- https --------------------------------------------------------------------------------------

def _tls_site(tmp_path: Any) -> tuple[str, Any]:
    """A loopback HTTPS server with a self-signed certificate for localhost / 127.0.0.1."""
    import datetime
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    httpd = _Quiet(("127.0.0.1", 0), _Site)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_file, key_file)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    return str(cert_file), httpd


def test_http_is_upgraded_to_https_where_the_host_speaks_it(tmp_path: Any, monkeypatch: Any, site: str) -> None:
    cert, httpd = _tls_site(tmp_path)
    try:
        monkeypatch.setenv("SSL_CERT_FILE", cert)
        port = httpd.server_address[1]
        # The TLS server speaks only TLS: a plain http:// fetch could not have read this page.
        out = ok(f"http://127.0.0.1:{port}/page.html")
        assert f"https://127.0.0.1:{port}/page.html" in out and "# Widget API" in out
    finally:
        httpd.shutdown()
        httpd.server_close()
    out = ok(site + "/page.html")  # a host without TLS on its port: fetched over http as asked
    assert f"{site}/page.html (markdown" in out


# --- the cache -----------------------------------------------------------------------------

def test_second_fetch_of_a_url_comes_from_the_cache(site: str) -> None:
    tool = make_web_fetch_tool()
    turns = [{"content": [use("f1", "WebFetch", url=site + "/data.json", prompt="a")]},
             {"content": [use("f2", "WebFetch", url=site + "/data.json", prompt="b")]}, {"content": [text("done")]}]
    _Site.hits.clear()
    r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=lw.ScriptedModel(turns), tools=[tool], settings=json.dumps(LOOPBACK)))
    assert r.subtype == "success"
    assert result_text(r.messages[2]["content"][0]) == result_text(r.messages[4]["content"][0])
    assert _Site.hits.count("/data.json") == 1  # https first (refused by the server's port), then one GET


def test_the_cache_time_comes_from_claude_codes_variable(site: str) -> None:
    """CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS=0 in the run's env (as a settings file's env gives it): the
    second fetch of a URL goes to the site again (the variable was refused: the page came from the cache)."""
    tool = make_web_fetch_tool()
    turns = [{"content": [use("f1", "WebFetch", url=site + "/data.json", prompt="a")]},
             {"content": [use("f2", "WebFetch", url=site + "/data.json", prompt="b")]}, {"content": [text("done")]}]
    _Site.hits.clear()
    r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=lw.ScriptedModel(turns), tools=[tool],
                                    settings=json.dumps(LOOPBACK), env={"CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS": "0"}))
    assert r.subtype == "success"
    assert _Site.hits.count("/data.json") == 2


# --- the gate --------------------------------------------------------------------------------

def test_webfetch_is_read_only_but_gated_by_domain_rules() -> None:
    tool = next(t for t in default_tools() if t.name == "WebFetch")
    assert tool.read_only  # runs side by side with other read-only calls (Prop 6.2)
    p = Permissions("default", allowed_tools=["WebFetch(domain:docs.example.com)"])
    assert p.evaluate("WebFetch", {"url": "https://docs.example.com/a", "prompt": "p"}, True).kind == "allow"
    assert p.evaluate("WebFetch", {"url": "https://evil.example.net/a", "prompt": "p"}, True).kind == "ask"
    assert p.evaluate("WebSearch", {"query": "q"}, True).kind == "ask"
    assert p.evaluate("Read", {"file_path": "x"}, True).kind == "allow"  # unlike a read of the workspace
    assert p.suggest_rules("WebFetch", {"url": "https://evil.example.net/a"}) == ["WebFetch(domain:evil.example.net)"]
    d = Permissions("default", disallowed_tools=["WebFetch(domain:evil.example.net)"], allowed_tools=["WebFetch"])
    assert d.evaluate("WebFetch", {"url": "https://evil.example.net/a", "prompt": "p"}, True).kind == "deny"
    assert Permissions("plan").evaluate("WebFetch", {"url": "https://a.com", "prompt": "p"}, True).kind == "ask"


def test_headless_run_without_a_rule_refuses_and_says_which_rule(site: str) -> None:
    b = web_fetch(site + "/page.html", permission_mode="dontAsk", allowed_tools=[])
    assert b["is_error"] and "allowed_tools=['WebFetch(domain:127.0.0.1)']" in result_text(b)
    b = web_fetch(site + "/page.html", permission_mode="dontAsk", allowed_tools=["WebFetch(domain:127.0.0.1)"])
    assert not b.get("is_error") and "# Widget API" in result_text(b)


# --- the prompt, answered by a model and charged to the run -----------------------------------

def test_prompt_is_answered_by_the_model_and_charged_to_the_budget(site: str) -> None:
    turns = [[use("f1", "WebFetch", url=site + "/page.html", prompt="What does spin take?")], [text("done")]]
    with ScriptedServer(turns, side_reply="spin takes speed, an int") as srv:
        model = AnthropicModel("claude-haiku-4-5", base_url=srv.url, api_key="test")
        tools = [make_web_fetch_tool()]
        r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=model, tools=tools, settings=json.dumps(LOOPBACK)))
        side = [q for q in srv.requests if q.kind == "messages" and not q.loop_call]
    assert r.subtype == "success"
    assert result_text(r.messages[2]["content"][0]) == "spin takes speed, an int"
    assert len(side) == 1
    asked = json.dumps(side[0].body["messages"])
    assert "What does spin take?" in asked and "# Widget API" in asked and "secret" not in asked
    assert len(r.call_usage) == 3  # two loop calls and the side call, each priced
    assert r.total_cost_usd == pytest.approx(sum(c.cost_usd for c in r.call_usage))
    assert r.call_usage[1].input_tokens > 0 and r.call_usage[1].cost_usd > 0


def test_side_call_cost_reaches_the_budget(site: str) -> None:
    """The side call is what spends the rest of the budget: the run stops with error_max_budget_usd."""
    turns = [[use("f1", "WebFetch", url=site + "/page.html", prompt="p")], [text("never")]]
    with ScriptedServer(turns, side_reply="answer " * 4000) as srv:  # a long answer: its output tokens cost
        model = AnthropicModel("claude-haiku-4-5", base_url=srv.url, api_key="test")
        r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=model, tools=[make_web_fetch_tool()], settings=json.dumps(LOOPBACK),
                                        max_budget_usd=0.004))
    assert r.subtype == "error_max_budget_usd", r.result
    assert r.call_usage[0].cost_usd < 0.004 <= r.total_cost_usd
    assert r.model_calls == 1 and len(r.call_usage) == 2


def test_small_fast_model_setting_is_used_and_empty_means_none(site: str) -> None:
    turns = [[use("f1", "WebFetch", url=site + "/notes.txt", prompt="p")], [text("done")]]
    with ScriptedServer(turns, side_reply="small says hi") as srv:
        model = AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="test")
        r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=model, tools=[make_web_fetch_tool()], base_url=srv.url, api_key="test",
                                        settings=json.dumps({**LOOPBACK, "smallFastModel": "claude-haiku-4-5"})))
        side = [q for q in srv.requests if q.kind == "messages" and not q.loop_call]
    assert result_text(r.messages[2]["content"][0]) == "small says hi"
    assert side[0].body["model"] == "claude-haiku-4-5" and r.call_usage[1].model == "claude-haiku-4-5"
    with ScriptedServer(turns) as srv:
        model = AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="test")
        r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=model, tools=[make_web_fetch_tool()],
                                        settings=json.dumps({**LOOPBACK, "smallFastModel": ""})))
        assert not [q for q in srv.requests if q.kind == "messages" and not q.loop_call]
    assert "plain notes" in result_text(r.messages[2]["content"][0])


def test_outside_a_run_the_tool_refuses_loopback_and_returns_content() -> None:
    tool = make_web_fetch_tool()
    out = asyncio.run(tool.call({"url": "http://127.0.0.1:9/", "prompt": "p"}, ToolContext(cwd=Path("."))))
    assert out.is_error and "loopback" in str(out.content)


def test_a_long_page_is_read_on_with_offset(site: str) -> None:
    first = ok(site + "/long.txt")
    assert "characters 0 to 100000 of 250000" in first and "offset=100000" in first
    assert "0099992 " in first and "0100000" not in first
    turns = [{"content": [use("f1", "WebFetch", url=site + "/long.txt", prompt="p", offset=200_000)]},
             {"content": [text("done")]}]
    r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=lw.ScriptedModel(turns),
                                    tools=[make_web_fetch_tool()], settings=json.dumps(LOOPBACK)))
    last = result_text(r.messages[2]["content"][0])
    assert "characters 200000 to 250000 of 250000" in last and "0200000 " in last and "offset=" not in last


CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code not installed (cd tests/node && npm install)")
def test_schemas_are_claude_codes(tmp_path: Path) -> None:
    """The input schemas Claude Code itself sends for WebFetch and WebSearch (tool search off,
    so that it sends them in the first request) are ours: same properties, types, required."""
    (tmp_path / "home").mkdir()
    with ScriptedServer([[text("hi")]]) as srv:
        env = {**os.environ, "HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": srv.url,
               "ANTHROPIC_API_KEY": "test", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "ENABLE_TOOL_SEARCH": "false"}
        out = subprocess.run([str(CLAUDE), "-p", "hello", "--output-format", "json"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=180)
        theirs = {t["name"]: t["input_schema"] for t in srv.loop_requests[0].body["tools"]}
    assert json.loads(out.stdout)["subtype"] == "success", out.stdout[-1000:]
    ours = {t.name: t.input_schema for t in default_tools()}

    def shape(schema: dict[str, Any]) -> Any:
        props = {k: (v.get("type"), v.get("items", {}).get("type")) for k, v in schema["properties"].items()}
        return props, sorted(schema.get("required", [])), schema.get("additionalProperties")

    for name in ("WebFetch", "WebSearch"):
        assert shape(ours[name]) == shape(theirs[name]), name
        for k, v in theirs[name]["properties"].items():
            assert ours[name]["properties"][k]["description"] == v["description"], (name, k)


def test_fetches_in_one_turn_run_side_by_side(site: str) -> None:
    """Read-only (Prop 6.2): the two calls reach the server at once (it answers neither alone)."""
    _Site.barrier.reset()
    turns = [{"content": [use("f1", "WebFetch", url=site + "/together/1", prompt="p"),
                          use("f2", "WebFetch", url=site + "/together/2", prompt="p")]}, {"content": [text("done")]}]
    r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=lw.ScriptedModel(turns),
                                    tools=[make_web_fetch_tool()], settings=json.dumps(LOOPBACK)))
    results = [result_text(b) for b in r.messages[2]["content"]]
    assert "together /together/1" in results[0] and "together /together/2" in results[1], results


def test_interrupting_a_slow_fetch_ends_the_run_with_h_paired(site: str) -> None:
    async def main() -> Any:
        turns = [{"content": [use("f1", "WebFetch", url=site + "/slow", prompt="p")]}, {"content": [text("never")]}]
        options = lw.AgentOptions(allowed_tools=["WebFetch"], model=lw.ScriptedModel(turns),
                                  tools=[make_web_fetch_tool()], settings=json.dumps(LOOPBACK))

        async def slow_fetch_started() -> None:
            for _ in range(1500):  # (up to 30 s: a loaded machine)
                await asyncio.sleep(0.02)
                if "/slow" in _Site.hits:
                    return

        return await interrupted("go", options, slow_fetch_started)

    _Site.hits.clear()
    t0 = time.monotonic()
    r = asyncio.run(main())
    assert r.subtype == "error_during_execution" and "interrupted" in r.result
    assert time.monotonic() - t0 < 30  # not the slow body's end, nor the 60 s cap
    assert r.messages[-1]["content"][0]["tool_use_id"] == "f1" and r.messages[-1]["content"][0]["is_error"]


@given(st.sampled_from(["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "169.254.0.0/16",
                        "100.64.0.0/10", "0.0.0.0/8", "fc00::/7", "fe80::/10", "::1/128", "224.0.0.0/4"]),
       st.integers(min_value=0, max_value=2**128 - 1), st.booleans())
def test_every_private_address_is_refused_also_when_written_as_ipv6(net: str, n: int, mapped: bool) -> None:
    network = ipaddress.ip_network(net)
    ip = network[n % network.num_addresses]
    shown = f"::ffff:{ip}" if mapped and ip.version == 4 else str(ip)
    with pytest.raises(AddressRefused):
        AddressPolicy().check("h.test", ["93.184.216.34", shown])
    AddressPolicy(allowed=(network,)).check("h.test", [str(ip)])  # allowed explicitly: no exception
    AddressPolicy(allow_private=True).check("h.test", [shown])


def test_openai_compatible_model_answers_the_prompt_too(site: str) -> None:
    turns = [[use("f1", "WebFetch", url=site + "/data.json", prompt="the name?")], [text("done")]]
    with ScriptedServer(turns, side_reply="the name is widget") as srv:
        model = OpenAICompatModel("gpt-4o", base_url=srv.openai_url, api_key="test")
        r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=model, tools=[make_web_fetch_tool()],
                                        settings=json.dumps(LOOPBACK)))
        side = [q for q in srv.requests if q.kind == "chat" and not q.loop_call]
    assert result_text(r.messages[2]["content"][0]) == "the name is widget"
    assert len(side) == 1 and '\\"widget\\"' in json.dumps(side[0].body["messages"])
    assert len(r.call_usage) == 3


@pytest.mark.parametrize("host", ["2130706433", "0x7f000001", "0", "localhost", "[::1]", "[::ffff:127.0.0.1]"])
def test_loopback_in_any_spelling_is_refused(host: str) -> None:
    """Numeric spellings of 127.0.0.1 resolve locally (no DNS query leaves the machine) and are
    refused by their resolved address."""
    e = err(f"http://{host}:9/admin", settings={})
    assert "refused to connect" in e and ("loopback" in e or "unspecified" in e)


def test_urls_with_control_characters_or_unicode_hosts(site: str) -> None:
    assert "control characters" in err(site + "/page.html\r\nX-Injected: 1")
    assert check_url("https://b\u00fccher.example/caf\u00e9 menu") == "https://xn--bcher-kva.example/caf%C3%A9%20menu"


def test_a_workspace_may_lower_the_caps_and_pick_a_small_model_of_the_runs_provider_only(tmp_path: Path,
                                                                                        site: str) -> None:
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps(
        {"webFetch": {"maxBytes": 10**12, "timeout": 10**6}, "smallFastModel": "openai:gpt-4o"}))
    from loopwright.settings import load_settings
    from loopwright.tools.web.config import web_config

    cfg = web_config(load_settings(tmp_path, ["project"]))
    assert cfg.limits.max_bytes == 10 * 1024 * 1024 and cfg.limits.timeout == 60  # not raised
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"webFetch": {"maxBytes": 1000}}))
    assert web_config(load_settings(tmp_path, ["project"])).limits.max_bytes == 1000  # lowered
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"smallFastModel": "openai:gpt-4o"}))
    turns = [[use("f1", "WebFetch", url=site + "/notes.txt", prompt="p")], [text("done")]]
    with ScriptedServer(turns, side_reply="the run's own model answered") as srv:
        model = AnthropicModel("claude-haiku-4-5", base_url=srv.url, api_key="test")
        r = lw.run("x", lw.AgentOptions(allowed_tools=["WebFetch"], model=model, tools=[make_web_fetch_tool()],
                                        cwd=str(tmp_path), setting_sources=["project"],
                                        settings=json.dumps(LOOPBACK)))
        side = [q for q in srv.requests if not q.loop_call and q.kind in ("messages", "chat")]
    assert result_text(r.messages[2]["content"][0]) == "the run's own model answered"
    assert [q.kind for q in side] == ["messages"] and side[0].body["model"] == "claude-haiku-4-5"


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code not installed (cd tests/node && npm install)")
def test_side_by_side_with_claude_code_on_the_same_turns(tmp_path: Path, monkeypatch: Any) -> None:
    """The same scripted WebFetch turn, https page on loopback, for Claude Code and loopwright:
    both fetch the page, send its Markdown with the prompt to a side model call, and give the
    model that call's answer as the tool result."""
    cert, httpd = _tls_site(tmp_path)
    port = httpd.server_address[1]
    url = f"https://127.0.0.1:{port}/page.html"
    turns = [[use("toolu_1", "WebFetch", url=url, prompt="What does spin take?")], [text("done")]]
    answers: dict[str, tuple[str, str]] = {}
    try:
        (tmp_path / "home").mkdir()
        with ScriptedServer(turns, side_reply="spin takes speed") as srv:
            env = {**os.environ, "HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": srv.url,
                   "ANTHROPIC_API_KEY": "test", "DISABLE_TELEMETRY": "1",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ENABLE_TOOL_SEARCH": "false",
                   "NODE_EXTRA_CA_CERTS": cert}
            out = subprocess.run([str(CLAUDE), "-p", "fetch", "--allowedTools", "WebFetch", "--settings",
                                  '{"skipWebFetchPreflight": true}', "--output-format", "json"], env=env,
                                 cwd=tmp_path, capture_output=True, text=True, timeout=180)
            assert json.loads(out.stdout)["subtype"] == "success", out.stdout[-1000:]
            last = srv.loop_requests[-1].body["messages"][-1]["content"][0]
            side = [q for q in srv.requests if q.kind == "messages" and not q.loop_call
                    and "What does spin take?" in json.dumps(q.body["messages"])]
            answers["claude"] = (result_text(last), json.dumps(side[-1].body["messages"]) if side else "")
        monkeypatch.setenv("SSL_CERT_FILE", cert)
        with ScriptedServer(turns, side_reply="spin takes speed") as srv:
            model = AnthropicModel("claude-haiku-4-5", base_url=srv.url, api_key="test")
            r = lw.run("fetch", lw.AgentOptions(allowed_tools=["WebFetch"], model=model, tools=[make_web_fetch_tool()],
                                                settings=json.dumps({"webFetch": {"allowPrivateNetwork": True}})))
            side = [q for q in srv.requests if q.kind == "messages" and not q.loop_call]
            answers["loopwright"] = (result_text(r.messages[2]["content"][0]), json.dumps(side[-1].body["messages"]))
    finally:
        httpd.shutdown()
        httpd.server_close()
    for who, (result, asked) in answers.items():
        assert result == "spin takes speed", (who, result)
        assert "Widget API" in asked and "widget.spin(speed=3)" in asked and "not content" not in asked, who


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.integers(0, 14), st.one_of(st.integers(0, 14), st.sampled_from(["page", "away"])),
                       min_size=1), st.integers(1, 6))
def test_any_redirect_graph_ends_within_the_cap(site: str, graph: dict[int, Any], cap: int) -> None:
    """Whatever the server's redirects: the fetch ends with the page, the cross-host redirect, a
    loop or the cap, as walking the graph says, after at most cap + 1 requests."""
    _Site.graph = graph
    seen: list[int] = [0]
    while (nxt := graph.get(seen[-1], "page")) not in ("page", "away") and nxt not in seen and len(seen) <= cap:
        seen.append(nxt)
    policy = AddressPolicy(allowed=(ipaddress.ip_network("127.0.0.1/32"),))
    _Site.hits.clear()
    try:
        got: Any = asyncio.run(fetch(site + "/g/0", policy, Limits(timeout=5, max_redirects=cap), upgrade=False))
    except FetchError as e:
        got = e
    end = graph.get(seen[-1], "page")
    if end == "page":
        assert isinstance(got, Page) and got.body == f"node /g/{seen[-1]}".encode()
    elif end == "away":
        assert isinstance(got, Redirect) and got.location.endswith("/elsewhere")
    elif end in seen:
        assert isinstance(got, FetchError) and "redirect loop" in str(got)
    else:
        assert isinstance(got, FetchError) and f"more than {cap} redirects" in str(got)
    assert len([h for h in _Site.hits if h.startswith("/g/")]) == len(seen) <= cap + 1


class _Proxy(BaseHTTPRequestHandler):
    """A forward proxy for http:// (absolute-form GET); it refuses CONNECT tunnels."""

    seen: list[str] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_CONNECT(self) -> None:
        self.seen.append("CONNECT " + self.path)
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        import urllib.request

        self.seen.append("GET " + self.path)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(self.path, timeout=5) as upstream:
            body = upstream.read()
            ctype = upstream.headers.get("Content-Type", "")
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_the_environments_proxy_is_used_and_the_target_still_checked(site: str, monkeypatch: Any) -> None:
    proxy = _Quiet(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=proxy.serve_forever, args=(0.05,), daemon=True).start()
    try:
        for k in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(k, raising=False)
        for k in ("HTTP_PROXY", "HTTPS_PROXY"):
            monkeypatch.setenv(k, f"http://127.0.0.1:{proxy.server_address[1]}")
        _Proxy.seen.clear()
        out = ok(site + "/page.html")  # https through the proxy refused (CONNECT 403): http through it
        assert "# Widget API" in out
        assert _Proxy.seen[0].startswith("CONNECT 127.0.0.1:") and _Proxy.seen[1] == f"GET {site}/page.html"
        _Proxy.seen.clear()
        assert "loopback" in err(site + "/page.html", settings={})  # checked here, before the proxy is asked
        assert _Proxy.seen == []
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_permission_dialog_shows_the_url_and_the_query_escaped() -> None:
    from loopwright.cli.preview import permission_preview

    p = permission_preview("WebFetch", {"url": "https://docs.exa\x1bmple.com/x\x1b[2J", "prompt": "p"})
    assert p.title == "Fetch" and "\x1b" not in p.summary and all("\x1b" not in t for ln in p.lines for _, t in ln)
    assert "docs.exa" in p.summary and "prompt: p" in p.lines[1][0][1]
    q = permission_preview("WebSearch", {"query": "widget", "blocked_domains": ["spam.example.net"]})
    assert q.lines[0][0][1] == "widget" and "blocked_domains: spam.example.net" in q.lines[1][0][1]


def test_the_cache_expires_and_keeps_within_its_size() -> None:
    from loopwright.tools.web.fetch import FetchCache, Fetched

    def page(n: int, at: float) -> Fetched:
        return Fetched("u", 200, "text", "x" * n, n, False, at)

    c = FetchCache(ttl=10, max_chars=100)
    now = time.monotonic()
    c.put("a", page(60, now))
    c.put("b", page(60, now))  # over the size: the oldest goes
    assert c.get("a") is None and c.get("b") is not None and c.chars == 60
    c.put("old", page(10, now - 11))
    assert c.get("old") is None and c.chars == 60  # expired: dropped when asked
    c.put("huge", page(101, now))
    assert c.get("huge") is None and c.chars == 60  # larger than the whole cache: not kept
