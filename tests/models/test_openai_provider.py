"""OpenAICompatModel over its HTTP transport against the loopback chat completions
server: the history mapping both ways, tool-call pairing, stop reasons, cached-token
usage and partial chunks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.invariant import check, holds_final
from loopwright.models import resolve_model
from loopwright.models.base import CUT_OFF, invalid_input_error
from loopwright.models.openai_compat import OpenAICompatModel, _Accumulator, to_openai_messages
from loopwright.testing import ScriptedServer, openai_to_anthropic
from tests.helpers import collect, text, use


def counter_tools(root: Path) -> list[lw.Tool]:
    obj = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
           "required": ["name"]}

    def bump(x: dict[str, Any]) -> str:
        p = root / x["name"]
        v = int(p.read_text()) if p.exists() else 0
        p.write_text(str(v + int(x.get("n", 1))))
        return p.read_text()

    def get(x: dict[str, Any]) -> str:
        p = root / x["name"]
        if not p.exists():
            raise lw.ToolError(f"{x['name']} does not exist")
        return p.read_text()

    return [lw.Tool("bump", "Add n to a counter file", obj, bump), lw.Tool("get", "Read a counter", obj, get,
                                                                           read_only=True)]


def model(srv: ScriptedServer, **kw: Any) -> OpenAICompatModel:
    kw.setdefault("retry_base_delay", 0.01)
    return OpenAICompatModel("qwen3-coder", base_url=srv.openai_url, **kw)


SCRIPT = [
    [text("Counting."), use("c1", "bump", {"name": "x", "n": 2}), use("c2", "get", {"name": "y"})],
    [use("c3", "bump", {"name": "x", "n": 3}), use("c4", "get", {"name": "x"})],
    [text("x is 5")],
]


def test_multi_turn_tool_run_maps_calls_and_results(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        r = lw.run("count", lw.AgentOptions(model=model(srv), tools=counter_tools(tmp_path),
                                            system_prompt="You count."))
        reqs = srv.loop_requests
        histories = srv.histories()
    assert r.subtype == "success", r.errors
    assert r.result == "x is 5" and (tmp_path / "x").read_text() == "5"
    assert holds_final(r.messages)
    assert len(reqs) == 3
    for h in histories:  # each request mapped back to the Anthropic shape satisfies Inv
        check(h)
    for q in reqs:
        msgs = q.body["messages"]
        assert msgs[0] == {"role": "system", "content": "You count."}
        assert q.body["stream"] is True and q.body["stream_options"] == {"include_usage": True}
        # every assistant tool_calls message is followed by one tool message per id, in order
        for i, m in enumerate(msgs):
            if m["role"] == "assistant" and m.get("tool_calls"):
                ids = [tc["id"] for tc in m["tool_calls"]]
                following = [x["tool_call_id"] for x in msgs[i + 1:i + 1 + len(ids)] if x["role"] == "tool"]
                assert following == ids
    last = reqs[2].body["messages"]
    assert last[2]["tool_calls"][0]["function"] == {"name": "bump", "arguments": json.dumps({"name": "x", "n": 2})}
    assert last[4] == {"role": "tool", "tool_call_id": "c2", "content": "Error: y does not exist"}
    assert len({json.dumps(q.body["tools"]) for q in reqs}) == 1
    assert reqs[0].body["tools"][0] == {"type": "function", "function": {
        "name": "bump", "description": "Add n to a counter file", "parameters": counter_tools(tmp_path)[0].input_schema}}


def test_cached_tokens_become_cache_reads(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT, min_cache_tokens=0) as srv:
        r = lw.run("count", lw.AgentOptions(model=model(srv), tools=counter_tools(tmp_path), system_prompt="s"))
    assert r.subtype == "success"
    first, second, third = r.call_usage
    assert first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens > 0 and third.cache_read_input_tokens > second.cache_read_input_tokens
    # input_tokens (uncached) + cached = prompt_tokens = n_k
    assert second.input_tokens > second.cache_read_input_tokens
    assert r.usage.input_tokens == sum(c.input_tokens - c.cache_read_input_tokens for c in r.call_usage)


@pytest.mark.parametrize("stop,finish", [("max_tokens", "length"), ("refusal", "content_filter"),
                                         ("end_turn", "stop")])
def test_finish_reasons_map_to_stop_reasons(stop: str, finish: str) -> None:
    with ScriptedServer([{"content": [text("partial answer")], "stop_reason": stop}]) as srv:
        r = lw.run("hi", lw.AgentOptions(model=model(srv)))
    assert r.stop_reason == stop
    if stop == "max_tokens":  # a cut-off answer is never a success (its continuation: test_output_limits.py)
        assert r.is_error and r.messages[1]["content"][0]["text"] == "partial answer"
    else:
        assert r.subtype == "success" and r.result == "partial answer"


def test_partial_chunks_are_stream_events() -> None:
    with ScriptedServer([[text("streamed " * 8)]]) as srv:
        msgs = collect("go", lw.AgentOptions(model=model(srv, include_partial_messages=True)))
    chunks = [m.event for m in msgs if isinstance(m, lw.StreamEvent)]
    assert chunks and all(c.get("object") == "chat.completion.chunk" for c in chunks)
    pieces = [c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]]
    assert "".join(pieces) == "streamed " * 8
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] > 0


def test_history_mapping_round_trip() -> None:
    png = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    h: list[dict[str, Any]] = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                                          text("ok"), use("a", "get", {"name": "x"}), use("b", "get", {"name": "y"})]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": [text("1"), {"type": "image", "source": png}]},
            {"type": "tool_result", "tool_use_id": "b", "content": "no", "is_error": True},
            text("also this"), {"type": "image", "source": png}]},
    ]
    out = to_openai_messages("sys", h)
    assert out == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": "ok", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "get", "arguments": '{"name": "x"}'}},
            {"id": "b", "type": "function", "function": {"name": "get", "arguments": '{"name": "y"}'}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1\n[image omitted]"},
        {"role": "tool", "tool_call_id": "b", "content": "Error: no"},
        {"role": "user", "content": [{"type": "text", "text": "also this"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
    ]
    system, back = openai_to_anthropic(out)
    assert system == "sys"
    check(back)
    assert [b["type"] for b in back[2]["content"]] == ["tool_result", "tool_result", "text", "image"]


def test_local_server_quirks_stop_with_tool_calls_and_missing_ids() -> None:
    acc = _Accumulator()
    acc.feed({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"name": "get", "arguments": '{"na'}}]}}]})
    acc.feed({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": 'me": "x"}'}}]}, "finish_reason": "stop"}]})
    resp = acc.response("m")
    assert resp.stop_reason == "tool_use"
    [call] = resp.content
    assert isinstance(call, lw.ToolUseBlock) and call.input == {"name": "x"} and call.id.startswith("call_")


def test_invalid_arguments_are_kept_for_an_error_result_unless_cut_off() -> None:
    acc = _Accumulator()
    acc.feed({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "k", "function": {"name": "get", "arguments": '{"name": '}}]}, "finish_reason": "tool_calls"}]})
    [call] = acc.response("m").content
    assert isinstance(call, lw.ToolUseBlock) and call.id == "k"
    assert call.invalid is not None and call.invalid.text == '{"name": '  # the model's own text, for the error
    assert call.input == {}
    message = invalid_input_error(call)
    assert message is not None and "not valid JSON" in message and '{"name": ' in message
    acc.finish = "length"
    resp = acc.response("m")
    assert resp.stop_reason == "max_tokens" and invalid_input_error(resp.content[0]) == CUT_OFF  # never run


def test_api_key_defaults_and_resolve_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    m = resolve_model("openai:llama3.1", base_url="http://127.0.0.1:11434/v1", max_retries=2)
    assert isinstance(m, OpenAICompatModel)
    assert (m.name, m.api_key, m.retry.max_retries) == ("llama3.1", "none", 2)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAICompatModel("gpt-x").api_key == "sk-env"
    assert OpenAICompatModel("gpt-x", api_key="explicit").api_key == "explicit"


def test_request_extra_and_max_tokens_reach_the_server() -> None:
    from loopwright.models import complete

    with ScriptedServer([[text("ok")]]) as srv:
        req = lw.ModelRequest("s", [], [{"role": "user", "content": [text("hi")]}], max_tokens=64,
                              extra={"temperature": 0.1, "top_p": 0.9})
        resp = asyncio.run(complete(model(srv), req))
        body = srv.loop_requests[0].body
    assert resp.content == [lw.TextBlock("ok")]
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body  # a compatible server
    assert body["temperature"] == 0.1 and body["top_p"] == 0.9
    official = OpenAICompatModel("gpt-x", api_key="k").build_params(req)
    assert official["max_completion_tokens"] == 64 and "max_tokens" not in official


def test_calls_reuse_one_kept_alive_connection(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        r = lw.run("count", lw.AgentOptions(model=model(srv), tools=counter_tools(tmp_path)))
        ports = {q.client_port for q in srv.loop_requests}
    assert r.subtype == "success" and len(ports) == 1
