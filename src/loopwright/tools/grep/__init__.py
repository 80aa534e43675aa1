"""Room: built-in tools (on tools.base). Owns the Grep tool (its schema, the choice of engine, the
time limit); may import data types, tools.base and tools.paths.

Grep: ripgrep semantics, run by `rg` when it is installed, else by a pure-Python engine. One
idea per module:

- query.py: one call, resolved (Query), and the result both engines return (FileHits);
- rg.py: the ripgrep backend; engine.py: the pure-Python engine, with regex.py (Rust regex
  syntax -> Python `re`) and filters.py (`glob` and `type` filters);
- isolate.py: the Python engine in a forked child that can be killed;
- formatting.py: the one formatter, so the output does not depend on the engine.

What both engines do (ripgrep's defaults plus `--no-require-git`):
- .gitignore, .ignore and .rgignore files in the searched directories and in their parents,
  .git/info/exclude of the enclosing repository and the global git excludes file apply, even
  outside a git repository; hidden files and directories are skipped; symlinks are not
  followed; files with a NUL byte are binary and skipped. An explicitly given file is always
  searched.
- `glob` filters (gitignore-style, `!` to exclude) and `type` filters take precedence over
  ignore rules and hiding, exactly as in ripgrep: `glob: "*.py"` also finds `.hidden.py`.

Ignore files and `glob` filters are read by the one matcher of ignore.py (on pathspec), which
Glob uses too: both hide the same files.
Tests and benchmarks force an engine with ToolState(search=SearchState(engine="rg" | "python")).

Grep never hangs: a FIFO or a device as `path` is refused (and passed over inside a tree);
each search runs in a process of its own (rg, or the Python engine in a forked child, since
Python's `re` cannot be interrupted) under a time limit (TIMEOUT_S) and is killed at the
deadline or when the call is cancelled (SIGTERM, an interrupt).
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any

from ..base import Tool, ToolContext, ToolError
from .engine import run_python
from .filters import TYPES, override_matcher, type_matcher
from .formatting import MAX_OUTPUT_CHARS, format_hits
from .isolate import run_python_isolated
from .query import MAX_COLUMNS, MAX_LINES, FileHits, Query, build_query, split_globs
from .regex import can_match_newline, compile_pattern, translate_regex
from .rg import parse_rg, rg_args, rg_path, run_rg

__all__ = [
    "DESCRIPTION", "INPUT_SCHEMA", "MAX_COLUMNS", "MAX_LINES", "MAX_OUTPUT_CHARS", "TIMEOUT_S", "TYPES", "FileHits",
    "Query", "build_query", "can_match_newline", "compile_pattern", "format_hits", "grep", "make_grep_tool",
    "override_matcher", "parse_rg", "rg_args", "rg_path", "run_python", "run_python_isolated", "run_rg", "search",
    "split_globs", "translate_regex", "type_matcher",
]

TIMEOUT_S = 60.0  # a search that takes longer ends with an error (catastrophic regex, huge files)

DESCRIPTION = """A powerful search tool built on ripgrep.

- Supports full regex syntax (e.g. "log.*Error", "function\\s+\\w+"). Pattern syntax is ripgrep's
  (not grep's): literal braces need escaping (`interface\\{\\}`).
- Filter files with glob (e.g. "*.js", "**/*.tsx", "*.{ts,tsx}") or type (e.g. "js", "py", "rust").
- output_mode: "files_with_matches" (default) lists file paths, "content" shows matching lines
  (supports -A/-B/-C context, -n line numbers, head_limit), "count" shows match counts per file.
- Respects .gitignore and skips hidden files. Paths under the working directory are shown relative to it.
- By default patterns match within single lines; set multiline: true for patterns that span lines
  (e.g. `struct \\{[\\s\\S]*?field`), where `.` also matches newlines."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "The regular expression pattern to search for in file contents"},
        "path": {"type": "string",
                 "description": "File or directory to search in (rg PATH). Defaults to current working directory."},
        "glob": {"type": "string",
                 "description": 'Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob'},
        "type": {"type": "string",
                 "description": "File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than glob for standard file types."},
        "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"],
                        "description": 'Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), "files_with_matches" shows file paths (supports head_limit), "count" shows match counts (supports head_limit). Defaults to "files_with_matches".'},
        "-i": {"type": "boolean", "description": "Case insensitive search (rg -i)"},
        "-n": {"type": "boolean",
               "description": 'Show line numbers in output (rg -n). Requires output_mode: "content", ignored otherwise. Defaults to true.'},
        "-A": {"type": "integer", "minimum": 0,
               "description": 'Number of lines to show after each match (rg -A). Requires output_mode: "content", ignored otherwise.'},
        "-B": {"type": "integer", "minimum": 0,
               "description": 'Number of lines to show before each match (rg -B). Requires output_mode: "content", ignored otherwise.'},
        "-C": {"type": "integer", "minimum": 0,
               "description": 'Number of lines to show before and after each match (rg -C). Requires output_mode: "content", ignored otherwise.'},
        "head_limit": {"type": "integer", "minimum": 1,
                       "description": 'Limit output to first N lines/entries, equivalent to "| head -N". Works across all output modes.'},
        "multiline": {"type": "boolean",
                      "description": "Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


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


def make_grep_tool() -> Tool:
    return Tool("Grep", DESCRIPTION, INPUT_SCHEMA, grep, read_only=True)
