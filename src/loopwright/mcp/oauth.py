"""Room: mcp. Owns the OAuth client of HTTP MCP servers (the `oauth` config keys, the login's browser step); may import mcp.oauth_store.

The flow itself is the official SDK's (`mcp.client.auth`): on a 401 (or a 403
`insufficient_scope`, the step-up) it discovers the protected resource metadata (the
`WWW-Authenticate` challenge, then the well-known paths), the authorization server's metadata
(RFC 8414 and OpenID paths, the 2025-03-26 fallbacks), registers the client (a client-ID
metadata document when the server supports them and `clientMetadataUrl` is set, else dynamic
registration, or the pre-registered `clientId`), picks the scopes (the challenge's, else
`scopes_supported`, else none; `offline_access` when the server offers it), sends PKCE (S256)
and the resource indicator, authenticates at the token endpoint as registered
(client_secret_basic / client_secret_post / none) and refreshes tokens when they expire.

What loopwright adds: where tokens are kept (oauth_store.py), the `oauth` keys of a server's
configuration, and the login's user step. A run may only do that step when it has a way to:
`loopwright mcp login NAME` (opens the browser and listens on a loopback port for the
redirect; the URL is also printed), or a run told it may (`LOOPWRIGHT_MCP_AUTHORIZE=browser`,
the same). Otherwise (`-p`, by default) a server that needs a login is `needs-auth`, with one
line naming `loopwright mcp login NAME`, and the run's other servers are unaffected.

`oauth` keys (all optional):

    clientId, clientSecret       a pre-registered client (clientSecret may be ${VAR}; else MCP_CLIENT_SECRET, else
                                 the one `mcp add --client-secret` kept in the credentials file)
    callbackPort                 the loopback port of the redirect (default: a free port, held until its listener starts; a registration's own)
    clientMetadataUrl            this client's metadata document URL (HTTPS), used where the server supports them
    scope                        scopes to ask for instead of the server's choice (space-separated)
    tokenEndpointAuthMethod      client_secret_basic | client_secret_post | none (a pre-registered client)
    grantType                    authorization_code (default) | client_credentials | jwt_bearer
    privateKeyFile, signingAlgorithm   client_credentials with a private_key_jwt assertion (default ES256)
    issuer                       the authorization server the client credentials belong to
    idpTokenEndpoint, idpClientId, idpIdToken   jwt_bearer: the enterprise IdP's token exchange (SEP-990)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import weakref
import webbrowser
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, urlparse

from . import oauth_store

if TYPE_CHECKING:
    import socket

log = logging.getLogger("loopwright.mcp")

KEYS = {"clientId": "client_id", "clientSecret": "client_secret", "callbackPort": "callback_port",
        "clientMetadataUrl": "client_metadata_url", "scope": "scope",
        "tokenEndpointAuthMethod": "token_endpoint_auth_method", "grantType": "grant_type",
        "privateKeyFile": "private_key_file", "signingAlgorithm": "signing_algorithm", "issuer": "issuer",
        "idpTokenEndpoint": "idp_token_endpoint", "idpClientId": "idp_client_id", "idpIdToken": "idp_id_token"}
GRANTS = ("authorization_code", "client_credentials", "jwt_bearer")
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
LOGIN_TIMEOUT_S = 300.0  # how long the browser step may take (a person logs in)
AUTHORIZE_ENV = "LOOPWRIGHT_MCP_AUTHORIZE"


@dataclass
class OAuthConfig:
    """A server's `oauth` keys (see the module docstring)."""

    client_id: str | None = None
    client_secret: str | None = None
    callback_port: int | None = None
    client_metadata_url: str | None = None
    scope: str | None = None
    token_endpoint_auth_method: str | None = None
    grant_type: str = "authorization_code"
    private_key_file: str | None = None
    signing_algorithm: str | None = None
    issuer: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_id_token: str | None = None


