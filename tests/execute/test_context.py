"""Context compaction (context.py): the operation keeps Inv and the last turns verbatim; the
loop compacts automatically near the window and goes on past seed Prop 5.2 (3)'s call bound;
sessions, hooks, budget, failures and the manual ways in (client, /compact)."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.client import LoopwrightClient
from loopwright.context import (
    CompactError,
    compact,
    default_context_window,
    turn_starts,
)
from loopwright.invariant import holds, holds_final
from loopwright.messages import ResultMessage, SystemMessage
from loopwright.models.base import ModelError
from loopwright.sessions import JsonlSessionStore, read_lines, repair_history
from loopwright.tokens import estimate_tokens
from tests.helpers import collect, text, use

SUMMARY = "SUMMARY: the user asked for lookups; all went fine."


def is_summary_request(h: list[dict[str, Any]]) -> bool:
    first = h[0]["content"][0]
    return len(h) == 1 and first.get("type") == "text" and first["text"].startswith(("<transcript", "<summary_so_far>"))


# --- the operation -------------------------------------------------------------------------------

def _messages() -> st.SearchStrategy[list[dict[str, Any]]]:
    ids = st.sampled_from(["a", "b", "c", "d"])
    block = st.one_of(
        st.builds(text, st.sampled_from(["x", "y", "z" * 50])),
        st.builds(use, ids, st.just("look")),
        st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r", "is_error": False}, ids),
        st.just({"type": "thinking", "thinking": "t", "signature": "sig"}),
        st.just({"type": "redacted_thinking", "data": "opaque"}),
    )
    msg = st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["user", "assistant"]),
                    st.lists(block, min_size=1, max_size=4))
    return st.lists(msg, min_size=1, max_size=14)


def _valid_history(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Any message list made valid: Inv, or Inv plus a closing assistant message (a final h)."""
    h = repair_history(raw)
    return h if h and (holds(h) or holds_final(h)) else [{"role": "user", "content": [text("start")]}]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_messages(), st.integers(0, 8), st.text(max_size=10))
def test_compacting_any_valid_history_keeps_inv_and_the_last_turns(
        raw: list[dict[str, Any]], keep: int, instructions: str) -> None:
    h = _valid_history(raw)
    before = copy.deepcopy(h)
    final = h[-1]["role"] == "assistant"
    seen: list[list[dict[str, Any]]] = []

    def summarizer(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.append(msgs)
        return [text(SUMMARY)]

    model = lw.ScriptedModel(summarizer)
    starts = turn_starts(h)
    if keep >= len(starts):
        with pytest.raises(CompactError, match="nothing to compact"):
            asyncio.run(compact(h, model, keep_last_turns=keep, instructions=instructions or None))
        assert h == before and not seen
        return
    r = asyncio.run(compact(h, model, keep_last_turns=keep, instructions=instructions or None))
    assert h == before  # the input is never changed
    new = r.history
    # of the same kind as h: a final history keeps its closing answer unless it was summarized too
    assert (holds_final(new) and not holds(new)) if final and keep else holds(new)
    # the first message is the summary (no tool_result), then the tail, verbatim
    assert new[0]["role"] == "user" and SUMMARY in new[0]["content"][0]["text"]
    assert all(b["type"] == "text" for b in new[0]["content"])
    tail = new[1:]
    assert tail == (h[-len(tail):] if tail else [])
    assert sum(1 for m in tail if m["role"] == "assistant") == keep  # exactly the last `keep` turns
    assert r.summarized_messages + r.kept_messages == len(h)
    assert r.pre_tokens == estimate_tokens(h) and r.post_tokens == estimate_tokens(new)
    # one summarizing call: a single user message, nothing signed or tool-shaped in it
    assert len(seen) == 1 and len(seen[0]) == 1
    assert all(b["type"] == "text" for b in seen[0][0]["content"])
    if instructions:
        assert instructions in seen[0][0]["content"][0]["text"]


def test_the_cut_never_splits_a_tool_use_from_its_results_and_keeps_thinking() -> None:
    think = {"type": "thinking", "thinking": "plan", "signature": "s1"}
    h = [{"role": "user", "content": [text("go")]},
         {"role": "assistant", "content": [use("u1", "look")]},
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "r1"}]},
         {"role": "assistant", "content": [think, use("u2", "look"), use("u3", "look")]},
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u2", "content": "r2"},
                                      {"type": "tool_result", "tool_use_id": "u3", "content": "r3"}, text("hi")]}]
    r = asyncio.run(compact(h, lw.ScriptedModel([[text(SUMMARY)]]), keep_last_turns=1))
    assert r.history[1:] == h[3:] and r.history[1]["content"][0] == think
    assert holds(r.history)
    r0 = asyncio.run(compact(h, lw.ScriptedModel([[text(SUMMARY)]]), keep_last_turns=0))
    assert len(r0.history) == 1 and "Continue the work" in r0.history[0]["content"][0]["text"]


