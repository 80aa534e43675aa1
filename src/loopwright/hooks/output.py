"""Room: bases (hooks). Owns how what a hook's run gave back reads (its Outcome: hooks.results):
the texts it adds for the model, the Agent SDK's Python names; may import hooks.results (types only)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import Outcome

_MAX_REASON = 10_000


def contexts(outs: list[Outcome], plain_stdout: bool) -> list[str]:
    """The hooks' additionalContext texts (and plain stdout where the event takes it as context)."""
    texts: list[str] = []
    for o in outs:
        spec = (o.output or {}).get("hookSpecificOutput")
        if isinstance(spec, dict) and spec.get("additionalContext"):
            texts.append(str(spec["additionalContext"]))
        elif plain_stdout and o.exit_code == 0 and o.output is None and o.stdout.strip():
            texts.append(o.stdout.strip())
    return texts


def join(texts: list[str]) -> str | None:
    """Non-empty texts joined by blank lines and capped, or None."""
    texts = [t for t in texts if t]
    return cap("\n\n".join(texts)) if texts else None


def cap(text: str, limit: int = _MAX_REASON) -> str:
    """`text` cut to `limit` characters, saying how many were cut (a hook's output can be huge)."""
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def plain(value: Any) -> str:
    """A tool's output (a string or content blocks) as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(getattr(b, "text", "") or "" for b in value)
    return str(value)


def jsonable(value: Any) -> Any:
    """A tool's output as the JSON a hook reads (blocks on the wire)."""
    if isinstance(value, list):
        return [b.to_wire() if hasattr(b, "to_wire") else b for b in value]
    return value


def python_names(out: dict[str, Any]) -> dict[str, Any]:
    """A Python hook's output with the Agent SDK's keyword-safe names, `continue_` and `async_`,
    as the wire's `continue` and `async` (the wire name wins when both are given)."""
    if "continue_" not in out and "async_" not in out:
        return out
    renamed = {k.rstrip("_") if k in ("continue_", "async_") else k: v for k, v in out.items()}
    return {**renamed, **{k: out[k] for k in ("continue", "async") if k in out}}



def specific(o: Outcome) -> dict[str, Any]:
    """The hook's `hookSpecificOutput` ({} when it gave none or not an object)."""
    raw = (o.output or {}).get("hookSpecificOutput")
    return raw if isinstance(raw, dict) else {}


def bounded(value: str | list[dict[str, Any]], limit: int) -> str | list[dict[str, Any]]:
    """A replacement tool result with at most `limit` characters of text (cap's note where cut;
    text blocks past the limit left out, never left blank): a hook's updatedToolOutput may not
    carry more than the tool's own, capped, output or a hook's text (_MAX_REASON)."""
    limit = max(limit, _MAX_REASON)
    if isinstance(value, str):
        return cap(value, limit)
    out: list[dict[str, Any]] = []
    for b in value:
        text = b.get("text") if b.get("type") == "text" else None
        if isinstance(text, str):
            if limit <= 0:
                continue
            b = {**b, "text": cap(text, limit)}
            limit -= len(text)
        out.append(b)
    return out or "(no output)"


def tool_output(value: Any) -> str | list[dict[str, Any]]:
    """A PostToolUse hook's `updatedToolOutput` as a tool result's content: text as it is;
    content blocks (`[{"type": "text", ...}]`) as they are, less blank text blocks ("(no output)"
    when nothing is left); Claude Code's Bash shape
    ({stdout, stderr, ...}) as its text; any other value as its JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(b, dict) and isinstance(b.get("type"), str)
                                                 for b in value):
        # (a blank text block would make every later request one the Messages API refuses)
        kept = [dict(b) for b in value if b["type"] != "text" or not isinstance(b.get("text"), str) or b["text"].strip()]
        return kept or "(no output)"
    if isinstance(value, dict) and isinstance(value.get("stdout"), str):
        err = value.get("stderr")
        return str(value["stdout"]) + (f"\n{err}" if isinstance(err, str) and err else "")
    return json.dumps(value, ensure_ascii=False)


# The output fields each event honours (besides the common ones); Claude Code's other fields
# (sdk.d.ts, 2.1.332) are named when a hook gives them, with what loopwright does instead.
COMMON_FIELDS = frozenset({"continue", "suppressOutput", "stopReason", "decision", "reason", "systemMessage",
                           "hookSpecificOutput", "async", "asyncTimeout"})
HONOURED_SPECIFIC: dict[str, frozenset[str]] = {
    "PreToolUse": frozenset({"permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext"}),
    "PostToolUse": frozenset({"additionalContext", "updatedToolOutput", "updatedMCPToolOutput"}),
    "PostToolUseFailure": frozenset({"additionalContext"}),
    "PostToolBatch": frozenset({"additionalContext"}),
    "UserPromptSubmit": frozenset({"additionalContext"}),
    "SessionStart": frozenset({"additionalContext", "watchPaths"}),
    "CwdChanged": frozenset({"watchPaths"}),
    "FileChanged": frozenset({"watchPaths"}),
    "SubagentStart": frozenset({"additionalContext"}),
    "Stop": frozenset({"additionalContext"}),
    "SubagentStop": frozenset({"additionalContext"}),
    "PermissionRequest": frozenset({"decision"}),
    "PermissionDenied": frozenset({"retry"}),
    "PreModelSwitch": frozenset({"permissionDecision", "permissionDecisionReason"}),
    "PostModelSwitch": frozenset({"additionalContext"}),
    "Elicitation": frozenset({"action", "content"}),
    "ElicitationResult": frozenset({"action", "content"}),
    "WorktreeCreate": frozenset({"worktreePath"}),
    "UserPromptExpansion": frozenset({"additionalContext", "suppressOriginalPrompt"}),
    "PreSkillShellCommand": frozenset({"permissionDecision", "permissionDecisionReason", "updatedInput"}),
    "MessageDisplay": frozenset({"displayContent"}),
}
REFUSED_FIELDS = {
    "terminalSequence": "loopwright emits no terminal sequences for hooks",
    "classifierContext": "loopwright has no permission classifier to show it to",
    "sessionTitle": "sessions have no titles in loopwright",
    "initialUserMessage": "the first message is the prompt given",
    "reloadSkills": "skills are read once, when the run starts",
    "suppressOriginalPrompt": "a blocked prompt's message is loopwright's own",
}


def unsupported(event: str, out: dict[str, Any]) -> list[str]:
    """One line per output field the hook gave that loopwright does not honour for `event`."""
    lines = [f"output field {k!r} is not supported by loopwright; ignored ({REFUSED_FIELDS.get(k, 'unknown field')})"
             for k in out if k not in COMMON_FIELDS]
    spec = out.get("hookSpecificOutput")
    if isinstance(spec, dict):
        honoured = HONOURED_SPECIFIC.get(event, frozenset())
        for k in spec:
            if k != "hookEventName" and k not in honoured:
                why = REFUSED_FIELDS.get(k, f"not honoured on {event}")
                lines.append(f"hookSpecificOutput.{k} is not supported by loopwright; ignored ({why})")
    return lines
