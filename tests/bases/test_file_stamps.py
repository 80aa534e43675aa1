"""The watchers' file stamp (mtime.py): an edit in place that keeps the size within one timestamp
tick keeps (mtime, size, inode), so a stamp taken while its file is younger than the tick window
keeps a digest and an equal stat is decided by the content; an older file's stat alone decides.
The "same tick" is made with a real second write whose mtime is set back to the first's (what a
1 s or 2 s file system, or ext4 before Linux 6.13's multigrain timestamps, records by itself)."""

from __future__ import annotations

import os
from pathlib import Path

from loopwright.mtime import TICK_WINDOW_NS, stamp, unchanged


def rewrite_within_the_tick(path: Path, text: str) -> None:
    """Write `text` over `path` in place (same inode), then give it back the mtime it had."""
    before = os.stat(path)
    with open(path, "r+") as f:
        f.write(text)
        f.truncate()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_same_size_edit_within_one_tick_is_seen(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text('{"deny": ["Bash(touch q)"]}')
    old = stamp(f)
    rewrite_within_the_tick(f, '{"deny": ["Bash(touch *)"]}')
    new = stamp(f)
    assert old is not None and new is not None and old[:3] == new[:3]  # the stat cannot tell
    assert not unchanged(f, old, new)
    assert unchanged(f, new, stamp(f))  # and nothing more happened since


def test_a_stamp_from_the_window_still_compares_content_once_the_file_is_older(tmp_path: Path) -> None:
    f = tmp_path / "a.env"
    f.write_text("A=1\n")
    old = stamp(f)
    rewrite_within_the_tick(f, "A=2\n")
    later = os.stat(f).st_mtime_ns + TICK_WINDOW_NS + 1  # the next look, after the window
    new = stamp(f, now_ns=later)
    assert new is not None and new[3] is None  # settled: the look's own stamp keeps no digest
    assert not unchanged(f, old, new)


def test_a_settled_files_stat_decides_alone(tmp_path: Path) -> None:
    f = tmp_path / "old.json"
    f.write_text("{}")
    past = os.stat(f).st_mtime_ns - 10 * TICK_WINDOW_NS
    os.utime(f, ns=(past, past))
    old = stamp(f)
    assert old is not None and old[3] is None  # no read: one stat
    f.write_text("[]")  # a real edit gets a new mtime
    assert not unchanged(f, old, stamp(f))
    assert stamp(tmp_path) is None and stamp(tmp_path / "missing") is None
    assert unchanged(f, None, None) and not unchanged(f, None, stamp(f))