def parse_oauth(raw: Any, where: str, expand: Callable[[str, str], str]) -> OAuthConfig:
    """The `oauth` object of a server's configuration; raises ValueError naming the key."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: \"oauth\" must be an object")
    out = OAuthConfig()
    for k, v in raw.items():
        attr = KEYS.get(k)
        if attr is None:
            raise ValueError(f"{where}: unknown \"oauth\" key {k!r} (known: {', '.join(KEYS)})")
        if attr == "callback_port":
            if not isinstance(v, int) or isinstance(v, bool) or not 0 < v < 65536:
                raise ValueError(f"{where}: \"oauth.callbackPort\" must be a port number")
            out.callback_port = v
            continue
        if not isinstance(v, str):
            raise ValueError(f"{where}: \"oauth.{k}\" must be a string")
        setattr(out, attr, expand(v, f"{where} oauth.{k}"))
    if out.grant_type not in GRANTS:
        raise ValueError(f"{where}: \"oauth.grantType\" {out.grant_type!r}: use {', '.join(GRANTS)}")
    if out.token_endpoint_auth_method is not None and out.token_endpoint_auth_method not in AUTH_METHODS:
        raise ValueError(f"{where}: \"oauth.tokenEndpointAuthMethod\" {out.token_endpoint_auth_method!r}: "
                         f"use {', '.join(AUTH_METHODS)}")
    if out.grant_type != "authorization_code" and not out.client_id:
        raise ValueError(f"{where}: \"oauth.grantType\" {out.grant_type} needs \"oauth.clientId\"")
    if out.grant_type == "jwt_bearer" and not (out.idp_token_endpoint and out.idp_id_token):
        raise ValueError(f"{where}: \"oauth.grantType\" jwt_bearer needs idpTokenEndpoint and idpIdToken")
    return out


class LoginNeeded(Exception):
    """The server needs the user's login, and this run may not ask for it."""


def login_line(name: str) -> str:
    """The one line a run gives for a server that needs a login."""
    return f"MCP server {name!r} needs a login: run `loopwright mcp login {name}`"


# --- the browser step -----------------------------------------------------------------------------

class Callback:
    """A loopback listener for the authorization server's redirect (`/callback?code=...&state=...`)
    on `port`; without one, on a port of its own, held from now on (`held_port`): the redirect URI
    names the port at registration, before the listener starts."""

    def __init__(self, port: int | None) -> None:
        self._held: socket.socket | None = None
        if not port:
            self._held = held_port()
            port = int(self._held.getsockname()[1])
            weakref.finalize(self, self._held.close)  # closed with this Callback at the latest (no login came)
        self.port = port
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None

    async def start(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, "localhost", self.port)
            self.release()  # the listener has the port now

    def release(self) -> None:
        """Let go of the held port (the listener took it, or no login will come)."""
        if self._held is not None:
            self._held.close()
            self._held = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass
            parts = line.split()
            url = urlparse(parts[1] if len(parts) > 1 else "/")
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            done = url.path == "/callback" and ("code" in query or "error" in query)
            body = ("Logged in. You can close this window." if done and "code" in query
                    else "The login did not complete." if done else "Not found.")
            status = "200 OK" if done else "404 Not Found"
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
                         f"{len(body.encode())}\r\nConnection: close\r\n\r\n{body}".encode())
            await writer.drain()
            if done and self._result is not None and not self._result.done():
                self._result.set_result(query)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, UnicodeError):
            pass
        finally:
            writer.close()

    async def wait(self, timeout: float) -> dict[str, str]:
        assert self._result is not None
        try:
            return await asyncio.wait_for(self._result, timeout)
        except TimeoutError:
            raise TimeoutError(f"no login within {timeout:g} s (the browser never came back to "
                               f"http://localhost:{self.port}/callback)") from None

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None


def held_port() -> socket.socket:
    """A socket that holds a free loopback port: bound with SO_REUSEADDR, never listening. No other
    process gets the port meanwhile (bind to port 0 and outgoing connections pass over a bound
    port), and the listener (asyncio's start_server, SO_REUSEADDR too) can bind it while it is held.
    (A port found free and let go could be taken before the listener binds it, and the login would
    fail on a redirect URI already registered.)"""
    import socket

    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    return s


def open_browser(url: str) -> None:
    """Open the URL in the user's browser: `BROWSER` (commands separated by the path separator, `%s`
    the URL, as Python's webbrowser reads it), else webbrowser's own choice. A BROWSER command runs
    with its output discarded: loopwright's stdout may be a stream-json channel."""
    import shlex
    import subprocess

    for command in (c for c in os.environ.get("BROWSER", "").split(os.pathsep) if c.strip()):
        argv = [a.replace("%s", url) for a in shlex.split(command)]
        if "%s" not in command:
            argv.append(url)
        try:
            if subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=LOGIN_TIMEOUT_S, check=False).returncode == 0:
                return
        except (OSError, subprocess.TimeoutExpired) as e:
            log.info("BROWSER command %r failed: %s", argv[0], e)
    if not os.environ.get("BROWSER"):
        try:
            webbrowser.open(url)
        except webbrowser.Error as e:  # no browser: the printed URL is the way
            log.info("no browser to open the login URL: %s", e)


class Authorizer:
    """How a run does the login's user step: show the URL, open the browser, wait for the redirect.
    `show(line)` tells the user (the CLI prints it); `opener(url)` opens a browser."""

    def __init__(self, show: Callable[[str], None] | None = None, opener: Callable[[str], None] = open_browser,
                 timeout: float = LOGIN_TIMEOUT_S) -> None:
        self.show = show or (lambda line: None)
        self.opener = opener
        self.timeout = timeout


