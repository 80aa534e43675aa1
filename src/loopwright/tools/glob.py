"""Room: built-in tools (on tools.base). Owns Glob's implementation (tools.builtin defines the tool);
may import data types, tools.base and tools.paths.

Glob {pattern, path?}: file paths matching a glob, newest first.

Glob hides what Grep hides (issue 22: the two agree): the ignore files Grep reads (.gitignore,
.ignore, .rgignore, .git/info/exclude, the global excludes; ignore.py, the one matcher) apply, so
a repository's ignore file cannot show one thing to Grep and another to Glob. A pattern or path
that starts inside an ignored directory lists it (as Grep searches it). Hidden files match like
any other (Claude Code's Glob lists them). The contents of VCS metadata directories (.git, .hg,
.svn) are skipped unless the pattern names them. Symlinked directories are not followed (no
cycles); symlinked files are listed."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..ignore import DirRules, IgnoreFiles, expand_braces, glob_matcher
from .base import ToolContext, ToolError
from .paths import resolve

MAX_RESULTS = 100
VCS_DIRS = {".git", ".hg", ".svn"}
_MAGIC = re.compile(r"[*?\[{\\]")

def _split_literal_prefix(pattern: str) -> tuple[str, str]:
    """`src/pkg/**/*.py` -> (`src/pkg`, `**/*.py`): walk only where matches can be."""
    segs = pattern.split("/")
    k = 0
    while k < len(segs) - 1 and not _MAGIC.search(segs[k]):
        k += 1
    return "/".join(segs[:k]), "/".join(segs[k:])


def find_files(base: Path, pattern: str) -> list[tuple[str, int]]:
    """(relative path, mtime_ns) of the regular files under base matching pattern."""
    match = glob_matcher(pattern)
    files = IgnoreFiles(base)
    # without `**`, a match is at most this many segments deep: stop the walk there
    max_depth = None if "**" in pattern else max(len(p.split("/")) for p in expand_braces(pattern))
    names_vcs = any(part in VCS_DIRS for part in pattern.split("/"))
    out: list[tuple[str, int]] = []

    def walk(d: Path, rel: str, depth: int, rules: list[DirRules]) -> None:
        rules = files.enter(d, rel, rules)
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            r = f"{rel}{e.name}"
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name in VCS_DIRS and not names_vcs:
                        continue
                    if (max_depth is None or depth + 1 < max_depth) and not files.check(r, True, rules):
                        walk(Path(e.path), r + "/", depth + 1, rules)
                elif e.is_file() and match(r) and not files.check(r, False, rules):
                    out.append((r, e.stat().st_mtime_ns))
            except OSError:
                continue

    walk(base, "", 0, files.top)
    return out


def glob_files(inp: dict[str, Any], ctx: ToolContext) -> str:
    pattern: str = inp["pattern"].strip()
    if not pattern:
        raise ToolError("pattern is empty.")
    base = resolve(inp["path"], ctx) if inp.get("path") else ctx.cwd
    if not base.exists():
        raise ToolError(f"Path does not exist: {base}. Current working directory: {ctx.cwd}.")
    if not base.is_dir():
        raise ToolError(f"Path is not a directory: {base}.")
    if pattern.startswith("/"):  # an absolute pattern: its literal prefix is the base
        prefix, rest = _split_literal_prefix(pattern)
        base, pattern = Path(prefix or "/").resolve(), rest
    else:
        prefix, rest = _split_literal_prefix(pattern)
        if prefix:
            base, pattern = (base / prefix).resolve(), rest
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if not base.is_dir():
        return "No files found"
    found = find_files(base, pattern)
    denied = ctx.state.search.denied  # Read deny rules hide files from listings too
    if denied is not None:
        found = [f for f in found if not denied(str(base / f[0]))]
    if not found:
        return "No files found"
    found.sort(key=lambda x: (-x[1], x[0]))  # newest first; ties by path, so the order is stable
    lines = [str(base / r) for r, _ in found[:MAX_RESULTS]]
    if len(found) > MAX_RESULTS:
        lines.append(f"(Results are truncated: showing the {MAX_RESULTS} most recently modified of "
                     f"{len(found)} files. Consider a more specific path or pattern.)")
    return "\n".join(lines)
