"""Room: view. Owns the view package's exports; may import view.*.

See the loop: any session (loopwright's or Claude Code's) as one HTML page with the seed's
n_k chart (§5), and `loopwright stats` in the terminal.

Owns: reading transcripts for display (model.py), the page (html.py) and the two subcommands
(cli.py). A top room: imports sessions, context and usage; nothing below imports it.
"""

from __future__ import annotations

from .html import render
from .model import Call, Event, NotATranscript, SessionView, load_view

__all__ = ["Call", "Event", "NotATranscript", "SessionView", "load_view", "render"]
