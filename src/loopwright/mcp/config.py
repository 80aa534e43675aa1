"""Room: mcp. Owns MCP server configuration; may import options, settings and mcp.inprocess.

MCP server configuration in Claude Code's format: `{"mcpServers": {name: {...}}}`.

    stdio  {"command": "npx", "args": [...], "env": {...}, "cwd": "..."}   ("type": "stdio" optional)
    http   {"type": "http", "url": "https://...", "headers": {...}, "oauth": {...}}   (streamable HTTP)
    sse    {"type": "sse", "url": "https://...", "headers": {...}}           (legacy SSE)
    sdk    an in-process server from `create_sdk_mcp_server` (Python only)

`${VAR}` and `${VAR:-default}` are expanded in command, args, env, cwd, url and headers.

Where servers come from, lowest priority first (a later one with the same name wins):
user settings (`~/.loopwright/settings.json` `mcpServers`), the project's `.mcp.json`,
project and local settings, then the run's own (`AgentOptions(mcp_servers=...)`,
`--mcp-config`). With `strict_mcp_config` only the run's own are used. `.mcp.json` servers
are project scope: never read in a workspace the user has not trusted (trust.py), and
untrusted until approved: `enableAllProjectMcpServers: true` or their
name in `enabledMcpjsonServers` (and not in `disabledMcpjsonServers`); until then they are
listed as `needs-approval` and not started.

A problem with one server (unknown transport, missing command, an unset variable) is kept
as that server's `error`: it is reported as failed and the others still run. A file that is
not JSON raises McpConfigError, before any model call.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..home import locked, write_private
from . import MCP_JSON

if TYPE_CHECKING:
    from ..options import AgentOptions
    from ..settings import Settings
    from .oauth import OAuthConfig

TRANSPORTS = ("stdio", "http", "sse", "sdk")
SCOPES = ("local", "project", "user")


class McpConfigError(ValueError):
    """A configuration that cannot be read at all (not JSON, not an object)."""


@dataclass
class ServerConfig:
    """One MCP server, as a configuration names it: how to start (stdio) or reach (http, sse) it."""

    name: str
    type: str = "stdio"
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    oauth: OAuthConfig | None = None  # the `oauth` keys of an http/sse server (mcp/oauth.py)
    instance: Any = None  # an in-process server (type "sdk")
    scope: str = "dynamic"  # dynamic (options, --mcp-config) | local | project | user
    source: str = ""  # the file (or flag) it came from
    error: str | None = None  # why it cannot be started; the others still run
    needs_approval: bool = False  # a .mcp.json server nobody approved yet


_VAR = r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}"  # (compiled at first use, by re's cache)


def expand(value: str, env: Mapping[str, str], where: str) -> str:
    """`${VAR}` / `${VAR:-default}` as Claude Code expands them. Raises ValueError naming
    `where` when a variable without a default is not set."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ValueError(f"{where}: environment variable ${{{name}}} is not set (use ${{{name}:-default}} for a default)")

    return re.sub(_VAR, sub, value)


def parse_server(name: str, raw: Any, *, scope: str = "dynamic", source: str = "",
                 env: Mapping[str, str] | None = None) -> ServerConfig:
    """One `mcpServers` entry. Problems go into `.error` (naming the server and the field)."""
    env = os.environ if env is None else env
    cfg = ServerConfig(name=name, scope=scope, source=source)
    where = f"MCP server {name!r}" + (f" ({source})" if source and source != "mcp_servers" else "")
    instance = _sdk_instance_of(raw)
    if instance is not None:
        cfg.type, cfg.instance = "sdk", instance
        return cfg
    if not isinstance(raw, dict):
        cfg.error = f"{where}: its configuration must be an object, not {type(raw).__name__}"
        return cfg
    kind = _transport_of(raw)
    cfg.type = str(kind)
    try:
        if kind == "stdio":
            _parse_stdio(cfg, raw, env, where)
        elif kind in ("http", "sse"):
            _parse_remote(cfg, raw, env, where, kind)
        else:
            raise ValueError(f"{where}: unknown transport \"type\": {kind!r}; use stdio, http or sse")
    except ValueError as e:
        cfg.error = str(e)
    return cfg


def _sdk_instance_of(raw: Any) -> Any:
    """The in-process server given either bare or as `{"type": "sdk", "instance": ...}`; else None."""
    if _is_sdk_instance(raw):
        return raw
    if isinstance(raw, dict) and raw.get("type") == "sdk" and _is_sdk_instance(raw.get("instance")):
        return raw["instance"]
    return None


def _transport_of(raw: dict[str, Any]) -> Any:
    """The entry's transport: its `type`, else http when only a `url` is given, else stdio."""
    kind = raw.get("type")
    if kind is None:
        kind = "http" if "url" in raw and "command" not in raw else "stdio"
    return "http" if kind == "streamable-http" else kind  # the spec's own name for it


