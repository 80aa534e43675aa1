"""Room: built-in tools (on tools.base). Owns a Grep call: the choice of engine and the time limit;
may import data types, tools.base and tools.grep.*.

`search(query)` runs one resolved query on rg or the Python engine, in a process of its own
under TIMEOUT_S; `grep` is the Grep tool's handler (tools.grep defines the tool)."""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any

from ..base import ToolContext, ToolError
from .formatting import format_hits
from .isolate import run_python_isolated
from .query import FileHits, Query, build_query
from .rg import rg_path, run_rg

TIMEOUT_S = 60.0  # a search that takes longer ends with an error (catastrophic regex, huge files)


async def search(q: Query, engine: str = "auto", sandbox: Any = None, timeout: float | None = None
                 ) -> list[FileHits]:
    """Run a query on `rg` ("rg"), the Python engine ("python"), or rg when installed ("auto"),
    for at most `timeout` seconds (TIMEOUT_S by default). Either engine runs in a process of its
    own, killed at the deadline or when the call is cancelled (SIGTERM, an interrupt). With the
    OS sandbox on, rg runs in it."""
    try:
        st = os.stat(q.root)
    except OSError as e:
        raise ToolError(f"Cannot search {q.root}: {e.strerror or e}.") from None
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):  # reading a FIFO or a device never ends
        raise ToolError(f"{q.root} is not a regular file or a directory (a FIFO, socket or device): "
                        "Grep searches files.")
    rg = rg_path() if engine in ("auto", "rg") else None
    if engine == "rg" and rg is None:
        raise ToolError("rg is not installed")
    limit = TIMEOUT_S if timeout is None else timeout
    try:
        async with asyncio.timeout(limit):
            if rg is not None:
                return await run_rg(q, rg, sandbox)
            return await run_python_isolated(q)
    except TimeoutError:
        raise ToolError(f"Grep timed out after {limit:g}s and was stopped (pattern {q.pattern!r} in {q.root}). "
                        "Use a simpler pattern (no nested repetition), or narrow path, glob or type.") from None


async def grep(inp: dict[str, Any], ctx: ToolContext) -> str:
    q = build_query(inp, ctx)
    engine = ctx.state.search.engine  # tests and benchmarks pick an engine
    hits = await search(q, engine, ctx.sandbox)
    denied = ctx.state.search.denied  # Read deny rules hide files from searches too
    if denied is not None:
        hits = [h for h in hits if not denied(h.path)]
    return format_hits(hits, q, ctx.cwd)
