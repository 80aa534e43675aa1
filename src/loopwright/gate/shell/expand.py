"""Room: bases (the gate). Owns the expansion of one shell word as bash does it (quotes, backslashes, `$'..'`, `~`, braces, globs against the file system); may import workspace and ignore only.

A word whose value is only known at run time (a variable, a substitution, `~-`, too many
matches) raises `Unknown`: the gate then asks about the path it stands for.
"""

from __future__ import annotations

import codecs
import os
import re

from ...workspace import Workspace
from . import bashparse

# --- expansion of one word, as bash does ---------------------------------------------------------

MAX_MATCHES = 1000


class Unknown(Exception):
    """The word's value is only known at run time."""


Chars = list[tuple[str, bool]]  # (character, quoted)


def _ansi_c(body: str) -> str:
    if "\\c" in body:
        raise Unknown("$'\\c..' control characters")
    return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")


def _chars(text: str) -> Chars:
    """Quote removal with the quoting remembered; variables and substitutions raise Unknown."""
    out: Chars = []
    i = 0
    while i < len(text):
        i = _one_quoting(text, i, out)
    return out


def _one_quoting(text: str, i: int, out: Chars) -> int:
    """The characters of the quoting (or the plain character) at `text[i]` onto `out`; returns
    where the next one starts."""
    c = text[i]
    if c == "\\":
        if i + 1 < len(text) and text[i + 1] != "\n":
            out.append((text[i + 1], True))
        return i + 2
    if c == "'":
        j = text.find("'", i + 1)
        if j < 0:
            raise Unknown("unbalanced quote")
        out += [(ch, True) for ch in text[i + 1:j]]
        return j + 1
    if text.startswith("$'", i):
        return _ansi_quoted(text, i + 2, out)
    if c == '"' or text.startswith('$"', i):
        return _double_quoted(text, i + (2 if c == "$" else 1), out)
    if c in "$`":
        raise Unknown("a variable or command substitution")
    out.append((c, False))
    return i + 1


def _ansi_quoted(text: str, i: int, out: Chars) -> int:
    """`$'...'` from its body's start: its characters, escapes decoded; returns the index after it."""
    j = i
    while j < len(text) and text[j] != "'":
        j += 2 if text[j] == "\\" else 1
    if j >= len(text):
        raise Unknown("unbalanced quote")
    out += [(ch, True) for ch in _ansi_c(text[i:j])]
    return j + 1


def _double_quoted(text: str, j: int, out: Chars) -> int:
    """`"..."` from its body's start: backslash keeps its meaning before $ ` " \\ only; a
    variable or substitution raises Unknown. Returns the index after the closing quote."""
    n = len(text)
    while j < n and text[j] != '"':
        if text[j] == "\\" and j + 1 < n:
            nxt = text[j + 1]
            if nxt in '$`"\\':
                out.append((nxt, True))
            elif nxt != "\n":
                out += [("\\", True), (nxt, True)]
            j += 2
            continue
        if text[j] in "$`":
            raise Unknown("a variable or command substitution")
        out.append((text[j], True))
        j += 1
    if j >= n:
        raise Unknown("unbalanced quote")
    return j + 1


def _braces(w: Chars) -> list[Chars]:
    """Brace expansion on unquoted `{a,b}` (sequences `{1..3}` are left to run time)."""
    depth, start = 0, -1
    for i, (c, q) in enumerate(w):
        if q or c not in "{}" or c == "}" and depth == 0:
            continue
        depth += 1 if c == "{" else -1
        if c == "{" and depth == 1:
            start = i
        if c == "}" and depth == 0:
            parts = _brace_parts(w[start + 1:i])
            if parts is None:
                continue  # `{x}`: no expansion
            out = [x for p in parts for x in _braces(w[:start] + p + w[i + 1:])]
            if len(out) > MAX_MATCHES:
                raise Unknown("too many brace expansions")
            return out
    return [w]


