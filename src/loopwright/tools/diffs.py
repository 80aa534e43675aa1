"""Room: built-in tools (on tools.base). Owns the structured outputs of the file tools (Claude Code's
`tool_use_result` shapes: Read's, Write's, Edit's) and their structured patch; may import the
standard library only.

`structured_patch(old, new)` is jsdiff's `structuredPatch` as Claude Code gives it: hunks with
three lines of context, `{oldStart, oldLines, newStart, newLines, lines}`, each line its text
after " ", "-" or "+", and jsdiff's "\\ No newline at end of file" after a last line without one.
Bounded: a file past MAX_ORIGINAL_CHARS gets no patch and no originalFile (what Claude Code
says of a previous content too large to include), so a structured output never holds more than
about twice that of a file.
"""

from __future__ import annotations

import re
from typing import Any

MAX_ORIGINAL_CHARS = 256 * 1024
CONTEXT_LINES = 3
NO_NEWLINE = "\\ No newline at end of file"
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")


def _lines(text: str) -> list[str]:
    """The lines of `text`, each with its "\\n" (the last without one when the text ends without)."""
    return _LINES.findall(text)


def fits(*texts: str | None) -> bool:
    """Are the texts small enough to be kept whole and diffed (MAX_ORIGINAL_CHARS each)?"""
    return all(t is None or len(t) <= MAX_ORIGINAL_CHARS for t in texts)


def structured_patch(old: str, new: str) -> list[dict[str, Any]]:
    """The hunks that turn `old` into `new` (none when they are equal or too large to diff)."""
    if old == new or not fits(old, new):
        return []
    from difflib import SequenceMatcher  # (a changed file's only: not on a Read's way)

    a, b = _lines(old), _lines(new)
    hunks: list[dict[str, Any]] = []
    for group in SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(CONTEXT_LINES):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out: list[str] = []
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                _add(out, " ", a, x1, x2)
            else:
                _add(out, "-", a, x1, x2)
                _add(out, "+", b, y1, y2)
        hunks.append({"oldStart": i1 + 1, "oldLines": i2 - i1, "newStart": j1 + 1, "newLines": j2 - j1,
                      "lines": out})
    return hunks


def _add(out: list[str], sign: str, lines: list[str], lo: int, hi: int) -> None:
    for k in range(lo, hi):
        line = lines[k]
        out.append(sign + line.removesuffix("\n"))
        if k == len(lines) - 1 and not line.endswith("\n"):
            out.append(NO_NEWLINE)


def write_details(path: str, content: str, original: str | None) -> dict[str, Any]:
    """Write's structured output (Claude Code's FileWriteOutput): a create, or an update of `original`."""
    if original is None:
        return {"type": "create", "filePath": path, "content": content, "structuredPatch": [],
                "originalFile": None, "userModified": False}
    kept = original if fits(original, content) else None
    return {"type": "update", "filePath": path, "content": content,
            "structuredPatch": structured_patch(original, content) if kept is not None else [],
            "originalFile": kept, "userModified": False}


def edit_details(path: str, old_string: str, new_string: str, original: str, updated: str,
                 replace_all: bool) -> dict[str, Any]:
    """Edit's structured output (Claude Code's FileEditOutput)."""
    kept = original if fits(original, updated) else None
    return {"filePath": path, "oldString": old_string, "newString": new_string, "originalFile": kept,
            "structuredPatch": structured_patch(original, updated) if kept is not None else [],
            "userModified": False, "replaceAll": replace_all}


def multi_edit_details(path: str, edits: list[dict[str, Any]], original: str, updated: str) -> dict[str, Any]:
    """MultiEdit's structured output: the Agent SDK declares no type for it (Claude Code 2.1.332 has
    no MultiEdit), so it is FileEditOutput's keys that apply to a batch (filePath, originalFile,
    structuredPatch, userModified) with the edits as given, in the input's names."""
    kept = original if fits(original, updated) else None
    return {"filePath": path, "edits": [{"old_string": e["old_string"], "new_string": e["new_string"],
                                         "replace_all": bool(e.get("replace_all"))} for e in edits],
            "originalFile": kept, "structuredPatch": structured_patch(original, updated) if kept is not None else [],
            "userModified": False}


def read_details(path: str, lines: list[str], start: int, total: int, ends_with_newline: bool) -> dict[str, Any]:
    """Read's structured output of a text window (Claude Code's FileReadOutput, type text): the
    window's text as the file has it, with Claude Code's counts (a file is its text split at
    "\\n", so one ending in a newline has an empty last line: "a\\nb\\n" is 3 lines)."""
    if not lines:  # an offset past the end: nothing shown
        return {"type": "text", "file": {"filePath": path, "content": "", "numLines": 0, "startLine": start,
                                         "totalLines": total + (1 if ends_with_newline else 0)}}
    last = start + len(lines) - 1
    content = "\n".join(lines)
    if ends_with_newline and last >= total:  # the window reaches the end: the file's last newline
        content += "\n"
    num = len(lines) + (1 if ends_with_newline and last >= total else 0)
    return {"type": "text", "file": {"filePath": path, "content": content, "numLines": num, "startLine": start,
                                     "totalLines": total + (1 if ends_with_newline else 0)}}
