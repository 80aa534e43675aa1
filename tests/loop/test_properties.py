"""The seed's propositions as property tests over arbitrary models, tools, gates, failures and limits.

Thm 3.4 (Inv on every model input), Thm 4.1 (calls <= T+1, turns <= T), Prop 5.2
(n_k = s + sum(a_i + r_i)), Prop 5.4 (budget overshoot < c_max), Prop 6.2 (read-only
calls commute), and the concurrency rules of SPEC §6."""

from __future__ import annotations

import asyncio
import copy
import math
import threading
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.execute import Executor
from loopwright.gate import Permissions
from loopwright.hooks import Hooks
from loopwright.invariant import check, holds, holds_final
from loopwright.loop import MAX_OUTPUT_CONTINUATIONS, NO_OUTPUT_REMINDER
from loopwright.tokens import estimate_tokens
from loopwright.tools.base import ToolContext

OBJ = {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "string"}}}


def make_tools(env: dict[str, str]) -> list[lw.Tool]:
    def get(x: dict[str, Any]) -> str:
        return env.get(x.get("k", ""), "(none)")

    def put(x: dict[str, Any]) -> str:
        env[x.get("k", "")] = x.get("v", "")
        return "ok"

    def fail(x: dict[str, Any]) -> str:
        raise RuntimeError("tool failed")

    return [lw.Tool("get", "read", OBJ, get, read_only=True), lw.Tool("put", "write", OBJ, put),
            lw.Tool("fail", "fails", OBJ, fail)]


call_st = st.fixed_dictionaries({
    "name": st.sampled_from(["get", "put", "fail", "missing"]),
    "k": st.sampled_from(["a", "b", "c"]),
    "v": st.text(max_size=5),
    "bad_input": st.booleans(),
})
response_st = st.fixed_dictionaries({
    "text": st.text(max_size=20),
    "calls": st.lists(call_st, min_size=0, max_size=5),
    "raise": st.integers(0, 30).map(lambda n: n == 0),  # ~3% of calls fail
    "max_tokens": st.integers(0, 20).map(lambda n: n == 0),
})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    script=st.lists(response_st, min_size=1, max_size=12),
    T=st.one_of(st.none(), st.integers(0, 8)),
    B=st.one_of(st.none(), st.floats(0.5, 20)),
    costs=st.lists(st.floats(0.1, 3.0), min_size=12, max_size=12),
    denied=st.sets(st.integers(0, 60)),
)
def test_loop_propositions(script: list[dict[str, Any]], T: int | None, B: float | None,
                           costs: list[float], denied: set[int]) -> None:
    env: dict[str, str] = {"a": "1"}
    seen: list[list[dict[str, Any]]] = []
    counter = {"id": 0}

    def model(h: list[dict[str, Any]]) -> dict[str, Any]:
        check(h)  # Thm 3.4: Inv on every message list handed to the model
        seen.append(copy.deepcopy(h))
        k = len(seen) - 1
        if k >= len(script):
            return {"content": [{"type": "text", "text": "done"}]}
        spec = script[k]
        if spec["raise"]:
            raise ConnectionError("model failed")
        content: list[dict[str, Any]] = [{"type": "text", "text": spec["text"]}] if spec["text"] else []
        for c in spec["calls"]:
            counter["id"] += 1
            inp: dict[str, Any] = {"k": 5} if c["bad_input"] else {"k": c["k"], "v": c["v"]}
            content.append({"type": "tool_use", "id": f"t{counter['id']}", "name": c["name"], "input": inp})
        out: dict[str, Any] = {"content": content}
        if spec["max_tokens"]:
            out["stop_reason"] = "max_tokens"
        return out

    def gate(name: str, x: dict[str, Any]) -> bool:
        return hash((name, str(x))) % 61 not in denied

    m = lw.ScriptedModel(model, cost_per_call_usd=lambda k: costs[(k - 1) % len(costs)])
    r = lw.run("go", lw.AgentOptions(model=m, tools=make_tools(env), max_turns=T, max_budget_usd=B,
                                     can_use_tool=gate))

    # the final history is valid, and every model input was
    assert holds_final(r.messages) and all(holds(h) for h in seen)
    assert r.model_calls == len(seen) or r.subtype == "error_during_execution"
    # Thm 4.1
    # (each reminder after an empty answer is one call more, at most max_empty_answer_reminders a run:
    # continuations.after_answer)
    reminders = sum(1 for m in r.messages if m["content"] == [{"type": "text", "text": NO_OUTPUT_REMINDER}])
    assert reminders <= lw.AgentOptions().max_empty_answer_reminders
    if T is not None:  # (plus the bounded reminder turns that continue an answer cut off at max_tokens)
        assert r.model_calls <= T + 1 + MAX_OUTPUT_CONTINUATIONS + reminders and r.num_turns <= T
    if r.subtype == "error_max_turns":
        assert r.num_turns == T
    # Prop 5.4
    spent = sum(costs[(k) % len(costs)] for k in range(r.model_calls))
    assert math.isclose(r.total_cost_usd, spent)
    c_max = max(costs)
    if B is not None:
        assert r.total_cost_usd < B + c_max
        if r.subtype == "error_max_budget_usd":
            assert B <= r.total_cost_usd
        c_min = min(costs)
        assert r.model_calls <= math.ceil(B / c_min)
    # Prop 5.2: n_k = s + sum_{i<k} (a_i + r_i), with the scripted model's per-message count
    n = [c.input_tokens for c in r.call_usage]
    if not n:
        return  # the first call failed: nothing was charged
    # An answer with nothing in it is not kept (SPEC §1: a message the Messages API takes mid-history
    # has content; continuations.after_answer): its a_i is 0 and its r_i the reminder after it (h holds
    # two user messages in a row there). A whitespace-only text block is not kept either
    # (model_call.sendable): a_i is the answer as h keeps it, less than the model was charged for.
    h = r.messages
    i = 1
    for k in range(1, len(n)):
        if i >= len(h) or (h[i]["role"] == "assistant" and i + 1 >= len(h)):
            break
        if h[i]["role"] == "user":  # the reminder after an empty answer
            assert n[k] == n[k - 1] + estimate_tokens(h[i])
            i += 1
            continue
        a_i, r_i = estimate_tokens(h[i]), estimate_tokens(h[i + 1])
        i += 2
        assert n[k] == n[k - 1] + a_i + r_i
        blank = k - 1 < len(script) and script[k - 1]["text"].isspace()
        assert r.call_usage[k - 1].output_tokens > a_i if blank else r.call_usage[k - 1].output_tokens == a_i
    # s = s_0 (tool definitions) + tau(m_1)
    assert n[0] == estimate_tokens([t.definition() for t in make_tools({})]) + estimate_tokens(h[0])


