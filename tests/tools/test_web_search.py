"""WebSearch: through the loopback Messages server playing the web_search server tool (Anthropic
models), and through a loopback SearXNG-like JSON backend (other models); a clear is_error
result with no backend."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import loopwright as lw
from loopwright.blocks import ToolResultBlock
from loopwright.invariant import holds_final
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.catalog import price_for
from loopwright.testing import ScriptedServer, strip_cache_control
from loopwright.tools.web import make_web_search_tool
from loopwright.usage import Usage
from tests.helpers import TESTS, collect, result_text, text, use

RESULTS = [{"url": "https://docs.widget.dev/spin", "title": "Spin - Widget docs"},
           {"url": "https://blog.example.com/widget-2", "title": "Widget 2 released"},
           {"url": "https://spam.example.net/win", "title": "You won"}]


def search_turns(query: str, paused: bool = True) -> list[Any]:
    """The loop's call, the search call (paused after the server's search), its continuation,
    and the loop's final call."""
    srv_use = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": query}}
    return [[use("s1", "WebSearch", query=query)],
            {"content": [text("Let me search."), srv_use], "stop_reason": "pause_turn" if paused else "end_turn"},
            {"content": [text("Widget 2 spins at speed 3.")], "stop_reason": "end_turn"},
            [text("done")]]


def run_search(srv: ScriptedServer, **options: Any) -> Any:
    model = AnthropicModel("claude-haiku-4-5", base_url=srv.url, api_key="test")
    return lw.run("search", lw.AgentOptions(model=model, tools=[make_web_search_tool()], **options))


def test_anthropic_server_tool_search_with_pause_turn_continued_verbatim() -> None:
    asked: list[str] = []

    def search(q: str) -> list[dict[str, Any]]:
        asked.append(q)
        return RESULTS

    with ScriptedServer(search_turns("widget spin speed"), web_search=search) as srv:
        r = run_search(srv)
        calls = srv.loop_requests
    assert r.subtype == "success", r.errors
    assert asked == ["widget spin speed"]  # the server played one search
    # the search call offered the server tool, not the loop's tools
    tools = calls[1].body["tools"]
    assert [t["type"] for t in tools] == ["web_search_20250305"] and tools[0]["name"] == "web_search"
    # pause_turn: the paused turn went back verbatim, server_tool_use and result (encrypted_content) included
    sent = calls[2].body["messages"][-1]
    assert sent["role"] == "assistant"
    kinds = [b["type"] for b in sent["content"]]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result"]
    served = sent["content"][2]
    assert served["tool_use_id"] == "srvtoolu_01" and served["content"][0]["encrypted_content"].startswith("enc:")
    # what the loop's model reads: links and the summary, as one tool_result; h keeps Inv
    out = result_text(r.messages[2]["content"][0])
    assert "[Spin - Widget docs](https://docs.widget.dev/spin)" in out and "Widget 2 spins at speed 3." in out
    assert holds_final(r.messages)
    # the search is counted and priced by the catalog's price per search
    assert r.usage.web_search_requests == 1 and r.to_json()["usage"]["server_tool_use"] == {"web_search_requests": 1}
    assert r.model_usage["claude-haiku-4-5"]["webSearchRequests"] == 1
    assert [c.web_search_requests for c in r.call_usage] == [0, 1, 0, 0]
    search_call = r.call_usage[1]
    price = price_for("claude-haiku-4-5")
    assert price is not None and price.web_search == pytest.approx(0.01)
    tokens = Usage(search_call.input_tokens - search_call.cache_creation_input_tokens
                   - search_call.cache_read_input_tokens, search_call.output_tokens,
                   search_call.cache_creation_input_tokens, search_call.cache_read_input_tokens)
    assert search_call.cost_usd == pytest.approx(price.cost(tokens) + 0.01)
    assert r.total_cost_usd == pytest.approx(sum(c.cost_usd for c in r.call_usage))
    assert len(r.call_usage) == 4 and r.model_calls == 2  # two loop calls; the search's two are the tool's


def test_allowed_domains_reach_the_server_tool_and_both_lists_are_refused() -> None:
    turns = search_turns("widget", paused=False)
    turns[0] = [use("s1", "WebSearch", query="widget", allowed_domains=["widget.dev"])]
    del turns[2]
    with ScriptedServer(turns, web_search=lambda q: RESULTS) as srv:
        r = run_search(srv)
        tool = srv.loop_requests[1].body["tools"][0]
    assert tool["allowed_domains"] == ["widget.dev"] and "blocked_domains" not in tool
    out = result_text(r.messages[2]["content"][0])
    assert "docs.widget.dev" in out and "blog.example.com" not in out
    both = [[use("s1", "WebSearch", query="widget", allowed_domains=["a.com"], blocked_domains=["b.com"])],
            [text("done")]]
    with ScriptedServer(both, web_search=lambda q: RESULTS) as srv:
        r = run_search(srv)
        assert len(srv.loop_requests) == 2  # no search call was made
    block = r.messages[2]["content"][0]
    assert block["is_error"] and "not both" in result_text(block)


