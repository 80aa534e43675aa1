"""Room: bases (hooks). Owns the events of the agent's own work, as Claude Code 2.1.332 fires them:
its task list (TaskCreated, TaskCompleted: the Task tools) and its git worktrees (WorktreeCreate,
WorktreeRemove: `--worktree`, a subagent's `isolation: worktree`); may import hooks.output and hooks.results (types only).

`WorkEvents` is a part of `RunHooks` (hooks.events), kept apart so that the events module stays
one screenful per concern; it uses RunHooks' `_fire` and `_notes`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .output import cap, specific

if TYPE_CHECKING:
    from .results import Outcome

NO_PATH = ("hook succeeded but returned no worktree path (command: echo the path to stdout; "
           "http/callback: return hookSpecificOutput.worktreePath)")


class WorktreeHookError(RuntimeError):
    """A WorktreeCreate hook ran and gave no usable worktree (Claude Code then refuses to start the
    session or the isolated subagent: it never falls back to git)."""


class WorkEvents:
    """TaskCreated, TaskCompleted, WorktreeCreate and WorktreeRemove (mixed into RunHooks)."""

    async def _fire(self, event: str, target: str | None, data: dict[str, Any],
                    tool_use_id: str | None = None, tool_input: dict[str, Any] | None = None) -> list[Outcome]:
        raise NotImplementedError  # RunHooks' (hooks.events)

    def _notes(self, event: str, outs: list[Outcome], blocking_to_user: bool = False) -> None:
        raise NotImplementedError  # RunHooks' (hooks.events)

    def has(self, event: str) -> bool:
        """Whether any hook is configured for `event` (matcher-less events: all of them run)."""
        registry: Any = getattr(self, "registry", None)
        return registry is not None and bool(registry.jobs(event, None))

    async def task_created(self, task_id: str, subject: str, description: str) -> str | None:
        """The model is creating a task (TaskCreate). Returns the feedback when a hook refuses it
        (exit 2, or `decision: "block"`): the task is then not created, as in Claude Code."""
        return await self._task("TaskCreated", task_id, subject, description)

    async def task_completed(self, task_id: str, subject: str, description: str) -> str | None:
        """A task is being marked completed (TaskUpdate status "completed"). Returns the feedback
        when a hook refuses it: the task then keeps its status."""
        return await self._task("TaskCompleted", task_id, subject, description)

    async def _task(self, event: str, task_id: str, subject: str, description: str) -> str | None:
        outs = await self._fire(event, None, {"task_id": task_id, "task_subject": subject,
                                              "task_description": description})
        self._notes(event, outs)
        lines = [f"[{o.label}]: {o.stderr.strip() or 'blocked'}" for o in outs if o.exit_code == 2]
        lines += [f"[{o.label}]: {o.out.get('reason') or 'blocked'}" for o in outs if o.out.get("decision") == "block"]
        return cap(f"{event} hook feedback:\n" + "\n".join(lines)) if lines else None

    async def worktree_create(self, name: str, cwd: str) -> str | None:
        """Hooks that make the worktree instead of git: None when none is configured; else the
        absolute path the first hook gave (a command's stdout, or hookSpecificOutput.worktreePath;
        a relative one is taken from `cwd`). Raises WorktreeHookError when they gave none, or a
        path that is not a directory."""
        if not self.has("WorktreeCreate"):
            return None
        outs = await self._fire("WorktreeCreate", None, {"name": name})
        self._notes("WorktreeCreate", outs)
        for o in outs:
            if o.failed or o.exit_code != 0:
                why = o.error or o.stderr.strip() or f"exit status {o.exit_code}"
                raise WorktreeHookError(f"WorktreeCreate hook failed: {o.label}: {why}")
        for o in outs:
            given = specific(o).get("worktreePath")
            path = given if isinstance(given, str) else (o.stdout.strip().splitlines() or [""])[-1].strip() \
                if o.output is None else ""
            if path:
                full = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
                if not os.path.isdir(full):
                    raise WorktreeHookError(f"WorktreeCreate hook failed: {o.label} gave {path!r}, not a directory")
                return full
        raise WorktreeHookError(f"WorktreeCreate hook failed: {NO_PATH}")

    async def worktree_remove(self, worktree_path: str) -> bool:
        """A worktree a WorktreeCreate hook made is being removed: its WorktreeRemove hooks do it
        (observational: their output decides nothing). False when none is configured or one
        failed (the worktree is then kept)."""
        if not self.has("WorktreeRemove"):
            return False
        outs = await self._fire("WorktreeRemove", None, {"worktree_path": worktree_path})
        self._notes("WorktreeRemove", outs, blocking_to_user=True)
        return all(not o.failed and o.exit_code == 0 for o in outs)
