"""Room: built-in tools (on tools.base). Owns "tracked files are never hidden": the git-tracked files
under a search root that the walk leaves out (an ignore file names them, or a name starts with
a dot); may import nothing of loopwright's.

git shows a tracked file whatever .gitignore says, so Grep and Glob do too: a repository's
`.ignore`, `.rgignore` or `.gitignore` (or .git/info/exclude, the global excludes) cannot hide
a tracked file (a backdoor) from a search or a listing, nor can a dot directory hide one from
Grep (which skips hidden files, as ripgrep does, unless git tracks them; Claude Code's Grep
searches every hidden file). Grep searches these files and Glob lists them beside what the walk
found (search.py, glob.py).

git answers from the index: `git ls-files` lists the tracked files (the hidden ones are those
with a segment starting with a dot), and `git ls-files --cached --ignored` the ignored ones, one
call per kind of ignore file (git reads one per-directory file name at a time), side by side.
Both answers are kept per repository while what they depend on is unchanged (~30 ms of git a
call saved on 27,000 tracked files, more on a busy machine): the listing while the index file
is (its mtime, size, inode), the ignored ones while, besides, every ignore file git could read
is: .gitignore, .ignore and .rgignore in each directory of a tracked file (present or absent:
a new one counts; ~5 ms of stat calls on 1,400 directories), info/exclude, the git config files
and the global excludes file.

git runs at the repository's top, with its configuration made harmless for a listing:
`core.fsmonitor` (a command a hostile repository's .git/config could name) is off. No git, no
repository, or a git error: nothing is added. With the OS sandbox on, git runs in it (and its
answers are not kept: the sandbox decides what it may read).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

# the kinds of ignore file: .gitignore with info/exclude and the global excludes, then ripgrep's
_KINDS = (["--exclude-standard"], ["--exclude-per-directory=.ignore"], ["--exclude-per-directory=.rgignore"])
_NAMES = (".gitignore", ".ignore", ".rgignore")
_GIT = ["git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "--no-optional-locks"]
MAX_REPOS = 8  # repositories whose answers are kept


def in_git_repo(root: Path) -> bool:
    """Is `root` (a directory) inside a git work tree (a `.git` here or above)?"""
    return any((d / ".git").exists() for d in (root, *root.parents))


async def _git(cwd: Path, args: list[str], sandbox: Any) -> bytes | None:
    """git's stdout, or None (no git, an error)."""
    argv = [*_GIT, *args]
    env: dict[str, str] | None = {k: v for k, v in os.environ.items() if not k.startswith("GIT_TRACE")}
    fds: tuple[int, ...] = ()
    if sandbox is not None:  # the OS sandbox is on: git sees what rg and Bash see
        w = sandbox.wrap(argv, cwd, None, network=False)
        argv, env, fds = w.argv, w.env, w.pass_fds
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env=env, pass_fds=fds,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:  # no git
        return None
    finally:
        for fd in fds:
            os.close(fd)
    try:
        out, _ = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return out if proc.returncode == 0 else None


