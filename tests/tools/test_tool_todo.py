"""TodoWrite: stores the list in ctx.state, validates through its schema, warns on two in_progress."""

from __future__ import annotations

from pathlib import Path

from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_todo_tool
from tests.helpers import call_tool

TODO = make_todo_tool()


def item(content: str, status: str) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": content + "ing"}


def test_schema() -> None:
    s = TODO.input_schema
    assert TODO.name == "TodoWrite" and s["required"] == ["todos"]
    items = s["properties"]["todos"]["items"]
    assert items["required"] == ["content", "status", "activeForm"]
    assert items["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]


def test_stores_and_replaces(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    todos = [item("Write test", "completed"), item("Fix bug", "in_progress"), item("Ship", "pending")]
    out, err = call_tool(TODO, ctx, {"todos": todos})
    assert not err and "1 pending, 1 in progress, 1 completed" in out and "Warning" not in out
    assert ctx.state.todo.items == todos
    out, err = call_tool(TODO, ctx, {"todos": []})
    assert not err and ctx.state.todo.items == []


def test_two_in_progress_is_a_warning_not_an_error(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    out, err = call_tool(TODO, ctx, {"todos": [item("A", "in_progress"), item("B", "in_progress")]})
    assert not err and "Warning: 2 tasks are in_progress" in out
    assert len(ctx.state.todo.items or []) == 2


def test_invalid_input_is_rejected(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    out, err = call_tool(TODO, ctx, {"todos": [{"content": "A", "status": "doing", "activeForm": "Aing"}]})
    assert err and "doing" in out
    out, err = call_tool(TODO, ctx, {"todos": [{"content": "A", "status": "pending"}]})
    assert err and "activeForm" in out
    assert ctx.state.todo.items is None
