"""Room: web tools (on tools.base). Owns WebFetch and WebSearch; may import tools.base, models
(lazily) and the transport of models/http.py.

    fetch.py    WebFetch {url, prompt}
    search.py   WebSearch {query, allowed_domains?, blocked_domains?}
    fetcher.py  the GET: redirects, caps, decoding       guard.py  the address policy (SSRF)
    convert.py  HTML / JSON / text / PDF to text          config.py the settings keys
    side.py     the tools' own model calls, charged to the run
"""

from __future__ import annotations

from ..base import Tool
from .fetch import make_web_fetch_tool
from .search import make_web_search_tool

NAMES = ("WebFetch", "WebSearch")


def make_web_tools() -> list[Tool]:
    """Fresh WebFetch and WebSearch tools (WebFetch with its own 15-minute cache)."""
    return [make_web_fetch_tool(), make_web_search_tool()]


__all__ = ["NAMES", "make_web_fetch_tool", "make_web_search_tool", "make_web_tools"]
