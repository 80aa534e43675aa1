"""Room: ignore (beside the data types; imports nothing of loopwright's, pathspec lazily). Owns the one ignore and glob
matcher: gitignore-style rules and the ignore files that apply to a walk (Grep and Glob), the
Glob tool's patterns, one path segment's glob (Grep's file types, the shell analysis), and the
gate's path patterns. Every glob is compiled by pathspec, so Grep, Glob and the gate agree.

Two ways of matching a gitignore rule:
- `IgnoreRules.check` (walks): the rule must match the path itself, never a path under a
  matched directory, because the walk prunes ignored directories instead. The difference shows
  when a walk starts inside an ignored directory: `.venv/` in a parent's .gitignore does not hide
  `.venv/lib/x.py` for a search of `.venv/lib` (as ripgrep).
- `path_spec(...).match` (the gate's rules): a path inside a matched directory is matched too.

The ignore files of a walk (`IgnoreFiles`), as ripgrep reads them with --no-require-git:
.rgignore, .ignore and .gitignore in the walked directories and their parents, the enclosing
repository's .git/info/exclude and the global git excludes file. Any .rgignore match beats any
.ignore match, which beats .gitignore, then .git/info/exclude, then the global excludes; within
a kind the deepest directory wins; .gitignore files above the repository's root do not apply.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

MAX_BRACES = 1024  # alternatives one pattern may expand to


def expand_braces(pattern: str) -> list[str]:
    """`a.{py,pyi}` -> [`a.py`, `a.pyi`] (nested braces work; unbalanced ones stay literal)."""
    depth = 0
    start = -1
    for i, c in enumerate(pattern):
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
                out = [x for p in parts for x in expand_braces(head + p + tail)]
                return out[:MAX_BRACES]
    return [pattern]


@lru_cache(maxsize=4096)
def _compiled(line: str) -> tuple[re.Pattern[str], bool] | None:
    """One gitignore line as pathspec compiles it: (regex, include), None for a comment/blank."""
    import pathspec

    pats = pathspec.GitIgnoreSpec.from_lines([line]).patterns
    pat: Any = pats[0] if pats else None
    if pat is None or pat.include is None or pat.regex is None:
        return None
    return pat.regex, bool(pat.include)


def _self_match(rx: re.Pattern[str], rel: str, is_dir: bool) -> bool:
    """Does the rule match `rel` itself (not a directory above it)? pathspec's `ps_d` group is
    the slash after a matched directory: a match that ends there, before the path does, is a
    parent's."""
    s = rel + "/" if is_dir else rel
    m = rx.match(s)
    if m is None:
        return False
    if "ps_d" not in rx.groupindex:  # `dir/**`: everything below dir, not dir itself
        return not (is_dir and m.end() == len(s))
    return m.group("ps_d") is None or m.end("ps_d") == len(s)


class IgnoreRules:
    """The rules of one ignore file (or `--glob` list): gitignore lines, braces expanded."""

    def __init__(self, lines: list[str]) -> None:
        self.rules: list[tuple[re.Pattern[str], bool]] = []  # (regex, negated), in file order
        for line in lines:
            if line.startswith("#"):
                continue
            for alt in expand_braces(line.rstrip("\r")):
                c = _compiled(alt)
                if c is not None:
                    self.rules.append((c[0], not c[1]))

    def __bool__(self) -> bool:
        return bool(self.rules)

    def check(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: whitelisted by a `!` rule; None: no rule matches. The last
        matching rule wins."""
        for rx, negated in reversed(self.rules):
            if _self_match(rx, rel, is_dir):
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


def glob_matcher(pattern: str) -> Any:
    """The Glob tool's pattern: anchored at the search directory, `*` inside a segment, `**`
    across segments, braces expanded. Returns match(rel_file_path) -> bool."""
    rxs = [c[0] for alt in expand_braces(pattern) if (c := _compiled(_anchored(alt))) is not None]

    def match(rel: str) -> bool:
        return any(_self_match(rx, rel, False) for rx in rxs)

    return match


def segment_regex(seg: str) -> re.Pattern[str]:
    """One path segment's glob (`*`, `?`, `[...]`, backslash escapes; no `/`): the regex that
    fullmatches the names it takes."""
    seg = re.sub(r"(?<!\\)\*{2,}", "*", seg)  # `**` inside one segment is `*`
    try:
        c = _compiled(_anchored(seg)) if seg else None
    except ValueError:  # not a pattern git accepts (a trailing backslash): the name as written
        c = None
    if c is None:
        return re.compile(re.escape(seg))
    body = c[0].pattern.removeprefix("^").removesuffix("(?:(?P<ps_d>/)|$)")
    return re.compile(body, re.S)


@lru_cache(maxsize=1024)
def path_spec(pattern: str) -> Any:
    """The gate's path pattern (a gitignore line) as a pathspec GitIgnoreSpec: raises on a bad one."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])
