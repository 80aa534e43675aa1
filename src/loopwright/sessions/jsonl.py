"""Room: sessions (beside execute). Owns the JSONL store: JsonlSessionStore (`<root>/<cwd-slug>/<id>.jsonl`)
and JsonlWriter (one transcript file, appended under a lock)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from ..blocks import utf8
from ..home import loopwright_home, open_private, private_dir
from ..messages import TranscriptWriteError
from .store import (
    FsyncPolicy,
    LoadedSession,
    SessionBusy,
    SessionInfo,
    SessionNotFound,
    _line,
    check_session_id,
    cwd_slug,
    glob_escape,
    sessions_root,
)


class JsonlWriter:
    """Appends one JSON line per event with one write(2) each on an O_APPEND descriptor (no
    user-space buffer: a killed process loses nothing already yielded), fsync per the policy.
    A failed write is cut back off the file, so a full disk never leaves a torn line."""

    def __init__(self, path: Path, session_id: str, fsync: FsyncPolicy = "none", own_from: Path | None = None) -> None:
        private_dir(path.parent, own_from)  # 0700, the store's own directories tightened (home.py)
        self.path = path
        self.session_id = session_id
        self.fsync = fsync
        self.failed: OSError | None = None  # the first write error: later writes are dropped
        fd = open_private(path)  # 0600 whatever the umask; an older 0644 transcript is tightened
        self._fd: int | None = fd
        try:  # one writer per transcript: two processes appending would interleave two conversations
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.close()
            raise SessionBusy(f"session {session_id} is in use by another loopwright process "
                              "(fork it with --fork-session, or wait until that run ends)") from None
        self.last_uuid: str | None = None  # of the file's last whole line: the parent of our first
        try:
            if os.fstat(fd).st_size > 0:
                self._heal_torn_tail()
                self.last_uuid = _last_uuid(path)
        except OSError:
            self.close()
            raise

    def _heal_torn_tail(self) -> None:
        """A crash may have left a line without its newline: end it, so our next line is whole."""
        with open(self.path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            last = f.read(1)
        if last != b"\n":
            self._append(b"\n")

    def _append(self, data: bytes) -> None:
        fd = self._fd
        if fd is None:
            return
        start = os.lseek(fd, 0, os.SEEK_END)  # we hold the lock: nobody else appends
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError:
            with contextlib.suppress(OSError):  # cut the partial line: the file stays whole lines
                os.ftruncate(fd, start)
            raise

    def write(self, line: dict[str, Any], sync: bool = False) -> None:
        if self._fd is None or self.failed is not None:
            return
        data = utf8(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")  # (as the request: blocks.utf8)
        try:
            self._append(data)
            if self.fsync == "always" or (sync and self.fsync == "turn"):
                os.fsync(self._fd)
        except OSError as e:
            self.failed = e
            self.close()  # the lock goes too: the session can be continued once there is space
            code = errno.errorcode.get(e.errno or 0, "")
            raise TranscriptWriteError(
                f"cannot write the session transcript {self.path}: {e.strerror or e}"
                f"{f' ({code})' if code else ''}. The lines written so far are kept: free "
                "space (or raise the file size limit), then resume with --continue", self.session_id) from e

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def _copy_private(src: str, dst: str) -> None:
    """copytree's copy, private (a snapshot copied from an older 0644 one is 0600 all the same)."""
    with open(src, "rb") as f, os.fdopen(open_private(Path(dst), os.O_WRONLY | os.O_TRUNC), "wb") as out:
        while chunk := f.read(1 << 20):
            out.write(chunk)


def _last_uuid(path: Path, tail: int = 1 << 16) -> str | None:
    """The uuid of the last whole line, reading only the end of the file."""
    with open(path, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - tail))
        chunk = f.read()
    for raw in reversed(chunk.split(b"\n")):
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("uuid"), str):
            return str(obj["uuid"])
    return None


