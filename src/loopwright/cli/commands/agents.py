"""Room: cli. Owns /agents: the subagents this session's Agent tool can start (built-in, the
user's and the project's agent files, plugins', --agents) with their tools and model; may import
the rooms below cli and cli.commands' host and panel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .host import Command, Host
from .panel import Panel


async def agents(host: Host, arg: str) -> None:
    from ...agentfiles import find_agent_files
    from ...trust import trusted_for

    o = host.client.options
    cwd = Path(host.cwd()).resolve()
    rows: list[tuple[str, str, Any]] = [("general-purpose", "built-in", None)]
    rows += [(name, "--agents / options", d) for name, d in (o.agents or {}).items()]
    files = find_agent_files(cwd, o.setting_sources or [], trusted_for(o, cwd))
    home = str(Path.home())
    for name, d in files.agents.items():
        src = str(getattr(d, "source", "") or "")
        scope = "user" if src.startswith(home) and not src.startswith(str(cwd)) else "project"
        rows.append((name, f"{scope} · {src}", d))
    warnings = list(files.warnings)
    rows += [r for r in _plugin_rows(o, cwd, warnings) if r[0] not in files.agents]  # a file's agent shadows
    lines: list[str] = []
    for name, where, d in rows:
        if d is None:
            lines.append(f"{name}  ({where}) · tools: all · model: inherit")
            continue
        desc = d.get("description", "") if isinstance(d, dict) else getattr(d, "description", "")
        tools = d.get("tools") if isinstance(d, dict) else getattr(d, "tools", None)
        model = d.get("model") if isinstance(d, dict) else getattr(d, "model", None)
        lines.append(f"{name}  ({where}) · tools: {', '.join(tools) if tools else 'all'} · model: {model or 'inherit'}")
        if desc:
            lines.append(f"    {str(desc).splitlines()[0][:100]}")
    lines += [f"⚠ {w}" for w in warnings]
    host.open_panel(Panel("Agents", lines, "agent files: .claude/agents/*.md (project), ~/.claude/agents (user)"))


def _plugin_rows(o: Any, cwd: Path, warnings: list[str]) -> list[tuple[str, str, Any]]:
    """The agents of the session's plugins (--plugin-dir, enabled installed ones), read as a run
    reads them (assemble_parts.with_agent_files), each with its plugin and file."""
    from ...plugins import PluginError, run_plugins

    try:
        plugins = run_plugins(o, cwd, warnings)
    except PluginError as e:
        warnings.append(str(e))
        return []
    rows: list[tuple[str, str, Any]] = []
    for p in plugins:
        for name, d in p.agents(warnings).items():
            rows.append((name, f"plugin {p.name} · {getattr(d, 'source', '') or p.root}", d))
    return rows


COMMANDS = [Command("agents", "the subagents available and their tools", agents, busy_ok=True)]
