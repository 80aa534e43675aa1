"""Room: cli. Owns /mcp: the MCP servers this session starts, their status and tools, and
reconnecting one; may import the rooms below cli and cli.commands' host and panel.

A run opens its servers when it starts (mcp/), so every prompt connects afresh. `/mcp` shows
the servers configured (name, scope, file), the status each had at the last run's start (or
"not started yet"), and their tools; `/mcp reconnect NAME` connects that server now and says
what it answers (status, error, tools): the next prompt's run connects it again the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .host import Command, Host
from .panel import Panel


def configured(host: Host) -> list[Any]:
    """The servers a run of the session's options starts (mcp.config.ServerConfig)."""
    from ...mcp.config import for_run
    from ...runconfig import build_run_config

    options = host.client.options
    cwd = Path(host.cwd()).resolve()
    notes: list[str] = []
    return for_run(options, cwd, build_run_config(options, cwd).settings, notes)


async def probe(host: Host, configs: list[Any]) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """Connect `configs` now: each server's status and its tools (by server name); all closed after."""
    from ...mcp.client import McpRuntime

    runtime = McpRuntime(configs, Path(host.cwd()).resolve(), dict(host.client.options.env or {}))
    try:
        await runtime.start()
        tools = runtime.tools()
        by_server: dict[str, list[Any]] = {}
        for t in tools:
            server = next((c.name for c in configs if t.name.startswith(f"mcp__{c.name}__")), "?")
            by_server.setdefault(server, []).append(t)
        return runtime.status(), by_server
    finally:
        await runtime.aclose()


async def prompt_entries(host: Host) -> list[tuple[str, str]]:
    """The configured servers' prompts as / menu entries (name without the slash, description):
    each server is connected once for its list, then closed. A server that fails lists nothing
    here (its run says why); so does a configuration that cannot be read."""
    from ...mcp.client import McpRuntime

    try:
        configs = [c for c in configured(host) if not c.error and not c.needs_approval]
    except Exception:  # noqa: BLE001 - the run names a bad configuration; the menu just lacks it
        return []
    if not configs:
        return []
    runtime = McpRuntime(configs, Path(host.cwd()).resolve(), dict(host.client.options.env or {}))
    try:
        await runtime.start()
        return runtime.prompt_commands()
    except Exception:  # noqa: BLE001 - as above: the run reports the server's failure
        return []
    finally:
        await runtime.aclose()


async def mcp(host: Host, arg: str) -> None:
    verb, _, name = arg.partition(" ")
    configs = configured(host)
    if verb in ("reconnect", "connect"):
        chosen = [c for c in configs if c.name == name.strip()]
        if not chosen:
            host.say(f"  no MCP server {name.strip()!r} (servers: {', '.join(c.name for c in configs) or 'none'})")
            return
        host.say(f"  connecting {chosen[0].name}…")
        status, tools = await probe(host, chosen)
        s = status[0]
        listed = ", ".join(t.name.split("__", 2)[-1] for t in tools.get(chosen[0].name, []))
        host.say(f"  {s['name']}: {s['status']}{': ' + s['error'] if s.get('error') else ''}"
                 f"{' · tools: ' + listed if listed else ''} (the next prompt connects it again)")
        return
    if verb:
        host.say("  /mcp [reconnect NAME]")
        return
    if not configs:
        host.open_panel(Panel("MCP servers", ["no MCP servers configured (loopwright mcp add, .mcp.json, --mcp-config)"]))
        return
    status, tools = await probe(host, configs)
    by_name = {s["name"]: s for s in status}
    lines: list[str] = []
    for c in configs:
        s = by_name.get(c.name, {"status": "?"})
        where = c.source or c.scope
        lines.append(f"{c.name}  [{s['status']}]  {c.type} · {c.scope} · {where}")
        if s.get("error"):
            lines.append(f"    ✗ {s['error']}")
        for t in tools.get(c.name, []):
            lines.append(f"    {t.name}  {(t.description or '').splitlines()[0][:70] if t.description else ''}")
    host.open_panel(Panel("MCP servers", lines, "/mcp reconnect NAME"))


COMMANDS = [Command("mcp", "the MCP servers, their status and tools; reconnect one", mcp,
                    usage="/mcp [reconnect NAME]")]
