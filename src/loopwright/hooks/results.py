"""Room: bases (hooks). Owns what hooks gave back: one hook's run in command-hook terms (`Outcome`),
and what an event's hooks decided (PreToolUse, PostToolUse, PermissionRequest, UserPromptSubmit,
UserPromptExpansion); may import nothing of loopwright.

Apart from the events (hooks.events, hooks.prompt_events) because only an event that runs hooks
builds these: they are imported where hooks run, so a run without hooks does not declare them
(~9 M instructions of a plain `-p` start, issue 41)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
    command: str = ""  # a command hook's whole command (`label` is cut to 80 characters), as Claude Code names it

    @property
    def out(self) -> dict[str, Any]:
        return self.output or {}


@dataclass(slots=True)
class PreToolResult:
    """What PreToolUse hooks decided: a permission decision, a rewritten input, or nothing.
    `stop` is set when a hook said `continue: false`: the run ends before the tool runs."""

    decision: str | None = None  # "allow" | "deny" | "ask"
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    stop: str | None = None
    context: str | None = None  # additionalContext: goes to the model with the call's result


@dataclass(slots=True)
class PostToolResult:
    """PostToolUse: text for the model after the result (`context`), and the result's replacement
    (`updatedToolOutput`; None: the tool's own output goes to the model)."""

    context: str | None = None
    updated_output: str | list[dict[str, Any]] | None = None


@dataclass(slots=True)
class PermissionResult:
    """PermissionRequest: a hook's answer to an ask, `behavior` "allow" or "deny" (None: no hook
    answered; the ask goes on to whoever answers asks)."""

    behavior: str | None = None
    updated_input: dict[str, Any] | None = None
    message: str = ""
    interrupt: bool = False


@dataclass(slots=True)
class PromptResult:
    """UserPromptSubmit: `block` (Claude Code's whole message) stops the prompt before any model
    call; `halted`: an earlier hook's `continue: false` had stopped it; `context` is added text."""

    block: str | None = None
    context: str | None = None
    halted: str | None = None


@dataclass(slots=True)
class ExpansionResult:
    """UserPromptExpansion: `block` (the whole message) stops the run before any model call;
    `context` is added text for the model."""

    block: str | None = None
    context: str | None = None
