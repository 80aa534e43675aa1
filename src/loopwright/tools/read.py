"""Room: built-in tools (on tools.base). Owns Read's implementation (tools.builtin defines the tool);
may import data types, tools.base and tools.paths.

Read {file_path, offset?, limit?, pages?}: a file as `cat -n` text; an image, a PDF or a
notebook as tools.media makes them.

A text file is streamed (issue 44): one pass in blocks keeps the window's lines (each cut at
MAX_LINE_CHARS, a longer line never held whole) and counts the rest, so a Read costs what it
shows in memory and in what it sends (at most MAX_OUTPUT_CHARS, then a note naming the offset
to read on from), whatever the file's size. Lines after the window are counted up to
MAX_TEXT_BYTES; past that the note says the count stops there."""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any, BinaryIO

from .base import ToolContext, ToolError, ToolOutput
from .diffs import fits, read_details
from .media import (
    IMAGE_TYPES,
    MAX_OUTPUT_CHARS,
    MAX_SOURCE_IMAGE_BYTES,
    cell_id,
    load_notebook,
    pdf_text,
    render_notebook,
    sized_image_blocks,
)
from .paths import looks_binary, open_file, read_bytes, record_read, resolve

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# MAX_OUTPUT_CHARS (tools.media): what one Read sends at most; of a text file, the lines that fit,
# then a notice naming offset/limit. Less than that of lines leaves room for the notes.
MAX_BODY_CHARS = MAX_OUTPUT_CHARS - 4_000
MAX_TEXT_BYTES = 64 * 1024 * 1024  # a PDF or notebook (read whole) larger than this is refused;
# a text file is streamed whatever its size, and its lines after the window are counted up to here
READ_BLOCK = 1 << 20

def _missing(path: Path, ctx: ToolContext) -> str:
    msg = f"File does not exist: {path}. Current working directory: {ctx.cwd}."
    parent = path.parent
    if parent.is_dir():
        try:
            names = [p.name for p in parent.iterdir()][:5000]
        except OSError:
            names = []
        import difflib  # for a missing file only

        close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
        if close:
            msg += " Did you mean: " + ", ".join(str(parent / c) for c in close) + "?"
    return msg


def format_lines(lines: list[str], first: int) -> str:
    """`cat -n` style: number right-aligned in 6 columns, a tab, the line."""
    return "\n".join(f"{first + i:>6}\t{line}" for i, line in enumerate(lines))


def read_file(inp: dict[str, Any], ctx: ToolContext) -> Any:
    path = resolve(inp["file_path"], ctx)
    if not path.exists():
        raise ToolError(_missing(path, ctx))
    if path.is_dir():
        raise ToolError(f"EISDIR: {path} is a directory, not a file. Use Glob, or `ls` with Bash, to list it.")
    if not path.is_file():  # a FIFO or a device would block or never end
        raise ToolError(f"{path} is not a regular file.")
    size = path.stat().st_size
    suffix = path.suffix.lower()
    if suffix in IMAGE_TYPES:
        if size > MAX_SOURCE_IMAGE_BYTES:
            raise ToolError(f"Image {path} is {size} bytes; Read decodes images up to {MAX_SOURCE_IMAGE_BYTES} bytes.")
        raw = read_bytes(path)
        blocks, (w, h, dw, dh) = sized_image_blocks(path, raw)
        record_read(ctx, path)
        sent = blocks[0].to_wire()["source"]  # (Claude Code's details repeat the image sent: as bounded as it is)
        return ToolOutput(blocks, details={"type": "image", "file": {
            "base64": sent["data"], "type": sent["media_type"], "originalSize": len(raw),
            "dimensions": {"originalWidth": w, "originalHeight": h, "displayWidth": dw, "displayHeight": dh}}})
    if inp.get("pages") is not None and suffix != ".pdf":
        raise ToolError(f"`pages` applies to PDF files only; {path.name} is not one (use offset and limit).")
    if suffix in (".pdf", ".ipynb"):
        if size > MAX_TEXT_BYTES:
            raise ToolError(f"File {path} is {size} bytes, too large to read (limit {MAX_TEXT_BYTES}). "
                            "Use Grep to search it, or Bash with head/tail/sed to view parts.")
        raw = read_bytes(path)
        if suffix == ".pdf":
            out = pdf_text(path, raw, inp.get("pages"))
            record_read(ctx, path)
            return ToolOutput(out, details=_pdf_details(inp, raw))
        blocks = render_notebook(path, raw)
        record_read(ctx, path)
        return ToolOutput(blocks, details=_notebook_details(inp["file_path"], path, raw))
    try:
        f = os.fdopen(open_file(path), "rb")  # what resolve() named, never through a symlink planted since
    except OSError as e:
        raise ToolError(f"Cannot read {path}: {e.strerror or e}.") from None
    with f:
        head = f.read(8192)
        if looks_binary(head):
            raise ToolError(f"{path} appears to be a binary file ({size} bytes) and cannot be displayed as text.")
        if not head:
            record_read(ctx, path)
            return ToolOutput(window("", inp, path), details=read_details(inp["file_path"], [""], 1, 1, False))
        page = _stream(f, head, inp)
    record_read(ctx, path)
    return ToolOutput(page.render(inp, path), details=page.details(inp))


