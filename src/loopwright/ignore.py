"""Room: ignore (beside the data types; imports nothing of loopwright's, pathspec lazily). Owns the one ignore and glob
matcher: gitignore-style rules and the ignore files that apply to a walk (Grep and Glob), the
Glob tool's patterns, one path segment's glob (Grep's file types, the shell analysis), and the
gate's path patterns. Every glob becomes a `Wild` (or `segment_regex`), so Grep, Glob and the gate agree.

Patterns come from repositories (.gitignore lines, a project's deny rules) and from the model, so
matching is polynomial on any pattern. pathspec decides what a line is (a comment, a negation, an
invalid or dropped pattern); the line then becomes a regex of its own make, never pathspec's of
many `[^/]*` (Python's backtracking takes exponential time on a path such a regex does not match):
within a segment the fixed-width chunks between stars, and across segments the groups between
`**`, each go to their leftmost fit in an atomic group (the leftmost place leaves the most room
for the rest, so nothing is retried). Unlike pathspec's regex, a `[!x]` class never matches the
`/` between segments (as git), and `*/` or `**/` hide every directory (as git and ripgrep).

Two ways of matching a gitignore rule:
- `IgnoreRules.check` (walks): the rule must match the path itself, never a path under a
  matched directory, because the walk prunes ignored directories instead. The difference shows
  when a walk starts inside an ignored directory: `.venv/` in a parent's .gitignore does not hide
  `.venv/lib/x.py` for a search of `.venv/lib` (as ripgrep).
- `path_spec(...).covers` (the gate's rules): a path inside a matched directory is matched too.

Who uses it (issue 44): Grep and Glob walk with ripgrep (`rg`, the `ripgrep` wheel's), whose
ignore files are ripgrep's own; this matcher walks for them only where rg is missing (their
Python fallback), and is always the gate's path rules, Grep's `glob`/`type` filters on the
tracked files an ignore file names, and Glob's patterns that are not one name. It stays hand-
written: `ignore-python` (bindings of ripgrep's `ignore` crate) offers a walker only, no matcher
to ask about one path, so it could replace neither the gate's rules nor `check`.

The ignore files of a walk (`IgnoreFiles`), as ripgrep reads them with --no-require-git:
.rgignore, .ignore and .gitignore in the walked directories and their parents, the enclosing
repository's .git/info/exclude and the global git excludes file. Any .rgignore match beats any
.ignore match, which beats .gitignore, then .git/info/exclude, then the global excludes; within
a kind the deepest directory wins; .gitignore files above the repository's root do not apply.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

MAX_BRACES = 1024  # alternatives one pattern may expand to ...
MAX_BRACE_CHARS = 1 << 16  # ... and their characters in all (each becomes a regex to compile)
MAX_BRACE_GROUPS = 64  # `{` one pattern may hold to be expanded at all (more: the pattern as written)


def expand_braces(pattern: str) -> list[str]:
    """`a.{py,pyi}` -> [`a.py`, `a.pyi`] (nested braces work; unbalanced ones stay literal). The
    first MAX_BRACES alternatives (or MAX_BRACE_CHARS characters), and no more are built: `{a,b}`
    forty times is 2**40; a pattern of more than MAX_BRACE_GROUPS braces is taken as written."""
    if pattern.count("{") > MAX_BRACE_GROUPS:
        return [pattern]
    out: list[str] = []
    size = 0
    for alt in _braces(pattern, 0):
        out.append(alt)
        size += len(alt)
        if len(out) >= MAX_BRACES or size >= MAX_BRACE_CHARS:
            break
    return out


def _braces(pattern: str, at: int) -> Iterator[str]:
    """The alternatives of pattern, lazily (the caller stops early); nothing before `at` is a group."""
    depth = 0
    start = -1
    for i in range(at, len(pattern)):
        c = pattern[i]
        if c == "\\":
            continue
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                inner = pattern[start + 1:i]
                parts, d, cur = [], 0, ""
                for ch in inner:
                    if ch == "," and d == 0:
                        parts.append(cur)
                        cur = ""
                        continue
                    d += ch == "{"
                    d -= ch == "}"
                    cur += ch
                parts.append(cur)
                if len(parts) == 1:  # `{x}`: not an alternation
                    continue
                head, tail = pattern[:start], pattern[i + 1:]
                for p in parts:
                    yield from _braces(head + p + tail, start)
                return
    yield pattern


# --- one segment --------------------------------------------------------------------------------

def _segment_source(seg: str) -> str | None:
    """A segment glob as a regex that runs in polynomial time: split at the stars into chunks of
    fixed width (a literal, `?` or a `[...]` class is one character), the first chunk at the start,
    each middle one at its leftmost place (an atomic group: never retried), the last at the end.
    pathspec's reading of escapes and classes; None for an unclosed `[` (git drops the pattern);
    raises ValueError on a trailing backslash."""
    chunks: list[list[str]] = [[]]  # lists of regex pieces (no quadratic string building)
    i, n, star = 0, len(seg), False
    while i < n:
        c = seg[i]
        i += 1
        if c == "*":
            if not star:  # a run of stars is one star
                chunks.append([])
            star = True
            continue
        star = False
        if c == "\\":
            if i == n:
                raise ValueError(f"Escape character found with no next character to escape: {seg!r}")
            chunks[-1].append(re.escape(seg[i]))
            i += 1
        elif c == "?":
            chunks[-1].append("[^/]")
        elif c == "[":
            j = i
            if j < n and seg[j] in "!^":
                j += 1
            if j < n and seg[j] == "]":
                j += 1
            while j < n and seg[j] != "]":
                j += 1
            if j >= n:
                return None
            neg = seg[i] in "!^"
            cls = "[" + ("^" if neg else "") + seg[i + neg:j + 1].replace("\\", "\\\\")
            chunks[-1].append("(?!/)" + cls)  # never the `/` between segments (as git)
            i = j + 1
        else:
            chunks[-1].append(re.escape(c))
    parts = ["".join(c) for c in chunks]
    if len(parts) == 1:
        return parts[0]
    if parts == ["", ""]:
        return "[^/]+"  # a lone star: a whole (non-empty) segment, as pathspec
    middle = "".join(f"(?>[^/]*?{c})" for c in parts[1:-1])
    return f"{parts[0]}{middle}[^/]*{parts[-1]}"


def segment_regex(seg: str) -> re.Pattern[str]:
    """One path segment's glob (`*`, `?`, `[...]`, backslash escapes; no `/`): the regex that
    fullmatches the names it takes, in polynomial time. A glob git would drop (an unclosed `[`,
    a trailing backslash) is the name as written."""
    try:
        src = _segment_source(seg)
    except ValueError:
        src = None
    return re.compile(re.escape(seg) if src is None else src, re.S)


# --- one gitignore line -----------------------------------------------------------------------------

_SEGS = "(?:[^/]*+/)*?"  # `**`: any number of whole segments, the fewest first


@dataclass(frozen=True, slots=True)
class Wild:
    """One gitignore line as two regexes over the path with a `/` after every segment (`a/b/`):
    `rx` takes what the rule matches itself, `cover_rx` (a prefix match) a path at or below a
    match. The groups of segments between `**` are placed at their leftmost fit inside atomic
    groups, never retried, so a match is polynomial in the path and the pattern."""

    rx: re.Pattern[str]
    cover_rx: re.Pattern[str]
    dir_only: bool  # a trailing `/`: directories only
    negated: bool

    def check(self, path: str, is_dir: bool) -> bool:
        """Does the rule match the path itself? `path`: the relative path and a `/` (`a/b/`)."""
        return (is_dir or not self.dir_only) and self.rx.match(path) is not None

    def covers(self, rel: str) -> bool:
        """The gate's reading: `rel` (relative, "/"-separated) or a directory above it matches.
        A negated pattern covers nothing (one `!` line alone excludes nothing)."""
        return not self.negated and bool(rel) and self.cover_rx.match(rel + "/") is not None


def _wild(groups: list[list[str]], end: Literal["file", "dir", "under"], negated: bool) -> Wild:
    """groups: segment regexes split at `**`; the first is anchored at the start, each middle one
    at its leftmost fit (atomic), the last at the end of the path (or, for `under` and the gate,
    wherever it first fits)."""
    def run(g: list[str]) -> str:
        return "".join(f"{s}/" for s in g)

    src = "^" + run(groups[0]) + "".join(f"(?>{_SEGS}{run(g)})" for g in groups[1:-1])
    if len(groups) > 1:
        src += _SEGS + run(groups[-1])
    full = src + (".+" if end == "under" else r"\Z")  # under: something strictly below
    return Wild(re.compile(full, re.S), re.compile(src, re.S), end == "dir", negated)


def _parse(line: str) -> Wild | None:
    """A gitignore line, normalized as pathspec normalizes it: None for a comment, a blank, `/` or a
    pattern git drops; raises ValueError (pathspec's GitIgnorePatternError) for an invalid one."""
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    regex, include = GitIgnoreSpecPattern.pattern_to_regex(line)  # pathspec's verdict on the line
    if regex is None or include is None:
        return None
    text = line if line.endswith("\\ ") else line.rstrip()
    if not include:
        text = text[1:]
    segs = text.split("/")
    is_dir = not segs[-1]
    if not segs[0]:
        del segs[0]  # `/x`: anchored at the root
    elif (len(segs) == 1 or (len(segs) == 2 and not segs[1])) and segs[0] != "**":
        segs.insert(0, "**")  # one segment (and maybe a `/`): at any depth
    if not segs[-1]:
        segs[-1] = "**"
    segs = [s for i, s in enumerate(segs) if not (s == "**" and i and segs[i - 1] == "**")]
    end: Literal["file", "dir", "under"] = "file"
    if is_dir:
        end, segs = "dir", segs[:-1] or segs
    elif len(segs) > 1 and segs[-1] == "**":
        end, segs = "under", segs[:-1]
    groups: list[list[str]] = [[]]
    for seg in segs:
        if seg == "**":
            groups.append([])
            continue
        src = _segment_source(seg)
        if src is None:  # an unclosed `[`: git drops the pattern
            return None
        groups[-1].append(src)
    return _wild(groups, end, not include)


def preload() -> None:
    """Import what matching needs (pathspec's gitignore reading) now, in this thread: a process
    forked while another thread is importing it would wait for that import forever."""
    import pathspec.patterns.gitignore.spec  # noqa: F401


@lru_cache(maxsize=4096)
def _compiled(line: str) -> Wild | None:
    """One gitignore line, parsed once: None for a comment, a blank or a pattern git ignores."""
    try:
        return _parse(line)
    except ValueError:  # a trailing backslash: git never matches it, so neither does the walk
        return None


class IgnoreRules:
    """The rules of one ignore file (or `--glob` list): gitignore lines, braces expanded."""

    def __init__(self, lines: list[str]) -> None:
        self.rules: list[tuple[Wild, bool]] = []  # (rule, negated), in file order
        for line in lines:
            if line.startswith("#"):
                continue
            for alt in expand_braces(line.rstrip("\r")):
                w = _compiled(alt)
                if w is not None:
                    self.rules.append((w, w.negated))

    def __bool__(self) -> bool:
        return bool(self.rules)

    def check(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: whitelisted by a `!` rule; None: no rule matches. The last
        matching rule wins."""
        path = rel + "/"
        for w, negated in reversed(self.rules):
            if w.check(path, is_dir):
                return not negated
        return None


def read_rules(path: Path) -> IgnoreRules | None:
    try:
        spec = IgnoreRules(path.read_text(errors="replace").splitlines())
    except OSError:
        return None
    return spec or None


@dataclass
class DirRules:
    """The ignore files of one directory of a walk."""

    prefix: str  # prepended to the root-relative path ...
    cut: int  # ... after dropping this many leading characters
    kinds: tuple[IgnoreRules | None, ...]  # .rgignore, .ignore, .gitignore, .git/info/exclude
    has_git: bool


def dir_rules(d: Path, prefix: str, cut: int) -> DirRules | None:
    has_git = os.path.exists(d / ".git")
    kinds = (read_rules(d / ".rgignore"), read_rules(d / ".ignore"), read_rules(d / ".gitignore"),
             read_rules(d / ".git" / "info" / "exclude") if has_git else None)
    if not has_git and not any(kinds):
        return None
    return DirRules(prefix, cut, kinds, has_git)


def global_excludes() -> IgnoreRules | None:
    home = Path.home()
    path: Path | None = None
    try:
        cfg = (home / ".gitconfig").read_text(errors="replace")
        m = re.search(r"(?im)^\s*excludesfile\s*=\s*(.+?)\s*$", cfg)
        if m:
            path = Path(os.path.expanduser(m.group(1).strip('"')))
    except OSError:
        pass
    if path is None:
        xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        path = Path(xdg) / "git" / "ignore"
    return read_rules(path) if path.is_file() else None


class IgnoreFiles:
    """The ignore files that apply to a walk from `root` (see the module docstring). Walk with
    `enter(dir, rel, rules)` for each directory and `check(rel, is_dir, rules)` for each entry."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.top: list[DirRules] = []  # the parents' files apply, relative to their own directories
        for anc in reversed(root.parents):
            r = dir_rules(anc, root.relative_to(anc).as_posix() + "/", 0)
            if r is not None:
                self.top.append(r)
        repo = next((a for a in (root, *root.parents) if (a / ".git").exists()), None)
        self.global_prefix = (root.relative_to(repo).as_posix() + "/") if repo and repo != root else ""
        self.global_spec = global_excludes()

    def enter(self, d: str | Path, rel: str, rules: list[DirRules]) -> list[DirRules]:
        """The rules inside directory `d` (root-relative `rel`, "" or ending in "/")."""
        here = dir_rules(Path(d), "", len(rel))
        return [*rules, here] if here is not None else rules

    def check(self, rel: str, is_dir: bool, rules: list[DirRules]) -> bool | None:
        """True: an ignore file hides `rel`; False: one whitelists it; None: none speaks."""
        res: bool | None = None
        for kind in range(4):
            for r in reversed(rules):
                spec = r.kinds[kind]
                if spec is not None:
                    res = spec.check(r.prefix + rel[r.cut:], is_dir)
                    if res is not None:
                        break
                if kind >= 2 and r.has_git:
                    break
            if res is not None:
                return res
        if self.global_spec is not None:
            return self.global_spec.check(self.global_prefix + rel, is_dir)
        return None


# --- globs -------------------------------------------------------------------------------------------

def _anchored(pattern: str) -> str:
    """A glob as a gitignore line anchored at the search directory (a trailing space kept)."""
    n = len(pattern) - len(pattern.rstrip(" "))
    body = pattern.rstrip(" ") + "\\ " * n
    return "/" + body.lstrip("/")


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """The Glob tool's pattern: anchored at the search directory, `*` inside a segment, `**`
    across segments, braces expanded. Returns match(rel_file_path) -> bool."""
    ws = [w for alt in expand_braces(pattern) if (w := _compiled(_anchored(alt))) is not None]

    def match(rel: str) -> bool:
        path = rel + "/"
        return any(w.check(path, False) for w in ws)

    return match


@lru_cache(maxsize=1024)
def path_spec(pattern: str) -> Wild | None:
    """The gate's path pattern (a gitignore line): None matches nothing (a comment, a pattern git
    drops); raises ValueError on an invalid one."""
    return _parse(pattern)
