"""Room: web tools (on tools.base). Owns the web tools' settings; may import tools.web.guard and
tools.web.fetcher.

The settings keys (Claude Code's `smallFastModel`, and loopwright's `webFetch` / `webSearch`):

    "smallFastModel": "claude-haiku-4-5"     the model that answers WebFetch's prompt; default:
                                             the run's model; "" for none (the content is returned)
    "webFetch": {"allowPrivateNetwork": false | true | ["127.0.0.1", "10.0.0.0/8"],
                 "maxBytes": 10485760, "timeout": 60, "maxRedirects": 10}
    "webSearch": {"backend": "anthropic" | "searxng", "url": "http://localhost:8888",
                  "maxResults": 10, "maxUses": 5}

`allowPrivateNetwork` widens what the model can reach, so only the user's own settings (their
user file, --settings) may set it: a workspace's `.loopwright/` or `.claude/` file is ignored
there; such a file may lower the caps, not raise them, and its `smallFastModel` is used only
when it is a model of the run's own provider (page content never goes to another provider). A search backend URL from a workspace file is fetched under the address policy, like
a URL the model wrote; the user's own is trusted (a self-hosted SearXNG on localhost).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fetcher import MAX_BYTES, MAX_REDIRECTS, TIMEOUT_S, Limits
from .guard import AddressPolicy

BACKENDS = ("anthropic", "searxng")


class WebSettingsError(ValueError):
    """A web setting with a value that cannot be used (the message names the key)."""


@dataclass(frozen=True, slots=True)
class WebConfig:
    """What the web tools may reach and use: the address policy, the limits, the small model and the search backend."""

    policy: AddressPolicy
    limits: Limits
    small_model: str | None  # None: the run's model; "": none
    small_model_trusted: bool  # False: set by a workspace's file (used only on the run's own provider)
    search_backend: str | None  # None: anthropic on Anthropic models, else searxng when a url is set
    search_url: str | None
    search_url_trusted: bool
    max_results: int = 10
    max_uses: int = 5


def _number(obj: dict[str, tuple[Any, str]], key: str, where: str, default: float, kind: type = float) -> Any:
    """The setting, or `default`; a workspace's file may lower a cap, never raise it."""
    value, scope = obj.get(key, (default, "user"))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise WebSettingsError(f"{where}.{key} must be a positive number, not {value!r}")
    return kind(min(value, default) if scope == "project" else value)


def web_config(settings: Any) -> WebConfig:
    """The web tools' settings from a settings.Settings (None: the defaults)."""
    web: dict[str, dict[str, tuple[Any, str]]] = getattr(settings, "web", None) or {}
    fetch, search = web.get("webFetch", {}), web.get("webSearch", {})
    private, scope = fetch.get("allowPrivateNetwork", (None, "user"))
    try:
        policy = AddressPolicy.from_setting(private if scope == "user" else None)
    except ValueError as e:
        raise WebSettingsError(str(e)) from None
    limits = Limits(max_bytes=_number(fetch, "maxBytes", "webFetch", MAX_BYTES, int),
                    timeout=_number(fetch, "timeout", "webFetch", TIMEOUT_S),
                    max_redirects=_number(fetch, "maxRedirects", "webFetch", MAX_REDIRECTS, int))
    backend = search.get("backend", (None, ""))[0]
    if backend is not None and backend not in BACKENDS:
        raise WebSettingsError(f"webSearch.backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    url, url_scope = search.get("url", (None, "user"))
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise WebSettingsError(f"webSearch.url must be an http(s) URL, not {url!r}")
    if backend == "searxng" and url is None:
        raise WebSettingsError("webSearch.backend is searxng but webSearch.url is not set")
    small = getattr(settings, "small_fast_model", None)
    return WebConfig(policy, limits, small, getattr(settings, "small_fast_model_scope", "user") == "user",
                     backend, url, url_scope == "user",
                     _number(search, "maxResults", "webSearch", 10, int), _number(search, "maxUses", "webSearch", 5, int))
