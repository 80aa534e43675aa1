"""Room: sessions (beside execute). Owns file snapshots; may import data types, invariant
and sessions (and mtime), never options or above.

Checkpoints: file snapshots before each edit (SPEC §8; Claude Code's /rewind). Rewinding to them
is rewind.py: a persisted run takes snapshots from its first edit, a rewind is asked for rarely.

The built-in Write/Edit/MultiEdit tools call `ctx.before_file_change(path)` just before
they change a file. The first time a turn touches a path, its prior content (or the fact
that it did not exist) is saved under `<session>.files/` next to the transcript, keyed to
the uuid of the prompt line that started the turn. Rewinding to a prompt restores every
file the tools changed since then (files they created are deleted) and can cut the
conversation back to just before that prompt: in place (a `rewind` line; the transcript
stays append-only) or as a fork.

Just after each change the tool's result is saved too (an `after` record): a file changed
again since (by the user or another program) is a conflict, and `rewind_conflicts` shows the
diff a rewind would undo, so the caller can ask first.

Bash side effects and external effects (databases, APIs, deployments) are not tracked:
the rewind report says so and names the Bash commands that ran in the rewound span (refused
calls never ran and are not named).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..home import open_private, private_dir, write_private
from ..ids import new_hex
from .store import _now

if TYPE_CHECKING:
    from .recorder import SessionRecorder


def history_dir(transcript: Path) -> Path:
    return transcript.with_suffix(".files")


class FileHistory:
    """Snapshots of files before the tools changed them: `index.jsonl` + `blobs/<n>`."""

    def __init__(self, root: Path, session_id: str = "") -> None:
        self.root = root
        self.session_id = session_id
        self._seen: set[tuple[str, str]] = set()  # (prompt uuid, path) already snapshotted
        self._lock = threading.Lock()  # tools may run in threads

    def snapshot(self, path: Path, prompt_uuid: str) -> None:
        """Save `path` as it is now, once per turn (the state before the turn's first change)."""
        p = str(Path(path).resolve())
        key = (prompt_uuid, p)
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
            blobs = private_dir(self.root / "blobs", self.root.parent)
            rec: dict[str, Any] = {"promptUuid": prompt_uuid, "path": p, "timestamp": _now(),
                                   "sessionId": self.session_id}
            try:
                data = Path(p).read_bytes()
            except FileNotFoundError:
                rec["existed"] = False
                # the directories the write will create, deepest first, so rewind removes them too
                missing = [str(d) for d in Path(p).parents if not d.exists()]
                if missing:
                    rec["createdDirs"] = missing
            except IsADirectoryError:
                return
            else:
                rec["existed"] = True
                blob = write_private(blobs / new_hex(), data)  # 0600: a snapshot may be a .env
                rec["blob"] = blob.name
                try:
                    rec["mode"] = os.stat(p).st_mode & 0o7777
                except OSError:
                    pass
            self._index(rec)

    def record_after(self, path: Path, prompt_uuid: str) -> None:
        """Save `path` as a tool just left it (the agent's version, for rewind's conflict check)."""
        p = str(Path(path).resolve())
        try:
            data = Path(p).read_bytes()
        except OSError:
            return
        with self._lock:
            blob = write_private(private_dir(self.root / "blobs", self.root.parent) / new_hex(), data)
            rec = {"promptUuid": prompt_uuid, "path": p, "timestamp": _now(), "sessionId": self.session_id,
                   "after": True, "blob": blob.name}
            self._index(rec)

    def _index(self, rec: dict[str, Any]) -> None:
        with os.fdopen(open_private(self.root / "index.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")

    def records(self) -> list[dict[str, Any]]:
        from .repair import read_lines  # (rewinding reads them: not a run's business)

        idx = self.root / "index.jsonl"
        return read_lines(idx) if idx.exists() else []


Hook = Callable[[Path], None]


def snapshot_hooks(recorder: SessionRecorder) -> tuple[Hook | None, Hook | None]:
    """The ToolContext.before_file_change and after_file_change of a persisted run (None for
    stores without files)."""
    path = getattr(recorder.writer, "path", None)
    if not isinstance(path, Path):
        return None, None
    fh = FileHistory(history_dir(path), recorder.session_id)

    def before_file_change(p: Path) -> None:
        if recorder.prompt_uuid is not None:
            fh.snapshot(p, recorder.prompt_uuid)

    def after_file_change(p: Path) -> None:
        if recorder.prompt_uuid is not None:
            fh.record_after(p, recorder.prompt_uuid)

    return before_file_change, after_file_change