def test_a_failing_or_empty_summary_is_a_compact_error() -> None:
    h = [{"role": "user", "content": [text("go")]}, {"role": "assistant", "content": [text("ok")]},
         {"role": "user", "content": [text("more")]}]
    with pytest.raises(CompactError, match="failed"):
        asyncio.run(compact(h, lw.ScriptedModel([ModelError("overloaded")]), keep_last_turns=0))
    with pytest.raises(CompactError, match="no summary"):
        asyncio.run(compact(h, lw.ScriptedModel([[text("  ")]]), keep_last_turns=0))
    with pytest.raises(ValueError):
        asyncio.run(compact(h, lw.ScriptedModel([[text("s")]]), keep_last_turns=-1))


def test_default_windows() -> None:
    assert default_context_window("claude-sonnet-5-5") == 1_000_000
    assert default_context_window("anthropic/claude-opus-4.6") == 1_000_000
    assert default_context_window("claude-opus-4-5-20251101") == 200_000
    assert default_context_window("gpt-4o-mini") == 128_000
    assert default_context_window("scripted") is None


# --- automatic compaction in the loop ------------------------------------------------------------

BIG = "x" * 2000  # each tool result adds about 500 tokens to h (the scripted model's 4 chars/token)
W = 4000


class Agent:
    """A scripted agent that calls `look` `turns` times, then answers. It records every history
    the loop sends it and answers summarizing requests with SUMMARY (or `summary_error`)."""

    def __init__(self, turns: int, summary_error: Exception | None = None) -> None:
        self.turns = turns
        self.summary_error = summary_error
        self.inputs: list[list[dict[str, Any]]] = []
        self.summary_requests: list[list[dict[str, Any]]] = []
        self.done = 0
        self.last_was_summary = False

    def __call__(self, h: list[dict[str, Any]]) -> Any:
        self.last_was_summary = is_summary_request(h)
        if self.last_was_summary:
            self.summary_requests.append(copy.deepcopy(h))
            if self.summary_error is not None:
                raise self.summary_error
            return [text(SUMMARY)]
        self.inputs.append(copy.deepcopy(h))
        if self.done == self.turns:
            return [text("all done")]
        self.done += 1
        return [use(f"u{self.done}", "look", {"n": self.done})]


def look_tool() -> lw.Tool:
    return lw.Tool("look", "look something up", {"type": "object", "properties": {"n": {"type": "integer"}}},
                   lambda x: f"result {x.get('n')}: {BIG}", read_only=True)


def opts(agent: Agent, tmp: Path, **kw: Any) -> lw.AgentOptions:
    return lw.AgentOptions(model=lw.ScriptedModel(agent, cost_per_call_usd=kw.pop("cost", 0.01)),
                           tools=[look_tool()], cwd=tmp, context_window=kw.pop("context_window", W), **kw)


def test_auto_compaction_goes_past_the_window_bound_with_inv_on_every_input(tmp_path: Path) -> None:
    agent = Agent(turns=14)
    msgs = collect("look up 14 things", opts(agent, tmp_path))
    r = msgs[-1]
    assert isinstance(r, ResultMessage) and r.subtype == "success" and r.result == "all done"
    boundaries = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert boundaries and all(b.data["trigger"] == "auto" for b in boundaries)
    assert all(b.data["post_tokens"] < b.data["pre_tokens"] for b in boundaries)
    assert all(b.data["forecast_tokens"] > 0.8 * W and b.data["context_window"] == W for b in boundaries)
    # every history the model saw satisfies Inv and stays under the window
    assert len(agent.inputs) == r.model_calls == 15 and all(holds(h) for h in agent.inputs)
    ns = [c.input_tokens for c in r.call_usage]
    assert max(ns) <= W
    # without compaction, seed Prop 5.2 (3) allows at most (W - s)/c + 1 calls in this window
    s, c = ns[0], ns[1] - ns[0]
    assert r.model_calls > (W - s) / c + 1
    # the summarizing calls are charged (cost and usage), but are not loop calls (Thm 4.1 count)
    assert len(agent.summary_requests) == len(boundaries)
    assert r.total_cost_usd == pytest.approx(0.01 * (r.model_calls + len(boundaries)))
    assert r.usage.input_tokens > sum(ns)
    assert holds_final(r.messages) and SUMMARY in r.messages[0]["content"][0]["text"]