# The Messages API's request limit: Claude Code cannot send a larger PDF whole either
PDF_DETAILS_MAX_BYTES = 32 * 1024 * 1024


def _pdf_details(inp: dict[str, Any], raw: bytes) -> dict[str, Any] | None:
    """A whole PDF read's structured output, Claude Code's FileReadOutput of type pdf: the file as
    Claude Code sends it to the model (loopwright sends its text; a front end shows the document).
    None for a `pages` read (Claude Code's are page images, type parts, which loopwright does not
    render) or a file past PDF_DETAILS_MAX_BYTES."""
    if inp.get("pages") is not None or len(raw) > PDF_DETAILS_MAX_BYTES:
        return None
    import base64

    return {"type": "pdf", "file": {"filePath": inp["file_path"], "base64": base64.b64encode(raw).decode("ascii"),
                                    "originalSize": len(raw)}}


def _notebook_details(shown: str, path: Path, raw: bytes) -> dict[str, Any] | None:
    """A notebook Read's structured output (Claude Code's: {type: notebook, file: {filePath, cells}},
    each cell's type, source, id and a code cell's language); None past MAX_ORIGINAL_CHARS of source."""
    nb, _problem = load_notebook(path, raw)
    lang = (nb.get("metadata", {}).get("language_info") or {}).get("name", "python")
    cells = []
    for i, c in enumerate(nb.cells):
        src = c.get("source")
        cell = {"cellType": c.get("cell_type"), "source": "".join(src) if isinstance(src, list) else str(src or ""),
                "cell_id": cell_id(c, i)}
        cells.append({**cell, "language": lang} if cell["cellType"] == "code" else cell)
    if not fits("".join(c["source"] for c in cells)):
        return None
    return {"type": "notebook", "file": {"filePath": shown, "cells": cells}}


class _Page:
    """The lines of one Read, streamed from the file: the window's lines (each cut at
    MAX_LINE_CHARS), the line count (None: not counted past MAX_TEXT_BYTES) and the encoding."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.lines: list[str] = []
        self.cut = 0  # lines longer than MAX_LINE_CHARS
        self.total: int | None = 0
        self.capped = False  # the window stopped at MAX_BODY_CHARS
        self.ends_with_newline = False  # the file's last line ends with "\n"

    def render(self, inp: dict[str, Any], path: Path) -> str:
        offset = max(inp.get("offset") or 1, 1)
        total = self.total
        if total == 0:  # a BOM alone
            return window("", inp, path)
        if total is not None and offset > total:
            return (f"<system-reminder>Warning: the file {path} is shorter than the provided offset ({offset}). "
                    f"The file has {total} lines.</system-reminder>")
        return _page(self.lines, offset, total, self.cut, self.capped, self.encoding)

    def details(self, inp: dict[str, Any]) -> dict[str, Any]:
        """The structured output of the window (tools.diffs.read_details)."""
        offset = max(inp.get("offset") or 1, 1)
        if self.total == 0:  # a BOM alone: an empty file
            return read_details(inp["file_path"], [""], 1, 1, False)
        last = offset + len(self.lines) - 1
        # (not counted past MAX_TEXT_BYTES: the lines seen so far, and no end reached)
        total, ends = (self.total, self.ends_with_newline) if self.total is not None else (last + 1, False)
        return read_details(inp["file_path"], self.lines, offset, total, ends)


def _encodings(head: bytes) -> list[tuple[str, str]]:
    """(codec, errors) to try in turn: a BOM's, else strict UTF-8, then latin-1 (never fails)."""
    if head.startswith(codecs.BOM_UTF8):
        return [("utf-8-sig", "replace")]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return [("utf-16", "strict"), ("utf-8", "strict"), ("latin-1", "strict")]
    return [("utf-8", "strict"), ("latin-1", "strict")]


def _stream(f: BinaryIO, head: bytes, inp: dict[str, Any]) -> _Page:
    for codec, errors in _encodings(head):
        f.seek(0)
        try:
            return _scan(f, codec, errors, inp)
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes any bytes")


