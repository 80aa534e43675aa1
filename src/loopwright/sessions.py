"""Room: sessions (beside execute). Owns transcripts, the session store, resume and fork; may import
data types, bases, invariant and settings, never options or above.

Sessions: every run's transcript as an append-only JSONL file (seed §8; Claude Code's layout).

One line per event: the user prompt, each assistant message (wire format), each user
message of tool results, system events (init, api_retry, compact_boundary) and the
result. Each line has `type`, `uuid`, `parentUuid`, `sessionId`, `timestamp`, `cwd`,
plus `message` for user/assistant lines. Files live in
`<root>/<cwd-slug>/<session-id>.jsonl`, root = AgentOptions.sessions_dir, else
$LOOPWRIGHT_SESSIONS_DIR, else $LOOPWRIGHT_HOME/projects, else ~/.loopwright/projects.

Crash safety comes from the loop's order: an assistant message `a` is yielded (and so
written) before its tools run, and the user message `b` after. A file cut anywhere is
therefore a prefix of that order, which `load_session` repairs: a torn last line is
ignored, a tool_use without results gets is_error "interrupted" results, stray
tool_results are dropped. A result line names (`dropUuid`) an assistant line that never
joined the history (turn limit, budget stop), so resume continues from the right `h`.
In-place rewinds are a `rewind` line (the file stays append-only).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import sys
import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from .blocks import WireMessage
from .home import loopwright_home as loopwright_home  # one definition for all: `~` expanded
from .invariant import InvariantViolation
from .invariant import check as check_inv
from .messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    UserMessage,
)

# TranscriptWriteError lives in messages: the CLI catches it without loading this module
from .messages import TranscriptWriteError as TranscriptWriteError

FsyncPolicy = Literal["none", "turn", "always"]
SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
INTERRUPTED_RESULT = "Interrupted: the session ended (crash or kill) before this tool call finished."


# --- where sessions live ----------------------------------------------------------------------

def sessions_root(override: str | Path | None = None) -> Path:
    if override is not None:
        return Path(override).expanduser()
    env = os.environ.get("LOOPWRIGHT_SESSIONS_DIR")
    if env:
        return Path(env).expanduser()
    return loopwright_home() / "projects"


def cwd_slug(cwd: str | Path) -> str:
    """Claude Code's project directory name: the absolute path, non-alphanumerics -> '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(Path(cwd).resolve()))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_session_id() -> str:
    return str(uuidlib.uuid4())


# --- the store interface -----------------------------------------------------------------------

@dataclass
class LoadedSession:
    """A transcript read back: its lines, and the repaired history a model may see."""

    session_id: str
    path: Path | None
    lines: list[dict[str, Any]]
    history: list[WireMessage]
    repaired: list[str] = field(default_factory=list)  # what repair changed, for humans
    last_uuid: str | None = None  # the last line's uuid (parent of the next line)


@dataclass
class SessionInfo:
    """One saved session, summarised for `sessions list` and /resume."""

    session_id: str
    path: Path
    cwd: str
    created: str
    modified: str
    prompts: int
    turns: int
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    peak_input_tokens: int  # the largest n_k of any call (seed Def 5.1)
    first_prompt: str
    last_prompt: str
    messages: int

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["path"] = str(self.path)
        return d


class SessionWriter(Protocol):
    """Where a run appends its transcript lines (one JSON object each)."""

    session_id: str

    def write(self, line: dict[str, Any], sync: bool = False) -> None: ...

    def close(self) -> None: ...


class SessionStore(Protocol):
    """Where transcripts live. The JSONL store is the default; others (a database, object
    storage) can plug in through AgentOptions.session_store."""

    def open_writer(self, session_id: str, cwd: Path, fsync: FsyncPolicy = "none") -> SessionWriter: ...

    def load(self, session_id: str, cwd: Path | None = None) -> LoadedSession: ...

    def exists(self, session_id: str, cwd: Path | None = None) -> bool: ...

    def latest(self, cwd: Path) -> str | None: ...

    def fork(self, session_id: str, new_id: str, cwd: Path, up_to_uuid: str | None = None) -> None: ...

    def list(self, cwd: Path | None = None) -> list[SessionInfo]: ...


