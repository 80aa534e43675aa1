"""Room: data types. Owns the context a can_use_tool callback gets (ToolPermissionContext); may
import typevars only.

Apart from options.py because only a run given a `can_use_tool` callback makes one: a run without
one does not import this module (a frozen generic data class fewer on `-p`'s way to its first
request, issue 41). `loopwright.ToolPermissionContext` and `loopwright.options.ToolPermissionContext`
are this class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic

from .typevars import DepsT

__all__ = ["ToolPermissionContext"]


@dataclass(frozen=True, slots=True)
class ToolPermissionContext(Generic[DepsT]):
    """The third argument of a `can_use_tool(tool_name, input, context)` callback (the Agent
    SDK's ToolPermissionContext): which run asks, and its AgentOptions.deps (typed as
    `ToolPermissionContext[Deps]`). `suggestions` is kept for the SDK's shape."""

    session_id: str
    cwd: str
    permission_mode: str
    suggestions: tuple[Any, ...] = ()
    signal: Any = None
    deps: DepsT = None  # type: ignore[assignment]
