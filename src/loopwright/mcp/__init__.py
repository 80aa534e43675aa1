"""Room: mcp. Owns the mcp package (what each module is) and whether a run may have servers at
all; imports nothing of loopwright (options and settings for annotations only).

MCP (Model Context Protocol): other servers' tools in the loop, and loopwright's tools as a server.

Rooms: `config` (Claude Code's `mcpServers` format, scopes, `${VAR}` expansion; no SDK),
`naming` (`mcp__<server>__<tool>` names), `client` (connections, tools, results; imports the
`mcp` SDK, so only when a server is configured), `inprocess` (`create_sdk_mcp_server`),
`server` (`loopwright mcp serve`) and `cli` (`loopwright mcp ...`).

`import loopwright` never imports this package's SDK parts: the loop calls `start_for_run`
only when the run has servers configured.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..options import AgentOptions
    from ..settings import Settings

MCP_JSON = ".mcp.json"  # the project's servers (Claude Code's file)


def may_have_servers(options: AgentOptions, cwd: Path, settings: Settings | None) -> bool:
    """Whether a run could have MCP servers: given, in the settings, or in a .mcp.json. When not,
    `config` (its parsing and records) need not even be imported: start-up."""
    return options.mcp_servers is not None or not (
        options.strict_mcp_config or settings is None or (not settings.mcp_servers and not (cwd / MCP_JSON).is_file()))


__all__ = ["MCP_JSON", "may_have_servers"]
