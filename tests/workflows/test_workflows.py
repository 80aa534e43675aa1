"""Workflows vs agents (seed §7): Def 7.1 and Prop 7.2, and the behaviour of each combinator."""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.blocks import TextBlock
from loopwright.models.base import ModelError, ModelEvent, ModelRequest, ModelResponse
from loopwright.models.catalog import price_for
from loopwright.usage import Usage
from loopwright.workflows import (
    Agent,
    BaseNode,
    Gate,
    Node,
    NodeCall,
    Step,
    WorkflowError,
    WorkflowResult,
    chain,
    evaluator_optimizer,
    orchestrator_workers,
    parallel,
    parse_subtasks,
    program,
    route,
    vote,
)
from tests.helpers import text, use


def prompt_of(h: list[dict[str, Any]]) -> str:
    return str(h[0]["content"][0]["text"])


def by_prefix(answers: dict[str, str], default: str = "ok") -> lw.ScriptedModel:
    """A scripted model answering by the prompt's first word (the node's template starts with it)."""

    def fn(h: list[dict[str, Any]]) -> list[dict[str, Any]]:
        p = prompt_of(h)
        for prefix, answer in answers.items():
            if p.startswith(prefix):
                return [text(answer)]
        return [text(default)]

    return lw.ScriptedModel(fn, cost_per_call_usd=0.125)


@lw.tool(read_only=True)
def ping() -> str:
    """Answer pong."""
    return "pong"


def assistants(h: list[dict[str, Any]]) -> int:
    return sum(1 for m in h if m["role"] == "assistant")


# --- Prop 7.2 (1): random workflow structures, arbitrary scripted models ------------------------

KEYS = ["k0", "k1", "k2"]
ANSWERS = ["PASS", "FAIL: shorter", "k0", "k1 seems right", "K2.", "none of these", "",
           "- a\n- b\n- c\n- d", '["x", "y"]', "1. one\n2. two"]

Spec = Any  # a nested tuple describing a structure


def specs() -> st.SearchStrategy[Spec]:
    leaf = st.one_of(st.just(("node",)), st.tuples(st.just("agent"), st.integers(0, 2)))
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(st.just("chain"), st.lists(inner, min_size=1, max_size=3), st.sampled_from([None, True, False])),
            st.tuples(st.just("route"), st.lists(inner, min_size=1, max_size=3), st.booleans()),
            st.tuples(st.just("parallel"), st.lists(inner, min_size=1, max_size=3), st.booleans()),
            st.tuples(st.just("vote"), st.integers(1, 3)),
            st.tuples(st.just("eo"), st.integers(1, 3)),
            st.tuples(st.just("ow"), st.integers(1, 3), st.booleans()),
            st.tuples(st.just("program"), st.integers(1, 3)),
        ),
        max_leaves=12,
    )


def build(spec: Spec, fresh: Any) -> Step:
    kind = spec[0]
    if kind == "node":
        return Node(fresh(), "{input}")
    if kind == "agent":
        return Agent(fresh(), lw.AgentOptions(tools=[ping], max_turns=spec[1]))
    if kind == "chain":
        steps: list[Step] = [build(s, fresh) for s in spec[1]]
        if spec[2] is not None:  # a gate that always passes or always stops
            ok: bool = spec[2]
            steps.insert(1, Gate(lambda _t: ok, name=fresh()))
        return chain(*steps)
    if kind == "route":
        branches = {KEYS[i]: build(s, fresh) for i, s in enumerate(spec[1])}
        return route(Node(fresh()), branches, default=KEYS[0] if spec[2] else None)
    if kind == "parallel":
        return parallel(*(build(s, fresh) for s in spec[1]), aggregate=Node(fresh()) if spec[2] else None)
    if kind == "vote":
        return vote(Node(fresh()), spec[1])
    if kind == "eo":
        return evaluator_optimizer(Node(fresh()), Node(fresh()), spec[1])
    if kind == "ow":
        return orchestrator_workers(Node(fresh()), Node(fresh()), spec[1], synthesizer=Node(fresh()) if spec[2] else None)
    assert kind == "program"
    declared = [Node(fresh()) for _ in range(spec[1])]

    async def body(ctx: Any, t: str) -> str:  # a data-dependent path over its declared nodes
        for n in declared:
            t = await ctx.call(n, t)
            if len(t) % 3 == 0:
                break
        return t

    return program(declared)(body)


