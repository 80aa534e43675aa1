"""Room: bases. Owns loopwright_home (the user-level config directory); imports nothing of loopwright.

One definition for settings, sessions, memory and skills (`~` expanded), so that the rooms
that need the directory need not import each other."""

from __future__ import annotations

import os
from pathlib import Path


def loopwright_home() -> Path:
    """The user-level config directory: $LOOPWRIGHT_HOME, else ~/.loopwright."""
    env = os.environ.get("LOOPWRIGHT_HOME")
    return Path(env).expanduser() if env else Path.home() / ".loopwright"
