"""Room: cli. Owns what `loopwright mcp serve` offers as MCP resources: the files of the working
directories, listed and read through the gate's read rules; may import execute, tools.glob and below.

A file is a resource `file:///ABSOLUTE/PATH` when it is under a working directory (cwd and each
`--add-dir`, symlinks resolved: a link out of them is not followed) and a Read of it would be allowed:
reading one goes through the executor's whole gate as a Read call would (PreToolUse hooks, deny and
`Read(...)` rules, the sandbox's read rules); listing and completing apply the rules only (not the
hooks, which are programs: one per listed file would be too slow), so a hook can refuse a listed file. The listing is the walk
Glob makes (the ignore files apply: what Glob and Grep hide is not listed), PAGE files a page, with
a cursor; the template `file://CWD/{+path}` names the rest, and its `path` argument completes.
Reading a file the gate refuses, or one outside the working directories, is a JSON-RPC error that
says why; nothing of it is read. A file over MAX_BYTES is refused (the MCP client would hold it whole).
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

if TYPE_CHECKING:
    from ..execute import Executor

PAGE = 500
MAX_BYTES = 10 * 1024 * 1024
COMPLETIONS = 100  # the spec's most values in one completion


class Refused(Exception):
    """A resource that is not served, and why (answered as JSON-RPC's invalid params)."""


def file_uri(path: Path) -> str:
    return "file://" + quote(str(path))


def uri_path(uri: str) -> Path:
    """The absolute path a `file://` URI names (Refused for any other URI)."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        raise Refused(f"Resource not found: {uri} (this server serves file:// URIs of its working directories)")
    path = Path(unquote(parts.path))
    if not path.is_absolute():
        raise Refused(f"Resource not found: {uri} (not an absolute path)")
    return path


class Files:
    """The working directories' files, as the gate lets them be read."""

    def __init__(self, executor: Executor, roots: list[Path]) -> None:
        self.executor = executor
        self.roots = [r.resolve() for r in roots]
        self.cwd = self.roots[0]

    def template(self) -> str:
        return file_uri(self.cwd) + "/{+path}"

    def inside(self, path: Path) -> Path | None:
        """The real path of `path` when it is under a working directory, else None."""
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        return real if any(real == r or real.is_relative_to(r) for r in self.roots) else None

    async def allowed(self, path: Path) -> str | None:
        """None when a Read of `path` is allowed, else the gate's reason."""
        from ..gate.verdict import Deny

        try:
            decision = await self.executor.permissions.decide("Read", {"file_path": str(path)}, True, None)
        except Exception as e:  # noqa: BLE001 - an odd path: refused, as the executor fails closed
            return f"{type(e).__name__}: {e}"
        if isinstance(decision, Deny):
            return decision.message
        self._no_run(str(path))
        return None

    def _no_run(self, file_path: str) -> None:
        """The path judgment the gate kept for an allowed Read (a run's Read checks and takes it)
        taken back: none runs here (a listing; a resource this server reads itself), and each
        resources/list, read or subscribe kept one for the server's life. (Right after the
        decision, before any await: the last one kept for the path is this decision's.)"""
        judged = self.executor.ctx.state.judged
        held = judged.get(("Read", file_path))
        if held:
            held.pop()
            if not held:
                del judged[("Read", file_path)]

    async def gate_read(self, path: Path) -> str | None:
        """None when the executor's whole gate lets a Read of `path` run (PreToolUse hooks, then the
        rules, as for a tools/call), else why not; a hook's rewrite of the path is a refusal (a
        resource is the file its URI names)."""
        import uuid

        from ..blocks import ToolUseBlock
        from ..execute import TurnOutcome

        asked = {"file_path": str(path)}
        use = ToolUseBlock(f"mcp_resource_{uuid.uuid4().hex[:12]}", "Read", asked)
        try:
            # the executor's one gate (its private step: the call is decided, not run)
            tool_input, refused = await self.executor._gate(use, TurnOutcome([]))
        except Exception as e:  # noqa: BLE001 - fail closed, as the executor does
            return f"{type(e).__name__}: {e}"
        finally:
            self.executor.pre_context.pop(use.id, None)
        if refused is not None:
            return str(refused.content)
        if isinstance(tool_input.get("file_path"), str):
            self._no_run(tool_input["file_path"])
        if tool_input.get("file_path") != asked["file_path"]:
            return "a PreToolUse hook changed the path"
        return None

    async def walk(self) -> list[Path]:
        """Every file Glob would list under the working directories (ignore files apply)."""
        import anyio

        from ..tools.glob import find_files

        out: list[Path] = []
        for root in self.roots:
            names = await anyio.to_thread.run_sync(find_files, root, "**/*")
            out += [root / n for n in sorted(names)]
        return out

    async def page(self, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        """One page of resources (as the wire's dicts) and the next page's cursor."""
        files = await self.walk()
        start = int(cursor) if cursor and cursor.isdigit() else 0
        chunk = files[start:start + PAGE]
        out = []
        for p in chunk:
            if self.inside(p) is None or await self.allowed(p) is not None:
                continue
            rel = p.relative_to(self.cwd) if p.is_relative_to(self.cwd) else p
            size = p.stat().st_size if p.is_file() else None
            out.append({"uri": file_uri(p), "name": str(rel), "mimeType": mime(p), "size": size})
        nxt = str(start + PAGE) if start + PAGE < len(files) else None
        return out, nxt

    async def read(self, uri: str) -> dict[str, Any]:
        """The contents of one file (text, or base64 for what is no UTF-8), or Refused."""
        path = uri_path(uri)
        real = self.inside(path)
        if real is None:
            where = ", ".join(map(str, self.roots))
            raise Refused(f"Resource not found: {uri} (no such file under the working directories: {where})")
        why = await self.gate_read(real)
        if why is not None:
            raise Refused(f"Read of {path} refused: {why}")
        if not real.is_file():
            raise Refused(f"Resource not found: {uri} (not a regular file)")
        size = real.stat().st_size
        if size > MAX_BYTES:
            raise Refused(f"{path}: {size:,} bytes, over the {MAX_BYTES:,} a resource may have")
        data = real.read_bytes()
        try:
            return {"uri": uri, "mimeType": mime(real), "text": data.decode("utf-8")}
        except UnicodeDecodeError:
            return {"uri": uri, "mimeType": mime(real, binary=True), "blob": base64.b64encode(data).decode()}

    async def complete(self, value: str) -> list[str]:
        """Relative paths under cwd starting with `value`, for the template's `path` (allowed ones)."""
        out = []
        for p in await self.walk():
            if not p.is_relative_to(self.cwd):
                continue
            rel = str(p.relative_to(self.cwd))
            if rel.startswith(value) and await self.allowed(p) is None:
                out.append(rel)
                if len(out) >= COMPLETIONS:
                    break
        return out


def mime(path: Path, binary: bool = False) -> str:
    guessed = mimetypes.guess_type(path.name)[0]
    return guessed or ("application/octet-stream" if binary else "text/plain")


class Watches:
    """`resources/subscribe` on files: each subscribed file is looked at every POLL seconds (its
    size and modification time) and a change is told to the subscriber's connection as
    `notifications/resources/updated`. A file is watched only when its read would be served
    (the same checks as `resources/read`); at most MAX_WATCHES at once; a watch ends on
    `resources/unsubscribe`, when its connection is gone, or when the server ends."""

    POLL = 1.0
    MAX_WATCHES = 1000

    def __init__(self, files: Files) -> None:
        self.files = files
        self.tasks: dict[tuple[int, str], Any] = {}

    async def subscribe(self, key: int, uri: str, notify: Any) -> None:
        """Watch `uri` for the connection `key`; `notify(uri)` tells it of a change (Refused when
        the file is not served)."""
        import asyncio

        path = uri_path(uri)
        real = self.files.inside(path)
        if real is None or not real.is_file():
            raise Refused(f"Resource not found: {uri} (no such file under the working directories)")
        why = await self.files.gate_read(real)
        if why is not None:
            raise Refused(f"Read of {path} refused: {why}")
        if (key, uri) in self.tasks:
            return
        if len(self.tasks) >= self.MAX_WATCHES:
            raise Refused(f"{self.MAX_WATCHES} resources are watched already; unsubscribe from one first")
        # The first look is now, before the subscription is answered: a change the client makes
        # right after the answer is a change (the watch's task may first run later on a busy loop).
        task = asyncio.ensure_future(self._watch(key, uri, real, notify, self._stamp(real)))
        self.tasks[(key, uri)] = task
        task.add_done_callback(lambda _: self.tasks.pop((key, uri), None) if self.tasks.get((key, uri)) is task
                               else None)

    def unsubscribe(self, key: int, uri: str) -> None:
        task = self.tasks.pop((key, uri), None)
        if task is not None:
            task.cancel()

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int] | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    async def _watch(self, key: int, uri: str, path: Path, notify: Any, seen: tuple[int, int] | None) -> None:
        import asyncio

        while True:
            await asyncio.sleep(self.POLL)
            now = self._stamp(path)
            if now != seen:
                seen = now
                try:
                    await notify(uri)
                except Exception:  # noqa: BLE001 - the connection is gone: so is the watch
                    return
