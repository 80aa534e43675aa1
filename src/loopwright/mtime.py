"""Room: bases. Owns the rules of file timestamps: a changed file's mtime moves on (the writers),
and a file's stamp sees a change made within one timestamp tick (the watchers, and Read's record
that Edit and Write check); imports nothing of loopwright.

Python reuses a `.pyc` whose recorded source mtime (whole seconds) and size match the source, so
a file changed within the second of its last compile, keeping its size, would run its old
bytecode (an agent that edits, runs the tests and edits again within a second). Every writer of
files the agent may run (Write, Edit, MultiEdit, NotebookEdit, a rewind's restore) calls
`move_mtime_on` after the write."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

_NS = 1_000_000_000


def move_mtime_on(path: Path, old: os.stat_result) -> None:
    """Make `path`'s mtime, in whole seconds, greater than `old`'s (its stat before the write).
    Strictly greater, not just different: a .pyc compiled from any earlier version records an
    earlier second, so none can match. Writes faster than one a second push the mtime ahead of
    the clock by as many seconds as writes. A file we may write but not utime (someone else's)
    keeps the mtime the write gave it."""
    with contextlib.suppress(OSError):
        new = os.stat(path)
        old_s = old.st_mtime_ns // _NS
        if new.st_mtime_ns // _NS > old_s:
            return
        os.utime(path, ns=(new.st_atime_ns, (old_s + 1) * _NS + new.st_mtime_ns % _NS))


# --- the watchers' stamp ------------------------------------------------------------------------
#
# A watcher (loop/watch.py: the settings files, FileChanged's files) compares a file's stat stamp
# between two looks, and Edit/Write compare the file's stamp with Read's (tools/paths.check_fresh).
# An edit in place that keeps the size, made within the timestamp tick of the write before it,
# keeps all of (mtime, size, inode): the coarsest ticks in use are FAT's 2 s, 1 s (ext3, HFS+,
# many network file systems) and one jiffy, 1-10 ms, on ext4/xfs/btrfs/tmpfs before Linux 6.13's
# multigrain timestamps. So a stamp taken while its file's mtime is less than
# TICK_WINDOW_NS old also keeps a digest of the content, and an equal stat against such a stamp
# is decided by the content (git's "racily clean" entries, the same way). Once a look finds the
# file older than the window, its stat alone decides again (no later write can share that tick).
# Cost per look and file (`python -m timeit`, a 1 KB file, the shared 2-core dev box, Dec 6): a
# settled file is one stat() and a clock read, stamp + unchanged 2.6-3.7 us against 1.7-2.8 us for
# the bare stat tuple before; a file written in the last 2 s is also read and hashed, 44-48 us, at
# the looks in those 2 s only. A file over DIGEST_MAX is not read: its stat decides (an edit that
# keeps its size within one tick of a file over 1 MiB is still missed).

TICK_WINDOW_NS = 2 * _NS
DIGEST_MAX = 1 << 20

Stamp = tuple[int, int, int, bytes | None] | None  # (mtime_ns, size, inode, digest | None); None: absent


def stamp(path: str | Path, st: os.stat_result | None = None, now_ns: int | None = None) -> Stamp:
    """`path`'s stamp (None when it is not a regular file), from `st` if the caller has its stat;
    with the content's digest when the file was written within TICK_WINDOW_NS of `now_ns`."""
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return None
    if not stat.S_ISREG(st.st_mode):
        return None
    now = time.time_ns() if now_ns is None else now_ns
    racy = st.st_mtime_ns > now - TICK_WINDOW_NS and st.st_size <= DIGEST_MAX
    return st.st_mtime_ns, st.st_size, st.st_ino, _digest(path) if racy else None


def unchanged(path: str | Path, old: Stamp, new: Stamp) -> bool:
    """Whether `new` (taken just now) shows `path` as `old` did: their stats, and, when `old` was
    taken within its file's tick window, the content too (read now if `new` has no digest)."""
    if old is None or new is None:
        return old is new
    if old[:3] != new[:3]:
        return False
    if old[3] is None:
        return True
    return (new[3] if new[3] is not None else _digest(path)) == old[3]


def _digest(path: str | Path) -> bytes | None:
    import hashlib  # (~5 M instructions with _hashlib: only a file written in the last 2 s is hashed)

    try:
        with open(path, "rb") as f:
            return hashlib.blake2b(f.read(DIGEST_MAX + 1), digest_size=16).digest()
    except OSError:
        return None
