"""Room: cli. Owns `loopwright mcp login NAME` and `mcp logout NAME`; may import mcp.*.

    loopwright mcp login github     # opens the browser (BROWSER is honoured), prints the URL, waits for the redirect
    loopwright mcp logout github    # forgets the server's tokens and client registration

The login runs the server's OAuth flow (mcp/oauth.py) with its browser step allowed: discovery,
registration, the browser, the token exchange. The tokens go to the 0600 credentials file
(mcp/oauth_store.py); later runs use them, and refresh them when they expire, without asking.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from ..mcp.config import ServerConfig


def _server(a: argparse.Namespace, configs: list[ServerConfig]) -> ServerConfig | None:
    cfg = next((c for c in configs if c.name == a.name), None)
    if cfg is None:
        print(f"loopwright: no MCP server named {a.name!r} (see `loopwright mcp list`)", file=sys.stderr)
    return cfg


def cmd_login(a: argparse.Namespace, configs: list[ServerConfig]) -> int:
    """Log in to an HTTP/SSE server (of `configs`, the servers a run here has): its OAuth flow with the
    browser step; the tokens are saved."""
    from ..mcp import oauth_store
    from ..mcp.client import McpRuntime
    from ..mcp.oauth import Authorizer

    cfg = _server(a, configs)
    if cfg is None:
        return 1
    if cfg.type not in ("http", "sse") or cfg.error:
        why = cfg.error or f"it is a {cfg.type} server; only HTTP and SSE servers log in"
        print(f"loopwright: MCP server {cfg.name!r} has no login: {why}", file=sys.stderr)
        return 1
    key = oauth_store.server_key(cfg.name, cfg.url)
    oauth_store.clear_tokens(key)  # a new login, even when the old tokens still work (the registration is kept)

    def show(line: str) -> None:
        print(f"To {line}\n(the browser is being opened; if it does not open, open the URL yourself)", flush=True)

    async def go() -> dict[str, str]:
        rt = McpRuntime([cfg], Path(a.cwd).resolve(), authorizer=Authorizer(show=show))
        try:
            await rt.start()
            return rt.status()[0]
        finally:
            await rt.aclose()

    st = asyncio.run(go())
    if st["status"] != "connected":
        print(f"loopwright: the login to MCP server {cfg.name!r} failed: {st.get('error', st['status'])}",
              file=sys.stderr)
        return 1
    if not oauth_store.has_tokens(key):
        print(f"MCP server {cfg.name!r} connected without asking for a login: nothing to save.")
        return 0
    print(f"Logged in to MCP server {cfg.name!r}. The tokens are kept in {oauth_store.credentials_file()} "
          "(readable by you only).")
    return 0


def cmd_logout(a: argparse.Namespace) -> int:
    """Forget a server's tokens and client registration."""
    from ..mcp import oauth_store

    urls = oauth_store.forget(a.name)
    if not urls:
        print(f"No stored login for MCP server {a.name!r}.")
        return 0
    print(f"Logged out of MCP server {a.name!r} (its tokens are removed from {oauth_store.credentials_file()}).")
    return 0
