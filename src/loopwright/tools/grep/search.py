"""Room: built-in tools (on tools.base). Owns a Grep call: the choice of engine, the time limit and
the tracked files the walk leaves out (searched too); may import data types, tools.base and
tools.grep.*.

`search(query)` runs one resolved query on rg or the Python engine, in a process of its own
under TIMEOUT_S; `grep` is the Grep tool's handler (tools.grep defines the tool)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import stat
from typing import Any

from ..base import ToolContext, ToolError, ToolOutput
from .filters import override_matcher, type_matcher
from .formatting import render_hits
from .isolate import run_python_isolated
from .query import FileHits, Query, build_query
from .rg import rg_path, run_rg
from .tracked import tracked_hidden

TIMEOUT_S = 60.0  # a search that takes longer ends with an error (catastrophic regex, huge files)
NO_RG_NOTE = ("(ripgrep is not installed for this platform, so Grep and Glob use loopwright's slower Python "
              "engine; `pip install ripgrep` or a system `rg` makes them fast.)")
_told = False  # the fallback is said once a process


def fallback_note() -> str | None:
    """NO_RG_NOTE the first time a search falls back to the Python engine, then None."""
    global _told
    if _told:
        return None
    _told = True
    return NO_RG_NOTE


def _binary(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return b"\0" in f.read(8192)
    except OSError:
        return True


def tracked_to_search(q: Query, rels: list[str]) -> list[str]:
    """Of the tracked files the walk leaves out (root-relative), those the query's glob and type
    filters take and that are text (named explicitly, rg would search a binary file), absolute."""
    overrides = override_matcher(q.globs)
    try:
        types = type_matcher(q.type)
    except ToolError:  # a type the Python table does not know (rg may): no tracked files added
        return []
    out = []
    for rel in rels:
        if overrides is not None and overrides(rel, False) is False:
            continue
        if types is not None and not types(rel.rpartition("/")[2]):
            continue
        path = str(q.root / rel)
        if not _binary(path):
            out.append(path)
    return out


async def search(q: Query, engine: str = "auto", sandbox: Any = None, timeout: float | None = None
                 ) -> list[FileHits]:
    """Run a query on `rg` ("rg"), the Python engine ("python"), or rg when installed ("auto"),
    for at most `timeout` seconds (TIMEOUT_S by default). Either engine runs in a process of its
    own, killed at the deadline or when the call is cancelled (SIGTERM, an interrupt). With the
    OS sandbox on, rg runs in it. In a git repository, the tracked files an ignore file names
    or a dot hides are searched too (tracked.py), by a second run when there are any."""
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

    async def run(query: Query) -> list[FileHits]:
        return await run_rg(query, rg, sandbox) if rg is not None else await run_python_isolated(query)

    limit = TIMEOUT_S if timeout is None else timeout
    try:
        async with asyncio.timeout(limit):
            if not stat.S_ISDIR(st.st_mode):
                return await run(q)
            # git answers while the walk runs, and the files it names are searched meanwhile too
            walk = asyncio.ensure_future(run(q))
            side: asyncio.Future[list[FileHits]] | None = None
            try:
                tracked = await tracked_hidden(q.root, sandbox)
                extra = tracked_to_search(q, tracked) if tracked else []
                if extra:
                    side = asyncio.ensure_future(run(dataclasses.replace(q, walk=False, extra=extra)))
                hits = await walk
                more = await side if side is not None else []
            finally:
                walk.cancel()
                if side is not None:
                    side.cancel()
            found = {h.path for h in hits}
            return hits + [h for h in more if h.path not in found]
    except TimeoutError:
        raise ToolError(f"Grep timed out after {limit:g}s and was stopped (pattern {q.pattern!r} in {q.root}). "
                        "Use a simpler pattern (no nested repetition), or narrow path, glob or type.") from None


async def grep(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    q = build_query(inp, ctx)
    engine = ctx.state.search.engine  # tests and benchmarks pick an engine
    hits = await search(q, engine, ctx.sandbox)
    denied = ctx.state.search.denied  # Read deny rules hide files from searches too
    if denied is not None:
        hits = [h for h in hits if not denied(h.path)]
    out, details = render_hits(hits, q, ctx.cwd)
    note = fallback_note() if engine == "auto" and rg_path() is None else None
    return ToolOutput(f"{out}\n\n{note}" if note else out, details=details)
