"""Room: built-in tools (on tools.base). Owns TodoWrite; may import data types and tools.base.

TodoWrite {todos: [{content, status, activeForm}]}: the session's task list, in ctx.state.todo.items.

Read-only in the sense of seed Def 6.1: it changes the harness's state, never the environment
(files, processes), so it needs no permission, as in Claude Code."""

from __future__ import annotations

from typing import Any

from .base import Tool, ToolContext

DESCRIPTION = """Creates and updates a structured task list for the current session.

- Use it for multi-step tasks (3 or more steps) to plan and show progress; skip it for trivial ones.
- Each call replaces the whole list. status is pending, in_progress or completed.
- Keep exactly one task in_progress at a time; mark tasks completed as soon as they are done.
- content is the imperative form ("Run tests"), activeForm the present continuous ("Running tests")."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The updated todo list",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "minLength": 1, "description": "The task, in imperative form"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"],
                               "description": "The task's status"},
                    "activeForm": {"type": "string", "minLength": 1,
                                   "description": "The task in present continuous form, shown while it is in progress"},
                },
                "required": ["content", "status", "activeForm"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["todos"],
    "additionalProperties": False,
}


async def todo_write(inp: dict[str, Any], ctx: ToolContext) -> str:
    # async, so concurrent calls in one batch run on the event loop in emission order
    todos = [dict(t) for t in inp["todos"]]
    ctx.state.todo.items = todos
    counts = {s: sum(1 for t in todos if t["status"] == s) for s in ("pending", "in_progress", "completed")}
    msg = (f"Todos have been modified successfully ({counts['pending']} pending, {counts['in_progress']} "
           f"in progress, {counts['completed']} completed). Keep using the todo list to track your "
           "progress, and proceed with the current tasks if applicable.")
    if counts["in_progress"] > 1:
        msg += (f"\nWarning: {counts['in_progress']} tasks are in_progress; keep exactly one in_progress "
                "at a time.")
    return msg


def make_todo_tool() -> Tool:
    return Tool("TodoWrite", DESCRIPTION, INPUT_SCHEMA, todo_write, read_only=True, needs_approval=False)
