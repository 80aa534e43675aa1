"""Room: built-in tools (on tools.base). Owns Glob's implementation (tools.builtin defines the tool);
may import data types, threads, tools.base, tools.paths and tools.grep.* (rg, the tracked files, paths shown).

Glob {pattern, path?}: file paths matching a glob, newest first, relative to the working
directory (as Grep shows them; a path outside it stays absolute).

The walk is ripgrep's (`rg --files`, the rg Grep runs; tools.grep.rg), so Glob hides exactly
what Grep hides: .gitignore, .ignore, .rgignore, .git/info/exclude and the global excludes
apply, a pattern or path that starts inside an ignored directory lists it (as Grep searches it).
A pattern `**/NAME` or `NAME` is rg's filter (a file type of one glob, which rg applies after
the ignore files); any other is matched on rg's list by ignore.py's glob matcher. Without rg
(no wheel for the platform, none on PATH) the same walk runs in Python on ignore.py, the one
ignore matcher Grep's Python engine uses. Either way:
- git-tracked files an ignore file names are listed too (tools.grep.tracked: a repository's
  ignore file cannot hide a tracked file);
- hidden files match like any other (Claude Code's Glob lists them); the contents of VCS
  metadata directories (.git, .hg, .svn) are skipped unless the pattern names them;
- symlinks are not followed, and not listed (as Grep does not search them)."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path
from typing import Any

from ..ignore import DirRules, IgnoreFiles, expand_braces, glob_matcher, preload
from ..threads import run_in_worker
from .base import ToolContext, ToolError, ToolOutput
from .grep.formatting import shown_path
from .grep.rg import require_git_args, rg_output, rg_path
from .grep.tracked import tracked_hidden
from .paths import as_judged

MAX_RESULTS = 100
VCS_DIRS = (".git", ".hg", ".svn")
_MAGIC = re.compile(r"[*?\[{\\]")
_SIMPLE_NAME = re.compile(r"[^/\[\\:]+")  # one segment rg's type glob reads as ignore.py does


def _split_literal_prefix(pattern: str) -> tuple[str, str]:
    """`src/pkg/**/*.py` -> (`src/pkg`, `**/*.py`): walk only where matches can be."""
    segs = pattern.split("/")
    k = 0
    while k < len(segs) - 1 and not _MAGIC.search(segs[k]):
        k += 1
    return "/".join(segs[:k]), "/".join(segs[k:])


def _max_depth(pattern: str) -> int | None:
    """Without `**`, a match is at most this many segments deep: the walk stops there."""
    return None if "**" in pattern else max(len(p.split("/")) for p in expand_braces(pattern))


def _names_vcs(pattern: str) -> bool:
    return any(part in VCS_DIRS for part in pattern.split("/"))


def find_files(base: Path, pattern: str) -> list[str]:
    """The Python walk: relative paths of the regular files under base matching pattern."""
    match = glob_matcher(pattern)
    files = IgnoreFiles(base)
    max_depth = _max_depth(pattern)
    names_vcs = _names_vcs(pattern)
    out: list[str] = []

    def walk(d: Path, rel: str, depth: int, rules: list[DirRules]) -> None:
        rules = files.enter(d, rel, rules)
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            r = f"{rel}{e.name}"
            try:
                if e.is_symlink():
                    continue
                if e.is_dir():
                    if e.name in VCS_DIRS and not names_vcs:
                        continue
                    if (max_depth is None or depth + 1 < max_depth) and not files.check(r, True, rules):
                        walk(Path(e.path), r + "/", depth + 1, rules)
                elif e.is_file() and match(r) and not files.check(r, False, rules):
                    out.append(r)
            except OSError:
                continue

    walk(base, "", 0, files.top)
    return out


async def rg_files(rg: str, base: Path, pattern: str, sandbox: Any = None) -> list[str]:
    """rg's walk: relative paths of the files under base matching pattern."""
    args = ["--files", "--hidden", "--no-config", *require_git_args(base), "--no-messages"]
    if not _names_vcs(pattern):
        for d in VCS_DIRS:
            args += ["--glob", f"!{d}"]
    depth = _max_depth(pattern)
    if depth is not None:
        args += ["--max-depth", str(depth)]
    name = pattern[3:] if pattern.startswith("**/") else pattern
    exact = False
    if _SIMPLE_NAME.fullmatch(name) and name not in ("**", "*"):
        # a file type of one glob: rg applies it to the names, after the ignore files
        args += ["--type-add", f"lwglob:{name}", "--type", "lwglob"]
        exact = True
    out = await rg_output(rg, args, base, sandbox)
    found = out.decode("utf-8", errors="surrogateescape").splitlines()
    if exact:
        return found
    match = glob_matcher(pattern)
    return [r for r in found if match(r)]


