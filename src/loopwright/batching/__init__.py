"""Room: batch (a front end, beside cli). Owns batches of runs; may import assemble and below."""

from __future__ import annotations

from .run import *  # noqa: F403  (the split follows)
