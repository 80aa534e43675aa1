"""Room: cli. Owns `loopwright mcp serve`; may import assemble, cli.config and below.

`loopwright mcp serve`: loopwright's built-in tools as an MCP server, over stdio (serve_stdio.py)
or streamable HTTP (serve_http.py).

Read, Write, Edit, MultiEdit, Bash, BashOutput, KillShell, Glob, Grep and TodoWrite, under
their own names, with `readOnlyHint` set for the read-only ones, so Claude Code, Claude
Desktop or any MCP client can use them. Every call goes through loopwright's gate and hooks
(the Executor), configured as a `-p` run is: settings files, `--permission-mode`,
`--allowedTools`, `--disallowedTools`, `--add-dir`. The server cannot ask anyone, so a call
that needs approval is refused with an isError result saying which flag allows it; writes
stay confined to the working directories.

Beside the tools: the working directories' files as resources, read through the same gate
(serve_resources.py), the project's commands and skills as prompts (serve_prompts.py), completion
of a resource path, `logging/setLevel` and log messages (a call's start at debug, a refusal at
warning), progress notifications while a call runs (every PROGRESS_EVERY seconds, when the client
asked with a progress token), and `ping`. `--conformance-fixtures` adds the suite's test items
(serve_fixtures.py).
"""

from __future__ import annotations

import time
import uuid
import warnings
import weakref
from typing import TYPE_CHECKING, Any

from ..blocks import ImageBlock, TextBlock, ToolUseBlock
from ..extras import require
from .serve_core import Core, StdioApp, server_info
from .serve_stdio import Serving, serve_stdio

if TYPE_CHECKING:  # (imported when the server is built, after the first requests are answered)
    from ..execute import Executor
    from ..options import AgentOptions


def to_mcp_content(content: Any) -> list[Any]:
    import mcp_types as types

    if isinstance(content, str):
        return [types.TextContent(text=content)]
    out: list[Any] = []
    for b in content:
        if isinstance(b, TextBlock):
            out.append(types.TextContent(text=b.text))
        elif isinstance(b, ImageBlock) and b.source.get("type") == "base64":
            out.append(types.ImageContent(data=b.source["data"], mime_type=b.source["media_type"]))
        else:
            out.append(types.TextContent(text=str(b.to_wire())))
    return out


LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
PROGRESS_EVERY = 1.0


def _connection(ctx: Any) -> Any:
    """The SDK's connection object of a request, which outlives the per-request session objects (an
    HTTP session's requests each have their own)."""
    return getattr(ctx.session, "_connection", ctx.session)


class Handlers:
    """The SDK server's request handlers, on one Core (built when the SDK is loaded)."""

    def __init__(self, core: Core) -> None:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        from . import serve_fixtures as fx
        from .serve_resources import Watches

        self.core, self.types, self.error, self.fx = core, types, MCPError, fx
        self.listed = types.ListToolsResult.model_validate({"tools": core.tool_list})
        self.watches = Watches(core.files)
        # the level each connection asked for (none asked: info)
        self.levels: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

    def refused(self, e: Exception) -> Exception:
        """A refusal as the protocol error the spec has for bad params."""
        return self.error(self.types.INVALID_PARAMS, str(e))

    async def log(self, ctx: Any, level: str, text: str) -> None:
        if LEVELS.index(level) >= self.levels.get(_connection(ctx), 1):
            try:
                await ctx.session.send_log_message(level, text, logger="loopwright",
                                                   related_request_id=ctx.request_id)
            except Exception:  # noqa: BLE001 - a client gone mid-call: its log is of no use
                pass

    async def set_level(self, ctx: Any, params: Any) -> Any:
        self.levels[_connection(ctx)] = LEVELS.index(params.level)
        return self.types.EmptyResult()

    async def list_tools(self, ctx: Any, params: Any) -> Any:
        return self.listed

    async def call_tool(self, ctx: Any, params: Any) -> Any:
        types, core = self.types, self.core
        if core.fixtures and params.name in self.fx.TOOLS:
            said = await self.fx.call(params.name, dict(params.arguments or {}), ctx,
                                      lambda level, text: self.log(ctx, level, text))
            return types.CallToolResult.model_validate(said)
        if params.name not in core.names:  # the spec's answer to an unknown tool is a protocol error
            raise self.error(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        use = ToolUseBlock(f"mcp_{uuid.uuid4().hex[:12]}", params.name, dict(params.arguments or {}))
        await self.log(ctx, "debug", f"{params.name} called")
        outcome = await with_progress(ctx, params.name, core.executor.run([use]))
        r = outcome.results[0]
        if outcome.denials:
            await self.log(ctx, "warning", f"{params.name} refused: {str(r.content)[:300]}")
        return types.CallToolResult(content=to_mcp_content(r.content), is_error=bool(r.is_error))

    async def list_resources(self, ctx: Any, params: Any) -> Any:
        page = await self.core.resource_page(getattr(params, "cursor", None) if params is not None else None)
        return self.types.ListResourcesResult.model_validate(page)

    async def list_templates(self, ctx: Any, params: Any) -> Any:
        templates = [{"uriTemplate": self.core.files.template(), "name": "workspace file",
                      "description": "a file of the working directory, by its relative path"}]
        return self.types.ListResourceTemplatesResult.model_validate(
            {"resourceTemplates": [*templates, *(self.fx.TEMPLATES if self.core.fixtures else [])]})

    async def read_resource(self, ctx: Any, params: Any) -> Any:
        from .serve_resources import Refused

        uri = str(params.uri)
        fixture = self.fx.read(uri) if self.core.fixtures else None
        try:
            contents = fixture or await self.core.files.read(uri)
        except Refused as e:
            raise self.refused(e) from None
        return self.types.ReadResourceResult.model_validate({"contents": [contents]})

    async def subscribe(self, ctx: Any, params: Any) -> Any:
        from .serve_resources import Refused

        uri = str(params.uri)
        if not (self.core.fixtures and self.fx.read(uri) is not None):  # (the fixtures' are accepted, never change)
            try:
                await self.watches.subscribe(id(_connection(ctx)), uri, ctx.session.send_resource_updated)
            except Refused as e:
                raise self.refused(e) from None
        return self.types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: Any) -> Any:
        self.watches.unsubscribe(id(_connection(ctx)), str(params.uri))
        return self.types.EmptyResult()

    async def list_prompts(self, ctx: Any, params: Any) -> Any:
        return self.types.ListPromptsResult.model_validate({"prompts": self.core.prompt_list()})

    async def get_prompt(self, ctx: Any, params: Any) -> Any:
        from .serve_prompts import Refused

        args = dict(params.arguments or {})
        fixture = self.fx.prompt(params.name, args) if self.core.fixtures else None
        try:
            got = fixture or self.core.prompts.get(params.name, args)
        except Refused as e:
            raise self.refused(e) from None
        return self.types.GetPromptResult.model_validate(got)

    async def complete(self, ctx: Any, params: Any) -> Any:
        ref, arg = params.ref, params.argument
        values: list[str] = []
        if getattr(ref, "uri", None) == self.core.files.template() and arg.name == "path":
            values = await self.core.files.complete(arg.value)
        return self.types.CompleteResult(completion=self.types.Completion(values=values, has_more=False))