async def glob_files(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    started = time.monotonic()
    base, pattern = _base_and_pattern(inp, ctx)
    if not base.is_dir():
        return ToolOutput("No files found", details=_details([], 0, started))
    engine = ctx.state.search.engine  # tests and benchmarks pick an engine
    rg = rg_path() if engine in ("auto", "rg") else None
    if engine == "rg" and rg is None:
        raise ToolError("rg is not installed")
    shown, total = _listing(await _found(base, pattern, rg, ctx), base, ctx)
    out = "\n".join(shown) if shown else "No files found"
    if total > len(shown):
        out += (f"\n(Results are truncated: showing the {MAX_RESULTS} most recently modified of "
                f"{total} files. Consider a more specific path or pattern.)")
    if rg is None and engine == "auto":
        from .grep.search import fallback_note

        note = fallback_note()
        if note:
            out += f"\n\n{note}"
    return ToolOutput(out, details=_details(shown, total, started))


def _details(shown: list[str], total: int, started: float) -> dict[str, Any]:
    """Glob's structured output (Claude Code's GlobOutput): the paths as listed to the model."""
    return {"filenames": shown, "durationMs": round((time.monotonic() - started) * 1000), "numFiles": len(shown),
            "truncated": total > len(shown), "totalMatches": total, "countIsComplete": True}


def _base_and_pattern(inp: dict[str, Any], ctx: ToolContext) -> tuple[Path, str]:
    """The directory to list from and the pattern under it (a literal prefix of the pattern,
    or an absolute pattern's, moves into the base)."""
    pattern: str = inp["pattern"].strip()
    if not pattern:
        raise ToolError("pattern is empty.")
    given = inp.get("path") or ""
    lexical = ctx.cwd / os.path.expanduser(given) if given else ctx.cwd
    base = lexical.resolve()
    if not base.exists():
        raise ToolError(f"Path does not exist: {base}. Current working directory: {ctx.cwd}.")
    if not base.is_dir():
        raise ToolError(f"Path is not a directory: {base}.")
    prefix, rest = _split_literal_prefix(pattern)
    if pattern.startswith("/"):  # an absolute pattern: its literal prefix is the base
        lexical, pattern = Path(prefix or "/"), rest
    elif prefix:
        lexical, pattern = lexical / prefix, rest
    # what the gate judged (the pattern's literal directory under the path), checked where it leads now
    base = as_judged(lexical, given, ctx)
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return base, pattern


async def _found(base: Path, pattern: str, rg: str | None, ctx: ToolContext) -> list[str]:
    """The matching files under base (relative paths): rg's walk (or the Python one), and the
    tracked files an ignore file hides, which are never hidden."""
    tracked = asyncio.ensure_future(tracked_hidden(base, ctx.sandbox))  # git answers while the walk runs
    try:
        if rg is not None:
            found = await rg_files(rg, base, pattern, ctx.sandbox)
        else:
            preload()  # here, not in the thread: a Python Grep may fork meanwhile (tools.grep.isolate)
            found = await run_in_worker(find_files, base, pattern)
        hidden = await tracked
    finally:
        tracked.cancel()
    if hidden:
        match = glob_matcher(pattern)
        have = set(found)
        found += [r for r in hidden if r not in have and match(r)]
    return found


def _listing(found: list[str], base: Path, ctx: ToolContext) -> tuple[list[str], int]:
    """The files newest first (what Read's deny rules hide left out), at most MAX_RESULTS, as
    shown; and how many there are in all."""
    b = str(base)
    paths = [os.path.join(b, r) for r in found]
    denied = ctx.state.search.denied  # Read deny rules hide files from listings too
    if denied is not None:
        paths = [p for p in paths if not denied(p)]
    dated = sorted((-mtime, p) for p in paths if (mtime := _mtime_ns(p)) is not None)  # newest first; ties by path
    cwd = ctx.cwd.resolve()
    return [shown_path(p, cwd) for _, p in dated[:MAX_RESULTS]], len(dated)


def _mtime_ns(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:  # gone since the walk
        return None