class JsonlWriter:
    """Appends one JSON line per event with one write(2) each on an O_APPEND descriptor (no
    user-space buffer: a killed process loses nothing already yielded), fsync per the policy.
    A failed write is cut back off the file, so a full disk never leaves a torn line."""

    def __init__(self, path: Path, session_id: str, fsync: FsyncPolicy = "none") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.session_id = session_id
        self.fsync = fsync
        self.failed: OSError | None = None  # the first write error: later writes are dropped
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
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
        data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
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

    def path(self, session_id: str, cwd: Path) -> Path:
        return self.root / cwd_slug(cwd) / f"{session_id}.jsonl"

    def find(self, session_id: str, cwd: Path | None = None) -> Path | None:
        """The file of a session id (or a unique id prefix), this directory's first."""
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
        return JsonlWriter(existing or self.path(session_id, cwd), session_id, fsync)

    def load(self, session_id: str, cwd: Path | None = None) -> LoadedSession:
        p = self.find(session_id, cwd)
        if p is None:
            raise SessionNotFound(f"no session {session_id!r} in {self.root}")
        return load_transcript(p)

    def latest(self, cwd: Path) -> str | None:
        d = self.root / cwd_slug(cwd)
        files = sorted(d.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if d.exists() else []
        return files[-1].stem if files else None

    def fork(self, session_id: str, new_id: str, cwd: Path, up_to_uuid: str | None = None) -> None:
        """Copy a transcript to a new id (optionally only up to, not including, a line).
        The original file is only read. Checkpoint snapshots are copied along."""
        src = self.find(session_id, cwd)
        if src is None:
            raise SessionNotFound(f"no session {session_id!r} in {self.root}")
        lines = read_lines(src)
        if up_to_uuid is not None:
            idx = next((i for i, ln in enumerate(lines) if ln.get("uuid") == up_to_uuid), None)
            if idx is None:
                raise SessionNotFound(f"no message {up_to_uuid!r} in session {session_id}")
            lines = lines[:idx]
        dst = self.path(new_id, cwd)
        dst.parent.mkdir(parents=True, exist_ok=True)
        with open(dst, "x", encoding="utf-8") as f:
            for ln in lines:
                f.write(json.dumps({**ln, "sessionId": new_id}, ensure_ascii=False, separators=(",", ":")) + "\n")
            f.write(json.dumps(_line("system", new_id, str(cwd), lines[-1].get("uuid") if lines else None,
                                     subtype="fork", forkedFrom=session_id, upTo=up_to_uuid),
                               separators=(",", ":")) + "\n")
        src_files = src.with_suffix(".files")
        if src_files.is_dir():
            shutil.copytree(src_files, dst.with_suffix(".files"))

    def list(self, cwd: Path | None = None) -> list[SessionInfo]:
        if not self.root.exists():
            return []
        dirs = [self.root / cwd_slug(cwd)] if cwd is not None else [d for d in self.root.iterdir() if d.is_dir()]
        out = [session_info(p) for d in dirs if d.exists() for p in d.glob("*.jsonl")]
        return sorted(out, key=lambda i: i.modified, reverse=True)


class SessionBusy(ValueError):
    """Another process is appending to this transcript."""


class SessionNotFound(ValueError):
    """An unknown session id (a configuration error: the CLI reports it and exits 2)."""


def glob_escape(s: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", s)


def _line(kind: str, session_id: str, cwd: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": str(uuidlib.uuid4()), "parentUuid": parent, "sessionId": session_id,
            "timestamp": _now(), "cwd": cwd, **extra}


# --- writing a run ------------------------------------------------------------------------------

class SessionRecorder:
    """Writes one run's events as they are yielded. Attached to `loop.Run` when persisting."""

    def __init__(self, writer: SessionWriter, session_id: str, cwd: Path, parent_uuid: str | None = None) -> None:
        self.writer = writer
        self.session_id = session_id
        self.cwd = str(cwd)
        self.last_uuid = parent_uuid if parent_uuid is not None else getattr(writer, "last_uuid", None)
        self.prompt_uuid: str | None = None  # the user message that started this turn (checkpoints key)
        self._open_assistant: str | None = None  # an assistant line not yet answered by a user line

    @property
    def path(self) -> Path | None:
        """The transcript's file when the store keeps one (the JSONL store's); None for others."""
        path = getattr(self.writer, "path", None)
        return path if isinstance(path, Path) else None

    def _emit(self, kind: str, sync: bool = False, **extra: Any) -> str:
        ln = _line(kind, self.session_id, self.cwd, self.last_uuid, **extra)
        self.writer.write(ln, sync)
        self.last_uuid = ln["uuid"]
        return str(ln["uuid"])

    def prompt(self, message: WireMessage) -> str:
        self.prompt_uuid = self._emit("user", sync=True, message=message, isPrompt=True)
        self._open_assistant = None
        return self.prompt_uuid

    def user(self, message: WireMessage, sync: bool = True, **extra: Any) -> str:
        self._open_assistant = None
        return self._emit("user", sync=sync, message=message, **extra)

    def record(self, msg: Message, h: list[WireMessage]) -> None:
        """Persist one yielded message. `h` is the run's history at that moment."""
        if isinstance(msg, AssistantMessage):
            wire = {"role": "assistant", "model": msg.model, "content": msg.to_wire()["content"],
                    "stop_reason": msg.stop_reason, "usage": msg.usage.to_json() if msg.usage else None}
            self._open_assistant = self._emit("assistant", message=wire)
        elif isinstance(msg, UserMessage):
            self.user(msg.to_wire())
        elif isinstance(msg, SystemMessage):
            data = dict(msg.data)
            if msg.subtype == "compact_boundary":
                data.setdefault("messages", list(h))  # the history after compaction, for loading
            self._emit("system", subtype=msg.subtype, data=data)
        elif isinstance(msg, ResultMessage):
            extra: dict[str, Any] = {"historyLength": len(msg.messages)}
            # An assistant line the history never took in (turn limit, budget, bad response).
            if self._open_assistant is not None and not (msg.messages and msg.messages[-1].get("role") == "assistant"):
                extra["dropUuid"] = self._open_assistant
            self._open_assistant = None
            self._emit("result", sync=True, result=msg.to_json(), **extra)
        elif isinstance(msg, StreamEvent):
            pass  # partial events are not part of the transcript

    def close(self) -> None:
        self.writer.close()


# --- reading and repairing ---------------------------------------------------------------------

def read_lines(path: Path, notes: list[str] | None = None) -> list[dict[str, Any]]:
    """All whole lines of a transcript. A torn last line (a crash mid-write) or a line that is
    not a JSON object (garbage) is skipped, and said so in `notes`."""
    out: list[dict[str, Any]] = []
    loads = json.loads
    with open(path, "rb") as f:
        data = f.read()
    raws = data.split(b"\n")
    try:  # fast path: one parse for the whole file (no torn or corrupt line)
        whole: list[dict[str, Any]] = loads(b"[" + b",".join(r for r in raws if r.strip()) + b"]")
        if all(isinstance(o, dict) for o in whole):
            return whole
    except ValueError:
        pass
    bad: list[int] = []
    for n, raw in enumerate(raws, 1):
        if not raw.strip():
            continue
        try:
            obj = loads(raw)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            out.append(obj)
        elif n == len(raws):  # no newline after it: a write the crash cut short
            if notes is not None:
                notes.append(f"ignored a torn last line ({len(raw)} bytes; the process ended mid-write)")
        else:
            bad.append(n)
    if bad and notes is not None:
        shown = ", ".join(map(str, bad[:10])) + (", ..." if len(bad) > 10 else "")
        notes.append(f"skipped {len(bad)} line(s) that are not JSON objects (line {shown})")
    return out


def _content(m: Any) -> list[Any]:
    c = m.get("content") if isinstance(m, dict) else None
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return [b for b in c if isinstance(b, dict)] if isinstance(c, list) else []


def _is_result(b: dict[str, Any]) -> bool:
    return b.get("type") == "tool_result"


def repair_history(h: list[WireMessage], notes: list[str] | None = None) -> list[WireMessage]:
    """Make any message list satisfy Inv (P1-P3), changing as little as possible. Idempotent.

    - leading assistant messages are dropped (P1);
    - an assistant's tool_uses get their results, in order, as the first blocks of the next
      user message; a missing one becomes an is_error "interrupted" result (P2);
    - tool_result blocks anywhere else are dropped; a user message left empty is dropped (P3).
    """
    note = notes.append if notes is not None else (lambda _s: None)
    out: list[WireMessage] = []
    i, n = 0, len(h)
    while i < n:
        m = h[i]
        role = m.get("role") if isinstance(m, dict) else None
        content = _content(m)
        i += 1
        if role == "user":
            kept = [b for b in content if not _is_result(b)]
            if len(kept) != len(content):
                note(f"dropped {len(content) - len(kept)} tool_result(s) with no matching tool_use")
            if kept:
                out.append({"role": "user", "content": kept} if kept != content or not isinstance(m.get("content"), list)
                           else m)
            continue
        if role != "assistant":
            continue
        if not out:
            note("dropped an assistant message before the first user message")
            continue
        if any(_is_result(b) for b in content):
            content = [b for b in content if not _is_result(b)]
            m = {**m, "content": content}
        out.append(m)
        ids = [b.get("id") for b in content if b.get("type") == "tool_use"]
        if not ids:
            continue
        results: dict[Any, dict[str, Any]] = {}
        rest: list[dict[str, Any]] = []
        nxt = h[i] if i < n else None
        original: list[Any] | None = None
        if isinstance(nxt, dict) and nxt.get("role") == "user":
            original = _content(nxt)
            for b in original:
                if _is_result(b):
                    results.setdefault(b.get("tool_use_id"), b)
                else:
                    rest.append(b)
            i += 1
        blocks: list[dict[str, Any]] = []
        for u in ids:
            r = results.get(u)
            if r is None:
                note(f"tool_use {u} had no result: marked interrupted")
                r = {"type": "tool_result", "tool_use_id": u, "content": INTERRUPTED_RESULT, "is_error": True}
            blocks.append(r)
        blocks.extend(rest)
        if original is not None and blocks == original and isinstance(nxt, dict):
            out.append(nxt)
        else:
            if original is not None and len([b for b in original if _is_result(b)]) > len(ids):
                note("dropped tool_result(s) with no matching tool_use")
            out.append({"role": "user", "content": blocks})
    return out


def history_from_lines(lines: list[dict[str, Any]], notes: list[str] | None = None) -> tuple[list[WireMessage], list[str]]:
    """Replay a transcript's lines into the conversation history, then repair it. Anything
    malformed is skipped or repaired, and said so in the returned notes (never an exception)."""
    h: list[WireMessage] = []
    ids: list[str | None] = []
    before_prompt: dict[str, tuple[list[WireMessage], list[str | None]]] = {}
    notes = notes if notes is not None else []
    seen: set[str] = set()
    repeated = 0
    for ln in lines:
        uid = ln.get("uuid")
        if isinstance(uid, str):
            if uid in seen:  # a line written twice (a copy, a botched merge): replay it once
                repeated += 1
                continue
            seen.add(uid)
        else:
            uid = None
        kind = ln.get("type")
        if kind in ("user", "assistant"):
            msg = ln.get("message")
            if not isinstance(msg, dict):
                notes.append(f"skipped a {kind} line without a message object")
                continue
            if kind == "user" and ln.get("isPrompt") and uid is not None:
                before_prompt[uid] = (list(h), list(ids))
            if kind == "assistant":  # only the wire fields reach a model
                msg = {"role": "assistant", "content": msg.get("content", [])}
            h.append(msg)
            ids.append(uid)
        elif kind == "result":
            drop = ln.get("dropUuid")
            if drop is not None and ids and ids[-1] == drop:
                h.pop()
                ids.pop()
        elif kind == "system" and ln.get("subtype") == "compact_boundary":
            data = ln.get("data")
            msgs = data.get("messages") if isinstance(data, dict) else None
            if isinstance(msgs, list):
                h = list(msgs)
                ids = [None] * len(h)
            elif not isinstance(data, dict) or "messages" in data:
                notes.append("ignored a compact_boundary line without a valid message list")
        elif kind == "rewind":
            to = ln.get("toUuid")
            if isinstance(to, str) and to in before_prompt:
                h, ids = (list(x) for x in before_prompt[to])  # type: ignore[assignment]
    if repeated:
        notes.append(f"skipped {repeated} repeated line(s) (a uuid seen before)")
    if _well_formed(h) and _valid(h):  # the common case (a clean end, or a crash between turns)
        return h, notes
    h = repair_history(_sanitize(h, notes), notes)
    if h and not _valid(h):  # cannot happen (repair_history's contract); never let it reach a model
        raise AssertionError("repair_history produced a history that breaks Inv")
    return h, notes


_BLOCK_STR_FIELDS = {"text": "text", "thinking": "thinking", "redacted_thinking": "data"}


def _block_ok(b: Any) -> bool:
    """A content block a provider can send: what blocks.block_from_wire accepts, checked
    without building objects (it runs on every block of every session loaded)."""
    if not isinstance(b, dict):
        return False
    kind = b.get("type")
    if not isinstance(kind, str):
        return False
    if kind in _BLOCK_STR_FIELDS:
        return isinstance(b.get(_BLOCK_STR_FIELDS[kind]), str)
    if kind == "tool_use":
        return isinstance(b.get("id"), str) and isinstance(b.get("name"), str) and isinstance(b.get("input", {}), dict)
    if kind == "tool_result":
        c = b.get("content", "")
        return isinstance(b.get("tool_use_id"), str) and (
            c is None or isinstance(c, str) or (isinstance(c, list) and all(_block_ok(x) for x in c)))
    if kind == "image":
        return isinstance(b.get("source"), dict)
    return True


def _well_formed(h: list[Any]) -> bool:
    """Every message an object with a role and well-formed blocks; tool_use ids unique."""
    tool_ids: set[str] = set()
    for m in h:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return False
        c = m.get("content")
        if isinstance(c, str):
            continue
        if not isinstance(c, list):
            return False
        for b in c:
            if not _block_ok(b):
                return False
            if b.get("type") == "tool_use":
                if b["id"] in tool_ids:
                    return False
                tool_ids.add(b["id"])
    return True


def _sanitize(h: list[Any], notes: list[str]) -> list[WireMessage]:
    """Drop what no provider accepts: non-messages, malformed blocks, and a tool_use whose id
    an earlier one already has (its results then count as stray and go too)."""
    out: list[WireMessage] = []
    tool_ids: set[str] = set()
    for m in h:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            notes.append("dropped a history entry that is not a user or assistant message")
            continue
        c = m.get("content")
        if isinstance(c, str):
            out.append(m)
            continue
        blocks = c if isinstance(c, list) else []
        kept = []
        for b in blocks:
            if not _block_ok(b):
                kind = b.get("type") if isinstance(b, dict) else None
                notes.append(f"dropped a malformed {kind if isinstance(kind, str) else 'content'} block "
                             f"from a{'n' if m['role'] == 'assistant' else ''} {m['role']} message")
                continue
            if b.get("type") == "tool_use":
                if b["id"] in tool_ids:
                    notes.append(f"dropped a repeated tool_use {b['id']} (the id was used before)")
                    continue
                tool_ids.add(b["id"])
            kept.append(b)
        if not kept:
            notes.append(f"dropped a{'n' if m['role'] == 'assistant' else ''} {m['role']} message left without content")
            continue
        if kept != blocks or not isinstance(c, list):
            m = {**m, "content": kept}
        out.append(m)
    return out


def _valid(h: list[WireMessage]) -> bool:
    """Inv for a loaded history, which may end with a closing assistant message."""
    if not h:
        return True
    if any(not _content(m) for m in h):
        return False
    try:
        check_inv(h + [{"role": "user", "content": [{"type": "text", "text": "."}]}]
                  if h[-1].get("role") == "assistant" else h)
    except InvariantViolation:
        return False
    return True


def load_transcript(path: Path) -> LoadedSession:
    notes: list[str] = []
    lines = read_lines(path, notes)
    history, notes = history_from_lines(lines, notes)
    sid = path.stem  # the file name, not a field inside it: a session id becomes a path again
    last = next((u for ln in reversed(lines) if isinstance(u := ln.get("uuid"), str)), None)
    return LoadedSession(sid, path, lines, history, notes, last)


# --- summaries ---------------------------------------------------------------------------------

def _prompt_text(msg: Any) -> str:
    return " ".join(_text(b.get("text")) for b in _content(msg) if b.get("type") == "text").strip()


def _text(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _number(v: Any) -> float:
    """A usage figure from a line that may be corrupt: anything not a number counts 0."""
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0


def _live(lines: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The prompt lines still in the conversation (a rewind cuts the later ones) and how many
    messages it holds (a compaction replaces them with its summary), as history_from_lines
    replays it, without building the history."""
    prompts: list[dict[str, Any]] = []
    n = 0
    before: dict[str, tuple[int, int]] = {}  # prompt uuid -> (prompts, messages) before it
    for ln in lines:
        kind = ln.get("type")
        if kind in ("user", "assistant"):
            if kind == "user" and ln.get("isPrompt"):
                before[str(ln.get("uuid"))] = (len(prompts), n)
                prompts.append(ln)
            n += 1
        elif kind == "result" and ln.get("dropUuid") is not None:
            n -= 1
        elif kind == "system" and ln.get("subtype") == "compact_boundary":
            data = ln.get("data")
            if isinstance(data, dict) and isinstance(data.get("messages"), list):
                n = len(data["messages"])
        elif kind == "rewind" and str(ln.get("toUuid")) in before:
            k, n = before[str(ln.get("toUuid"))]
            del prompts[k:]
    return prompts, max(n, 0)


def session_info(path: Path) -> SessionInfo:
    lines = read_lines(path)
    prompts, messages = _live(lines)  # the conversation as resume loads it, after rewinds and compactions
    calls = [ln for ln in lines if ln.get("type") == "assistant"]
    inp = out = peak = 0
    cost = unsettled = 0.0
    for ln in lines:
        if ln.get("type") == "system" and ln.get("subtype") == "compact_boundary":
            data = ln.get("data")  # /compact's summarizing call is outside any run's total
            if isinstance(data, dict) and data.get("trigger") == "manual":
                cost += _number(data.get("cost_usd"))
            continue
        if ln.get("type") == "result":  # a run's own total: its subagents and compactions included
            res = ln.get("result")
            total = res.get("total_cost_usd") if isinstance(res, dict) else None
            if isinstance(total, int | float) and not isinstance(total, bool):
                cost += float(total)
                unsettled = 0.0
            continue
        if ln.get("type") != "assistant":
            continue
        msg = ln.get("message")  # lines may be corrupt: anything not a number counts 0
        u = msg.get("usage") if isinstance(msg, dict) else None
        u = u if isinstance(u, dict) else {}
        peak = max(peak, sum(int(_number(u.get(k))) for k in ("input_tokens", "cache_read_input_tokens",
                                                               "cache_creation_input_tokens")))
        inp += int(_number(u.get("input_tokens")))
        out += int(_number(u.get("output_tokens")))
        unsettled += _number(u.get("cost_usd"))  # a run cut short has no result line
    cost += unsettled
    st = path.stat()
    return SessionInfo(
        session_id=path.stem, path=path,
        cwd=next((ln["cwd"] for ln in lines if isinstance(ln.get("cwd"), str) and ln["cwd"]), ""),
        created=_text(lines[0].get("timestamp")) if lines else "",
        modified=datetime.fromtimestamp(st.st_mtime, UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        prompts=len(prompts),
        # tool-use turns: the user lines of tool results (counted even for runs that crashed)
        turns=sum(1 for ln in lines if ln.get("type") == "user" and not ln.get("isPrompt")
                  and any(b.get("type") == "tool_result" for b in _content(ln.get("message")))),
        calls=len(calls), input_tokens=inp, output_tokens=out, cost_usd=cost, peak_input_tokens=peak,
        first_prompt=_prompt_text(prompts[0].get("message")) if prompts else "",
        last_prompt=_prompt_text(prompts[-1].get("message")) if prompts else "",
        messages=messages,
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
    store = store_for(options)
    resume: str | None = options.resume
    if resume is None and options.continue_conversation:
        resume = store.latest(cwd)
    history: list[WireMessage] | None = None
    parent: str | None = None
    sid = options.session_id or new_session_id()
    if not SAFE_ID.match(sid):
        raise ValueError(f"session id {sid!r}: use letters, digits, '-' and '_' only (a UUID)")
    if options.session_id and not history_given and (resume is None or options.fork_session) \
            and store.exists(sid, cwd):
        raise ValueError(f"session id {sid} is already in use: resume it with --resume {sid}")
    fsync = options.session_fsync
    if options.persist_session and fsync not in ("none", "turn", "always"):
        raise ValueError(f"session_fsync must be 'none', 'turn' or 'always', got {fsync!r}")
    writer: SessionWriter | None = None
    if resume is not None and not history_given:
        if options.fork_session:  # the original is only read: no lock needed, its owner may go on
            loaded = store.load(resume, cwd)
            store.fork(loaded.session_id, sid, cwd)
        else:
            if not store.exists(resume, cwd):
                raise SessionNotFound(f"no session {resume!r} in {getattr(store, 'root', 'the session store')}")
            if options.persist_session:  # the lock before the load: nobody appends after we read
                writer = _open_writer(store, resume, cwd, fsync)
            try:
                loaded = store.load(resume, cwd)
            except BaseException:
                if writer is not None:
                    writer.close()
                raise
            sid = loaded.session_id
            if writer is not None:
                writer.session_id = sid  # `resume` may be an id prefix
        history, parent = loaded.history, loaded.last_uuid
    elif resume is not None and not options.fork_session:
        sid = resume  # the caller supplies the history itself: keep appending to that session
    recorder = None
    if options.persist_session:
        if writer is None:
            writer = _open_writer(store, sid, cwd, fsync)
        recorder = SessionRecorder(writer, sid, cwd, parent)
    return SessionStart(sid, history, recorder)


def list_sessions(cwd: str | Path | None = None, sessions_dir: str | Path | None = None,
                  all_projects: bool = False) -> list[SessionInfo]:
    """The saved sessions of a directory (default: the current one), newest first."""
    store = JsonlSessionStore(sessions_dir)
    return store.list(None if all_projects else Path(cwd or os.getcwd()).resolve())


def get_session_messages(session_id: str, sessions_dir: str | Path | None = None) -> list[WireMessage]:
    """A saved session's conversation history, repaired so that it satisfies Inv."""
    return JsonlSessionStore(sessions_dir).load(session_id).history


# --- `loopwright sessions` ---------------------------------------------------------------------

def _short(s: str, n: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def sessions_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="loopwright sessions", description="List and show saved sessions.")
    sub = p.add_subparsers(dest="cmd")
    ls = sub.add_parser("list", help="sessions of this directory, newest first")
    ls.add_argument("--all", action="store_true", help="every project directory")
    ls.add_argument("--cwd")
    ls.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="one session's messages")
    show.add_argument("session_id")
    show.add_argument("--json", action="store_true", help="print the repaired history as JSON")
    args = p.parse_args(list(argv))
    if args.cmd in (None, "list"):
        infos = list_sessions(getattr(args, "cwd", None), all_projects=getattr(args, "all", False))
        if getattr(args, "json", False):
            print(json.dumps([i.to_json() for i in infos], indent=2))
            return 0
        if not infos:
            print("no sessions in this directory (see `loopwright sessions list --all`)")
            return 0
        print(f"{'session':36}  {'modified':20}  {'turns':>5}  {'calls':>5}  {'peak n_k':>9}  {'tokens':>9}  "
              f"{'cost':>8}  last prompt")
        for i in infos:
            print(f"{i.session_id:36}  {i.modified:20}  {i.turns:5}  {i.calls:5}  {i.peak_input_tokens:9}  "
                  f"{i.input_tokens + i.output_tokens:9}  ${i.cost_usd:7.4f}  {_short(i.last_prompt, 50)}")
        return 0
    store = JsonlSessionStore()
    path = store.find(args.session_id, Path.cwd())
    if path is None:
        print(f"loopwright: no session {args.session_id!r}", file=sys.stderr)
        return 1
    loaded = load_transcript(path)
    if args.json:
        print(json.dumps(loaded.history, indent=2, ensure_ascii=False))
        return 0
    info = session_info(path)
    print(f"session {info.session_id}\n  file {path}\n  cwd {info.cwd}\n  prompts {info.prompts}, turns {info.turns}, "
          f"calls {info.calls}, tokens {info.input_tokens} in / {info.output_tokens} out, cost ${info.cost_usd:.4f}")
    for note in loaded.repaired:
        print(f"  repaired: {note}")
    for ln in loaded.lines:
        kind = ln.get("type")
        msg = ln.get("message")
        uid = _text(ln.get("uuid"))[:8]
        if kind == "user":
            for b in _content(msg):
                if b.get("type") == "text":
                    tag = "prompt" if ln.get("isPrompt") else "user"
                    print(f"[{uid}] {tag}: {_short(_text(b.get('text')), 100)}")
                elif b.get("type") == "tool_result":
                    mark = "✗" if b.get("is_error") else "✓"
                    c = b.get("content")
                    print(f"    {mark} {_short(c if isinstance(c, str) else json.dumps(c), 100)}")
        elif kind == "assistant":
            for b in _content(msg):
                if b.get("type") == "text" and _text(b.get("text")).strip():
                    print(f"  assistant: {_short(b['text'], 100)}")
                elif b.get("type") == "tool_use":
                    print(f"  ⏺ {b.get('name')}({_short(json.dumps(b.get('input')), 80)})")
        elif kind == "result":
            r = ln.get("result")
            r = r if isinstance(r, dict) else {}
            print(f"● {r.get('subtype')}: turns={r.get('num_turns')} cost=${_number(r.get('total_cost_usd')):.4f}")
        elif kind == "rewind":
            print(f"↶ rewound to {str(ln.get('toUuid'))[:8]}")
    return 0
