"""The user's own config directory: $LOOPWRIGHT_HOME, else ~/.loopwright. Imports nothing of
loopwright's, so every room may ask where the user's files live."""

from __future__ import annotations

import os
from pathlib import Path


def loopwright_home() -> Path:
    """The user-level config directory: $LOOPWRIGHT_HOME, else ~/.loopwright."""
    env = os.environ.get("LOOPWRIGHT_HOME")
    return Path(env).expanduser() if env else Path.home() / ".loopwright"
