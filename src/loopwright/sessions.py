"""Sessions: every run's transcript as an append-only JSONL file (seed §8; Claude Code's layout).

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
from typing import IO, Any, Literal, Protocol, cast

from .blocks import WireMessage
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

FsyncPolicy = Literal["none", "turn", "always"]
SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
INTERRUPTED_RESULT = "Interrupted: the session ended (crash or kill) before this tool call finished."


# --- where sessions live ----------------------------------------------------------------------

def loopwright_home() -> Path:
    return Path(os.environ.get("LOOPWRIGHT_HOME") or Path.home() / ".loopwright")


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
    """Appends one JSON line per event to an open file: one write + flush each
    (so a killed process loses nothing already yielded), fsync per the policy."""

    def __init__(self, path: Path, session_id: str, fsync: FsyncPolicy = "none") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.session_id = session_id
        self.fsync = fsync
        self._f: IO[str] | None = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open on purpose
        try:  # one writer per transcript: two processes appending would interleave two conversations
            fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._f.close()
            self._f = None
            raise SessionBusy(f"session {session_id} is in use by another loopwright process "
                              "(fork it with --fork-session, or wait until that run ends)") from None
        self.last_uuid: str | None = None  # of the file's last whole line: the parent of our first
        if self._f.tell() > 0:
            self._heal_torn_tail()
            self.last_uuid = _last_uuid(path)

    def _heal_torn_tail(self) -> None:
        """A crash may have left a line without its newline: end it, so our next line is whole."""
        with open(self.path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            last = f.read(1)
        if last != b"\n" and self._f is not None:
            self._f.write("\n")
            self._f.flush()

    def write(self, line: dict[str, Any], sync: bool = False) -> None:
        f = self._f
        if f is None:
            return
        f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        f.flush()
        if self.fsync == "always" or (sync and self.fsync == "turn"):
            os.fsync(f.fileno())

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


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

def read_lines(path: Path) -> list[dict[str, Any]]:
    """All whole lines of a transcript; a torn or corrupt line (a crash mid-write) is skipped."""
    out: list[dict[str, Any]] = []
    loads = json.loads
    with open(path, "rb") as f:
        data = f.read()
    raws = [r for r in data.split(b"\n") if r.strip()]
    try:  # fast path: one parse for the whole file (no torn or corrupt line)
        whole = loads(b"[" + b",".join(raws) + b"]")
        if all(isinstance(o, dict) for o in whole):
            return whole
    except ValueError:
        pass
    for raw in raws:
        if not raw.strip():
            continue
        try:
            obj = loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
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


def history_from_lines(lines: list[dict[str, Any]]) -> tuple[list[WireMessage], list[str]]:
    """Replay a transcript's lines into the conversation history, then repair it."""
    h: list[WireMessage] = []
    ids: list[str | None] = []
    before_prompt: dict[str, tuple[list[WireMessage], list[str | None]]] = {}
    notes: list[str] = []
    for ln in lines:
        kind = ln.get("type")
        if kind in ("user", "assistant"):
            msg = ln.get("message")
            if not isinstance(msg, dict):
                continue
            if kind == "user" and ln.get("isPrompt"):
                before_prompt[str(ln.get("uuid"))] = (list(h), list(ids))
            if kind == "assistant":  # only the wire fields reach a model
                msg = {"role": "assistant", "content": msg.get("content", [])}
            h.append(msg)
            ids.append(ln.get("uuid"))
        elif kind == "result":
            drop = ln.get("dropUuid")
            if drop is not None and ids and ids[-1] == drop:
                h.pop()
                ids.pop()
        elif kind == "system" and ln.get("subtype") == "compact_boundary":
            data = ln.get("data") or {}
            if isinstance(data.get("messages"), list):
                h = list(data["messages"])
                ids = [None] * len(h)
        elif kind == "rewind":
            to = ln.get("toUuid")
            if to in before_prompt:
                h, ids = (list(x) for x in before_prompt[to])  # type: ignore[assignment]
    if _valid(h):  # the common case (a clean end, or a crash between turns): nothing to repair
        return h, notes
    h = repair_history(h, notes)
    if h and not _valid(h):  # cannot happen (repair_history's contract); never let it reach a model
        raise AssertionError("repair_history produced a history that breaks Inv")
    return h, notes


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
    lines = read_lines(path)
    history, notes = history_from_lines(lines)
    sid = path.stem  # the file name, not a field inside it: a session id becomes a path again
    return LoadedSession(sid, path, lines, history, notes, lines[-1].get("uuid") if lines else None)


# --- summaries ---------------------------------------------------------------------------------

def _prompt_text(msg: Any) -> str:
    return " ".join(b.get("text", "") for b in _content(msg) if b.get("type") == "text").strip()


