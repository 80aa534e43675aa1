"""A real MCP server for the tests, written with the official `mcp` SDK (low-level Server).

    python mcp_test_server.py [--mode normal|exit|broken-schema|slow-start] [--log FILE]
                              [--pid-file FILE] [--http PORT | --sse PORT]

`--http 0` / `--sse 0`: the server listens on a port of its own and prints it (one line on stdout).

Tools: echo (readOnlyHint), slow_read (readOnlyHint; logs start/end times to --log), write_note,
crash (the process exits mid-call), hang (never answers; logs "cancelled" when the client
cancels it), image, structured, big, fail (isError), weird.name (a name to sanitise). One
resource: note://readme. `--mode exit` exits before the handshake; `broken-schema` adds a
tool with an invalid input schema; `slow-start` sleeps 30 s before serving.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"  # 1x1 px, decodes

OBJ: dict[str, Any] = {"type": "object", "properties": {}}


def tools(mode: str) -> list[Any]:
    import mcp_types as types

    RO = types.ToolAnnotations(read_only_hint=True)
    out = [
        types.Tool(name="echo", description="Echo the text back.", annotations=RO,
                   input_schema={"type": "object", "properties": {"text": {"type": "string"}},
                                 "required": ["text"]}),
        types.Tool(name="slow_read", description="Read slowly (for overlap tests).", annotations=RO,
                   input_schema={"type": "object", "properties": {"tag": {"type": "string"},
                                                                  "seconds": {"type": "number"}},
                                 "required": ["tag"]}),
        types.Tool(name="write_note", description="Write a note (not read-only).",
                   input_schema={"type": "object", "properties": {"text": {"type": "string"}},
                                 "required": ["text"]}),
        types.Tool(name="crash", description="Exit mid-call.", input_schema=OBJ),
        types.Tool(name="hang", description="Never answer.", input_schema=OBJ),
        types.Tool(name="image", description="A 1x1 PNG.", input_schema=OBJ, annotations=RO),
        types.Tool(name="structured", description="Structured content only.", input_schema=OBJ),
        types.Tool(name="big", description="n characters of output.",
                   input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        types.Tool(name="fail", description="An isError result.", input_schema=OBJ),
        types.Tool(name="weird.name", description="A name with a dot.", input_schema=OBJ),
    ]
    if mode == "broken-schema":
        out.append(types.Tool(name="broken", description="Invalid schema.",
                              input_schema={"type": "object", "properties": {"x": {"type": "nonsense"}}}))
    return out


def log(path: str | None, line: str) -> None:
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def build(mode: str, log_path: str | None) -> Any:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools(mode))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, args = params.name, params.arguments or {}

        def text(s: str, error: bool = False) -> types.CallToolResult:
            return types.CallToolResult(content=[types.TextContent(text=s)], is_error=error)

        if name == "echo":
            return text(f"echo: {args['text']}")
        if name == "slow_read":
            log(log_path, f"start {args['tag']} {time.time()}")
            await anyio.sleep(float(args.get("seconds", 0.5)))
            log(log_path, f"end {args['tag']} {time.time()}")
            return text(f"read {args['tag']}")
        if name == "write_note":
            log(log_path, f"note {args['text']}")
            return text("written")
        if name == "crash":
            os._exit(3)
        if name == "hang":
            log(log_path, "hang started")
            try:
                await anyio.sleep(3600)
            except anyio.get_cancelled_exc_class():
                log(log_path, "cancelled")
                raise
        if name == "image":
            return types.CallToolResult(content=[types.TextContent(text="a pixel:"),
                                                 types.ImageContent(data=PNG, mime_type="image/png")])
        if name == "structured":
            return types.CallToolResult(content=[], structured_content={"temperature": 21.5, "unit": "C"})
        if name == "big":
            return text("x" * int(args["n"]))
        if name == "fail":
            return text("it went wrong", error=True)
        if name == "weird.name":
            return types.CallToolResult(content=[types.EmbeddedResource(
                resource=types.TextResourceContents(uri="note://readme", text="embedded text"))])
        return text(f"unknown tool {name}", error=True)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri="note://readme", name="readme",
                                                                   mime_type="text/plain")])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text="the readme text",
                                                                             mime_type="text/plain")])

    return Server("test-server", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_resources=list_resources, on_read_resource=read_resource)


def plain(log_path: str | None) -> None:
    """`--mode plain`: the same protocol by hand with the standard library (no SDK import, so it
    starts in milliseconds), for tests about the CLI and the lifecycle rather than the SDK:
    answers initialize, tools/list (echo, hang) and tools/call; `hang` never answers."""
    import json

    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method, rid = msg.get("method"), msg["id"]
        if method == "initialize":
            res: dict[str, Any] = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                                   "serverInfo": {"name": "plain", "version": "1"}}
        elif method == "tools/list":
            res = {"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
                             {"name": "hang", "inputSchema": OBJ}]}
        elif method == "tools/call" and msg["params"]["name"] == "echo":
            res = {"content": [{"type": "text", "text": f"echo: {msg['params']['arguments'].get('text')}"}]}
        elif method == "tools/call" and msg["params"]["name"] == "hang":
            log(log_path, "hang started")
            continue
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": res}) + "\n")
        sys.stdout.flush()


def listen(app: Any, port: int) -> None:
    """Serve `app` on 127.0.0.1:`port`; with port 0, on one the socket is given, printed once it
    listens (a port found free and handed over could be taken by another process meanwhile)."""
    import socket

    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)  # a client may connect now: it waits in the backlog until uvicorn accepts
    print(sock.getsockname()[1], flush=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing more on stdout: no one reads it
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="normal")
    p.add_argument("--log")
    p.add_argument("--pid-file")
    p.add_argument("--http", type=int)
    p.add_argument("--sse", type=int, help="serve the legacy SSE transport (an MCPServer with echo only)")
    a = p.parse_args()
    if a.pid_file:
        with open(a.pid_file, "a") as f:
            f.write(f"{os.getpid()}\n")
    if a.mode == "exit":  # before the SDK is even imported: a server that dies at once
        print("test server: refusing to start (mode exit)", file=sys.stderr)
        sys.exit(7)
    if a.mode == "plain":
        plain(a.log)
        return
    if a.mode == "slow-start":
        time.sleep(30)
    if a.sse is not None:
        from mcp.server.mcpserver import MCPServer

        legacy = MCPServer("sse-test")

        @legacy.tool()
        def echo(text: str) -> str:
            """Echo the text back."""
            return f"echo: {text}"

        listen(legacy.sse_app(), a.sse)
        return
    server = build(a.mode, a.log)
    if a.http is not None:
        listen(server.streamable_http_app(), a.http)
        return

    import anyio

    async def serve() -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