def test_server_tool_blocks_in_the_loops_own_turn_stay_verbatim_and_keep_inv() -> None:
    """A paused turn of the loop's own call that holds server tool blocks (a gateway that adds
    server tools): continued, the blocks sent back and kept verbatim in h, Inv intact."""
    srv_use = {"type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search", "input": {"query": "q"}}
    srv_result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_9",
                  "content": [{"type": "web_search_result", "url": "https://a.dev", "title": "A",
                               "encrypted_content": "opaque-bytes", "page_age": None}]}
    turns = [{"content": [srv_use, srv_result], "stop_reason": "pause_turn"},
             {"content": [text("A says hi.")], "stop_reason": "end_turn"}]
    with ScriptedServer(turns) as srv:
        model = AnthropicModel("claude-haiku-4-5", base_url=srv.url, api_key="test")
        r = lw.run("q", lw.AgentOptions(model=model))
        second = srv.loop_requests[1].body["messages"]
    assert r.subtype == "success" and r.num_turns == 0 and r.model_calls == 2
    assert strip_cache_control(second[-1]) == {"role": "assistant", "content": [srv_use, srv_result]}
    assert r.messages[-1]["content"][:2] == [srv_use, srv_result] and holds_final(r.messages)


# --- a SearXNG-like backend ---------------------------------------------------------------------

class _SearX(BaseHTTPRequestHandler):
    queries: list[dict[str, list[str]]] = []
    refuse_json = False

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        u = urlsplit(self.path)
        q = parse_qs(u.query)
        self.queries.append(q)
        if u.path != "/search" or q.get("format") != ["json"] or self.refuse_json:
            body, status = b"Forbidden", 403
        else:
            body = json.dumps({"query": q["q"][0], "number_of_results": 3, "results": [
                {**r, "content": f"about {r['title']}", "engine": "duckduckgo"} for r in RESULTS]}).encode()
            status = 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def searx() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _SearX)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def scripted_search(x: dict[str, Any], **options: Any) -> dict[str, Any]:
    turns = [{"content": [use("s1", "WebSearch", x)]}, {"content": [text("done")]}]
    options.setdefault("allowed_tools", ["WebSearch"])
    r = lw.run("search", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[make_web_search_tool()], **options))
    assert r.subtype == "success", r.errors
    block: dict[str, Any] = r.messages[2]["content"][0]
    return block


def test_searxng_backend_answers_with_domain_filters(searx: str) -> None:
    _SearX.queries.clear()
    settings = json.dumps({"webSearch": {"url": searx}})
    out = result_text(scripted_search({"query": "widget spin", "blocked_domains": ["example.net"]}, settings=settings))
    assert _SearX.queries[-1] == {"q": ["widget spin"], "format": ["json"]}
    assert "[Spin - Widget docs](https://docs.widget.dev/spin)" in out and "about Widget 2 released" in out
    assert "spam.example.net" not in out and "SearXNG at 127.0.0.1" in out
    only = result_text(scripted_search({"query": "widget", "allowed_domains": ["widget.dev"]}, settings=settings))
    assert "docs.widget.dev" in only and "blog.example.com" not in only


def test_searxng_without_json_says_how_to_enable_it(searx: str) -> None:
    _SearX.refuse_json = True
    try:
        block = scripted_search({"query": "widget"}, settings=json.dumps({"webSearch": {"url": searx}}))
    finally:
        _SearX.refuse_json = False
    assert block["is_error"] and "enable the json format" in result_text(block)


def test_a_workspace_search_url_is_fetched_under_the_address_policy(tmp_path: Any, searx: str) -> None:
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"webSearch": {"url": searx + "/search"}}))
    block = scripted_search({"query": "widget"}, cwd=str(tmp_path), setting_sources=["project"])
    assert block["is_error"] and "loopback" in result_text(block)


def test_no_backend_is_a_clear_is_error_result() -> None:
    block = scripted_search({"query": "widget"}, settings="{}")
    assert block["is_error"] and "no search backend" in result_text(block) and "searxng" in result_text(block)
    block = scripted_search({"query": "widget"}, settings=json.dumps({"webSearch": {"backend": "anthropic"}}))
    assert block["is_error"] and "not an Anthropic model" in result_text(block)
    block = scripted_search({"query": "x"}, settings="{}")
    assert block["is_error"] and "too short" in result_text(block)  # Claude Code's minLength 2


