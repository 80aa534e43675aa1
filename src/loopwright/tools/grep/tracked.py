"""Room: built-in tools (on tools.base). Owns "tracked files are never hidden": the git-tracked files
under a search root that the walk leaves out (an ignore file names them, or a name starts with
a dot); may import nothing of loopwright's.

git shows a tracked file whatever .gitignore says, so Grep and Glob do too: a repository's
`.ignore`, `.rgignore` or `.gitignore` (or .git/info/exclude, the global excludes) cannot hide
a tracked file (a backdoor) from a search or a listing, nor can a dot directory hide one from
Grep (which skips hidden files, as ripgrep does, unless git tracks them; Claude Code's Grep
searches every hidden file). Grep searches these files and Glob lists them beside what the walk
found (search.py, glob.py).

`git ls-files --cached --ignored` answers from the index, one call per kind of ignore file (git
reads one per-directory file name at a time), and one more lists the tracked hidden files, run
side by side. git runs with the repository's
configuration made harmless for a listing: `core.fsmonitor` (a command a hostile repository's
.git/config could name) is off. No git, no repository, or a git error: nothing is added.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

# (git options) per kind of ignore file: .gitignore with info/exclude and the global excludes,
# then ripgrep's own .ignore and .rgignore
_KINDS = (["--ignored", "--exclude-standard"], ["--ignored", "--exclude-per-directory=.ignore"],
          ["--ignored", "--exclude-per-directory=.rgignore"],
          # the tracked files with a hidden name or under a hidden directory
          ["--", ":(glob)**/.*", ":(glob)**/.*/**"])
_GIT = ["git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "--no-optional-locks"]


def in_git_repo(root: Path) -> bool:
    """Is `root` (a directory) inside a git work tree (a `.git` here or above)?"""
    return any((d / ".git").exists() for d in (root, *root.parents))


async def _ls(root: Path, opts: list[str], sandbox: Any) -> list[str]:
    argv = [*_GIT, "ls-files", "-z", "--cached", *opts]
    env: dict[str, str] | None = {k: v for k, v in os.environ.items() if not k.startswith("GIT_TRACE")}
    fds: tuple[int, ...] = ()
    if sandbox is not None:  # the OS sandbox is on: git sees what rg and Bash see
        w = sandbox.wrap(argv, root, None, network=False)
        argv, env, fds = w.argv, w.env, w.pass_fds
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(root), env=env, pass_fds=fds,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:  # no git
        return []
    finally:
        for fd in fds:
            os.close(fd)
    try:
        out, _ = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if proc.returncode != 0:
        return []
    return [p for p in out.decode("utf-8", errors="surrogateescape").split("\0") if p]


async def tracked_hidden(root: Path, sandbox: Any = None) -> list[str]:
    """Root-relative ("/"-separated) paths of the regular files under directory `root` that git
    tracks and an ignore file names or a dot hides, sorted; [] outside a git repository. With
    the OS sandbox on (`sandbox`, as rg gets it), git runs in it."""
    if not in_git_repo(root):
        return []
    found: set[str] = set()
    for names in await asyncio.gather(*(_ls(root, k, sandbox) for k in _KINDS)):
        found.update(names)
    out = []
    for rel in sorted(found):
        try:
            st = os.lstat(root / rel)
        except OSError:  # tracked but deleted from the work tree
            continue
        if st.st_mode & 0o170000 == 0o100000:  # a regular file (not a symlink, not a submodule)
            out.append(rel)
    return out
