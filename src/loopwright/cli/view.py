"""Room: cli. Owns `loopwright view` and `loopwright stats`; may import view.*, sessions.

`loopwright view [SESSION] [-o FILE] [--open]` and `loopwright stats [SESSION] [--json]`.

Owns: finding the transcript a SESSION argument names (an id or prefix, a loopwright or Claude
Code transcript path, or nothing: the latest session of this directory), writing the page, and
the terminal table. Imports view.model / view.html, sessions (to find files), rich (stats only).
Exit codes: 0 when something could be shown (warnings name the lines that could not be read),
1 when nothing could, 2 for a usage error.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..home import write_private
from ..view.html import render
from ..view.model import NotATranscript, SessionView, load_view
from .args import Parser

SPARK = "▁▂▃▄▅▆▇█"


class SessionArgError(ValueError):
    """The SESSION argument names nothing readable."""


def find_transcript(arg: str | None, cwd: Path | None = None) -> Path:
    """The transcript file SESSION names: a path when written as one (with a '/', or ending in
    .jsonl), else a loopwright session id (or a unique prefix, this directory's sessions first,
    only inside the sessions directory), else none given: the latest of this directory."""
    from ..sessions import InvalidSessionId, JsonlSessionStore, check_session_id

    here = (cwd or Path.cwd()).resolve()
    store = JsonlSessionStore()
    if arg is None:
        latest = store.latest(here)
        if latest is None:
            raise SessionArgError(f"no saved sessions for {here} (give a session id or a transcript path)")
        found = store.find(latest, here)
        assert found is not None
        return found
    if os.sep in arg or "/" in arg or arg.endswith(".jsonl") or arg.startswith("~"):
        # a path, given as one: the user names a transcript file to show (read only, never resumed)
        p = Path(arg).expanduser()
        if p.is_file():
            return p
        raise SessionArgError(f"{arg}: {'not a file' if p.exists() else 'no such file'}")
    try:  # else an id (or a prefix), looked up only inside the sessions directory
        check_session_id(arg)
    except InvalidSessionId as e:
        raise SessionArgError(str(e)) from None
    found = store.find(arg, here)
    if found is None:
        raise SessionArgError(f"no session {arg!r} (not a file, nor a session id or unique prefix in {store.root})")
    return found


def _load(arg: str | None, prog: str) -> SessionView | None:
    """The view of SESSION, its unreadable lines named on stderr; None (said why) if nothing."""
    try:
        path = find_transcript(arg)
        view = load_view(path)
    except (SessionArgError, NotATranscript, OSError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return None
    for w in view.warnings:
        print(f"loopwright: {path}: {w}", file=sys.stderr)
    return view


def safe_id(session_id: str) -> str:
    """A transcript's session id as a file name part: it comes from the file, so `../` or a slash
    never reaches the path (letters, digits, `-`, `_` and `.` only, no leading dot, at most 80)."""
    return re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9._-]", "_", session_id)).lstrip(".")[:80] or "session"


def view_main(argv: Sequence[str]) -> int:
    p = Parser(prog="loopwright view",
                                description="Write a session as one self-contained HTML page (the n_k chart, "
                                            "the calls, the timeline) and print its path.")
    p.add_argument("session", nargs="?", help="session id or prefix, or a transcript path (loopwright's or "
                   "Claude Code's ~/.claude/projects/<dir>/<id>.jsonl); default: this directory's latest")
    p.add_argument("-o", "--output", help="the HTML file to write (default: <tmp>/loopwright-<id>.html)")
    p.add_argument("--open", action="store_true", help="open the page in the browser")
    args = p.parse_args(list(argv))
    view = _load(args.session, "loopwright view")
    if view is None:
        return 1
    out = Path(args.output) if args.output else Path(tempfile.gettempdir()) / f"loopwright-{safe_id(view.session_id)}.html"
    try:
        write_private(out, render(view))  # a session's page, in a shared temp dir too: 0600
    except OSError as e:
        print(f"loopwright view: cannot write {out}: {e}", file=sys.stderr)
        return 1
    print(out.resolve())
    if args.open:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return 0


def sparkline(values: list[int]) -> str:
    top = max(values, default=0)
    if top <= 0:
        return ""
    return "".join(SPARK[min(len(SPARK) - 1, v * len(SPARK) // (top + 1))] for v in values)


def stats_json(view: SessionView) -> dict[str, object]:
    return {
        "session_id": view.session_id, "path": str(view.path), "source": view.source, "models": view.models,
        "subtype": view.subtype, "num_turns": view.tool_use_turns, "model_calls": len(view.calls),
        "total_cost_usd": view.cost, "duration_ms": view.duration_ms, "cache_hit_rate": view.cache_hit_rate,
        "context_window": view.window, "peak_input_tokens": view.peak_n,
        "forecast_calls_left": view.forecast_calls_left(), "warnings": view.warnings,
        "calls": [{"k": c.k, "n_k": c.n, "growth": view.growth(i), "input_tokens": c.input_tokens,
                   "cache_read_input_tokens": c.cache_read, "cache_creation_input_tokens": c.cache_write,
                   "output_tokens": c.output_tokens, "cost_usd": c.cost_usd, "latency_ms": c.latency_ms,
                   "stop_reason": c.stop_reason, "tools": c.tools, "model": c.model,
                   "after_compaction": c.after_compaction} for i, c in enumerate(view.calls)],
    }


def stats_main(argv: Sequence[str]) -> int:
    p = Parser(prog="loopwright stats", description="A session's calls and tokens in the terminal.")
    p.add_argument("session", nargs="?", help="session id or prefix, or a transcript path; default: the latest")
    p.add_argument("--json", action="store_true", help="the figures as JSON, for scripts")
    args = p.parse_args(list(argv))
    view = _load(args.session, "loopwright stats")
    if view is None:
        return 1
    if args.json:
        print(json.dumps(stats_json(view), indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(100, min(160, _term_width())))
    hit = view.cache_hit_rate
    console.print(f"[bold]session {view.session_id}[/] ({view.source}) {view.path}")
    console.print(f"model {', '.join(view.models) or '—'} · {view.subtype or '—'} · T={view.tool_use_turns} · "
                  f"{len(view.calls)} calls · ${view.cost:.4f} · cache hit "
                  f"{'—' if hit is None else f'{hit:.0%}'} · peak n_k {view.peak_n:,}"
                  + (f" / W {view.window:,} ({view.peak_n / view.window:.1%})" if view.window else ""))
    left = view.forecast_calls_left()
    if left is not None:
        console.print(f"forecast: {left:,} more calls before W at the observed growth")
    console.print("n_k " + sparkline([c.n for c in view.calls]))
    t = Table(box=None, header_style="bold")
    for col in ("#", "n_k", "growth", "output", "cache read", "cache write", "cost", "latency", "stop", "tools"):
        t.add_column(col, justify="left" if col in ("stop", "tools") else "right")
    for i, c in enumerate(view.calls):
        g = view.growth(i)
        t.add_row(str(c.k), f"{c.n:,}", "compacted" if c.after_compaction else ("" if g is None else f"{g:+,}"),
                  f"{c.output_tokens:,}", f"{c.cache_read:,}", f"{c.cache_write:,}",
                  "" if c.cost_usd is None else f"${c.cost_usd:.4f}",
                  "" if c.latency_ms is None else f"{c.latency_ms:,.0f} ms", c.stop_reason or "", ", ".join(c.tools))
    console.print(t)
    return 0


def _term_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120