def random_model(seed: int) -> tuple[lw.ScriptedModel, list[int]]:
    """Arbitrary outputs (routing answers, plans, verdicts, tool calls, failures) from a seed."""
    rng = random.Random(seed)
    responses = [0]

    def fn(h: list[dict[str, Any]]) -> Any:
        x = rng.random()
        if x < 0.04:
            return ModelError("overloaded")
        responses[0] += 1
        if x < 0.3:  # a tool call: an agent node runs it; a tool-less node just gets no text
            return [use(f"u{len(h)}", "ping")]
        return [text(rng.choice(ANSWERS))]

    return lw.ScriptedModel(fn, cost_per_call_usd=0.125), responses


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs(), st.integers(0, 2**32 - 1), st.text(max_size=20))
def test_prop_7_2_1_calls_at_most_V_for_any_structure_and_model(spec: Spec, seed: int, task: str) -> None:
    counter = iter(range(10**6))
    wf = build(spec, lambda: f"n{next(counter)}")
    V = wf.nodes()
    weights = {name: n.weight for name, n in V.items()}
    model, responses = random_model(seed)
    r = wf.run(task, model=model)

    assert wf.max_calls() == sum(weights.values())
    if all(isinstance(n, Node) for n in V.values()):
        assert wf.max_calls() == len(V)  # |V|
    assert r.max_calls == wf.max_calls()
    assert r.model_calls <= wf.max_path_calls() <= wf.max_calls()
    assert r.model_calls == responses[0] == len(r.call_usage)  # the model's own count agrees
    # each node at most once, only nodes of V
    assert max(Counter(r.path).values(), default=0) == 1
    assert set(r.path) <= set(V)
    for call in r.nodes:
        assert len(call.calls) <= weights[call.node]
    assert sum(len(c.calls) for c in r.nodes) == r.model_calls
    assert r.total_cost_usd == 0.125 * r.model_calls  # dyadic costs: exact
    assert r.subtype in ("success", "gate_failed", "error_during_execution")
    assert (r.output is not None) == (r.subtype != "error_during_execution")


# --- Prop 7.2 (2) and (3): the agent loop -----------------------------------------------------


def M(K: int) -> Any:
    """M_K of the seed's proof: tool_use while fewer than K - 1 assistant messages, then text."""

    def fn(h: list[dict[str, Any]]) -> dict[str, Any]:
        return {"content": [use(f"u{assistants(h)}", "ping")] if assistants(h) < K - 1 else [text("done")]}

    return fn


def M_inf(h: list[dict[str, Any]]) -> dict[str, Any]:
    return {"content": [use(f"u{assistants(h)}", "ping")]}


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 60))
def test_prop_7_2_2_unbounded_agent_makes_exactly_K_calls(K: int) -> None:
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(M(K)), tools=[ping], max_turns=None))
    assert r.subtype == "success"
    assert r.model_calls == K and r.num_turns == K - 1


def test_prop_7_2_2_no_constant_bounds_the_agent_while_every_workflow_has_one() -> None:
    wf = chain(Node("a"), parallel(Node("b"), Node("c")), evaluator_optimizer(Node("g"), Node("e"), 3))
    C = wf.max_calls()
    assert C == 9
    r = wf.run("x", model=lw.ScriptedModel(lambda h: [text("FAIL")]))  # the model that uses every node
    assert r.model_calls == C
    agent = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(M(C + 1)), tools=[ping]))
    assert agent.model_calls == C + 1 > C


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 12), st.integers(0, 2**32 - 1))
def test_prop_7_2_3_finite_T_bounds_calls_by_T_plus_1(T: int, seed: int) -> None:
    rng = random.Random(seed)
    arbitrary = lw.ScriptedModel(lambda h: [use(f"u{len(h)}", "ping")] if rng.random() < 0.8 else [text("done")])
    r = lw.run("go", lw.AgentOptions(model=arbitrary, tools=[ping], max_turns=T))
    assert r.model_calls <= T + 1 and r.num_turns <= T
    worst = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(M_inf), tools=[ping], max_turns=T))
    assert worst.model_calls == T + 1 and worst.subtype == "error_max_turns"  # M_inf attains the bound


