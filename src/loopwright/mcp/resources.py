"""Room: mcp. Owns the ListMcpResources and ReadMcpResource tools; may import threads, tools.base, mcp.connection, mcp.results.

Offered (read-only) when a connected server has resources: the list of every server's (or one
server's) resources, and reading one by server and URI, capped as tool results are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..blocks import TextBlock
from ..threads import run_in_worker
from ..tools.base import Tool, ToolContext, ToolError, ToolOutput
from .connection import Connection
from .results import cap, resource_blocks

LIST_RESOURCES, READ_RESOURCE = "ListMcpResources", "ReadMcpResource"


def _get(connections: Sequence[Connection], name: str) -> Connection | None:
    return next((c for c in connections if c.name == name), None)


def resource_tools(connections: Sequence[Connection]) -> list[Tool]:
    """The two resource tools over the run's connections (the live list: its statuses change)."""
    async def list_resources(x: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        wanted = x.get("server")
        conns = [c for c in connections if c.status == "connected" and c.has_resources
                 and (wanted is None or c.name == wanted)]
        if wanted is not None and not conns:
            raise ToolError(f"No connected MCP server {wanted!r} with resources. Servers with resources: "
                            f"{', '.join(c.name for c in connections if c.has_resources) or 'none'}.")
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
        # the servers' words, cut as their tools' results are (a server listing thousands of
        # resources put megabytes into the history, carried by every later request)
        blocks = cap([TextBlock(json.dumps(items, ensure_ascii=False))], ctx)
        return ToolOutput(blocks[0].text if len(blocks) == 1 and isinstance(blocks[0], TextBlock) else blocks)

    async def read_resource(x: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        c = _get(connections, x["server"])
        if c is None:
            raise ToolError(f"No MCP server {x['server']!r}. Servers: {', '.join(s.name for s in connections)}.")
        client = c._usable()

        async def go(timeout: float) -> Any:
            import anyio

            with anyio.fail_after(timeout):
                return await client.read_resource(x["uri"])

        res = await c.request(f"reading {x['uri']}", go)
        # (in a worker thread: an image blob is decoded, seconds for a big one, mcp.results.checked_output)
        blocks = cap(await run_in_worker(resource_blocks, list(res.contents)), ctx)
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
