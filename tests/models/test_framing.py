"""models/framing.py writes a request as h11 writes it and refuses what h11 refuses: checked against
h11 itself over arbitrary requests, near the edges (Host, Content-Length, Transfer-Encoding, header
characters, method and target characters)."""

from __future__ import annotations

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.models.framing import FramingError, frame

EDGE = b" \t\r\n\x00\x0b\x0c\x01\x7f\x80\xff:,"
VALUE_BYTES = list(b"ab5 \t\x01\x7f\x80\xff:,;=")  # what h11 takes in a header value (SP and HTAB inside)


def mostly(good: st.SearchStrategy[object], bad: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """`good` seven times in eight: many requests are ones h11 takes, so a difference in what is written shows."""
    return st.sampled_from(range(8)).flatmap(lambda i: bad if i == 0 else good)


names = mostly(st.sampled_from([b"x-api-key", b"accept", b"Accept", b"anthropic-version", b"user-agent", b"x-a!#~"]),
               st.one_of(st.binary(max_size=6), st.sampled_from([b"host", b"Host", b"content-length",
                                                                 b"transfer-encoding", b"Transfer-Encoding"])))
values = mostly(st.lists(st.sampled_from(VALUE_BYTES), max_size=8).map(bytes).map(lambda b: b.strip(b" \t")),
                st.one_of(st.binary(max_size=8), st.lists(st.sampled_from(VALUE_BYTES + list(EDGE)), max_size=6).map(bytes),
                          st.sampled_from([b"chunked", b"Chunked", b"gzip", b"5", b"abc", b" a", b"a\t"])))
methods = mostly(st.sampled_from(["POST", "GET", "CONNECT", "M-!~"]),
                 st.one_of(st.text(max_size=5), st.sampled_from(["", "PO ST", "GET\r\n", "POSTé"])))
targets = mostly(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=8),
                 st.one_of(st.text(max_size=6), st.sampled_from(["", "/a b", "/é", "/\x7f", "/\t"])))
bodies = st.one_of(st.just(b""), st.binary(min_size=1, max_size=12))


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, list[tuple[bytes, bytes]], bytes]:
    """A request: Host (once, mostly), its length framing (Content-Length as the body is, mostly, in the
    forms h11 accepts; or chunked; or none), other headers, in any order."""
    body = draw(bodies)
    hs: list[tuple[bytes, bytes]] = draw(st.lists(st.tuples(names, values), max_size=4))  # type: ignore[arg-type]
    host = draw(mostly(st.just([(b"host", b"api.example.com:443")]),
                       st.sampled_from([[], [(b"Host", b"a"), (b"host", b"b")], [(b"host", b"")]])))
    n = str(len(body)).encode()
    framing = draw(mostly(
        st.sampled_from([[(b"content-length", n)], [(b"Content-Length", n)], [(b"content-length", n + b" , " + n)],
                         [(b"content-length", n), (b"Content-Length", n)], [(b"transfer-encoding", b"chunked")],
                         [(b"Transfer-Encoding", b"CHUNKED")], [(b"content-length", n), (b"transfer-encoding", b"chunked")],
                         []]),
        st.sampled_from([[(b"content-length", n + b"1")], [(b"content-length", b"0" + n)], [(b"content-length", b"1" * 21)],
                         [(b"content-length", n + b",9")], [(b"content-length", n), (b"content-length", n + b"0")],
                         [(b"transfer-encoding", b"chunked"), (b"transfer-encoding", b"chunked")],
                         [(b"content-length", b"\xd9\xa3")], [(b"content-length", b"-" + n)]])))
    every = draw(st.permutations([*hs, *host, *framing]))  # type: ignore[arg-type]
    return draw(methods), draw(targets), list(every), body  # type: ignore[return-value]


def h11_writes(method: str, target: str, hs: list[tuple[bytes, bytes]], body: bytes) -> tuple[bytes, bytes] | None:
    """What h11 sends for the request, or None where it refuses it."""
    conn = h11.Connection(h11.CLIENT)
    try:
        head = conn.send(h11.Request(method=method, target=target, headers=hs)) or b""
        rest = (conn.send(h11.Data(data=body)) or b"") if body else b""
        return head, rest + (conn.send(h11.EndOfMessage()) or b"")
    except (h11.LocalProtocolError, UnicodeEncodeError):
        return None


def ours(method: str, target: str, hs: list[tuple[bytes, bytes]], body: bytes) -> tuple[bytes, bytes] | None:
    try:
        return frame(method, target, hs, body)
    except FramingError:
        return None


@settings(max_examples=2000, deadline=None)
@given(requests())
def test_frame_writes_what_h11_writes_and_refuses_what_it_refuses(
        request: tuple[str, str, list[tuple[bytes, bytes]], bytes]) -> None:
    assert ours(*request) == h11_writes(*request)


@pytest.mark.parametrize(("hs", "body"), [
    ([(b"host", b"a"), (b"content-length", b"5")], b"hello"),
    ([(b"x-a", b"1"), (b"Host", b"a:8080"), (b"content-length", b"5 , 5"), (b"Content-Length", b"5")], b"hello"),
    ([(b"host", b"a"), (b"transfer-encoding", b"Chunked")], b"hello"),
    ([(b"host", b"a"), (b"transfer-encoding", b"chunked")], b""),
    ([(b"host", b"a"), (b"content-length", b"3"), (b"transfer-encoding", b"chunked")], b"abc"),
    ([(b"host", b"a"), (b"x", b"")], b""),
])
def test_requests_h11_takes_are_written_byte_for_byte(hs: list[tuple[bytes, bytes]], body: bytes) -> None:
    written = frame("POST", "/v1/messages", hs, body)
    assert written == h11_writes("POST", "/v1/messages", hs, body)
    assert written[0].startswith(b"POST /v1/messages HTTP/1.1\r\nHost: a" if hs[1][0] == b"Host"
                                 else b"POST /v1/messages HTTP/1.1\r\nhost: a")  # Host first


@pytest.mark.parametrize(("method", "target", "hs", "body", "says"), [
    ("POST", "/", [(b"host", b"a"), (b"x-api-key", b"k\r\nInjected: 1")], b"", "Illegal header value"),
    ("POST", "/", [(b"host", b"a"), (b"bad name", b"v")], b"", "Illegal header name"),
    ("POST", "/", [], b"", "Missing mandatory Host"),
    ("POST", "/", [(b"host", b"a"), (b"Host", b"b")], b"", "multiple Host"),
    ("POST", "/", [(b"host", b"a"), (b"content-length", b"5,6")], b"", "conflicting Content-Length"),
    ("POST", "/", [(b"host", b"a"), (b"content-length", b"4")], b"hello", "Too much data"),
    ("POST", "/", [(b"host", b"a"), (b"content-length", b"6")], b"hello", "Too little data"),
    ("POST", "/", [(b"host", b"a")], b"hello", "Too much data"),
    ("POST", "/", [(b"host", b"a"), (b"transfer-encoding", b"gzip")], b"", "chunked is supported"),
    ("PO ST", "/", [(b"host", b"a")], b"", "Illegal method"),
    ("POST", "/a b", [(b"host", b"a")], b"", "Illegal target"),
    ("POST", "/é", [(b"host", b"a")], b"", "not ASCII"),
])
def test_what_h11_refuses_is_refused_with_its_reason(method: str, target: str, hs: list[tuple[bytes, bytes]],
                                                     body: bytes, says: str) -> None:
    assert h11_writes(method, target, hs, body) is None
    with pytest.raises(FramingError, match=says):
        frame(method, target, hs, body)
