"""Room: built-in tools (on tools.base). Owns Write's implementation (tools.builtin defines the tool);
may import data types, tools.base and tools.paths.

Write {file_path, content}: create a file, or overwrite one that was Read first.

`atomic_write` is how Write, Edit and MultiEdit change a file: a temp file in the same
directory, fsynced, with the original's mode and owner, renamed over it (through a symlink:
the link stays a link). A failure (ENOSPC, EDQUOT, EFBIG, ...) leaves the original byte for
byte as it was and becomes an is_error naming the cause. A file with several hard links is
rewritten in place instead (a rename would split the links), restored if the write fails.
Extended attributes and ACLs are not carried over to the renamed file.

A changed file's mtime moves on by at least one whole second (mtime.move_mtime_on): else Python
could keep running the bytecode of the version before."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Any

from ..mtime import move_mtime_on
from .base import ToolContext, ToolError, ToolOutput
from .diffs import write_details
from .paths import (
    SWAPPED,
    after_change,
    before_change,
    check_fresh,
    load_text,
    open_dir,
    record_read,
    resolve,
)


def write_file(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    path = resolve(inp["file_path"], ctx)
    content: str = inp["content"]
    if path.is_dir():
        raise ToolError(f"EISDIR: {path} is a directory.")
    if path.exists() and not path.is_file():  # a FIFO or a device: writing would block or hit hardware
        raise ToolError(f"{path} is not a regular file.")
    existed = path.exists()
    original: str | None = None
    if existed:
        check_fresh(ctx, path)
        old = load_text(path)
        data = old.encode(content)
        original = old.text
    else:
        data = content.encode("utf-8")
    before_change(ctx, path)
    atomic_write(path, data)
    after_change(ctx, path)
    record_read(ctx, path)
    n = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    details = write_details(inp["file_path"], content, original)
    if existed:
        return ToolOutput(f"The file {path} has been updated ({n} lines).", details=details)
    return ToolOutput(f"File created successfully at: {path} ({n} lines).", details=details)


# --- atomic replacement --------------------------------------------------------------------

_CAUSES = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
           errno.EFBIG: "file too large (a file size limit, e.g. `ulimit -f`)"}


def atomic_write(path: Path, data: bytes) -> None:
    """Give `path` the content `data`, all or nothing (see the module docstring). The file is
    changed through a descriptor of its directory opened without following symlinks
    (paths.open_dir), and its own name is never followed either: a symlink planted in the path
    after the gate judged it and the tool resolved it cannot lead the write elsewhere. `path` is
    resolved (paths.resolve: a symlink is written through and stays a link); resolving it again
    here would follow what was planted since."""
    target = path
    if not target.is_absolute():
        raise ToolError(f"{path} is not an absolute path.")
    st: os.stat_result | None = None
    d = -1
    try:
        d = open_dir(target.parent, create=not target.parent.is_dir())
        try:
            st = os.stat(target.name, dir_fd=d, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise ToolError(f"{path} was not written: {SWAPPED}.")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise ToolError(f"{path} is not a regular file.")
        if st is not None and (not st.st_mode & 0o222 or not os.access(target.name, os.W_OK, dir_fd=d)):
            raise ToolError(f"{path} is read-only (mode {stat.S_IMODE(st.st_mode):04o}); it was not changed. "
                            "If it should change, make it writable first (e.g. `chmod u+w`).")
        if st is None:
            _replace(d, target.name, data, None)
        elif st.st_nlink > 1 or not _replace(d, target.name, data, st):
            _rewrite_in_place(d, target.name, data, st)  # hard links, or an owner we cannot give the copy
    except OSError as e:
        cause = SWAPPED if e.errno in (errno.ELOOP, errno.ENOTDIR) and d < 0 else (
            _CAUSES.get(e.errno or 0) or e.strerror or str(e))
        code = errno.errorcode.get(e.errno or 0, "")
        kept = "was not changed" if st is not None else "was not created"
        raise ToolError(f"Could not write {path}: {cause}{f' ({code})' if code else ''}. "
                        f"The file {kept}.") from None
    finally:
        if d >= 0:
            os.close(d)
    if st is not None:
        move_mtime_on(target, st)


def _write_all(fd: int, data: bytes, offset: int | None = None) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view) if offset is None else os.pwrite(fd, view, offset)
        view = view[n:]
        if offset is not None:
            offset += n


def _replace(d: int, name: str, data: bytes, st: os.stat_result | None) -> bool:
    """Temp file + fsync + rename, in the directory `d`. False (nothing done) when the directory
    takes no new file, or the copy cannot get the original's owner (not root, someone else's file
    in a shared directory)."""
    tmp = f".{name}.{os.urandom(4).hex()}.tmp"
    # a new file gets 0666 less the umask, as open(2) gives; an existing one its own mode below
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o666 if st is None else 0o600, dir_fd=d)
    except PermissionError:
        if st is None:
            raise
        return False  # a writable file in a directory we cannot add to: rewrite it in place
    renamed = False
    try:
        if st is not None:
            if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(fd, st.st_uid, st.st_gid)
                except PermissionError:
                    return False
            os.fchmod(fd, stat.S_IMODE(st.st_mode))
        _write_all(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)  # (a name swapped to a symlink is replaced, not followed)
        renamed = True
    finally:
        if fd >= 0:
            os.close(fd)
        if not renamed:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=d)
    _fsync_dir(d)
    return True


def _rewrite_in_place(d: int, name: str, data: bytes, st: os.stat_result) -> None:
    """Overwrite the file itself (same inode: the one stat saw, else nothing is written). If the
    write fails, the old bytes go back: they fit in the blocks the file already has."""
    fd = os.open(name, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=d)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise ToolError(f"{name} was not written: it was replaced by another file while being written.")
        old = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
        try:
            _write_all(fd, data, 0)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                _write_all(fd, old, 0)
                os.ftruncate(fd, len(old))
                os.fsync(fd)
            raise
    finally:
        os.close(fd)


def _fsync_dir(d: int) -> None:
    """Make the rename itself durable (a crash right after keeps the new name)."""
    with contextlib.suppress(OSError):
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=d)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