def _parse_stdio(cfg: ServerConfig, raw: dict[str, Any], env: Mapping[str, str], where: str) -> None:
    """A stdio server's command, args, env and cwd into `cfg` (ValueError names the bad field)."""
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"{where}: \"command\" is missing (a stdio server needs the program to run)")
    cfg.command = expand(command, env, f"{where} command")
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"{where}: \"args\" must be a list of strings")
    cfg.args = [expand(a, env, f"{where} args[{i}]") for i, a in enumerate(args)]
    cfg.env = _str_map(raw.get("env", {}), env, f"{where} env")
    cwd = raw.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str):
            raise ValueError(f"{where}: \"cwd\" must be a string")
        cfg.cwd = expand(cwd, env, f"{where} cwd")


def _parse_remote(cfg: ServerConfig, raw: dict[str, Any], env: Mapping[str, str], where: str,
                  kind: str) -> None:
    """An http/sse server's url, headers and oauth into `cfg` (ValueError names the bad field)."""
    url = raw.get("url")
    if not isinstance(url, str) or not url.strip():
        raise ValueError(f"{where}: \"url\" is missing (an {kind} server needs its URL)")
    cfg.url = expand(url, env, f"{where} url")
    if not cfg.url.startswith(("http://", "https://")):
        raise ValueError(f"{where}: \"url\" must start with http:// or https://, got {cfg.url!r}")
    cfg.headers = _str_map(raw.get("headers", {}), env, f"{where} headers")
    if "oauth" in raw:
        from .oauth import parse_oauth

        cfg.oauth = parse_oauth(raw["oauth"], where, lambda v, w: expand(v, env, w))


