"""Handoffs (handoffs.py, loop/handoff.py): a transfer tool's call switches the run's system prompt,
tools and model for the next call, the history kept; counted in T like any tool turn. A property
test over random handoff graphs and scripts: Inv on every model input, calls <= T + 1, and every
call made with the agent the history's accepted transfers lead to."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.invariant import check, holds_final
from loopwright.models.base import ModelEvent, ModelRequest
from tests.helpers import text

OBJ = {"type": "object", "properties": {}}


def tool(name: str) -> lw.Tool:
    async def run(x: dict[str, Any]) -> str:
        return f"{name} ran"

    return lw.Tool(name, name, OBJ, run)


class Recorded:
    """A model that records each request (system, tool names, messages) and answers from a shared
    script: one per agent, so a call's model is known too."""

    has_own_cost = True

    def __init__(self, name: str, script: Any, log: list[dict[str, Any]]) -> None:
        self.name, self.inner, self.log = name, lw.ScriptedModel(script, name=name), log

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        check(request.messages)  # Thm 3.4 on every model input, across agents
        self.log.append({"model": self.name, "system": request.system, "tools": [t["name"] for t in request.tools],
                         "h": copy.deepcopy(request.messages)})
        async for ev in self.inner.stream(request):
            yield ev


def use(uid: str, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": name, "input": {}}


def test_a_handoff_switches_prompt_tools_and_model_and_keeps_the_history() -> None:
    log: list[dict[str, Any]] = []
    turns = iter([[use("a", "transfer_to_billing")], [use("b", "refund")], [text("refunded")]])
    script = lambda h: next(turns)  # noqa: E731
    billing = lw.Handoff("billing", "for invoices and refunds", system_prompt="You are billing.",
                         tools=[tool("refund")], model=Recorded("billing-model", script, log))
    r_msgs = list(lw.run("I want a refund", lw.AgentOptions(
        model=Recorded("triage-model", script, log), system_prompt="You are triage.", tools=[tool("lookup")],
        handoffs=[billing])).messages)
    assert [c["model"] for c in log] == ["triage-model", "billing-model", "billing-model"]
    assert log[0]["system"] == "You are triage." and log[0]["tools"] == ["lookup", "transfer_to_billing"]
    assert log[1]["system"] == "You are billing." and log[1]["tools"] == ["refund"]
    assert log[1]["h"][:1] == log[0]["h"] and log[2]["h"][:3] == log[1]["h"], "the history is kept whole"
    assert "Transferred to billing" in log[1]["h"][-1]["content"][0]["content"]
    assert holds_final(r_msgs)


def test_the_handoff_is_a_turn_in_T_and_is_announced() -> None:
    billing = lw.Handoff("billing", system_prompt="b")
    msgs: list[Any] = []

    async def main() -> None:
        async for m in lw.query("x", lw.AgentOptions(
                model=lw.ScriptedModel([[use("a", "transfer_to_billing")], [text("done")]]), handoffs=[billing])):
            msgs.append(m)

    import asyncio

    asyncio.run(main())
    r = msgs[-1]
    assert r.subtype == "success" and r.num_turns == 1 and r.model_calls == 2
    switch = [m for m in msgs if isinstance(m, lw.SystemMessage) and m.subtype == "handoff"]
    assert len(switch) == 1 and switch[0].data["agent"] == "billing"
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel([[use("a", "transfer_to_billing")], [text("done")]]),
                                    handoffs=[billing], max_turns=0))
    assert r.subtype == "error_max_turns" and r.model_calls == 1


def test_one_handoff_per_turn_the_first_wins_and_cycles_work() -> None:
    log: list[dict[str, Any]] = []
    turns = iter([[use("a", "transfer_to_billing"), use("b", "transfer_to_sales")], [use("c", "transfer_to_triage")],
                  [text("back")]])
    script = lambda h: next(turns)  # noqa: E731
    billing = lw.Handoff("billing", system_prompt="billing")
    sales = lw.Handoff("sales", system_prompt="sales")
    triage = lw.Handoff("triage", system_prompt="triage", handoffs=[billing, sales])
    billing.handoffs.append(triage)  # a cycle: billing hands back
    r = lw.run("x", lw.AgentOptions(model=Recorded("m", script, log), system_prompt="triage",
                                    handoffs=[billing, sales]))
    assert r.subtype == "success" and [c["system"] for c in log] == ["triage", "billing", "triage"]
    results = log[1]["h"][-1]["content"]
    assert not results[0].get("is_error") and results[1]["is_error"] and "already handing off" in results[1]["content"]
    assert log[2]["tools"] == ["transfer_to_billing", "transfer_to_sales"]


