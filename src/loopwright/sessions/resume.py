"""Room: sessions (beside execute). Owns the resume policy: a run's session id, the history it
resumes (resume, fork, continue) and its recorder; list_sessions and get_session_messages."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from ..blocks import WireMessage
from .jsonl import JsonlSessionStore
from .recorder import SessionRecorder
from .store import (
    FsyncPolicy,
    LoadedSession,
    SessionBusy,
    SessionInfo,
    SessionNotFound,
    SessionStore,
    SessionWriter,
    check_session_id,
    new_session_id,
)

# --- what the loop calls ------------------------------------------------------------------------

class SessionOptions(Protocol):
    """What sessions read of a run's options (AgentOptions has it; this room does not import it)."""

    @property
    def session_id(self) -> str | None: ...
    @property
    def resume(self) -> str | None: ...
    @property
    def fork_session(self) -> bool: ...
    @property
    def continue_conversation(self) -> bool: ...
    @property
    def persist_session(self) -> bool: ...
    @property
    def sessions_dir(self) -> str | Path | None: ...
    @property
    def session_fsync(self) -> str: ...
    @property
    def session_store(self) -> SessionStore | None: ...


def store_for(options: SessionOptions) -> SessionStore:
    if options.session_store is not None:
        return options.session_store
    return JsonlSessionStore(options.sessions_dir)


def _open_writer(store: SessionStore, session_id: str, cwd: Path, fsync: str) -> SessionWriter:
    try:
        return store.open_writer(session_id, cwd, cast(FsyncPolicy, fsync))
    except SessionBusy:
        raise
    except OSError as e:  # an unwritable home: a clear configuration error, not a crash
        raise ValueError(f"cannot write the session transcript ({e}); set LOOPWRIGHT_HOME, "
                         "or run without session persistence") from None


@dataclass
class SessionStart:
    """How a run starts with respect to sessions: its id, the history to resume (if any), and its
    recorder."""

    session_id: str
    history: list[WireMessage] | None  # loaded for resume/continue, else None
    recorder: SessionRecorder | None


def start_session(options: SessionOptions, cwd: Path, history_given: bool) -> SessionStart:
    """Decide the run's session id, load the history to resume, open the transcript.

    resume=ID continues ID (same id) unless fork_session, which copies it to a new id
    (options.session_id if given) and leaves the original untouched. continue_conversation
    resumes the latest session of this directory (a fresh one if there is none)."""
    # Ids first, before any store (the user's own too) is asked: an id that is a path reads nothing.
    resume: str | None = None if options.resume is None else check_session_id(options.resume, "resume")
    sid = check_session_id(options.session_id) if options.session_id else new_session_id()
    store = store_for(options)
    if resume is None and options.continue_conversation:
        latest = store.latest(cwd)
        resume = None if latest is None else check_session_id(latest, "the latest session")
    if options.session_id and not history_given and (resume is None or options.fork_session) \
            and store.exists(sid, cwd):
        raise ValueError(f"session id {sid} is already in use: resume it with --resume {sid}")
    fsync = options.session_fsync
    if options.persist_session and fsync not in ("none", "turn", "always"):
        raise ValueError(f"session_fsync must be 'none', 'turn' or 'always', got {fsync!r}")
    history: list[WireMessage] | None = None
    parent: str | None = None
    writer: SessionWriter | None = None
    if resume is not None and not history_given:
        loaded, writer = _resumed(options, store, resume, sid, cwd)
        history, parent = loaded.history, loaded.last_uuid
        if not options.fork_session:
            sid = loaded.session_id  # `resume` may be an id prefix
    elif resume is not None and not options.fork_session:
        sid = resume  # the caller supplies the history itself: keep appending to that session
    recorder = None
    if options.persist_session:
        if writer is None:
            writer = _open_writer(store, sid, cwd, fsync)
        recorder = SessionRecorder(writer, sid, cwd, parent)
    return SessionStart(sid, history, recorder)


def _resumed(options: SessionOptions, store: SessionStore, resume: str, sid: str,
             cwd: Path) -> tuple[LoadedSession, SessionWriter | None]:
    """The session to resume, loaded: forked to `sid` (the original only read: no lock needed,
    its owner may go on), or, when the run persists, locked for appending before it is read
    (nobody appends after we read) and its writer returned."""
    if options.fork_session:
        loaded = store.load(resume, cwd)
        store.fork(loaded.session_id, sid, cwd)
        return loaded, None
    if not store.exists(resume, cwd):
        raise SessionNotFound(f"no session {resume!r} in {getattr(store, 'root', 'the session store')}")
    writer = _open_writer(store, resume, cwd, options.session_fsync) if options.persist_session else None
    try:
        loaded = store.load(resume, cwd)
    except BaseException:
        if writer is not None:
            writer.close()
        raise
    if writer is not None:
        writer.session_id = loaded.session_id  # `resume` may be an id prefix
    return loaded, writer


def list_sessions(cwd: str | Path | None = None, sessions_dir: str | Path | None = None,
                  all_projects: bool = False, limit: int | None = None) -> list[SessionInfo]:
    """The saved sessions of a directory (default: the current one), newest first; `limit`: only
    the newest that many (the others are not read)."""
    store = JsonlSessionStore(sessions_dir)
    return store.list(None if all_projects else Path(cwd or os.getcwd()).resolve(), limit)


def get_session_messages(session_id: str, sessions_dir: str | Path | None = None) -> list[WireMessage]:
    """A saved session's conversation history, repaired so that it satisfies Inv."""
    return JsonlSessionStore(sessions_dir).load(session_id).history