def session_info(path: Path) -> SessionInfo:
    lines = read_lines(path)
    prompts = [ln for ln in lines if ln.get("type") == "user" and ln.get("isPrompt")]
    calls = [ln for ln in lines if ln.get("type") == "assistant"]
    inp = out = peak = 0
    cost = unsettled = 0.0
    for ln in lines:
        if ln.get("type") == "result":  # a run's own total: its subagents and compactions included
            total = (ln.get("result") or {}).get("total_cost_usd")
            if isinstance(total, int | float):
                cost += float(total)
                unsettled = 0.0
            continue
        if ln.get("type") != "assistant":
            continue
        u = (ln.get("message") or {}).get("usage") or {}
        peak = max(peak, sum(int(u.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens",
                                                          "cache_creation_input_tokens")))
        inp += int(u.get("input_tokens") or 0)
        out += int(u.get("output_tokens") or 0)
        unsettled += float(u.get("cost_usd") or 0.0)  # a run cut short has no result line
    cost += unsettled
    st = path.stat()
    return SessionInfo(
        session_id=path.stem, path=path,
        cwd=next((str(ln["cwd"]) for ln in lines if ln.get("cwd")), ""),
        created=lines[0].get("timestamp", "") if lines else "",
        modified=datetime.fromtimestamp(st.st_mtime, UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        prompts=len(prompts),
        # tool-use turns: the user lines of tool results (counted even for runs that crashed)
        turns=sum(1 for ln in lines if ln.get("type") == "user" and not ln.get("isPrompt")
                  and any(b.get("type") == "tool_result" for b in _content(ln.get("message")))),
        calls=len(calls), input_tokens=inp, output_tokens=out, cost_usd=cost, peak_input_tokens=peak,
        first_prompt=_prompt_text(prompts[0].get("message")) if prompts else "",
        last_prompt=_prompt_text(prompts[-1].get("message")) if prompts else "",
        messages=sum(1 for ln in lines if ln.get("type") in ("user", "assistant")),
    )


# --- what the loop calls ------------------------------------------------------------------------

def store_for(options: Any) -> SessionStore:
    custom = getattr(options, "session_store", None)
    if custom is not None:
        return custom
    return JsonlSessionStore(getattr(options, "sessions_dir", None))


@dataclass
class SessionStart:
    session_id: str
    history: list[WireMessage] | None  # loaded for resume/continue, else None
    recorder: SessionRecorder | None


def start_session(options: Any, cwd: Path, history_given: bool) -> SessionStart:
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
    if resume is not None and not history_given:
        loaded = store.load(resume, cwd)
        history, parent = loaded.history, loaded.last_uuid
        if options.fork_session:
            store.fork(loaded.session_id, sid, cwd)
        else:
            sid = loaded.session_id
    elif resume is not None and not options.fork_session:
        sid = resume  # the caller supplies the history itself: keep appending to that session
    recorder = None
    if options.persist_session:
        fsync = getattr(options, "session_fsync", "none")
        if fsync not in ("none", "turn", "always"):
            raise ValueError(f"session_fsync must be 'none', 'turn' or 'always', got {fsync!r}")
        try:
            writer = store.open_writer(sid, cwd, cast(FsyncPolicy, fsync))
        except SessionBusy:
            raise
        except OSError as e:  # an unwritable home: a clear configuration error, not a crash
            raise ValueError(f"cannot write the session transcript ({e}); set LOOPWRIGHT_HOME, "
                             "or run without session persistence") from None
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
        msg = ln.get("message") or {}
        if kind == "user":
            for b in _content(msg):
                if b.get("type") == "text":
                    tag = "prompt" if ln.get("isPrompt") else "user"
                    print(f"[{ln.get('uuid', '')[:8]}] {tag}: {_short(b.get('text', ''), 100)}")
                elif b.get("type") == "tool_result":
                    mark = "✗" if b.get("is_error") else "✓"
                    c = b.get("content")
                    print(f"    {mark} {_short(c if isinstance(c, str) else json.dumps(c), 100)}")
        elif kind == "assistant":
            for b in _content(msg):
                if b.get("type") == "text" and b.get("text", "").strip():
                    print(f"  assistant: {_short(b['text'], 100)}")
                elif b.get("type") == "tool_use":
                    print(f"  ⏺ {b.get('name')}({_short(json.dumps(b.get('input')), 80)})")
        elif kind == "result":
            r = ln.get("result") or {}
            print(f"● {r.get('subtype')}: turns={r.get('num_turns')} cost=${float(r.get('total_cost_usd') or 0):.4f}")
        elif kind == "rewind":
            print(f"↶ rewound to {str(ln.get('toUuid'))[:8]}")
    return 0
