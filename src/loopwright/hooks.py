"""Hooks around the loop (Claude Code's events). The loop calls these points; with no
hooks configured each is a cheap no-op."""

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
class PreToolResult:
    """What PreToolUse hooks decided: a permission decision, a rewritten input, or nothing."""

    decision: str | None = None  # "allow" | "deny" | "ask"
    reason: str = ""
    updated_input: dict[str, Any] | None = None


@dataclass
class Hooks:
    """Registered hooks. Empty by default; `active` lets the loop skip all work when unused."""

    callbacks: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return any(self.callbacks.values())

    async def pre_tool_use(self, name: str, tool_input: dict[str, Any], tool_use_id: str) -> PreToolResult:
        return PreToolResult()

    async def post_tool_use(
        self, name: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> str | None:
        """Return additional context for the model, or None."""
        return None
