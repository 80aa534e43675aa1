"""Room: built-in tools (on tools.base). Owns running Grep's Python engine in a forked child that can
be killed; may import tools.base and the grep package's query and engine.

Python's `re` cannot be interrupted (a catastrophic pattern holds the GIL), but a process can be
killed: at the deadline, or when the call is cancelled (SIGTERM, an interrupt).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import warnings
from typing import Any

from ...ignore import preload
from ..base import ToolError
from .engine import run_python
from .query import FileHits, Query

MAX_FD = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 16


async def run_python_isolated(q: Query) -> list[FileHits]:
    """run_python in a forked child: Python's `re` cannot be interrupted (a catastrophic pattern
    holds the GIL), but a process can be killed. The child sends its hits back pickled."""
    import pickle  # before the fork, for both sides (a Python grep is rarer than a run)

    # What the child imports, imported here first: a module another thread is importing at the
    # fork stays locked in the child forever (Glob's Python walk runs in a thread beside Grep).
    preload()
    for codec in ("utf-8", "utf-8-sig", "utf-16"):
        codecs.getincrementaldecoder(codec)

    r, w = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns about fork in a threaded process; the
        warnings.simplefilter("ignore", DeprecationWarning)  # child only runs the engine, then _exit
        pid = os.fork()
    if pid == 0:  # the child: only its result pipe stays open (another search waits for its own EOF)
        os.closerange(3, w)
        os.closerange(w + 1, MAX_FD)
        _engine_child(q, w)
    os.close(w)
    try:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                    open(r, "rb", buffering=0, closefd=True))  # noqa: SIM115
        try:
            data = await reader.read()
        finally:
            transport.close()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # a no-op when it has finished
        os.waitpid(pid, 0)
    try:
        kind, value = pickle.loads(data)
    except Exception:
        raise ToolError("the Python grep engine failed without a result") from None
    if kind == "error":
        raise ToolError(str(value))
    return list(value)


def _engine_child(q: Query, w: int) -> None:
    import pickle  # already loaded: run_python_isolated imported it before the fork

    code = 0
    try:
        with contextlib.suppress(ValueError):  # the parent's signal handling is not ours
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
        try:
            payload: tuple[str, Any] = ("ok", run_python(q))
        except ToolError as e:
            payload = ("error", str(e))
        except Exception as e:
            payload = ("error", f"grep failed: {type(e).__name__}: {e}")
        view = memoryview(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        while view:
            view = view[os.write(w, view):]
    except BaseException:
        code = 1
    finally:
        os._exit(code)

