"""Room: web tools (on tools.base). Owns WebFetch and WebSearch (their definitions here); may import
tools.base, models (lazily) and the transport of models/http.py.

    __init__.py the tools' definitions (description, schema); their handlers import the rest
                at the first call (tools/__init__.py)
    fetch.py    WebFetch {url, prompt, offset?}
    search.py   WebSearch {query, allowed_domains?, blocked_domains?}
    fetcher.py  the GET: redirects, caps, decoding       guard.py  the address policy (SSRF)
    convert.py  HTML / JSON / text / PDF to text          config.py the settings keys
    side.py     the tools' own model calls, charged to the run
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base import Tool, ToolContext, ToolOutput

if TYPE_CHECKING:
    from .fetch import FetchCache

NAMES = ("WebFetch", "WebSearch")

FETCH_DESCRIPTION = """Fetches a URL and answers a prompt about its content.

- Takes a URL and a prompt; fetches the page, converts HTML to Markdown (text, JSON and PDF are read too),
  and answers the prompt over the content with a small, fast model; returns that answer.
- Use it to read web pages, documentation and API references.

Usage notes:
- The URL must be a fully-formed, valid URL. http:// URLs are upgraded to https:// where the host supports it.
- The prompt should say what information you want from the page.
- This tool is read-only: it changes no files.
- A page longer than 100,000 characters is read a part at a time: the result says which offset to
  give the next call to read on.
- Results are cached for 15 minutes: fetching the same URL again is fast.
- When a URL redirects to another host, the tool says so and gives the redirect URL instead of following it:
  call WebFetch again with that URL to fetch it.
- Private, loopback and link-local addresses are not fetched unless the user's settings allow them."""

FETCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "format": "uri", "description": "The URL to fetch content from"},
        "prompt": {"type": "string", "description": "The prompt to run on the fetched content"},
        "offset": {"type": "integer", "minimum": 0,
                   "description": "Character position in the page text to start reading from. Use it to read on "
                                  "through a page too long for one call, with the value the previous result gave."},
    },
    "required": ["url", "prompt"],
    "additionalProperties": False,
}

SEARCH_DESCRIPTION = """Searches the web and returns the results (titles, URLs and what they say), to answer with
information newer than your training data.

Usage notes:
- allowed_domains keeps only results from those domains; blocked_domains leaves those out (not both).
- Cite the sources you use in your answer, as markdown links.
- Use the current year in queries about recent events or documentation."""

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 2, "description": "The search query to use"},
        "allowed_domains": {"type": "array", "items": {"type": "string"},
                            "description": "Only include search results from these domains"},
        "blocked_domains": {"type": "array", "items": {"type": "string"},
                            "description": "Never include search results from these domains"},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def make_web_fetch_tool() -> Tool:
    """WebFetch, with its own 15-minute cache (one per tool set: per session in the CLI; its time
    CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS, read at the first call)."""
    caches: list[FetchCache] = []  # made at the first call

    async def _web_fetch(inp: dict[str, Any], ctx: ToolContext) -> str | ToolOutput:
        from .fetch import FetchCache, web_fetch

        if not caches:  # (Claude Code's CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS: the run's env over the process's)
            import os

            from ...ccenv import number

            ms = number({**os.environ, **ctx.env}, "CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS", -1)
            caches.append(FetchCache(ms / 1000) if ms >= 0 else FetchCache())
        return await web_fetch(inp, ctx, caches[0])

    return Tool("WebFetch", FETCH_DESCRIPTION, FETCH_SCHEMA, _web_fetch, read_only=True)


async def _web_search(inp: dict[str, Any], ctx: ToolContext) -> str | ToolOutput:
    from .search import web_search

    return await web_search(inp, ctx)


def make_web_search_tool() -> Tool:
    return Tool("WebSearch", SEARCH_DESCRIPTION, SEARCH_SCHEMA, _web_search, read_only=True)


def make_web_tools() -> list[Tool]:
    """Fresh WebFetch and WebSearch tools (WebFetch with its own 15-minute cache)."""
    return [make_web_fetch_tool(), make_web_search_tool()]
