"""PreToolUse additionalContext and suppressOutput, SubagentStart, SubagentStop after an error
(hooks.py, agents.py), and read-only subagents running concurrently (seed Prop 6.2)."""

from __future__ import annotations

import asyncio
import json
import shlex
from typing import Any

import loopwright as lw
from loopwright.hooks import Hooks
from loopwright.messages import ResultMessage, SystemMessage
from loopwright.options import AgentDefinition, AgentOptions
from loopwright.testing import ScriptedServer
from tests.helpers import collect, result_text, text, use


def echo_tool() -> lw.Tool:
    return lw.Tool("echo", "Echo", {"type": "object", "properties": {"s": {"type": "string"}}},
                   lambda x: "echoed " + x.get("s", ""), read_only=True)


def on_server(srv: ScriptedServer, **kw: Any) -> AgentOptions:
    return AgentOptions(model="claude-sonnet-4-6", base_url=srv.url, api_key="test", max_retries=0, **kw)


# --- PreToolUse additionalContext ------------------------------------------------------------

def test_pre_tool_use_additional_context_reaches_the_model_with_the_result() -> None:
    """A command hook (JSON on stdout) adds context; the next request carries it with the result."""
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "NOTE: echo is audited"}}
    hooks = Hooks().command("PreToolUse", f"echo {shlex.quote(json.dumps(out))}", matcher="echo")
    script = [[use("t1", "echo", {"s": "a"}), use("t2", "echo", {"s": "b"})], [text("done")]]
    with ScriptedServer(script, min_cache_tokens=0) as srv:
        r = collect("go", on_server(srv, tools=[echo_tool()], hooks=hooks))[-1]
        second = srv.loop_requests[1].body["messages"]
    assert r.subtype == "success"
    results = second[2]["content"]
    assert [result_text(b) for b in results] == ["echoed a\n\nNOTE: echo is audited", "echoed b\n\nNOTE: echo is audited"]


def test_pre_tool_use_context_also_goes_with_a_refusal_and_only_to_its_call() -> None:
    seen: list[str] = []

    def gate(data: dict[str, Any]) -> dict[str, Any]:
        seen.append(data["tool_input"]["s"])
        if data["tool_input"]["s"] == "secret":
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "no secrets",
                                           "additionalContext": "Use the public copy instead."}}
        return {}

    hooks = Hooks()
    hooks.on("PreToolUse", gate)
    script = [[use("t1", "echo", {"s": "secret"}), use("t2", "echo", {"s": "plain"})], [text("done")]]
    r = collect("go", AgentOptions(model=lw.ScriptedModel(script), tools=[echo_tool()], hooks=hooks))[-1]
    results = r.messages[2]["content"]
    assert seen == ["secret", "plain"]
    assert results[0]["is_error"] and result_text(results[0]) == "no secrets\n\nUse the public copy instead."
    assert result_text(results[1]) == "echoed plain"


# --- suppressOutput ----------------------------------------------------------------------------

def test_suppress_output_hides_the_hooks_output_from_the_user_not_the_model() -> None:
    hooks = Hooks()
    hooks.on("PreToolUse", lambda d: {"systemMessage": "shown", "hookSpecificOutput": {
        "hookEventName": "PreToolUse", "additionalContext": "ctx one"}})
    hooks.on("PreToolUse", lambda d: {"systemMessage": "hidden", "suppressOutput": True, "hookSpecificOutput": {
        "hookEventName": "PreToolUse", "additionalContext": "ctx two"}})
    script = [[use("t1", "echo", {"s": "x"})], [text("done")]]
    msgs = collect("go", AgentOptions(model=lw.ScriptedModel(script), tools=[echo_tool()], hooks=hooks))
    shown = [m.data["message"] for m in msgs if isinstance(m, SystemMessage) and m.subtype == "hook_message"]
    assert shown == ["shown"]
    r = msgs[-1]
    assert isinstance(r, ResultMessage)
    assert result_text(r.messages[2]["content"][0]) == "echoed x\n\nctx one\n\nctx two"


# --- SubagentStart / SubagentStop --------------------------------------------------------------

EXPLORE = AgentDefinition("Looks things up", "You explore.", tools=["echo"])


def agent_call(uid: str, prompt: str, kind: str) -> dict[str, Any]:
    return use(uid, "Agent", {"description": "sub task", "prompt": prompt, "subagent_type": kind})


def test_subagent_start_fires_per_type_and_its_context_reaches_the_subagent() -> None:
    events: list[dict[str, Any]] = []
    hooks = Hooks()
    hooks.on("SubagentStart", lambda d: events.append(d) or {"hookSpecificOutput": {
        "hookEventName": "SubagentStart", "additionalContext": "START-CTX"}}, matcher="explore")
    hooks.on("SubagentStart", lambda d: events.append({"wrong": d}), matcher="other")

    def turns(h: list[dict[str, Any]]) -> Any:
        if h[0]["content"][0]["text"] == "main":
            return [agent_call("a1", "look", "explore")] if len(h) == 1 else [text("all done")]
        return [text("found it")]

    with ScriptedServer(turns, min_cache_tokens=0) as srv:
        r = collect("main", on_server(srv, tools=[echo_tool()], agents={"explore": EXPLORE}, hooks=hooks))[-1]
        sub_first = [q.body["messages"] for q in srv.loop_requests if q.body["messages"][0]["content"][0]["text"] == "look"]
    assert r.subtype == "success"
    assert len(events) == 1 and events[0]["hook_event_name"] == "SubagentStart"
    assert events[0]["agent_type"] == "explore" and events[0]["agent_id"]
    assert [b["text"] for b in sub_first[0][0]["content"]] == ["look", "START-CTX"]


