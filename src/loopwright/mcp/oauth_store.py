"""Room: mcp. Owns where MCP OAuth tokens and client registrations are kept; may import home.

One file, `$LOOPWRIGHT_HOME/mcp-credentials.json`, 0600 in a 0700 directory (home.write_private,
written whole through a temporary file, changed under home.locked so that processes refreshing
tokens at the same time lose none of each other's): for each server (by name and URL, so a server moved to
another URL never gets the old one's tokens) its tokens, when they expire (absolute: a token
read back an hour later is not fresh again) and the client registration (dynamic registration's
client id and secret). Nothing here is ever logged; the file is never in a project.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ..home import locked, loopwright_home, write_private

FILE_NAME = "mcp-credentials.json"


def credentials_file() -> Path:
    """Where the tokens are kept (`$LOOPWRIGHT_HOME/mcp-credentials.json`)."""
    return loopwright_home() / FILE_NAME


def server_key(name: str, url: str) -> str:
    """A server's entry: its name and its URL."""
    return f"{name}|{url}"


def _read() -> dict[str, Any]:
    path = credentials_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):  # a damaged file: treated as empty (a new login writes a good one)
        return {}
    return data if isinstance(data, dict) else {}


def _write(data: dict[str, Any]) -> None:
    write_private(credentials_file(), json.dumps(data, indent=1, sort_keys=True) + "\n", own_from=loopwright_home())


def entry(key: str) -> dict[str, Any]:
    """The stored entry of a server (empty when none)."""
    e = _read().get(key)
    return e if isinstance(e, dict) else {}


def update(key: str, **fields: Any) -> None:
    """Set fields of a server's entry (None removes one). Under the file's lock: two loopwright
    processes refreshing tokens at once each keep the other's change."""
    with locked(credentials_file()):
        data = _read()
        e = data.get(key) if isinstance(data.get(key), dict) else {}
        assert isinstance(e, dict)
        for k, v in fields.items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        if e:
            data[key] = e
        else:
            data.pop(key, None)
        _write(data)


def forget(name: str) -> list[str]:
    """Remove every entry of the server named `name` (any URL); returns the URLs removed."""
    with locked(credentials_file()):
        data = _read()
        gone = [k for k in data if k.split("|", 1)[0] == name]
        for k in gone:
            del data[k]
        if gone:
            _write(data)
    return [k.split("|", 1)[1] for k in gone]


class FileTokenStorage:
    """The SDK's TokenStorage over the credentials file, for one server."""

    def __init__(self, key: str) -> None:
        self.key = key

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        raw = entry(self.key).get("tokens")
        if not isinstance(raw, dict):
            return None
        raw = dict(raw)
        expires_at = raw.pop("expires_at", None)
        if isinstance(expires_at, (int, float)):  # what is left of its life now (<= 0: expired, refreshed)
            raw["expires_in"] = min(int(expires_at - time.time()), 10**9) if expires_at > time.time() else -1
        try:
            return OAuthToken.model_validate(raw)
        except ValueError:
            return None

    async def set_tokens(self, tokens: Any) -> None:
        raw = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            raw["expires_at"] = time.time() + int(tokens.expires_in)
            raw.pop("expires_in", None)
        update(self.key, tokens=raw)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = entry(self.key).get("client")
        if not isinstance(raw, dict):
            return None
        try:
            return OAuthClientInformationFull.model_validate(raw)
        except ValueError:
            return None

    async def set_client_info(self, client_info: Any) -> None:
        update(self.key, client=client_info.model_dump(mode="json", exclude_none=True))


def clear_tokens(key: str) -> None:
    """Drop a server's tokens, keeping its client registration (a new login reuses it)."""
    update(key, tokens=None)


def has_tokens(key: str) -> bool:
    """Whether a server has stored tokens."""
    return isinstance(entry(key).get("tokens"), dict)




def secret_key(name: str) -> str:
    """The entry of a server's pre-registered client secret (by name: the config file keeps the id)."""
    return f"{name}|client-secret"


def client_secret(name: str) -> str | None:
    """The client secret `mcp add --client-secret` kept for a server, if any."""
    value = entry(secret_key(name)).get("secret")
    return value if isinstance(value, str) and value else None


def save_client_secret(name: str, secret: str) -> None:
    """Keep a server's pre-registered client secret here (0600), never in a config file."""
    update(secret_key(name), secret=secret)
