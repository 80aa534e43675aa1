"""Room: sessions (beside execute). Owns where sessions live and the store interface (SessionStore,
JsonlSessionStore); imports data types, bases, invariant and the sessions' own modules.

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

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..blocks import WireMessage
from ..home import loopwright_home as loopwright_home  # one definition for all: `~` expanded
from ..home import (
    sessions_root as sessions_root,  # (in home: ScriptedModel.from_session finds sessions too)
)
from ..ids import SAFE_ID as SAFE_ID
from ..ids import new_uuid

FsyncPolicy = Literal["none", "turn", "always"]
INTERRUPTED_RESULT = "Interrupted: the session ended (crash or kill) before this tool call finished."


# --- where sessions live ----------------------------------------------------------------------

def cwd_slug(cwd: str | Path) -> str:
    """Claude Code's project directory name: the absolute path, non-alphanumerics -> '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(Path(cwd).resolve()))


def _now() -> str:
    """UTC now as Claude Code's transcripts have it, 2026-12-01T22:27:00.123Z (by `time`: the
    datetime module is ~1 ms of a start)."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def new_session_id() -> str:
    return new_uuid()


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


class SessionBusy(ValueError):
    """Another process is appending to this transcript."""


class SessionNotFound(ValueError):
    """An unknown session id (a configuration error: the CLI reports it and exits 2)."""


class InvalidSessionId(SessionNotFound):
    """A session id that is not an id (a path, empty, too long, odd characters): nothing was read
    or written for it. A SessionNotFound, so that every door that reports an unknown id reports it."""


def check_session_id(value: object, what: str = "") -> str:
    """`value` if it is a session id (a UUID or a safe name), else InvalidSessionId. The one check
    every door (the CLI's flags, the SDK protocol, ACP, the viewer, batch, the store) goes through."""
    if isinstance(value, str) and SAFE_ID.fullmatch(value) and ".." not in value:
        return value
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    raise InvalidSessionId(f"{f'{what} ' if what else ''}{shown} is not a session id: use a UUID or a name of letters, digits, "
                           "'.', '_' and '-' (at most 128, not starting with '.'); a path is never a session id")


def glob_escape(s: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", s)


def _line(kind: str, session_id: str, cwd: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": new_uuid(), "parentUuid": parent, "sessionId": session_id,
            "timestamp": _now(), "cwd": cwd, **extra}
