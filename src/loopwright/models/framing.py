"""Room: providers (on the standard library only). A request as HTTP/1.1 bytes, byte for byte as
h11 writes it, refused where h11 refuses it, without importing h11.

Why: h11's import is ~44 M instructions here (its events are data classes that `@dataclass`
compiles, its parsers regexes that `re` compiles), 18 % of `python -c 'import asyncio, json,
socket'`, and a run's first request needs none of it: only the answer needs h11's parser. So the
transport (models/wire.py) writes each request with `frame`, and loads h11 once the first one is on
its way, while the server works on it; h11 then hears the same request (`wire._Connection.send`) so
that it reads the answer. `tests/models/test_framing.py` checks `frame` against h11 over arbitrary
requests: the same bytes, or both refuse.
"""

from __future__ import annotations

from collections.abc import Sequence

# RFC 9110 token characters (h11's `token`): a method and a header name
_TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# What a header value never holds (h11's field-vchar is [^\x00\s]; SP and HTAB only between two of them)
_NOT_IN_VALUE = frozenset(b"\x00\n\r\x0b\x0c")
_VCHAR = frozenset(range(0x21, 0x7F))  # a request target's characters (h11's vchar)
_MAX_DIGITS = 20  # a Content-Length this long is refused (h11's CONTENT_LENGTH_MAX_DIGITS)


class FramingError(ValueError):
    """A request HTTP/1.1 cannot carry as given (h11's LocalProtocolError for it)."""


def _bytes(s: bytes | str) -> bytes:
    if type(s) is bytes:
        return s
    if isinstance(s, str):
        try:
            return s.encode("ascii")
        except UnicodeEncodeError:
            raise FramingError(f"not ASCII: {s[:200]!r}") from None
    return bytes(s)


def _token(b: bytes) -> bool:
    return bool(b) and _TOKEN.issuperset(b)


def _value(b: bytes) -> bool:
    return not b or (b[0] not in b" \t" and b[-1] not in b" \t" and _NOT_IN_VALUE.isdisjoint(b))


def frame(method: bytes | str, target: bytes | str, headers: Sequence[tuple[bytes | str, bytes | str]],
          body: bytes) -> tuple[bytes, bytes]:
    """The request's head (request line and headers, Host first) and its body as framed
    (Content-Length: as it is; Transfer-Encoding: chunked: one chunk and the last); FramingError
    for anything h11 would not send."""
    lines: list[bytes] = []
    host: list[bytes] = []
    length: bytes | None = None
    chunked = False
    for raw_name, raw_value in headers:
        name, value = _bytes(raw_name), _bytes(raw_value)
        if not _token(name):
            raise FramingError(f"Illegal header name {name!r}")
        if not _value(value):
            raise FramingError(f"Illegal header value {value!r}")
        lower = name.lower()
        if lower == b"content-length":
            lengths = {v.strip() for v in value.split(b",")}
            if len(lengths) != 1:
                raise FramingError("conflicting Content-Length headers")
            value = lengths.pop()
            if not value.isdigit() or len(value) > _MAX_DIGITS:  # (bytes.isdigit: ASCII digits only)
                raise FramingError("bad Content-Length")
            if length is not None:
                if length != value:
                    raise FramingError("conflicting Content-Length headers")
                continue  # (a repeat of the same length is written once)
            length = value
        elif lower == b"transfer-encoding":
            if chunked:
                raise FramingError("multiple Transfer-Encoding headers")
            value = value.lower()
            if value != b"chunked":
                raise FramingError("Only Transfer-Encoding: chunked is supported")
            chunked = True
        line = b"%s: %s\r\n" % (name, value)
        (host if lower == b"host" else lines).append(line)
    if not host:
        raise FramingError("Missing mandatory Host: header")
    if len(host) > 1:
        raise FramingError("Found multiple Host: headers")
    m, t = _bytes(method), _bytes(target)
    if not _token(m):
        raise FramingError("Illegal method characters")
    if not t or not _VCHAR.issuperset(t):
        raise FramingError("Illegal target characters")
    if chunked:  # (Transfer-Encoding wins over a Content-Length, as h11 frames it)
        framed = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
    else:
        declared = int(length) if length is not None else 0
        if len(body) > declared:
            raise FramingError("Too much data for declared Content-Length")
        if len(body) < declared:
            raise FramingError("Too little data for declared Content-Length")
        framed = body
    return b"%s %s HTTP/1.1\r\n%s%s\r\n" % (m, t, host[0], b"".join(lines)), framed
