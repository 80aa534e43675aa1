"""Room: cli. Owns `loopwright mcp ...`; may import mcp.*, settings and below.

`loopwright mcp list | get NAME | add NAME ... | add-json NAME JSON | add-from-claude-desktop [NAME...] |
remove NAME | serve | login NAME | logout NAME`, as `claude mcp` (login and logout: cli/mcp_login.py;
reading add-json's and Claude Desktop's servers: cli/mcp_add.py).

    loopwright mcp add fs [--scope local|project|user] [-e KEY=VALUE] -- npx -y @modelcontextprotocol/server-filesystem .
    loopwright mcp add docs --transport http https://example.com/mcp [-H "Authorization: Bearer ..."]
    loopwright mcp list                # each server's scope and status (connected / failed: why / needs approval)

Files, in Claude Code's format: project scope writes `.mcp.json`; local scope
`.loopwright/settings.local.json`, user scope `$LOOPWRIGHT_HOME/settings.json` (their
`mcpServers`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..home import locked, write_private
from ..mcp import MCP_JSON
from ..mcp.config import McpConfigError, ServerConfig, collect, read_json
from ..settings import SettingsError, load_settings, loopwright_home
from .args import Parser

if TYPE_CHECKING:
    from ..options import AgentOptions


def scope_file(scope: str, cwd: Path) -> Path:
    if scope == "project":
        return cwd / MCP_JSON
    if scope == "user":
        return loopwright_home() / "settings.json"
    return cwd / ".loopwright" / "settings.local.json"


def _read_obj(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = read_json(path) if path.read_text(encoding="utf-8").strip() else {}
    if not isinstance(data, dict):
        raise McpConfigError(f"{path}: not a JSON object")
    return data


def _write_obj(path: Path, data: dict[str, Any]) -> None:
    write_private(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")  # 0600, never half a file


def configured(cwd: Path) -> list[ServerConfig]:
    """The servers a run here would start: in a workspace not trusted (trust/), none of the project's."""
    from ..trust import advice

    settings = load_settings(cwd)
    for i in settings.ignored:
        if "mcp" in i.item.lower():
            print(f"loopwright mcp: {i.line(advice(cwd, 'command'))}", file=sys.stderr)
    return collect(None, cwd, settings=settings)


def describe(cfg: ServerConfig) -> str:
    if cfg.type == "stdio":
        return " ".join([cfg.command, *cfg.args])
    return f"{cfg.url} ({cfg.type.upper() if cfg.type == 'sse' else 'HTTP'})"


async def check(configs: list[ServerConfig], cwd: Path) -> list[dict[str, Any]]:
    from ..mcp.client import McpRuntime

    rt = McpRuntime(configs, cwd)
    try:
        await rt.start()
        return rt.status()
    finally:
        await rt.aclose()


def cmd_list(a: argparse.Namespace) -> int:
    cwd = Path(a.cwd).resolve()
    configs = configured(cwd)
    if not configs:
        from ..trust import is_trusted

        print("No MCP servers configured. Use `loopwright mcp add` to add one." if is_trusted(cwd) else
              f"No MCP servers configured that a run here would use: this workspace is not trusted, so its "
              f"files' servers are ignored (`loopwright trust {cwd}` trusts it; --scope user adds a server of yours).")
        return 0
    print("Checking MCP server health...\n")
    for cfg, st in zip(configs, asyncio.run(check(configs, cwd)), strict=True):
        mark = {"connected": "✓ Connected", "needs-approval": "⚠ Needs approval",
                "needs-auth": f"⚠ Needs authentication (run `loopwright mcp login {cfg.name}`)"}.get(
            st["status"], f"✗ Failed: {st.get('error', '')}")
        print(f"{cfg.name}: {describe(cfg)} ({cfg.scope}) - {mark}")
    return 0