def make_server(core: Core) -> Any:
    """The SDK's lowlevel Server with loopwright's tools, resources, prompts and the rest."""
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPDeprecationWarning

    # logging/setLevel and log messages are deprecated as of MCP 2026-07-28, still in the versions served
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    h = Handlers(core)
    info = server_info()
    return Server(info["name"], version=info["version"], on_list_tools=h.list_tools, on_call_tool=h.call_tool,
                  on_list_resources=h.list_resources, on_list_resource_templates=h.list_templates,
                  on_read_resource=h.read_resource, on_list_prompts=h.list_prompts, on_get_prompt=h.get_prompt,
                  on_completion=h.complete, on_set_logging_level=h.set_level,
                  on_subscribe_resource=h.subscribe, on_unsubscribe_resource=h.unsubscribe)


async def with_progress(ctx: Any, name: str, work: Any) -> Any:
    """Await `work`, telling the client every PROGRESS_EVERY seconds how long the call has run
    (only when it asked, with a progress token)."""
    import anyio

    meta = ctx.meta or {}
    if meta.get("progress_token", meta.get("progressToken")) is None:
        return await work
    start = time.monotonic()
    done: list[Any] = []

    async def run() -> None:
        done.append(await work)
        tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        while True:
            await anyio.sleep(PROGRESS_EVERY)
            ran = time.monotonic() - start
            await ctx.session.report_progress(ran, None, f"{name}: running for {ran:.0f}s")
    return done[0]


def load_core(core: Core) -> Serving:
    """The SDK server on `core`: what serving on stdio needs, after the early answers."""
    server = make_server(core)

    async def run(read: Any, write: Any) -> None:
        await server.run(read, write, server.create_initialization_options())

    return Serving(run, closer(core.executor))


def closer(executor: Executor) -> Any:
    async def close() -> None:
        if executor.ctx.state.bash.shells:  # background shells end with the server
            from ..tools.bash import kill_all_shells

            await kill_all_shells(executor.ctx)

    return close


def serve_main(options: AgentOptions, http: str | None = None, token_file: str | None = None,
               allow_hosts: list[str] | None = None, fixtures: bool = False, no_auth: bool = False) -> int:
    """`loopwright mcp serve`: on stdio until the client closes it, or on HTTP until interrupted."""
    require("loopwright mcp serve", "mcp", "mcp", "mcp_types")
    if http is None:
        for flag, given in (("--auth-token-file", token_file), ("--allow-host", allow_hosts), ("--no-auth", no_auth)):
            if given:
                raise ValueError(f"{flag} is for --http; the stdio server has no HTTP requests to check")
        return serve_stdio(StdioApp(options, fixtures, load_core))
    from .serve_http import serve_http

    core = Core(options, fixtures)
    return serve_http(make_server(core), http, token_file, list(allow_hosts or []), closer(core.executor), no_auth)