def test_no_compaction_below_the_threshold_or_when_off(tmp_path: Path) -> None:
    for kw in ({"context_window": 10**6}, {"auto_compact": False}):
        agent = Agent(turns=8)
        msgs = collect("go", opts(agent, tmp_path, **kw))
        assert msgs[-1].subtype == "success" and not agent.summary_requests
        assert not [m for m in msgs if isinstance(m, SystemMessage) and m.subtype.startswith("compact")]
    with pytest.raises(ValueError, match="compact_threshold"):
        collect("go", opts(Agent(1), tmp_path, compact_threshold=1.5))


def test_resume_after_compaction_loads_the_compacted_history(tmp_path: Path) -> None:
    agent = Agent(turns=10)
    o = opts(agent, tmp_path, persist_session=True, sessions_dir=tmp_path / "sessions")
    msgs = collect("go", o)
    r = msgs[-1]
    assert r.subtype == "success" and any(getattr(m, "subtype", "") == "compact_boundary" for m in msgs)
    store = JsonlSessionStore(tmp_path / "sessions")
    loaded = store.load(r.session_id, tmp_path)
    assert loaded.history == r.messages and not loaded.repaired
    assert SUMMARY in loaded.history[0]["content"][0]["text"]
    lines = read_lines(loaded.path)  # type: ignore[arg-type]
    assert [ln for ln in lines if ln.get("subtype") == "compact_boundary"]
    # a resumed run continues from the compacted history
    agent2 = Agent(turns=0)
    o2 = opts(agent2, tmp_path, persist_session=True, sessions_dir=tmp_path / "sessions", resume=r.session_id)
    r2 = collect("and now?", o2)[-1]
    assert r2.subtype == "success" and r2.session_id == r.session_id
    assert agent2.inputs[0][:-1] == r.messages and agent2.inputs[0][-1]["content"][0]["text"] == "and now?"


def test_pre_compact_hook_is_called_and_can_block(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    hooks = lw.Hooks()
    hooks.on("PreCompact", lambda data: calls.append(data))
    agent = Agent(turns=10)
    msgs = collect("go", opts(agent, tmp_path, hooks=hooks))
    assert msgs[-1].subtype == "success"
    n = len([m for m in msgs if getattr(m, "subtype", "") == "compact_boundary"])
    assert n >= 1 and len(calls) == n
    assert calls[0]["hook_event_name"] == "PreCompact" and calls[0]["trigger"] == "auto"

    blocking = lw.Hooks()
    blocking.on("PreCompact", lambda data: {"decision": "block", "reason": "keep it all"})
    agent = Agent(turns=8)
    msgs = collect("go", opts(agent, tmp_path, hooks=blocking, context_window=100_000,
                                         compact_threshold=0.01))
    errors = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "compact_error"]
    assert msgs[-1].subtype == "success" and errors and "keep it all" in errors[0].data["error"]
    assert not agent.summary_requests and not any(getattr(m, "subtype", "") == "compact_boundary" for m in msgs)


def test_a_failed_compaction_leaves_h_untouched_and_the_run_goes_on(tmp_path: Path) -> None:
    agent = Agent(turns=10, summary_error=ModelError("summarizer down"))
    msgs = collect("go", opts(agent, tmp_path, context_window=6000))
    r = msgs[-1]
    errors = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "compact_error"]
    assert r.subtype == "success" and len(errors) == 1 and "summarizer down" in errors[0].data["error"]
    assert len(agent.summary_requests) == 1  # not retried in the same run
    # nothing was summarized: the full history, each input a prefix of the next
    assert r.messages[0]["content"][0]["text"] == "go" and r.num_turns == 10
    assert all(agent.inputs[i] == agent.inputs[i + 1][:len(agent.inputs[i])] for i in range(len(agent.inputs) - 1))


