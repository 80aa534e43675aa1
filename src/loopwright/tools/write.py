"""Room: built-in tools (on tools.base). Owns Write; may import data types, tools.base and tools.paths.

Write {file_path, content}: create a file, or overwrite one that was Read first."""

from __future__ import annotations

from typing import Any

from .base import Tool, ToolContext, ToolError
from .paths import before_change, check_fresh, load_text, record_read, resolve

DESCRIPTION = """Writes a file to the local filesystem, creating parent directories as needed.

- Overwrites the file if it exists. An existing file must have been read with Read first in this
  session (and not changed since), otherwise this tool fails.
- Prefer Edit for changes to existing files: it sends only the diff.
- An existing file keeps its encoding (UTF-8 BOM, latin-1) and CRLF line endings."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The absolute path to the file to write (must be absolute, not relative)"},
        "content": {"type": "string", "description": "The content to write to the file"},
    },
    "required": ["file_path", "content"],
    "additionalProperties": False,
}


def write_file(inp: dict[str, Any], ctx: ToolContext) -> str:
    path = resolve(inp["file_path"], ctx)
    content: str = inp["content"]
    if path.is_dir():
        raise ToolError(f"EISDIR: {path} is a directory.")
    if path.exists() and not path.is_file():  # a FIFO or a device: writing would block or hit hardware
        raise ToolError(f"{path} is not a regular file.")
    existed = path.exists()
    if existed:
        check_fresh(ctx, path)
        old = load_text(path)
        data = old.encode(content)
    else:
        data = content.encode("utf-8")
    before_change(ctx, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    record_read(ctx, path)
    n = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    if existed:
        return f"The file {path} has been updated ({n} lines)."
    return f"File created successfully at: {path} ({n} lines)."


def make_write_tool() -> Tool:
    return Tool("Write", DESCRIPTION, INPUT_SCHEMA, write_file)
