"""Room: mentions (beside execute; above tools and the gate). Owns `@file` mentions in a prompt;
may import data types, the gate's Decision types and tools.base.

`@src/app.py` (or `@"a path/with spaces.md"`) in a prompt includes that file in the prompt's
message, as Read would show it (text, an image, a PDF's pages, a notebook's cells). Each file
goes through the run's own gate as a Read call (the same rules, modes, working directories and
workspace trust, and the can_use_tool question when the gate would ask), and through the Read
tool's own handler (its limits; the file counts as read, so Edit may change it next). A mention
the gate refuses is not included: the prompt says so and the refusal is listed in the result's
permission_denials. Words after `@` that name no existing file (an e-mail address, @someone)
are left alone. Only the CLI's prompts are expanded (AgentOptions.file_mentions)."""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .gate import Decision, Deny
from .tools.base import Tool, ToolContext

if TYPE_CHECKING:
    from .event_types import PermissionDenial

MAX_MENTIONS = 20
_MENTION = r'(?:^|(?<=[\s(\[{,;]))@(?:"([^"\n]+)"|([^\s"]+))'  # (compiled at first use, by re's cache)
_TRAILING = ".,;:!?)]}'"

Decide = Callable[[str, dict[str, Any], bool], Awaitable[Decision]]


def find_mentions(prompt: str, cwd: Path) -> list[tuple[str, Path]]:
    """(the mention as written, the file it names) for each `@path` naming an existing regular
    file, in order, each file once. Trailing punctuation (`see @a.py.`) is not part of the path."""
    out: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for m in re.finditer(_MENTION, prompt):
        raw = m.group(1) or m.group(2)
        candidates = [raw] if m.group(1) else [raw, raw.rstrip(_TRAILING)]
        for c in candidates:
            if not c:
                continue
            p = Path(os.path.expanduser(c))
            p = p if p.is_absolute() else cwd / p
            try:
                if not p.is_file():
                    continue
                real = p.resolve()
            except (OSError, ValueError):  # a NUL, a name too long: not a file mention
                continue
            if real not in seen:
                seen.add(real)
                out.append((f'@"{c}"' if m.group(1) else f"@{c}", real))
            break
        if len(out) >= MAX_MENTIONS:
            break
    return out


async def mention_blocks(prompt: str, cwd: Path, decide: Decide, read: Tool, ctx: ToolContext
                         ) -> tuple[list[dict[str, Any]], list[PermissionDenial]]:
    """The wire blocks to append to the prompt's message, and the refused mentions (as
    permission_denials entries)."""
    blocks: list[dict[str, Any]] = []
    denied: list[PermissionDenial] = []
    for i, (written, path) in enumerate(find_mentions(prompt, cwd)):
        x = {"file_path": str(path)}
        try:
            decision = await decide("Read", x, True)
        except Exception as e:  # fail closed, as the executor does
            decision = Deny(f"Permission check failed: {type(e).__name__}: {e}")
        if isinstance(decision, Deny):
            denied.append({"tool_name": "Read", "tool_use_id": f"mention-{i}", "tool_input": x})
            blocks.append({"type": "text", "text": f"({written} was not included: {decision.message})"})
            continue
        # as the Read tool's call: held to the path's judgment (a link swapped in while the user
        # answered is refused), which it takes (kept, it held a later Read of the path to it)
        out = await read.call(decision.updated_input or x, ctx.for_call(f"mention-{i}", 1, "Read"))
        if out.is_error:
            blocks.append({"type": "text", "text": f"({written} could not be read: {out.content})"})
            continue
        head = f'<file path="{path}" mentioned-as="{written}">'
        if isinstance(out.content, str):
            blocks.append({"type": "text", "text": f"{head}\n{out.content}\n</file>"})
        else:
            blocks += [{"type": "text", "text": head}, *(b.to_wire() for b in out.content),
                       {"type": "text", "text": "</file>"}]
    return blocks, denied
