"""Room: built-in tools (on tools.base). Owns TodoWrite's implementation (tools.builtin defines the
tool); may import data types and tools.base.

TodoWrite {todos: [{content, status, activeForm}]}: the session's task list, in ctx.state.todo.items.

Read-only in the sense of seed Def 6.1: it changes the harness's state, never the environment
(files, processes), so it needs no permission, as in Claude Code."""

from __future__ import annotations

from typing import Any

from .base import ToolContext, ToolOutput


async def todo_write(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    # async, so concurrent calls in one batch run on the event loop in emission order
    todos = [dict(t) for t in inp["todos"]]
    before = ctx.state.todo.items or []
    ctx.state.todo.items = todos
    counts = {s: sum(1 for t in todos if t["status"] == s) for s in ("pending", "in_progress", "completed")}
    msg = (f"Todos have been modified successfully ({counts['pending']} pending, {counts['in_progress']} "
           f"in progress, {counts['completed']} completed). Keep using the todo list to track your "
           "progress, and proceed with the current tasks if applicable.")
    if counts["in_progress"] > 1:
        msg += (f"\nWarning: {counts['in_progress']} tasks are in_progress; keep exactly one in_progress "
                "at a time.")
    # Claude Code's TodoWriteOutput: the list before and after (copies: the state's own list moves on)
    return ToolOutput(msg, details={"oldTodos": [dict(t) for t in before], "newTodos": [dict(t) for t in todos]})
