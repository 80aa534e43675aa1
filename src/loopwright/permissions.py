"""The gate g of seed Def 3.1: decides, per tool call, run or refuse.

Order: disallowed tools -> mode -> allowed tools -> `can_use_tool` callback.
A refusal becomes an is_error tool_result carrying its message (seed Prop 3.5).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
PERMISSION_MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


@dataclass(slots=True)
class Allow:
    updated_input: dict[str, Any] | None = None


@dataclass(slots=True)
class Deny:
    message: str = "Permission to use this tool was denied."
    interrupt: bool = False


Decision: TypeAlias = Allow | Deny
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


@dataclass
class Permissions:
    """Tool-name rules and a mode in front of the user's `can_use_tool` callback.

    `mode=None` (the library default) means: no rules of its own, every call goes to
    `can_use_tool`, and with no callback every call runs."""

    mode: PermissionMode | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    can_use_tool: CanUseTool | None = None
    headless: bool = True

    def __post_init__(self) -> None:
        if self.mode is not None and self.mode not in PERMISSION_MODES:
            raise ValueError(f"unknown permission mode {self.mode!r}; use one of {', '.join(PERMISSION_MODES)}")

    async def decide(self, name: str, tool_input: dict[str, Any], read_only: bool) -> Decision:
        if name in self.disallowed_tools:
            return Deny(f"Permission denied: {name} is in the disallowed tools.")
        mode = self.mode
        if mode == "plan" and not read_only:
            return Deny(f"Permission denied: plan mode allows read-only tools only, and {name} can change files.")
        if mode is None or mode == "bypassPermissions" or name in self.allowed_tools or read_only:
            return await self._callback(name, tool_input)
        if mode == "acceptEdits" and name in EDIT_TOOLS:
            return await self._callback(name, tool_input)
        if self.can_use_tool is not None and mode != "dontAsk":
            return await self._callback(name, tool_input)
        return Deny(
            f"Permission denied: {name} needs approval, and this run cannot ask "
            f"(mode {mode}). Allow it with --allowedTools {name} or a permission mode."
        )

    async def _callback(self, name: str, tool_input: dict[str, Any]) -> Decision:
        if self.can_use_tool is None:
            return Allow()
        value = self.can_use_tool(name, tool_input)
        if inspect.isawaitable(value):
            value = await value
        return to_decision(value)


GateFunction: TypeAlias = Callable[[str, dict[str, Any], bool], Awaitable[Decision]]
