"""Room: cli. Owns the completion of `@path` mentions in the interactive input; may import the
rooms below cli.

Typing `@` and part of a path offers the files and directories that start with it (relative to
the working directory; a directory ends with `/`, so the next Tab goes into it). Names starting
with `.` are offered only when the typed part starts with `.`; at most MAX_ITEMS are listed."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

MAX_ITEMS = 50
_WORD = re.compile(r'(?:^|(?<=[\s(\[{,;]))@([^\s"@]*)$')


def mention_candidates(typed: str, cwd: Path) -> list[str]:
    """The paths that complete `typed` (the text after `@`), directories with a trailing `/`."""
    head, _, stem = typed.rpartition("/")
    base = Path(os.path.expanduser(head)) if head or typed.startswith("/") else Path(".")
    if typed.startswith("/") and not head:
        base = Path("/")
    where = base if base.is_absolute() else cwd / base
    try:
        entries = sorted(os.scandir(where), key=lambda e: e.name)
    except OSError:
        return []
    out: list[str] = []
    prefix = f"{head}/" if head or typed.startswith("/") else ""
    for e in entries:
        if not e.name.startswith(stem) or (e.name.startswith(".") and not stem.startswith(".")):
            continue
        try:
            is_dir = e.is_dir()
        except OSError:
            continue
        out.append(f"{prefix}{e.name}{'/' if is_dir else ''}")
        if len(out) >= MAX_ITEMS:
            break
    return out


def mention_completer(cwd: Callable[[], str]) -> Any:
    """A prompt_toolkit completer of the `@path` word before the cursor."""
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document

    class MentionCompleter(Completer):
        def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
            m = _WORD.search(document.text_before_cursor)
            if m is None:
                return
            typed = m.group(1)
            for c in mention_candidates(typed, Path(cwd())):
                yield Completion(f"@{c}", start_position=-len(typed) - 1, display=c)

    return MentionCompleter()