def cmd_get(a: argparse.Namespace) -> int:
    cwd = Path(a.cwd).resolve()
    cfg = next((c for c in configured(cwd) if c.name == a.name), None)
    if cfg is None:
        from ..trust import is_trusted

        why = "" if is_trusted(cwd) else (" that a run here would use: this workspace is not trusted, so its files' "
                                          f"servers are ignored (`loopwright trust {cwd}` trusts it)")
        print(f"loopwright: no MCP server named {a.name!r}{why}", file=sys.stderr)
        return 1
    (st,) = asyncio.run(check([cfg], cwd))
    print(f"{cfg.name}:\n  Scope: {cfg.scope} ({cfg.source})\n  Status: {st['status']}"
          + (f" ({st['error']})" if st.get("error") else "") + f"\n  Type: {cfg.type}")
    if cfg.type == "stdio":
        print(f"  Command: {cfg.command}\n  Args: {' '.join(cfg.args)}")
        if cfg.env:
            print("  Environment:\n" + "\n".join(f"    {k}={v}" for k, v in cfg.env.items()))
    else:
        print(f"  URL: {cfg.url}")
        if cfg.headers:
            print("  Headers:\n" + "\n".join(f"    {k}: {v}" for k, v in cfg.headers.items()))
    print(f"\nTo remove this server, run: loopwright mcp remove {cfg.name} --scope {cfg.scope}")
    return 0


def cmd_add(a: argparse.Namespace, command: list[str]) -> int:
    cwd = Path(a.cwd).resolve()
    entry: dict[str, Any] = {"type": a.transport}
    if a.transport == "stdio":
        if not command:
            raise McpConfigError("mcp add: give the command after --: loopwright mcp add NAME -- COMMAND ARGS...")
        entry.update(command=command[0], args=command[1:])
        env = {}
        for kv in a.env:
            if "=" not in kv:
                raise McpConfigError(f"mcp add: -e {kv!r}: use KEY=VALUE")
            k, v = kv.split("=", 1)
            env[k] = v
        entry["env"] = env
    else:
        if len(command) != 1:
            raise McpConfigError(f"mcp add: an {a.transport} server takes one URL: "
                                 f"loopwright mcp add NAME --transport {a.transport} URL")
        headers = {}
        for h in a.header:
            if ":" not in h:
                raise McpConfigError(f"mcp add: -H {h!r}: use 'Name: value'")
            k, v = h.split(":", 1)
            headers[k.strip()] = v.strip()
        entry["url"] = command[0]
        if headers:
            entry["headers"] = headers
        oauth: dict[str, Any] = {}
        if a.client_id:
            oauth["clientId"] = a.client_id
        if a.callback_port:
            oauth["callbackPort"] = a.callback_port
        if oauth:
            entry["oauth"] = oauth
    if a.transport == "stdio" and (a.client_id or a.callback_port or a.client_secret):
        raise McpConfigError("mcp add: --client-id, --client-secret and --callback-port are for http and sse servers")
    if a.client_secret and not a.client_id:
        raise McpConfigError("mcp add: --client-secret needs --client-id")
    from .mcp_add import checked

    path = _save(a.scope, Path(a.cwd).resolve(), a.name, checked(a.name, entry, "mcp add"))
    print(f"Added {a.transport} MCP server {a.name} to {a.scope} config\nFile modified: {path}")
    if a.client_secret:  # kept in the 0600 credentials file, never in the (maybe committed) config
        from ..mcp import oauth_store

        oauth_store.save_client_secret(a.name, _read_secret())
        print(f"Client secret kept in {oauth_store.credentials_file()} (readable by you only)")
    _untrusted_note(a.scope, cwd)
    return 0


def _untrusted_note(scope: str, cwd: Path) -> None:
    from ..trust import is_trusted

    if scope != "user" and not is_trusted(cwd):  # a run here reads no server from the project's files yet
        print(f"Not used yet: this workspace is not trusted, so runs here ignore its files' MCP servers; "
              f"trust it with `loopwright trust {cwd}`, or add the server for every directory with --scope user.")


def _read_secret() -> str:
    """`--client-secret`: MCP_CLIENT_SECRET, else asked without echo (as Claude Code does)."""
    import getpass
    import os

    secret = os.environ.get("MCP_CLIENT_SECRET") or (getpass.getpass("Client secret: ") if sys.stdin.isatty() else "")
    if not secret:
        raise McpConfigError("mcp add --client-secret: set MCP_CLIENT_SECRET or run it in a terminal to type it")
    return secret


def _save(scope: str, cwd: Path, name: str, entry: dict[str, Any]) -> Path:
    """Write one server into the scope's file (an existing name is an error); returns the file."""
    path = scope_file(scope, cwd)
    with locked(path):
        data = _read_obj(path)
        servers = data.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise McpConfigError(f"{path}: \"mcpServers\" must be an object")
        if name in servers:
            raise McpConfigError(f"MCP server {name!r} already exists in {scope} config ({path})")
        servers[name] = entry
        _write_obj(path, data)
    return path


