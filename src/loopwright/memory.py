"""Room: skills and memory. Owns project memory (AGENTS.md, CLAUDE.md); may import home only.

Project memory: AGENTS.md, CLAUDE.md and LOOPWRIGHT.md, sent once at the start of a conversation.

Owns: finding the memory files a run reads, their `@path` imports, and the text block that
carries them. As Claude Code does, the text goes in the first user message (not in the system
prompt, which stays byte-stable so prompt caching keeps working). Unlike Claude Code, AGENTS.md
is read too. Imports nothing of the loop's; settings sources decide which files:

  user     ~/.loopwright/AGENTS.md (and LOOPWRIGHT.md) — $LOOPWRIGHT_HOME
  project  AGENTS.md, CLAUDE.md, LOOPWRIGHT.md (and .claude/CLAUDE.md) in each directory from
           the repository root (the nearest `.git` above cwd; cwd alone outside a repository)
           down to cwd, outermost first
  local    CLAUDE.local.md and AGENTS.local.md in the same directories

`@path` in a file imports another (relative to the importing file, `~` expanded, at most 5
deep, each file once: cycles are ignored), except inside code spans and code blocks. A missing,
binary or directory import is named in a warning, never fatal.

What the project's files read stays in the workspace (trust.py): a project or local memory file,
or one of its imports, whose real path (after symlinks) is outside the repository root and the
user's own memory directories ($LOOPWRIGHT_HOME, ~/.claude) is skipped with a note until the
workspace is trusted, and named in a warning when it is sent after trust. Every memory file must
be a regular file of at most MAX_FILE_BYTES (a device, a FIFO or a bigger file is skipped with a
note, never read).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .trust import Ignored

PROJECT_NAMES = ("AGENTS.md", "CLAUDE.md", "LOOPWRIGHT.md", ".claude/CLAUDE.md")
LOCAL_NAMES = ("CLAUDE.local.md", "AGENTS.local.md")
USER_NAMES = ("AGENTS.md", "LOOPWRIGHT.md")
MAX_IMPORT_DEPTH = 5
MAX_FILE_BYTES = 256 * 1024  # a memory file larger than this is skipped (with a warning)
# Patterns as strings: re compiles them (and keeps them in its cache) at their first use, not at
# every start.
IMPORT = r"(?<![\w`@])@((?:~|\.{1,2})?/?[\w.~/-][\w.~/-]*)"
FENCE = r"^\s*(```|~~~)"
SPAN = r"`[^`\n]*`"


@dataclass
class MemoryFile:
    """One memory file read, with its scope and text."""

    path: Path
    scope: str  # user | project | local | import
    text: str


@dataclass(eq=False, repr=False)  # (identity: what one run read, the files' text in it)
class Memory:
    """The files read, in the order they are sent, and what went wrong along the way."""

    files: list[MemoryFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)  # skipped until the workspace is trusted

    def block_text(self) -> str | None:
        """The text of the block prepended to the first user message, or None."""
        if not self.files:
            return None
        parts = ["<system-reminder>\nAs you answer the user's questions, you can use the following context, "
                 "the instructions of the project's memory files. They override default behaviour; follow them "
                 "exactly as written.\n"]
        for f in self.files:
            what = {"user": "the user's own instructions for all projects",
                    "project": "project instructions, checked into the codebase",
                    "local": "the user's private project instructions, not checked in",
                    "import": "imported by a memory file"}[f.scope]
            parts.append(f"Contents of {f.path} ({what}):\n\n{f.text.rstrip()}\n")
        parts.append("</system-reminder>")
        return "\n".join(parts)

    def describe(self) -> list[dict[str, object]]:
        return [{"path": str(f.path), "scope": f.scope, "chars": len(f.text)} for f in self.files]


def repo_root(cwd: Path) -> Path:
    """The nearest directory at or above cwd holding `.git`; cwd itself when there is none."""
    for d in (cwd, *cwd.parents):
        if (d / ".git").exists():
            return d
    return cwd


def _dirs(cwd: Path) -> list[Path]:
    """The directories from the repository root down to cwd, outermost first."""
    root = repo_root(cwd)
    out = [root]
    for part in cwd.relative_to(root).parts:
        out.append(out[-1] / part)
    return out


@dataclass
class _Reach:
    """Where a chain of memory files may read: None for the user's own chain (anywhere)."""

    roots: tuple[str, ...] | None
    trusted: bool

    def outside(self, real: Path) -> bool:
        r = str(real)
        return self.roots is not None and not any(r == d or r.startswith(d.rstrip("/") + "/") for d in self.roots)


def project_reach(cwd: Path, trusted: bool, home: Path | None = None) -> _Reach:
    from .home import loopwright_home

    dirs = [repo_root(cwd), cwd, home or loopwright_home(), Path.home() / ".claude"]
    return _Reach(tuple(dict.fromkeys(os.path.realpath(d) for d in dirs)), trusted)


