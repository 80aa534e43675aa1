"""Room: bases. Owns loopwright_home (the user-level config directory), sessions_root and how loopwright writes its
own files (private: 0700 directories, 0600 files); imports nothing of loopwright.

One definition for settings, sessions, memory and skills (`~` expanded), so that the rooms
that need the directory need not import each other.

Private by default (SPEC's security defaults; Claude Code writes its transcripts 0600): what
loopwright writes (transcripts, file snapshots, settings and trust files, logs, pages of a
session) can hold a project's secrets, so it is readable by the user only. Modes are given at
creation and set again with fchmod/chmod, because the umask is not trusted (it can only take
bits away, but 0o000 would leave a file unreadable to its owner, and 0o022 is what it usually
is); existing files and loopwright's own directories are tightened when they are next used.

A file loopwright reads, changes and writes back (the MCP credentials, the trust store, the
user's and the project's local settings, the plugin store) is changed under `locked(path)`: two
loopwright processes changing it at once take turns, so neither loses the other's change, and
every write is whole (a temporary file renamed over it), so a reader never sees half a file."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def loopwright_home() -> Path:
    """The user-level config directory: $LOOPWRIGHT_HOME, else ~/.loopwright."""
    env = os.environ.get("LOOPWRIGHT_HOME")
    return Path(env).expanduser() if env else Path.home() / ".loopwright"


def sessions_root(override: str | Path | None = None) -> Path:
    """Where session transcripts live: `override` (AgentOptions.sessions_dir), else
    $LOOPWRIGHT_SESSIONS_DIR, else $LOOPWRIGHT_HOME/projects (sessions/store.py's layout)."""
    if override is not None:
        return Path(override).expanduser()
    env = os.environ.get("LOOPWRIGHT_SESSIONS_DIR")
    if env:
        return Path(env).expanduser()
    return loopwright_home() / "projects"


def _tighten(path: Path | int, mode: int) -> None:
    """Take group and other bits away (only from what we own: another user's file is left as
    it is, and chmod would fail on it anyway)."""
    with contextlib.suppress(OSError):
        st = os.fstat(path) if isinstance(path, int) else os.stat(path)
        if st.st_uid == os.geteuid() and st.st_mode & 0o077:
            if isinstance(path, int):
                os.fchmod(path, st.st_mode & mode & 0o7777)
            else:
                os.chmod(path, st.st_mode & mode & 0o7777)


def private_dir(path: Path, own_from: Path | None = None) -> Path:
    """Make `path` (and missing parents) as directories only the user can enter (0700, whatever the
    umask). `own_from`: an ancestor from which every existing directory down to `path` is
    loopwright's own and is tightened too (the home, a sessions root); without it only `path` is."""
    missing: list[Path] = []
    p = path
    while not p.is_dir():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, PRIVATE_DIR)
        except FileExistsError:
            if not d.is_dir():  # a file where a directory must be: the caller says what failed
                raise
            continue  # another process made it meanwhile
        os.chmod(d, PRIVATE_DIR)  # the umask may have taken our own bits
    ours = [path]
    if own_from is not None and path.is_relative_to(own_from):
        ours = [own_from, *(own_from / Path(*path.relative_to(own_from).parts[:i + 1])
                            for i in range(len(path.relative_to(own_from).parts)))]
    for d in ours:
        _tighten(d, PRIVATE_DIR)
    return path


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """A descriptor of `path`, created 0600 if missing, tightened to 0600 if not (O_CLOEXEC; the
    caller closes it; `flags` may add O_EXCL / O_NOFOLLOW)."""
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
    try:
        _tighten(fd, PRIVATE_FILE)
        st = os.fstat(fd)
        if st.st_uid == os.geteuid() and st.st_mode & 0o600 != 0o600:  # a umask that took our own bits
            os.fchmod(fd, (st.st_mode | 0o600) & PRIVATE_FILE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: str | bytes, own_from: Path | None = None) -> Path:
    """Write `path` whole, 0600, through a temporary file renamed over it (a reader never sees half a
    file); its directory is made private (see private_dir) when missing, and when it is in the
    loopwright home, the home's directories down to it are tightened too."""
    if own_from is None and path.parent.is_relative_to(loopwright_home()):
        own_from = loopwright_home()
    if own_from is not None or not path.parent.is_dir():
        private_dir(path.parent, own_from)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    # A new file of an unguessable name, never one found there: the directory may be a project's
    # (.claude/settings.local.json), and a symlink planted at a predictable temporary name would
    # have had this write land wherever it points.
    import secrets  # (with hmac and hashlib: ~9 M instructions; a run that writes nothing never needs it)

    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


_HELD = threading.local()  # the lock keys this thread holds (a nested locked() of the same file)
LOCK_WAIT_S = 10.0  # a read-modify-write takes milliseconds; longer, its holder is stopped or stuck
_LOCK_POLL_S = 0.02


class LockBusy(OSError):
    """Another process held the lock of a file loopwright changes for longer than `locked` waits
    (a stopped or stuck loopwright): the change was not made."""


@contextlib.contextmanager
def locked(path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold `path`'s lock for a read-modify-write: another process (or thread) changing the same
    file waits until this one has written. The lock is an flock on a file of
    $LOOPWRIGHT_HOME/locks (0700), named by a hash of `path`'s real path, so none is left in a
    project; it is never removed (a removed lock file would let a third process lock a new one
    while a second holds the old). Nested calls for one file in one thread hold it once. Where
    no lock can be taken (no fcntl, an unwritable home, a lock file that is a symlink) the change
    goes on unlocked: the write itself reports what is wrong. A lock held longer than `timeout`
    seconds (None: LOCK_WAIT_S; its holder stopped with ^Z or SIGSTOP, or hung) raises LockBusy
    naming the lock file, instead of waiting for ever."""
    try:
        import fcntl  # noqa: F401 - (_take's)
    except ImportError:  # (Windows)
        yield
        return
    import hashlib  # (only a run that changes a shared file locks one)

    key = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:32]
    held: set[str] = _HELD.__dict__.setdefault("keys", set())
    if key in held:
        yield
        return
    lock_file = loopwright_home() / "locks" / f"{key}.lock"
    try:  # (never through a symlink: open_private would tighten whatever file it points to)
        fd = open_private(private_dir(lock_file.parent, loopwright_home()) / lock_file.name,
                          os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        yield
        return
    try:
        _take(fd, path, lock_file, LOCK_WAIT_S if timeout is None else timeout)
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
    finally:
        os.close(fd)  # (closing releases the flock)


def _take(fd: int, path: Path, lock_file: Path, timeout: float) -> None:
    """flock `fd` exclusively within `timeout` seconds, else LockBusy (flock itself has no bound)."""
    import fcntl as f  # (locked() checked it exists)

    deadline = time.monotonic() + timeout
    while True:
        try:
            f.flock(fd, f.LOCK_EX | f.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockBusy(f"{path} is being changed by another process, which has held its lock {lock_file} "
                               f"for over {timeout:g} s (stopped or stuck?): the change was not made. "
                               f"`fuser {lock_file}` names that process") from None
            time.sleep(_LOCK_POLL_S)
