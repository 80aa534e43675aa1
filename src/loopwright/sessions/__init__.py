"""Room: sessions (beside execute). Owns transcripts, the session store, resume and fork; may import
data types, bases, invariant and settings, never options or above."""

from __future__ import annotations

from .store import *  # noqa: F403  (the split follows)
from .store import _line as _line
