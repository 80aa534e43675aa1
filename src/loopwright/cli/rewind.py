"""Room: cli. Owns `loopwright rewind`; may import rewind, sessions and below.

`loopwright rewind SESSION [--to MESSAGE_UUID] [--code-only | --conversation-only] [--fork]
[--list] [--force]`: the command line over rewind.rewind (files changed by Write/Edit, the
conversation, or both, back to before a prompt).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..sessions import SessionNotFound
from ..sessions.rewind import (
    NOT_TRACKED,
    confirm_conflicts,
    rewind,
    rewind_conflicts,
    rewind_points,
)
from .args import Parser


def rewind_main(argv: Sequence[str]) -> int:
    p = Parser(prog="loopwright rewind",
                                description="Restore files changed by Write/Edit and/or the conversation "
                                            "to before a prompt. " + NOT_TRACKED)
    p.add_argument("session_id")
    p.add_argument("--to", metavar="MESSAGE_UUID", help="the prompt to rewind to (default: the latest)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--code-only", action="store_true", help="restore files, keep the conversation")
    g.add_argument("--conversation-only", action="store_true", help="cut the conversation, keep the files")
    p.add_argument("--fork", action="store_true", help="write the cut conversation to a new session")
    p.add_argument("--list", action="store_true", help="list the prompts one can rewind to")
    p.add_argument("--force", action="store_true",
                   help="restore files even when they changed after the agent's edit (no question)")
    args = p.parse_args(list(argv))
    try:
        if args.list:
            for pt in rewind_points(args.session_id, cwd=os.getcwd()):
                files = f"  files: {', '.join(pt.files)}" if pt.files else ""
                print(f"{pt.uuid}  {pt.timestamp}  {pt.prompt[:60]!r}{files}")
            return 0
        points = [] if args.to or args.conversation_only or args.force else rewind_points(args.session_id, cwd=os.getcwd())
        to = args.to or (points[-1].uuid if points else None)
        if to is not None and not args.conversation_only and not args.force:
            conflicts = rewind_conflicts(args.session_id, to, cwd=os.getcwd())
            if conflicts and not confirm_conflicts(conflicts, print, input if sys.stdin.isatty() else None):
                print("loopwright rewind: not rewound (--force rewinds anyway)", file=sys.stderr)
                return 1
        report = rewind(args.session_id, args.to, code=not args.conversation_only,
                        conversation=not args.code_only, fork=args.fork, cwd=os.getcwd())
    except (SessionNotFound, OSError) as e:
        print(f"loopwright rewind: {e}", file=sys.stderr)
        return 1
    print(report.text())
    return 0
