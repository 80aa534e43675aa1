"""Hooks around the loop (Claude Code's events). The loop calls these points; with no
hooks configured each is a cheap no-op (the loop checks `active` first)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)


@dataclass(slots=True)
class HookContext:
    """Fields every hook input carries (Claude Code's stdin JSON)."""

    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    permission_mode: str = "default"


@dataclass(slots=True)
class PreToolResult:
    """What PreToolUse hooks decided: a permission decision, a rewritten input, or nothing."""

    decision: str | None = None  # "allow" | "deny" | "ask"
    reason: str = ""
    updated_input: dict[str, Any] | None = None


@dataclass(slots=True)
class PromptResult:
    """UserPromptSubmit: `block` stops the run before any model call; `context` is added text."""

    block: str | None = None
    context: str | None = None


@dataclass
class Hooks:
    """Registered hooks. Empty by default; `active` lets the loop skip all work when unused."""

    callbacks: dict[str, list[Any]] = field(default_factory=dict)
    context: HookContext = field(default_factory=HookContext)

    @property
    def active(self) -> bool:
        return any(self.callbacks.values())

    def bind(self, context: HookContext) -> None:
        self.context = context

    async def session_start(self, source: str) -> str | None:
        """Return additional context for the model, or None."""
        return None

    async def user_prompt_submit(self, prompt: str) -> PromptResult:
        return PromptResult()

    async def pre_tool_use(self, name: str, tool_input: dict[str, Any], tool_use_id: str) -> PreToolResult:
        return PreToolResult()

    async def post_tool_use(
        self, name: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> str | None:
        """PostToolUse (or PostToolUseFailure when is_error). Return additional context, or None."""
        return None

    async def stop(self, stop_hook_active: bool) -> str | None:
        """Return a reason to make the agent continue (a blocking Stop hook), or None."""
        return None

    async def session_end(self, reason: str) -> None:
        return None
