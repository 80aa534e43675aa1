"""Room: acp. Owns Read/Write/Edit through the editor's fs/* methods and Bash through its
terminal/* methods; may import tools and workspace.

When the editor offers them (clientCapabilities.fs, .terminal), these tools replace the local
ones of the same name, schema and flags: the gate and hooks see the same calls (they run before
any tool), Read sees the editor's unsaved buffers and edits land in them, and a command's
output shows in the editor's terminal. What the editor cannot do runs locally as before:
images, notebooks and PDFs (Read), creating a file with Edit, MultiEdit, background commands,
and every command when the OS sandbox is on (its bubblewrap wrapper passes file descriptors
an editor's terminal cannot receive, so the sandboxed local Bash runs it: the same sandbox).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
from acp import schema as s

from ..tools.base import Tool, ToolContext, ToolError, ToolOutput
from ..tools.bash import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS
from ..tools.edit import edit_file, splice
from ..tools.media import IMAGE_TYPES
from ..tools.paths import after_change, before_change, check_fresh, record_read, resolve
from ..tools.read import MAX_TEXT_BYTES, read_file, window
from ..workspace import shell_cwd

LOCAL_READS = frozenset({*IMAGE_TYPES, ".ipynb", ".pdf"})
OUTPUT_LIMIT = 1 << 20  # bytes of a command's output the editor keeps for us


def _like(t: Tool, handler: Callable[..., Any]) -> Tool:
    return Tool(t.name, t.description, t.input_schema, handler, t.read_only, needs_approval=t.needs_approval,
                spawns_agents=t.spawns_agents, read_only_call=t.read_only_call)


def client_tools(tools: list[Tool], conn: Any, session_id: str, caps: s.ClientCapabilities | None,
                 terminals: dict[str, str]) -> list[Tool]:
    """`tools` with Read/Write/Edit/Bash going through the editor where it offers that.
    `terminals` collects tool_use id -> terminal id (the updates embed the terminal)."""
    fs = caps.fs if caps is not None else None
    can_read = bool(fs and fs.read_text_file)
    can_write = bool(fs and fs.write_text_file)
    can_run = bool(caps is not None and caps.terminal)
    files = EditorFiles(conn, session_id)
    out: list[Tool] = []
    for t in tools:
        if t.name == "Read" and can_read:
            out.append(_like(t, files.read))
        elif t.name == "Write" and can_write:
            out.append(_like(t, files.write))
        elif t.name == "Edit" and can_read and can_write:
            out.append(_like(t, files.edit))
        elif t.name == "Bash" and can_run:
            out.append(_like(t, EditorTerminal(conn, session_id, t.handler, terminals).bash))
        else:
            out.append(t)
    return out


class EditorFiles:
    """fs/read_text_file and fs/write_text_file as Read, Write and Edit."""

    def __init__(self, conn: Any, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id

    async def _text(self, path: Path) -> str:
        try:
            resp = await self.conn.read_text_file(session_id=self.session_id, path=str(path))
        except acp.RequestError as e:
            raise ToolError(f"The editor could not read {path}: {e}") from None
        return str(resp.content)

    async def _put(self, path: Path, ctx: ToolContext, content: str) -> None:
        before_change(ctx, path)
        try:
            await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=content)
        except acp.RequestError as e:
            raise ToolError(f"The editor could not write {path}: {e}") from None
        after_change(ctx, path)
        if path.exists():
            record_read(ctx, path)

    async def read(self, inp: dict[str, Any], ctx: ToolContext) -> Any:
        path = resolve(inp["file_path"], ctx)
        if (path.suffix.lower() in LOCAL_READS or not path.is_file()
                or path.stat().st_size > MAX_TEXT_BYTES):
            return await asyncio.to_thread(read_file, inp, ctx)  # its own errors and media
        text = await self._text(path)
        record_read(ctx, path)
        return window(text, inp, path)

    async def write(self, inp: dict[str, Any], ctx: ToolContext) -> str:
        path = resolve(inp["file_path"], ctx)
        content: str = inp["content"]
        if path.is_dir():
            raise ToolError(f"EISDIR: {path} is a directory.")
        if path.exists() and not path.is_file():
            raise ToolError(f"{path} is not a regular file.")
        existed = path.exists()
        if existed:
            check_fresh(ctx, path)
        await self._put(path, ctx, content)
        n = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        if existed:
            return f"The file {path} has been updated ({n} lines)."
        return f"File created successfully at: {path} ({n} lines)."

    async def edit(self, inp: dict[str, Any], ctx: ToolContext) -> str | ToolOutput:
        path = resolve(inp["file_path"], ctx)
        if inp["old_string"] == "" or not path.is_file():
            return await asyncio.to_thread(edit_file, inp, ctx)  # creating a file, or its errors
        check_fresh(ctx, path)
        raw, n = splice(await self._text(path), inp["old_string"], inp["new_string"], bool(inp.get("replace_all")))
        await self._put(path, ctx, raw)
        return f"The file {path} has been updated. Made {n} replacement{'s' if n != 1 else ''}."


class EditorTerminal:
    """terminal/* as Bash: the command runs in a terminal the editor shows."""

    def __init__(self, conn: Any, session_id: str, local: Callable[..., Any], terminals: dict[str, str]) -> None:
        self.conn = conn
        self.session_id = session_id
        self.local = local
        self.terminals = terminals

    async def bash(self, inp: dict[str, Any], ctx: ToolContext) -> str | ToolOutput:
        command: str = inp["command"]
        if inp.get("run_in_background") or ctx.sandbox is not None or not command.strip():
            return await self.local(inp, ctx)  # type: ignore[no-any-return]
        timeout_s = min(int(inp.get("timeout") or DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS) / 1000
        cwd = shell_cwd(ctx.state, ctx.cwd)
        env = [s.EnvVariable(name=k, value=v) for k, v in ctx.env.items()]
        sid = self.session_id
        term = await self.conn.create_terminal(session_id=sid, command="bash", args=["-c", command], cwd=str(cwd),
                                               env=env or None, output_byte_limit=OUTPUT_LIMIT)
        tid = term.terminal_id
        self.terminals[ctx.tool_use_id] = tid
        timed_out = False
        try:
            with contextlib.suppress(Exception):
                await self.conn.session_update(sid, acp.update_tool_call(
                    ctx.tool_use_id, status="in_progress", content=[acp.tool_terminal_ref(tid)]))
            try:
                await asyncio.wait_for(self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=tid), timeout_s)
            except TimeoutError:
                timed_out = True
                await self.conn.kill_terminal(session_id=sid, terminal_id=tid)
            out = await self.conn.terminal_output(session_id=sid, terminal_id=tid)
        except asyncio.CancelledError:  # an interrupt: the command ends with the call
            await asyncio.shield(self._end(tid, kill=True))
            raise
        await self._end(tid, kill=False)
        text = out.output.rstrip("\n")
        status = out.exit_status
        code = status.exit_code if status is not None else None
        notes = []
        if out.truncated:
            notes.append(f"[output truncated by the editor to its last {OUTPUT_LIMIT} bytes]")
        if timed_out:
            notes.append(f"Command timed out after {timeout_s:g}s and was killed.")
        elif status is not None and status.signal:
            notes.append(f"Command was killed by signal {status.signal}.")
        elif code:
            notes.append(f"Exit code {code}")
        body = "\n".join(x for x in (text, *notes) if x)
        failed = timed_out or bool(code) or bool(status is not None and status.signal)
        return ToolOutput(body or "(no output)", is_error=failed)

    async def _end(self, tid: str, *, kill: bool) -> None:
        with contextlib.suppress(Exception):
            if kill:
                await self.conn.kill_terminal(session_id=self.session_id, terminal_id=tid)
            await self.conn.release_terminal(session_id=self.session_id, terminal_id=tid)