def cmd_add_json(a: argparse.Namespace) -> int:
    """`mcp add-json NAME JSON`: one server from its JSON configuration."""
    from .mcp_add import from_json

    cwd = Path(a.cwd).resolve()
    path = _save(a.scope, cwd, a.name, from_json(a.name, a.json))
    print(f"Added MCP server {a.name} to {a.scope} config\nFile modified: {path}")
    _untrusted_note(a.scope, cwd)
    return 0


def cmd_add_from_claude_desktop(a: argparse.Namespace) -> int:
    """`mcp add-from-claude-desktop [NAME...]`: Claude Desktop's servers (those named, else all); a name
    the scope has already is skipped, named."""
    from .mcp_add import desktop_servers

    servers, source = desktop_servers(a.names)
    cwd = Path(a.cwd).resolve()
    taken = _read_obj(scope_file(a.scope, cwd)).get("mcpServers") or {}
    added = []
    for name, entry in servers.items():
        if name in taken:
            print(f"Skipped MCP server {name}: {a.scope} config has one of that name already", file=sys.stderr)
            continue
        path = _save(a.scope, cwd, name, entry)
        added.append(name)
    if not added:
        print(f"No MCP server added from {source}.")
        return 0 if servers else 1
    print(f"Added {len(added)} MCP server{'s' if len(added) > 1 else ''} from Claude Desktop ({source}) to "
          f"{a.scope} config: {', '.join(added)}\nFile modified: {path}")
    _untrusted_note(a.scope, cwd)
    return 0


def cmd_remove(a: argparse.Namespace) -> int:
    cwd = Path(a.cwd).resolve()
    scopes = [a.scope] if a.scope else ["local", "project", "user"]
    found = [s for s in scopes if a.name in (_read_obj(scope_file(s, cwd)).get("mcpServers") or {})]
    if not found:
        print(f"loopwright: no MCP server named {a.name!r} in {' or '.join(scopes)} config", file=sys.stderr)
        return 1
    if len(found) > 1:
        print(f"loopwright: MCP server {a.name!r} exists in several scopes ({', '.join(found)}); "
              "pick one with --scope", file=sys.stderr)
        return 1
    path = scope_file(found[0], cwd)
    with locked(path):
        data = _read_obj(path)
        (data.get("mcpServers") or {}).pop(a.name, None)  # (gone meanwhile: nothing to remove)
        _write_obj(path, data)
    print(f"Removed MCP server {a.name} from {found[0]} config\nFile modified: {path}")
    return 0


