"""Room: bases (hooks). Owns which hooks a target selects: Claude Code's matcher forms and a
hook's `if` rule; may import gate.rules."""

from __future__ import annotations

import os
import re
from typing import Any


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



def if_matches(rule: str, tool_name: str | None, tool_input: dict[str, Any] | None, cwd: str = "") -> bool:
    """A hook's `if` (a permission rule, `Bash(git *)`, `Edit(src/**)`): whether the tool call
    matches it, as the gate matches an allow rule. An event without a tool call never matches."""
    from ..gate.rules import (
        EDIT_TOOLS,
        PATH_KEYS,
        READ_TOOLS,
        Rule,
        command_matches,
        input_matches,
        path_rule_matches,
    )

    if tool_name is None or tool_input is None:
        return False
    r = Rule.parse(rule)  # checked when the settings were read
    if not r.covers_tool(tool_name):
        return False
    if r.specifier is None:
        return True
    if tool_name == "Bash":
        return command_matches(r.specifier, str(tool_input.get("command", "")))
    if tool_name in EDIT_TOOLS or tool_name in READ_TOOLS:
        path = next((str(tool_input[k]) for k in PATH_KEYS if isinstance(tool_input.get(k), str)), None)
        if path is None:
            return False
        full = os.path.join(cwd or os.getcwd(), path)
        return path_rule_matches(r.specifier, os.path.normpath(full), cwd or os.getcwd(), None,
                                 os.path.expanduser("~"))
    return input_matches(r.specifier, tool_name, tool_input)
