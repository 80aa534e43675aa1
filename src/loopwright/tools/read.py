"""Room: built-in tools (on tools.base). Owns Read's implementation (tools.builtin defines the tool);
may import data types, tools.base and tools.paths.

Read {file_path, offset?, limit?, pages?}: a file as `cat -n` text; an image, a PDF or a
notebook as tools.media makes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import ToolContext, ToolError
from .media import IMAGE_TYPES, MAX_SOURCE_IMAGE_BYTES, image_blocks, pdf_text, render_notebook
from .paths import decode, looks_binary, record_read, resolve

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 256_000  # a page of output; beyond it the model is told to page with offset
MAX_TEXT_BYTES = 64 * 1024 * 1024  # bigger text files are refused: use Grep or Bash head/tail

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
        blocks = image_blocks(path, path.read_bytes())
        record_read(ctx, path)
        return blocks
    if inp.get("pages") is not None and suffix != ".pdf":
        raise ToolError(f"`pages` applies to PDF files only; {path.name} is not one (use offset and limit).")
    if size > MAX_TEXT_BYTES:
        raise ToolError(f"File {path} is {size} bytes, too large to read (limit {MAX_TEXT_BYTES}). "
                        "Use Grep to search it, or Bash with head/tail/sed to view parts.")
    raw = path.read_bytes()
    if suffix == ".pdf":
        text = pdf_text(path, raw, inp.get("pages"))
        record_read(ctx, path)
        return text
    if suffix == ".ipynb":
        nb = render_notebook(path, raw)
        record_read(ctx, path)
        return nb
    if looks_binary(raw):
        raise ToolError(f"{path} appears to be a binary file ({size} bytes) and cannot be displayed as text.")
    text, encoding = decode(raw)
    record_read(ctx, path)
    return window(text, inp, path, encoding)


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
    window = lines[offset - 1: offset - 1 + limit]
    out: list[str] = []
    chars = 0
    cut = 0
    for line in window:
        line = line.removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [... line truncated]"
            cut += 1
        chars += len(line) + 8
        if out and chars > MAX_OUTPUT_CHARS:
            break
        out.append(line)
    body = format_lines(out, offset)
    notes = []
    last = offset + len(out) - 1
    if offset > 1 or last < total:
        more = f" Use offset={last + 1} to read more." if last < total else ""
        notes.append(f"Showing lines {offset}-{last} of {total}.{more}")
    if cut:
        notes.append(f"{cut} line(s) longer than {MAX_LINE_CHARS} characters were cut.")
    if encoding == "latin-1":
        notes.append("The file is not valid UTF-8; it was decoded as latin-1.")
    elif encoding == "utf-16":
        notes.append("The file is UTF-16 (with BOM).")
    if notes:
        body += "\n\n(" + " ".join(notes) + ")"
    return body
