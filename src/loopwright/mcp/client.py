"""Room: mcp. Owns McpRuntime (connections, tools, results); may import tools.base, mcp.config, mcp.naming.

MCP servers' tools and resources in the loop (the official `mcp` SDK as the client).

One `McpRuntime` per run (built by the assembler when servers are configured; the loop calls
`open` before its init message, so the tool list is fixed before the run's first step):

* Start: every server at once, each in its own task that owns its connection (so anyio's
  scopes never cross the loop's generator), within `MCP_TIMEOUT` (ms, default 30,000). A
  server that fails (exits, times out, bad config, bad name) is `failed` with the reason;
  the run goes on without it. Unapproved `.mcp.json` servers are `needs-approval`.
* Tools: `mcp__<server>__<tool>` (naming.py) with the server's description and input schema,
  listed once, so the tool list is byte-stable across the run's calls. `readOnlyHint: true`
  makes a tool read-only for Prop 6.2 (it runs concurrently with other read-only calls); a
  tool whose schema is not a valid JSON Schema object is skipped with a warning. The gate
  treats MCP tools as needing approval unless a rule allows them (`mcp__server`,
  `mcp__server__tool`, `mcp__server__*`).
* Calls: input is checked against the schema first (Tool.call); each call has a timeout
  (`MCP_TOOL_TIMEOUT`, ms, default 600,000). A server that crashes or hangs mid-call gives
  that call an is_error result and is marked failed (its process is ended); an interrupt
  cancels the request, and the SDK sends `notifications/cancelled`.
* Results: text, images and embedded resources become tool_result blocks, `isError` is
  is_error, `structuredContent` is sent as JSON text when there is no text. Text beyond
  `MAX_MCP_OUTPUT_TOKENS` (default 25,000, ~4 characters a token) is cut with a notice; the
  full output is saved beside the session transcript (when the session is saved).
* Resources: `ListMcpResources` and `ReadMcpResource` (read-only) when a server has any.
* End: `aclose()` ends every server (the SDK closes stdin, then terminates the process
  group), whatever ended the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..blocks import Block, ImageBlock, TextBlock
from ..extras import missing_extra
from ..telemetry import trace_meta
from ..tools.base import Tool, ToolContext, ToolError, ToolOutput
from . import naming
from .config import ServerConfig

log = logging.getLogger("loopwright.mcp")

START_TIMEOUT_MS = 30_000
TOOL_TIMEOUT_MS = 600_000
MAX_OUTPUT_TOKENS = 25_000
CHARS_PER_TOKEN = 4  # a rough, conservative estimate: the cap is a guard, not an accounting
# Bytes caps for the blocks that are not text (text is capped in tokens above): an image is
# resent with every later call, so one 30 MB image would cost every turn after it.
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # the Messages API's limit for one image
MAX_RESULT_BYTES = 10 * 1024 * 1024  # all images of one result together
STOP_BOUND_S = 10.0  # the SDK's own shutdown is bounded (~6 s worst case); this bounds ours
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
LIST_RESOURCES, READ_RESOURCE = "ListMcpResources", "ReadMcpResource"


def env_seconds(name: str, default_ms: int) -> float:
    """A Claude Code timeout variable (milliseconds) in seconds."""
    raw = os.environ.get(name, "")
    try:
        ms = float(raw) if raw.strip() else default_ms
    except ValueError:
        log.warning("%s=%r is not a number of milliseconds; using %d", name, raw, default_ms)
        ms = default_ms
    return max(ms, 1.0) / 1000


def max_output_chars() -> int:
    raw = os.environ.get("MAX_MCP_OUTPUT_TOKENS", "")
    tokens = int(raw) if raw.strip().isdigit() and int(raw) > 0 else MAX_OUTPUT_TOKENS
    return tokens * CHARS_PER_TOKEN


def _reason(e: BaseException) -> str:
    """The innermost useful message of an exception (anyio wraps them in groups)."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    if isinstance(e, TimeoutError):
        return "timed out"
    msg = str(e) or type(e).__name__
    return msg if type(e).__name__ in ("MCPError", "McpError") else f"{type(e).__name__}: {msg}"


