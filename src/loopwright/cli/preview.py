"""Room: cli. Owns what a permission question shows about a call (Preview); may import the rooms
below cli and cli.render.

Approve what you see: an Edit or MultiEdit is shown as the full unified diff it would make
(numbered lines, colored), a Write as the diff against the existing file or the whole new
content, a Bash call as the whole command, anything else as its whole input. Nothing is cut.
Every piece of text from the model or a file goes through `visible()` (control characters
and bidi overrides would otherwise rewrite what the question shows).

Lines are lists of (style, text) fragments in prompt_toolkit's format, built without
importing it.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .render import rel_path, visible

Fragment = tuple[str, str]
Line = list[Fragment]

ADDED, REMOVED, CONTEXT, NUMBER, HUNK, NOTE = "ansigreen", "ansired", "", "ansibrightblack", "ansicyan", "italic"


@dataclass
class Preview:
    """What a permission dialog shows of a call: its title, a one-line summary and the lines of a diff or a file."""

    title: str  # what is asked about: `Edit src/a.py`
    summary: str = ""  # `+3 -1`, `new file, 12 lines`
    lines: list[Line] = field(default_factory=list)


def shown(text: str) -> str:
    """Model or file text as it may be drawn: control characters visible, tabs as spaces."""
    return visible(text).expandtabs(4)


def _numbered(no: int | None, sign: str, text: str, style: str) -> Line:
    num = f"{no:>5} " if no is not None else "      "
    return [(NUMBER, num), (style, f"{sign} {shown(text)}")]


def diff_lines(before: str, after: str) -> tuple[list[Line], int, int]:
    """The unified diff of two texts (3 lines of context), each line numbered (old numbers for
    removed lines, new numbers for the rest); with the counts of added and removed lines."""
    a, b = _split(before), _split(after)
    out: list[Line] = []
    added = removed = 0
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        first, last = group[0], group[-1]
        out.append([(HUNK, f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@")])
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [_numbered(j1 + k + 1, " ", a[i1 + k], CONTEXT) for k in range(i2 - i1)]
                continue
            if tag in ("replace", "delete"):
                out += [_numbered(i1 + k + 1, "-", a[i1 + k], REMOVED) for k in range(i2 - i1)]
                removed += i2 - i1
            if tag in ("replace", "insert"):
                out += [_numbered(j1 + k + 1, "+", b[j1 + k], ADDED) for k in range(j2 - j1)]
                added += j2 - j1
    if before.endswith("\n") != after.endswith("\n") and before and after:
        out.append([(NOTE, "the file " + ("no longer ends" if before.endswith("\n") else "now ends") +
                     " with a newline")])
    return out, added, removed


def _split(text: str) -> list[str]:
    """The lines of `text`; a final newline ends the last line, it does not start a new one."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _whole(text: str, style: str = ADDED, sign: str = "+") -> list[Line]:
    return [_numbered(i, sign, ln, style) for i, ln in enumerate(_split(text) or [""], 1)]


def _read(path: str, cwd: Path | None) -> tuple[str | None, str]:
    """(the file's text with LF line endings, or None when it does not exist; a note)."""
    from ..tools.paths import load_text, looks_binary

    p = Path(path)
    if not p.is_absolute() and cwd is not None:
        p = cwd / p
    try:
        if not p.exists():
            return None, ""
        if not p.is_file():
            return "", f"{p} is not a regular file"
        data = p.read_bytes()
        if looks_binary(data):
            return "", f"replaces a binary file of {len(data)} bytes"
        return load_text(p.resolve()).text, ""  # (load_text opens a resolved path, never through a symlink)
    except OSError as e:
        return "", f"cannot read the file now: {e.strerror or e}"


