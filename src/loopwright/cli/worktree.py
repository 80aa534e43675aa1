"""Room: cli. Owns `--worktree [NAME]` / `-w`: the session starts in a git worktree of its own, as
Claude Code 2.1.332 starts one; may import worktrees, settings, hooks and the rooms below cli.

Before the session starts (before SessionStart, as in Claude Code) the worktree NAME (a random
three-word name when none is given) is made by the WorktreeCreate hooks of the settings, else by
git (worktrees.py: `.claude/worktrees/NAME`, branch `worktree-NAME`), and the run's cwd becomes it.
`-p` leaves it in place, as Claude Code does; the interactive mode, on exit, removes one the
session left unchanged (with its branch) and asks about one it changed (a hook's worktree: the
WorktreeRemove hooks remove it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..hooks import HookContext, RunHooks, run_hooks
from ..ids import new_uuid
from ..options import AgentOptions
from ..runconfig import build_run_config
from ..worktrees import (
    Worktree,
    WorktreeError,
    changed,
    make_worktree,
    random_name,
    remove_worktree,
)
from .config import UsageError


@dataclass
class Session:
    """A `--worktree` session's worktree and the hooks that made it (and may remove it)."""

    worktree: Worktree
    hooks: RunHooks


def enter(options: AgentOptions, name: str | None) -> tuple[AgentOptions, Session | None]:
    """`options` moved into the worktree `name` ("": a random name; None: no --worktree), and the
    session's worktree. UsageError saying why none could be made (the run does not start)."""
    if name is None:
        return options, None
    cwd = Path(options.cwd or ".").resolve()
    if options.session_id is None and options.resume is None and not options.continue_conversation:
        options = replace(options, session_id=new_uuid())  # the hooks see the session's own id
    config = build_run_config(options, cwd)
    hooks = run_hooks(config.hooks, HookContext(options.session_id or "", "", str(cwd),
                                                config.permissions.mode or "default", options.deps))
    try:
        base = config.settings.worktree_base_ref if config.settings is not None else "fresh"
        wt = asyncio.run(make_worktree(cwd, name or random_name(), hooks, base))
    except RuntimeError as e:  # WorktreeError, a WorktreeCreate hook's failure
        raise UsageError(f"Error creating worktree: {e}") from None
    return replace(options, cwd=str(wt.path)), Session(wt, hooks)


def leave(session: Session | None, ask: Callable[[str], str], say: Callable[[str], None]) -> None:
    """The interactive session ends: an unchanged git worktree is removed with its branch; a
    changed one (or a hook's) is removed only when the user says so, else kept and named."""
    if session is None:
        return
    wt = session.worktree
    if changed(wt):
        try:
            answer = ask(f"The worktree {wt.path} has changes. Remove it{' and its branch ' + wt.branch if wt.branch else ''}? "
                         "[y/N] ").strip().lower()
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer not in ("y", "yes"):
            say(f"worktree kept: {wt.path}" + (f" (branch {wt.branch})" if wt.branch else ""))
            return
    try:
        gone = asyncio.run(remove_worktree(wt, session.hooks))
    except (WorktreeError, OSError) as e:
        say(f"worktree kept: {wt.path}: {e}")
        return
    say(f"worktree removed: {wt.path}" if gone else
        f"worktree kept: {wt.path} (no WorktreeRemove hook removed it)")
