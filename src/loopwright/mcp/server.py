"""Room: cli. Owns `loopwright mcp serve`; may import assemble, cli.config and below.

`loopwright mcp serve`: loopwright's built-in tools as an MCP server over stdio.

Read, Write, Edit, MultiEdit, Bash, BashOutput, KillShell, Glob, Grep and TodoWrite, under
their own names, with `readOnlyHint` set for the read-only ones, so Claude Code, Claude
Desktop or any MCP client can use them. Every call goes through loopwright's gate and hooks
(the Executor), configured as a `-p` run is: settings files, `--permission-mode`,
`--allowedTools`, `--disallowedTools`, `--add-dir`. The server cannot ask anyone, so a call
that needs approval is refused with an isError result saying which flag allows it; writes
stay confined to the working directories.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import TYPE_CHECKING, Any

from ..blocks import ImageBlock, TextBlock, ToolUseBlock
from ..extras import require
from .serve_stdio import Serving, serve_stdio

if TYPE_CHECKING:  # (imported when the server is built, after `initialize` is answered)
    from ..execute import Executor
    from ..options import AgentOptions
    from ..tools.base import Tool


def build_executor(options: AgentOptions) -> tuple[list[Tool], Executor]:
    """The served tools and the gate they run behind, from the options of `mcp serve` (built by
    its CLI, cli/mcp.py: cwd, permission mode, rules, add-dirs, settings); the tools are the
    server's own choice, whatever `options.tools` holds."""
    from ..assemble import build_gate
    from ..tools.builtin import default_tools
    from ..tools.web import NAMES as WEB_TOOLS

    # The web tools answer through the run's model and settings, which a served tool has not; the
    # client has its own user: questions and plans are its business, not its tools'.
    tools = [t for t in default_tools() if t.name not in (*WEB_TOOLS, "AskUserQuestion", "ExitPlanMode")]
    return build_gate(dataclasses.replace(options, tools=tools))


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


# What the server declares (one place: the SDK server is given these, and stdio's early answer to
# `initialize` says them before the SDK is loaded).
CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": False}}
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # the SDK's, oldest first


def server_info() -> dict[str, Any]:
    from .. import __version__

    return {"name": "loopwright", "version": __version__}


def early_answer(params: Any) -> dict[str, Any] | None:
    """The result of `initialize` with these params, as the SDK would answer it (its version
    negotiation: the client's version when the server speaks it, else the newest), or None for
    params not plainly well-formed (the SDK then answers, with its error)."""
    if not isinstance(params, dict):
        return None
    version, info = params.get("protocolVersion"), params.get("clientInfo")
    if not (isinstance(version, str) and isinstance(params.get("capabilities"), dict) and isinstance(info, dict)
            and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        return None
    return {"protocolVersion": version if version in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
            "capabilities": CAPABILITIES, "serverInfo": server_info()}


def make_server(tools: list[Tool], executor: Executor) -> Any:
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    listed = [types.Tool(name=t.name, description=t.description, input_schema=t.input_schema,
                         annotations=types.ToolAnnotations(read_only_hint=t.read_only,
                                                           destructive_hint=not t.read_only))
              for t in tools]
    names = {t.name for t in tools}

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: Any) -> Any:
        if params.name not in names:  # the spec's answer to an unknown tool is a protocol error
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        use = ToolUseBlock(f"mcp_{uuid.uuid4().hex[:12]}", params.name, dict(params.arguments or {}))
        outcome = await executor.run([use])
        r = outcome.results[0]
        return types.CallToolResult(content=to_mcp_content(r.content), is_error=bool(r.is_error))

    info = server_info()
    return Server(info["name"], version=info["version"], on_list_tools=list_tools, on_call_tool=call_tool)


def initialization_options() -> Any:
    """The SDK's InitializationOptions from CAPABILITIES and server_info()."""
    import mcp_types as types
    from mcp.server.models import InitializationOptions

    info = server_info()
    return InitializationOptions(server_name=info["name"], server_version=info["version"],
                                 capabilities=types.ServerCapabilities.model_validate(CAPABILITIES))


def load(options: AgentOptions) -> Serving:
    """Import the SDK, build the tools and the server: what serving needs, after `initialize`."""
    tools, executor = build_executor(options)
    server = make_server(tools, executor)

    async def run(read: Any, write: Any) -> None:
        await server.run(read, write, initialization_options())

    async def close() -> None:
        if executor.ctx.state.bash.shells:  # background shells end with the server
            from ..tools.bash import kill_all_shells

            await kill_all_shells(executor.ctx)

    return Serving(run, close)


def serve_main(options: AgentOptions) -> int:
    """`loopwright mcp serve`: serve on stdio until the client closes it."""
    require("loopwright mcp serve", "mcp", "mcp", "mcp_types")
    return serve_stdio(lambda: load(options), early_answer)
