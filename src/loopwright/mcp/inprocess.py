"""Room: mcp. Owns create_sdk_mcp_server; may import tools.base only.

In-process MCP servers, as the Agent SDK's `create_sdk_mcp_server(name, version, tools)`.

    calc = lw.create_sdk_mcp_server("calc", "1.0.0", tools=[add, mul])   # @lw.tool functions
    lw.AgentOptions(mcp_servers={"calc": calc}, allowed_tools=["mcp__calc"])

Its tools are offered as `mcp__calc__add`, ... and gated by the same rules as any MCP
server's; they run in this process (no subprocess, no protocol round trip, no SDK import).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..tools.base import Tool


@dataclass
class SdkMcpServer:
    """An MCP server of Python tools run in this process (create_sdk_mcp_server)."""

    name: str
    version: str = "1.0.0"
    tools: list[Tool] = field(default_factory=list)

    def __post_init__(self) -> None:
        for t in self.tools:
            if not isinstance(t, Tool):
                raise TypeError(f"create_sdk_mcp_server({self.name!r}): tools must be Tool objects "
                                f"(@lw.tool functions), got {type(t).__name__}")


def create_sdk_mcp_server(name: str, version: str = "1.0.0", tools: list[Tool] | None = None) -> SdkMcpServer:
    """An in-process MCP server of `@lw.tool` functions, for `AgentOptions(mcp_servers={name: server})`."""
    return SdkMcpServer(name, version, list(tools or []))