def _brace_parts(inner: Chars) -> list[Chars] | None:
    """The alternatives of one `{...}` (split at its own unquoted commas), None when it has
    none; a sequence (`{1..3}`) raises Unknown."""
    parts: list[Chars] = [[]]
    d = 0
    for ch, q in inner:
        if ch == "," and not q and d == 0:
            parts.append([])
            continue
        if not q:
            d += (ch == "{") - (ch == "}")
        parts[-1].append((ch, q))
    if len(parts) > 1:
        return parts
    if "".join(c for c, _ in inner).count("..") and not any(q for _, q in inner):
        raise Unknown("a brace sequence")
    return None


def _segment_regex(seg: Chars) -> re.Pattern[str]:
    """Bash's pattern for one segment, by the one glob matcher (ignore.py); quoted characters
    are literal."""
    from ...ignore import segment_regex

    return segment_regex("".join(f"\\{c}" if q and c in "*?[]\\!{}" else c for c, q in seg))


def _glob(w: Chars, cwd: str) -> list[str] | None:
    """The names bash's pathname expansion gives, or None when nothing matches (the word
    then stays as written)."""
    segs: list[Chars] = [[]]
    for ch in w:
        if ch[0] == "/":
            segs.append([])
        else:
            segs[-1].append(ch)
    absolute = not segs[0] and len(segs) > 1
    bases = ["/"] if absolute else [""]
    rest = segs[1:] if absolute else segs
    for k, seg in enumerate(rest):
        bases = _glob_segment(seg, bases, cwd, last=k == len(rest) - 1)
        if not bases:
            return None
    return bases


def _glob_segment(seg: Chars, bases: list[str], cwd: str, last: bool) -> list[str]:
    """The paths one segment of a glob makes of each of `bases` (directories, unless `last`)."""
    if not any(not q and c in "*?[" for c, q in seg):
        name = "".join(c for c, _ in seg)
        out = [os.path.join(b, name) if b else name for b in bases]
        return out if last else [p for p in out if os.path.isdir(os.path.join(cwd, p))]
    rx = _segment_regex(seg)
    dot = bool(seg) and seg[0][0] == "."
    out = []
    for b in bases:
        try:
            names = sorted(os.listdir(os.path.join(cwd, b) if b else cwd))
        except OSError:
            continue
        for name in names:
            p = os.path.join(b, name) if b else name
            if (dot or not name.startswith(".")) and rx.fullmatch(name) and (
                    last or os.path.isdir(os.path.join(cwd, p))):
                out.append(p)
        if len(out) > MAX_MATCHES:
            raise Unknown("a glob with too many matches")
    return out


def expand(word: bashparse.Word, cwd: str | None, ws: Workspace) -> list[str]:
    """The arguments bash makes of `word` in `cwd` (None: unknown); raises Unknown."""
    out: list[str] = []
    for alt in _braces(_chars(word.text)):
        alt = _tilde(alt, cwd, ws)
        if any(not q and c in "*?[" for c, q in alt):
            if cwd is None:
                raise Unknown("a glob in a directory that cannot be known")
            matched = _glob(alt, cwd)
            if matched is not None:
                out += matched
                continue
        out.append("".join(c for c, _ in alt))
    return out


def _tilde(alt: Chars, cwd: str | None, ws: Workspace) -> Chars:
    """Tilde expansion of the prefix up to the first unquoted / (`~`, `~user`, `~+`; `~-` is
    only known at run time)."""
    if not alt or alt[0] != ("~", False):
        return alt
    k = 1
    while k < len(alt) and alt[k] != ("/", False) and not alt[k][1]:
        k += 1
    user = "".join(c for c, _ in alt[1:k])
    if user == "+" and cwd is not None:
        return [(c, True) for c in cwd] + alt[k:]
    if user.startswith(("-", "+")):
        raise Unknown("~- names the previous directory")
    home = ws.home_dir if user == "" else os.path.expanduser("~" + user)
    return alt if home.startswith("~") else [(c, True) for c in home] + alt[k:]


def word_values(word: bashparse.Word) -> list[str] | None:
    """The word's value(s) independent of the file system (for options); None: unknown."""
    try:
        w = _chars(word.text)
        return ["".join(c for c, _ in alt) for alt in _braces(w)]
    except Unknown:
        return None