def test_the_budget_rule_counts_the_summarizing_call(tmp_path: Path) -> None:
    agent = Agent(turns=20)

    def cost(k: int) -> float:  # 1 cent a loop call; the summarizing call (just answered) 50 cents
        return 0.5 if agent.last_was_summary else 0.01

    o = lw.AgentOptions(model=lw.ScriptedModel(agent, cost_per_call_usd=cost), tools=[look_tool()], cwd=tmp_path,
                        context_window=W, max_budget_usd=0.3)
    msgs = collect("go", o)
    r = msgs[-1]
    assert r.subtype == "error_max_budget_usd" and "compaction" in r.result
    assert isinstance(msgs[-2], SystemMessage) and msgs[-2].subtype == "compact_boundary"
    assert 0.3 <= r.total_cost_usd < 0.3 + 0.5  # B <= S < B + c_max
    assert len(agent.summary_requests) == 1 and holds(r.messages)
    assert r.model_calls == len(agent.inputs)  # no loop call after the budget stop


# --- manual compaction ------------------------------------------------------------------------------

def test_client_compact_persists_and_the_conversation_goes_on(tmp_path: Path) -> None:
    agent = Agent(turns=2)
    seen_hook: list[str] = []
    hooks = lw.Hooks()
    hooks.on("PreCompact", lambda data: seen_hook.append(f"{data['trigger']}:{data['custom_instructions']}"))
    o = opts(agent, tmp_path, persist_session=True, sessions_dir=tmp_path / "s", context_window=None, hooks=hooks)

    async def go() -> tuple[LoopwrightClient, Any]:
        async with LoopwrightClient(o) as client:
            await client.query("first")
            [m async for m in client.receive_response()]
            agent.turns, agent.done = 0, 0
            await client.query("second")
            [m async for m in client.receive_response()]
            r = await client.compact("focus on lookups")
            assert client.history == r.history
            await client.query("third")
            last = [m async for m in client.receive_response()][-1]
            return client, (r, last)

    client, (r, last) = asyncio.run(go())
    assert seen_hook == ["manual:focus on lookups"]
    assert "focus on lookups" in agent.summary_requests[0][0]["content"][0]["text"]
    assert r.kept_messages and holds_final(r.history)
    assert last.subtype == "success" and agent.inputs[-1][:len(r.history)] == r.history
    assert client.total_cost_usd == pytest.approx(sum(x.total_cost_usd for x in client.results) + 0.01)
    loaded = JsonlSessionStore(tmp_path / "s").load(last.session_id, tmp_path)
    assert loaded.history == last.messages and SUMMARY in loaded.history[0]["content"][0]["text"]


def test_client_compact_with_nothing_to_compact(tmp_path: Path) -> None:
    async def go() -> None:
        async with LoopwrightClient(opts(Agent(0), tmp_path)) as client:
            with pytest.raises(CompactError):
                await client.compact()
    asyncio.run(go())


def test_repl_compact_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from loopwright.cli.interactive import Repl

    agent = Agent(turns=3)

    async def go() -> None:
        repl = Repl(opts(agent, tmp_path, context_window=None, permission_mode="bypassPermissions"))
        await repl.client.query("go")
        [m async for m in repl.client.receive_response()]
        assert await repl.command("/compact keep the numbers")
        assert repl.client.history is not None and SUMMARY in json.dumps(repl.client.history[0])

    asyncio.run(go())
    out = capsys.readouterr().out
    assert "compacted:" in out and "messages summarized" in out
    assert "keep the numbers" in agent.summary_requests[0][0]["content"][0]["text"]


