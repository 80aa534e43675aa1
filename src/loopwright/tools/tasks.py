"""Room: built-in tools (on tools.base). Owns the Task tools' implementation (their definitions:
tools.builtin), Claude Code 2.1.332's task list
(TaskCreate, TaskGet, TaskList, TaskUpdate: its default planning tools, which replaced TodoWrite
there); may import data types and tools.base.

The list lives in the run's tool state (`ctx.state.tasks`): ids "1", "2", ... in creation order.
A saved session keeps it beside its transcript (`<session>.tasks.json`, 0600), read at the run's
first Task call and written after each change, so a `--resume` or `--continue` of the session (or
its next prompt) finds it, as Claude Code 2.1.332 keeps its tasks for the session
(`~/.claude/tasks/<session>/`); a run that saves no session keeps it for that run.
TaskCreate fires TaskCreated and TaskUpdate to status "completed" fires TaskCompleted, before the
change, as Claude Code does: a hook's exit 2 (or `decision: "block"`) refuses the change and its
stderr goes back to the model as the tool's result ("<event> hook feedback: ...").

Like TodoWrite they change only the harness's state, never files or processes: no permission."""

from __future__ import annotations

import json
from typing import Any

from ..workspace import TaskState
from .base import ToolContext, ToolError, ToolOutput

STATUSES = ("pending", "in_progress", "completed")


def _text(inp: dict[str, Any], key: str, required: bool = False) -> str | None:
    v = inp.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or (required and not v.strip()):
        raise ToolError(f"{key} must be a non-empty string")
    return v


def _tasks(ctx: ToolContext) -> TaskState:
    """The session's list: read from its file at the run's first Task call (a file that cannot be
    read or parsed is an error the model is told, never an empty list over a real one)."""
    tasks = ctx.state.tasks
    if tasks.path is not None and not tasks.loaded:
        try:
            saved = json.loads(tasks.path.read_text(encoding="utf-8")) if tasks.path.exists() else {}
            tasks.items, tasks.next_id = _checked(saved)
        except (OSError, ValueError) as e:
            raise ToolError(f"the session's task list {tasks.path} could not be read: {e}") from None
        tasks.loaded = True
    return tasks


_TEXT = ("subject", "description")
_TEXT_OR_NONE = ("activeForm", "owner")


def _checked(saved: Any) -> tuple[dict[str, dict[str, Any]], int]:
    """A saved list's tasks and next id, each task as the tools write it (ValueError naming what is
    not: a hand-edited or damaged file is said, never half-used; the tools would fail on it later,
    or write over it). The next id follows every kept id, so a TaskCreate never replaces a task."""
    if not isinstance(saved, dict) or not isinstance(saved.get("tasks", {}), dict):
        raise ValueError('not {"tasks": {id: task, ...}, "next_id": n}')
    next_id = saved.get("next_id", 1)
    if not isinstance(next_id, int) or isinstance(next_id, bool) or next_id < 1:
        raise ValueError(f"next_id is {next_id!r}, not a positive integer")
    items: dict[str, dict[str, Any]] = saved.get("tasks", {})
    for key, t in items.items():
        ok = (isinstance(t, dict) and t.get("id") == key and all(isinstance(t.get(k), str) for k in _TEXT)
              and all(k in t and isinstance(t[k], (str, type(None))) for k in _TEXT_OR_NONE)
              and t.get("status") in STATUSES and isinstance(t.get("metadata"), dict)
              and all(isinstance(t.get(k), list) and all(isinstance(b, str) for b in t[k]) for k in ("blocks", "blockedBy")))
        if not ok:
            raise ValueError(f"task {key!r} is not a task as the Task tools write it: {json.dumps(t)[:200]}")
        if key.isdigit():
            next_id = max(next_id, int(key) + 1)
    return items, next_id


def _save(tasks: TaskState) -> None:
    """Write the list whole (0600, atomically) when the session keeps it."""
    if tasks.path is not None:
        from ..home import write_private

        write_private(tasks.path, json.dumps({"tasks": tasks.items, "next_id": tasks.next_id}, ensure_ascii=False))


async def task_create(inp: dict[str, Any], ctx: ToolContext) -> str | ToolOutput:
    subject, description = _text(inp, "subject", True) or "", _text(inp, "description") or ""
    tasks = _tasks(ctx)
    task_id = str(tasks.next_id)
    if ctx.ports is not None:
        refused = await ctx.ports.hooks.task_created(task_id, subject, description)
        if refused is not None:
            return ToolOutput(refused, is_error=True)  # not created (its id is not used up either)
    tasks.next_id += 1
    meta = inp.get("metadata")
    tasks.items[task_id] = {"id": task_id, "subject": subject, "description": description, "status": "pending",
                            "activeForm": _text(inp, "activeForm"), "owner": None, "blocks": [], "blockedBy": [],
                            "metadata": dict(meta) if isinstance(meta, dict) else {}}
    _save(tasks)
    return f"Task #{task_id} created successfully: {subject}"


