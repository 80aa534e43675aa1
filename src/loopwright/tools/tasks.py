"""Room: built-in tools (on tools.base). Owns the Task tools' implementation (their definitions:
tools.builtin), Claude Code 2.1.332's task list
(TaskCreate, TaskGet, TaskList, TaskUpdate: its default planning tools, which replaced TodoWrite
there); may import data types and tools.base.

The list lives in the run's tool state (`ctx.state.tasks`): ids "1", "2", ... in creation order.
TaskCreate fires TaskCreated and TaskUpdate to status "completed" fires TaskCompleted, before the
change, as Claude Code does: a hook's exit 2 (or `decision: "block"`) refuses the change and its
stderr goes back to the model as the tool's result ("<event> hook feedback: ...").

Like TodoWrite they change only the harness's state, never files or processes: no permission."""

from __future__ import annotations

from typing import Any

from .base import ToolContext, ToolError, ToolOutput

STATUSES = ("pending", "in_progress", "completed")


def _text(inp: dict[str, Any], key: str, required: bool = False) -> str | None:
    v = inp.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or (required and not v.strip()):
        raise ToolError(f"{key} must be a non-empty string")
    return v


async def task_create(inp: dict[str, Any], ctx: ToolContext) -> str | ToolOutput:
    subject, description = _text(inp, "subject", True) or "", _text(inp, "description") or ""
    tasks = ctx.state.tasks
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
    return f"Task #{task_id} created successfully: {subject}"


async def task_get(inp: dict[str, Any], ctx: ToolContext) -> str:
    t = ctx.state.tasks.items.get(str(inp.get("taskId")))
    if t is None:
        return "Task not found"
    lines = [f"Task #{t['id']}: {t['subject']}", f"Status: {t['status']}", f"Description: {t['description']}"]
    if t["blockedBy"]:
        lines.append("Blocked by: " + ", ".join(f"#{b}" for b in t["blockedBy"]))
    if t["blocks"]:
        lines.append("Blocks: " + ", ".join(f"#{b}" for b in t["blocks"]))
    return "\n".join(lines)


async def task_list(inp: dict[str, Any], ctx: ToolContext) -> str:
    items = ctx.state.tasks.items
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
    tasks = ctx.state.tasks
    task_id = str(inp.get("taskId"))
    t = tasks.items.get(task_id)
    if t is None:
        return "Task not found"
    status = inp.get("status")
    if status is not None and status not in (*STATUSES, "deleted"):
        raise ToolError(f"status must be one of {', '.join((*STATUSES, 'deleted'))}, got {status!r}")
    if status == "deleted":
        del tasks.items[task_id]
        for rest in tasks.items.values():
            rest["blocks"] = [b for b in rest["blocks"] if b != task_id]
            rest["blockedBy"] = [b for b in rest["blockedBy"] if b != task_id]
        return f"Updated task #{task_id} deleted"
    if status == "completed" and t["status"] != "completed" and ctx.ports is not None:
        refused = await ctx.ports.hooks.task_completed(task_id, t["subject"], t["description"])
        if refused is not None:
            return refused  # not completed: the task keeps its status, the model reads why
    changed: list[str] = []
    for key in ("subject", "description", "activeForm", "owner"):
        v = _text(inp, key)
        if v is not None and v != t[key]:
            t[key] = v
            changed.append(key)
    if status is not None and status != t["status"]:
        t["status"] = status
        changed.append("status")
    for key, back in (("addBlocks", "blockedBy"), ("addBlockedBy", "blocks")):
        ids = inp.get(key)
        for given in ids if isinstance(ids, list) else ():
            other = str(given)
            if other in tasks.items and other != task_id:
                mine = "blocks" if key == "addBlocks" else "blockedBy"
                if other not in t[mine]:
                    t[mine].append(other)
                    tasks.items[other][back].append(task_id)
                    if mine not in changed:
                        changed.append(mine)
    meta = inp.get("metadata")
    if isinstance(meta, dict):
        for k, v in meta.items():
            if v is None:
                t["metadata"].pop(k, None)
            else:
                t["metadata"][k] = v
        changed.append("metadata")
    return f"Updated task #{task_id} {', '.join(changed)}" if changed else f"Task #{task_id}: nothing to update"
