"""Room: bases (hooks). Owns which hooks a target selects: Claude Code's matcher forms; may import
nothing of loopwright."""

from __future__ import annotations

import re


def matcher_matches(matcher: str | None, value: str | None) -> bool:
    """Claude Code's matcher forms: None, "" or "*" match everything; names (`Bash`, `Edit|Write`)
    match exactly; anything else is a regex searched in `value` (an invalid one: exact text)."""
    if matcher in (None, "", "*"):
        return True
    if value is None:
        return False
    assert matcher is not None
    if re.fullmatch(r"[A-Za-z0-9_|\s-]+", matcher):
        return value in (m.strip() for m in matcher.split("|"))
    try:
        return re.search(matcher, value) is not None
    except re.error:
        return matcher == value