def _names(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", errors="surrogateescape").split("\0") if p]


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


class _Repo:
    """One repository's answers, and what they were taken with."""

    def __init__(self, top: str, git_dir: str, common_dir: str, excludes: str) -> None:
        self.top, self.git_dir, self.common_dir, self.excludes = top, git_dir, common_dir, excludes
        self.index_stamp: object = ()  # never a real stamp
        self.candidates: list[str] = []  # the ignore files git may read beside tracked files
        self.hidden: list[str] = []  # tracked, with a segment starting with a dot
        self.files_stamp: object = ()
        self.ignored: list[str] = []  # tracked, named by an ignore file

    def index(self) -> object:
        return _stamp(os.path.join(self.git_dir, "index"))

    def ignore_files(self) -> object:
        home = os.path.expanduser("~")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        fixed = [os.path.join(self.common_dir, "info", "exclude"), os.path.join(self.common_dir, "config"),
                 os.path.join(self.git_dir, "config"), os.path.join(home, ".gitconfig"),
                 os.path.join(xdg, "git", "config"), os.path.join(xdg, "git", "ignore"), "/etc/gitconfig",
                 self.excludes]
        return tuple(map(_stamp, fixed + self.candidates))


_repos: dict[str, _Repo] = {}  # by the repository's top
_tops: dict[str, str] = {}  # a search root -> its repository's top


async def _find(root: Path, sandbox: Any) -> _Repo | None:
    out = await _git(root, ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"], sandbox)
    if out is None:
        return None
    lines = out.decode("utf-8", errors="surrogateescape").splitlines()
    if len(lines) < 3:
        return None
    top, git_dir, common = lines[0], lines[1], os.path.join(str(root), lines[2])
    cfg = await _git(root, ["config", "--path", "core.excludesFile"], sandbox)
    excludes = cfg.decode("utf-8", errors="surrogateescape").strip() if cfg else ""
    return _Repo(top, git_dir, os.path.normpath(common), excludes)


async def _answers(root: Path, sandbox: Any) -> tuple[_Repo, list[str]] | None:
    """The repository of `root` and its tracked files that the walk leaves out (top-relative)."""
    repo = _repos.get(_tops.get(str(root), "")) if sandbox is None else None
    if repo is None:
        repo = await _find(root, sandbox)
        if repo is None:
            return None
        if sandbox is None:
            repo = _repos.setdefault(repo.top, repo)  # another root of the same repository: one entry
            if len(_repos) > MAX_REPOS:
                _repos.pop(next(iter(_repos)))
            if len(_tops) >= 64 * MAX_REPOS:
                _tops.clear()
            _tops[str(root)] = repo.top
    top = Path(repo.top)
    index = repo.index()  # taken before git runs: a change meanwhile is seen next time
    if index != repo.index_stamp or sandbox is not None:
        out = await _git(top, ["ls-files", "-z", "--cached"], sandbox)
        if out is None:
            return None
        tracked = _names(out)
        dirs = {""}
        for p in tracked:
            d = p.rpartition("/")[0]
            while d not in dirs:
                dirs.add(d)
                d = d.rpartition("/")[0]
        repo.candidates = [os.path.join(repo.top, d, n) for d in sorted(dirs) for n in _NAMES]
        repo.hidden = [p for p in tracked if p.startswith(".") or "/." in p]
        repo.index_stamp, repo.files_stamp = index, ()
    files = repo.ignore_files()
    if files != repo.files_stamp or sandbox is not None:
        outs = await asyncio.gather(*(_git(top, ["ls-files", "-z", "--cached", "--ignored", *k], sandbox)
                                      for k in _KINDS))
        if any(o is None for o in outs):
            return None
        repo.ignored = sorted({p for o in outs if o is not None for p in _names(o)})
        repo.files_stamp = files
    return repo, [*repo.hidden, *repo.ignored]


async def tracked_hidden(root: Path, sandbox: Any = None) -> list[str]:
    """Root-relative ("/"-separated) paths of the regular files under directory `root` that git
    tracks and an ignore file names or a dot hides, sorted; [] outside a git repository. With
    the OS sandbox on (`sandbox`, as rg gets it), git runs in it."""
    if not in_git_repo(root):
        return []
    got = await _answers(root, sandbox)
    if got is None:
        return []
    repo, names = got
    try:  # git names the top by its real path
        under = os.path.relpath(os.path.realpath(root), repo.top)
    except ValueError:
        return []
    prefix = "" if under == "." else under.replace(os.sep, "/") + "/"
    if prefix.startswith("../"):
        return []
    out = []
    for rel in sorted({n[len(prefix):] for n in names if n.startswith(prefix)}):
        try:
            st = os.lstat(root / rel)
        except OSError:  # tracked but deleted from the work tree
            continue
        if st.st_mode & 0o170000 == 0o100000:  # a regular file (not a symlink, not a submodule)
            out.append(rel)
    return out