def authorizer_from_env(env: Mapping[str, str]) -> Authorizer | None:
    """A run's Authorizer when `LOOPWRIGHT_MCP_AUTHORIZE=browser` says it may open the browser; else
    None (a server needing a login is `needs-auth`). Another value is refused, named."""
    value = env.get(AUTHORIZE_ENV, "").strip()
    if not value:
        return None
    if value != "browser":
        raise ValueError(f"{AUTHORIZE_ENV}={value!r}: the only value is \"browser\"")
    return Authorizer(show=lambda line: log.warning("%s", line))  # (a library room prints nothing: the CLI's log)


# --- the provider ---------------------------------------------------------------------------------

def _callback_port(cfg: OAuthConfig, key: str) -> int | None:
    """The redirect's port: the configured one, else the one its client was registered with, else
    None (a free one, the Callback's own)."""
    if cfg.callback_port:
        return cfg.callback_port
    client = oauth_store.entry(key).get("client")
    uris = client.get("redirect_uris") if isinstance(client, dict) else None
    if uris:  # the port this client was registered with
        port = urlparse(str(uris[0])).port
        if port:
            return port
    return None


def provider(name: str, url: str, cfg: OAuthConfig | None, authorizer: Authorizer | None,
             on_login_needed: Callable[[], None]) -> Any:
    """The httpx Auth of an HTTP server: the SDK's OAuth client for its `oauth` keys (none: the
    authorization-code flow with dynamic registration, ready for a server that answers 401)."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import (
        AuthorizationCodeResult,
        OAuthClientInformationFull,
        OAuthClientMetadata,
    )

    cfg = cfg or OAuthConfig()
    key = oauth_store.server_key(name, url)
    storage = oauth_store.FileTokenStorage(key)
    secret = cfg.client_secret or (os.environ.get("MCP_CLIENT_SECRET") or oauth_store.client_secret(name)
                                   if cfg.client_id else None)
    if cfg.grant_type == "client_credentials":
        return _client_credentials(url, storage, cfg, secret)
    if cfg.grant_type == "jwt_bearer":
        return _jwt_bearer(url, storage, cfg, secret)

    callback = Callback(_callback_port(cfg, key))
    if authorizer is None:  # no login in this process: no listener will come
        callback.release()
    redirect_uri = f"http://localhost:{callback.port}/callback"

    async def redirect(auth_url: str) -> None:
        if authorizer is None:
            on_login_needed()
            raise LoginNeeded(login_line(name))
        await callback.start()
        authorizer.show(f"log in to MCP server {name!r}: open {auth_url}")
        await asyncio.to_thread(authorizer.opener, auth_url)

    async def wait_callback() -> AuthorizationCodeResult:
        assert authorizer is not None
        try:
            q = await callback.wait(authorizer.timeout)
        finally:
            await callback.close()
        if "error" in q:
            raise LoginNeeded(f"MCP server {name!r}: the login was refused: {q['error']}"
                              f"{': ' + q['error_description'] if q.get('error_description') else ''}")
        return AuthorizationCodeResult(code=q["code"], state=q.get("state"), iss=q.get("iss"))

    from pydantic import AnyUrl

    from .. import __version__

    metadata = OAuthClientMetadata(redirect_uris=[AnyUrl(redirect_uri)], client_name="loopwright", scope=cfg.scope,
                                   software_id="loopwright", software_version=__version__,
                                   grant_types=["authorization_code", "refresh_token"],
                                   token_endpoint_auth_method=cfg.token_endpoint_auth_method)  # type: ignore[arg-type]
    fixed = None
    if cfg.client_id:
        fixed = OAuthClientInformationFull(client_id=cfg.client_id, client_secret=secret,
                                           redirect_uris=[AnyUrl(redirect_uri)],
                                           token_endpoint_auth_method=cfg.token_endpoint_auth_method)

    class Provider(OAuthClientProvider):
        """The SDK's provider with a pre-registered client, and its token endpoint auth method
        picked from the server's metadata when the configuration names none."""

        async def _initialize(self) -> None:
            await super()._initialize()
            tokens = self.context.current_tokens
            if tokens is not None and tokens.expires_in is not None:  # the SDK's own load leaves saved tokens
                self.context.update_token_expiry(tokens)  # fresh forever: an expired one is refreshed first
            if fixed is not None:
                self.context.client_info = fixed

        async def _perform_authorization(self) -> Any:
            info = self.context.client_info
            if info is not None and info.client_secret and info.token_endpoint_auth_method is None:
                info.token_endpoint_auth_method = _auth_method(self.context.oauth_metadata)
            return await super()._perform_authorization()

        async def _refresh_token(self) -> Any:
            info = self.context.client_info
            if info is not None and info.client_secret and info.token_endpoint_auth_method is None:
                info.token_endpoint_auth_method = _auth_method(self.context.oauth_metadata)
            return await super()._refresh_token()

    return Provider(url, metadata, storage, redirect, wait_callback,
                    client_metadata_url=cfg.client_metadata_url if cfg.client_metadata_url else None)