def test_bad_handoffs_are_refused() -> None:
    with pytest.raises(TypeError, match="handoffs must be a list"):
        lw.AgentOptions(handoffs=lw.Handoff("x"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a name"):
        lw.Handoff("")
    with pytest.raises(ValueError, match="model"):
        lw.Handoff("x", model="nosuchprovider:thing")


AGENTS = ("a0", "a1", "a2")
TOOLS = ("t0", "t1", "t2", "t3")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    graph=st.fixed_dictionaries({a: st.tuples(st.sets(st.sampled_from(TOOLS)), st.sets(st.sampled_from(AGENTS)))
                                 for a in AGENTS}),
    script=st.lists(st.lists(st.sampled_from([*TOOLS, *(f"transfer_to_{a}" for a in AGENTS)]), max_size=3),
                    min_size=1, max_size=10),
    T=st.one_of(st.none(), st.integers(0, 8)),
    denied=st.sets(st.integers(0, 30)),
)
def test_random_handoffs_keep_inv_the_T_bound_and_switch_to_the_right_agent(
        graph: dict[str, tuple[set[str], set[str]]], script: list[list[str]], T: int | None, denied: set[int]) -> None:
    log: list[dict[str, Any]] = []
    ids = iter(range(10_000))

    def answer(h: list[dict[str, Any]]) -> Any:
        k = sum(1 for m in h if m["role"] == "assistant")
        if k >= len(script):
            return [text("done")]
        return [use(f"u{next(ids)}", name) for name in script[k]] or [text("done early")]

    agents = {a: lw.Handoff(a, system_prompt=f"you are {a}", tools=[tool(t) for t in sorted(graph[a][0])],
                            model=Recorded(f"model-{a}", answer, log)) for a in AGENTS}
    for a in AGENTS:
        agents[a].handoffs = [agents[b] for b in sorted(graph[a][1])]

    def gate(name: str, x: dict[str, Any]) -> bool:
        return next(ids) % 31 not in denied

    start = agents["a0"]
    r = lw.run("go", lw.AgentOptions(model=start.model, system_prompt=start.system_prompt, tools=start.tools,
                                     handoffs=start.handoffs, max_turns=T, can_use_tool=gate))
    assert holds_final(r.messages)
    if T is not None:  # Thm 4.1, handoffs counted as tool turns
        assert r.model_calls <= T + 1 and r.num_turns <= T
    assert len(log) == r.model_calls
    # Replay the history: the first accepted transfer of each turn switches the agent
    active, h = "a0", r.messages
    assistant_turns = [i for i, m in enumerate(h) if m["role"] == "assistant"]
    for k, call in enumerate(log):
        agent = agents[active]
        assert call["model"] == f"model-{active}" and call["system"] == f"you are {active}"
        assert call["tools"] == [*(t.name for t in agent.tools), *(f"transfer_to_{b.name}" for b in agent.handoffs)]
        if k > 0:
            assert call["h"][:len(log[k - 1]["h"])] == log[k - 1]["h"], "the history is kept whole across handoffs"
        if k < len(assistant_turns) and assistant_turns[k] + 1 < len(h):
            uses = [b for b in h[assistant_turns[k]]["content"] if b["type"] == "tool_use"]
            results = {b["tool_use_id"]: b for b in h[assistant_turns[k] + 1]["content"] if b["type"] == "tool_result"}
            for u in uses:
                if u["name"].startswith("transfer_to_") and not results[u["id"]].get("is_error"):
                    active = u["name"].removeprefix("transfer_to_")
                    break


def test_a_handoff_to_a_model_string_reaches_it_over_http() -> None:
    """A target's model string is made with the run's provider settings (its base_url, key), over
    real HTTP to the loopback server: the call after the handoff names the target's model."""
    from loopwright.testing import ScriptedServer

    script = [[use("a", "transfer_to_fast")], [text("done fast")]]
    with ScriptedServer(script) as srv:
        fast = lw.Handoff("fast", system_prompt="be quick", model="claude-opus-4-5", tools=[tool("lookup")])
        r = lw.run("x", lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="test",
                                        handoffs=[fast]))
        sent = [(q.body["model"], q.body.get("system")) for q in srv.loop_requests]
    assert r.subtype == "success" and r.result == "done fast"
    assert sent[0][0] == "claude-sonnet-4-5" and sent[1][0] == "claude-opus-4-5"
    assert "be quick" in json.dumps(sent[1][1])


