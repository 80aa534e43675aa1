"""Room: mcp. Owns McpRuntime (the run's servers and their tools); may import tools.base, mcp.config, mcp.naming, mcp.connection.

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
import logging
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..extras import missing_extra
from ..tools.base import Tool, ToolContext, ToolOutput
from . import naming
from .config import ServerConfig
from .connection import START_TIMEOUT_MS, STOP_BOUND_S, TOOL_TIMEOUT_MS, Connection, env_seconds
from .resources import LIST_RESOURCES, READ_RESOURCE, resource_tools
from .results import cap, content_blocks, max_output_chars, resource_blocks, result_output

log = logging.getLogger("loopwright.mcp")

__all__ = ["LIST_RESOURCES", "READ_RESOURCE", "START_TIMEOUT_MS", "TOOL_TIMEOUT_MS", "Connection", "McpRuntime",
           "cap", "content_blocks", "env_seconds", "max_output_chars", "resource_blocks", "resource_tools",
           "result_output", "schema_problem"]


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

    def __init__(self, configs: list[ServerConfig], cwd: Path, env: dict[str, str] | None = None,
                 authorizer: Any = None) -> None:
        """`authorizer` (oauth.Authorizer): how a login's browser step is done in this run; by default
        only when LOOPWRIGHT_MCP_AUTHORIZE=browser says so (else a server needing one is needs-auth)."""
        _sdk_logs_to_file()
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        self.warnings: list[str] = []  # logged as they come
        self.init_warnings: list[str] = []  # for the init message's warnings (set by open)
        if authorizer is None and any(c.type in ("http", "sse") for c in configs):
            from .oauth import authorizer_from_env

            try:
                authorizer = authorizer_from_env(self.env)
            except ValueError as e:
                self._warn(str(e))
        self.connections = [Connection(c, cwd, self.env, authorizer) for c in configs]
        self.parts, self.clashes = naming.unique_server_parts([c.name for c in configs])
        from .asks import Asks

        self.asks = Asks(cwd)  # elicitation, sampling, roots (asks.py); `bind` gives it the run
        for c in self.connections:
            c.asks, c.part = self.asks, self.parts.get(c.name)

    def bind(self, run: Any) -> None:
        """The run whose model, gate, budget and directories answer the servers' requests (asks.py)."""
        self.asks.run = run

    async def expand_prompt(self, text: str) -> tuple[list[Any] | None, str | None]:
        """`/mcp__<server>__<prompt> args` as the prompt's messages (prompts.py): (blocks, None), or
        (None, why not) for a command naming no listed prompt; (None, None) for other text."""
        from .prompts import expand

        return await expand(self.connections, text)

    def prompt_commands(self) -> list[tuple[str, str]]:
        """The connected servers' prompts as slash commands: (name without the slash, description)."""
        from .prompts import commands

        return commands(self.connections)

    def status(self) -> list[dict[str, Any]]:
        return [c.info() for c in self.connections]

    def get(self, name: str) -> Connection | None:
        return next((c for c in self.connections if c.name == name), None)

    async def start(self) -> None:
        import importlib.util

        timeout = env_seconds("MCP_TIMEOUT", START_TIMEOUT_MS, self.env)  # (the settings' env too)
        if any(c.authorizer is not None for c in self.connections):  # a person may be logging in meanwhile
            from .oauth import LOGIN_TIMEOUT_S

            timeout = max(timeout, LOGIN_TIMEOUT_S)
        sdk_missing = importlib.util.find_spec("mcp") is None
        starting: list[Connection] = []
        for conn in self.connections:
            cfg = conn.cfg
            if cfg.needs_approval:
                conn.status = "needs-approval"
                conn.error = (f'a project server from .mcp.json: approve it with {{"enabledMcpjsonServers": '
                              f'["{conn.name}"]}} in .loopwright/settings.local.json (or "enableAllProjectMcpServers": '
                              'true for all of them)')
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
        # A login needed: the init message's warning (-p prints it, one line), not a log line as well.
        self.init_warnings = [c.error for c in self.connections if c.status == "needs-auth" and c.error]
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
            out.extend(resource_tools(self.connections))
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
            out.append(Tool(names[t.name], _description(t.description or t.name), t.input_schema,
                            _caller(conn, t.name), read_only=bool(ann is not None and ann.read_only_hint)))
        return out

    def _sdk_tools(self, conn: Connection, part: str) -> list[Tool]:
        server = conn.cfg.instance
        names = naming.tool_names(part, [t.name for t in server.tools])
        out = []
        for t in server.tools:
            async def handler(x: dict[str, Any], ctx: ToolContext, _t: Tool = t) -> ToolOutput:
                return await _t.call(x, ctx, in_thread=True)

            # (cut as any server's: every request carries every tool's description)
            out.append(Tool(names[t.name], _description(t.description), t.input_schema, handler, read_only=t.read_only))
        return out

    async def call_for_hook(self, server: str, tool: str, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """An mcp_tool hook's call: `tool` of the configured server named `server`, whatever the
        run's tool rules offer the model (the user configured the hook). Raises LookupError for
        a server or tool that is not there, ToolError for one that is not connected."""
        conn = self.get(server)
        if conn is None:
            raise LookupError(f"no MCP server named {server!r} is configured")
        if conn.cfg.type == "sdk":
            found = next((t for t in conn.cfg.instance.tools if t.name == tool), None)
            if found is None:
                raise LookupError(f"MCP server {server!r} has no tool {tool!r}")
            out: ToolOutput = await found.call(args, ctx, in_thread=True)
            return out
        return await conn.call_tool(tool, args, ctx)

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


MAX_DESCRIPTION = 4096  # characters of an MCP tool's description, as Claude Code (CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH)
MAX_SCHEMA_BYTES = 100_000  # of a tool's input schema as JSON: every request carries it
_CUT = "\u2026 [truncated]"


def _description(text: str) -> str:
    """A server's tool description, cut as Claude Code cuts it: each request carries every tool's
    (a server's 5 MB description made every call of the run cost a million tokens, or fail)."""
    raw = os.environ.get("CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH", "")
    cap = int(raw) if raw.strip().isdigit() and int(raw) > len(_CUT) else MAX_DESCRIPTION
    return text if len(text) <= cap else text[:cap - len(_CUT)] + _CUT


def schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "is not a JSON Schema with type \"object\""
    import json

    size = len(json.dumps(schema, ensure_ascii=False))
    if size > MAX_SCHEMA_BYTES:
        return f"is {size:,} characters of JSON, over the {MAX_SCHEMA_BYTES:,} every request would carry"
    from ..tools.schema import remote_refs

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
