"""/doctor's provider line (cli/commands/workspace._reachable) shows the base URL as errors do
(models/http.shown_url): without a gateway's user:password@ or its ?key=, whether the API answers
or not. Real HTTP to a loopback server, and a refused loopback port."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from loopwright.cli.commands.workspace import _reachable
from tests.helpers import held_port


class _Answers(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(401)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[int]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


def test_doctor_does_not_show_the_base_urls_credentials_when_it_answers(answering: int) -> None:
    line = _reachable(f"http://127.0.0.1:{answering}/?key=SECRET-KEY", "claude-sonnet-4-5")
    assert line.startswith("✓") and "SECRET" not in line and f"127.0.0.1:{answering}" in line, line


@pytest.mark.parametrize("url", ["http://gw-user:SECRET-PASS@127.0.0.1:{port}/v1",
                                 "http://127.0.0.1:{port}/v1?key=SECRET-KEY"])
def test_doctor_does_not_show_the_base_urls_credentials_when_unreachable(url: str) -> None:
    with held_port() as port:
        line = _reachable(url.format(port=port), "claude-sonnet-4-5")
    assert line.startswith("✗") and "SECRET" not in line and f"127.0.0.1:{port}" in line, line
