"""Room: web tools (on tools.base). Owns running a page's conversion (convert.to_text) where it can be
killed: a worker process, bounded in CPU time and memory; may import tools.base and convert.

A page built to be slow to convert (a 90 KB PDF whose one content stream inflates to 60 MB keeps a
core busy for seconds and holds hundreds of MB) must stop when WebFetch gives up on it. A thread
cannot be stopped, so HTML and PDF are converted in a worker process: when the time is up the
worker is killed (its CPU and memory go with it) and the next page gets a new one. The worker
also bounds itself (RLIMIT_CPU per job, RLIMIT_AS), so a runaway conversion ends even if this
process cannot kill it. Idle workers are kept for the next page (a round trip is ~1 ms; starting
one ~80 ms), at most IDLE of them; a worker ends when this process closes its stdin.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from ...threads import run_in_worker

IDLE = 2
MEMORY_BYTES = 2 << 30  # address space of a worker: a 10 MB page's conversion needs a few hundred MB
_idle: list[subprocess.Popen[bytes]] = []
_lock = threading.Lock()
_CHILD = "from loopwright.tools.web.worker import serve; serve()"


class ConversionFailed(Exception):
    """The worker died (killed on the time limit, or past its own CPU or memory bound)."""


def _frame(out: IO[bytes], header: dict[str, Any], body: bytes = b"") -> None:
    head = json.dumps(header).encode()
    out.write(struct.pack(">II", len(head), len(body)) + head + body)
    out.flush()


def _read_frame(src: IO[bytes]) -> tuple[dict[str, Any], bytes] | None:
    sizes = src.read(8)
    if len(sizes) < 8:
        return None
    n_head, n_body = struct.unpack(">II", sizes)
    head = src.read(n_head)
    body = src.read(n_body)
    if len(head) < n_head or len(body) < n_body:
        return None
    value = json.loads(head)
    return (value if isinstance(value, dict) else {}), body


def _spawn() -> subprocess.Popen[bytes]:
    import loopwright

    env = dict(os.environ)
    here = str(Path(loopwright.__file__).resolve().parents[1])  # this loopwright, wherever it was imported from
    env["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)


def _take() -> subprocess.Popen[bytes]:
    with _lock:
        while _idle:
            p = _idle.pop()
            if p.poll() is None:
                return p
    return _spawn()


def _give_back(p: subprocess.Popen[bytes]) -> None:
    with _lock:
        if p.poll() is None and len(_idle) < IDLE:
            _idle.append(p)
            return
    _end(p)


def _end(p: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        p.kill()
    p.wait()
    for f in (p.stdin, p.stdout):
        if f is not None:
            with contextlib.suppress(OSError):
                f.close()


def _exchange(p: subprocess.Popen[bytes], body: bytes, content_type: str, seconds: float) -> tuple[dict[str, Any], bytes]:
    assert p.stdin is not None and p.stdout is not None
    try:
        _frame(p.stdin, {"content_type": content_type, "seconds": seconds}, body)
        got = _read_frame(p.stdout)
    except (OSError, ValueError):
        got = None
    if got is None:
        raise ConversionFailed("the conversion was stopped")
    return got


async def to_text_bounded(body: bytes, content_type: str, seconds: float) -> tuple[str, str]:
    """convert.to_text in a worker process, killed if it has not answered in `seconds` (TimeoutError;
    also when the caller is cancelled). NotText as to_text raises it."""
    import asyncio

    from .convert import NotText

    p = _take()
    try:
        async with asyncio.timeout(seconds):
            header, text = await run_in_worker(_exchange, p, body, content_type, seconds)
    except BaseException:
        _end(p)  # given up (or cancelled): its CPU and memory end now
        raise
    _give_back(p)
    if "not_text" in header:
        raise NotText(str(header["not_text"]))
    if "error" in header:
        raise ConversionFailed(str(header["error"]))
    return text.decode("utf-8", "surrogatepass"), str(header.get("kind", "text"))


# --- the worker's side ------------------------------------------------------------------------

def serve() -> None:
    """The worker process: one conversion per frame on stdin, its answer on stdout, until EOF."""
    import resource

    from .convert import NotText, to_text

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    src, out = sys.stdin.buffer, sys.stdout.buffer
    while (job := _read_frame(src)) is not None:
        header, body = job
        used = resource.getrusage(resource.RUSAGE_SELF)
        limit = int(used.ru_utime + used.ru_stime + float(header.get("seconds", 60)) + 2)
        with contextlib.suppress(ValueError, OSError):  # past it, SIGXCPU ends this process
            resource.setrlimit(resource.RLIMIT_CPU, (limit, resource.RLIM_INFINITY))
        try:
            text, kind = to_text(body, str(header.get("content_type", "")))
        except NotText as e:
            _frame(out, {"not_text": str(e)})
        except (MemoryError, RecursionError, Exception) as e:  # noqa: BLE001 - said to the parent, who says it
            _frame(out, {"error": f"{type(e).__name__}: {e}"[:500]})
        else:
            _frame(out, {"kind": kind}, text.encode("utf-8", "surrogatepass"))
