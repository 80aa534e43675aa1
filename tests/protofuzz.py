"""Lines for fuzzing a protocol front end (issue 40, item 11): random JSON, protocol messages with
one part mutated (a value replaced by any JSON, a key dropped, the type changed), torn lines,
raw bytes and nesting far deeper than any parser's recursion; and a peer process whose stdout is
read by a thread (so a front end that stops answering fails the test instead of hanging it)."""

from __future__ import annotations

import copy
import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, templates: list[dict[str, Any]]) -> dict[str, Any] | Any:
    """A template message with one place changed: replaced by any JSON, or its key removed."""
    msg = copy.deepcopy(draw(st.sampled_from(templates)))
    path = draw(st.sampled_from(_paths(msg)[1:]))
    parent: Any = msg
    for p in path[:-1]:
        parent = parent[p]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(JSON)
    return msg


def deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


def lines(templates: list[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    """One stdin line (without its newline) of any of the kinds above."""
    as_line = st.builds(lambda v: json.dumps(v).encode(), mutated(templates) | JSON)
    torn = st.builds(lambda m, k: json.dumps(m).encode()[:k], st.sampled_from(templates), st.integers(1, 60))
    raw = st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" "))
    nested = st.sampled_from([deep(100_000), b'{"type": "user", "message": ' + deep(5000) + b"}",
                              b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": ' + deep(3000) + b"}}"])
    return st.one_of(as_line, as_line, torn, raw, nested)


class Peer:
    """A front end in a subprocess: lines in, stdout lines read by a thread into a queue."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str,
                 answer: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env, cwd=cwd)
        self.out: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.answer = answer  # what the test's side answers to a request the front end sends
        self.err: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(self.p.stderr or []), daemon=True).start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for raw in self.p.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            reply = self.answer(msg) if isinstance(msg, dict) else None
            if reply is not None:
                self.send(json.dumps(reply).encode())
            self.out.put(msg)
        self.out.put(None)

    def send(self, line: bytes) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(line + b"\n")
        self.p.stdin.flush()

    def wait_for(self, match: Callable[[dict[str, Any]], bool], timeout: float = 60) -> dict[str, Any]:
        """The next stdout message `match` accepts (others are passed over). (60 s: the first answer
        includes the process's start, which a loaded machine stretches; only a failure waits it out.)"""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            assert left > 0, f"no answer within {timeout}s; stderr: {b''.join(self.err)[-2000:]!r}"
            try:
                msg = self.out.get(timeout=left)
            except queue.Empty:
                continue
            assert msg is not None, f"the front end ended; stderr: {b''.join(self.err)[-2000:]!r}"
            if match(msg):
                return msg

    def close(self) -> int:
        assert self.p.stdin is not None
        self.p.stdin.close()
        try:
            return self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise
