"""protolines: a front end's lines, each bounded in size (a longer one skipped to its end, its
ends kept to answer it by its id) and in nesting depth; any split of the stream into chunks
gives the same lines."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopwright.protolines import BadLine, TooLong, parse_line, read_lines, too_deep


def lines_of(chunks: list[bytes], limit: int) -> list[bytes | TooLong]:
    async def go() -> list[bytes | TooLong]:
        r = asyncio.StreamReader()
        for c in chunks:
            r.feed_data(c)
        r.feed_eof()
        return [x async for x in read_lines(r, limit)]

    return asyncio.run(go())


@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8), st.data())
def test_any_chunking_gives_the_same_lines(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(x + b"\n" for x in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert lines_of(chunks, 1000) == lines


def test_a_long_line_is_skipped_to_its_end_and_its_id_kept() -> None:
    big = json.dumps({"type": "control_request", "request_id": "r7", "pad": "x" * 200_000}).encode()
    tail_id = json.dumps({"method": "session/prompt", "pad": "y" * 200_000, "id": 42}).encode()
    got = lines_of([b"ok\n", big[:70_000], big[70_000:] + b"\nnext\n", tail_id + b"\n"], 100_000)
    assert got[0] == b"ok" and got[2] == b"next"
    assert isinstance(got[1], TooLong) and got[1].size == len(big)
    assert got[1].field("request_id") == "r7" and got[1].field("type") == "control_request"
    assert isinstance(got[3], TooLong) and got[3].field("id") == 42 and got[3].field("method") == "session/prompt"
    assert lines_of([b"x" * 10], 5) == [TooLong(b"x" * 10, 10, b"x" * 10)]  # unended at EOF: skipped too


@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000, b'{"a": ' + b"[" * 101 + b"]" * 101 + b"}",
                                 b"{", b"\xff\xfe", b""])
def test_bad_lines_are_bad_lines(raw: bytes) -> None:
    with pytest.raises(BadLine):
        parse_line(raw)


def test_depth_is_counted_without_recursion() -> None:
    deep: list[object] = []
    for _ in range(50_000):
        deep = [deep]
    assert too_deep(deep, 100) and not too_deep([[1], {"a": [2]}], 3) and too_deep([[[1]]], 2)
    assert parse_line(b"[" * 100 + b"]" * 100) is not None
