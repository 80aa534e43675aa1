"""An MCP server (the official SDK's MCPServer, stdio) that asks things of its client, for the tests.

Tools: `confirm` elicits {"color" (default "blue"), "count" (default 3)} and reports the answer;
`pick` elicits a required field without a default (a headless client declines); `haiku` asks the
client's model (sampling) and returns its words; `roots` lists the client's roots. Prompt:
`review` (argument `path`, required) -> one user message naming it.
"""

# (No `from __future__ import annotations`: the SDK reads the tools' annotations at runtime.)
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import SamplingMessage, TextContent
from pydantic import BaseModel


def main() -> None:
    server = MCPServer("asking")

    class Prefs(BaseModel):
        color: str = "blue"
        count: int = 3

    class Pick(BaseModel):
        choice: str

    @server.tool()
    async def confirm(ctx: Context) -> str:
        """Ask the user for preferences."""
        r = await ctx.elicit("Your preferences?", schema=Prefs)
        return f"{r.action}: {r.data.model_dump() if r.action == 'accept' else ''}"

    @server.tool()
    async def pick(ctx: Context) -> str:
        """Ask the user to pick (no default)."""
        r = await ctx.elicit("Pick one", schema=Pick)
        return f"{r.action}"

    @server.tool()
    async def haiku(topic: str, ctx: Context) -> str:
        """Ask the client's model for a haiku."""
        try:
            r = await ctx.session.create_message(
                messages=[SamplingMessage(role="user", content=TextContent(text=f"a haiku about {topic}"))],
                max_tokens=100)
        except Exception as e:  # noqa: BLE001 - the refusal is the tool's answer
            return f"sampling failed: {e}"
        return f"model {r.model} said: {r.content.text}"

    @server.tool()
    async def roots(ctx: Context) -> str:
        """The client's roots."""
        r = await ctx.session.list_roots()
        return "\n".join(str(x.uri) for x in r.roots)

    @server.prompt()
    def review(path: str) -> str:
        """Review a file carefully."""
        return f"Please review {path} for bugs."

    # Served in the handshake era only (2025-11-25, as most servers are today), where a server may send
    # requests mid-call; Server.run would serve the 2026-07-28 era to a client that opens with it.
    import anyio
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        low = server._lowlevel_server
        async with stdio_server() as (read, write), low.lifespan(low) as state:
            await serve_loop(low, read, write, lifespan_state=state)

    anyio.run(serve)


if __name__ == "__main__":
    main()