# --- Prop 6.2: read-only calls commute ------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.sampled_from("abcdef"), min_size=2, max_size=8),
       delays=st.lists(st.integers(0, 3), min_size=8, max_size=8))
def test_read_only_batch_results_independent_of_completion_order(keys: list[str], delays: list[int]) -> None:
    env = {c: c.upper() * 2 for c in "abcdef"}
    snapshot = dict(env)

    async def get(x: dict[str, Any]) -> str:
        await asyncio.sleep(delays[int(x["i"])] / 1000)  # completion order varies with the delays
        return env[x["k"]]

    tool = lw.Tool("get", "read", {"type": "object"}, get, read_only=True)
    uses = [lw.ToolUseBlock(f"u{i}", "get", {"k": k, "i": str(i)}) for i, k in enumerate(keys)]
    ex = Executor({"get": tool}, Permissions(), Hooks(), ToolContext(cwd=__import__("pathlib").Path(".")))
    out = asyncio.run(ex.run(uses))
    assert [r.content for r in out.results] == [env[k] for k in keys]  # = the sequential results
    assert [r.tool_use_id for r in out.results] == [u.id for u in uses]
    assert env == snapshot


# --- concurrency: read-only calls overlap, mutating calls never do --------------------------------

def _run_batch(tools: list[lw.Tool], uses: list[dict[str, Any]]) -> lw.ResultMessage:
    return lw.run("p", lw.AgentOptions(model=lw.ScriptedModel([uses, [{"type": "text", "text": "ok"}]]), tools=tools))


def test_eight_read_only_calls_overlap_in_time() -> None:
    running = {"now": 0}
    all_in = asyncio.Event()

    async def look(x: dict[str, Any]) -> str:
        running["now"] += 1
        if running["now"] == 8:
            all_in.set()
        await asyncio.wait_for(all_in.wait(), 30)  # each call sees the others running
        seen = running["now"]
        return f"{x['i']}:{seen}"

    tool = lw.Tool("look", "read", {"type": "object"}, look, read_only=True)
    r = _run_batch([tool], [{"type": "tool_use", "id": f"u{i}", "name": "look", "input": {"i": i}} for i in range(8)])
    assert [b["content"] for b in r.messages[2]["content"]] == [f"{i}:8" for i in range(8)]


def test_eight_sync_read_only_calls_overlap_in_threads() -> None:
    barrier = threading.Barrier(8, timeout=30)  # (a loaded machine starts 8 threads slowly; all pass at once)

    def look(x: dict[str, Any]) -> str:
        barrier.wait()  # raises BrokenBarrierError unless all 8 run at once
        return str(x["i"])

    tool = lw.Tool("look", "read", {"type": "object"}, look, read_only=True)
    r = _run_batch([tool], [{"type": "tool_use", "id": f"u{i}", "name": "look", "input": {"i": i}} for i in range(8)])
    assert [b["content"] for b in r.messages[2]["content"]] == [str(i) for i in range(8)]
    assert not any(b.get("is_error") for b in r.messages[2]["content"])


def test_mutating_calls_never_overlap_and_keep_emission_order() -> None:
    state = {"running": 0, "max": 0, "order": []}

    async def change(x: dict[str, Any]) -> str:
        state["running"] += 1
        state["max"] = max(state["max"], state["running"])
        await asyncio.sleep(0.001 * (8 - x["i"]))  # later calls would finish first if overlapped
        state["order"].append(x["i"])
        state["running"] -= 1
        return str(x["i"])

    async def look(x: dict[str, Any]) -> str:
        return "r" + str(x["i"])

    tools = [lw.Tool("change", "write", {"type": "object"}, change),
             lw.Tool("look", "read", {"type": "object"}, look, read_only=True)]
    names = ["look", "change", "change", "look", "look", "change", "look", "change"]
    uses = [{"type": "tool_use", "id": f"u{i}", "name": n, "input": {"i": i}} for i, n in enumerate(names)]
    r = _run_batch(tools, uses)
    assert state["max"] == 1 and state["order"] == [1, 2, 5, 7]
    assert [b["tool_use_id"] for b in r.messages[2]["content"]] == [f"u{i}" for i in range(8)]
    assert [b["content"] for b in r.messages[2]["content"]] == ["r0", "1", "2", "r3", "r4", "5", "r6", "7"]