class Connection:
    """One server: its status, its tools, and (for a real server) the task owning the client."""

    def __init__(self, cfg: ServerConfig, cwd: Path, env: dict[str, str]) -> None:
        self.cfg, self.name = cfg, cfg.name
        self.cwd, self.env = cwd, env
        self.status = "pending"
        self.error: str | None = None
        self.client: Any = None  # mcp.Client once connected
        self.tools: list[Any] = []  # mcp_types.Tool, as listed
        self.has_resources = False
        self.server_version: str | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._stderr: Any = None
        self.tail = ""  # the server's last stderr lines when it failed to start

    def fail(self, reason: str) -> None:
        if self.status != "failed":
            log.info("MCP server %r failed: %s", self.name, reason)
        self.status, self.error = "failed", reason
        self._stop.set()  # the owner task leaves the client's context: the process is ended

    def info(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "status": self.status}
        if self.error:
            d["error"] = self.error
        return d

    # -- the owner task -------------------------------------------------------------------

    def start(self, timeout: float) -> None:
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._own(timeout))

    async def spawn_early(self) -> None:
        """A stdio server's process, started before the SDK is imported (spawn.py): it boots
        while the SDK loads, and the SDK's stdio_client takes it over."""
        from . import spawn

        if self.cfg.type != "stdio" or not spawn.enabled():
            return
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        await spawn.spawn(self.cfg.command, self.cfg.args, self._server_env(), str(self._server_cwd()), self._stderr)

    def _server_env(self) -> dict[str, str]:
        return {**self.env, **self.cfg.env}

    def _server_cwd(self) -> Path:
        return Path(self.cwd, os.path.expanduser(self.cfg.cwd)) if self.cfg.cwd else self.cwd

    async def wait_ready(self, timeout: float) -> None:
        assert self._ready is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout + STOP_BOUND_S)
            self.status = "connected"
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # noqa: BLE001 - any start failure only fails this server
            why = f"did not start within {timeout:g} s (MCP_TIMEOUT)" if isinstance(e, TimeoutError) else _reason(e)
            tail = self.tail
            self.fail(f"{why}{f'; stderr: {tail}' if tail else ''}")

    async def _own(self, timeout: float) -> None:
        import math

        import anyio

        assert self._ready is not None
        try:
            # One scope around the connection's whole life (a scope may not end while the
            # client's task groups it entered are open): a start deadline, lifted once ready.
            with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                async with contextlib.AsyncExitStack() as stack:
                    client = await self._connect(stack)
                    await self._list(client)
                    scope.deadline = math.inf
                    self.client = client
                    self._ready.set_result(None)
                    await self._stop.wait()
            if scope.cancelled_caught and not self._ready.done():
                raise TimeoutError
        except BaseException as e:  # noqa: BLE001 - reported through _ready or fail(); never lost
            if not self._ready.done():
                self.tail = self._stderr_tail()
                self._ready.set_exception(TimeoutError() if _is_timeout(e) else e)
            elif self.status != "failed" and not self._stop.is_set():
                self.fail(f"the connection ended: {_reason(e)}")
            if isinstance(e, asyncio.CancelledError):
                raise
        finally:
            self.client = None
            await self.end_early()

    async def end_early(self) -> None:
        """Close the server's stderr file, ending first a process spawned early that the SDK never
        took (it failed to load, or the start was cancelled)."""
        if self._stderr is not None:
            from .spawn import discard

            await discard(self._stderr)
            with contextlib.suppress(OSError):
                self._stderr.close()

    async def _connect(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp import Client

        cfg = self.cfg
        if cfg.type == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            from . import lines, spawn

            lines.install()  # linear line reading, a cap on one line (lines.py)
            spawn.install()  # the process spawn_early started, if any (spawn.py)

            if self._stderr is None:
                self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            params = StdioServerParameters(command=cfg.command, args=cfg.args, env=self._server_env(),
                                           cwd=str(self._server_cwd()))
            transport: Any = stdio_client(params, errlog=self._stderr)
        elif cfg.type == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=cfg.headers or None))
            transport = streamable_http_client(cfg.url, http_client=http)
        else:
            from mcp.client.sse import sse_client

            transport = sse_client(cfg.url, headers=cfg.headers or None)
        from mcp_types import Implementation

        from .. import __version__

        client = Client(transport, cache=None, client_info=Implementation(name="loopwright", version=__version__))
        return await stack.enter_async_context(client)

    async def _list(self, client: Any) -> None:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(100):  # a paginator that never ends cannot hang the start
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools = tools
        caps = client.server_capabilities
        if getattr(caps, "resources", None) is not None:  # the resource tools only when there are some
            from mcp import MCPError

            try:
                self.has_resources = bool((await client.list_resources()).resources)
            except MCPError:
                self.has_resources = False
        info = client.server_info
        self.server_version = getattr(info, "version", None)

    def _stderr_tail(self) -> str:
        f = self._stderr
        if f is None or f.closed:
            return ""
        try:
            f.flush()
            f.seek(0)
            lines = [ln.strip() for ln in f.read()[-2000:].splitlines() if ln.strip()]
        except (OSError, ValueError):
            return ""
        return " | ".join(lines[-3:])[-400:]

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None and not self._task.done():
            await asyncio.wait({self._task}, timeout=STOP_BOUND_S)

    # -- calls ----------------------------------------------------------------------------

    def _usable(self) -> Any:
        if self.status != "connected" or self.client is None:
            raise ToolError(f"MCP server {self.name!r} is not connected"
                            f"{f': {self.error}' if self.error else ''}.")
        return self.client

    async def request(self, what: str, call: Any) -> Any:
        """Run one request; a crash or a hang fails the server and becomes a ToolError."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        timeout = env_seconds("MCP_TOOL_TIMEOUT", TOOL_TIMEOUT_MS)
        try:
            return await call(timeout)
        except MCPError as e:
            if e.code == REQUEST_TIMEOUT:
                self.fail(f"{what} got no answer within {timeout:g} s (MCP_TOOL_TIMEOUT)")
                raise ToolError(f"MCP server {self.name!r} did not answer {what} within {timeout:g} s "
                                "(MCP_TOOL_TIMEOUT); the server is marked failed and was stopped.") from None
            if e.code == CONNECTION_CLOSED:
                self.fail(f"the connection closed during {what} (the server exited?)")
                raise ToolError(f"MCP server {self.name!r} closed the connection during {what} (it crashed or "
                                "exited); the server is marked failed.") from None
            raise ToolError(f"MCP server {self.name!r}: {what} failed: {e.message} (error {e.code})") from None
        except (TimeoutError, OSError) as e:
            self.fail(f"{what}: {_reason(e)}")
            raise ToolError(f"MCP server {self.name!r}: {what} failed: {_reason(e)}; the server is marked failed.") from None
        except Exception as e:
            if type(e).__module__.startswith(("anyio", "httpx")):  # a transport that broke under us
                self.fail(f"{what}: {_reason(e)}")
                raise ToolError(f"MCP server {self.name!r}: {what} failed: {_reason(e)}") from None
            raise

    async def call_tool(self, tool: str, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        client = self._usable()
        meta = trace_meta()  # the execute_tool span's traceparent (telemetry on), in params._meta

        async def go(timeout: float) -> Any:
            return await client.call_tool(tool, args, read_timeout_seconds=timeout, meta=meta or None)

        result = await self.request(f"the call of {tool!r}", go)
        return result_output(result, ctx)


def _is_timeout(e: BaseException) -> bool:
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return isinstance(e, TimeoutError)


# --- results ----------------------------------------------------------------------------------

def content_blocks(items: list[Any]) -> list[Block]:
    """MCP content (text, image, audio, resource, resource_link) as tool_result blocks."""
    out: list[Block] = []
    for c in items:
        kind = getattr(c, "type", None)
        if kind == "text":
            out.append(TextBlock(c.text))
        elif kind == "image":
            out.append(_image(c.data, c.mime_type) or TextBlock(f"[image of type {c.mime_type} not shown: "
                                                                 "unsupported image type]"))
        elif kind == "audio":
            out.append(TextBlock(f"[audio ({c.mime_type}) not shown: the model takes no audio]"))
        elif kind == "resource":
            out.extend(resource_blocks([c.resource]))
        elif kind == "resource_link":
            desc = f": {c.description}" if getattr(c, "description", None) else ""
            out.append(TextBlock(f"[resource {c.uri} ({c.name}){desc}]"))
        else:
            out.append(TextBlock(f"[{kind} content not shown]"))
    return out


def resource_blocks(contents: list[Any]) -> list[Block]:
    out: list[Block] = []
    for r in contents:
        mime = getattr(r, "mime_type", None)
        text = getattr(r, "text", None)
        if text is not None:
            out.append(TextBlock(f"[resource {r.uri}]\n{text}"))
            continue
        blob = getattr(r, "blob", "") or ""
        img = _image(blob, mime) if mime else None
        out.append(img or TextBlock(f"[resource {r.uri}: {mime or 'binary'} data, {len(blob) * 3 // 4} bytes, "
                                    "not shown]"))
    return out


def _image(data: str, mime: str | None) -> Block | None:
    if mime not in IMAGE_TYPES:
        return None
    return ImageBlock({"type": "base64", "media_type": mime, "data": data})


def result_output(result: Any, ctx: ToolContext | None) -> ToolOutput:
    blocks = content_blocks(list(result.content or []))
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(isinstance(b, TextBlock) for b in blocks):
        blocks.insert(0, TextBlock(json.dumps(structured, ensure_ascii=False)))
    blocks = cap(blocks, ctx)
    is_error = bool(getattr(result, "is_error", False))
    if not blocks:
        return ToolOutput("(no output)", is_error)
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return ToolOutput(blocks[0].text, is_error)
    return ToolOutput(blocks, is_error)


def cap_images(blocks: list[Block]) -> list[Block]:
    """Images over MAX_IMAGE_BYTES each, or past MAX_RESULT_BYTES together, become a notice."""
    out: list[Block] = []
    total = 0
    for b in blocks:
        if isinstance(b, ImageBlock):
            data = b.source.get("data")
            size = len(data) * 3 // 4 if isinstance(data, str) else 0
            total += size
            if size > MAX_IMAGE_BYTES or total > MAX_RESULT_BYTES:
                why = (f"over the {MAX_IMAGE_BYTES:,}-byte cap for one image" if size > MAX_IMAGE_BYTES
                       else f"past the {MAX_RESULT_BYTES:,}-byte cap for one result's images")
                out.append(TextBlock(f"[image ({b.source.get('media_type')}) of {size:,} bytes not shown: {why}]"))
                continue
        out.append(b)
    return out


def cap(blocks: list[Block], ctx: ToolContext | None) -> list[Block]:
    """Cut text beyond MAX_MCP_OUTPUT_TOKENS, with a notice; save the whole output beside the
    session transcript when there is one. Images are capped in bytes (cap_images)."""
    blocks = cap_images(blocks)
    limit = max_output_chars()
    total = sum(len(b.text) for b in blocks if isinstance(b, TextBlock))
    if total <= limit:
        return blocks
    full = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    saved = _save_full(full, ctx)
    out: list[Block] = []
    left = limit
    for b in blocks:
        if isinstance(b, TextBlock):
            if left <= 0:
                continue
            out.append(TextBlock(b.text[:left]))
            left -= len(b.text)
        else:
            out.append(b)
    where = f" The full output is saved in {saved} (read it in parts with Read's offset/limit)." if saved else ""
    out.append(TextBlock(f"[output cut: {total:,} characters (about {total // CHARS_PER_TOKEN:,} tokens) is more "
                         f"than MAX_MCP_OUTPUT_TOKENS={limit // CHARS_PER_TOKEN:,} tokens; the rest is not shown.{where}]"))
    return out


def _save_full(text: str, ctx: ToolContext | None) -> str | None:
    ports = ctx.ports if ctx is not None else None
    if ports is None or ctx is None:
        return None
    saved = ports.save_artifact(f"{ctx.tool_use_id or 'output'}.txt", text)
    return str(saved) if saved is not None else None


# --- the run's servers ----------------------------------------------------------------------------

def sdk_log_file() -> Path:
    """Where the MCP SDK's own log goes: a server's junk on stdout (each line a parse error with
    its traceback) is written there, never to the terminal."""
    from ..home import loopwright_home

    return loopwright_home() / "logs" / "mcp.log"


def _sdk_logs_to_file() -> None:
    sdk = logging.getLogger("mcp")
    if getattr(sdk, "_loopwright_file", None) is not None:
        return
    from ..home import loopwright_home, open_private, private_dir

    path = sdk_log_file()
    try:
        private_dir(path.parent, loopwright_home())
        os.close(open_private(path))  # the log may quote a server's output: 0600 before the handler opens it
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    except OSError:  # no writable home: the log is dropped, still never on the terminal
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    sdk.addHandler(handler)
    sdk.propagate = False
    sdk._loopwright_file = handler  # type: ignore[attr-defined]


class McpRuntime:
    """The servers of one run and the loopwright Tools they give."""

    def __init__(self, configs: list[ServerConfig], cwd: Path, env: dict[str, str] | None = None) -> None:
        _sdk_logs_to_file()
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        self.connections = [Connection(c, cwd, self.env) for c in configs]
        self.warnings: list[str] = []
        self.parts, self.clashes = naming.unique_server_parts([c.name for c in configs])

    def status(self) -> list[dict[str, Any]]:
        return [c.info() for c in self.connections]

    def get(self, name: str) -> Connection | None:
        return next((c for c in self.connections if c.name == name), None)

    async def start(self) -> None:
        import importlib.util

        timeout = env_seconds("MCP_TIMEOUT", START_TIMEOUT_MS)
        sdk_missing = importlib.util.find_spec("mcp") is None
        starting: list[Connection] = []
        for conn in self.connections:
            cfg = conn.cfg
            if cfg.needs_approval:
                conn.status = "needs-approval"
                conn.error = ("a project server from .mcp.json: approve it with enableAllProjectMcpServers or "
                              "enabledMcpjsonServers in settings")
            elif cfg.error:
                conn.fail(cfg.error)
            elif conn.name in self.clashes:
                conn.fail(self.clashes[conn.name])
            elif self.parts.get(conn.name) is None:
                conn.fail(f"the server name {conn.name!r} cannot be made part of a valid tool name "
                          "(letters, digits, _ and -, at most 49 characters)")
            elif cfg.type == "sdk":
                conn.status = "connected"
            elif sdk_missing:
                conn.fail(str(missing_extra("an MCP server", "mcp")))
            else:
                starting.append(conn)
        try:
            for conn in starting:  # the stdio servers' processes first: they boot while the SDK loads (spawn.py)
                await conn.spawn_early()
        except BaseException:  # cancelled meanwhile: no owner task will end them
            for conn in starting:
                await conn.end_early()
            raise
        for conn in starting:
            conn.start(timeout)
        if starting:
            await asyncio.gather(*(c.wait_ready(timeout) for c in starting))

    async def open(self, taken: Collection[str]) -> list[Tool]:
        """Start the servers and return their tools, less those whose names the run has already
        (with a warning). Whatever did start is ended by `aclose`, even if this is cancelled."""
        await self.start()
        added: list[Tool] = []
        for t in self.tools():
            if t.name in taken:
                self._warn(f"MCP tool {t.name} is not offered: a tool of that name exists already")
                continue
            added.append(t)
        return added

    def tools(self) -> list[Tool]:
        out: list[Tool] = []
        for conn in self.connections:
            part = self.parts.get(conn.name)
            if conn.status != "connected" or part is None:
                continue
            out.extend(self._sdk_tools(conn, part) if conn.cfg.type == "sdk" else self._server_tools(conn, part))
        if any(c.status == "connected" and c.has_resources for c in self.connections):
            out.extend(resource_tools(self))
        return out

    def _server_tools(self, conn: Connection, part: str) -> list[Tool]:
        seen: set[str] = set()
        listed = []
        for t in conn.tools:
            if t.name in seen:
                self._warn(f"MCP server {conn.name!r} lists tool {t.name!r} twice; the second is skipped")
                continue
            seen.add(t.name)
            listed.append(t)
        names = naming.tool_names(part, [t.name for t in listed])
        out = []
        for t in listed:
            problem = schema_problem(t.input_schema)
            if problem is not None:
                self._warn(f"MCP server {conn.name!r}: tool {t.name!r} skipped: its input schema {problem}")
                continue
            ann = getattr(t, "annotations", None)
            out.append(Tool(names[t.name], t.description or t.name, t.input_schema, _caller(conn, t.name),
                            read_only=bool(ann is not None and ann.read_only_hint)))
        return out

    def _sdk_tools(self, conn: Connection, part: str) -> list[Tool]:
        server = conn.cfg.instance
        names = naming.tool_names(part, [t.name for t in server.tools])
        out = []
        for t in server.tools:
            async def handler(x: dict[str, Any], ctx: ToolContext, _t: Tool = t) -> ToolOutput:
                return await _t.call(x, ctx, in_thread=True)

            out.append(Tool(names[t.name], t.description, t.input_schema, handler, read_only=t.read_only))
        return out

    def _warn(self, msg: str) -> None:
        log.warning("%s", msg)
        self.warnings.append(msg)

    async def aclose(self) -> None:
        """End every server (and its process). Waits for them even when cancelled meanwhile."""
        tasks = [c.stop() for c in self.connections]
        gathered = asyncio.ensure_future(asyncio.gather(*tasks, return_exceptions=True))
        try:
            await asyncio.shield(gathered)
        except asyncio.CancelledError:
            await asyncio.wait({gathered}, timeout=STOP_BOUND_S)  # a second Ctrl-C: still end them
            raise


def schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "is not a JSON Schema with type \"object\""
    from ..tools.base import remote_refs

    refs = remote_refs(schema)
    if refs:  # never fetched: the server would make this machine send requests for it
        return f"refers to {refs[0]!r} outside itself ($ref to a URL or file is never fetched)"
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        return f"is not a valid JSON Schema: {e.message}"
    return None


def _caller(conn: Connection, tool: str) -> Any:
    async def handler(x: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await conn.call_tool(tool, x, ctx)

    return handler


def resource_tools(rt: McpRuntime) -> list[Tool]:
    async def list_resources(x: dict[str, Any], ctx: ToolContext) -> str:
        wanted = x.get("server")
        conns = [c for c in rt.connections if c.status == "connected" and c.has_resources
                 and (wanted is None or c.name == wanted)]
        if wanted is not None and not conns:
            raise ToolError(f"No connected MCP server {wanted!r} with resources. Servers with resources: "
                            f"{', '.join(c.name for c in rt.connections if c.has_resources) or 'none'}.")
        items: list[dict[str, Any]] = []
        for c in conns:
            client = c._usable()

            async def go(timeout: float, _client: Any = client) -> Any:
                import anyio

                with anyio.fail_after(timeout):
                    return await _client.list_resources()

            res = await c.request("resources/list", go)
            for r in res.resources:
                item = {"server": c.name, "uri": r.uri, "name": r.name}
                if r.mime_type:
                    item["mimeType"] = r.mime_type
                if r.description:
                    item["description"] = r.description
                items.append(item)
        return json.dumps(items, ensure_ascii=False)

    async def read_resource(x: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        c = rt.get(x["server"])
        if c is None:
            raise ToolError(f"No MCP server {x['server']!r}. Servers: {', '.join(s.name for s in rt.connections)}.")
        client = c._usable()

        async def go(timeout: float) -> Any:
            import anyio

            with anyio.fail_after(timeout):
                return await client.read_resource(x["uri"])

        res = await c.request(f"reading {x['uri']}", go)
        blocks = cap(resource_blocks(list(res.contents)), ctx)
        if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
            return ToolOutput(blocks[0].text)
        return ToolOutput(blocks or "(empty resource)")

    list_schema = {"type": "object", "properties": {
        "server": {"type": "string", "description": "Only this server's resources (default: every server's)"}},
        "additionalProperties": False}
    read_schema = {"type": "object", "properties": {
        "server": {"type": "string", "description": "The MCP server's name"},
        "uri": {"type": "string", "description": "The resource URI, as ListMcpResources gives it"}},
        "required": ["server", "uri"], "additionalProperties": False}
    return [
        Tool(LIST_RESOURCES, "Lists the resources (files, records, documents) the connected MCP servers offer: "
             "server, uri, name, mimeType, description.", list_schema, list_resources, read_only=True),
        Tool(READ_RESOURCE, "Reads one MCP resource by server name and URI (from ListMcpResources).",
             read_schema, read_resource, read_only=True),
    ]