async def task_get(inp: dict[str, Any], ctx: ToolContext) -> str:
    t = _tasks(ctx).items.get(str(inp.get("taskId")))
    if t is None:
        return "Task not found"
    lines = [f"Task #{t['id']}: {t['subject']}", f"Status: {t['status']}", f"Description: {t['description']}"]
    if t["blockedBy"]:
        lines.append("Blocked by: " + ", ".join(f"#{b}" for b in t["blockedBy"]))
    if t["blocks"]:
        lines.append("Blocks: " + ", ".join(f"#{b}" for b in t["blocks"]))
    return "\n".join(lines)


async def task_list(inp: dict[str, Any], ctx: ToolContext) -> str:
    items = _tasks(ctx).items
    if not items:
        return "No tasks found"
    out = []
    for t in items.values():
        line = f"#{t['id']} [{t['status']}] {t['subject']}"
        if t["owner"]:
            line += f" ({t['owner']})"
        open_blockers = [b for b in t["blockedBy"] if b in items and items[b]["status"] != "completed"]
        if open_blockers:
            line += " [blocked by " + ", ".join(f"#{b}" for b in open_blockers) + "]"
        out.append(line)
    return "\n".join(out)


async def task_update(inp: dict[str, Any], ctx: ToolContext) -> str:
    tasks = _tasks(ctx)
    task_id = str(inp.get("taskId"))
    t = tasks.items.get(task_id)
    if t is None:
        return "Task not found"
    status = inp.get("status")
    if status is not None and status not in (*STATUSES, "deleted"):
        raise ToolError(f"status must be one of {', '.join((*STATUSES, 'deleted'))}, got {status!r}")
    if status == "deleted":
        _delete(tasks, task_id)
        return f"Updated task #{task_id} deleted"
    if status == "completed" and t["status"] != "completed" and ctx.ports is not None:
        refused = await ctx.ports.hooks.task_completed(task_id, t["subject"], t["description"])
        if refused is not None:
            return refused  # not completed: the task keeps its status, the model reads why
    changed = _set_fields(t, inp, status)
    _link(tasks, task_id, inp, changed)
    meta = inp.get("metadata")
    if isinstance(meta, dict):
        _merge_metadata(t["metadata"], meta)
        changed.append("metadata")
    if changed:
        _save(tasks)
    return f"Updated task #{task_id} {', '.join(changed)}" if changed else f"Task #{task_id}: nothing to update"


def _delete(tasks: TaskState, task_id: str) -> None:
    """The task gone, and from every other task's blocks and blockedBy."""
    del tasks.items[task_id]
    for rest in tasks.items.values():
        rest["blocks"] = [b for b in rest["blocks"] if b != task_id]
        rest["blockedBy"] = [b for b in rest["blockedBy"] if b != task_id]
    _save(tasks)


def _set_fields(t: dict[str, Any], inp: dict[str, Any], status: Any) -> list[str]:
    """The text fields and the status the update gives new values: set, and their names."""
    changed: list[str] = []
    for key in ("subject", "description", "activeForm", "owner"):
        v = _text(inp, key)
        if v is not None and v != t[key]:
            t[key] = v
            changed.append(key)
    if status is not None and status != t["status"]:
        t["status"] = status
        changed.append("status")
    return changed


def _link(tasks: TaskState, task_id: str, inp: dict[str, Any], changed: list[str]) -> None:
    """addBlocks / addBlockedBy: each link recorded on both tasks (an unknown id, or the task
    itself, is passed over); "blocks" or "blockedBy" added to `changed` when one is new."""
    t = tasks.items[task_id]
    for key, mine, back in (("addBlocks", "blocks", "blockedBy"), ("addBlockedBy", "blockedBy", "blocks")):
        ids = inp.get(key)
        for given in ids if isinstance(ids, list) else ():
            other = str(given)
            if other in tasks.items and other != task_id and other not in t[mine]:
                t[mine].append(other)
                tasks.items[other][back].append(task_id)
                if mine not in changed:
                    changed.append(mine)


def _merge_metadata(metadata: dict[str, Any], given: dict[str, Any]) -> None:
    """The update's metadata merged in: a key given as null is removed."""
    for k, v in given.items():
        if v is None:
            metadata.pop(k, None)
        else:
            metadata[k] = v
