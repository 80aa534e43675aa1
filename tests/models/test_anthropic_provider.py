"""AnthropicModel over its HTTP transport against the loopback Messages API server:
whole tool-using runs, prompt caching breakpoints, byte-stable prefixes, thinking
round trips, partial events and usage accounting."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.history import frozen
from loopwright.invariant import check, holds_final
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.catalog import price_for
from loopwright.options import model_for
from loopwright.testing import ScriptedServer
from loopwright.testing.prompt_cache import count_breakpoints
from loopwright.usage import Price, Usage
from tests.helpers import collect, text, use


def file_tools(root: Path) -> list[lw.Tool]:
    """Real tools on real files in a tmp dir."""
    obj = {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
           "required": ["path"]}

    def read(x: dict[str, Any]) -> str:
        p = root / x["path"]
        if not p.exists():
            raise lw.ToolError(f"no such file: {x['path']}")
        return p.read_text()

    def write(x: dict[str, Any]) -> str:
        (root / x["path"]).write_text(x.get("text", ""))
        return "ok"

    return [lw.Tool("read", "Read a file", obj, read, read_only=True),
            lw.Tool("write", "Write a file", obj, write)]


def model(srv: ScriptedServer, **kw: Any) -> AnthropicModel:
    kw.setdefault("retry_base_delay", 0.01)
    return AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="test-key", **kw)


SCRIPT = [
    [text("Let me look."), use("u1", "read", {"path": "a.py"}), use("u2", "read", {"path": "b.py"})],
    [use("u3", "write", {"path": "a.py", "text": "fixed"})],
    [use("u4", "read", {"path": "missing.py"})],
    [text("All done.")],
]


def test_multi_turn_run_requests_are_valid_cached_and_byte_stable(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("bug")
    (tmp_path / "b.py").write_text("test")
    with ScriptedServer(SCRIPT, min_cache_tokens=0) as srv:
        r = lw.run("fix a.py", lw.AgentOptions(model=model(srv), tools=file_tools(tmp_path),
                                               system_prompt="You fix bugs."))
        reqs = srv.loop_requests
    assert r.subtype == "success", r.errors
    assert r.result == "All done." and r.num_turns == 3 and r.model_calls == 4
    assert (tmp_path / "a.py").read_text() == "fixed"
    assert holds_final(r.messages)
    assert len(reqs) == 4
    for q in reqs:
        check(q.body["messages"])  # Inv on every request the API received
        assert count_breakpoints(q.body) <= 4
        assert "test-key" in (q.headers.get("x-api-key"), q.headers.get("authorization", "").removeprefix("Bearer "))
        assert q.body["stream"] is True
        # the newest message carries the moving breakpoint on its last block
        assert q.body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    # tools and system: identical bytes on every call, with their breakpoints
    assert len({json.dumps(q.body["tools"]) for q in reqs}) == 1
    assert len({json.dumps(q.body["system"]) for q in reqs}) == 1
    assert reqs[0].body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert reqs[0].body["system"] == [{"type": "text", "text": "You fix bugs.", "cache_control": {"type": "ephemeral"}}]
    # the previous user message keeps a breakpoint too: what the last call wrote is read
    assert reqs[1].body["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    # the refused/failed read still produced its is_error result, first in its message
    third_results = reqs[3].body["messages"][-1]["content"]
    assert third_results[0]["tool_use_id"] == "u4" and third_results[0]["is_error"] is True
    # caching works: every call after the first reads the prefix the previous call wrote
    assert r.call_usage[0].cache_read_input_tokens == 0 and r.call_usage[0].cache_creation_input_tokens > 0
    for prev, cur in zip(r.call_usage, r.call_usage[1:], strict=False):
        assert cur.cache_read_input_tokens == prev.input_tokens
    # the loop's live history was never touched by the provider's breakpoints
    assert "cache_control" not in json.dumps(r.messages)


def test_cost_comes_from_usage_and_the_price_table(tmp_path: Path) -> None:
    usage = {"input_tokens": 100, "output_tokens": 50, "cache_creation_input_tokens": 3000,
             "cache_read_input_tokens": 20000, "cache_creation": {"ephemeral_1h_input_tokens": 1000,
                                                                 "ephemeral_5m_input_tokens": 2000}}
    with ScriptedServer([{"content": [text("hi")], "usage": usage}]) as srv:
        r = lw.run("hello", lw.AgentOptions(model=model(srv)))
    assert r.subtype == "success"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (100, 50)
    assert (r.usage.cache_creation_input_tokens, r.usage.cache_read_input_tokens) == (3000, 20000)
    assert r.usage.cache_creation_1h_input_tokens == 1000
    price = price_for("claude-sonnet-4-6")
    assert price is not None
    # 5m writes 1.25x, 1h writes 2x, reads 0.1x of $3/MTok input
    expected = (100 * 3 + 50 * 15 + 2000 * 3.75 + 1000 * 6 + 20000 * 0.3) / 1e6
    assert abs(r.total_cost_usd - expected) < 1e-12
    assert abs(price.cost(Usage.from_json(usage)) - expected) < 1e-12
    assert isinstance(price, Price)


def test_thinking_redacted_and_unknown_blocks_round_trip_verbatim(tmp_path: Path) -> None:
    thinking = {"type": "thinking", "thinking": "Step 1: read the file.\nStep 2: ünïcödé ✓ " * 7,
                "signature": "EqQBCkYIARgCIkD+/=sig" * 5}
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a" * 3}
    unknown = {"type": "future_block_type", "payload": {"nested": [1, 2, {"k": "v"}]}, "id": "fb_1"}
    script = [[thinking, redacted, unknown, text("reading"), use("u1", "read", {"path": "a.py"})],
              [text("done")]]
    (tmp_path / "a.py").write_text("x")
    with ScriptedServer(script) as srv:
        r = lw.run("go", lw.AgentOptions(model=model(srv), tools=file_tools(tmp_path)))
        second = srv.loop_requests[1].body
    assert r.subtype == "success", r.errors
    sent = second["messages"][1]["content"]
    assert json.dumps(sent[0]) == json.dumps(thinking)  # same keys, order and bytes
    assert json.dumps(sent[1]) == json.dumps(redacted)
    assert json.dumps(sent[2]) == json.dumps(unknown)
    assert isinstance(r.messages, list) and r.messages[1]["content"][0] == thinking


def test_partial_stream_events_arrive_before_the_assistant_message() -> None:
    with ScriptedServer([[text("hello there, " * 5)]]) as srv:
        msgs = collect("hi", lw.AgentOptions(model=model(srv, include_partial_messages=True)))
    kinds = [m.event["type"] for m in msgs if isinstance(m, lw.StreamEvent)]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "content_block_start" in kinds and "message_delta" in kinds
    deltas = [m.event["delta"]["text"] for m in msgs
              if isinstance(m, lw.StreamEvent) and m.event["type"] == "content_block_delta"]
    assert len(deltas) > 1 and "".join(deltas) == "hello there, " * 5
    i_last_event = max(i for i, m in enumerate(msgs) if isinstance(m, lw.StreamEvent))
    i_assistant = next(i for i, m in enumerate(msgs) if isinstance(m, lw.AssistantMessage))
    assert i_last_event < i_assistant
    assert isinstance(msgs[-1], lw.ResultMessage) and msgs[-1].subtype == "success"


def test_partial_events_are_off_by_default() -> None:
    with ScriptedServer([[text("hi")]]) as srv:
        msgs = collect("hi", lw.AgentOptions(model=model(srv)))
    assert not any(isinstance(m, lw.StreamEvent) for m in msgs)


def test_prompt_caching_off_sends_no_breakpoints(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("bug")
    (tmp_path / "b.py").write_text("t")
    with ScriptedServer(SCRIPT[:2] + [[text("ok")]], min_cache_tokens=0) as srv:
        opts = lw.AgentOptions(model="claude-sonnet-4-6", base_url=srv.url, api_key="k", prompt_caching=False,
                               tools=file_tools(tmp_path), system_prompt="sys")
        r = lw.run("go", opts)
        reqs = srv.loop_requests
    assert r.subtype == "success", r.errors
    assert all("cache_control" not in json.dumps(q.body) for q in reqs)
    assert reqs[0].body["system"] == "sys"
    assert r.usage.cache_read_input_tokens == 0 and r.usage.cache_creation_input_tokens == 0


def test_inherited_cache_marks_never_exceed_four_breakpoints() -> None:
    # a history imported from elsewhere that already carries cache_control on several blocks
    mark = {"type": "ephemeral"}
    history = []
    for i in range(4):
        history.append({"role": "user", "content": [{"type": "text", "text": f"q{i}", "cache_control": mark}]})
        history.append({"role": "assistant", "content": [{"type": "text", "text": f"a{i}", "cache_control": mark}]})
    snapshot = json.dumps(history)
    obj = {"type": "object", "properties": {}}
    t = lw.Tool("noop", "nothing", obj, lambda x: "ok", read_only=True)
    with ScriptedServer([[use("n1", "noop", {})], [text("fine")]]) as srv:  # strict: >4 would be a 400
        msgs = collect("again", lw.AgentOptions(model=model(srv), tools=[t], system_prompt="s"), history=history)
        reqs = srv.loop_requests
    res = msgs[-1]
    assert res.subtype == "success", res.errors
    assert all(count_breakpoints(q.body) == 4 for q in reqs)
    assert json.dumps(history) == snapshot  # the caller's history was not modified


def test_model_string_and_options_pick_the_provider() -> None:
    opts = lw.AgentOptions(model="claude-haiku-4-5", base_url="http://127.0.0.1:1", api_key="k", max_retries=7,
                           include_partial_messages=True, prompt_caching=False)
    m = model_for(opts)
    assert isinstance(m, AnthropicModel)
    assert (m.name, m.base_url, m.retry.max_retries, m.include_partial_messages, m.prompt_caching) == (
        "claude-haiku-4-5", "http://127.0.0.1:1", 7, True, False)
    assert m.max_tokens > 0


def test_unknown_stop_reason_ends_cleanly() -> None:
    with ScriptedServer([{"content": [text("?")], "stop_reason": "a_future_reason"}], strict=False) as srv:
        r = lw.run("hi", lw.AgentOptions(model=model(srv)))
    assert r.subtype == "error_during_execution"
    assert "a_future_reason" in r.errors[0]
    check(r.messages)


@pytest.mark.e2e
def test_import_loopwright_imports_no_provider_sdk() -> None:
    code = ("import sys, loopwright, loopwright.models, loopwright.testing; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'openai')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_build_params_copies_only_what_it_marks() -> None:
    m = AnthropicModel("claude-sonnet-4-6", api_key="k")
    tools = [{"name": "a", "description": "a", "input_schema": {"type": "object"}},
             {"name": "b", "description": "b", "input_schema": {"type": "object"}}]
    h: list[dict[str, Any]] = [
        {"role": "user", "content": [text("q")]},
        {"role": "assistant", "content": [use("x", "a", {})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "r"}]},
        # a paused turn sent back for continuation: its last block is thinking, which cannot be marked
        {"role": "assistant", "content": [text("partial"), {"type": "thinking", "thinking": "t", "signature": "s"}]},
    ]
    snapshot = json.dumps(h)
    p1 = m.build_params(lw.ModelRequest("sys", tools, h))
    p2 = m.build_params(lw.ModelRequest("sys", tools, h))
    assert json.dumps(h) == snapshot and "cache_control" not in json.dumps(tools)
    # a caller's plain list may have changed in place since: built each time; a run's frozen
    # definitions (loop/state.py's RunDeps) are built once
    assert p1["tools"] == p2["tools"] and p1["tools"] is not p2["tools"] and p1["system"] is p2["system"]
    run_tools = frozen(tools)
    assert m.build_params(lw.ModelRequest("sys", run_tools, h))["tools"] is \
        m.build_params(lw.ModelRequest("sys", run_tools, h))["tools"] == p1["tools"]
    msgs = p1["messages"]
    assert msgs is not h and msgs[0] is h[0] and msgs[1] is h[1]  # untouched messages are shared
    assert msgs[3]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in msgs[3]["content"][1]
    assert msgs[2]["content"][0]["cache_control"] == {"type": "ephemeral"}  # the previous user message
    assert count_breakpoints(p1) == 4
    one_hour = AnthropicModel("claude-sonnet-4-6", api_key="k", cache_ttl="1h").build_params(
        lw.ModelRequest(None, [], [{"role": "user", "content": "plain string"}]))
    assert one_hour["messages"][0]["content"] == [
        {"type": "text", "text": "plain string", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    assert "system" not in one_hour and "tools" not in one_hour


def test_missing_credentials_and_unreachable_server_end_cleanly(monkeypatch: Any) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with ScriptedServer([[text("never")]]) as srv:
        r = lw.run("x", lw.AgentOptions(model=AnthropicModel("claude-sonnet-4-6", base_url=srv.url)))
        assert srv.requests == []
    assert r.subtype == "error_during_execution" and "ANTHROPIC_API_KEY" in r.errors[0]
    with ScriptedServer([]) as srv:
        dead = srv.url
    r = lw.run("x", lw.AgentOptions(model=AnthropicModel("claude-sonnet-4-6", base_url=dead, api_key="k",
                                                         max_retries=1, retry_base_delay=0.01)))
    assert r.subtype == "error_during_execution"
    assert "after 2 attempts" in r.errors[0] and "onnect" in r.errors[0]
    check(r.messages)


def test_request_extra_fields_reach_the_api() -> None:
    from loopwright.models import complete

    extra = {"temperature": 0.25, "thinking": {"type": "adaptive"}, "metadata": {"user_id": "u1"}}
    with ScriptedServer([[text("ok")]]) as srv:
        req = lw.ModelRequest(None, [], [{"role": "user", "content": [text("hi")]}], max_tokens=77, extra=extra)
        resp = asyncio.run(complete(model(srv), req))
        body = srv.loop_requests[0].body
    assert resp.content == [lw.TextBlock("ok")] and resp.stop_reason == "end_turn"
    assert body["max_tokens"] == 77
    assert {k: body[k] for k in extra} == extra


def test_calls_reuse_one_kept_alive_connection(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("bug")
    (tmp_path / "b.py").write_text("t")
    with ScriptedServer(SCRIPT) as srv:
        r = lw.run("go", lw.AgentOptions(model=model(srv), tools=file_tools(tmp_path)))
        ports = {q.client_port for q in srv.loop_requests}
    assert r.subtype == "success" and r.model_calls == 4
    assert len(ports) == 1  # the stream's end was read, so the connection went back to the pool


def test_interrupt_during_a_slow_model_call_keeps_the_history(tmp_path: Path) -> None:
    from loopwright.testing import Fault

    (tmp_path / "a.py").write_text("bug")
    (tmp_path / "b.py").write_text("t")
    control = lw.RunControl()

    async def go(srv: ScriptedServer) -> list[Any]:
        out = []
        async for m in lw.query("go", lw.AgentOptions(model=model(srv), tools=file_tools(tmp_path)), control=control):
            out.append(m)
            if isinstance(m, lw.UserMessage):  # the second call will hang: interrupt it
                srv.inject(Fault(delay=3.0))
                asyncio.get_running_loop().call_later(0.2, control.interrupt)
        return out

    with ScriptedServer(SCRIPT) as srv:
        msgs = asyncio.run(go(srv))
        n = len(srv.loop_requests)
    res = msgs[-1]
    assert res.subtype == "error_during_execution" and "interrupt" in res.errors[0]
    assert n == 2 and res.model_calls == 1
    check(res.messages)  # (user, assistant with tool_use, tool results): valid, ready to resume
    assert len(res.messages) == 3


# --- provider clients end with their run ----------------------------------------------------------

@pytest.mark.e2e
def test_sequential_runs_on_a_provider_leave_no_client_to_close_on_a_dead_loop() -> None:
    # Before: each lw.run() left its SDK client to the garbage collector, which closed it on
    # a later run's loop: "Task exception was never retrieved ... Event loop is closed"
    # tracebacks on stderr, and unclosed sockets.
    code = (
        "import gc, loopwright as lw\n"
        "from loopwright.testing import ScriptedServer\n"
        "with ScriptedServer([[{'type': 'text', 'text': 'ok'}]] * 5) as srv:\n"
        "    for _ in range(5):\n"
        "        r = lw.run('go', lw.AgentOptions(model='claude-sonnet-5-5', base_url=srv.url, api_key='test'))\n"
        "        assert r.subtype == 'success', r.errors\n"
        "        gc.collect()\n"
        "print('ok')\n"
    )
    p = subprocess.run([sys.executable, "-X", "dev", "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
    assert "Event loop is closed" not in p.stderr and "never retrieved" not in p.stderr
    assert "unclosed" not in p.stderr, p.stderr



@pytest.mark.parametrize("caching", [True, False])
def test_another_providers_blocks_are_not_sent_and_the_history_is_not_changed(caching: bool) -> None:
    """A history from a Responses model (a fallback mid-run): its `openai_reasoning` blocks are left
    out of the request, an assistant message that held only that is sent as a short text (the API
    refuses an empty one), and the live history keeps every block."""
    from loopwright.models.anthropic import FOREIGN_ONLY
    from loopwright.models.base import ModelRequest

    item = {"type": "openai_reasoning", "item": {"type": "reasoning", "id": "rs_1", "summary": []}}
    h: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [item, text("calling"), use("t1", "echo", {"s": "a"})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
        {"role": "assistant", "content": [item]},
        {"role": "user", "content": "go on"},
    ]
    before = json.dumps(h)
    m = AnthropicModel("claude-sonnet-4-5", api_key="test", prompt_caching=caching)
    for _ in range(2):  # the second call reuses the incremental scan
        sent = m.build_params(ModelRequest(messages=h, system=None, tools=[]))["messages"]
        assert [b["type"] for b in sent[1]["content"]] == ["text", "tool_use"]
        assert [b["type"] for b in sent[3]["content"]] == ["text"] and sent[3]["content"][0]["text"] == FOREIGN_ONLY
        assert not any("openai" in json.dumps(x) for x in sent)
        h.append({"role": "assistant", "content": [text("ok")]})
        h.append({"role": "user", "content": "more"})
    assert json.dumps(h[:5]) == before