def _scan(f: BinaryIO, codec: str, errors: str, inp: dict[str, Any]) -> _Page:
    """One pass over the file in READ_BLOCK blocks: memory is a block and the window, never the
    file (a line longer than MAX_LINE_CHARS is kept to that many characters, the rest skipped)."""
    offset = max(inp.get("offset") or 1, 1)
    page = _Page("utf-8" if codec == "utf-8-sig" else codec)
    lines = _Lines(page, offset, inp.get("limit") or DEFAULT_LIMIT)
    decoder = codecs.getincrementaldecoder(codec)(errors)
    scanned = 0
    while True:
        data = f.read(READ_BLOCK)
        scanned += len(data)
        text = decoder.decode(data, final=not data)
        if text:
            lines.feed(text)
        if not data:
            break
        if not lines.collecting and scanned > MAX_TEXT_BYTES:  # the lines after this are not counted
            page.total = None
            return page
    if lines.open_line and lines.collecting and lines.n >= offset:
        lines.add(lines.cur)
    page.total = lines.n if lines.open_line else lines.n - 1
    page.ends_with_newline = not lines.open_line
    return page


class _Lines:
    """The lines of one pass, block by block: their count, and the window's into the page."""

    def __init__(self, page: _Page, offset: int, limit: int) -> None:
        self.page, self.offset, self.limit = page, offset, limit
        self.n = 1  # the number of the line being read
        self.cur: list[str] = []  # the start of line n, when it is in the window (at most ~MAX_LINE_CHARS)
        self.cur_len = 0
        self.open_line = False  # line n has characters (a last line without a newline is a line)
        self.chars = 0
        self.collecting = True  # the window is not full yet

    def feed(self, text: str) -> None:
        """A decoded block: its lines counted, the window's kept."""
        newlines = text.count("\n")
        self.open_line = not text.endswith("\n") if newlines else True
        if not self.collecting or self.n + newlines < self.offset:  # no line of this block is in the window
            self.n += newlines
            return
        pieces = text.split("\n")
        last = len(pieces) - 1
        for i in range(last):  # piece i ends line n
            if self.n >= self.offset:
                self._end_line(pieces[i])
                if not self.collecting:
                    self.n += last - i
                    return
            self.n += 1
        if self.n >= self.offset and self.cur_len <= MAX_LINE_CHARS:
            self.cur.append(pieces[last])
            self.cur_len += len(pieces[last])

    def _end_line(self, piece: str) -> None:
        if self.cur_len <= MAX_LINE_CHARS:
            self.cur.append(piece)
        self.collecting = self.add(self.cur)
        self.cur, self.cur_len = [], 0

    def add(self, parts: list[str]) -> bool:
        """Line n of the window, cut to MAX_LINE_CHARS; False: the window is done."""
        page = self.page
        line = "".join(parts).removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [... line truncated]"
            page.cut += 1
        self.chars += len(line) + 8
        if page.lines and self.chars > MAX_BODY_CHARS:
            page.capped = True
            return False
        page.lines.append(line)
        return len(page.lines) < self.limit


def _page(lines: list[str], offset: int, total: int | None, cut: int, capped: bool, encoding: str) -> str:
    """The window's lines, numbered as `cat -n`, with the notes on what was left out."""
    body = format_lines(lines, offset)
    notes = []
    last = offset + len(lines) - 1
    more = total is None or last < total
    if offset > 1 or more:
        of = f"of {total}" if total is not None else f"of more than {last} (not counted past {MAX_TEXT_BYTES >> 20} MiB)"
        why = f" (one Read sends at most {MAX_OUTPUT_CHARS:,} characters)" if capped else ""
        nxt = f" Use offset={last + 1} (and limit) to read more." if more else ""
        notes.append(f"Showing lines {offset}-{last} {of}{why}.{nxt}")
    if cut:
        notes.append(f"{cut} line(s) longer than {MAX_LINE_CHARS} characters were cut.")
    if encoding == "latin-1":
        notes.append("The file is not valid UTF-8; it was decoded as latin-1.")
    elif encoding == "utf-16":
        notes.append("The file is UTF-16 (with BOM).")
    if notes:
        body += "\n\n(" + " ".join(notes) + ")"
    return body


def window(text: str, inp: dict[str, Any], path: Path, encoding: str = "utf-8") -> str:
    """The lines of `text` a Read call asks for (offset, limit), numbered as `cat -n`, with notes
    on what was left out (also for text read elsewhere than from disk, such as an editor's buffer)."""
    if not text:
        return f"<system-reminder>Warning: the file {path} exists but its contents are empty.</system-reminder>"
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # a trailing newline ends the last line; it does not start a new one
    total = len(lines)
    offset = max(inp.get("offset") or 1, 1)
    limit = inp.get("limit") or DEFAULT_LIMIT
    if offset > total:
        return (f"<system-reminder>Warning: the file {path} is shorter than the provided offset ({offset}). "
                f"The file has {total} lines.</system-reminder>")
    out: list[str] = []
    chars = 0
    cut = capped = 0
    for line in lines[offset - 1: offset - 1 + limit]:
        line = line.removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [... line truncated]"
            cut += 1
        chars += len(line) + 8
        if out and chars > MAX_BODY_CHARS:
            capped = 1
            break
        out.append(line)
    return _page(out, offset, total, cut, bool(capped), encoding)
