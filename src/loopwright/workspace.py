"""Room: bases (the gate). Owns path resolution and the working directories; imports nothing of loopwright.

The gate's workspace: where a run may read and write, and what a path really names.

Owns path resolution as the kernel does it (every component in order, a symlink followed
before the `..` after it), the working directories (`inside`), protected paths, the
directories on PATH, the paths no resolution can pin down (`/proc/<pid>/...`, `/dev/fd/N`),
and where the next shell command starts (`shell_cwd`, the one resolver the Bash tool and the
gate share). It imports nothing from the rest of loopwright, so every layer may use it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Never auto-approved outside bypassPermissions: writing them changes how git, the
# harness, editors or the user's shell behave, or who may log in and with which credentials
# (these matter when the working directory is the home directory).
PROTECTED_DIRS = frozenset({".git", ".loopwright", ".claude", ".vscode", ".idea",
                            ".ssh", ".aws", ".gnupg", ".kube", ".docker"})
PROTECTED_FILES = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zprofile", ".zshenv",
    ".zlogin", ".zlogout", ".profile", ".gitconfig", ".gitmodules", ".envrc", ".mcp.json",
    ".netrc", ".pypirc", ".npmrc",
})
# Places that write nowhere (or to the command's own output).
HARMLESS_WRITES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"})
# Devices anyone may read: no file behind them.
HARMLESS_READS = frozenset({"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"})
# Paths whose meaning depends on the process that opens them: the gate's own realpath of
# `/proc/self/cwd` or `/dev/fd/3` says nothing about what the command will see.
_PROCESS_RELATIVE = r"^/(?:proc/(?:self|thread-self|\d+)(?:/|$)|dev/fd(?:/|$)|dev/std(?:in|out|err)$)"  # (compiled at first use)


# The tools' state (BashState ... ToolState): one run's or session's, changed in place; two are the same
# only if they are one object (eq=False), and their repr would be all of it (repr=False). docs/architecture.md
@dataclass(eq=False, repr=False)
class BashState:
    """Bash's: where the next command starts (the gate resolves a command's paths from it too)
    and the background shells (tools.bash.BackgroundShell, by id)."""

    cwd: Path | None = None
    shells: dict[str, Any] = field(default_factory=dict)
    next_id: int = 1


@dataclass(eq=False, repr=False)
class ReadState:
    """Read's stamps of the files it read (path -> mtime.stamp's value): Edit and Write refuse a
    file changed since."""

    stamps: dict[str, tuple[int, int, int, bytes | None] | None] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class TodoState:
    """TodoWrite's task list (None: never written)."""

    items: list[dict[str, Any]] | None = None


@dataclass(eq=False, repr=False)
class TaskState:
    """The Task tools' list (TaskCreate, TaskUpdate, ...): the tasks by id, and the next id.
    `path`: where the session keeps it between its runs (beside a saved session's transcript, as
    Claude Code keeps it for the session: a `--resume`/`--continue` finds it); None: this run only."""

    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    next_id: int = 1
    path: Path | None = None
    loaded: bool = False  # (read from `path` at the first Task call of the run)


@dataclass(eq=False, repr=False)
class SearchState:
    """What Grep and Glob search with: the engine (tests and benchmarks force "rg" or "python"),
    and the gate's predicate for the files Read deny rules hide (left out of what they list)."""

    engine: str = "auto"
    denied: Callable[[str], bool] | None = None


@dataclass(eq=False, repr=False)
class GrantState:
    """Allow rules granted during the run: the allowed-tools of a skill the model loaded (skills.py).
    The gate adds them to its allow rules (deny and ask rules still come first). A tuple, changed
    by `add` (or replaced whole): the gate knows it has them all while it is the same object (a
    list counted was missed when an item was replaced in place, issue 41)."""

    rules: tuple[str, ...] = ()
    closed: str | None = None  # why nothing may be granted (managed allowManagedPermissionRulesOnly)

    def add(self, rules: Iterable[str]) -> None:
        """Grant `rules` too, from now on (none while `closed`)."""
        if self.closed is None:
            self.rules = (*self.rules, *rules)


@dataclass(eq=False, repr=False)
class ToolState:
    """What the tools of one run share, one typed slot per concern."""

    bash: BashState = field(default_factory=BashState)
    read: ReadState = field(default_factory=ReadState)
    todo: TodoState = field(default_factory=TodoState)
    tasks: TaskState = field(default_factory=TaskState)
    search: SearchState = field(default_factory=SearchState)
    grants: GrantState = field(default_factory=GrantState)
    # The file tools' paths as the gate judged them since a tool last ran on them: (tool name, input
    # string, "" for none) -> [(lexical, real)], every judgment (two calls of one path in a turn are judged before either
    # runs). The tool refuses a path that resolves elsewhere than any of them when it runs (a symlink
    # swapped after a judgment: tools/paths.resolve), and opens what it resolved without following a
    # symlink (tools/paths.open_dir).
    judged: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)


def shell_cwd(state: ToolState | None, default: Path) -> Path:
    """Where the next Bash command starts: Bash keeps its directory between calls; a
    directory that is gone means it starts in the run's cwd."""
    cwd = state.bash.cwd if state is not None else None
    return cwd if cwd is not None and cwd.is_dir() else default


def process_relative(path: str) -> bool:
    """Does this absolute path name a process's own files (fd table, root, cwd)?"""
    return re.match(_PROCESS_RELATIVE, path) is not None and path not in HARMLESS_WRITES


