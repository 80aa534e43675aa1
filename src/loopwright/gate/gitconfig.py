"""Room: bases (the gate). Owns what a repository's git config makes git run; imports nothing of the package.

git obeys the config of the repository it finds, and a config can name programs that even a
read-only command runs: `core.fsmonitor` on `git status`, `diff.external` and textconv drivers on
`git diff`, `core.pager`, filters, `gpg.program` on signature checks, `include.path` (any of these,
from another file). A git command the gate would approve unasked is asked about when the
repository it works in (the workspace's own, or a nested one) sets such a key. The config is read
by git itself (`git config --file F --list`: git's own parser, which runs nothing), never by
guessing at its syntax here.
"""

from __future__ import annotations

import os
import subprocess

# Keys naming a program, by their last part (`diff.<driver>.textconv`, `filter.<name>.smudge`, ...).
_PROGRAM_NAMES = frozenset({"fsmonitor", "pager", "editor", "askpass", "sshcommand", "gitproxy", "hookspath",
                            "alternaterefscommand", "external", "textconv", "command", "clean", "smudge",
                            "process", "driver", "program", "helper", "packobjectshook", "uploadpack",
                            "receivepack", "cmd"})
# Sections whose every key may run a program or pull in another file's keys.
_PROGRAM_SECTIONS = frozenset({"pager", "include", "includeif"})
_BOOLEANS = frozenset({"", "true", "false", "yes", "no", "on", "off", "1", "0"})


def git_dir_of(real: str) -> tuple[str, str] | None:
    """(the git directory, its common directory) of the work tree holding `real` (the nearest
    `.git`, a directory or a `gitdir:` file, at or above it), or None outside any."""
    d = real
    while True:
        dot = os.path.join(d, ".git")
        if os.path.isdir(dot):
            return _with_common(os.path.realpath(dot))
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8", errors="replace") as f:
                    first = f.readline().strip()
            except OSError:
                return None
            if first.startswith("gitdir:"):
                return _with_common(os.path.realpath(os.path.join(d, first[len("gitdir:"):].strip())))
            return None
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def _with_common(git_dir: str) -> tuple[str, str]:
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as f:
            common = os.path.realpath(os.path.join(git_dir, f.readline().strip()))
    except OSError:
        common = git_dir
    return git_dir, common


def runs_a_program(key: str, value: str) -> bool:
    """Does this config entry (`key` as `git config --list` prints it) name a program git may run?"""
    parts = key.split(".")
    section, name = parts[0].lower(), parts[-1].lower()
    if section in _PROGRAM_SECTIONS:
        return True
    if key.lower() == "core.fsmonitor":
        return value.strip().lower() not in _BOOLEANS  # true: git's own daemon, anything else a program
    return name in _PROGRAM_NAMES


def configured_program(real: str) -> str | None:
    """Why git working in `real` may run a program its repository's config names (the key and
    the file), or None."""
    dirs = git_dir_of(real)
    if dirs is None:
        return None
    git_dir, common = dirs
    files = dict.fromkeys(os.path.join(d, n) for d in (common, git_dir) for n in ("config", "config.worktree"))
    for path in files:
        if not os.path.isfile(path):
            continue
        entries = _entries(path)
        if entries is None:
            return f"git would read {path}, which git cannot parse here"
        for key, value in entries:
            if runs_a_program(key, value):
                return (f"the repository's config ({path}) sets {key}, a program git may run; "
                        "the command is asked about instead")
    return None


def _entries(path: str) -> list[tuple[str, str]] | None:
    """The config file's entries as git reads them (no includes followed: an include is itself
    reported), or None when git cannot read it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        out = subprocess.run(["git", "config", "--file", path, "--no-includes", "--null", "--list"],
                             capture_output=True, env=env, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    entries = []
    for item in out.stdout.decode("utf-8", "replace").split("\0"):
        if item:
            key, _, value = item.partition("\n")
            entries.append((key, value))
    return entries
