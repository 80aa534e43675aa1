"""Room: bases (hooks). Owns what a hook's run gave back and how it reads: the outcome in
command-hook terms, the texts it adds for the model, the Agent SDK's Python names; may import
nothing of loopwright."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_MAX_REASON = 10_000


@dataclass(slots=True)
class Outcome:
    """One hook's run, in command-hook terms."""

    label: str
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    output: dict[str, Any] | None = None  # parsed JSON output
    failed: bool = False  # crashed or timed out (already reported)
    error: str = ""  # why it crashed, timed out or could not start (PreToolUse then fails closed)

    @property
    def out(self) -> dict[str, Any]:
        return self.output or {}


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