def _auth_method(metadata: Any) -> str:
    """A client secret's method at the token endpoint: the first the server lists of basic and post
    (basic when it lists none: RFC 8414's default)."""
    listed = list(getattr(metadata, "token_endpoint_auth_methods_supported", None) or ["client_secret_basic"])
    return next((m for m in listed if m in ("client_secret_basic", "client_secret_post")), "client_secret_basic")


def _client_credentials(url: str, storage: Any, cfg: OAuthConfig, secret: str | None) -> Any:
    import warnings

    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    assert cfg.client_id is not None
    with warnings.catch_warnings():  # an issuer left to discovery is the SDK's deprecation, not the user's error
        warnings.simplefilter("ignore")
        if cfg.private_key_file:
            key = Path(os.path.expanduser(cfg.private_key_file)).read_text(encoding="utf-8")
            params = SignedJWTParameters(issuer=cfg.client_id, subject=cfg.client_id, signing_key=key,
                                         signing_algorithm=cfg.signing_algorithm or "ES256")
            return PrivateKeyJWTOAuthProvider(url, storage, cfg.client_id, params.create_assertion_provider(),
                                              scope=cfg.scope, issuer=cfg.issuer)
        if not secret:
            raise ValueError("oauth.grantType client_credentials needs oauth.clientSecret (or privateKeyFile)")
        method: Literal["client_secret_basic", "client_secret_post"] = (
            "client_secret_post" if cfg.token_endpoint_auth_method == "client_secret_post" else "client_secret_basic")
        return ClientCredentialsOAuthProvider(url, storage, cfg.client_id, secret, token_endpoint_auth_method=method,
                                              scope=cfg.scope, issuer=cfg.issuer)


def _jwt_bearer(url: str, storage: Any, cfg: OAuthConfig, secret: str | None) -> Any:
    """SEP-990 cross-app access: the enterprise IdP exchanges the user's ID token for an ID-JAG
    (RFC 8693 token exchange), which the MCP server's authorization server takes as a jwt-bearer
    grant (RFC 7523) from this confidential client. The SDK's provider does the second half."""
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    if not secret:
        raise ValueError("oauth.grantType jwt_bearer needs oauth.clientSecret (a confidential client)")
    assert cfg.client_id and cfg.idp_token_endpoint and cfg.idp_id_token

    async def id_jag(audience: str, resource: str) -> str:
        from mcp.shared._httpx_utils import create_mcp_http_client

        form = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag", "audience": audience,
                "resource": resource, "subject_token": cfg.idp_id_token or "",
                "subject_token_type": "urn:ietf:params:oauth:token-type:id_token"}
        if cfg.idp_client_id:
            form["client_id"] = cfg.idp_client_id
        async with create_mcp_http_client() as http:
            r = await http.post(cfg.idp_token_endpoint or "", data=form)
        if r.status_code != 200:
            raise LoginNeeded(f"the identity provider refused the token exchange (HTTP {r.status_code})")
        token = r.json().get("access_token")
        if not isinstance(token, str):
            raise LoginNeeded("the identity provider's token exchange gave no access_token")
        return token

    method: Literal["client_secret_basic", "client_secret_post"] = (
        "client_secret_post" if cfg.token_endpoint_auth_method == "client_secret_post" else "client_secret_basic")
    assert cfg.issuer, "resolved by resolve_issuer before the provider is built"
    return IdentityAssertionOAuthProvider(url, storage, cfg.client_id, secret, cfg.issuer, id_jag, scope=cfg.scope,
                                          token_endpoint_auth_method=method)


async def resolve_issuer(url: str, cfg: OAuthConfig | None) -> OAuthConfig | None:
    """A jwt_bearer configuration without `issuer`: the server's protected resource metadata names its
    authorization server (the first listed). Other configurations are returned as they are."""
    if cfg is None or cfg.grant_type != "jwt_bearer" or cfg.issuer:
        return cfg
    from dataclasses import replace

    from mcp.client.auth.utils import build_protected_resource_metadata_discovery_urls
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client() as http:
        for meta in build_protected_resource_metadata_discovery_urls(None, url):
            r = await http.get(meta)
            if r.status_code == 200:
                servers = r.json().get("authorization_servers") or []
                if servers:
                    return replace(cfg, issuer=str(servers[0]))
    raise ValueError(f"oauth.grantType jwt_bearer: no \"oauth.issuer\" and {url} publishes no authorization server")
