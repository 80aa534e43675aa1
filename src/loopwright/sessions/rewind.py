"""Room: sessions (beside execute). Owns rewinding a session's files and conversation to a prompt;
may import data types, invariant, sessions, checkpoints and mtime, never options or above.

Rewinding to a prompt restores every file the tools changed since then, from checkpoints.py's
snapshots (files they created are deleted), and can cut the conversation back to just before
that prompt: in place (a `rewind` line; the transcript stays append-only) or as a fork.
A file changed again since its `after` record (by the user or another program) is a conflict:
`rewind_conflicts` shows the diff a rewind would undo, so the caller can ask first.
Bash side effects and external effects are not tracked: the report says so and names the Bash
commands that ran in the rewound span.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..mtime import move_mtime_on
from .checkpoints import FileHistory, history_dir
from .jsonl import JsonlSessionStore, JsonlWriter
from .repair import read_lines
from .store import SessionNotFound, _line, new_session_id
from .summaries import _live, _prompt_text

MAX_DIFF_BYTES = 1_000_000  # a conflicting file bigger than this is named with its size, not read
NOT_TRACKED = ("Bash side effects and external effects (databases, APIs, deployments) are not tracked "
               "and were not undone.")


@dataclass
class RewindPoint:
    """A prompt of a session that files and conversation can be rewound to (to before it): the
    files its turn changed and the Bash commands it ran."""

    uuid: str
    prompt: str
    timestamp: str
    files: list[str] = field(default_factory=list)
    bash_commands: list[str] = field(default_factory=list)


@dataclass
class RewindReport:
    """What a rewind did: files restored and deleted, Bash commands it could not undo, where the
    conversation went."""

    session_id: str
    to_uuid: str
    restored: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    # files not restored nor deleted: a folder on their path is now a link (it leads elsewhere), or
    # the file is no longer a regular file (a folder, a named pipe: `why`, by path)
    skipped: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)
    bash_commands: list[str] = field(default_factory=list)
    conversation: str | None = None  # "in place", or the id of the fork
    new_session_id: str | None = None

    def text(self) -> str:
        out = [f"rewound session {self.session_id} to {self.to_uuid}"]
        out += [f"  restored {p}" for p in self.restored]
        out += [f"  deleted  {p} (created after that point)" for p in self.deleted]
        out += [f"  {self.why.get(p) or f'not restored {p}: a folder on its path is now a link elsewhere'}"
                for p in self.skipped]
        if not self.restored and not self.deleted and not self.skipped:
            out.append("  no files changed by Write/Edit since that point")
        if self.conversation:
            out.append(f"  conversation: {self.conversation}")
        out.append(f"  note: {NOT_TRACKED}")
        if self.bash_commands:
            out.append("  Bash commands that ran in the rewound span (their effects remain):")
            out += [f"    $ {c}" for c in self.bash_commands]
        return "\n".join(out)


def _locate(session_id: str, sessions_dir: str | Path | None, cwd: Path | None) -> tuple[JsonlSessionStore, Path]:
    store = JsonlSessionStore(sessions_dir)
    path = store.find(session_id, cwd)
    if path is None:
        raise SessionNotFound(f"no session {session_id!r} in {store.root}")
    return store, path


def _span(lines: list[dict[str, Any]], to_uuid: str) -> tuple[int, set[str], list[str]]:
    """The index of prompt `to_uuid`, the prompt uuids from it on, and the Bash commands run since
    (answered and not refused: a refused call's result is the refusal, nothing ran)."""
    idx = next((i for i, ln in enumerate(lines) if ln.get("uuid") == to_uuid and ln.get("isPrompt")), None)
    if idx is None:
        raise SessionNotFound(f"no user prompt {to_uuid!r} in this session")
    prompts = {str(ln.get("uuid")) for ln in lines[idx:] if ln.get("type") == "user" and ln.get("isPrompt")}
    since = lines[idx:]
    return idx, prompts, _bash_run(since, _answered(since))


def _blocks(ln: dict[str, Any]) -> list[Any]:
    return (ln.get("message") or {}).get("content") or []


def _answered(lines: list[dict[str, Any]]) -> set[str]:
    """The ids of the tool calls these lines answer, less those the gate refused."""
    answered = {str(b.get("tool_use_id")) for ln in lines if ln.get("type") == "user"
                for b in _blocks(ln) if isinstance(b, dict) and b.get("type") == "tool_result"}
    refused = {str(d.get("tool_use_id")) for ln in lines if ln.get("type") == "result"
               for d in _denials(ln.get("result")) if isinstance(d, dict)}
    return answered - refused


def _denials(result: Any) -> list[Any]:
    return (result.get("permission_denials") if isinstance(result, dict) else None) or []


def _bash_run(lines: list[dict[str, Any]], answered: set[str]) -> list[str]:
    """The commands of the answered Bash calls in these lines, in order."""
    return [str((b.get("input") or {}).get("command", "")) for ln in lines if ln.get("type") == "assistant"
            for b in _blocks(ln) if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Bash"
            and str(b.get("id")) in answered]


def rewind_points(session_id: str, sessions_dir: str | Path | None = None,
                  cwd: str | Path | None = None) -> list[RewindPoint]:
    """The prompts one can rewind to, oldest first, with the files each turn changed (the prompts
    of the conversation as it is now: an earlier rewind cut the ones after its point)."""
    _, path = _locate(session_id, sessions_dir, Path(cwd).resolve() if cwd else None)
    lines = read_lines(path)
    recs = FileHistory(history_dir(path)).records()
    out = []
    for ln in _live(lines)[0]:
        if ln.get("type") == "user" and ln.get("isPrompt"):
            u = str(ln.get("uuid"))
            _, _, bash = _span(lines, u)
            out.append(RewindPoint(u, _prompt_text(ln.get("message")), str(ln.get("timestamp", "")),
                                   sorted({r["path"] for r in recs if r.get("promptUuid") == u}), bash))
    return out


def rewind_files(session_id: str, user_message_uuid: str, sessions_dir: str | Path | None = None,
                 cwd: str | Path | None = None) -> RewindReport:
    """Restore every file the tools changed since the prompt `user_message_uuid` (files they
    created are deleted). Bash and external side effects are not undone (the report says so)."""
    _, path = _locate(session_id, sessions_dir, Path(cwd).resolve() if cwd else None)
    lines = read_lines(path)
    _, span, bash = _span(lines, user_message_uuid)
    fh = FileHistory(history_dir(path))
    first: dict[str, dict[str, Any]] = {}
    for rec in fh.records():  # the earliest snapshot in the span is the state before it
        if rec.get("promptUuid") in span and isinstance(rec.get("path"), str) and not rec.get("after"):
            first.setdefault(rec["path"], rec)
    report = RewindReport(path.stem, user_message_uuid, bash_commands=bash)
    for p, rec in sorted(first.items()):
        target = Path(p)
        if not _own_folder(target.parent):  # (recorded as its real path: a link on it is new)
            report.skipped.append(p)
            continue
        if _not_a_file(target):  # (reading a named pipe waits for a writer; a folder is not unlinked)
            report.skipped.append(p)
            report.why[p] = f"{'not restored' if rec.get('existed') else 'not deleted '} {p}: it is no longer a regular file"
            continue
        if rec.get("existed"):
            if _restore(target, (fh.root / "blobs" / str(rec["blob"])).read_bytes(), rec.get("mode")):
                report.restored.append(p)
        elif target.exists() or target.is_symlink():
            target.unlink()
            report.deleted.append(p)
            _remove_created_dirs(rec.get("createdDirs", []))
    return report


def _not_a_file(path: Path) -> bool:
    """Is there something at `path` that is neither a regular file nor a link (a folder, a named
    pipe, a socket, a device)?"""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISLNK(mode))