def _edits(tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(tool_input.get("edits"), list):
        return [e for e in tool_input["edits"] if isinstance(e, dict)]
    return [tool_input]


def _edit_preview(name: str, tool_input: dict[str, Any], cwd: Path | None) -> Preview:
    from ..tools.base import ToolError
    from ..tools.edit import apply_edit

    path = str(tool_input.get("file_path", ""))
    title = f"{name} {shown(rel_path(path, cwd))}"
    before, note = _read(path, cwd)
    edits = _edits(tool_input)
    text = before or ""
    try:
        for i, e in enumerate(edits):
            old, new = str(e.get("old_string", "")), str(e.get("new_string", ""))
            if i == 0 and old == "" and not text.strip():  # creates the file
                text = new.replace("\r\n", "\n")
            else:
                text, _ = apply_edit(text, old, new, bool(e.get("replace_all")))
    except ToolError as err:
        # The call will fail; show exactly what it asks to replace, and why it will not apply.
        lines: list[Line] = [[(NOTE, f"this edit will fail: {shown(str(err).splitlines()[0])}")]]
        for e in edits:
            lines += _whole(str(e.get("old_string", "")), REMOVED, "-")
            lines += _whole(str(e.get("new_string", "")), ADDED, "+")
        return Preview(title, "will fail", lines)
    if before is None or (not before.strip() and not note):
        return Preview(title, f"new file, {len(_whole(text))} lines", _whole(text))
    lines, added, removed = diff_lines(before, text)
    pre = [[(NOTE, note)]] if note else []
    return Preview(title, f"+{added} -{removed}", pre + lines)


def _write_preview(tool_input: dict[str, Any], cwd: Path | None) -> Preview:
    path = str(tool_input.get("file_path", ""))
    content = str(tool_input.get("content", "")).replace("\r\n", "\n")
    title = f"Write {shown(rel_path(path, cwd))}"
    before, note = _read(path, cwd)
    if before is None:
        body = _whole(content)
        return Preview(title, f"new file, {len(body)} lines", body)
    if note:  # not text we can compare: the whole new content
        body = _whole(content)
        return Preview(title, f"overwrites: {note}; {len(body)} lines", [[(NOTE, note)], *body])
    lines, added, removed = diff_lines(before, content)
    if not lines:
        return Preview(title, "no change", [[(NOTE, "the content is the same as the file's")]])
    return Preview(title, f"overwrites the file: +{added} -{removed}", lines)


def permission_preview(name: str, tool_input: dict[str, Any], cwd: Path | None = None) -> Preview:
    """What the permission dialog shows about one call, in full."""
    if not isinstance(tool_input, dict):
        tool_input = {}
    if name in ("Edit", "MultiEdit") and isinstance(tool_input.get("file_path"), str):
        return _edit_preview(name, tool_input, cwd)
    if name == "Write" and isinstance(tool_input.get("file_path"), str):
        return _write_preview(tool_input, cwd)
    if name == "Bash" and isinstance(tool_input.get("command"), str):
        lines: list[Line] = [[("bold", f"$ {ln}" if i == 0 else f"  {ln}")]
                             for i, ln in enumerate(shown(tool_input["command"]).split("\n"))]
        extra = [f"{tool_input['description']}" if tool_input.get("description") else "",
                 "runs in the background" if tool_input.get("run_in_background") else "",
                 f"timeout {tool_input['timeout']} ms" if tool_input.get("timeout") else ""]
        lines += [[(NOTE, shown(str(x)))] for x in extra if x]
        if tool_input.get("dangerouslyDisableSandbox") is True:  # the model asks to leave the OS sandbox
            lines.append([("bold ansired", "asks to run OUTSIDE the sandbox (dangerouslyDisableSandbox)")])
            return Preview("Bash command", "outside the sandbox", lines)
        return Preview("Bash command", "", lines)
    if name == "NotebookEdit" and isinstance(tool_input.get("notebook_path"), str):
        mode, cell = tool_input.get("edit_mode") or "replace", tool_input.get("cell_id") or "(top)"
        title = f"NotebookEdit {shown(rel_path(tool_input['notebook_path'], cwd))}"
        src = [[("", shown(ln))] for ln in str(tool_input.get("new_source", "")).split("\n")]
        return Preview(title, f"{mode} cell {shown(str(cell))}", [] if mode == "delete" else src)
    if name == "WebFetch" and isinstance(tool_input.get("url"), str):  # what leaves the machine: the URL
        from urllib.parse import urlsplit

        host = urlsplit(tool_input["url"]).hostname or "?"
        return Preview("Fetch", shown(host), [[("bold", shown(tool_input["url"]))],
                                       [(NOTE, shown(f"prompt: {tool_input.get('prompt', '')}"))]])
    if name == "WebSearch" and isinstance(tool_input.get("query"), str):
        lines = [[("bold", shown(tool_input["query"]))]]
        for key in ("allowed_domains", "blocked_domains"):
            if tool_input.get(key):
                lines.append([(NOTE, shown(f"{key}: {', '.join(map(str, tool_input[key]))}"))])
        return Preview("Web search", "", lines)
    body = json.dumps(tool_input, ensure_ascii=False, indent=2)
    return Preview(shown(name), "", [[("", shown(ln))] for ln in body.split("\n")])
