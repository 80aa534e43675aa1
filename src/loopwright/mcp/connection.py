"""Room: mcp. Owns one MCP server's connection (transport, session, calls); may import tools.base, mcp.config, mcp.results.

A `Connection` is one configured server: a task of its own owns the SDK client (so anyio's
scopes never cross the loop's generator) from the start, within `MCP_TIMEOUT`, until `stop`.
A request that times out (`MCP_TOOL_TIMEOUT`) or finds the connection closed fails the server
(its process is ended) and becomes a ToolError for that call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..telemetry import trace_meta
from ..tools.base import ToolContext, ToolError, ToolOutput
from .config import ServerConfig
from .results import checked_output

log = logging.getLogger("loopwright.mcp")

START_TIMEOUT_MS = 30_000
TOOL_TIMEOUT_MS = 600_000
STOP_BOUND_S = 10.0  # the SDK's own shutdown is bounded (~6 s worst case); this bounds ours


def env_seconds(name: str, default_ms: int, env: Mapping[str, str] | None = None) -> float:
    """A Claude Code timeout variable (milliseconds) in seconds, from `env` (a run's: the settings
    files' env over the environment) or the environment."""
    raw = (os.environ if env is None else env).get(name, "")
    try:
        ms = float(raw) if raw.strip() else default_ms
    except ValueError:
        log.warning("%s=%r is not a number of milliseconds; using %d", name, raw, default_ms)
        ms = default_ms
    return max(ms, 1.0) / 1000



def _reason(e: BaseException, command: str = "") -> str:
    """The innermost useful message of an exception (anyio wraps them in groups); a stdio server's
    `command` that could not be started is named as such."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    if isinstance(e, TimeoutError):
        return "timed out"
    if isinstance(e, OSError) and command and e.filename == command:  # the first mistake: a program not installed
        return (f"command not found: {command} (not on PATH; install it or fix the server's \"command\")"
                if isinstance(e, FileNotFoundError) else f"cannot run {command}: {e.strerror}")
    msg = str(e) or type(e).__name__
    return msg if type(e).__name__ in ("MCPError", "McpError") else f"{type(e).__name__}: {msg}"


class Connection:
    """One server: its status, its tools, and (for a real server) the task owning the client."""

    def __init__(self, cfg: ServerConfig, cwd: Path, env: dict[str, str], authorizer: Any = None) -> None:
        self.cfg, self.name = cfg, cfg.name
        self.authorizer = authorizer  # oauth.Authorizer: this run may do a login's browser step
        self.login_needed = False  # the server asked for a login this run may not do (needs-auth)
        self.asks: Any = None  # asks.Asks: the answers to the server's elicitation, sampling, roots
        self.part: str | None = None  # the server's name in tool names (mcp__<part>__...)
        self.prompts: list[Any] = []  # mcp_types.Prompt, as listed (offered as /mcp__<part>__<prompt>)
        self.cwd, self.env = cwd, env
        self.status = "pending"
        self.error: str | None = None
        self.client: Any = None  # mcp.Client once connected
        self.tools: list[Any] = []  # mcp_types.Tool, as listed
        self.has_resources = False
        self.server_version: str | None = None
        self.server_info: Any = None  # the initialize answer's serverInfo (name, version)
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
            if self.login_needed:
                from .oauth import login_line

                self.fail(login_line(self.name))
                self.status = "needs-auth"
                return
            why = (f"did not start within {timeout:g} s (MCP_TIMEOUT)" if isinstance(e, TimeoutError)
                   else _reason(e, self.cfg.command if self.cfg.type == "stdio" else ""))
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

            http = await stack.enter_async_context(create_mcp_http_client(headers=cfg.headers or None,
                                                                          auth=await self._auth()))
            transport = streamable_http_client(cfg.url, http_client=http)
        else:
            from mcp.client.sse import sse_client

            transport = sse_client(cfg.url, headers=cfg.headers or None, auth=await self._auth())
        from mcp_types import Implementation

        from .. import __version__

        callbacks = self.asks.callbacks(self.name, self.part) if self.asks is not None else {}
        client = Client(transport, cache=None, client_info=Implementation(name="loopwright", version=__version__),
                        **callbacks)
        return await stack.enter_async_context(client)

    async def _auth(self) -> Any:
        """The server's OAuth client (oauth.py), unless its configuration sends its own Authorization."""
        if any(k.lower() == "authorization" for k in self.cfg.headers):
            return None
        from .oauth import provider, resolve_issuer

        def needed() -> None:
            self.login_needed = True

        return provider(self.name, self.cfg.url, await resolve_issuer(self.cfg.url, self.cfg.oauth), self.authorizer,
                        needed)

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
        if getattr(caps, "prompts", None) is not None:
            from mcp import MCPError

            try:
                self.prompts = list((await client.list_prompts()).prompts)
            except MCPError:
                self.prompts = []
        info = client.server_info
        self.server_info = info  # (its name and version go with each call's details: results.mcp_details)
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

        timeout = env_seconds("MCP_TOOL_TIMEOUT", TOOL_TIMEOUT_MS, {**os.environ, **self.env})
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
        return await checked_output(result, ctx, self.server_info)


def _is_timeout(e: BaseException) -> bool:
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return isinstance(e, TimeoutError)