def _own_folder(folder: Path) -> bool:
    """Is `folder` (a recorded file's, a real path when it was recorded) still itself: its nearest
    existing ancestor's real path is its own? A link made on the way since (a command of the
    agent's can make one) would have the rewind write, or delete, elsewhere."""
    while not folder.exists() and not folder.is_symlink() and folder != folder.parent:
        folder = folder.parent
    return os.path.realpath(folder) == str(folder)


def _restore(target: Path, data: bytes, mode: Any) -> bool:
    """The file as it was (its bytes, and its mode when the snapshot has one), a regular file at its
    own path: a link put in its place is replaced, never written through (its target outside the
    workspace got the old bytes and mode); False: it already is."""
    if target.is_symlink():
        target.unlink()
    elif target.exists() and target.read_bytes() == data:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    before = target.stat() if target.exists() else None
    # O_NOFOLLOW: a link made meanwhile is refused; new, it is 0600 until its mode is set below
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        if mode is not None:
            os.fchmod(f.fileno(), int(mode))
    if before is not None:  # the restored code, not the bytecode of the agent's version
        move_mtime_on(target, before)
    return True


def _remove_created_dirs(dirs: list[str]) -> None:
    """The directories a tool created for a file, deepest first, while nothing else is in them."""
    for d in dirs:
        try:
            os.rmdir(d)
        except OSError:
            break


@dataclass
class FileConflict:
    """A file a rewind would restore that changed after the agent's last edit of it: `diff` is
    the agent's version -> the file now (what the rewind would undo besides the agent's edits)."""

    path: str
    diff: str


