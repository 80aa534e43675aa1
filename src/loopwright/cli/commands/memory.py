"""Room: cli. Owns the REPL's memory commands (/memory, /init); may import the rooms below cli and
cli.commands' host and panel.

- `/memory`: the memory files this session reads, by scope and name, in a panel.
- `/memory add [--user] TEXT`: TEXT appended as a list item
  to the project's memory file (the first of AGENTS.md / CLAUDE.md in the working directory;
  AGENTS.md is created when neither exists) or, with --user, to $LOOPWRIGHT_HOME/AGENTS.md. A
  project file that is a link out of the workspace is not written (a repository's link to ~/.bashrc).
  The file is read by new conversations. (Claude Code 2.1.332 has no `#` shortcut for this any
  more: a line starting with `#` is a prompt there, and here.)
- `/memory edit [N]`: memory file N (default 1) in $VISUAL / $EDITOR.
- `/init`: a turn asking the model to read the repository and write CLAUDE.md (Claude Code's
  /init); `/init --template`: a starter AGENTS.md, no model call (never over an existing file).
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

from .host import Command, Host
from .panel import Panel


def loaded_memory(host: Host) -> Any:
    """The session's memory (memory.Memory), or None when memory is off."""
    from ...memory import load_memory
    from ...trust import trusted_for

    o = host.base_options
    if not o.memory or not o.setting_sources:
        return None
    return load_memory(host.cwd(), o.setting_sources, trusted=trusted_for(o, host.cwd()))


def memory_target(host: Host, user: bool) -> Path:
    """The file `/memory add` appends to."""
    from ...home import loopwright_home

    if user:
        return loopwright_home() / "AGENTS.md"
    cwd = Path(host.cwd())
    return next((cwd / n for n in ("AGENTS.md", "CLAUDE.md") if (cwd / n).is_file()), cwd / "AGENTS.md")


def append_memory(host: Host, text: str, user: bool = False) -> None:
    """Append `text` as one list item to the memory file (created 0600 when missing)."""
    from ...home import open_private, private_dir
    from ...memory import in_workspace

    text = " ".join(text.split())
    if not text:
        host.say("  nothing to remember: /memory add TEXT")
        return
    path = memory_target(host, user)
    real = Path(os.path.realpath(path))
    if not user and not in_workspace(real, Path(host.cwd())):
        host.say(f"  ✗ not remembered: {path} is a link to {real}, outside the workspace; nothing was written")
        return
    try:
        if user:
            private_dir(path.parent)
        new = not os.path.lexists(real)
        # (the file the link check saw: a link made there since is not followed; O_NONBLOCK: a named
        # pipe put there opens at once, to be refused, where reading or opening it for writing waited
        # for a peer forever on the session's event loop, its screen and keys frozen)
        flags = os.O_APPEND | os.O_NOFOLLOW
        fd = open_private(real, flags | os.O_WRONLY | os.O_EXCL) if new else os.open(
            real, flags | os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            host.say(f"  ✗ not remembered: {path} is not a regular file; nothing was written")
            return
        os.set_blocking(fd, True)
        ends_line = st.st_size == 0 or os.pread(fd, 1, st.st_size - 1) == b"\n"  # (its last byte, not all of it)
        with open(fd, "a", encoding="utf-8") as f:
            f.write(("" if ends_line else "\n") + f"- {text}\n")
    except OSError as e:
        host.say(f"  ✗ not remembered: cannot write {path}: {e}")
        return
    host.say(f"  ✓ remembered in {path} (new conversations read it)")


async def memory(host: Host, arg: str) -> None:
    verb, _, rest = arg.partition(" ")
    if verb == "add":
        user = rest.strip().startswith("--user")
        append_memory(host, rest.strip().removeprefix("--user"), user)
        return
    mem = loaded_memory(host)
    if verb == "edit":
        await _edit(host, mem, rest.strip())
        return
    if verb:
        host.say("  /memory [add [--user] TEXT | edit [N]]")
        return
    if mem is None:
        host.open_panel(Panel("Memory", ["project memory is off (--bare, or no setting sources)"]))
        return
    lines: list[Any] = [f"{i}. {f.scope:8} {f.path}  ({len(f.text):,} chars)" for i, f in enumerate(mem.files, 1)]
    lines += [f"⚠ {w}" for w in mem.warnings]
    if not mem.files:
        lines.append(f"no memory files yet; /memory add TEXT appends to {memory_target(host, False)}, /init writes a starter")
    host.open_panel(Panel("Memory", lines, "/memory add TEXT · /memory edit N"))


async def _edit(host: Host, mem: Any, which: str) -> None:
    files = list(mem.files) if mem is not None else []
    n = int(which) if which.isdigit() else 1
    path = files[n - 1].path if 0 < n <= len(files) else memory_target(host, False) if not files else None
    if path is None:
        host.say(f"  no memory file {which} (see /memory)")
        return
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        host.say(f"  set $EDITOR to edit {path} here (or /memory add TEXT)")
        return
    from ..terminal import handed_over

    def edit() -> int:
        return subprocess.call([*shlex.split(editor), str(path)])

    try:  # (the editor gets the terminal in the user's modes: the session keeps it raw otherwise)
        code = await handed_over(edit)
    except (OSError, ValueError) as e:
        host.say(f"  ✗ cannot run {editor}: {e}")
        return
    host.say(f"  {path} edited ({editor} exited {code}); new conversations read it")


INIT_PROMPT = """Please analyze this codebase and create a CLAUDE.md file in the working directory, \
which will be given to future sessions of coding agents working in this repository.

Include:
1. The commands used most: how to build, lint and run the tests, including how to run one test.
2. The architecture at a high level: what a new reader must know that takes several files to see.

Keep it short and specific to this repository: no generic advice, no list of every file, nothing
that is easy to find. Read the README, the build and package files and any existing AGENTS.md,
CLAUDE.md, .cursorrules or .github/copilot-instructions.md first, and keep their important parts.
If a CLAUDE.md already exists, suggest improvements to it instead of replacing it."""


async def init(host: Host, arg: str) -> None:
    """`/init`: the model reads the repository and writes CLAUDE.md (a turn, as Claude Code's);
    `/init --template`: a starter AGENTS.md with TODOs, no model call."""
    if arg.strip() != "--template":
        host.say("  /init: asking the model to write CLAUDE.md from the repository (/init --template: a starter file)")
        host.start_turn(INIT_PROMPT)
        return
    from ...memory import INIT_TEMPLATE

    path = Path(host.cwd()) / "AGENTS.md"
    try:
        with open(path, "x", encoding="utf-8") as f:  # never over an existing file
            f.write(INIT_TEMPLATE)
    except FileExistsError:
        host.say(f"  {path} already exists; not changed")
        return
    except OSError as e:
        host.say(f"  cannot write {path}: {e}")
        return
    host.say(f"  wrote {path}: fill in the TODOs (it is read at the start of each new conversation)")


COMMANDS = [
    Command("memory", "the memory files read; add a line or edit one", memory, busy_ok=True,
            usage="/memory [add TEXT|edit N]"),
    Command("init", "the model writes CLAUDE.md from the repository (--template: a starter AGENTS.md)", init,
            usage="/init [--template]"),
]
