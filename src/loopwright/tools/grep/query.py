"""Room: built-in tools (on tools.base). Owns Grep's query (one call, resolved) and the result both
engines return; may import tools.base and tools.paths.

The engines (rg.py, engine.py) fill the same FileHits, and one formatter (formatting.py) turns
them into text, so the output does not depend on the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import ToolContext, ToolError
from ..paths import resolve

MAX_COLUMNS = 500  # content lines longer than this are cut (Claude Code passes rg --max-columns 500)
MAX_LINES = 100_000  # matching + context lines collected before giving up


@dataclass
class Query:
    """One Grep call, resolved: the pattern, where to search, the filters and the output mode."""

    pattern: str
    root: Path  # absolute file or directory
    globs: list[str] = field(default_factory=list)
    type: str | None = None
    mode: str = "files_with_matches"
    ignore_case: bool = False
    line_numbers: bool = True
    before: int = 0
    after: int = 0
    head_limit: int | None = None
    multiline: bool = False
    walk: bool = True  # search the tree under root (else only `extra`)
    # git-tracked files an ignore file names (tracked.py), absolute, under root: searched as if walked
    extra: list[str] = field(default_factory=list)


@dataclass
class FileHits:
    """One file's matches as an engine found them (count, or numbered lines with context)."""

    path: str  # absolute
    count: int = 0  # count mode: matching lines (or matches, for a multiline pattern)
    lines: dict[int, tuple[str, bool]] = field(default_factory=dict)  # content: n -> (text, is_match)


def split_globs(glob: str | None) -> list[str]:
    """Claude Code's splitting: on whitespace, then on commas outside `{...}` groups."""
    out: list[str] = []
    for raw in (glob or "").split():
        if "{" in raw and "}" in raw:
            out.append(raw)
        else:
            out.extend(p for p in raw.split(",") if p)
    return out


def build_query(inp: dict[str, Any], ctx: ToolContext) -> Query:
    root = resolve(inp["path"], ctx) if inp.get("path") else ctx.cwd.resolve()
    if not root.exists():
        raise ToolError(f"Path does not exist: {root}. Current working directory: {ctx.cwd}.")
    ctx_n = inp.get("-C")
    t = inp.get("type")
    return Query(
        pattern=inp["pattern"], root=root, globs=split_globs(inp.get("glob")), type=t or None,
        mode=inp.get("output_mode") or "files_with_matches", ignore_case=bool(inp.get("-i")),
        line_numbers=inp.get("-n", True) is not False,
        before=inp.get("-B", ctx_n) or 0, after=inp.get("-A", ctx_n) or 0,
        head_limit=inp.get("head_limit"), multiline=bool(inp.get("multiline")),
    )


def too_many() -> ToolError:
    return ToolError(f"Too many matching lines (over {MAX_LINES}). Narrow the pattern, path, glob or "
                     "type, or use output_mode files_with_matches / count.")