def kernel_path(path: str) -> tuple[str, bool]:
    """(the path the kernel opens for absolute `path`, whether the walk passed through a
    process-relative place such as /proc/self/cwd or /dev/fd/3).

    Component by component, as namei does: a symlink is read and its target walked in its
    place before the rest (so `..` after a symlink leaves the target's parent); a missing
    component ends the lookup and the rest is appended as written."""
    done = "/"
    todo = [c for c in path.split("/") if c][::-1]
    links = 0
    flagged = False
    while todo:
        c = todo.pop()
        if c == ".":
            continue
        if c == "..":
            done = os.path.dirname(done)
            continue
        nxt = os.path.join(done, c)
        if process_relative(nxt):
            flagged = True
        try:
            target = os.readlink(nxt)
        except OSError:  # not a symlink, or missing
            if not os.path.lexists(nxt):
                rest = [x for x in [c, *todo[::-1]]]
                return os.path.normpath(os.path.join(done, *rest)), flagged
            done = nxt
            continue
        links += 1
        if links > 40:  # ELOOP: the kernel refuses it; say so by flagging
            return os.path.normpath(path), True
        if target.startswith("/"):
            done = "/"
        todo.extend([x for x in target.split("/") if x][::-1])
    return done, flagged


def protected(path: str) -> str | None:
    """Why writing this path is never auto-approved, or None."""
    parts = path.split("/")
    for part in parts[:-1]:
        if part in PROTECTED_DIRS:
            return f"{part} is a protected directory"
    if parts[-1] in PROTECTED_DIRS or parts[-1] in PROTECTED_FILES:
        return f"{parts[-1]} is a protected path"
    return None


@dataclass(eq=False)  # (identity: the directories one gate judges against)
class Workspace:
    """The working directories, the home directory and the PATH a run's gate judges against."""

    cwd: str | Path | None = None
    add_dirs: Sequence[str | Path] = ()
    home: str | Path | None = None
    exec_path: str | None = None  # None: this process's PATH
    state: ToolState | None = None

    def __post_init__(self) -> None:
        self.root = os.path.abspath(self.cwd or ".")
        self.home_dir = os.path.abspath(os.path.expanduser(str(self.home)) if self.home else os.path.expanduser("~"))
        dirs = [self.root, *(os.path.abspath(os.path.join(self.root, os.path.expanduser(str(d))))
                             for d in self.add_dirs)]
        self.dirs = [os.path.realpath(d) for d in dirs]
        self.real_root = self.dirs[0]  # (taken once: what inside() and the path rules hold a path against)
        # Where the run's relative paths and its first shell command start: the root, or an isolated
        # subagent's worktree (begin_at)
        self.start, self.real_start = self.root, self.real_root
        path = os.environ.get("PATH", "") if self.exec_path is None else self.exec_path
        self.path_dirs = {os.path.realpath(os.path.join(self.root, d or ".")) for d in path.split(os.pathsep)}

    def begin_at(self, cwd: str) -> None:
        """Judge the run in `cwd` (an isolated subagent's worktree; this workspace: a copy of its
        parent's), where its tools open paths: its relative paths and its first shell command
        start there, it is a working directory too, and a path in it is also judged as the same
        path in the root (as_project: the rules and protected names written for the project hold
        in its copy, and the folders the worktree sits in are not the file's)."""
        self.start = os.path.abspath(cwd)
        self.real_start = os.path.realpath(self.start)
        if self.real_start not in self.dirs:
            self.dirs = [*self.dirs, self.real_start]

    def as_project(self, path: str) -> str:
        """`path` (absolute, lexical or real) in the start directory (begin_at) as the same path in
        the root; any other path as it is."""
        for here, there in ((self.real_start, self.real_root), (self.start, self.root)):
            if path == here or path.startswith(here.rstrip("/") + "/"):
                return there + path[len(here):]
        return path

    def expand_tilde(self, p: str) -> str:
        if p == "~" or p.startswith("~/"):
            return self.home_dir + p[1:]
        if p.startswith("~"):
            return os.path.expanduser(p)
        return p

    def resolve(self, p: str, base: str | None = None) -> tuple[str, str]:
        """(lexical absolute path, the path the kernel would open).

        The kernel walks a path component by component and follows a symlink before it
        applies the `..` after it (`link/../x` is x beside link's target), so the real path
        is realpath of the joined path, never of a lexically collapsed one. The lexical form
        (`..` collapsed) is kept only for matching rules written against the names used."""
        joined = os.path.join(base or self.start, self.expand_tilde(p))
        return os.path.normpath(joined), kernel_path(joined)[0]

    def shell_cwd(self) -> str:
        return str(shell_cwd(self.state, Path(self.start)))

    def inside(self, real: str) -> bool:
        return any(real == d or real.startswith(d.rstrip("/") + "/") for d in self.dirs)

    def on_exec_path(self, real: str) -> bool:
        return os.path.dirname(real) in self.path_dirs or real in self.path_dirs

    def unresolvable(self, p: str, base: str | None = None) -> str | None:
        """Why the gate cannot know what `p` names when the command opens it, or None."""
        if kernel_path(os.path.join(base or self.start, self.expand_tilde(p)))[1]:
            return f"{p} names a process's own files (/proc/<pid>, /dev/fd), which the gate cannot resolve"
        return None