def test_agent_node_counts_T_plus_1_and_M_inf_attains_it_inside_a_workflow() -> None:
    node = Agent("fix", lw.AgentOptions(tools=[ping], max_turns=3))
    wf = chain(Node("plan"), node)
    assert node.weight == 4 and wf.max_calls() == 1 + 4
    r = wf.run("plan x", model=lw.ScriptedModel(lambda h: M_inf(h) if len(h) > 1 or "plan" not in prompt_of(h)
                                                else [text("p")]))
    assert r.model_calls == 5 == wf.max_calls()
    assert r.subtype == "error_during_execution" and "error_max_turns" in (r.error or "")
    assert r.nodes[-1].result is not None and r.nodes[-1].result.num_turns == 3


def test_an_agent_node_given_a_blank_input_fails_the_run_naming_it() -> None:
    """A step before it answered nothing: the agent node is not run on a blank prompt (the loop
    refuses one, as the Messages API would), and the run ends as a failed node, not a TypeError."""
    wf = chain(Node("plan"), Agent("fix", lw.AgentOptions(tools=[ping], max_turns=3)))
    r = wf.run("x", model=lw.ScriptedModel(lambda h: [text(" ")]))
    assert r.subtype == "error_during_execution" and r.output is None
    assert "agent node 'fix': its prompt is empty" in (r.error or ""), r.error
    assert r.model_calls == 1  # the plan's call only


