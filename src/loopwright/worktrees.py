"""Room: bases. Owns the git worktrees loopwright makes, in one place: a session's (`--worktree
NAME`), an isolated subagent's (`isolation: worktree`) and a batch task's (batching.isolation):
their names, where they go, their branch, whether one changed, and removing them; may import home
and hooks.

As Claude Code 2.1.332 does: a worktree named NAME is `<repo>/.claude/worktrees/<NAME>` on a new
branch `worktree-<NAME>` ("/" in NAME becomes "+" in both), made from origin's default branch when
the repository has an `origin/HEAD` (Claude Code's default base, "fresh"), else from HEAD; an
existing one of that name is entered again. A WorktreeCreate hook, when one is configured, makes
it instead of git (it prints the path); such a worktree is removed by the WorktreeRemove hooks,
never by git. A name is never a path: it is checked (Claude Code's rules) before anything is made."""

from __future__ import annotations

import re
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .home import private_dir

if TYPE_CHECKING:
    from .hooks import RunHooks

NAME_MAX = 64
_SEGMENT = re.compile(r"^[A-Za-z0-9._-]+$")
NOT_GIT = ("Cannot create a worktree: not in a git repository and no WorktreeCreate hooks are configured. "
           "Configure WorktreeCreate/WorktreeRemove hooks in settings.json to use worktree isolation with "
           "other VCS systems.")
_WORDS = (("brisk", "calm", "clever", "eager", "gentle", "lucid", "nimble", "quiet", "steady", "vivid"),
          ("building", "crafting", "drafting", "mapping", "mending", "shaping", "sorting", "tending", "tracing"),
          ("acorn", "comet", "falcon", "harbor", "lantern", "meadow", "otter", "pebble", "truffle", "willow"))


class WorktreeError(RuntimeError):
    """A worktree could not be made or named (the message says why, in one line)."""


