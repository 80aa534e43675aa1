"""Issue 27, items 3-5: the output limit sent on every provider, a response cut off at
max_tokens (only the cut call is refused; a cut-off answer is continued, never a success),
and usage keyed by the model asked for, with an unknown price said, not guessed."""

from __future__ import annotations

import json
from typing import Any

import pytest

import loopwright as lw
from loopwright.cli.config import UsageError, positive
from loopwright.invariant import holds_final
from loopwright.loop import MAX_OUTPUT_CONTINUATIONS, OUTPUT_REMINDER
from loopwright.models.anthropic import AnthropicModel, _Accumulator
from loopwright.models.base import CUT_OFF, invalid_input_error
from loopwright.models.catalog import UNKNOWN_MAX_OUTPUT
from loopwright.models.openai_compat import OpenAICompatModel
from loopwright.testing import ScriptedServer
from tests.helpers import text, use


def oa(srv: ScriptedServer, name: str = "smollm2", **kw: Any) -> OpenAICompatModel:
    return OpenAICompatModel(name, base_url=srv.openai_url, retry_base_delay=0.01, **kw)


def an(srv: ScriptedServer, name: str = "claude-sonnet-4-6", **kw: Any) -> AnthropicModel:
    return AnthropicModel(name, base_url=srv.url, api_key="k", retry_base_delay=0.01, **kw)


# --- 3. the output limit ---------------------------------------------------------------------

def test_max_tokens_is_sent_on_every_provider_in_its_own_field() -> None:
    with ScriptedServer([[text("a")], [text("b")], [text("c")], [text("d")]]) as srv:
        lw.run("p", lw.AgentOptions(model=oa(srv), max_tokens=77))
        lw.run("p", lw.AgentOptions(model=an(srv), max_tokens=78))
        lw.run("p", lw.AgentOptions(model=oa(srv)))  # unknown model: the catalog's default for unknown ones
        lw.run("p", lw.AgentOptions(model=oa(srv, "gpt-4o")))  # known: the catalog's own limit
        bodies = [r.body for r in srv.loop_requests]
    assert bodies[0]["max_tokens"] == 77 and bodies[1]["max_tokens"] == 78
    assert bodies[2]["max_tokens"] == UNKNOWN_MAX_OUTPUT and bodies[3]["max_tokens"] == 16_384


def test_agent_options_max_tokens_reaches_a_string_model_and_is_checked() -> None:
    assert lw.AgentOptions(model="openai:smollm2", base_url="http://127.0.0.1:9/v1", max_tokens=5).max_tokens == 5
    from loopwright.options import model_for

    m = model_for(lw.AgentOptions(model="openai:smollm2", base_url="http://127.0.0.1:9/v1", max_tokens=5))
    assert m.max_tokens == 5
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="max_tokens must be a positive integer"):
            lw.AgentOptions(max_tokens=bad)  # type: ignore[arg-type]
    assert positive("--max-tokens", 10) == 10
    with pytest.raises(UsageError, match="--max-tokens must be a positive"):
        positive("--max-tokens", 0)


def test_cli_max_tokens_flag_is_sent(tmp_path: Any) -> None:
    from loopwright.cli import main

    with ScriptedServer([[text("hi")]]) as srv:
        code = main(["-p", "x", "--model", "openai:smollm2", "--base-url", srv.openai_url, "--max-tokens", "321",
                     "--output-format", "json", "--no-session-persistence", "--cwd", str(tmp_path)])
        [req] = srv.loop_requests
    assert code == 0 and req.body["max_tokens"] == 321


# --- 4. stop_reason max_tokens ---------------------------------------------------------------------

