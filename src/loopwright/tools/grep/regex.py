"""Room: built-in tools (on tools.base). Owns the translation of ripgrep's (Rust) regex syntax to
Python `re` for the pure-Python engine; may import tools.base and the grep package's query.

Translated: `(?<name>` -> `(?P<name>`, `\\z` -> `\\Z`, POSIX classes `[[:alpha:]]`. Unicode
classes `\\p{..}` are refused. Python accepts look-around and backreferences, which rg (without
PCRE2) rejects.
"""

from __future__ import annotations

import re
import warnings

from ..base import ToolError
from .query import Query

_POSIX = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
          "space": r" \t\n\r\f\v", "xdigit": "0-9A-Fa-f", "word": r"\w", "blank": r" \t",
          "punct": r"!-/:-@\[-`{-~", "cntrl": r"\x00-\x1f\x7f", "print": r" -~", "graph": r"!-~"}


def translate_regex(p: str) -> str:
    """Rust regex syntax -> Python `re` syntax, for the differences that matter in practice."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(p):
        if p[i] == "\\" and i + 1 < len(p):
            i = _escape(p, i, in_class, out)
        elif in_class:
            i, in_class = _in_class(p, i, out)
        elif p[i] == "[":
            i, in_class = _class_start(p, i + 1, out), True
        elif p.startswith("(?<", i) and i + 3 < len(p) and p[i + 3] not in "=!":
            out.append("(?P<")  # a named group
            i += 3
        else:
            out.append(p[i])
            i += 1
    return "".join(out)


def _escape(p: str, i: int, in_class: bool, out: list[str]) -> int:
    """The escape at p[i]: \\z is \\Z outside a class; Unicode classes are refused."""
    nxt = p[i + 1]
    if nxt in "pP":
        raise ToolError("Unicode classes (\\p{...}) are not supported by the Python grep engine "
                        "(ripgrep is not installed).")
    out.append(r"\Z" if nxt == "z" and not in_class else p[i:i + 2])
    return i + 2


def _in_class(p: str, i: int, out: list[str]) -> tuple[int, bool]:
    """One item inside a [...] class: a POSIX class as its ranges, a `[` escaped, `]` its end."""
    m = re.match(r"\[:(\^?)([a-z]+):\]", p[i:])
    if m and m.group(2) in _POSIX:
        if m.group(1):
            raise ToolError("negated POSIX classes ([[:^x:]]) are not supported by the Python grep engine.")
        out.append(_POSIX[m.group(2)])
        return i + m.end(), True
    out.append("\\[" if p[i] == "[" else p[i])
    return i + 1, p[i] != "]"


def _class_start(p: str, i: int, out: list[str]) -> int:
    """A class opened before p[i]: a `]` (after an optional `^`) right at its start is a literal."""
    out.append("[")
    if i < len(p) and p[i] == "^":
        out.append("^")
        i += 1
    if i < len(p) and p[i] == "]":
        out.append("\\]")
        i += 1
    return i


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