def test_the_typed_answer_is_owed_across_a_handoff() -> None:
    log: list[dict[str, Any]] = []
    turns = iter([[use("a", "transfer_to_counter")],
                  [{"type": "tool_use", "id": "b", "name": "StructuredOutput", "input": {"result": 3}}]])
    script = lambda h: next(turns)  # noqa: E731
    counter = lw.Handoff("counter", system_prompt="you count", tools=[tool("count")])
    r = lw.run("how many?", lw.AgentOptions(model=Recorded("m", script, log), handoffs=[counter], output_type=int))
    assert r.subtype == "success" and r.output == 3
    assert log[1]["tools"] == ["count", "StructuredOutput"]


def test_on_handoff_gets_the_calls_context_and_a_raise_keeps_the_agent() -> None:
    seen: list[tuple[Any, str, int]] = []

    async def note(ctx: lw.RunContext[dict[str, str]]) -> None:
        seen.append((ctx.deps, ctx.prompt, ctx.usage.requests))

    def refuse(ctx: lw.RunContext[dict[str, str]]) -> None:
        raise RuntimeError("billing is closed")

    for hook, ends_on in ((note, "billing-model"), (refuse, "triage-model")):
        log: list[dict[str, Any]] = []
        turns = iter([[use("a", "transfer_to_billing")], [text("done")]])
        script = lambda h, turns=turns: next(turns)  # noqa: E731
        billing = lw.Handoff("billing", system_prompt="You are billing.", model=Recorded("billing-model", script, log),
                             on_handoff=hook)
        r = lw.run("refund", lw.AgentOptions(model=Recorded("triage-model", script, log), handoffs=[billing],
                                            deps={"user": "u1"}))
        assert r.subtype == "success" and [c["model"] for c in log] == ["triage-model", ends_on]
        result = log[1]["h"][-1]["content"][0]
        if hook is refuse:  # not taken: the model reads why, the triage agent answers on
            assert result["is_error"] and "on_handoff of billing raised RuntimeError: billing is closed" in result["content"]
    assert seen == [({"user": "u1"}, "refund", 1)]  # once, with the run's deps, prompt and usage


def test_a_handoff_with_an_on_handoff_that_is_not_callable_is_refused() -> None:
    with pytest.raises(TypeError, match="on_handoff must be a function"):
        lw.Handoff("billing", on_handoff="notify")  # type: ignore[arg-type]


def test_a_handoffs_model_changed_in_place_is_the_one_made_next_time() -> None:
    """The models a run makes for handoffs are kept by the model string they were made from, not
    by the Handoff object's id: a program that points a Handoff at another model mid-run (in place:
    `fast.model = ...`) gets that model at the next handoff to it (issue 41 attack: a cache keyed
    on an object's identity missed the edit, and the old model answered)."""
    from loopwright.testing import ScriptedServer

    script = [[use("a", "transfer_to_fast")], [use("b", "transfer_to_triage")], [use("c", "transfer_to_fast")],
              [text("done")]]
    with ScriptedServer(script) as srv:
        fast = lw.Handoff("fast", system_prompt="be quick", model="claude-opus-4-5")

        def repoint(ctx: Any) -> None:
            fast.model = "claude-haiku-4-5"

        triage = lw.Handoff("triage", system_prompt="triage", handoffs=[fast], on_handoff=repoint)
        fast.handoffs.append(triage)
        r = lw.run("x", lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="test",
                                        handoffs=[fast]))
        sent = [q.body["model"] for q in srv.loop_requests]
    assert r.subtype == "success", r.errors
    assert sent == ["claude-sonnet-4-5", "claude-opus-4-5", "claude-opus-4-5", "claude-haiku-4-5"]