class JsonlSessionStore:
    """The default store: `<root>/<cwd-slug>/<session-id>.jsonl`."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = sessions_root(root)

    @property
    def own_from(self) -> Path:
        """The top of the directories that are the store's own (made and kept 0700): the
        loopwright home when the root is in it, else the root."""
        home = loopwright_home()
        return home if self.root.is_relative_to(home) else self.root

    def path(self, session_id: str, cwd: Path) -> Path:
        """Where a session's transcript is: always a file directly in its directory's folder."""
        return self.root / cwd_slug(cwd) / f"{check_session_id(session_id)}.jsonl"

    def find(self, session_id: str, cwd: Path | None = None) -> Path | None:
        """The file of a session id (or a unique id prefix), this directory's first."""
        check_session_id(session_id)  # before any look: an id that is a path reads nothing
        if cwd is not None:
            p = self.path(session_id, cwd)
            if p.exists():
                return p
        if not self.root.exists():
            return None
        exact = list(self.root.glob(f"*/{glob_escape(session_id)}.jsonl"))
        if exact:
            return exact[0]
        matches = list(self.root.glob(f"*/{glob_escape(session_id)}*.jsonl"))
        return matches[0] if len(matches) == 1 else None

    def exists(self, session_id: str, cwd: Path | None = None) -> bool:
        return self.find(session_id, cwd) is not None

    def open_writer(self, session_id: str, cwd: Path, fsync: FsyncPolicy = "none") -> JsonlWriter:
        existing = self.find(session_id, cwd)
        return JsonlWriter(existing or self.path(session_id, cwd), session_id, fsync, self.own_from)

    def load(self, session_id: str, cwd: Path | None = None) -> LoadedSession:
        p = self.find(session_id, cwd)
        if p is None:
            raise SessionNotFound(f"no session {session_id!r} in {self.root}")
        from .repair import load_transcript  # the readers: not on a new run's way

        return load_transcript(p)

    def latest(self, cwd: Path) -> str | None:
        d = self.root / cwd_slug(cwd)
        files = sorted(d.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if d.exists() else []
        return files[-1].stem if files else None

    def fork(self, session_id: str, new_id: str, cwd: Path, up_to_uuid: str | None = None) -> None:
        """Copy a transcript to a new id (optionally only up to, not including, a line).
        The original file is only read. Checkpoint snapshots are copied along."""
        check_session_id(new_id, "the new id")
        src = self.find(session_id, cwd)
        if src is None:
            raise SessionNotFound(f"no session {session_id!r} in {self.root}")
        from .repair import read_lines

        lines = read_lines(src)
        if up_to_uuid is not None:
            idx = next((i for i, ln in enumerate(lines) if ln.get("uuid") == up_to_uuid), None)
            if idx is None:
                raise SessionNotFound(f"no message {up_to_uuid!r} in session {session_id}")
            lines = lines[:idx]
        dst = self.path(new_id, cwd)
        private_dir(dst.parent, self.own_from)
        with os.fdopen(open_private(dst, os.O_WRONLY | os.O_EXCL), "w", encoding="utf-8") as f:
            for ln in lines:
                f.write(json.dumps({**ln, "sessionId": new_id}, ensure_ascii=False, separators=(",", ":")) + "\n")
            f.write(json.dumps(_line("system", new_id, str(cwd), lines[-1].get("uuid") if lines else None,
                                     subtype="fork", forkedFrom=session_id, upTo=up_to_uuid),
                               separators=(",", ":")) + "\n")
        src_files = src.with_suffix(".files")
        if src_files.is_dir():
            import shutil  # (only a fork with snapshots copies a tree: not on a new run's way)

            shutil.copytree(src_files, dst.with_suffix(".files"), copy_function=_copy_private)

    def list(self, cwd: Path | None = None, limit: int | None = None) -> list[SessionInfo]:
        """The sessions of `cwd` (None: of every directory), newest first. `limit`: only the newest
        that many, found by their files' times before any is read (each summary reads its whole
        transcript: /resume's picker shows 15 of what may be hundreds)."""
        if not self.root.exists():
            return []
        from .summaries import session_info

        dirs = [self.root / cwd_slug(cwd)] if cwd is not None else [d for d in self.root.iterdir() if d.is_dir()]
        files = [p for d in dirs if d.exists() for p in d.glob("*.jsonl")]
        if limit is not None:
            files = sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)[:limit]
        out = [session_info(p) for p in files]
        return sorted(out, key=lambda i: i.modified, reverse=True)