def test_interrupting_the_summarizing_call_ends_the_run_with_h_intact(tmp_path: Path) -> None:
    agent = Agent(turns=12)
    slow = agent.__call__

    def model_fn(h: list[dict[str, Any]]) -> Any:
        out = slow(h)
        return {"content": out, "delay": 30} if agent.last_was_summary else out

    agent_model = lw.ScriptedModel(model_fn)
    control = lw.RunControl()
    o = lw.AgentOptions(model=agent_model, tools=[look_tool()], cwd=tmp_path, context_window=W)

    async def go() -> list[Any]:
        msgs: list[Any] = []

        async def consume() -> None:
            async for m in lw.query("go", o, control=control):
                msgs.append(m)

        task = asyncio.create_task(consume())
        while not agent.summary_requests:
            await asyncio.sleep(0.01)
        control.interrupt()
        await asyncio.wait_for(task, 10)
        return msgs

    msgs = asyncio.run(go())
    r = msgs[-1]
    assert r.subtype == "error_during_execution" and "interrupted" in r.result
    assert not any(getattr(m, "subtype", "") == "compact_boundary" for m in msgs)
    assert holds(r.messages) and r.messages[0]["content"][0]["text"] == "go"
    n = len(agent.inputs[-1])  # h is the last loop input plus its a and b, not summarized
    assert r.messages[:n] == agent.inputs[-1] and len(r.messages) == n + 2


def test_auto_compaction_through_the_anthropic_sdk_and_a_strict_server(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    from loopwright.testing import ScriptedServer

    agent = Agent(turns=12)
    with ScriptedServer(agent, model="claude-sonnet-5-5", side_reply=SUMMARY) as srv:
        o = lw.AgentOptions(model="claude-sonnet-5-5", base_url=srv.url, api_key="test", tools=[look_tool()],
                            cwd=tmp_path, context_window=W, max_retries=0)
        r = lw.run("go", o)
        histories = srv.histories()
        side = [q for q in srv.requests if q.kind == "messages" and not q.loop_call]
    assert r.subtype == "success", r.result
    assert side and all(not q.body.get("tools") for q in side)  # the summarizing calls: no tools
    assert r.model_calls == len(histories) == 13 and all(holds(h) for h in histories)  # strict: no 400
    assert SUMMARY in r.messages[0]["content"][0]["text"]
    assert max(c.input_tokens for c in r.call_usage) <= W


def test_the_trigger_is_the_forecast_n_k_plus_growth_against_threshold_times_w(tmp_path: Path) -> None:
    """Scripted usage: n_k = 100 k, a_k = 10. Before call k + 1 the forecast is n_k + a_k + r_k
    (r_k: the small tool result); with W = 1000 and threshold 0.5 it first exceeds 500 after call 5."""
    agent = Agent(turns=8)
    k = 0

    def model_fn(h: list[dict[str, Any]]) -> Any:
        nonlocal k
        out = agent(h)
        if agent.last_was_summary:
            return out
        k += 1
        return {"content": out, "usage": {"input_tokens": 100 * k if k <= 5 else 100, "output_tokens": 10}}

    small = lw.Tool("look", "look", {"type": "object"}, lambda x: "ok", read_only=True)
    o = lw.AgentOptions(model=lw.ScriptedModel(model_fn), tools=[small], cwd=tmp_path, context_window=1000,
                        compact_threshold=0.5)
    msgs = collect("go", o)
    kinds = [type(m).__name__ if not isinstance(m, SystemMessage) else m.subtype for m in msgs]
    first = kinds.index("compact_boundary")
    assert kinds[:first].count("AssistantMessage") == 5 and kinds.count("compact_boundary") == 1
    b = msgs[first].data
    assert 510 < b["forecast_tokens"] < 560 and b["context_window"] == 1000
    assert msgs[-1].subtype == "success"


def test_a_long_given_history_is_compacted_before_the_first_call(tmp_path: Path) -> None:
    big = [{"role": "user", "content": [text("start")]}]
    for i in range(8):
        big += [{"role": "assistant", "content": [use(f"old{i}", "look")]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"old{i}", "content": BIG}]}]
    big.append({"role": "assistant", "content": [text("done before")]})
    agent = Agent(turns=0)
    msgs = [m for m in asyncio.run(_query_with_history(big, opts(agent, tmp_path)))]
    assert [getattr(m, "subtype", "") for m in msgs[:2]] == ["init", "compact_boundary"]
    assert msgs[-1].subtype == "success" and len(agent.inputs) == 1 and holds(agent.inputs[0])
    assert agent.inputs[0][-1]["content"][0]["text"] == "next" and SUMMARY in json.dumps(agent.inputs[0][0])


async def _query_with_history(h: list[dict[str, Any]], o: lw.AgentOptions) -> list[Any]:
    return [m async for m in lw.query("next", o, history=h)]
