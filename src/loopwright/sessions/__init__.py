"""Room: sessions (beside execute). Owns transcripts, the session store, resume and fork; may import
data types, bases, invariant and settings, never options or above.

Sessions: every run's transcript as an append-only JSONL file (seed §8; Claude Code's layout);
`store` says where they live and what a store is, `jsonl` is the files, `recorder` writes a
run, `repair` reads one back, `summaries` sums one up, `resume` decides how a run starts,
`checkpoints` snapshots the files a run's tools change and `rewind` restores them.
The CLI (`loopwright sessions`) is `cli/sessions.py`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The names, each from its module, imported on first access (PEP 562): a new run's transcript needs
# the store, the writer and the recorder, not the readers (repair, summaries) or resume's listing.
_EXPORTS: dict[str, str] = {
    "TranscriptWriteError": "..messages",  # the CLI catches it without this package
    **dict.fromkeys(["JsonlSessionStore", "JsonlWriter"], ".jsonl"),
    "SessionRecorder": ".recorder",
    **dict.fromkeys(["history_from_lines", "load_transcript", "read_lines", "repair_history"], ".repair"),
    **dict.fromkeys(["SessionOptions", "SessionStart", "get_session_messages", "list_sessions", "start_session",
                     "store_for"], ".resume"),
    **dict.fromkeys(["INTERRUPTED_RESULT", "SAFE_ID", "FsyncPolicy", "InvalidSessionId", "LoadedSession",
                     "SessionBusy", "SessionInfo", "SessionNotFound", "SessionStore", "SessionWriter",
                     "check_session_id", "cwd_slug", "glob_escape",
                     "loopwright_home", "new_session_id", "sessions_root"], ".store"),
    "session_info": ".summaries",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from ..messages import TranscriptWriteError as TranscriptWriteError
    from .jsonl import JsonlSessionStore as JsonlSessionStore
    from .jsonl import JsonlWriter as JsonlWriter
    from .recorder import SessionRecorder as SessionRecorder
    from .repair import history_from_lines as history_from_lines
    from .repair import load_transcript as load_transcript
    from .repair import read_lines as read_lines
    from .repair import repair_history as repair_history
    from .resume import SessionOptions as SessionOptions
    from .resume import SessionStart as SessionStart
    from .resume import get_session_messages as get_session_messages
    from .resume import list_sessions as list_sessions
    from .resume import start_session as start_session
    from .resume import store_for as store_for
    from .store import INTERRUPTED_RESULT as INTERRUPTED_RESULT
    from .store import SAFE_ID as SAFE_ID
    from .store import FsyncPolicy as FsyncPolicy
    from .store import InvalidSessionId as InvalidSessionId
    from .store import LoadedSession as LoadedSession
    from .store import SessionBusy as SessionBusy
    from .store import SessionInfo as SessionInfo
    from .store import SessionNotFound as SessionNotFound
    from .store import SessionStore as SessionStore
    from .store import SessionWriter as SessionWriter
    from .store import check_session_id as check_session_id
    from .store import cwd_slug as cwd_slug
    from .store import glob_escape as glob_escape
    from .store import loopwright_home as loopwright_home
    from .store import new_session_id as new_session_id
    from .store import sessions_root as sessions_root
    from .summaries import session_info as session_info


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next access is a plain attribute lookup
    return value


def __dir__() -> list[str]:
    return __all__
