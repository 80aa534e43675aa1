"""Room: cli. Owns reading servers for `mcp add-json` and `mcp add-from-claude-desktop`; may import mcp.config.

    loopwright mcp add-json weather '{"type":"http","url":"https://example.com/mcp"}' [--scope user]
    loopwright mcp add-from-claude-desktop [NAME...] [--scope user]

`add-json` takes one server's configuration as Claude Code's `mcpServers` entry. Claude Desktop's
configuration is read where Claude Desktop keeps it: `~/Library/Application Support/Claude/
claude_desktop_config.json` on macOS, `$XDG_CONFIG_HOME/Claude/claude_desktop_config.json`
(default `~/.config`) on Linux, `%APPDATA%\\Claude\\...` on Windows. Each entry is checked as `mcp add`
checks its own; where it is written (and, for project scope, that `.mcp.json` servers still need
approval before they start) is `mcp add`'s.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from ..mcp.config import McpConfigError, parse_server, read_json, servers_of


def checked(name: str, entry: Any, where: str) -> dict[str, Any]:
    """A server entry that parses as `mcp add` would write it (`${VAR}`s are left to run time)."""
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where}: the server's configuration must be a JSON object")
    problem = parse_server(name, entry, env={}).error if "${" not in json.dumps(entry) else None
    if problem:
        raise McpConfigError(f"{where}: {problem}")
    return entry


def from_json(name: str, text: str) -> dict[str, Any]:
    """`mcp add-json NAME JSON`'s entry."""
    try:
        entry = json.loads(text)
    except json.JSONDecodeError as e:
        raise McpConfigError(f"mcp add-json: invalid JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
    return checked(name, entry, "mcp add-json")


def claude_desktop_config() -> Path:
    """Where Claude Desktop keeps its configuration on this system."""
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude" / "claude_desktop_config.json"
    base = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return base / "Claude" / "claude_desktop_config.json"


def desktop_servers(names: list[str]) -> tuple[dict[str, dict[str, Any]], Path]:
    """Claude Desktop's servers (only `names`, when given), each checked; and the file read."""
    path = claude_desktop_config()
    if not path.is_file():
        raise McpConfigError(f"no Claude Desktop configuration at {path}")
    servers = servers_of(read_json(path), str(path))
    missing = [n for n in names if n not in servers]
    if missing:
        raise McpConfigError(f"{path} has no server {', '.join(map(repr, missing))} "
                             f"(it has: {', '.join(servers) or 'none'})")
    return {n: checked(n, e, f"{path}: server {n!r}") for n, e in servers.items() if not names or n in names}, path
