"""Test configuration: in CI, hypothesis draws the same examples on every run (a failure
there is reproducible from the log); locally it explores new ones each run."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
