"""Room: web tools (on tools.base). Owns WebSearch's implementation (tools.web defines the tool); may
import tools.base and tools.web.*.

WebSearch {query, allowed_domains?, blocked_domains?} (Claude Code's name and schema). Where
the search runs:

- on Anthropic models, the API's server tool (`web_search_20250305`), in a call of the run's
  model made for the search (as Claude Code does it): the response's `server_tool_use` and
  `web_search_tool_result` blocks are kept verbatim in that call's history, a `pause_turn`
  is continued by sending the turn back as it is (seed Def 2.3), and the searches are
  counted in usage (`server_tool_use.web_search_requests`) and priced by the catalog;
- elsewhere, a search backend from the settings: SearXNG's JSON API (`webSearch.url`), which
  users host themselves; with none configured, a clear is_error result.

Read-only, gated like WebFetch (the query leaves the machine).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from ..base import ToolContext, ToolError, ToolOutput

if TYPE_CHECKING:  # the rest of the room loads at the first call: default_tools() stays light
    from .config import WebConfig

SERVER_TOOL = "web_search_20250305"
MAX_PAUSES = 5  # outside a run; in one, AgentOptions.max_pause_continuations

NO_BACKEND = ("WebSearch has no search backend here: the run's model is not an Anthropic model (whose API "
              "searches with its web_search server tool), and no search backend is configured. Set one in the "
              "settings, e.g. {\"webSearch\": {\"backend\": \"searxng\", \"url\": \"http://localhost:8888\"}} "
              "(a SearXNG instance with the json format enabled), or use WebFetch on a URL you know.")


def _in(host: str, domains: list[str]) -> bool:
    host = host.lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in (x.lower().strip().lstrip("*.").rstrip(".")
                                                             for x in domains) if d)


def _format(query: str, results: list[dict[str, Any]], notes: list[str], where: str) -> str:
    lines = [f"Web search results for query: \"{query}\" ({where})", ""]
    if not results:
        lines.append("No results.")
    for i, r in enumerate(results, 1):
        lines.append(f"{i}. [{r.get('title') or r.get('url')}]({r.get('url')})")
        snippet = " ".join(str(r.get("content") or "").split())[:500]
        if snippet:
            lines.append("   " + snippet)
        if r.get("page_age"):
            lines.append(f"   (page age: {r['page_age']})")
    lines += ["", *notes] if notes else []
    lines += ["", "Cite the sources you use, as markdown links."] if results else []
    return "\n".join(lines).rstrip()


# --- Anthropic: the server tool -------------------------------------------------------------

def server_tool(allowed: list[str] | None, blocked: list[str] | None, max_uses: int) -> dict[str, Any]:
    t: dict[str, Any] = {"type": SERVER_TOOL, "name": "web_search", "max_uses": max_uses}
    if allowed:
        t["allowed_domains"] = allowed
    if blocked:
        t["blocked_domains"] = blocked
    return t


async def _anthropic(run: Any, query: str, allowed: list[str] | None, blocked: list[str] | None,
                     cfg: WebConfig) -> ToolOutput:
    """The search, and as `tool_use_result` Claude Code's WebSearchOutput: the search responses'
    texts and result lists in their order (`results`: a text as a string, a search's results as
    {tool_use_id, content: [{title, url}]}), how long it took and how many searches ran."""
    import time

    from ...models.base import ModelError, ModelRequest
    from .side import BudgetSpent, run_model, side_call

    started = time.monotonic()

    model = run_model(run)
    assert model is not None
    h: list[dict[str, Any]] = [{"role": "user", "content": [
        {"type": "text", "text": f"Search the web for: {query}\nThen summarize what the results say."}]}]
    request = ModelRequest("You search the web with the web_search tool for another AI agent.",
                           [server_tool(allowed, blocked, cfg.max_uses)], h)
    results: list[dict[str, Any]] = []
    texts: list[str] = []
    errors: list[str] = []
    trail: list[Any] = []
    stopped = ""
    pauses = run.max_pause_continuations
    for pause in range(pauses + 1):
        try:
            response = await side_call(run, model, request)
        except BudgetSpent:
            if not pause:
                raise ToolError("WebSearch: the run's budget is spent, so no search was made") from None
            stopped = "(the run's budget is spent: the paused search was not continued)"
            break
        except ModelError as e:
            raise ToolError(f"WebSearch: the search call failed: {e}") from None
        _collect(response.content, texts, results, errors, trail)
        if response.stop_reason != "pause_turn" or pause == pauses:
            break
        # pause_turn: the turn goes back verbatim (server_tool_use and its results too), to go on
        h = [*h, {"role": "assistant", "content": [b.to_wire() for b in response.content]}]
        request = ModelRequest(request.system, request.tools, h)
    if errors and not results:
        raise ToolError(f"WebSearch: the search failed ({', '.join(errors)})")
    notes = ["Summary of the results:", "\n".join(texts)] if texts else []
    notes += [f"(some searches failed: {', '.join(errors)})"] if errors else []
    text = _format(query, results, [*notes, stopped] if stopped else notes, "Anthropic web search")
    return ToolOutput(text, details={"query": query, "results": trail, "durationSeconds": time.monotonic() - started,
                                     "searchCount": sum(isinstance(x, dict) for x in trail)})


def _collect(content: list[Any], texts: list[str], results: list[dict[str, Any]], errors: list[str],
             trail: list[Any]) -> None:
    """A response's text (the model's summary), its web_search_result items and its search errors;
    `trail`: its texts and searches in order, as WebSearchOutput's `results` has them."""
    from ...blocks import TextBlock, UnknownBlock

    for b in content:
        if isinstance(b, TextBlock) and b.text.strip():
            texts.append(b.text.strip())
            trail.append(b.text)
        elif isinstance(b, UnknownBlock) and b.type == "web_search_tool_result":
            found = b.data.get("content")
            if isinstance(found, list):
                got = [r for r in found if isinstance(r, dict) and r.get("type") == "web_search_result"]
                results += got
                trail.append({"tool_use_id": str(b.data.get("tool_use_id") or ""),
                              "content": [{"title": str(r.get("title") or ""), "url": str(r.get("url") or "")}
                                          for r in got]})
            elif isinstance(found, dict):
                errors.append(str(found.get("error_code") or found))


