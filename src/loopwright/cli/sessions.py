"""Room: cli. Owns `loopwright sessions list|show`: saved sessions printed for a terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# TranscriptWriteError lives in messages: the CLI catches it without loading this module
from ..sessions import (
    JsonlSessionStore,
    SessionNotFound,
    list_sessions,
    load_transcript,
    session_info,
)
from ..sessions.repair import _content
from ..sessions.summaries import _number, _text
from .args import Parser


def _short(s: str, n: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def sessions_main(argv: Sequence[str]) -> int:
    p = Parser(prog="loopwright sessions", description="List and show saved sessions.")
    sub = p.add_subparsers(dest="cmd")
    ls = sub.add_parser("list", help="sessions of this directory, newest first")
    ls.add_argument("--all", action="store_true", help="every project directory")
    ls.add_argument("--cwd")
    ls.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="one session's messages")
    show.add_argument("session_id")
    show.add_argument("--json", action="store_true", help="print the repaired history as JSON")
    args = p.parse_args(list(argv))
    if args.cmd in (None, "list"):
        return _list(getattr(args, "cwd", None), getattr(args, "all", False), getattr(args, "json", False))
    return _show(args.session_id, args.json)


def _list(cwd: str | None, all_projects: bool, as_json: bool) -> int:
    infos = list_sessions(cwd, all_projects=all_projects)
    if as_json:
        print(json.dumps([i.to_json() for i in infos], indent=2))
        return 0
    if not infos:
        print("no sessions in this directory (see `loopwright sessions list --all`)")
        return 0
    print(f"{'session':36}  {'modified':20}  {'turns':>5}  {'calls':>5}  {'peak n_k':>9}  {'tokens':>9}  "
          f"{'cost':>8}  last prompt")
    for i in infos:
        print(f"{i.session_id:36}  {i.modified:20}  {i.turns:5}  {i.calls:5}  {i.peak_input_tokens:9}  "
              f"{i.input_tokens + i.output_tokens:9}  ${i.cost_usd:7.4f}  {_short(i.last_prompt, 50)}")
    return 0


def _show(session_id: str, as_json: bool) -> int:
    store = JsonlSessionStore()
    try:
        path = store.find(session_id, Path.cwd())
    except SessionNotFound as e:  # an id that is a path
        print(f"loopwright: {e}", file=sys.stderr)
        return 2
    if path is None:
        print(f"loopwright: no session {session_id!r}", file=sys.stderr)
        return 1
    loaded = load_transcript(path, whole=True)  # (every line shown, not only those since a compaction)
    if as_json:
        print(json.dumps(loaded.history, indent=2, ensure_ascii=False))
        return 0
    info = session_info(path)
    print(f"session {info.session_id}\n  file {path}\n  cwd {info.cwd}\n  prompts {info.prompts}, turns {info.turns}, "
          f"calls {info.calls}, tokens {info.input_tokens} in / {info.output_tokens} out, cost ${info.cost_usd:.4f}")
    for note in loaded.repaired:
        print(f"  repaired: {note}")
    for ln in loaded.lines:
        _show_line(ln)
    return 0


def _show_line(ln: dict[str, Any]) -> None:
    kind = ln.get("type")
    msg = ln.get("message")
    uid = _text(ln.get("uuid"))[:8]
    if kind == "user":
        for b in _content(msg):
            if b.get("type") == "text":
                tag = "prompt" if ln.get("isPrompt") else "user"
                print(f"[{uid}] {tag}: {_short(_text(b.get('text')), 100)}")
            elif b.get("type") == "tool_result":
                mark = "✗" if b.get("is_error") else "✓"
                c = b.get("content")
                print(f"    {mark} {_short(c if isinstance(c, str) else json.dumps(c), 100)}")
    elif kind == "assistant":
        for b in _content(msg):
            if b.get("type") == "text" and _text(b.get("text")).strip():
                print(f"  assistant: {_short(b['text'], 100)}")
            elif b.get("type") == "tool_use":
                print(f"  ⏺ {b.get('name')}({_short(json.dumps(b.get('input')), 80)})")
    elif kind == "result":
        r = ln.get("result")
        r = r if isinstance(r, dict) else {}
        print(f"● {r.get('subtype')}: turns={r.get('num_turns')} cost=${_number(r.get('total_cost_usd')):.4f}")
    elif kind == "rewind":
        print(f"↶ rewound to {str(ln.get('toUuid'))[:8]}")
