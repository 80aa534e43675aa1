"""TaskUpdate's fields beyond the status: links recorded on both tasks, metadata merged (null
removes a key), a deleted task gone from every other task's links, and what the update reports."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from loopwright.tools.base import ToolContext, ToolOutput
from loopwright.tools.tasks import task_create, task_get, task_update


def call(handler: Any, ctx: ToolContext, **inp: Any) -> Any:
    """The handler's text (what the model reads)."""
    out = asyncio.run(handler(inp, ctx))
    return out.content if isinstance(out, ToolOutput) else out


def three_tasks(tmp_path: Path) -> ToolContext:
    ctx = ToolContext(tmp_path)
    for subject in ("one", "two", "three"):
        call(task_create, ctx, subject=subject, description="d", metadata={"keep": 1})
    return ctx


def test_links_are_recorded_on_both_tasks_once(tmp_path: Path) -> None:
    ctx = three_tasks(tmp_path)
    said = call(task_update, ctx, taskId="1", addBlocks=["2", "9", "1"], addBlockedBy=["3"])
    assert said == "Updated task #1 blocks, blockedBy"  # (an unknown id and the task itself: passed over)
    assert call(task_get, ctx, taskId="1").splitlines()[-2:] == ["Blocked by: #3", "Blocks: #2"]
    assert call(task_get, ctx, taskId="2").splitlines()[-1] == "Blocked by: #1"
    assert call(task_get, ctx, taskId="3").splitlines()[-1] == "Blocks: #1"
    assert call(task_update, ctx, taskId="1", addBlocks=["2"]) == "Task #1: nothing to update"


def test_fields_status_and_metadata_are_reported_in_order(tmp_path: Path) -> None:
    ctx = three_tasks(tmp_path)
    said = call(task_update, ctx, taskId="2", subject="two!", owner="me", status="in_progress",
                metadata={"keep": None, "new": "x"})
    assert said == "Updated task #2 subject, owner, metadata, status"  # (Claude Code's order)
    t = ctx.state.tasks.items["2"]
    assert (t["subject"], t["owner"], t["status"], t["metadata"]) == ("two!", "me", "in_progress", {"new": "x"})
    assert call(task_update, ctx, taskId="2", subject="two!") == "Task #2: nothing to update"


def test_a_deleted_task_leaves_no_link_behind(tmp_path: Path) -> None:
    ctx = three_tasks(tmp_path)
    call(task_update, ctx, taskId="1", addBlocks=["2"], addBlockedBy=["3"])
    assert call(task_update, ctx, taskId="1", status="deleted") == "Updated task #1 deleted"
    assert "1" not in ctx.state.tasks.items
    assert all(not t["blocks"] and not t["blockedBy"] for t in ctx.state.tasks.items.values())
    assert call(task_get, ctx, taskId="1") == "Task not found"