def test_subagent_stop_fires_when_the_subagent_ends_in_an_error() -> None:
    stops: list[dict[str, Any]] = []
    hooks = Hooks()
    hooks.on("SubagentStop", lambda d: stops.append(d) or {"decision": "block", "reason": "keep going"})
    one_turn = AgentDefinition("Limited", "You are limited.", tools=["echo"], max_turns=0)

    def turns(h: list[dict[str, Any]]) -> Any:
        if h[0]["content"][0]["text"] == "main":
            return [agent_call("a1", "sub", "limited")] if len(h) == 1 else [text("parent done")]
        return [use("s1", "echo", {"s": "x"})]  # the subagent wants a tool turn it does not have

    r = collect("main", AgentOptions(model=lw.ScriptedModel(turns), tools=[echo_tool()],
                                     agents={"limited": one_turn}, hooks=hooks))[-1]
    assert r.subtype == "success" and r.result == "parent done"
    result = r.messages[2]["content"][0]
    assert result["is_error"] and "error_max_turns" in result_text(result)
    assert len(stops) == 1  # once, and its "block" cannot make an ended subagent continue
    assert stops[0]["agent_type"] == "limited" and "error_max_turns" in stops[0]["error"]
    assert stops[0]["stop_hook_active"] is False


# --- concurrent read-only subagents ------------------------------------------------------------

def probe_tool(log: list[str], barrier: dict[str, asyncio.Event] | None) -> lw.Tool:
    """Logs enter/exit; with a barrier, each call waits (up to 5 s) until every other has entered:
    only concurrent calls get through without waiting."""

    async def probe(x: dict[str, Any]) -> str:
        who = x["who"]
        log.append(f"enter {who}")
        if barrier is not None:
            barrier[who].set()
            try:
                await asyncio.wait_for(asyncio.gather(*(e.wait() for e in barrier.values())), 30)
            except TimeoutError:
                log.append(f"alone {who}")
        else:
            await asyncio.sleep(0.01)
        log.append(f"exit {who}")
        return f"probed {who}"

    return lw.Tool("Probe", "Probe", {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
                   probe, read_only=True)


def two_agents(kind: str) -> Any:
    def turns(h: list[dict[str, Any]]) -> Any:
        first = h[0]["content"][0]["text"]
        if first == "main":
            return [agent_call("a1", "A", kind), agent_call("a2", "B", kind)] if len(h) == 1 else [text("both done")]
        return [use(f"p{first}", "Probe", {"who": first})] if len(h) == 1 else [text(f"report {first}")]
    return turns


def test_read_only_subagents_in_one_response_run_concurrently() -> None:
    log: list[str] = []
    barrier = {"A": asyncio.Event(), "B": asyncio.Event()}
    explore = AgentDefinition("Explores", "You explore.", tools=["Probe"])
    msgs = collect("main", AgentOptions(model=lw.ScriptedModel(two_agents("explore")),
                                        tools=[probe_tool(log, barrier)], agents={"explore": explore}))
    r = msgs[-1]
    assert isinstance(r, ResultMessage) and r.subtype == "success"
    assert not any(e.startswith("alone") for e in log), log
    assert log.index("enter B") < log.index("exit A") and log.index("enter A") < log.index("exit B")
    results = r.messages[2]["content"]  # in emission order, whatever finished first
    assert [b["tool_use_id"] for b in results] == ["a1", "a2"]
    assert [result_text(b) for b in results] == ["report A", "report B"]


def test_subagents_that_may_write_run_one_at_a_time() -> None:
    log: list[str] = []
    writer = lw.Tool("Save", "Save", {"type": "object"}, lambda x: "saved")  # not read-only
    worker = AgentDefinition("Works", "You work.", tools=["Probe", "Save"])
    r = collect("main", AgentOptions(model=lw.ScriptedModel(two_agents("worker")),
                                     tools=[probe_tool(log, None), writer], agents={"worker": worker}))[-1]
    assert r.subtype == "success"
    assert log == ["enter A", "exit A", "enter B", "exit B"]


def test_concurrent_subagents_split_what_is_left_of_the_budget() -> None:
    """B = 1, every call costs 0.3: after the parent's call 0.7 is left, 0.35 for each of two
    concurrent subagents, so each stops after its 2nd call (0.6 >= 0.35); with the whole 0.7
    each would have made a 3rd call."""
    explore = AgentDefinition("Explores", "You explore.", tools=["Probe"])

    def turns(h: list[dict[str, Any]]) -> Any:
        first = h[0]["content"][0]["text"]
        if first == "main":
            return [agent_call("a1", "A", "explore"), agent_call("a2", "B", "explore")]
        n = sum(1 for m in h if m["role"] == "assistant")
        return [use(f"p{first}{n}", "Probe", {"who": first})] if n < 2 else [text(f"report {first}")]

    r = collect("main", AgentOptions(model=lw.ScriptedModel(turns, cost_per_call_usd=0.3), max_budget_usd=1.0,
                                     tools=[probe_tool([], None)], agents={"explore": explore}))[-1]
    assert isinstance(r, ResultMessage)
    results = r.messages[2]["content"]
    assert all(b.get("is_error") and "error_max_budget_usd" in result_text(b) for b in results)
    assert len(r.subagent_call_usage) == 4
    assert r.subtype == "error_max_budget_usd"
