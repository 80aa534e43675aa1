"""Room: bases (the gate). Owns what the gate answers: the rules' verdict and the caller's Allow/Deny; imports nothing of loopwright.

A `Verdict` is what the rules say about one call (allow, deny or ask, with why); a `Decision`
(`Allow | Deny`, the Agent SDK's PermissionResultAllow/Deny) is the final answer, after a
`can_use_tool` callback decided an ask.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias


@dataclass(frozen=True, slots=True)  # (frozen: ALLOWED is one object for every call the rules let run)
class Allow:
    """A permission callback's yes (the Agent SDK's PermissionResultAllow), with the input to run."""

    updated_input: dict[str, Any] | None = None
    behavior: ClassVar[Literal["allow"]] = "allow"


@dataclass(slots=True)
class Deny:
    """A permission callback's no (PermissionResultDeny): its message, and whether the run stops."""

    message: str = "Permission to use this tool was denied."
    interrupt: bool = False
    # Auto mode's classifier refused the call (not a rule, a hook or a person): Claude Code's
    # PermissionDenied hooks fire for these denials only.
    by_classifier: bool = False
    behavior: ClassVar[Literal["deny"]] = "deny"


Decision: TypeAlias = Allow | Deny
ALLOWED = Allow()  # the rules' own yes (no new input): one object, not one a call (~1,400 instructions)
PermissionResultAllow = Allow  # the Agent SDK's names for the same decisions
PermissionResultDeny = Deny
CanUseTool: TypeAlias = Callable[[str, dict[str, Any]], Any]


def to_decision(value: Any) -> Decision:
    """Accept True/False, Allow/Deny, or the Agent SDK's dict form {"behavior": "allow"|"deny"}."""
    if isinstance(value, (Allow, Deny)):
        return value
    if isinstance(value, dict) and value.get("behavior") in ("allow", "deny"):
        if value["behavior"] == "allow":
            return Allow(value.get("updatedInput") or value.get("updated_input"))
        return Deny(str(value.get("message") or Deny().message), bool(value.get("interrupt", False)))
    if value is True:
        return Allow()
    if value is False:
        return Deny()
    raise TypeError(f"can_use_tool must return bool, Allow or Deny, not {type(value).__name__}")


def json_problem(tool_input: Any) -> str | None:
    """Why a rewritten tool input (a hook's updatedInput, a can_use_tool answer's, an edit in place)
    is not JSON data, or None when it is. A model's input comes from JSON and what follows a
    rewrite copies, compares and records it: an object, a set or a dict that holds itself ended
    the run there (error_during_execution) and lost its turn."""
    import json

    try:
        json.dumps(tool_input, allow_nan=False)  # (NaN and Infinity: no JSON has them)
    except (TypeError, ValueError, RecursionError) as e:
        return f"the rewritten input is not JSON data ({type(e).__name__}: {e})"
    return None


# Why a verdict is what it is: the hint a refusal carries is chosen by this code.
Code = Literal["ok", "deny_rule", "ask_rule", "hook", "plan", "protected", "outside", "unknown_path",
               "denied_below", "unparsed", "no_file", "not_approved", "unsandboxed"]


# What decided a verdict: a rule, by where it came from (a settings file's scope, "managed" for the
# managed settings' (managed.py); "cli": the
# command line's flags or the caller's own AgentOptions / Permissions fields; "session": granted
# during the run, a loaded skill's allowed-tools), or no rule: the permission mode, a PreToolUse
# hook, the OS sandbox (autoAllowBashIfSandboxed), or the gate's built-in default.
RuleSource = Literal["user", "project", "local", "cli", "session", "mode", "hook", "sandbox", "default", "managed"]


@dataclass(frozen=True, slots=True)  # (frozen: ALLOW and the other shared verdicts are one object for many calls)
class Verdict:
    """What the rules say about one call: allow, deny, or ask (with why), and what decided it:
    `rule` (the rule's text, the rules joined by ", " when several approved parts of one Bash
    command, the mode's name for source "mode", None otherwise) and its `source`."""

    kind: Literal["allow", "deny", "ask"]
    reason: str = ""
    soft: bool = False  # an ask that only exists because nothing approved the call (mode None: run)
    subject: str | None = None  # the program that needs approval, for the hint
    code: Code = "not_approved"
    rule: str | None = None
    source: RuleSource = "default"

    @property
    def allowed(self) -> bool:
        return self.kind == "allow"


ALLOW = Verdict("allow", code="ok")  # allowed by the gate's default (a read-only call, a safe command)
# Shared verdicts of the commonest calls: not one built per call.
UNAPPROVED = Verdict("ask", "no rule approves it", soft=True)  # mode None and no rule: the call runs
NO_ALLOW_RULE = Verdict("ask", "no allow rule matches it")
