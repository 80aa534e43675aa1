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


def make_server(core: Core) -> Any:
    """The SDK's lowlevel Server with loopwright's tools, resources, prompts and the rest."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

    from . import serve_fixtures as fx
    from .serve_prompts import Refused as PromptRefused
    from .serve_resources import Refused, Watches

    # logging/setLevel and log messages are deprecated as of MCP 2026-07-28, still in the versions served
    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    executor, files, prompts, fixtures = core.executor, core.files, core.prompts, core.fixtures
    listed = types.ListToolsResult.model_validate({"tools": core.tool_list})
    watches = Watches(files)
    # the level each connection asked for (none asked: info); by the SDK's connection object, which
    # outlives the per-request session objects (an HTTP session's requests each have their own)
    levels: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

    def connection(ctx: Any) -> Any:
        return getattr(ctx.session, "_connection", ctx.session)

    async def log(ctx: Any, level: str, text: str) -> None:
        if LEVELS.index(level) >= levels.get(connection(ctx), 1):
            try:
                await ctx.session.send_log_message(level, text, logger="loopwright",
                                                   related_request_id=ctx.request_id)
            except Exception:  # noqa: BLE001 - a client gone mid-call: its log is of no use
                pass

    async def set_level(ctx: Any, params: Any) -> Any:
        levels[connection(ctx)] = LEVELS.index(params.level)
        return types.EmptyResult()

    async def list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def call_tool(ctx: Any, params: Any) -> Any:
        if fixtures and params.name in fx.TOOLS:
            said = await fx.call(params.name, dict(params.arguments or {}), ctx,
                                 lambda level, text: log(ctx, level, text))
            return types.CallToolResult.model_validate(said)
        if params.name not in core.names:  # the spec's answer to an unknown tool is a protocol error
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        use = ToolUseBlock(f"mcp_{uuid.uuid4().hex[:12]}", params.name, dict(params.arguments or {}))
        await log(ctx, "debug", f"{params.name} called")
        outcome = await with_progress(ctx, params.name, executor.run([use]))
        r = outcome.results[0]
        if outcome.denials:
            await log(ctx, "warning", f"{params.name} refused: {str(r.content)[:300]}")
        return types.CallToolResult(content=to_mcp_content(r.content), is_error=bool(r.is_error))

    async def list_resources(ctx: Any, params: Any) -> Any:
        page = await core.resource_page(getattr(params, "cursor", None) if params is not None else None)
        return types.ListResourcesResult.model_validate(page)

    async def list_templates(ctx: Any, params: Any) -> Any:
        templates = [{"uriTemplate": files.template(), "name": "workspace file",
                      "description": "a file of the working directory, by its relative path"}]
        return types.ListResourceTemplatesResult.model_validate(
            {"resourceTemplates": [*templates, *(fx.TEMPLATES if fixtures else [])]})

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        fixture = fx.read(uri) if fixtures else None
        try:
            contents = fixture or await files.read(uri)
        except Refused as e:
            raise MCPError(types.INVALID_PARAMS, str(e)) from None
        return types.ReadResourceResult.model_validate({"contents": [contents]})

    async def subscribe(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        if not (fixtures and fx.read(uri) is not None):  # (the fixtures' are accepted, never change)
            session = ctx.session
            try:
                await watches.subscribe(id(connection(ctx)), uri, session.send_resource_updated)
            except Refused as e:
                raise MCPError(types.INVALID_PARAMS, str(e)) from None
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: Any) -> Any:
        watches.unsubscribe(id(connection(ctx)), str(params.uri))
        return types.EmptyResult()

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult.model_validate({"prompts": core.prompt_list()})

    async def get_prompt(ctx: Any, params: Any) -> Any:
        args = dict(params.arguments or {})
        fixture = fx.prompt(params.name, args) if fixtures else None
        try:
            got = fixture or prompts.get(params.name, args)
        except PromptRefused as e:
            raise MCPError(types.INVALID_PARAMS, str(e)) from None
        return types.GetPromptResult.model_validate(got)

    async def complete(ctx: Any, params: Any) -> Any:
        ref, arg = params.ref, params.argument
        values: list[str] = []
        if getattr(ref, "uri", None) == files.template() and arg.name == "path":
            values = await files.complete(arg.value)
        return types.CompleteResult(completion=types.Completion(values=values, has_more=False))

    info = server_info()
    handlers: dict[str, Any] = dict(
        on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
        on_list_resource_templates=list_templates, on_read_resource=read_resource, on_list_prompts=list_prompts,
        on_get_prompt=get_prompt, on_completion=complete, on_set_logging_level=set_level)
    handlers.update(on_subscribe_resource=subscribe, on_unsubscribe_resource=unsubscribe)
    return Server(info["name"], version=info["version"], **handlers)


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