def _anthropic_stream(blocks: list[tuple[str, str]], stop: str) -> Any:
    """An accumulator fed with tool_use blocks whose input JSON is streamed as given."""
    acc = _Accumulator()
    acc.feed("message_start", {"message": {"model": "m", "content": [], "usage": {"input_tokens": 5}}})
    for i, (uid, js) in enumerate(blocks):
        acc.feed("content_block_start", {"index": i, "content_block": {"type": "tool_use", "id": uid, "name": "Bash",
                                                                         "input": {}}})
        acc.feed("content_block_delta", {"index": i, "delta": {"type": "input_json_delta", "partial_json": js}})
        acc.feed("content_block_stop", {"index": i})
    acc.feed("message_delta", {"delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}})
    return acc.response("m")


def test_only_the_call_being_written_at_max_tokens_is_cut_off() -> None:
    whole = [(f"t{i}", json.dumps({"command": f"echo {i}"})) for i in range(7)]
    r = _anthropic_stream(whole, "max_tokens")  # 7 complete calls: all of them run
    assert [invalid_input_error(b) for b in r.content] == [None] * 7
    r = _anthropic_stream([*whole[:6], ("t6", '{"command": "echo 6')], "max_tokens")
    assert [invalid_input_error(b) for b in r.content] == [None] * 6 + [CUT_OFF]
    assert r.content[6].invalid is not None and r.content[6].invalid.text == '{"command": "echo 6'
    assert r.content[6].input == {}  # the input dict is only ever the model's own input
    r = _anthropic_stream([("t0", "")], "max_tokens")  # cut before its input began
    assert invalid_input_error(r.content[0]) == CUT_OFF
    r = _anthropic_stream([("t0", '{"command": "ls')], "tool_use")  # bad JSON without max_tokens: invalid, not cut
    assert "not valid JSON" in (invalid_input_error(r.content[0]) or "")


def test_complete_calls_of_a_max_tokens_response_run_over_http() -> None:
    ran: list[str] = []

    @lw.tool
    def mark(v: str) -> str:
        """Mark."""
        ran.append(v)
        return v

    calls = [use(f"c{i}", "mark", {"v": str(i)}) for i in range(3)]
    for make in (oa, an):
        ran.clear()
        with ScriptedServer([{"content": calls, "stop_reason": "max_tokens"}, [text("done")]]) as srv:
            r = lw.run("p", lw.AgentOptions(model=make(srv), tools=[mark]))
        assert r.subtype == "success" and ran == ["0", "1", "2"], make


def test_a_cut_off_answer_is_continued_and_joined() -> None:
    turns = [{"content": [text("The answer is 4")], "stop_reason": "max_tokens"},
             {"content": [text("2, and that is")], "stop_reason": "max_tokens"}, [text(" final.")]]
    with ScriptedServer(turns) as srv:
        r = lw.run("p", lw.AgentOptions(model=oa(srv)))
        last = srv.loop_requests[-1].body["messages"]
    assert r.subtype == "success" and r.result == "The answer is 42, and that is final."
    assert r.model_calls == 3 and r.num_turns == 0
    assert last[-1] == {"role": "user", "content": OUTPUT_REMINDER}  # the reminder turn, as sent
    assert holds_final(r.messages)


def test_an_answer_still_cut_off_after_the_bound_is_never_success() -> None:
    cut = {"content": [text("more")], "stop_reason": "max_tokens"}
    turns = [cut] * (MAX_OUTPUT_CONTINUATIONS + 1)
    r = lw.run("p", lw.AgentOptions(model=lw.ScriptedModel(turns)))
    assert r.subtype == "error_during_execution" and r.is_error and r.model_calls == MAX_OUTPUT_CONTINUATIONS + 1
    assert "cut off at max_tokens" in (r.result or "") and "--max-tokens" in (r.result or "")


def test_a_cut_off_answer_followed_by_tools_does_not_leak_into_the_final_answer() -> None:
    turns = [{"content": [text("Let me")], "stop_reason": "max_tokens"},
             [text(" check."), use("t1", "mark", {"v": "x"})], [text("Done.")]]

    @lw.tool
    def mark(v: str) -> str:
        """Mark."""
        return v

    r = lw.run("p", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[mark]))
    assert r.subtype == "success" and r.result == "Done."


def test_the_cli_exits_non_zero_on_a_cut_off_answer(tmp_path: Any, capsys: Any) -> None:
    from loopwright.cli import main

    cut = {"content": [text("half")], "stop_reason": "max_tokens"}
    with ScriptedServer([cut] * (MAX_OUTPUT_CONTINUATIONS + 1)) as srv:
        code = main(["-p", "x", "--model", "openai:smollm2", "--base-url", srv.openai_url,
                     "--output-format", "json", "--no-session-persistence", "--cwd", str(tmp_path)])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code != 0 and out["subtype"] == "error_during_execution" and out["is_error"]


# --- 5. usage keyed by the model asked for; unknown prices ------------------------------------------

def test_usage_is_keyed_by_the_model_asked_for_and_an_unknown_price_is_said() -> None:
    with ScriptedServer([[text("a")], [text("b")]], reply_model="/models/SmolLM2-135M.Q4_1.gguf") as srv:
        r = lw.run("p", lw.AgentOptions(model=oa(srv)))
        priced = lw.run("p", lw.AgentOptions(model=oa(srv), prices={"smollm2": lw.Price.from_input(1, 2)}))
    assert set(r.model_usage) == {"smollm2"} and r.total_cost_usd == 0
    assert r.model_usage["smollm2"]["priceUnknown"] is True and r.to_json()["price_unknown"] == ["smollm2"]
    assert priced.total_cost_usd > 0 and "price_unknown" not in priced.to_json()
    assert "priceUnknown" not in priced.model_usage["smollm2"]


def test_a_budget_without_a_price_is_refused_at_start(tmp_path: Any, capsys: Any) -> None:
    from loopwright.cli import main

    with pytest.raises(ValueError, match="price of model 'smollm2' is unknown"):
        lw.run("p", lw.AgentOptions(model="openai:smollm2", base_url="http://127.0.0.1:9/v1", max_budget_usd=1))
    with ScriptedServer([[text("a")]]) as srv:
        code = main(["-p", "x", "--model", "openai:smollm2", "--base-url", srv.openai_url, "--max-budget-usd", "1",
                     "--no-session-persistence", "--cwd", str(tmp_path)])
        assert srv.loop_requests == []  # said at start: no call was made
    assert code != 0 and "--price" in capsys.readouterr().err
