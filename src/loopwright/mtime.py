"""Room: bases. Owns the rule that a changed file's mtime moves on; imports nothing of loopwright.

Python reuses a `.pyc` whose recorded source mtime (whole seconds) and size match the source, so
a file changed within the second of its last compile, keeping its size, would run its old
bytecode (an agent that edits, runs the tests and edits again within a second). Every writer of
files the agent may run (Write, Edit, MultiEdit, NotebookEdit, a rewind's restore) calls
`move_mtime_on` after the write."""

from __future__ import annotations

import contextlib
import os
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
