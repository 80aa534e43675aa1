"""Room: built-in tools (on tools.base). Owns Grep; may import data types, tools.base and tools.paths.

Grep: ripgrep semantics, run by `rg` when it is installed, else by a pure-Python engine.

Both engines return the same structured result (file -> matching and context lines), and one
formatter turns it into text, so the output does not depend on the engine. Files are sorted
by path (Claude Code sorts files_with_matches by mtime; a path order is deterministic).

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
deadline or when the call is cancelled (SIGTERM, an interrupt). The Python engine reads files
in blocks, so a 2 GB file costs bounded memory (a multiline pattern needs the whole file:
files over MAX_MULTILINE_BYTES are refused).

Where the Python engine differs from rg (documented limits):
- Patterns run on Python `re`, after translating Rust syntax: `(?<name>` -> `(?P<name>`,
  `\\z` -> `\\Z`, POSIX classes `[[:alpha:]]`. Unicode classes `\\p{..}` are refused. Python
  accepts look-around and backreferences, which rg (without PCRE2) rejects.
- Files are decoded as UTF-8 (invalid bytes become U+FFFD), UTF-16 with a BOM is transcoded;
  rg matches invalid bytes differently. A NUL byte anywhere makes a file binary (rg only
  looks at what it has read so far, so it can report matches before a late NUL).
- The global excludes file is `$XDG_CONFIG_HOME/git/ignore` (or ~/.config/git/ignore) or
  `core.excludesFile` from ~/.gitconfig; other git config locations are not read.
- Only the common file types are known (see TYPES); others are an error.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ignore import DirRules, IgnoreFiles, IgnoreRules, segment_regex
from .base import Tool, ToolContext, ToolError
from .paths import resolve

MAX_COLUMNS = 500  # content lines longer than this are cut (Claude Code passes rg --max-columns 500)
MAX_OUTPUT_CHARS = 30_000
MAX_LINES = 100_000  # matching + context lines collected before giving up
MAX_RG_BYTES = 256 * 1024 * 1024
TIMEOUT_S = 60.0  # a search that takes longer ends with an error (catastrophic regex, huge files)
READ_BLOCK = 1 << 20  # the Python engine reads files in blocks of this many bytes ...
MAX_LINE_CHARS = 1 << 24  # ... and searches a line longer than this in pieces (bounded memory)
MAX_MULTILINE_BYTES = 64 << 20  # a multiline pattern needs the whole file: larger ones are refused
MAX_FD = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 16

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

# ripgrep 13's definitions of the common types (`rg --type-list`).
TYPES: dict[str, list[str]] = {
    "asm": ["*.S", "*.asm", "*.s"], "c": ["*.[chH]", "*.[chH].in", "*.cats"],
    "clojure": ["*.clj", "*.cljc", "*.cljs", "*.cljx"], "cmake": ["*.cmake", "CMakeLists.txt"],
    "config": ["*.cfg", "*.conf", "*.config", "*.ini"],
    "cpp": ["*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc",
            "*.cc.in", "*.hh", "*.hh.in", "*.inl"],
    "cs": ["*.cs"], "csharp": ["*.cs"], "css": ["*.css", "*.scss"], "csv": ["*.csv"], "dart": ["*.dart"],
    "docker": ["*Dockerfile*"], "elixir": ["*.eex", "*.ex", "*.exs"], "erlang": ["*.erl", "*.hrl"],
    "go": ["*.go"], "h": ["*.h", "*.hpp"], "haskell": ["*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"],
    "html": ["*.ejs", "*.htm", "*.html"], "java": ["*.java", "*.jsp", "*.jspx", "*.properties"],
    "jinja": ["*.j2", "*.jinja", "*.jinja2"], "js": ["*.js", "*.jsx", "*.vue"],
    "json": ["*.json", "composer.lock"], "jsonl": ["*.jsonl"], "julia": ["*.jl"], "kotlin": ["*.kt", "*.kts"],
    "less": ["*.less"], "lock": ["*.lock", "package-lock.json"], "log": ["*.log"], "lua": ["*.lua"],
    "make": ["*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in",
             "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"],
    "markdown": ["*.markdown", "*.md", "*.mdown", "*.mkdn"], "md": ["*.markdown", "*.md", "*.mdown", "*.mkdn"],
    "nix": ["*.nix"], "ocaml": ["*.ml", "*.mli", "*.mll", "*.mly"],
    "perl": ["*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"],
    "php": ["*.php", "*.php3", "*.php4", "*.php5", "*.phtml"], "protobuf": ["*.proto"], "py": ["*.py"],
    "r": ["*.R", "*.Rmd", "*.Rnw", "*.r"], "readme": ["*README", "README*"], "rst": ["*.rst"],
    "ruby": ["*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"], "rust": ["*.rs"],
    "sass": ["*.sass", "*.scss"], "scala": ["*.sbt", "*.scala"],
    "sh": ["*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh",
           ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login",
           ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc",
           "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout",
           "zprofile", "zshenv", "zshrc"],
    "sql": ["*.psql", "*.sql"], "svg": ["*.svg"], "swift": ["*.swift"],
    "tex": ["*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"], "tf": ["*.tf"],
    "toml": ["*.toml", "Cargo.lock"], "ts": ["*.ts", "*.tsx"], "txt": ["*.txt"],
    "xml": ["*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"],
    "yaml": ["*.yaml", "*.yml"], "zig": ["*.zig"],
}


# --- the query and the engines' common result ------------------------------------------

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


# --- ripgrep -------------------------------------------------------------------------------

def rg_path() -> str | None:
    return shutil.which("rg")


def rg_args(q: Query) -> tuple[list[str], Path]:
    """The rg command line and the directory to run it in."""
    args = ["--no-config", "--no-require-git", "--color=never", "--no-messages"]
    if q.ignore_case:
        args.append("-i")
    if q.multiline:
        args += ["-U", "--multiline-dotall"]
    for g in q.globs:
        args += ["--glob", g]
    if q.type:
        args += ["--type", q.type]
    if q.mode == "files_with_matches":
        args.append("-l")
    elif q.mode == "count":
        args += ["-c", "--with-filename"]
    else:
        args.append("--json")
        if q.before:
            args += ["-B", str(q.before)]
        if q.after:
            args += ["-A", str(q.after)]
    # Globs are matched relative to rg's working directory: run it in the search root.
    if q.root.is_dir():
        cwd, target = q.root, "."
    else:
        cwd, target = q.root.parent, q.root.name
    return args + ["-e", q.pattern, "--", target], cwd


def _wire_text(d: dict[str, Any]) -> str:
    if "text" in d:
        return str(d["text"])
    return base64.b64decode(d.get("bytes", "")).decode("utf-8", errors="replace")


def parse_rg(q: Query, out: bytes, cwd: Path) -> list[FileHits]:
    def absolute(p: str) -> str:
        return os.path.normpath(os.path.join(cwd, p))

    hits: dict[str, FileHits] = {}
    if q.mode == "files_with_matches":
        return [FileHits(absolute(p), 1) for p in out.decode("utf-8", errors="replace").splitlines() if p]
    if q.mode == "count":
        res = []
        for line in out.decode("utf-8", errors="replace").splitlines():
            p, _, n = line.rpartition(":")
            if p:
                res.append(FileHits(absolute(p), int(n)))
        return res
    n_lines = 0
    for raw in out.splitlines():
        ev = json.loads(raw)
        kind = ev.get("type")
        if kind not in ("match", "context"):
            continue
        data = ev["data"]
        path = absolute(_wire_text(data["path"]))
        fh = hits.setdefault(path, FileHits(path))
        text = _wire_text(data["lines"])
        if text.endswith("\n"):
            text = text[:-1]
        first = int(data["line_number"])
        for i, line in enumerate(text.split("\n")):
            prev = fh.lines.get(first + i)
            fh.lines[first + i] = (line, kind == "match" or (prev is not None and prev[1]))
            n_lines += prev is None
        if kind == "match":
            fh.count += 1
        if n_lines > MAX_LINES:
            raise _too_many()
    # rg -U can print context for a file without any match (`^$` on "A\n"): not a hit.
    return [fh for fh in hits.values() if fh.count]


def _too_many() -> ToolError:
    return ToolError(f"Too many matching lines (over {MAX_LINES}). Narrow the pattern, path, glob or "
                     "type, or use output_mode files_with_matches / count.")


async def run_rg(q: Query, rg: str, sandbox: Any = None) -> list[FileHits]:
    args, cwd = rg_args(q)
    argv, env = [rg, *args], None
    fds: tuple[int, ...] = ()
    if sandbox is not None:  # the OS sandbox is on (sandbox.py): rg sees what Bash would see
        w = sandbox.wrap(argv, cwd, None, network=False)  # rg needs no proxy bridge
        argv, env, fds = w.argv, w.env, w.pass_fds
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, pass_fds=fds,
        )
    finally:
        for fd in fds:
            os.close(fd)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        chunks: list[bytes] = []
        size = 0
        err_task = asyncio.ensure_future(proc.stderr.read())
        while chunk := await proc.stdout.read(1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RG_BYTES:
                raise _too_many()
        err = await err_task
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if code == 2 and not chunks:
        msg = err.decode("utf-8", errors="replace").strip()
        raise ToolError(f"rg error: {msg}" if msg else "rg failed")
    return parse_rg(q, b"".join(chunks), cwd)


# --- the pure-Python engine ----------------------------------------------------------------

_POSIX = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
          "space": r" \t\n\r\f\v", "xdigit": "0-9A-Fa-f", "word": r"\w", "blank": r" \t",
          "punct": r"!-/:-@\[-`{-~", "cntrl": r"\x00-\x1f\x7f", "print": r" -~", "graph": r"!-~"}


def translate_regex(p: str) -> str:
    """Rust regex syntax -> Python `re` syntax, for the differences that matter in practice."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            nxt = p[i + 1]
            if nxt in "pP":
                raise ToolError("Unicode classes (\\p{...}) are not supported by the Python grep engine "
                                "(ripgrep is not installed).")
            if nxt == "z" and not in_class:
                out.append(r"\Z")
            else:
                out.append(p[i:i + 2])
            i += 2
            continue
        if in_class:
            m = re.match(r"\[:(\^?)([a-z]+):\]", p[i:])
            if m and m.group(2) in _POSIX:
                if m.group(1):
                    raise ToolError("negated POSIX classes ([[:^x:]]) are not supported by the Python grep engine.")
                out.append(_POSIX[m.group(2)])
                i += m.end()
                continue
            if c == "]":
                in_class = False
            elif c == "[":
                out.append("\\[")
                i += 1
                continue
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            # a `]` (after an optional `^`) right at the start is a literal
            if i < len(p) and p[i] == "^":
                out.append("^")
                i += 1
            if i < len(p) and p[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if p.startswith("(?<", i) and i + 3 < len(p) and p[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


_NEWLINE_CAPABLE = re.compile(r"\\n|\\s|\\W|\\D|\[\^|\\x0[aA]|\\012|\\x\{0*[aA]\}")


def can_match_newline(pattern: str, dotall: bool) -> bool:
    """Heuristic for rg's "this regex can match a line terminator" (only then do -U counts count
    matches rather than lines)."""
    return bool(_NEWLINE_CAPABLE.search(pattern)) or (dotall and re.search(r"(?<!\\)\.", pattern) is not None)


def compile_pattern(q: Query) -> re.Pattern[str]:
    if not q.multiline and re.search(r"(?<!\\)(?:\\\\)*\\n", q.pattern):
        raise ToolError('rg error: the literal "\\n" is not allowed in a regex; set multiline: true to match across lines.')
    flags = re.MULTILINE
    if q.ignore_case:
        flags |= re.IGNORECASE
    if q.multiline:
        flags |= re.DOTALL
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(translate_regex(q.pattern), flags)
    except re.error as e:
        raise ToolError(f"regex parse error: {e} (pattern {q.pattern!r})") from e


def override_matcher(globs: list[str]) -> Callable[[str, bool], bool | None] | None:
    """rg's --glob overrides: gitignore-style globs on the path relative to the search root,
    with the meaning flipped (a plain glob whitelists, `!glob` ignores).
    Returns match(rel, is_dir) -> True (whitelisted), False (ignored) or None (no opinion)."""
    if not globs:
        return None
    gi = IgnoreRules(globs)
    has_white = any(not neg for _, neg in gi.rules)

    def match(rel: str, is_dir: bool) -> bool | None:
        res = gi.check(rel, is_dir)
        if res is not None:
            return res  # "ignored" by a plain glob = whitelisted by the override
        if has_white and not is_dir:
            return False
        return None

    return match


def type_matcher(name: str | None) -> Callable[[str], bool] | None:
    if not name:
        return None
    globs = TYPES.get(name)
    if globs is None:
        raise ToolError(f"rg error: unrecognized file type: {name}. Known types: {', '.join(sorted(TYPES))}.")
    rx = re.compile("^(?:" + "|".join(segment_regex(g).pattern for g in globs) + ")$", re.DOTALL)
    return lambda base: rx.match(base) is not None


def _decode(data: bytes, explicit: bool = False) -> str | None:
    """File text, or None for a binary file (an explicitly named file is searched anyway, as rg does)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    if b"\0" in data and not explicit:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def _matched_lines(text: str, rx: re.Pattern[str], q: Query, multi: bool) -> tuple[list[int], int]:
    """The matching lines of a text (1-based, increasing) and the count (line-by-line
    semantics unless `multi`)."""
    n_text = len(text)
    matched: list[int] = []
    count = 0
    if multi:
        line, at = 1, 0
        for mm in rx.finditer(text):
            s, e = mm.start(), mm.end()
            if s == e and s >= n_text and (n_text == 0 or text.endswith("\n")):
                break
            line += text.count("\n", at, s)
            at = s
            last = line + text.count("\n", s, max(e - 1, s))
            count += 1
            for n in range(line, last + 1):
                if not matched or matched[-1] < n:
                    matched.append(n)
            if q.mode == "files_with_matches":
                break
    else:
        pos, line, at = 0, 1, 0
        while pos <= n_text:
            m = rx.search(text, pos)
            if m is None:
                break
            ls = text.rfind("\n", 0, m.start()) + 1
            if ls >= n_text and (n_text == 0 or text.endswith("\n")):
                break  # the empty "line" after a final newline is not a line
            le = text.find("\n", m.start())
            le = n_text if le < 0 else le
            line += text.count("\n", at, ls)
            at = ls
            if rx.search(text[ls:le]):  # the match must hold within the line alone
                matched.append(line)
                count += 1
                if q.mode == "files_with_matches":
                    break
            pos = le + 1
    return matched, count


def _keep(line: str) -> str:
    """A line as stored for the output: the formatter cuts at MAX_COLUMNS anyway."""
    return line if len(line) <= MAX_COLUMNS + 2 else line[:MAX_COLUMNS + 2]


def search_text(text: str, rx: re.Pattern[str], q: Query, multi: bool) -> FileHits | None:
    """Matches in one file's whole text."""
    matched, count = _matched_lines(text, rx, q, multi)
    if not matched:
        return None
    fh = FileHits("", count)
    if q.mode == "content":
        lines = text.split("\n")
        if lines and lines[-1] == "" and text.endswith("\n"):
            lines.pop()
        keep: set[int] = set()
        for n in matched:
            keep.update(range(max(1, n - q.before), min(len(lines), n + q.after) + 1))
        hit = set(matched)
        fh.lines = {n: (_keep(lines[n - 1]), n in hit) for n in sorted(keep)}
    return fh


class _Stream:
    """Line-by-line search of a file read in blocks of whole lines: memory stays bounded by the
    block size (a line longer than MAX_LINE_CHARS is searched in pieces) and the hits kept."""

    def __init__(self, rx: re.Pattern[str], q: Query) -> None:
        self.rx, self.q = rx, q
        self.fh = FileHits("")
        self.next_line = 1  # the number of the next block's first line
        self.recent: deque[tuple[int, str]] = deque(maxlen=q.before or 1)  # before-context carried over
        self.after_left = 0  # after-context lines still owed to the next block
        self.last_counted = 0

    def _add(self, n: int, line: str, is_match: bool) -> None:
        prev = self.fh.lines.get(n)
        if prev is None and len(self.fh.lines) >= MAX_LINES:
            raise _too_many()
        self.fh.lines[n] = (prev[0] if prev else _keep(line), is_match or (prev is not None and prev[1]))

    def feed(self, block: str) -> bool:
        """Search one block of whole lines (the last may be cut short). True: done with the file."""
        q, first = self.q, self.next_line
        matched, _ = _matched_lines(block, self.rx, q, False)
        self.next_line = first + block.count("\n")
        for m in matched:
            if first + m - 1 != self.last_counted:  # a line cut in pieces counts once
                self.fh.count += 1
                self.last_counted = first + m - 1
        if matched and q.mode == "files_with_matches":
            return True
        if q.mode != "content":
            return False
        lines = block.split("\n")
        if lines[-1] == "":
            lines.pop()
        for i in range(min(self.after_left, len(lines))):
            self._add(first + i, lines[i], False)
        self.after_left = max(0, self.after_left - len(lines))
        for m in matched:
            i = m - 1
            for n, line in self.recent:
                if first + i - q.before <= n:
                    self._add(n, line, False)
            for k in range(max(0, i - q.before), min(len(lines), i + q.after + 1)):
                self._add(first + k, lines[k], k == i)
            self.after_left = max(self.after_left, i + q.after - (len(lines) - 1))
        if q.before:
            self.recent.extend((first + k, lines[k]) for k in range(max(0, len(lines) - q.before), len(lines)))
        return False


def search_file(path: str, rx: re.Pattern[str], q: Query, multi: bool, explicit: bool = False) -> FileHits | None:
    """One file's hits, or None (no match, binary, unreadable). Not a regular file (a FIFO that
    replaced it since the walk, a device): skipped, never opened for a blocking read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with open(fd, "rb", closefd=True) as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = f.read(READ_BLOCK)
        utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff"))
        if b"\0" in head and not explicit and not utf16:
            return None
        if multi:  # a pattern across lines needs the whole text
            rest = f.read(MAX_MULTILINE_BYTES + 1 - len(head)) if len(head) == READ_BLOCK else b""
            if len(head) + len(rest) > MAX_MULTILINE_BYTES:
                raise ToolError(f"{path} is larger than {MAX_MULTILINE_BYTES >> 20} MiB, too large for a multiline "
                                "search by the Python engine: search it without multiline, or install ripgrep.")
            text = _decode(head + rest, explicit)
            return search_text(text, rx, q, True) if text is not None else None
        decoder = codecs.getincrementaldecoder("utf-16" if utf16 else "utf-8-sig")("strict" if utf16 else "replace")
        stream = _Stream(rx, q)
        pending: list[str] = []  # the start of a line not yet ended (joined once, not per block)
        pending_len = 0
        data = head
        while True:
            final = not data
            if data and b"\0" in data and not explicit and not utf16:
                return None  # binary (the whole file is, as for a NUL in the head)
            try:
                text = decoder.decode(data, final)
            except UnicodeDecodeError:
                return None
            cut = len(text) if final else text.rfind("\n") + 1
            if cut == 0 and pending_len + len(text) > MAX_LINE_CHARS:
                cut = len(text)  # an endless line: search it in pieces
            if cut or final:
                block = "".join([*pending, text[:cut]])
                pending, pending_len = [text[cut:]], len(text) - cut
                if block and stream.feed(block):
                    break
            else:
                pending.append(text)
                pending_len += len(text)
            if final:
                break
            data = f.read(READ_BLOCK)
    fh = stream.fh
    return fh if fh.count else None


def run_python(q: Query) -> list[FileHits]:
    rx = compile_pattern(q)
    multi = q.multiline and can_match_newline(q.pattern, True)
    if q.type:
        type_matcher(q.type)  # unknown types are an error even for a single file
    results: list[FileHits] = []
    total_lines = 0

    def search_one(path: str, explicit: bool = False) -> None:
        nonlocal total_lines
        fh = search_file(path, rx, q, multi, explicit)
        if fh is not None:
            fh.path = path
            results.append(fh)
            total_lines += len(fh.lines)
            if total_lines > MAX_LINES:
                raise _too_many()

    if not q.root.is_dir():
        search_one(str(q.root), explicit=True)  # an explicit file is searched whatever the filters say
        return results

    overrides = override_matcher(q.globs)
    types = type_matcher(q.type)
    files = IgnoreFiles(q.root)  # the one ignore matcher (ignore.py), as Glob uses it

    def ignored(rel: str, name: str, is_dir: bool, rules: list[DirRules]) -> bool:
        if overrides is not None:
            o = overrides(rel, is_dir)
            if o is not None:
                return not o
        res = files.check(rel, is_dir, rules)
        if res:
            return True
        white = res is False
        if types is not None and not is_dir:
            if not types(name):
                return True
            white = True
        return not white and name.startswith(".")

    def walk(d: str, rel: str, rules: list[DirRules]) -> None:
        rules = files.enter(d, rel, rules)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            r = rel + e.name
            try:
                if e.is_symlink():
                    continue
                if e.is_dir():
                    if not ignored(r, e.name, True, rules):
                        walk(e.path, r + "/", rules)
                elif e.is_file() and not ignored(r, e.name, False, rules):
                    search_one(e.path)
            except OSError:
                continue

    walk(str(q.root), "", files.top)
    return results


# --- formatting ----------------------------------------------------------------------------

def _show(path: str, cwd: Path) -> str:
    p = Path(path)
    try:
        return p.relative_to(cwd).as_posix()
    except ValueError:
        return path


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
    hits = sorted(hits, key=lambda h: h.path)
    cwd = cwd.resolve()
    limit = q.head_limit
    too_long = ("(output truncated at {} characters: {} more {} not shown; narrow the search or use "
                "head_limit)")
    if q.mode == "files_with_matches":
        if not hits:
            return "No files found"
        names = [_show(h.path, cwd) for h in hits]
        shown, cut = _fit(names[:limit] if limit else names)
        more = f" (showing the first {len(shown)})" if len(shown) < len(names) else ""
        tail = "\n" + too_long.format(MAX_OUTPUT_CHARS, cut, "files") if cut else ""
        return f"Found {len(names)} file{'s' if len(names) != 1 else ''}{more}\n" + "\n".join(shown) + tail
    if q.mode == "count":
        if not hits:
            return "No matches found"
        rows = [f"{_show(h.path, cwd)}:{h.count}" for h in hits]
        shown, _ = _fit(rows[:limit] if limit else rows)
        total = sum(h.count for h in hits)
        note = f" (showing the first {len(shown)} files)" if len(shown) < len(rows) else ""
        return "\n".join(shown) + f"\n\nFound {total} total occurrences across {len(rows)} files.{note}"
    out: list[str] = []
    context = q.before > 0 or q.after > 0
    for h in hits:
        name = _show(h.path, cwd)
        prev: int | None = None
        for n, (text, is_match) in sorted(h.lines.items()):
            if context and out and (prev is None or n != prev + 1):
                out.append("--")
            sep = ":" if is_match else "-"
            out.append(f"{name}{sep}{n}{sep}{_cut(text)}" if q.line_numbers else f"{name}{sep}{_cut(text)}")
            prev = n
    if not out:
        return "No matches found"
    notes = []
    if limit and len(out) > limit:
        notes.append(f"(output limited to the first {limit} of {len(out)} lines by head_limit)")
        out = out[:limit]
    out, cut = _fit(out)
    if cut:
        notes.append(too_long.format(MAX_OUTPUT_CHARS, cut, "lines"))
    return "\n".join([*out, *notes])


# --- the tool ------------------------------------------------------------------------------

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


async def run_python_isolated(q: Query) -> list[FileHits]:
    """run_python in a forked child: Python's `re` cannot be interrupted (a catastrophic pattern
    holds the GIL), but a process can be killed. The child sends its hits back pickled."""
    import pickle  # before the fork, for both sides (a Python grep is rarer than a run)

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
