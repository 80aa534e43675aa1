"""An MCP server that needs OAuth, for the tests: the official SDK's MCPServer (streamable HTTP)
behind a bearer check, with a small authorization server of its own beside it.

    python oauth_mcp_server.py --port N|0 --token SECRET [--expires-in S] [--log FILE] [--client-id ID --client-secret S]

/mcp answers 401 (a token it never issued, or one expired) with a `WWW-Authenticate` naming its protected resource metadata until a request
carries a token it issued. The authorization server has RFC 8414 metadata, dynamic registration,
an /authorize that consents at once (redirects back with a code, as a browser would after the
user's click) and a /token that checks PKCE and issues `SECRET-<n>` with a refresh token (each
grant is logged to --log: `authorization_code`, `refresh_token`). Tool: whoami -> "hello".
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import secrets
import time
from typing import Any
from urllib.parse import urlencode


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--expires-in", type=int, default=3600)
    p.add_argument("--log")
    p.add_argument("--client-id", help="a pre-registered client: no registration; /token wants its Basic auth")
    p.add_argument("--client-secret")
    a = p.parse_args()
    # `--port 0`: a port of its own, printed once it listens (one handed over could be taken meanwhile)
    import socket

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", a.port))
    sock.listen(64)  # a client may connect now: it waits in the backlog until uvicorn accepts
    port = sock.getsockname()[1]
    print(port, flush=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing more on stdout: no one reads it
    base = f"http://127.0.0.1:{port}"

    import uvicorn
    from mcp.server.mcpserver import MCPServer
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

    server = MCPServer("oauth-test")

    @server.tool()
    def whoami() -> str:
        """Say hello to a logged-in user."""
        return "hello"

    mcp_app = server.streamable_http_app()
    issued: dict[str, float] = {}  # token -> when it expires
    codes: dict[str, str] = {}  # code -> code_challenge
    refresh: set[str] = set()
    count = [0]

    def log(line: str) -> None:
        if a.log:
            with open(a.log, "a") as f:
                f.write(line + "\n")

    def new_tokens() -> dict[str, Any]:
        count[0] += 1
        tok, ref = f"{a.token}-{count[0]}", f"refresh-{secrets.token_hex(8)}"
        issued[tok] = time.time() + a.expires_in
        refresh.add(ref)
        return {"access_token": tok, "token_type": "Bearer", "expires_in": a.expires_in, "refresh_token": ref}

    async def handle(request: Request) -> Response:
        path = request.url.path
        if path.startswith("/.well-known/oauth-protected-resource"):
            return JSONResponse({"resource": f"{base}/mcp", "authorization_servers": [base]})
        if path.startswith("/.well-known/oauth-authorization-server"):
            return JSONResponse({"issuer": base, "authorization_endpoint": f"{base}/authorize",
                                 "token_endpoint": f"{base}/token",
                                 "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
                                 "grant_types_supported": ["authorization_code", "refresh_token"],
                                 "token_endpoint_auth_methods_supported": ["client_secret_basic"] if a.client_id
                                 else ["none"], **({} if a.client_id else {"registration_endpoint": f"{base}/register"})})
        if path == "/register":
            body = json.loads(await request.body())
            return JSONResponse({**body, "client_id": f"client-{secrets.token_hex(4)}",
                                 "token_endpoint_auth_method": "none"}, status_code=201)
        if path == "/authorize":
            q = request.query_params
            code = secrets.token_hex(8)
            codes[code] = q["code_challenge"]
            return RedirectResponse(f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q['state']})}", 302)
        if path == "/token":
            form = await request.form()
            if a.client_id:
                basic = base64.b64encode(f"{a.client_id}:{a.client_secret}".encode()).decode()
                if request.headers.get("authorization") != f"Basic {basic}":
                    log("bad client authentication")
                    return JSONResponse({"error": "invalid_client"}, status_code=401)
            grant = str(form["grant_type"])
            log(grant)
            if grant == "authorization_code":
                challenge = codes.pop(str(form["code"]), None)
                digest = base64.urlsafe_b64encode(hashlib.sha256(str(form["code_verifier"]).encode()).digest())
                if challenge is None or digest.decode().rstrip("=") != challenge:
                    return JSONResponse({"error": "invalid_grant"}, status_code=400)
                return JSONResponse(new_tokens())
            if grant == "refresh_token" and str(form["refresh_token"]) in refresh:
                refresh.discard(str(form["refresh_token"]))
                return JSONResponse(new_tokens())
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        return PlainTextResponse("not found", status_code=404)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            auth = dict(scope["headers"]).get(b"authorization", b"").decode()
            if not (auth.startswith("Bearer ") and issued.get(auth[7:], 0) > time.time()):
                meta = f"{base}/.well-known/oauth-protected-resource/mcp"
                await PlainTextResponse("unauthorized", status_code=401,
                                        headers={"WWW-Authenticate": f'Bearer resource_metadata="{meta}"'})(
                    scope, receive, send)
                return
            await mcp_app(scope, receive, send)
            return
        if scope["type"] == "http":
            await (await handle(Request(scope, receive)))(scope, receive, send)
            return
        await mcp_app(scope, receive, send)  # lifespan: the MCP app's session manager

    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