# Each subcommand and what it does (its line in `loopwright mcp --help`, as `claude mcp --help` has one).
_ACTIONS = {
    "list": "list the servers a run here would use, with their health",
    "get": "one server's details and health",
    "add": "add a server: NAME -- COMMAND ARGS... (stdio), or NAME URL with --transport http|sse",
    "remove": "remove a server",
    "serve": "serve loopwright's tools as an MCP server (stdio, or --http)",
    "login": "log in to an HTTP server that asks for OAuth",
    "logout": "forget a server's OAuth tokens",
    "add-json": "add a server from its JSON configuration",
    "add-from-claude-desktop": "import Claude Desktop's servers",
}


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="loopwright mcp", description="Configure and use MCP servers.")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, does in _ACTIONS.items():
        s = sub.add_parser(name, help=does, description=does[0].upper() + does[1:] + ".")
        s.add_argument("--cwd", default=".", help="the project directory (default: the current one)")
        if name in ("get", "add", "remove", "login", "logout", "add-json"):
            s.add_argument("name")
        if name == "add-json":
            s.add_argument("json", help="the server's configuration, as an mcpServers entry")
        if name == "add-from-claude-desktop":
            s.add_argument("names", nargs="*", help="the servers to import (default: all)")
        if name in ("add", "remove", "add-json", "add-from-claude-desktop"):
            s.add_argument("-s", "--scope", choices=("local", "project", "user"),
                           default=None if name == "remove" else "local")
        if name == "add":
            s.add_argument("-t", "--transport", choices=("stdio", "http", "sse"), default="stdio")
            s.add_argument("-e", "--env", action="append", default=[], help="KEY=VALUE for a stdio server")
            s.add_argument("-H", "--header", action="append", default=[], help="'Name: value' for an HTTP server")
            s.add_argument("--client-id", help="an OAuth client registered for this server (oauth.clientId)")
            s.add_argument("--client-secret", action="store_true",
                           help="its secret, from MCP_CLIENT_SECRET or typed; kept in the 0600 credentials file")
            s.add_argument("--callback-port", type=int, help="the OAuth redirect's loopback port (oauth.callbackPort)")
        if name == "serve":
            s.add_argument("--permission-mode", choices=("default", "acceptEdits", "plan", "bypassPermissions",
                                                        "dontAsk"))
            s.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools", action="append", default=[])
            s.add_argument("--disallowedTools", "--disallowed-tools", dest="disallowed_tools", action="append",
                           default=[])
            s.add_argument("--add-dir", dest="add_dirs", action="append", default=[])
            s.add_argument("--settings")
            s.add_argument("--setting-sources", default="user,project,local")
            s.add_argument("--http", metavar="[HOST:]PORT",
                           help="serve over streamable HTTP at http://HOST:PORT/mcp (host 127.0.0.1 unless given; "
                                "port 0 picks a free one) instead of stdio")
            s.add_argument("--auth-token-file", metavar="FILE",
                           help="with --http: the bearer token every request must carry, read from FILE "
                                "(mode 0600); else $LOOPWRIGHT_MCP_TOKEN, else $LOOPWRIGHT_HOME/mcp-serve-token "
                                "(made on first use)")
            s.add_argument("--no-auth", action="store_true",
                           help="with --http on loopback: no bearer token (any local user's program can call "
                                "the tools)")
            s.add_argument("--allow-host", action="append", default=[], metavar="HOST[:PORT]",
                           help="with --http: another Host/Origin name to accept (a proxy's); repeatable")
            s.add_argument("--conformance-fixtures", action="store_true",
                           help="also serve the test tools, resources and prompts MCP's conformance suite "
                                "asks for by name (for testing MCP clients; see docs/mcp.md)")
    return p


def serve_options(a: argparse.Namespace) -> AgentOptions:
    """`mcp serve`'s flags as the options of its gate (the served tools are the server's choice)."""
    from ..cli.config import split_tools
    from ..options import AgentOptions

    cwd = Path(a.cwd or ".").expanduser().resolve()
    if not cwd.is_dir():
        raise ValueError(f"--cwd {a.cwd}: no such directory")
    return AgentOptions(
        cwd=str(cwd), permission_mode=a.permission_mode,
        allowed_tools=split_tools(a.allowed_tools), disallowed_tools=split_tools(a.disallowed_tools),
        add_dirs=[str(Path(d).expanduser().resolve()) for d in a.add_dirs],
        setting_sources=[x.strip() for x in (a.setting_sources or "").split(",") if x.strip()],
        settings=a.settings, refusal_advice="cli")  # its refusals name the flags of `mcp serve`


def mcp_main(argv: list[str]) -> int:
    command: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1:]
    p = parser()
    a, extra = p.parse_known_args(argv)  # `add NAME --transport http URL`: the URL may follow the options
    if extra and (a.cmd != "add" or any(x.startswith("-") for x in extra)):
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if a.cmd == "add":
            return cmd_add(a, [*extra, *command])
        if a.cmd == "list":
            return cmd_list(a)
        if a.cmd == "get":
            return cmd_get(a)
        if a.cmd == "remove":
            return cmd_remove(a)
        if a.cmd == "add-json":
            return cmd_add_json(a)
        if a.cmd == "add-from-claude-desktop":
            return cmd_add_from_claude_desktop(a)
        if a.cmd in ("login", "logout"):
            from .mcp_login import cmd_login, cmd_logout

            return cmd_login(a, configured(Path(a.cwd).resolve())) if a.cmd == "login" else cmd_logout(a)
        from ..mcp.server import serve_main

        return serve_main(serve_options(a), http=a.http, token_file=a.auth_token_file,
                          allow_hosts=a.allow_host, fixtures=a.conformance_fixtures, no_auth=a.no_auth)
    except (McpConfigError, SettingsError, ValueError) as e:
        print(f"loopwright: {e}", file=sys.stderr)
        return 2