def rewind_conflicts(session_id: str, user_message_uuid: str, sessions_dir: str | Path | None = None,
                     cwd: str | Path | None = None) -> list[FileConflict]:
    """The files rewinding to before `user_message_uuid` would restore or delete that are no longer
    as the agent left them (edited by the user or another program since)."""
    _, path = _locate(session_id, sessions_dir, Path(cwd).resolve() if cwd else None)
    lines = read_lines(path)
    _, span, _ = _span(lines, user_message_uuid)
    fh = FileHistory(history_dir(path))
    touched: set[str] = set()
    last_after: dict[str, dict[str, Any]] = {}
    for rec in fh.records():
        p = rec.get("path")
        if not isinstance(p, str):
            continue
        if rec.get("promptUuid") in span and not rec.get("after"):
            touched.add(p)
        if rec.get("after"):
            last_after[p] = rec  # the latest: the agent's version of the file, whichever turn wrote it
    out = []
    for p in sorted(touched):
        after = last_after.get(p)
        if after is None:
            continue
        if not _own_folder(Path(p).parent):  # (the rewind leaves it: nothing of it is undone)
            continue
        agent = (fh.root / "blobs" / str(after["blob"])).read_bytes()
        try:
            now = _now(p)
        except OSError:  # no longer a regular file (a named pipe's read waits for a writer): left as it is
            continue
        if now == agent:
            continue
        if isinstance(now, str):
            out.append(FileConflict(p, now))
            continue
        old = agent.decode("utf-8", errors="replace").splitlines(keepends=True)
        new = now.decode("utf-8", errors="replace").splitlines(keepends=True) if now is not None else []
        import difflib  # (imported when files conflict: start-up)

        diff = "".join(difflib.unified_diff(old, new, f"{p} (as the agent left it)",
                                            f"{p} (now)" if now is not None else f"{p} (deleted)"))
        out.append(FileConflict(p, diff))
    return out


def _now(p: str) -> bytes | str | None:
    """The file's bytes now (None: deleted), or a line saying why they are not read: a link is not
    followed (its target, perhaps a huge file outside the workspace, is not the rewind's to undo:
    it replaces the link), a file over MAX_DIFF_BYTES is named with its size. Raises OSError for
    what is no longer a regular file."""
    try:
        if os.path.islink(p):
            return f"{p} is now a symbolic link to {os.readlink(p)}: the rewind replaces the link (not followed)\n"
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # (a link made meanwhile: ELOOP)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{p} is no longer a regular file")
        if st.st_size > MAX_DIFF_BYTES:
            return f"{p} is now {st.st_size} bytes: too large to show a diff of (over {MAX_DIFF_BYTES} bytes)\n"
        return f.read(MAX_DIFF_BYTES + 1)


def rewind_conversation(session_id: str, user_message_uuid: str, *, fork: bool = False,
                        sessions_dir: str | Path | None = None, cwd: str | Path | None = None) -> str:
    """Cut the conversation back to just before the prompt `user_message_uuid`. In place, a
    `rewind` line is appended (the file stays append-only); with fork=True a new session is
    written and the original left untouched. Returns the id of the session that holds it."""
    store, path = _locate(session_id, sessions_dir, Path(cwd).resolve() if cwd else None)
    lines = read_lines(path)
    _span(lines, user_message_uuid)  # validates the uuid
    where = Path(next((str(ln["cwd"]) for ln in lines if ln.get("cwd")), str(cwd or os.getcwd())))
    if fork:
        new_id = new_session_id()
        store.fork(path.stem, new_id, where, up_to_uuid=user_message_uuid)
        return new_id
    w = JsonlWriter(path, path.stem)
    try:
        w.write(_line("rewind", path.stem, str(where), lines[-1].get("uuid") if lines else None,
                      toUuid=user_message_uuid), sync=True)
    finally:
        w.close()
    return path.stem


def rewind(session_id: str, user_message_uuid: str | None = None, *, code: bool = True,
           conversation: bool = True, fork: bool = False, sessions_dir: str | Path | None = None,
           cwd: str | Path | None = None) -> RewindReport:
    """Files and/or conversation back to before a prompt (default: the latest prompt)."""
    if user_message_uuid is None:
        points = rewind_points(session_id, sessions_dir, cwd)
        if not points:
            raise SessionNotFound(f"session {session_id!r} has no prompt to rewind to")
        user_message_uuid = points[-1].uuid
    if code:
        report = rewind_files(session_id, user_message_uuid, sessions_dir, cwd)
    else:
        _, path = _locate(session_id, sessions_dir, Path(cwd).resolve() if cwd else None)
        report = RewindReport(path.stem, user_message_uuid, bash_commands=_span(read_lines(path), user_message_uuid)[2])
    if conversation:
        sid = rewind_conversation(report.session_id, user_message_uuid, fork=fork,
                                  sessions_dir=sessions_dir, cwd=cwd)
        report.conversation = f"forked to {sid}" if fork else "cut back in place (resume continues from there)"
        report.new_session_id = sid if fork else None
    return report


def conflict_text(conflicts: list[FileConflict]) -> str:
    """The warning for files changed after the agent's edit, with the diffs a rewind would undo."""
    out = []
    for c in conflicts:
        out.append(f"⚠ {c.path} changed after the agent's edit; rewinding undoes this too:")
        out += [f"    {ln}" for ln in c.diff.rstrip("\n").splitlines()]
    return "\n".join(out)


def confirm_conflicts(conflicts: list[FileConflict], say: Callable[[str], None],
                      ask: Callable[[str], str] | None) -> bool:
    """Show the conflicts; True when the user answers yes (no way to ask: False)."""
    say(conflict_text(conflicts))
    if ask is None:
        return False
    try:
        return ask("rewind anyway? [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False
