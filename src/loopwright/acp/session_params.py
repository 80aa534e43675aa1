"""Room: acp. Owns the check of the session requests' list params (`mcpServers`,
`additionalDirectories` of session/new, session/load, session/fork, session/resume) before the ACP
library reads them; imports nothing of loopwright.

The library skips a list entry its schema does not take (a server without `command`, a `name`
that is a number, an `args` that is a string, a directory that is a number) without a word, so the
editor's server or directory would silently not be there. Here each entry is held to ACP's schema
as loopwright serves it (servers: stdio, http and sse, the mcpCapabilities `initialize`
advertises; directories: absolute paths), and the first problem is answered as JSON-RPC's invalid
params naming the field (`mcpServers[1].command: must be a non-empty string`); the agent goes on
serving (acp/lines.py)."""

from __future__ import annotations

from typing import Any

# The requests that open a session with the editor's servers (ACP's schema: NewSessionRequest,
# LoadSessionRequest, ForkSessionRequest, ResumeSessionRequest).
SESSION_METHODS = frozenset({"session/new", "session/load", "session/fork", "session/resume"})


def session_params_problem(params: Any) -> tuple[str, str] | None:
    """(the field, what is wrong with it) for the first bad part of `params`' additionalDirectories
    or mcpServers, or None."""
    if not isinstance(params, dict):
        return None
    dirs = params.get("additionalDirectories")
    if dirs is not None:
        if not isinstance(dirs, list):
            return "additionalDirectories", "must be a list of absolute paths"
        bad = next((j for j, d in enumerate(dirs) if not isinstance(d, str) or not d.startswith("/")), None)
        if bad is not None:
            return f"additionalDirectories[{bad}]", f"{_shown(dirs[bad])} is not an absolute path"
    return _servers_problem(params) if "mcpServers" in params else None


def _servers_problem(params: dict[str, Any]) -> tuple[str, str] | None:
    servers = params["mcpServers"]
    if not isinstance(servers, list):
        return "mcpServers", "must be a list of MCP servers"
    names: set[str] = set()
    for i, m in enumerate(servers):
        where = f"mcpServers[{i}]"
        if not isinstance(m, dict):
            return where, "must be an object (an MCP server: stdio, http or sse)"
        kind = m.get("type", "stdio")
        if kind not in ("stdio", "http", "sse"):
            return f"{where}.type", f"{_shown(kind)} is not a server type loopwright connects to (stdio, http or sse)"
        if (problem := _text(m, "name", where)) is not None:
            return problem
        if m["name"] in names:
            return f"{where}.name", f"{_shown(m['name'])} names two servers"
        names.add(m["name"])
        problem = (_text(m, "command", where) or _pairs(m, "env", where) or _strings(m, "args", where)
                   if kind == "stdio" else _text(m, "url", where) or _pairs(m, "headers", where))
        if problem is not None:
            return problem
    return None


def _text(m: dict[str, Any], key: str, where: str) -> tuple[str, str] | None:
    value = m.get(key)
    if not isinstance(value, str) or not value.strip():
        return f"{where}.{key}", "must be a non-empty string" + ("" if key in m else " (it is missing)")
    return None


def _strings(m: dict[str, Any], key: str, where: str) -> tuple[str, str] | None:
    value = m.get(key)
    if not isinstance(value, list):
        return f"{where}.{key}", "must be a list of strings" + ("" if key in m else " (it is missing)")
    bad = next((j for j, v in enumerate(value) if not isinstance(v, str)), None)
    return (f"{where}.{key}[{bad}]", "must be a string") if bad is not None else None


def _pairs(m: dict[str, Any], key: str, where: str) -> tuple[str, str] | None:
    """`env` / `headers`: a list of {name, value} strings."""
    value = m.get(key)
    if not isinstance(value, list):
        return f"{where}.{key}", "must be a list of {name, value} objects" + ("" if key in m else " (it is missing)")
    for j, v in enumerate(value):
        if not isinstance(v, dict):
            return f"{where}.{key}[{j}]", "must be a {name, value} object"
        for part in ("name", "value"):
            if not isinstance(v.get(part), str):
                return f"{where}.{key}[{j}].{part}", "must be a string" + ("" if part in v else " (it is missing)")
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