def load_memory(cwd: str | Path, sources: Iterable[str], home: Path | None = None,
                trusted: bool | None = None) -> Memory:
    """The memory files of `sources` ("user", "project", "local") for a run in `cwd`. `trusted`:
    whether the workspace is trusted (None: as the trust store says)."""
    from .home import loopwright_home
    from .trust import trusted_for

    mem = Memory()
    seen: set[Path] = set()
    cwd = Path(cwd).resolve()
    want = set(sources)
    candidates: list[tuple[Path, str]] = []
    if "user" in want:
        base = home or loopwright_home()
        candidates += [(base / n, "user") for n in USER_NAMES]
    dirs = _dirs(cwd)
    for d in dirs:
        if "project" in want:
            candidates += [(d / n, "project") for n in PROJECT_NAMES]
        if "local" in want:
            candidates += [(d / n, "local") for n in LOCAL_NAMES]
    reach = project_reach(cwd, trusted_for(None, cwd) if trusted is None else trusted, home)
    for path, scope in candidates:
        if os.path.lexists(path) and not path.is_dir():  # a link to a FIFO or a device is named, not read
            _add(mem, path, scope, seen, 0, _Reach(None, True) if scope == "user" else reach)
    return mem


def nested_memory(path: str | Path, cwd: Path, seen: set[Path], sources: Sequence[str],
                  trusted: bool | None = None, reach: _Reach | None = None) -> Memory:
    """Memory files of directories below cwd that a tool first touched (`path` inside them),
    read the first time only: Claude Code's nested CLAUDE.md behaviour. `reach`: project_reach's
    answer for this cwd and trust, when the caller keeps it (a run asks after every tool call)."""
    from .trust import trusted_for

    mem = Memory()
    if reach is None:
        reach = project_reach(cwd, trusted_for(None, cwd) if trusted is None else trusted)
    p = Path(path)
    p = (cwd / p) if not p.is_absolute() else p
    try:
        p = p.resolve()
        rel = p.relative_to(cwd)
    except (OSError, ValueError):
        return mem
    d = cwd
    for part in rel.parts[:-1] if not p.is_dir() else rel.parts:
        d = d / part
        names = [*(PROJECT_NAMES if "project" in sources else ()), *(LOCAL_NAMES if "local" in sources else ())]
        for n in names:
            f = d / n
            if os.path.lexists(f) and not f.is_dir() and f.resolve() not in seen:
                _add(mem, f, "local" if n in LOCAL_NAMES else "project", seen, 0, reach)
    return mem


def in_workspace(real: Path, cwd: Path) -> bool:
    """Is `real` (a project file's real path, links resolved) in the workspace: the working directory
    or its repository? Not when a repository's file links to ~/.bashrc or ~/.ssh/id_rsa: what is
    written there, or read from there for the model, is the user's, not the project's."""
    return any(real.is_relative_to(os.path.realpath(r)) for r in (cwd, repo_root(cwd.resolve())))


def read_capped(real: Path, cap: int = MAX_FILE_BYTES) -> bytes | str:
    """The file's bytes, or why it is not read: only a regular file of at most `cap` bytes
    (opened without blocking, so a FIFO never hangs the run; checked on the open file). Memory
    files, skills and commands of a project are read through it."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        return f"cannot read ({e.strerror or e})"
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file (a device, FIFO or socket), not read"
        if st.st_size > cap:
            return f"{st.st_size:,} bytes, over the {cap:,}-byte cap for a memory file; not read"
        data = f.read(cap + 1)
    if len(data) > cap:  # grew while we looked
        return f"over the {cap:,}-byte cap for a memory file; not read"
    return data


def _add(mem: Memory, path: Path, scope: str, seen: set[Path], depth: int, reach: _Reach,
         via: Path | None = None) -> None:
    real = path.resolve()
    if real in seen:
        return  # read once: a cycle of imports, or the same file reached twice
    seen.add(real)
    if reach.outside(real):
        if not reach.trusted:
            what = f"@{path} import (it is {real}, outside the workspace)" if via else \
                f"memory file (a link to {real}, outside the workspace)"
            mem.ignored.append(Ignored("outside-read", str(via or path), what))
            return
    data = read_capped(real)
    if isinstance(data, str):
        mem.warnings.append(f"{path}: {data}")
        return
    if b"\0" in data[:8192]:
        mem.warnings.append(f"{path}: a binary file, not read as memory")
        return
    if reach.outside(real):  # trusted: sent, and shown
        mem.warnings.append(f"{path}: {real} is outside the workspace; sent because the workspace is trusted")
    text = data.decode("utf-8", "replace")
    mem.files.append(MemoryFile(path, scope, text))
    for target in imports(text):
        ref = Path(os.path.expanduser(target)) if target.startswith("~") else path.parent / target
        if depth + 1 > MAX_IMPORT_DEPTH:
            mem.warnings.append(f"{path}: @{target} not imported (imports go at most {MAX_IMPORT_DEPTH} deep)")
        elif not ref.exists():
            mem.warnings.append(f"{path}: @{target} not found ({ref})")
        elif ref.is_dir():
            mem.warnings.append(f"{path}: @{target} is a directory, not imported")
        else:
            _add(mem, ref, "import", seen, depth + 1, reach, path)


def imports(text: str) -> list[str]:
    """The `@path` references of a memory file, outside code blocks and code spans."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if re.match(FENCE, line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in re.finditer(IMPORT, re.sub(SPAN, "", line)):
            target = m.group(1).rstrip(".,;:")
            if "/" in target or "." in target or target.startswith("~"):  # a path, not an @mention
                out.append(target)
    return out


INIT_TEMPLATE = """# AGENTS.md

Instructions for coding agents working in this repository (read by loopwright, Codex and other
agents; Claude Code reads CLAUDE.md: `@AGENTS.md` in it imports this file).

## Build and test
- Install: TODO
- Run the tests: TODO

## Conventions
- TODO: code style, naming, where things live.

## Before you finish
- Run the tests and make sure they pass.
"""
