"""Room: built-in tools (on tools.base). Owns Edit's and MultiEdit's implementation (tools.builtin
defines them); may import data types and tools.*.

Edit {file_path, old_string, new_string, replace_all?} and MultiEdit {file_path, edits[]}.

Exact string replacement. The file is matched with its line endings normalized to LF
(so a model's LF `old_string` matches a CRLF file), and the replacement is spliced into the
file's own text: every byte outside the replaced spans stays as it was (CRLF, mixed line
endings, a BOM, latin-1, UTF-16). New lines take the line ending of the line they land in.
Text the file's encoding cannot hold is refused, never re-encoded. The file is replaced
atomically (write.atomic_write)."""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any

from .base import ToolContext, ToolError, ToolOutput
from .diffs import edit_details, multi_edit_details
from .paths import (
    TextFile,
    after_change,
    before_change,
    check_fresh,
    load_text,
    record_read,
    resolve,
)
from .read import format_lines
from .write import atomic_write


def _preview(s: str) -> str:
    return s if len(s) <= 300 else s[:300] + "..."


def apply_edit(text: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """Replace in `text` (LF line endings). Raises ToolError with Claude Code's messages."""
    old = old.replace("\r\n", "\n")
    new = new.replace("\r\n", "\n")
    if old == new:
        raise ToolError("No changes to make: old_string and new_string are exactly the same.")
    if old == "":
        raise ToolError("old_string is empty; an empty old_string only creates a new file "
                        "(or fills an empty one).")
    n = text.count(old)
    if n == 0:
        raise ToolError(f"String to replace not found in file.\nString: {_preview(old)}")
    if n > 1 and not replace_all:
        raise ToolError(
            f"Found {n} matches of the string to replace, but replace_all is false. To replace all "
            "occurrences, set replace_all to true. To replace only one occurrence, please provide "
            f"more context to uniquely identify the instance.\nString: {_preview(old)}"
        )
    return text.replace(old, new) if replace_all else text.replace(old, new, 1), n if replace_all else 1


def splice(raw: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """apply_edit on a file's own text (any line endings): the matches are found in the
    LF-normalized text, and replaced in `raw` itself, so nothing outside them changes."""
    norm = raw.replace("\r\n", "\n")
    _, n = apply_edit(norm, old, new, replace_all)  # the checks and their messages
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    crs: list[int] = []  # the normalized positions of the "\n"s that were "\r\n" in raw
    at = raw.find("\r\n")
    while at >= 0:
        crs.append(at - len(crs))
        at = raw.find("\r\n", at + 2)

    def raw_at(i: int) -> int:  # a normalized index -> raw (a CRLF's "\r" goes with its "\n")
        return i + bisect.bisect_left(crs, i)

    crlf_only = bool(crs) and len(crs) == norm.count("\n")
    out: list[str] = []
    last = 0
    start = norm.find(old)
    for _ in range(n):
        rs, re_ = raw_at(start), raw_at(start + len(old))
        eol = "\n"
        if crlf_only:
            eol = "\r\n"
        elif crs:  # mixed: the ending of the line the replacement starts on
            nl = raw.find("\n", rs)
            eol = "\r\n" if nl > 0 and raw[nl - 1] == "\r" else "\n"
        out += [raw[last:rs], new.replace("\n", eol)]
        last = re_
        start = norm.find(old, start + len(old))
    out.append(raw[last:])
    return "".join(out), n


def _snippet(text: str, new: str) -> str:
    """A few numbered lines around the first place `new` now appears."""
    at = text.find(new) if new else -1
    if at < 0:
        return ""
    first = text.count("\n", 0, at)
    last = first + new.count("\n")
    lines = text.split("\n")
    lo, hi = max(first - 3, 0), min(last + 4, len(lines))
    if hi - lo > 40:
        return ""
    return format_lines(lines[lo:hi], lo + 1)


def _load_for_edit(path: Path, ctx: ToolContext, creating: bool) -> TextFile | None:
    """The file to edit, or None when the call creates it."""
    if path.is_dir():
        raise ToolError(f"EISDIR: {path} is a directory.")
    if path.exists() and not path.is_file():  # reading a FIFO or a device blocks or never ends
        raise ToolError(f"{path} is not a regular file.")
    if not path.exists():
        if creating:
            return None
        raise ToolError(f"File does not exist: {path}. Current working directory: {ctx.cwd}. "
                        "To create a new file, use an empty old_string (or the Write tool).")
    tf = load_text(path)
    if creating:
        if tf.text.strip():
            raise ToolError(f"Cannot create new file: {path} already exists and is not empty. "
                            "Give the text to replace in old_string.")
        return tf  # an empty file has nothing to lose: no Read needed
    check_fresh(ctx, path)
    return tf


def _save(path: Path, ctx: ToolContext, data: bytes) -> None:
    before_change(ctx, path)
    atomic_write(path, data)
    after_change(ctx, path)
    record_read(ctx, path)


def edit_file(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    path = resolve(inp["file_path"], ctx)
    old, new = inp["old_string"], inp["new_string"]
    replace_all = bool(inp.get("replace_all"))
    creating = old == ""
    tf = _load_for_edit(path, ctx, creating)
    if creating:
        if new == "":
            raise ToolError("No changes to make: old_string and new_string are both empty.")
        content = new.replace("\r\n", "\n")
        _save(path, ctx, tf.encode(content) if tf is not None else content.encode("utf-8"))
        return ToolOutput(f"File created successfully at: {path}",
                          details=edit_details(inp["file_path"], old, new, "", content, replace_all))
    assert tf is not None
    raw, n = splice(tf.raw, old, new, replace_all)
    _save(path, ctx, tf.encode_raw(raw))
    msg = f"The file {path} has been updated. Made {n} replacement{'s' if n != 1 else ''}."
    updated = raw.replace("\r\n", "\n")
    snip = _snippet(updated, new.replace("\r\n", "\n"))
    details = edit_details(inp["file_path"], old, new, tf.text, updated, replace_all)
    return ToolOutput(f"{msg} Here is the edited part (cat -n):\n{snip}" if snip else msg, details=details)


def multi_edit_file(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    path = resolve(inp["file_path"], ctx)
    edits: list[dict[str, Any]] = inp["edits"]
    creating = edits[0]["old_string"] == ""
    tf = _load_for_edit(path, ctx, creating)
    raw = tf.raw if tf is not None else ""
    total = 0
    earlier_new: list[str] = []
    for i, e in enumerate(edits):
        where = f"edits[{i}] (edit {i + 1} of {len(edits)})"
        old, new = e["old_string"], e["new_string"]
        try:
            if i == 0 and creating:
                if new == "":
                    raise ToolError("No changes to make: old_string and new_string are both empty.")
                raw = new.replace("\r\n", "\n")
                if tf is not None and tf.crlf:
                    raw = raw.replace("\n", "\r\n")
                total += 1
            else:
                if any(old.replace("\r\n", "\n") in p for p in earlier_new if old):
                    raise ToolError("old_string is a substring of the new_string of an earlier edit; "
                                    "edits apply in sequence, so fold them into one edit.")
                raw, n = splice(raw, old, new, bool(e.get("replace_all")))
                total += n
        except ToolError as err:
            raise ToolError(f"{where} failed, no changes were written: {err}") from None
        earlier_new.append(new.replace("\r\n", "\n"))
    _save(path, ctx, tf.encode_raw(raw) if tf is not None else raw.encode("utf-8"))
    details = multi_edit_details(inp["file_path"], edits, tf.text if tf is not None else "", raw.replace("\r\n", "\n"))
    if tf is None:
        return ToolOutput(f"File created successfully at: {path} ({len(edits)} edits applied).", details=details)
    return ToolOutput(f"Applied {len(edits)} edits to {path} ({total} replacements in total).", details=details)