# --- SearXNG --------------------------------------------------------------------------------

def searxng_url(base: str, query: str) -> str:
    base = base.rstrip("/")
    path = urlsplit(base).path
    if not path.endswith("/search"):
        base += "/search"
    return f"{base}?{urlencode({'q': query, 'format': 'json'})}"


async def _searxng(query: str, allowed: list[str] | None, blocked: list[str] | None, cfg: WebConfig) -> str:
    from .fetcher import FetchError, Limits, Redirect, fetch
    from .guard import AddressPolicy, AddressRefused

    assert cfg.search_url is not None
    url = searxng_url(cfg.search_url, query)
    policy = AddressPolicy(allow_private=True) if cfg.search_url_trusted else cfg.policy
    try:
        got = await fetch(url, policy, Limits(max_bytes=5_000_000, timeout=min(cfg.limits.timeout, 30.0)),
                          upgrade=False)
    except (FetchError, AddressRefused) as e:
        raise ToolError(f"WebSearch: the search backend {cfg.search_url} could not be reached: {e}") from None
    if isinstance(got, Redirect):
        raise ToolError(f"WebSearch: the search backend redirects to another host ({got.location}); set "
                        "webSearch.url to the address it answers at")
    if got.status == 403:
        raise ToolError(f"WebSearch: the SearXNG instance at {cfg.search_url} refuses JSON (HTTP 403): enable "
                        "the json format (search.formats: [html, json] in its settings.yml)")
    if got.status >= 400:
        raise ToolError(f"WebSearch: the search backend answered HTTP {got.status} {got.reason}".rstrip())
    try:
        data = json.loads(got.body)
        raw = data["results"]
        assert isinstance(raw, list)
    except (ValueError, KeyError, TypeError, AssertionError):
        raise ToolError(f"WebSearch: the search backend at {cfg.search_url} did not answer with SearXNG's JSON "
                        f"({got.content_type or 'no content type'}: {got.body[:120]!r})") from None
    results = []
    for r in raw:
        if not isinstance(r, dict) or not isinstance(r.get("url"), str):
            continue
        host = urlsplit(r["url"]).hostname or ""
        if (allowed and not _in(host, allowed)) or (blocked and _in(host, blocked)):
            continue
        results.append({"title": str(r.get("title") or ""), "url": r["url"], "content": str(r.get("content") or "")})
        if len(results) >= cfg.max_results:
            break
    return _format(query, results, [], f"SearXNG at {urlsplit(cfg.search_url).netloc}")


async def web_search(inp: dict[str, Any], ctx: ToolContext) -> str | ToolOutput:
    """The WebSearch call (tools.web defines the tool)."""
    from .config import WebSettingsError, web_config
    from .side import is_anthropic, run_model, run_settings

    query = str(inp["query"]).strip()
    allowed, blocked = inp.get("allowed_domains") or None, inp.get("blocked_domains") or None
    if allowed and blocked:
        raise ToolError("WebSearch: give allowed_domains or blocked_domains, not both in one search")
    run = ctx.ports
    try:
        cfg = web_config(run_settings(run))
    except WebSettingsError as e:
        raise ToolError(f"WebSearch: {e}") from None
    backend = cfg.search_backend
    if backend is None:
        backend = "anthropic" if is_anthropic(run_model(run)) else "searxng" if cfg.search_url else None
    if backend == "anthropic":
        if not is_anthropic(run_model(run)):
            raise ToolError("WebSearch: webSearch.backend is anthropic, but the run's model is not an Anthropic "
                            "model (the server tool needs one); set webSearch.backend to searxng with a url")
        return await _anthropic(run, query, allowed, blocked, cfg)
    if backend == "searxng":
        return await _searxng(query, allowed, blocked, cfg)
    raise ToolError(NO_BACKEND)