@dataclass
class Worktree:
    """A worktree loopwright made (or entered again): its directory; for git's, the repository and
    the branch and commit it started from; a hook's has none of them (`hook_based`)."""

    path: Path
    root: Path | None = None
    branch: str | None = None
    head: str | None = None

    @property
    def hook_based(self) -> bool:
        return self.root is None


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a worktree (Claude Code's rules), or None: at most 64 characters,
    "/"-separated segments of letters, digits, ".", "_" and "-", never "." or ".." or ".git"."""
    if len(name) > NAME_MAX:
        return f"Invalid worktree name: must be {NAME_MAX} characters or fewer (got {len(name)})"
    for seg in name.split("/"):
        if seg in (".", ".."):
            return f'Invalid worktree name "{name}": must not contain "." or ".." path segments'
        if seg.lower() == ".git":
            return f'Invalid worktree name "{name}": "{seg}" is a reserved git directory name'
        if not _SEGMENT.match(seg):
            return (f'Invalid worktree name "{name}": each "/"-separated segment must be non-empty and contain '
                    "only letters, digits, dots, underscores, and dashes")
    return None


def random_name() -> str:
    """A name for an unnamed worktree (`--worktree` alone), three words as Claude Code's are."""
    return "-".join(secrets.choice(words) for words in _WORDS)


def git(cwd: str | Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git -C cwd args...`, its output captured (never raises for git's own failures)."""
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=120)


def repo_root(cwd: str | Path) -> Path | None:
    """The top of the git checkout `cwd` is in, or None (not in one, or no git)."""
    try:
        r = git(cwd, "rev-parse", "--show-toplevel")
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else None


def add_git_worktree(root: Path, target: Path, branch: str | None = None, base: str = "HEAD") -> None:
    """`git worktree add` of `base` at `target`: detached (`branch` None: a batch task's) or on a new
    `branch` (on that branch when it exists already). Raises WorktreeError with git's message."""
    git(root, "worktree", "prune")  # a run killed midway left its registration behind
    if branch is None:
        r = git(root, "worktree", "add", "--detach", str(target), base)
    elif git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").returncode == 0:
        r = git(root, "worktree", "add", str(target), branch)
    else:
        r = git(root, "worktree", "add", "-b", branch, str(target), base)
    if r.returncode != 0:
        if git(root, "rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:  # `git init` and no commit yet
            raise WorktreeError(f"{root} has no commit yet, so there is nothing to start a worktree from: commit "
                                "once, then try again")
        raise WorktreeError(f"git worktree add failed in {root}: {r.stderr.strip()}")


def remove_git_worktree(root: Path, target: Path, branch: str | None = None) -> None:
    """Remove the worktree at `target` (whatever it holds) and its `branch`; what is left of the
    directory goes too."""
    git(root, "worktree", "remove", "--force", str(target))
    if branch is not None:
        git(root, "branch", "-D", branch)
    if target.exists():
        import shutil  # (only when git left something behind)

        shutil.rmtree(target, ignore_errors=True)


def make_git_worktree(cwd: str | Path, name: str, base_ref: str = "fresh") -> Worktree:
    """The worktree NAME of the repository `cwd` is in: `.claude/worktrees/<NAME>` on branch
    `worktree-<NAME>`, made, or entered again when it exists. `base_ref` is Claude Code's
    `worktree.baseRef`: "fresh" starts it from origin/HEAD when there is one, "head" from HEAD.
    Raises WorktreeError."""
    if (problem := name_problem(name)) is not None:
        raise WorktreeError(problem)
    root = repo_root(cwd)
    if root is None:
        raise WorktreeError(NOT_GIT)
    flat = name.replace("/", "+")
    home = root / ".claude" / "worktrees"
    for d in (root / ".claude", home):  # never through a link a checkout could plant
        if d.is_symlink():
            raise WorktreeError(f"Cannot create a worktree: {d} is a symbolic link")
    target, branch = home / flat, f"worktree-{flat}"
    if repo_root(target) == target:  # made before: entered again, as it is
        head = git(target, "rev-parse", "HEAD").stdout.strip() or None
        return Worktree(target, root, git(target, "branch", "--show-current").stdout.strip() or None, head)
    if target.exists():
        raise WorktreeError(f"Cannot create a worktree: {target} exists and is not a worktree of {root}")
    private_dir(home)  # the worktrees' folder: the user's only
    fresh = base_ref != "head" and git(root, "rev-parse", "--verify", "--quiet",
                                           "refs/remotes/origin/HEAD").returncode == 0
    add_git_worktree(root, target, branch, "origin/HEAD" if fresh else "HEAD")
    return Worktree(target, root, branch, git(target, "rev-parse", "HEAD").stdout.strip() or None)


async def make_worktree(cwd: str | Path, name: str, hooks: RunHooks | None, base_ref: str = "fresh") -> Worktree:
    """The worktree NAME: made by the WorktreeCreate hooks when there are any, else by git.
    Raises WorktreeError (or hooks.work.WorktreeHookError) saying why none could be made."""
    if (problem := name_problem(name)) is not None:
        raise WorktreeError(problem)
    if hooks is not None:
        path = await hooks.worktree_create(name, str(cwd))
        if path is not None:
            return Worktree(Path(path))
    return make_git_worktree(cwd, name, base_ref)


def changed(wt: Worktree) -> bool:
    """Whether work happened in it: a file changed, added or removed, or a commit made. A hook's
    worktree counts as changed (loopwright cannot know: it is kept, as Claude Code keeps it)."""
    if wt.hook_based:
        return True
    if not wt.path.is_dir():
        return False
    status = git(wt.path, "status", "--porcelain", "--untracked-files=all")
    if status.returncode != 0 or status.stdout.strip():
        return True
    return git(wt.path, "rev-parse", "HEAD").stdout.strip() != (wt.head or "")


async def remove_worktree(wt: Worktree, hooks: RunHooks | None) -> bool:
    """Remove it: a hook's by the WorktreeRemove hooks (False: none configured, or one failed:
    it is kept), git's with its branch. True when it is gone."""
    if wt.hook_based:
        return hooks is not None and await hooks.worktree_remove(str(wt.path))
    assert wt.root is not None
    remove_git_worktree(wt.root, wt.path, wt.branch)
    return not wt.path.exists()


def describe(wt: Worktree) -> str:
    """Where the work stays: `worktreePath: ...` (and `worktreeBranch: ...`), Claude Code's lines."""
    return f"worktreePath: {wt.path}" + (f"\nworktreeBranch: {wt.branch}" if wt.branch else "")


__all__ = ["NAME_MAX", "Worktree", "WorktreeError", "add_git_worktree", "changed", "describe", "make_git_worktree",
           "make_worktree", "name_problem", "random_name", "remove_git_worktree", "remove_worktree", "repo_root"]