def test_max_uses_reaches_the_server_tool_and_a_refused_search_is_reported() -> None:
    uses = [{"type": "server_tool_use", "id": f"srvtoolu_{i}", "name": "web_search", "input": {"query": f"q{i}"}}
            for i in (1, 2)]
    turns = [[use("s1", "WebSearch", query="widget")], {"content": uses, "stop_reason": "end_turn"}, [text("done")]]
    with ScriptedServer(turns, web_search=lambda q: RESULTS[:1]) as srv:
        r = run_search(srv, settings=json.dumps({"webSearch": {"maxUses": 1}}), allowed_tools=["WebSearch"])
        tool = srv.loop_requests[1].body["tools"][0]
    assert tool["max_uses"] == 1
    out = result_text(r.messages[2]["content"][0])
    assert "docs.widget.dev" in out and "max_uses_exceeded" in out
    assert r.usage.web_search_requests == 1  # the refused one is not a search


def test_the_loopback_server_refuses_what_the_api_refuses() -> None:
    import urllib.error
    import urllib.request

    bad = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "q"}],
           "tools": [{"type": "web_search_20250305", "name": "web_search", "allowed_domains": ["a.com"],
                      "blocked_domains": ["b.com"]}]}
    with ScriptedServer([[text("never")]], web_search=lambda q: RESULTS) as srv:
        req = urllib.request.Request(srv.url + "/v1/messages", json.dumps(bad).encode(),
                                     {"content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 400 and "both allowed_domains and blocked_domains" in e.value.read().decode()


def test_searxng_results_are_capped_by_max_results(searx: str) -> None:
    settings = json.dumps({"webSearch": {"url": searx, "maxResults": 1}})
    out = result_text(scripted_search({"query": "widget"}, settings=settings))
    assert "1. [Spin" in out and "2. [" not in out


CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code not installed (cd tests/node && npm install)")
def test_side_by_side_with_claude_code_on_the_same_turns(tmp_path: Path) -> None:
    """The same scripted WebSearch turn for Claude Code and loopwright against the server playing
    web_search: both make a search call that offers only the server tool, both give the
    model the result's link and the search model's summary, and both give the same structured
    output (WebSearchOutput: the search response's texts and results in order, the search count;
    the duration each its own)."""
    srv_use = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "widget spin"}}
    turns = [[use("toolu_1", "WebSearch", query="widget spin")],
             {"content": [text("Searching."), srv_use, text("Widget spins at 3.")], "stop_reason": "end_turn"},
             [text("done")]]
    seen: dict[str, tuple[list[str], str, Any]] = {}
    (tmp_path / "home").mkdir()
    with ScriptedServer(turns, web_search=lambda q: RESULTS[:1]) as srv:
        env = {**os.environ, "HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": srv.url,
               "ANTHROPIC_API_KEY": "test", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "ENABLE_TOOL_SEARCH": "false"}
        out = subprocess.run([str(CLAUDE), "-p", "search", "--allowedTools", "WebSearch", "--output-format",
                              "stream-json", "--verbose"], env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=180)
        lines = [json.loads(ln) for ln in out.stdout.splitlines() if ln.strip()]
        assert lines[-1]["subtype"] == "success", out.stdout[-1000:]
        calls = srv.loop_requests
        [structured] = [ln["tool_use_result"] for ln in lines if ln.get("type") == "user"]
        seen["claude"] = ([t.get("type", "") for t in calls[1].body["tools"]],
                          result_text(calls[2].body["messages"][-1]["content"][0]), structured)
    with ScriptedServer(turns, web_search=lambda q: RESULTS[:1]) as srv:
        model = AnthropicModel("claude-haiku-4-5", base_url=srv.url, api_key="test")
        msgs = collect("search", lw.AgentOptions(model=model, tools=[make_web_search_tool()],
                                                 allowed_tools=["WebSearch"]))
        [block] = [b for m in msgs if isinstance(m, lw.UserMessage) for b in m.content if isinstance(b, ToolResultBlock)]
        seen["loopwright"] = ([t.get("type", "") for t in srv.loop_requests[1].body["tools"]],
                              result_text(block.to_wire()), block.details)
    for who, (tools, result, _) in seen.items():
        assert tools == ["web_search_20250305"], who
        assert "Spin - Widget docs" in result and "https://docs.widget.dev/spin" in result, who
        assert "Widget spins at 3." in result, who
    ours, cc = seen["loopwright"][2], seen["claude"][2]
    assert ours["results"] == ["Searching.", {"tool_use_id": "srvtoolu_01", "content": [
        {"title": "Spin - Widget docs", "url": "https://docs.widget.dev/spin"}]}, "Widget spins at 3."]
    assert set(ours) == set(cc) and {k: v for k, v in ours.items() if k != "durationSeconds"} == {
        k: v for k, v in cc.items() if k != "durationSeconds"}
    assert ours["durationSeconds"] >= 0 and cc["durationSeconds"] >= 0