def _str_map(value: Any, env: Mapping[str, str], where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{where} must be an object of strings")
    return {str(k): expand(v, env, f"{where}.{k}") for k, v in value.items()}


def _is_sdk_instance(x: Any) -> bool:
    from .inprocess import SdkMcpServer

    return isinstance(x, SdkMcpServer)


def servers_of(data: Any, where: str) -> dict[str, Any]:
    """The `mcpServers` object of a parsed config file (Claude Code's format). A dict given in
    Python may also be the `{name: config}` mapping itself."""
    if not isinstance(data, dict):
        raise McpConfigError(f"{where}: an MCP configuration must be a JSON object")
    servers = data.get("mcpServers", None)
    if servers is None:
        if where == "mcp_servers":
            return data
        raise McpConfigError(f"{where}: no \"mcpServers\" object (the format is {{\"mcpServers\": {{name: {{...}}}}}})")
    if not isinstance(servers, dict):
        raise McpConfigError(f"{where}: \"mcpServers\" must be an object of servers by name")
    return servers


def read_config(value: str | Path, cwd: Path | None = None) -> tuple[dict[str, Any], str]:
    """An --mcp-config value: a JSON string or a file path. Returns (servers, where)."""
    text_value = str(value)
    if isinstance(value, str) and text_value.lstrip().startswith("{"):
        where = "--mcp-config"
        try:
            data = json.loads(text_value)
        except json.JSONDecodeError as e:
            raise McpConfigError(f"--mcp-config: invalid JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
        return servers_of(data, where), where
    path = Path(text_value).expanduser()
    if not path.is_absolute() and cwd is not None:
        path = cwd / path
    where = str(path)
    return servers_of(read_json(path), where), where


def read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise McpConfigError(f"MCP config file {path} does not exist") from None
    except OSError as e:
        raise McpConfigError(f"cannot read MCP config file {path}: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise McpConfigError(f"{path} is not valid JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
    except (ValueError, RecursionError) as e:  # (a 5000-digit number; nesting past the parser's depth)
        raise McpConfigError(f"{path} is not valid JSON: {type(e).__name__}: {str(e)[:200]}") from None


def merge_configs(values: list[str]) -> dict[str, Any]:
    """Several --mcp-config values as one `{"mcpServers": {...}}` (later ones win)."""
    out: dict[str, Any] = {}
    for v in values:
        servers, _ = read_config(v, Path.cwd())
        out.update(servers)
    return {"mcpServers": out}


@dataclass
class Approval:
    """Which `.mcp.json` servers may start (Claude Code's settings keys)."""

    enable_all: bool = False
    enabled: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)

    def approved(self, name: str) -> bool:
        return name not in self.disabled and (self.enable_all or name in self.enabled)


def collect(dynamic: Any, cwd: Path, *, settings: Settings | None = None, strict: bool = False, project: bool = True,
            env: Mapping[str, str] | None = None, notes: list[str] | None = None) -> list[ServerConfig]:
    """Every configured server, by priority (see the module docstring), as ServerConfigs.

    `dynamic`: AgentOptions.mcp_servers (a dict, a path, or None). `settings`: the run's
    settings.Settings (None: no settings files, so no `.mcp.json` either). A server of the
    project's files (.mcp.json, the project's settings) never replaces the user's own of the
    same name: it is left out and named in `notes`."""
    env = {**os.environ, **(settings.env if settings is not None else {})} if env is None else env
    found = _Found(cwd, env, notes)
    if not strict and settings is not None:
        _add_settings(found, settings, cwd, project)
    if dynamic is not None:
        if isinstance(dynamic, (str, Path)):
            servers, where = read_config(dynamic, cwd)
            found.add(servers, "dynamic", where)
        else:
            found.add(servers_of(dynamic, "mcp_servers"), "dynamic", "mcp_servers")
    return list(found.servers.values())


class _Found:
    """The servers collected so far, by name, in priority order (a later one replaces an earlier)."""

    def __init__(self, cwd: Path, env: Mapping[str, str], notes: list[str] | None) -> None:
        self.servers: dict[str, ServerConfig] = {}
        self.in_project = str(cwd.resolve()) + os.sep
        self.env, self.notes = env, notes

    def add(self, servers: Mapping[str, Any], scope: str, source: str, approval: Approval | None = None) -> None:
        for name, raw in servers.items():
            old = self.servers.get(str(name))
            if old is not None and old.scope == "user" and os.path.abspath(source).startswith(self.in_project):
                if self.notes is not None:
                    self.notes.append(f"ignored MCP server {name!r} from {source}: the user's own server {name!r} "
                                      f"({old.source}) keeps the name")
                continue
            cfg = parse_server(str(name), raw, scope=scope, source=source, env=self.env)
            if approval is not None and not approval.approved(cfg.name):
                cfg.needs_approval = True
            self.servers.pop(cfg.name, None)  # re-inserted last: the order is the priority order
            self.servers[cfg.name] = cfg


def _add_settings(found: _Found, settings: Settings, cwd: Path, project: bool) -> None:
    """The settings files' servers: the user's, then the project's .mcp.json (trusted only), then the rest."""
    entries = list(settings.mcp_servers)
    for name, raw, where, scope in entries:
        if scope == "user":
            found.add({name: raw}, "user", where)
    if project and getattr(settings, "trusted", True):  # untrusted: settings.ignored names it
        path = cwd / MCP_JSON
        if path.is_file():
            approval = Approval(settings.enable_all_project_mcp_servers, list(settings.enabled_mcpjson_servers),
                                list(settings.disabled_mcpjson_servers))
            found.add(servers_of(read_json(path), str(path)), "project", str(path), approval)
    for name, raw, where, scope in entries:
        if scope != "user":
            found.add({name: raw}, scope, where)


def for_run(options: AgentOptions, cwd: Path, settings: Settings | None,
            notes: list[str] | None = None) -> list[ServerConfig]:
    """The servers a run starts (no SDK import: an empty list when none is configured).
    Raises McpConfigError for a file that cannot be read, before any model call."""
    dynamic = options.mcp_servers
    strict = options.strict_mcp_config
    if dynamic is None and (strict or settings is None):
        return []
    sources = options.setting_sources
    project = sources is None or "project" in sources
    return collect(dynamic, cwd, settings=settings, strict=strict, project=project, notes=notes)


def mcp_cli_servers(values: list[str]) -> dict[str, Any] | None:
    """`--mcp-config A B ...` as AgentOptions.mcp_servers (None when not given)."""
    return merge_configs(values) if values else None


def ask_project_approval(options: AgentOptions, ask: Callable[[str], str]) -> list[str]:
    """The interactive mode's question about `.mcp.json` servers nobody approved or refused
    yet (as Claude Code asks). The answer is saved in `.loopwright/settings.local.json`
    (`enabledMcpjsonServers` / `disabledMcpjsonServers`), so it is asked once. Returns the
    servers approved now. `ask(question) -> answer`; EOF means no answer (nothing saved)."""
    cwd = Path(options.cwd or ".").resolve()
    sources = options.setting_sources
    path = cwd / MCP_JSON
    if options.strict_mcp_config or (sources is not None and "project" not in sources) \
            or not path.is_file():
        return []
    from ..settings import load_settings
    from ..trust import trusted_for

    settings = load_settings(cwd, sources if sources is not None else ("user", "project", "local"),
                             claude=options.claude_settings, extra=options.settings,
                             trusted=trusted_for(options, cwd))
    if settings.enable_all_project_mcp_servers or not settings.trusted:  # untrusted: never started
        return []
    decided = {*settings.enabled_mcpjson_servers, *settings.disabled_mcpjson_servers}
    pending = [n for n in servers_of(read_json(path), str(path)) if n not in decided]
    if not pending:
        return []
    try:
        answer = ask(f"This project's .mcp.json configures MCP servers that can run commands on this machine: "
                     f"{', '.join(pending)}.\nStart them (now and in later runs here)? [y/N] ")
    except EOFError:
        return []
    yes = str(answer).strip().lower() in ("y", "yes")
    local = cwd / ".loopwright" / "settings.local.json"
    with locked(local):
        data = read_json(local) if local.is_file() and local.read_text(encoding="utf-8").strip() else {}
        if not isinstance(data, dict):
            raise McpConfigError(f"{local}: not a JSON object")
        key = "enabledMcpjsonServers" if yes else "disabledMcpjsonServers"
        data[key] = [*(data.get(key) or []), *pending]
        write_private(local, json.dumps(data, indent=2, ensure_ascii=False) + "\n")  # 0600, never half a file
    return pending if yes else []
