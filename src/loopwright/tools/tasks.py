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


async def task_create(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
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
    return ToolOutput(f"Task #{task_id} created successfully: {subject}",
                      details={"task": {"id": task_id, "subject": subject, "description": description}})


def _open_blockers(items: dict[str, dict[str, Any]], t: dict[str, Any]) -> list[str]:
    """The tasks still blocking `t`: a completed blocker no longer does (TaskGet and TaskList say
    so, as Claude Code's do; the link is kept, and counts again if the blocker is reopened)."""
    return [b for b in t["blockedBy"] if b in items and items[b]["status"] != "completed"]


async def task_get(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """The task, and as `tool_use_result` Claude Code's TaskGetOutput ({"task": null} when there is none)."""
    items = _tasks(ctx).items
    t = items.get(str(inp.get("taskId")))
    if t is None:
        return ToolOutput("Task not found", details={"task": None})
    blocked_by = _open_blockers(items, t)
    lines = [f"Task #{t['id']}: {t['subject']}", f"Status: {t['status']}", f"Description: {t['description']}"]
    if blocked_by:
        lines.append("Blocked by: " + ", ".join(f"#{b}" for b in blocked_by))
    if t["blocks"]:
        lines.append("Blocks: " + ", ".join(f"#{b}" for b in t["blocks"]))
    return ToolOutput("\n".join(lines), details={"task": {
        "id": t["id"], "subject": t["subject"], "description": t["description"], "status": t["status"],
        "blocks": list(t["blocks"]), "blockedBy": blocked_by}})


async def task_list(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """The list, and as `tool_use_result` Claude Code's TaskListOutput (`owner` only when set)."""
    items = _tasks(ctx).items
    out, rows = [], []
    for t in items.values():
        blocked_by = _open_blockers(items, t)
        row: dict[str, Any] = {"id": t["id"], "subject": t["subject"], "status": t["status"]}
        line = f"#{t['id']} [{t['status']}] {t['subject']}"
        if t["owner"]:
            line += f" ({t['owner']})"
            row["owner"] = t["owner"]
        if blocked_by:
            line += " [blocked by " + ", ".join(f"#{b}" for b in blocked_by) + "]"
        out.append(line)
        rows.append({**row, "blockedBy": blocked_by})
    return ToolOutput("\n".join(out) or "No tasks found", details={"tasks": rows})


def _updated(task_id: str, text: str, changed: list[str], before: str, after: str) -> ToolOutput:
    """TaskUpdate's answer, and as `tool_use_result` Claude Code's TaskUpdateOutput."""
    details: dict[str, Any] = {"success": True, "taskId": task_id, "updatedFields": changed}
    if after != before:
        details["statusChange"] = {"from": before, "to": after}
    return ToolOutput(text, details=details)


def _not_updated(task_id: str, error: str) -> ToolOutput:
    return ToolOutput(error, details={"success": False, "taskId": task_id, "updatedFields": [], "error": error})


async def task_update(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    tasks = _tasks(ctx)
    task_id = str(inp.get("taskId"))
    t = tasks.items.get(task_id)
    if t is None:
        return _not_updated(task_id, "Task not found")
    status, before = inp.get("status"), t["status"]
    if status is not None and status not in (*STATUSES, "deleted"):
        raise ToolError(f"status must be one of {', '.join((*STATUSES, 'deleted'))}, got {status!r}")
    if status == "deleted":
        _delete(tasks, task_id)
        return _updated(task_id, f"Updated task #{task_id} deleted", ["deleted"], before, "deleted")
    if status == "completed" and before != "completed" and ctx.ports is not None:
        refused = await ctx.ports.hooks.task_completed(task_id, t["subject"], t["description"])
        if refused is not None:
            return _not_updated(task_id, refused)  # not completed: the task keeps its status, the model reads why
    changed = _set_fields(t, inp, status)
    _link(tasks, task_id, inp, changed)
    if changed:
        _save(tasks)
    text = f"Updated task #{task_id} {', '.join(changed)}" if changed else f"Task #{task_id}: nothing to update"
    return _updated(task_id, text, changed, before, t["status"])


def _delete(tasks: TaskState, task_id: str) -> None:
    """The task gone, and from every other task's blocks and blockedBy."""
    del tasks.items[task_id]
    for rest in tasks.items.values():
        rest["blocks"] = [b for b in rest["blocks"] if b != task_id]
        rest["blockedBy"] = [b for b in rest["blockedBy"] if b != task_id]
    _save(tasks)


def _set_fields(t: dict[str, Any], inp: dict[str, Any], status: Any) -> list[str]:
    """The text fields, the metadata and the status the update gives new values: set, and their
    names (in Claude Code's order: its updatedFields)."""
    changed: list[str] = []
    for key in ("subject", "description", "activeForm", "owner"):
        v = _text(inp, key)
        if v is not None and v != t[key]:
            t[key] = v
            changed.append(key)
    meta = inp.get("metadata")
    if isinstance(meta, dict):
        _merge_metadata(t["metadata"], meta)
        changed.append("metadata")
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
