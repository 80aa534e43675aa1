"""Room: bases (hooks). Owns Claude Code's CLAUDE_ENV_FILE: the file each Setup, SessionStart,
CwdChanged and FileChanged command hook may append `export NAME=value` lines to, and the script of
them the Bash tool runs ahead of each command; may import home.

The files are the session's, in `$LOOPWRIGHT_HOME/session-env/<session id>/` (0700 directory,
0600 files), named as Claude Code names them (`sessionstart-hook-0.sh`, ...), and run in Claude
Code's order: Setup's, SessionStart's, CwdChanged's, FileChanged's, each event's by hook index.
When the Bash shell changes directory, CwdChanged's and FileChanged's are emptied first (what they
set belonged to the old directory), as Claude Code does."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..home import loopwright_home, private_dir

ENV_EVENTS = {"Setup": 0, "SessionStart": 1, "CwdChanged": 2, "FileChanged": 3}
_FILE = re.compile(r"^(setup|sessionstart|cwdchanged|filechanged)-hook-(\d+)\.sh$")
_ORDER = {e.lower(): n for e, n in ENV_EVENTS.items()}
_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")  # a session id is never a path


def env_dir(session_id: str) -> Path | None:
    """The session's env-file directory (None for an id that is not a plain name)."""
    return loopwright_home() / "session-env" / session_id if _ID.match(session_id) else None


def env_file(session_id: str, event: str, index: int) -> str | None:
    """The CLAUDE_ENV_FILE of the `index`th hook of `event` in the session: made (empty, 0600)
    when missing, so what a hook appends stays private."""
    d = env_dir(session_id)
    if d is None or event not in ENV_EVENTS:
        return None
    private_dir(d, own_from=loopwright_home())
    path = d / f"{event.lower()}-hook-{index}.sh"
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    return str(path)


def clear_cwd_files(session_id: str) -> None:
    """Empty CwdChanged's and FileChanged's files (the shell moved: they were the old directory's)."""
    d = env_dir(session_id)
    for name in _names(d):
        if name.startswith(("cwdchanged-", "filechanged-")):
            assert d is not None
            with open(d / name, "w", opener=_no_follow):
                pass


def session_script(session_id: str) -> str | None:
    """The session's env files joined, in Claude Code's order, for Bash to run ahead of a command
    (None: there are none, the common case: one failed listdir)."""
    d = env_dir(session_id)
    names = _names(d)
    if not names:
        return None
    assert d is not None
    parts: list[str] = []
    for name in sorted(names, key=_rank):
        try:
            with open(d / name, encoding="utf-8", errors="replace", opener=_no_follow) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text:
            parts.append(text)
    return "\n".join(parts) or None


def _names(d: Path | None) -> list[str]:
    if d is None:
        return []
    try:
        return [n for n in os.listdir(d) if _FILE.match(n)]
    except OSError:
        return []


def _rank(name: str) -> tuple[int, int]:
    m = _FILE.match(name)
    assert m is not None
    return _ORDER[m.group(1)], int(m.group(2))


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)
