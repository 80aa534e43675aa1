"""Room: mcp. Owns the mcp package (what each module is); imports nothing.

MCP (Model Context Protocol): other servers' tools in the loop, and loopwright's tools as a server.

Rooms: `config` (Claude Code's `mcpServers` format, scopes, `${VAR}` expansion; no SDK),
`naming` (`mcp__<server>__<tool>` names), `client` (connections, tools, results; imports the
`mcp` SDK, so only when a server is configured), `inprocess` (`create_sdk_mcp_server`),
`server` (`loopwright mcp serve`) and `cli` (`loopwright mcp ...`).

`import loopwright` never imports this package's SDK parts: the loop calls `start_for_run`
only when the run has servers configured.
"""
