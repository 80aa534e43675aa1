"""Room: settings. Owns where the settings files are, reading one, and the error that says a file
cannot be used; may import home. (settings.py merges them; managed.py reads the managed ones.)"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .home import loopwright_home

SETTING_SOURCES = ("user", "project", "local")


class SettingsError(ValueError):
    """A settings file that cannot be used; the message names the file."""


def read_json_file(path: Path) -> Any:
    """The JSON of a settings file ({} when it is empty); SettingsError names a file that cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SettingsError(f"cannot read settings file {path}: {e.strerror or e}") from None
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SettingsError(f"invalid JSON in settings file {path}: line {e.lineno} column {e.colno}: {e.msg}") from None
    except (ValueError, RecursionError) as e:  # (a 5000-digit number; nesting past the parser's depth: a
        # repository's file ended the start with a bare "unexpected error: RecursionError", naming no file)
        raise SettingsError(f"invalid JSON in settings file {path}: {type(e).__name__}: {str(e)[:200]}") from None


def settings_files(cwd: Path, sources: Sequence[str], claude: bool = False) -> list[tuple[Path, Path]]:
    """(file, project base) pairs in reading order; missing files are left out later."""
    home = Path.home()
    out: list[tuple[Path, Path]] = []
    for s in sources:
        if s not in SETTING_SOURCES:
            raise SettingsError(f"unknown setting source {s!r}; use any of {', '.join(SETTING_SOURCES)}")
    if "user" in sources:
        if claude:
            out.append((home / ".claude" / "settings.json", home))
        lw = loopwright_home()
        out.append((lw / "settings.json", lw.parent))
    if "project" in sources:
        if claude:
            out.append((cwd / ".claude" / "settings.json", cwd))
        out.append((cwd / ".loopwright" / "settings.json", cwd))
    if "local" in sources:
        if claude:
            out.append((cwd / ".claude" / "settings.local.json", cwd))
        out.append((cwd / ".loopwright" / "settings.local.json", cwd))
    return out