def test_agent_node_runs_a_real_agent_loop() -> None:
    def fn(h: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if prompt_of(h).startswith("Fix"):
            return [use("t1", "ping")] if assistants(h) == 0 else [text("fixed it")]
        return [text("LGTM")]

    wf = chain(Agent("fixer", lw.AgentOptions(tools=[ping], max_turns=5), "Fix: {input}"), Node("review", "Review: {input}"))
    r = wf.run("the bug", model=lw.ScriptedModel(fn, cost_per_call_usd=0.25))
    assert r.subtype == "success" and r.output == "LGTM"
    fixer = r.nodes[0]
    assert fixer.output == "fixed it" and len(fixer.calls) == 2 and fixer.result is not None
    assert fixer.result.num_turns == 1
    assert r.nodes[1].prompt == "Review: fixed it"
    assert r.model_calls == 3 and r.total_cost_usd == 0.75


def test_agent_node_needs_a_finite_T() -> None:
    with pytest.raises(ValueError, match="max_turns"):
        Agent("free", lw.AgentOptions(max_turns=None))


def test_agent_node_with_hooks_counts_stop_continuations() -> None:
    from loopwright.loop import MAX_STOP_CONTINUATIONS

    node = Agent("a", lw.AgentOptions(max_turns=2, hooks=lw.Hooks()))
    assert node.weight == 3 + MAX_STOP_CONTINUATIONS


# --- Def 7.1 enforced: each node at most once ---------------------------------------------------


def test_a_node_passed_twice_raises_a_clear_error() -> None:
    a = Node("a")

    @program(nodes=[a])
    async def loop_twice(ctx: Any, t: str) -> str:
        for _ in range(2):
            t = await ctx.call(a, t)
        return t

    assert loop_twice.max_calls() == 1
    with pytest.raises(WorkflowError, match="'a' passed twice in one run"):
        loop_twice.run("x", model=lw.ScriptedModel(lambda h: [text("y")]))


def test_structures_that_could_pass_a_node_twice_are_rejected_when_built() -> None:
    a = Node("a")
    with pytest.raises(WorkflowError, match="appears twice in a chain"):
        chain(a, a)
    with pytest.raises(WorkflowError, match="appears twice in a parallel"):
        parallel(a, chain(Node("b"), a))
    with pytest.raises(WorkflowError, match="two different nodes are named 'a'"):
        route(Node("r"), {"x": a, "y": Node("a")})
    with pytest.raises(WorkflowError, match="appears twice in a route"):
        route(a, {"x": a})


def test_route_branches_may_share_a_node_it_counts_once_in_V() -> None:
    shared = Node("shared", "shared {input}")
    wf = route(Node("r", "route {input}"), {"x": chain(Node("x1", "x1 {input}"), shared), "y": shared})
    assert sorted(wf.nodes()) == ["r", "shared", "x1"] and wf.max_calls() == 3
    r = wf.run("q", model=by_prefix({"route": "x"}))
    assert r.path == ["r", "x1", "shared"]


def test_program_may_only_call_declared_nodes() -> None:
    a, stray = Node("a"), Node("stray")

    @program(nodes=[a])
    async def flow(ctx: Any, t: str) -> str:
        return await ctx.call(stray, await ctx.call(a, t))

    with pytest.raises(WorkflowError, match="did not declare"):
        flow.run("x", model=lw.ScriptedModel(lambda h: [text("y")]))


# --- combinators --------------------------------------------------------------------------------


def test_chain_passes_each_output_on_and_templates_see_earlier_outputs() -> None:
    wf = chain(Node("outline", "outline {input}"), Node("write", "write {input} (task: {task}, outline: {outline})"))
    r = wf.run("tides", model=lw.ScriptedModel(lambda h: [text(prompt_of(h).upper())]))
    assert r.subtype == "success" and r.path == ["outline", "write"]
    assert r.nodes[1].prompt == "write OUTLINE TIDES (task: tides, outline: OUTLINE TIDES)"
    assert r.output == r.outputs["write"] == "WRITE OUTLINE TIDES (TASK: TIDES, OUTLINE: OUTLINE TIDES)"


def test_gate_stops_the_chain_before_later_nodes() -> None:
    wf = chain(Node("draft", "draft {input}"), Gate(lambda t: "TODO" not in t, "no-todo", "draft has TODOs"),
               Node("polish", "polish {input}"))
    stopped = wf.run("x", model=by_prefix({"draft": "TODO fill in"}))
    assert stopped.subtype == "gate_failed" and not stopped.is_error
    assert stopped.path == ["draft"] and stopped.model_calls == 1
    assert stopped.output == "TODO fill in" and "no-todo" in (stopped.error or "")
    passed = wf.run("x", model=by_prefix({"draft": "done"}, default="polished"))
    assert passed.subtype == "success" and passed.output == "polished" and passed.model_calls == 2


def test_unknown_template_field_is_a_workflow_error() -> None:
    with pytest.raises(WorkflowError, match=r"field \{later\} is unknown"):
        chain(Node("a", "a {later}"), Node("later")).run("x", model=lw.ScriptedModel(lambda h: [text("y")]))


@pytest.mark.parametrize(("answer", "branch"), [("billing", "billing"), ("This is a Technical issue.", "technical"),
                                                ("TECHNICAL, not billing", "technical"), ("refund", "billing")])
def test_route_picks_the_branch_the_router_names(answer: str, branch: str) -> None:
    wf = route(Node("router", "classify {input} as one of: {branches}"),
               {"billing": Node("billing", "bill {input}"), "technical": Node("technical", "tech {input}")},
               default="billing")
    r = wf.run("my invoice", model=by_prefix({"classify": answer, "bill": "BILL", "tech": "TECH"}))
    assert r.choices == {"router": branch}
    assert r.path == ["router", branch] and r.model_calls == 2
    assert r.output == ("BILL" if branch == "billing" else "TECH")
    assert r.nodes[0].prompt == "classify my invoice as one of: billing, technical"


def test_route_without_a_match_ends_with_a_clear_error_and_custom_choose_works() -> None:
    branches: dict[str, Step] = {"a": Node("na"), "b": Node("nb")}
    r = route(Node("r"), branches).run("x", model=lw.ScriptedModel(lambda h: [text("neither")]))
    assert r.subtype == "error_during_execution" and "names none of the branches" in (r.error or "")
    assert r.path == ["r"] and r.model_calls == 1
    chosen = route(Node("r2"), {"a": Node("na2"), "b": Node("nb2")}, choose=lambda ans: "b" if "2" in ans else "a")
    assert chosen.run("x", model=lw.ScriptedModel(lambda h: [text("option 2")])).path == ["r2", "nb2"]


class BarrierModel:
    """Each call waits until n calls have started: sequential calls would never get past the first
    (the 5 s wait_for turns that deadlock into a failure instead of a hang)."""

    def __init__(self, n: int, name: str = "barrier") -> None:
        self.name, self.n = name, n
        self.started = self.in_flight = self.max_in_flight = 0
        self.all_started = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.started += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if self.started >= self.n:
            self.all_started.set()
        await asyncio.wait_for(self.all_started.wait(), 30)
        self.in_flight -= 1
        yield ModelResponse([TextBlock("out:" + prompt_of(request.messages))], "end_turn", Usage(10, 2), self.name, 0.0)


def test_parallel_runs_its_steps_concurrently_and_keeps_step_order() -> None:
    model = BarrierModel(3)
    wf = parallel(Node("s1", "one {input}"), Node("s2", "two {input}"), Node("s3", "three {input}"))
    r = wf.run("x", model=model)
    assert r.subtype == "success" and model.max_in_flight == 3  # all three calls overlapped
    assert r.output == "out:one x\n\nout:two x\n\nout:three x"


def test_parallel_aggregator_node_and_vote_majority() -> None:
    wf = parallel(Node("pros", "pros {input}"), Node("cons", "cons {input}"), aggregate=Node("sum", "summarize {input}"))
    r = wf.run("x", model=lw.ScriptedModel(lambda h: [text(prompt_of(h).split()[0])]))
    assert wf.max_calls() == 3 and r.nodes[-1].prompt == "summarize pros\n\ncons" and r.output == "summarize"
    answers = iter(["unsafe", "safe", "safe ", "unsafe", "safe"])
    v = vote(Node("judge"), 5)
    assert sorted(v.nodes()) == [f"judge[{i}]" for i in range(1, 6)]
    r = v.run("x", model=lw.ScriptedModel(lambda h: [text(next(answers))]))
    assert r.output == "safe" and r.model_calls == 5


def test_evaluator_optimizer_stops_when_approved() -> None:
    verdicts = iter(["FAIL: too long", "PASS"])

    def fn(h: list[dict[str, Any]]) -> list[dict[str, Any]]:
        p = prompt_of(h)
        if p.startswith("judge"):
            return [text(next(verdicts))]
        return [text(f"draft{p.count('Feedback') + 1}")]

    model = lw.ScriptedModel(fn)
    wf = evaluator_optimizer(Node("gen", "write a haiku about {input}"), Node("eval", "judge {input} for {request}"), 4)
    assert wf.max_calls() == 8  # 2R
    r = wf.run("tides", model=model)
    assert r.path == ["gen[1]", "eval[1]", "gen[2]", "eval[2]"] and r.model_calls == 4
    assert r.output == "draft2"
    assert "Your previous attempt:\ndraft1" in r.nodes[2].prompt and "FAIL: too long" in r.nodes[2].prompt
    assert r.nodes[1].prompt == "judge draft1 for tides"
    assert any("approved round 2 of 4" in n for n in r.notes)


def test_evaluator_optimizer_never_exceeds_R_rounds() -> None:
    wf = evaluator_optimizer(Node("gen", "write {input} {draft}|{feedback}"), Node("eval"), 3)
    r = wf.run("x", model=lw.ScriptedModel(lambda h: [text("FAIL")]))
    assert r.model_calls == 6 == wf.max_calls() and r.subtype == "success" and r.output == "FAIL"
    assert r.nodes[2].prompt == "write x FAIL|FAIL"  # its template uses {feedback}: nothing appended
    assert any("not approved after 3 rounds" in n for n in r.notes)


def test_orchestrator_caps_subtasks_at_K_with_a_note() -> None:
    model = by_prefix({"plan": "1. parse\n2. lex\n3. emit\n4. test\n5. docs", "do": "done"})
    wf = orchestrator_workers(Node("orch", "plan {input}"), Node("w", "do {input} for {request}"), 3,
                              synthesizer=Node("syn", "merge {input}"))
    assert sorted(wf.nodes()) == ["orch", "syn", "w[1]", "w[2]", "w[3]"] and wf.max_calls() == 5
    r = wf.run("compiler", model=model)
    assert r.model_calls == 5 and r.path[0] == "orch" and r.path[-1] == "syn"
    assert [n.prompt for n in r.nodes if n.node.startswith("w[")] == [
        "do parse for compiler", "do lex for compiler", "do emit for compiler"]
    assert any("proposed 5 subtasks; ran the first 3" in n and "'test'" in n and "'docs'" in n for n in r.notes)
    assert r.nodes[-1].prompt == "merge ## parse\ndone\n\n## lex\ndone\n\n## emit\ndone"


def test_orchestrator_workers_run_concurrently_and_fewer_subtasks_use_fewer_workers() -> None:
    barrier = BarrierModel(2)
    wf = orchestrator_workers(Node("orch", model=lw.ScriptedModel(lambda h: [text('["a", "b"]')])), Node("w"), 4)
    r = wf.run("x", model=barrier)
    assert barrier.max_in_flight == 2 and r.path == ["orch", "w[1]", "w[2]"] and r.model_calls == 3
    assert not r.notes


def test_parse_subtasks() -> None:
    assert parse_subtasks('```json\n["a", " b ", ""]\n```') == ["a", "b"]
    assert parse_subtasks("- one\n* two\n\n3) three\n(4) four\n5. five") == ["one", "two", "three", "four", "five"]
    assert parse_subtasks("[not json") == ["[not json"]


# --- costs, errors, streaming -------------------------------------------------------------------


def test_costs_add_up_exactly_per_call_per_node_and_in_total() -> None:
    cost = {1: 0.5, 2: 0.25, 3: 0.125, 4: 0.0625, 5: 1.0}
    model = lw.ScriptedModel(lambda h: [text("FAIL")], cost_per_call_usd=lambda k: cost[k])
    wf = chain(Node("a"), parallel(Node("b"), Node("c")), evaluator_optimizer(Node("g"), Node("e"), 1))
    r = wf.run("x", model=model)
    assert [c.cost_usd for c in r.call_usage] == [0.5, 0.25, 0.125, 0.0625, 1.0]
    assert r.total_cost_usd == 1.9375 == math.fsum(n.cost_usd for n in r.nodes)
    assert {n.node: n.cost_usd for n in r.nodes} == {"a": 0.5, "b": 0.25, "c": 0.125, "g[1]": 0.0625, "e[1]": 1.0}


class PricedModel:
    """A model without its own cost: the price table prices it, as in the agent loop."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield ModelResponse([TextBlock("hi")], "end_turn", Usage(1000, 200, 300, 4000), self.name)


def test_costs_from_the_price_table_and_unknown_prices_are_noted() -> None:
    u = Usage(1000, 200, 300, 4000)
    price = price_for("claude-sonnet-4-5")
    assert price is not None
    r = parallel(Node("a"), Node("b")).run("x", model=PricedModel("claude-sonnet-4-5"))
    assert r.total_cost_usd == math.fsum([price.cost(u), price.cost(u)]) > 0
    assert r.call_usage[0].input_tokens == 5300 and r.usage.output_tokens == 400
    unknown = Node("a").run("x", model=PricedModel("mystery-1"))
    assert unknown.total_cost_usd == 0 and any("'mystery-1' is unknown" in n for n in unknown.notes)
    custom = Node("a").run("x", model=PricedModel("mystery-1"), prices={"mystery": lw.Price.from_input(1, 2)})
    assert custom.total_cost_usd == (1000 * 1 + 200 * 2 + 300 * 1.25 + 4000 * 0.1) / 1e6 and not custom.notes


class SearchingModel(PricedModel):
    """A call that made two server-side web searches (usage.server_tool_use.web_search_requests)."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield ModelResponse([TextBlock("hi")], "end_turn", Usage(1000, 200, web_search_requests=2), self.name)


def test_a_nodes_web_searches_are_in_its_call_record_as_in_the_agent_loops() -> None:
    """Priced like the agent loop's calls ($10 per 1,000 searches) and counted in the call's record
    (CallUsage.of, the loop's and the workflow's one way to make one): the record dropped them."""
    price = price_for("claude-sonnet-4-5")
    assert price is not None
    r = Node("a").run("x", model=SearchingModel("claude-sonnet-4-5"))
    assert [c.web_search_requests for c in r.call_usage] == [2]
    assert r.total_cost_usd == price.cost(Usage(1000, 200, web_search_requests=2)) > price.cost(Usage(1000, 200))


def test_a_failing_model_ends_the_run_cleanly_keeping_the_calls_made() -> None:
    turns: list[Any] = [[text("ok")], ModelError("overloaded", status=529)]
    r = chain(Node("a"), Node("b"), Node("c")).run("x", model=lw.ScriptedModel(turns, cost_per_call_usd=0.5))
    assert r.subtype == "error_during_execution" and r.is_error and r.output is None
    assert "node 'b'" in (r.error or "") and "overloaded" in (r.error or "")
    assert r.path == ["a", "b"] and r.model_calls == 1 and r.total_cost_usd == 0.5 and r.outputs == {"a": "ok"}


def test_a_failing_parallel_branch_cancels_its_siblings() -> None:
    slow_started = asyncio.Event()

    class Mixed:
        name = "mixed"
        cancelled = False

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
            if prompt_of(request.messages) == "slow":
                slow_started.set()
                try:
                    await asyncio.Event().wait()  # never finishes on its own
                except asyncio.CancelledError:
                    Mixed.cancelled = True
                    raise
            await slow_started.wait()
            raise ModelError("boom")
            yield  # an async generator

    r = parallel(Node("s", "slow"), Node("f", "fail")).run("x", model=Mixed())
    assert r.subtype == "error_during_execution" and "boom" in (r.error or "") and Mixed.cancelled


def test_a_cancelled_agent_branch_still_counts_the_calls_it_made() -> None:
    """An Agent node cancelled mid-run (its sibling failed) made model calls all the same:
    they are in model_calls, call_usage and the cost (they were paid for)."""
    in_tool = asyncio.Event()
    calls = [0]
    agent_model = lw.ScriptedModel([[use("h1", "hang")]], cost_per_call_usd=0.25)

    @lw.tool(read_only=True)
    async def hang() -> str:
        """Never returns on its own."""
        in_tool.set()
        await asyncio.Event().wait()
        return "never"

    class M:
        name = "m"

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
            calls[0] += 1
            if prompt_of(request.messages) == "fail":
                await in_tool.wait()  # the agent has made its first call and is in its tool
                raise ModelError("boom")
            async for e in agent_model.stream(request):
                yield e

    agent = Agent("a", lw.AgentOptions(tools=[hang], max_turns=3), prompt="work")
    r = parallel(agent, Node("f", "fail")).run("x", model=M())
    assert r.subtype == "error_during_execution" and "boom" in (r.error or "")
    assert calls[0] == 2 and r.model_calls == 1  # the agent's call; the failed one returned nothing
    cancelled = [n for n in r.nodes if n.node == "a"]
    assert len(cancelled) == 1 and cancelled[0].stop_reason == "cancelled" and "a" not in r.outputs
    assert r.total_cost_usd == 0.25 and len(r.call_usage) == 1


def test_query_streams_node_calls_then_the_result() -> None:
    wf = chain(Node("a"), Node("b"))

    async def collect() -> list[NodeCall | WorkflowResult]:
        return [ev async for ev in wf.query("x", model=lw.ScriptedModel(lambda h: [text("y")]))]

    events = asyncio.run(collect())
    assert [type(e).__name__ for e in events] == ["NodeCall", "NodeCall", "WorkflowResult"]
    assert [e.node for e in events[:2] if isinstance(e, NodeCall)] == ["a", "b"]


def test_per_node_model_override_and_missing_model() -> None:
    small = lw.ScriptedModel(lambda h: [text("small")], name="small")
    big = lw.ScriptedModel(lambda h: [text("big")], name="big")
    r = chain(Node("router", model=small), Node("answer")).run("x", model=big)
    assert [c.model for c in r.call_usage] == ["small", "big"] and r.output == "big"
    with pytest.raises(WorkflowError, match="has no model"):
        Node("a").run("x")


def test_renamed_nodes_are_separate_elements_of_V() -> None:
    a = Node("a", "p {input}", system="s")
    b = a.renamed("b")
    assert isinstance(b, BaseNode) and b.name == "b" and b.prompt == a.prompt and b.system == "s"
    assert chain(a, b).max_calls() == 2


def test_works_with_the_anthropic_provider_over_the_loopback_server() -> None:
    from loopwright.models.anthropic import AnthropicModel
    from loopwright.testing import ScriptedServer

    usage = {"input_tokens": 120, "output_tokens": 30}
    script = [{"content": [text("technical")], "usage": usage}, {"content": [text("Restart it.")], "usage": usage}]
    wf = route(Node("router", "Classify as one of {branches}: {input}", system="You route tickets."),
               {"billing": Node("bill"), "technical": Node("tech", "Answer: {input}", max_tokens=200)})
    with ScriptedServer(script) as srv:
        model = AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="test-key", retry_base_delay=0.01)
        r = wf.run("the app crashes", model=model)
        bodies = [q.body for q in srv.loop_requests]
    assert r.subtype == "success" and r.output == "Restart it." and r.path == ["router", "tech"]
    assert len(bodies) == 2 == r.model_calls
    assert "You route tickets." in json.dumps(bodies[0]["system"]) and not bodies[0].get("tools")
    assert [[b["text"] for b in m["content"]] for m in bodies[1]["messages"]] == [["Answer: the app crashes"]]
    assert bodies[1]["max_tokens"] == 200
    price = price_for("claude-sonnet-4-6")
    assert price is not None
    assert r.total_cost_usd == math.fsum([price.cost(Usage(120, 30))] * 2) > 0
