"""Room: batch (a front end, beside cli). Owns where a task runs: in place, in a copy or in a git
worktree (Workspace; the worktree itself: worktrees.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..home import private_dir, write_private
from ..worktrees import add_git_worktree, git, remove_git_worktree
from .tasks import RunSpec

# --- isolation ---

_git = git  # (worktrees.py: the one home of git worktrees)


class Workspace:
    """Where a task runs: its own cwd, a copy of it, or a fresh git worktree (removed after,
    its diff kept as a patch)."""

    def __init__(self, spec: RunSpec, attempt: int, reuse: bool = False) -> None:
        self.spec = spec
        self.reuse = reuse
        self.source = Path(spec.options.cwd or os.getcwd())
        self.path = self.source
        base = spec.workdir or Path.cwd()
        self.target = base / "workspaces" / f"{_safe(spec.task.id)}-{attempt}"

    def __enter__(self) -> Workspace:
        mode = self.spec.isolate
        if mode != "none" and self.reuse and self.target.is_dir():  # a resumed session goes on in its files
            self.path = self.target
        elif mode == "copy":
            shutil.rmtree(self.target, ignore_errors=True)
            source = self.source.resolve()
            private_dir(self.target.parent)  # the copies hold the project's files: the user's only
            shutil.copytree(source, self.target, symlinks=True, ignore=_leaving_out(self._batchs_own()))
            self.path = self.target
        elif mode == "worktree":
            shutil.rmtree(self.target, ignore_errors=True)
            private_dir(self.target.parent)
            add_git_worktree(self.source, self.target)  # (a WorktreeError is a RuntimeError)
            self.path = self.target
        return self

    def _batchs_own(self) -> list[Path]:
        """What the batch itself writes, which a copy must never hold, or copies would copy copies
        (tasks with `"cwd": "."` and the results beside the task file: every copy inside the
        source): this copy, every workspace and patch, the results file."""
        base = self.spec.workdir or Path.cwd()
        own = [self.target, base / "workspaces", base / "patches"]
        if self.spec.workdir is not None and self.spec.results is not None:
            own.append(self.spec.workdir)  # RESULTS.work: the batch's alone
        if self.spec.results is not None:
            own.append(self.spec.results)
        return own

    def report(self) -> dict[str, Any]:
        """The workspace, its `git diff --stat`, and (worktree) the patch file."""
        if self.spec.isolate == "none":
            return {}
        out: dict[str, Any] = {"workspace": str(self.path)}
        if _git(self.path, "rev-parse", "--git-dir").returncode == 0:
            _git(self.path, "add", "-A", "--intent-to-add")  # new files show in the diff too
            out["diff_stat"] = _git(self.path, "diff", "--stat").stdout.rstrip()
            if self.spec.isolate == "worktree":
                patch = (self.spec.workdir or Path.cwd()) / "patches" / f"{_safe(self.spec.task.id)}.patch"
                write_private(patch, _git(self.path, "diff", "--binary").stdout)
                out["patch"] = str(patch)
        return out

    def __exit__(self, *exc: object) -> None:
        if self.spec.isolate == "worktree":
            remove_git_worktree(self.source, self.target)


def _leaving_out(paths: list[Path]) -> Callable[[str, list[str]], set[str]]:
    """copytree's `ignore`: the entries that are one of `paths` (compared resolved, so that a copy
    is a subset of its source: never larger)."""
    skip = {str(p.resolve()) for p in paths}
    parents = {os.path.dirname(p) for p in skip}

    def ignore(directory: str, names: list[str]) -> set[str]:
        if directory not in parents:  # (copytree walks the resolved source: plain string compares)
            return set()
        return {n for n in names if os.path.join(directory, n) in skip}

    return ignore


def _safe(task_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in task_id)[:80] or "task"
