"""Room: built-in tools (on tools.base). Owns the Grep tool's definition (description, schema); may
import tools.base, and tools.grep.* in its handler only (tools/__init__.py).

Grep: ripgrep semantics, run by `rg` (the `ripgrep` package's, a base dependency, else one on
PATH), else by a pure-Python engine (where no wheel exists; said once). One idea per module:

- search.py: one call: the choice of engine, the time limit, the tracked files (the handler);
- tracked.py: the git-tracked files the walk leaves out (searched too: never hidden);
- query.py: one call, resolved (Query), and the result both engines return (FileHits);
- rg.py: the ripgrep backend; engine.py: the pure-Python engine, with regex.py (Rust regex
  syntax -> Python `re`) and filters.py (`glob` and `type` filters);
- isolate.py: the Python engine in a forked child that can be killed;
- formatting.py: the one formatter, so the output does not depend on the engine.

What both engines do (ripgrep's defaults, plus `--no-require-git` outside a git repository):
- .gitignore, .ignore and .rgignore files in the searched directories and in their parents,
  .git/info/exclude of the enclosing repository and the global git excludes file apply, even
  outside a git repository; hidden files and directories are skipped; symlinks are not
  followed; files with a NUL byte are binary and skipped. An explicitly given file is always
  searched. A file git tracks is searched even when an ignore file names it or it is hidden
  (tracked.py).
- `glob` filters (gitignore-style, `!` to exclude) and `type` filters take precedence over
  ignore rules and hiding, exactly as in ripgrep: `glob: "*.py"` also finds `.hidden.py`.

Glob walks with the same rg (`rg --files`) or, without rg, the same Python walk on ignore.py's
one matcher: Grep and Glob hide the same files.
Tests and benchmarks force an engine with ToolState(search=SearchState(engine="rg" | "python")).

Grep never hangs: a FIFO or a device as `path` is refused (and passed over inside a tree);
each search runs in a process of its own (rg, or the Python engine in a forked child, since
Python's `re` cannot be interrupted) under a time limit (TIMEOUT_S) and is killed at the
deadline or when the call is cancelled (SIGTERM, an interrupt).
"""

from __future__ import annotations

from typing import Any

from ..base import Tool, ToolContext, ToolOutput

DESCRIPTION = """A powerful search tool built on ripgrep.

- Supports full regex syntax (e.g. "log.*Error", "function\\s+\\w+"). Pattern syntax is ripgrep's
  (not grep's): literal braces need escaping (`interface\\{\\}`).
- Filter files with glob (e.g. "*.js", "**/*.tsx", "*.{ts,tsx}") or type (e.g. "js", "py", "rust").
- output_mode: "files_with_matches" (default) lists file paths, "content" shows matching lines
  (supports -A/-B/-C context, -n line numbers, head_limit), "count" shows match counts per file.
- Respects .gitignore and skips hidden files (files git tracks are always searched). Paths under the
  working directory are shown relative to it.
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


async def _grep(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .search import grep  # the implementation, at the first call (tools/__init__.py)

    return await grep(inp, ctx)


def make_grep_tool() -> Tool:
    return Tool("Grep", DESCRIPTION, INPUT_SCHEMA, _grep, read_only=True)
