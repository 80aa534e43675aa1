"""Room: web tools (on tools.base). Owns WebFetch's implementation (tools.web defines the tool); may
import tools.base and tools.web.*.

WebFetch {url, prompt} (Claude Code's name and schema): GET the URL (fetcher.py: the address
policy, same-host redirects, caps), turn the body into text (convert.py), and answer the
prompt over it with a small model (`smallFastModel`, default the run's model), charged to the
run (side.py). With no model for it, or the budget spent, the content itself is returned,
trimmed. A redirect to another host is reported, not followed: the model may fetch the new
URL with another call, which the gate sees as such.

Read-only (seed Def 6.1: it changes nothing here), so calls run side by side (Prop 6.2); the
gate still asks for it (a URL can carry data out): `WebFetch(domain:example.com)` rules
approve a host (gate.rules).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...threads import run_in_worker
from ..base import ToolContext, ToolError, ToolOutput

if TYPE_CHECKING:  # the rest of the room loads at the first call: default_tools() stays light
    from .fetcher import Redirect

MAX_CONTENT_CHARS = 100_000  # what is sent to the small model, or returned without one
CACHE_TTL_S = 15 * 60
CACHE_MAX_CHARS = 20_000_000  # at most ~80 MB of text kept (4 bytes a character at worst)

SYSTEM = ("You answer a question about a web page for another AI agent. Use only the page's content given "
          "below; when it does not say, say so. Be concise.")


@dataclass(slots=True)
class Fetched:
    """A page WebFetch read, converted to text, with when it was fetched (its cache entry)."""

    url: str
    status: int
    kind: str  # markdown | json | text | pdf
    text: str
    size: int  # bytes received
    truncated: bool
    at: float


class FetchCache:
    """(URL, address policy) -> Fetched for CACHE_TTL_S, oldest out first beyond CACHE_MAX_CHARS
    (keyed on the policy too: what one run's settings let through is not another's)."""

    def __init__(self, ttl: float = CACHE_TTL_S, max_chars: int = CACHE_MAX_CHARS) -> None:
        self.ttl, self.max_chars = ttl, max_chars
        self.entries: OrderedDict[Hashable, Fetched] = OrderedDict()
        self.chars = 0

    def get(self, key: Hashable) -> Fetched | None:
        e = self.entries.get(key)
        if e is None:
            return None
        if time.monotonic() - e.at > self.ttl:
            self._drop(key)
            return None
        return e

    def put(self, key: Hashable, e: Fetched) -> None:
        if key in self.entries:
            self._drop(key)
        if len(e.text) > self.max_chars:
            return
        self.entries[key] = e
        self.chars += len(e.text)
        while self.chars > self.max_chars:
            self._drop(next(iter(self.entries)))

    def _drop(self, key: Hashable) -> None:
        self.chars -= len(self.entries.pop(key).text)


def _redirect_text(r: Redirect, prompt: str) -> str:
    return (f"REDIRECT DETECTED: {r.url} redirects ({r.status}) to another host: {r.location}\n"
            "It was not followed. To fetch it, call WebFetch again with:\n"
            f"- url: \"{r.location}\"\n- prompt: \"{prompt}\"")


async def _fetch(url: str, cfg: Any) -> Fetched | Redirect:
    from .convert import SLOW_KINDS, NotText, kind_of, to_text
    from .fetcher import FetchError, Page, Redirect, fetch
    from .guard import AddressRefused

    try:
        got = await fetch(url, cfg.policy, cfg.limits)
    except (FetchError, AddressRefused) as e:
        raise ToolError(f"WebFetch could not fetch {url[:200]}: {e}") from None
    if isinstance(got, Redirect):
        return got
    page: Page = got
    if page.status >= 400:
        excerpt = page.body[:300].decode("utf-8", "replace").strip()
        raise ToolError(f"WebFetch: {page.url} answered HTTP {page.status} {page.reason}".rstrip()
                        + (f": {excerpt}" if excerpt else ""))
    try:
        if kind_of(page.body, page.content_type) in SLOW_KINDS:  # a PDF or page built to be slow to convert:
            from .worker import (  # in a process killed when the time is up
                ConversionFailed,
                to_text_bounded,
            )

            try:
                text, kind = await to_text_bounded(page.body, page.content_type, cfg.limits.timeout)
            except ConversionFailed as e:
                raise ToolError(f"WebFetch: converting {page.url} ({page.content_type}) failed: {e}") from None
        else:
            async with asyncio.timeout(cfg.limits.timeout):
                text, kind = await run_in_worker(to_text, page.body, page.content_type)
    except NotText as e:
        raise ToolError(f"WebFetch: {page.url}: {e}") from None
    except TimeoutError:
        raise ToolError(f"WebFetch: converting {page.url} ({page.content_type}) took longer than "
                        f"{cfg.limits.timeout:g} s and was given up") from None
    return Fetched(page.url, page.status, kind, text, len(page.body), page.truncated, time.monotonic())


def _window(f: Fetched, offset: int) -> tuple[str, str, str]:
    """(the content from `offset`, at most MAX_CONTENT_CHARS of it; a note on what was cut; how
    to read on, or "")."""
    notes = []
    if f.truncated:
        notes.append(f"the body was cut at {f.size} bytes")
    total = len(f.text)
    start = min(offset, total)
    end = min(start + MAX_CONTENT_CHARS, total)
    more = ""
    if start or end < total:
        notes.append(f"characters {start} to {end} of {total}")
    if end < total:
        more = f"The page goes on: call WebFetch with offset={end} to read the rest."
    return f.text[start:end], "; ".join(notes), more


def _output(text: str, got: Fetched, started: float) -> ToolOutput:
    """The call's result, with Claude Code's WebFetchOutput as its details (`result`: the text the
    model got, as Claude Code gives it; as bounded as that is)."""
    from http import HTTPStatus

    try:
        phrase = HTTPStatus(got.status).phrase
    except ValueError:
        phrase = ""
    return ToolOutput(text, details={"bytes": got.size, "code": got.status, "codeText": phrase, "result": text,
                                     "durationMs": round((time.monotonic() - started) * 1000), "url": got.url})


async def web_fetch(inp: dict[str, Any], ctx: ToolContext, store: FetchCache) -> str | ToolOutput:
    """The WebFetch call (tools.web defines the tool), with its tool's cache."""
    started = time.monotonic()
    from .config import WebSettingsError, web_config
    from .fetcher import Redirect
    from .side import BudgetSpent, close, run_settings, side_call, side_model

    url, prompt = str(inp["url"]), str(inp["prompt"])
    run = ctx.ports
    try:
        cfg = web_config(run_settings(run))
    except WebSettingsError as e:
        raise ToolError(f"WebFetch: {e}") from None
    got: Fetched | Redirect | None = store.get((url, cfg.policy))
    if got is None:
        got = await _fetch(url, cfg)
        if isinstance(got, Redirect):
            return _redirect_text(got, prompt)
        store.put((url, cfg.policy), got)
    assert isinstance(got, Fetched)
    content, cut, more = _window(got, int(inp.get("offset") or 0))
    source = f"{got.url} ({got.kind}, {got.size} bytes{'; ' + cut if cut else ''})"
    model, owned = side_model(run, cfg.small_model, cfg.small_model_trusted)
    why = "no model is configured to answer the prompt (smallFastModel)"
    if model is not None:
        assert run is not None  # side_model gives a model only inside a run
        user = (f"The content of {got.url}:\n<content>\n{content}\n</content>\n\n{prompt}\n\n"
                "Answer from the content above only.")
        from ...models.base import ModelError, ModelRequest

        request = ModelRequest(SYSTEM, [], [{"role": "user", "content": [{"type": "text", "text": user}]}])
        try:
            response = await side_call(run, model, request)
            answer = "".join(getattr(b, "text", "") for b in response.content).strip()
            if answer:
                return _output(f"{answer}\n\n({more})" if more else answer, got, started)
            why = "the model answering the prompt returned no text"
        except BudgetSpent:
            why = "the run's budget is spent, so no model answered the prompt"
        except ModelError as e:
            why = f"the model answering the prompt failed ({e})"
        finally:
            if owned:
                await close(model)
    return _output(f"Content of {source}; {why}, so here is the content itself:\n\n{content}" + (
        f"\n\n({more})" if more else ""), got, started)
