"""Issue 27, item 6: OpenAIResponsesModel (`responses:<model>`) on the loopback server's
/v1/responses: tool calls both ways, streamed and not, reasoning items kept and sent back
verbatim, usage with cached tokens, max_output_tokens, broken streams retried, Inv held."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.invariant import holds_final
from loopwright.messages import SystemMessage
from loopwright.models import check_model_spec, resolve_model
from loopwright.models.base import CUT_OFF, ModelRequest, invalid_input_error
from loopwright.models.openai_responses import (
    REASONING,
    OpenAIResponsesModel,
    read_response,
    to_responses_input,
)
from loopwright.models.window import forget_all
from loopwright.testing import Fault, ScriptedServer
from tests.helpers import text, use

ITEM = {"type": "reasoning", "id": "rs_0a1b", "summary": [{"type": "summary_text", "text": "Count first."}],
        "encrypted_content": "gAAAAB-opaque-bytes=="}


def model(srv: ScriptedServer, **kw: Any) -> OpenAIResponsesModel:
    return OpenAIResponsesModel("gpt-5-mini", base_url=srv.openai_url, retry_base_delay=0.01, **kw)


def counter(root: Path) -> lw.Tool:
    @lw.tool
    def bump(name: str, n: int = 1) -> str:
        """Add n to a counter file."""
        p = root / name
        p.write_text(str((int(p.read_text()) if p.exists() else 0) + n))
        return p.read_text()

    return bump


SCRIPT = [
    [{"type": REASONING, "item": ITEM}, text("Counting."), use("call_1", "bump", {"name": "x", "n": 2}),
     use("call_2", "bump", {"name": "y"})],
    [use("call_3", "bump", {"name": "x", "n": 3})],
    [text("x is 5")],
]


@pytest.mark.parametrize("streamed", [True, False])
def test_tool_round_trips_map_both_ways(tmp_path: Path, streamed: bool) -> None:
    with ScriptedServer(SCRIPT) as srv:
        if not streamed:
            srv.inject(Fault(no_stream=True, times=3))  # answered whole, as some servers do
        r = lw.run("count", lw.AgentOptions(model=model(srv), tools=[counter(tmp_path)], system_prompt="You count."))
        reqs = [q.body for q in srv.loop_requests]
    assert r.subtype == "success" and r.result == "x is 5" and r.num_turns == 2
    assert (tmp_path / "x").read_text() == "5" and (tmp_path / "y").read_text() == "1"
    first = reqs[0]
    assert first["instructions"] == "You count." and first["max_output_tokens"] == 128_000  # the catalog's gpt-5
    assert first["tools"][0] == {"type": "function", "name": "bump", "description": "Add n to a counter file.",
                                 "parameters": first["tools"][0]["parameters"]}
    second = reqs[1]["input"]
    assert second[0] == {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "count"}]}
    assert second[1] == ITEM  # the reasoning item, verbatim
    assert second[2] == {"type": "message", "role": "assistant", "content": [{"type": "output_text",
                                                                               "text": "Counting."}]}
    assert [i["type"] for i in second[3:]] == ["function_call", "function_call", "function_call_output",
                                               "function_call_output"]
    assert [i["call_id"] for i in second[3:]] == ["call_1", "call_2", "call_1", "call_2"]
    assert second[5]["output"] == "2" and reqs[2]["input"][1] == ITEM  # still there a turn later
    assert holds_final(r.messages) and r.messages[1]["content"][0] == {"type": REASONING, "item": ITEM}


def test_usage_counts_cached_tokens(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT, min_cache_tokens=1) as srv:
        r = lw.run("count", lw.AgentOptions(model=model(srv), tools=[counter(tmp_path)]))
    cached = [c.cache_read_input_tokens for c in r.call_usage]
    assert cached[0] == 0 and cached[1] > 0 and cached[2] > cached[1]  # each call reads the prefix before it
    assert r.usage.cache_read_input_tokens == sum(cached)
    assert all(c.input_tokens > c.cache_read_input_tokens for c in r.call_usage)  # n_k counts both


def test_a_broken_stream_is_retried_and_never_reaches_the_history(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        srv.inject(Fault.drop(after=4), Fault(no_stop=True), Fault(stream_error="server_error"))
        msgs: list[Any] = []
        import asyncio

        async def go() -> None:
            async for m in lw.query("count", lw.AgentOptions(model=model(srv), tools=[counter(tmp_path)])):
                msgs.append(m)

        asyncio.run(go())
    retries = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "api_retry"]
    assert msgs[-1].subtype == "success" and len(retries) == 3 and (tmp_path / "x").read_text() == "5"


def test_max_output_tokens_incomplete_maps_to_max_tokens_and_the_cut_call_is_not_run(tmp_path: Path) -> None:
    r = read_response({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": [
        {"type": "function_call", "call_id": "a", "name": "bump", "arguments": '{"name": "x"}'},
        {"type": "function_call", "call_id": "b", "name": "bump", "arguments": '{"name": "x", "n'}]}, "m",
        "response.incomplete")
    assert r.stop_reason == "max_tokens"
    assert [invalid_input_error(b) for b in r.content] == [None, CUT_OFF]  # type: ignore[arg-type]
    with ScriptedServer([{"content": [text("half an ans")], "stop_reason": "max_tokens"}, [text("wer")]]) as srv:
        out = lw.run("p", lw.AgentOptions(model=model(srv), max_tokens=50))
        assert [q.body["max_output_tokens"] for q in srv.loop_requests] == [50, 50]
    assert out.subtype == "success" and out.result == "half an answer"


def test_the_responses_grammar_and_openais_own_stateless_fields() -> None:
    m = resolve_model("responses:gpt-5", base_url="http://127.0.0.1:9/v1")
    assert isinstance(m, OpenAIResponsesModel) and m.name == "gpt-5" and m.discovers_window
    with pytest.raises(ValueError, match="responses:' needs a model name"):
        check_model_spec("responses:")
    official = OpenAIResponsesModel("gpt-5", api_key="k").build_params(ModelRequest(None, [], [
        {"role": "user", "content": [text("hi")]}], effort="high"))
    assert official["store"] is False and official["include"] == ["reasoning.encrypted_content"]
    assert official["reasoning"] == {"effort": "high"}
    local = OpenAIResponsesModel("gpt-5", base_url="http://127.0.0.1:9/v1").build_params(ModelRequest(None, [], [
        {"role": "user", "content": [text("hi")]}]))
    assert "store" not in local and "include" not in local


def test_images_and_error_results_map_to_input_items() -> None:
    items = to_responses_input([
        {"role": "user", "content": [text("see"), {"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
        {"role": "assistant", "content": [use("c", "bump", {"name": "x"})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "boom", "is_error": True}]},
    ])
    assert items[0]["content"][1] == {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    assert items[2] == {"type": "function_call_output", "call_id": "c", "output": "Error: boom"}


def test_a_window_on_the_responses_endpoint_is_learned_without_numbers() -> None:
    forget_all()

    @lw.tool
    def read(path: str) -> str:
        """Read."""
        return "data line\n" * 300

    script = [*[[use(f"r{i}", "read", {"path": str(i)})] for i in range(5)], [text("done")]]
    with ScriptedServer(script, window=2_500) as srv:
        m = model(srv)
        m.discovers_window = False
        import asyncio

        async def go() -> list[Any]:
            return [x async for x in lw.query("read", lw.AgentOptions(model=m, tools=[read], max_tokens=100))]

        msgs = asyncio.run(go())
        refused = [q for q in srv.requests if q.status == 400]
    forget_all()
    learned = [x for x in msgs if isinstance(x, SystemMessage) and x.subtype == "context_window"]
    assert msgs[-1].subtype == "success" and msgs[-1].num_turns == 5 and refused and learned
    assert learned[0].data["context_window"] < 2_500  # said without a number: taken below what was refused


def test_a_fallback_from_a_responses_model_to_claude_mid_run_leaves_its_reasoning_out(tmp_path: Path) -> None:
    """A Responses model overloaded after a turn with a reasoning item: the fallback (Claude, on
    the Messages API, which refuses a block type it does not know) gets the history without the
    `openai_reasoning` block, the run succeeds, and the history itself still holds the item."""
    from loopwright.models.anthropic import AnthropicModel
    from loopwright.models.fallback import FallbackModel

    with ScriptedServer(SCRIPT) as srv:
        bump = counter(tmp_path)

        @lw.tool
        def overload() -> str:
            """Make the Responses model overloaded from now on."""
            srv.inject(Fault.overloaded(times=100, model="gpt-5-mini"))
            return "ok"

        script = [[*SCRIPT[0][:3], use("call_2", "overload", {})], SCRIPT[1], SCRIPT[2]]
        srv.model = type(srv.model)(script)
        both = FallbackModel([model(srv, max_retries=0),
                              AnthropicModel("claude-sonnet-4-5", base_url=srv.url, api_key="test", max_retries=0)])
        r = lw.run("count", lw.AgentOptions(model=both, tools=[bump, overload]))
        reqs = srv.loop_requests
    assert r.subtype == "success" and r.result == "x is 5", r.errors
    assert [q.status for q in reqs] == [200, 529, 200, 200]
    to_claude = reqs[2].body["messages"]
    assert reqs[2].body["model"] == "claude-sonnet-4-5"
    sent = [b["type"] for b in to_claude[1]["content"]]
    assert sent == ["text", "tool_use", "tool_use"]
    assert r.messages[1]["content"][0] == {"type": REASONING, "item": ITEM}  # the history keeps it
    assert holds_final(r.messages)


def test_a_responses_model_takes_the_openai_variables_from_the_options_env(tmp_path: Path) -> None:
    """`responses:<model>` is an OpenAI provider: with `env=` (as the Agent SDK passes it) its base
    URL and key come from OPENAI_BASE_URL / OPENAI_API_KEY, never from the Anthropic ones."""
    with ScriptedServer([[text("hi")]]) as srv:
        env = {"OPENAI_BASE_URL": srv.openai_url, "OPENAI_API_KEY": "sk-openai",
               "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "sk-ant"}
        r = lw.run("hello", lw.AgentOptions(model="responses:gpt-5-mini", env=env, max_retries=0))
        reqs = srv.loop_requests
    assert r.subtype == "success" and r.result == "hi", r.errors
    assert reqs[0].headers.get("authorization") == "Bearer sk-openai"
