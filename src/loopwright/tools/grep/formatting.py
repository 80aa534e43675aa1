"""Room: built-in tools (on tools.base). Owns Grep's output text (one formatter for both engines);
may import the grep package's query.

Files are sorted by path (Claude Code sorts files_with_matches by mtime; a path order is
deterministic).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .query import MAX_COLUMNS, FileHits, Query

MAX_OUTPUT_CHARS = 30_000


def shown_path(path: str, cwd: Path) -> str:
    """A path as Grep and Glob show it: relative to the (resolved) working directory when it is
    under it, else absolute. (A string prefix: engines give normalized absolute paths, and
    pathlib takes ~10 µs a path, which 20,000 rows of a count feel.)"""
    base = str(cwd)
    prefix = base if base.endswith(os.sep) else base + os.sep
    return path[len(prefix):] if path.startswith(prefix) and len(path) > len(prefix) else path


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _cut(text: str) -> str:
    text = text.removesuffix("\r").replace("\0", "\\0")
    return text if len(text) <= MAX_COLUMNS else text[:MAX_COLUMNS] + " [... line truncated]"


def _fit(lines: list[str]) -> tuple[list[str], int]:
    """The leading lines that fit in MAX_OUTPUT_CHARS, and how many were left out."""
    size = 0
    for i, line in enumerate(lines):
        size += len(line) + 1
        if size > MAX_OUTPUT_CHARS:
            return lines[:i], len(lines) - i
    return lines, 0


def format_hits(hits: list[FileHits], q: Query, cwd: Path) -> str:
    """The text the model reads of a search's hits (render_hits without the structured output)."""
    return render_hits(hits, q, cwd)[0]


def render_hits(hits: list[FileHits], q: Query, cwd: Path) -> tuple[str, dict[str, Any]]:
    """The text the model reads, and Grep's structured output (Claude Code's GrepOutput: the
    files or lines shown, as shown)."""
    hits = sorted(hits, key=lambda h: h.path)
    cwd = cwd.resolve()
    limit = q.head_limit
    too_long = ("(output truncated at {} characters: {} more {} not shown; narrow the search or use "
                "head_limit)")
    details: dict[str, Any] = {"mode": q.mode, "numFiles": 0, "filenames": []}
    if q.mode == "files_with_matches":
        if not hits:
            return "No files found", details
        names = [shown_path(h.path, cwd) for h in hits]
        shown, cut = _fit(names[:limit] if limit else names)
        details.update(filenames=shown, numFiles=len(shown), **_applied(limit, len(names)))
        more = f" (showing the first {len(shown)})" if len(shown) < len(names) else ""
        tail = "\n" + too_long.format(MAX_OUTPUT_CHARS, cut, "files") if cut else ""
        return f"Found {len(names)} {_plural(len(names), 'file')}{more}\n" + "\n".join(shown) + tail, details
    if q.mode == "count":
        if not hits:
            return "No matches found", {**details, "content": "", "numMatches": 0}
        rows = [f"{shown_path(h.path, cwd)}:{h.count}" for h in hits]
        shown, _ = _fit(rows[:limit] if limit else rows)
        total = sum(h.count for h in hits)
        details.update(numFiles=len(rows), content="\n".join(shown), numMatches=total, **_applied(limit, len(rows)))
        note = f" (showing the first {len(shown)} files)" if len(shown) < len(rows) else ""
        return "\n".join(shown) + (f"\n\nFound {total} total {_plural(total, 'occurrence')} across "
                                   f"{len(rows)} {_plural(len(rows), 'file')}.{note}"), details
    out: list[str] = []
    context = q.before > 0 or q.after > 0
    for h in hits:
        name = shown_path(h.path, cwd)
        prev: int | None = None
        for n, (text, is_match) in sorted(h.lines.items()):
            if context and out and (prev is None or n != prev + 1):
                out.append("--")
            sep = ":" if is_match else "-"
            out.append(f"{name}{sep}{n}{sep}{_cut(text)}" if q.line_numbers else f"{name}{sep}{_cut(text)}")
            prev = n
    if not out:
        return "No matches found", {**details, "content": "", "numLines": 0}
    notes = []
    applied = _applied(limit, len(out))
    if limit and len(out) > limit:
        notes.append(f"(output limited to the first {limit} of {len(out)} lines by head_limit)")
        out = out[:limit]
    out, cut = _fit(out)
    if cut:
        notes.append(too_long.format(MAX_OUTPUT_CHARS, cut, "lines"))
    details.update(content="\n".join(out), numLines=len(out), **applied)
    return "\n".join([*out, *notes]), details


def _applied(limit: int | None, n: int) -> dict[str, Any]:
    """appliedLimit, when head_limit cut what there was (as Claude Code gives it)."""
    return {"appliedLimit": limit} if limit and n > limit else {}
