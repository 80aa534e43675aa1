"""Subagents (agents.py): the Agent tool runs a nested loop whose messages reach the caller
live with parent_tool_use_id, never the parent's history; costs and the budget are shared."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.agents import GENERAL_PURPOSE, make_agent_tool
from loopwright.execute import INTERRUPTED
from loopwright.invariant import holds_final
from loopwright.models.base import ModelRequest
from tests.helpers import collect, loopwright_cmd, text, use

PARENT_PROMPT = "main task"


def agent_call(uid: str, prompt: str, kind: str | None = None) -> dict[str, Any]:
    x: dict[str, Any] = {"description": "do a sub task", "prompt": prompt}
    if kind is not None:
        x["subagent_type"] = kind
    return use(uid, "Agent", x)


def first_text(h: list[dict[str, Any]]) -> str:
    return str(h[0]["content"][0]["text"])


def n_assistant(h: list[dict[str, Any]]) -> int:
    return sum(1 for m in h if m["role"] == "assistant")


def last_result_text(h: list[dict[str, Any]]) -> str:
    b = h[-1]["content"][0]
    c = b.get("content")
    return c if isinstance(c, str) else "".join(x.get("text", "") for x in c or [])


class Recording:
    """A Model that records each request (system, tool names, messages) and delegates."""

    def __init__(self, inner: lw.ScriptedModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.has_own_cost = True
        self.requests: list[tuple[str | None, list[str], list[dict[str, Any]]]] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        self.requests.append((request.system, [t["name"] for t in request.tools], list(request.messages)))
        async for ev in self.inner.stream(request):
            yield ev


def make_tools(tmp: Path, log: list[str]) -> list[lw.Tool]:
    obj = {"type": "object", "properties": {"n": {"type": "integer"}}}

    def look(x: dict[str, Any]) -> str:
        log.append(f"look {x.get('n')}")
        return f"{len(list(tmp.iterdir()))} entries"

    def note(x: dict[str, Any]) -> str:
        (tmp / f"note{x.get('n', 0)}.txt").write_text("noted")
        log.append(f"note {x.get('n')}")
        return "written"

    return [lw.Tool("look", "count entries", obj, look, read_only=True), lw.Tool("note", "write a note", obj, note)]


def two_level(parent_turns: list[Any], sub_turns: list[Any]) -> Any:
    """One function for both loops: the parent's history starts with PARENT_PROMPT."""

    def fn(h: list[dict[str, Any]]) -> Any:
        turns = parent_turns if first_text(h) == PARENT_PROMPT else sub_turns
        k = n_assistant(h)
        return turns[k] if k < len(turns) else [text("(script over)")]

    return fn


def run_all(options: lw.AgentOptions) -> list[Any]:
    return collect(PARENT_PROMPT, options)


def test_subagent_runs_tools_and_returns_its_text(tmp_path: Path) -> None:
    log: list[str] = []
    model = Recording(lw.ScriptedModel(two_level(
        [[text("delegating"), agent_call("a1", "count the entries")], [text("the sub said it")]],
        [[use("s1", "look", {"n": 1})], [text("there are 0 entries")]],
    ), cost_per_call_usd=0.01))
    msgs = run_all(lw.AgentOptions(model=model, tools=make_tools(tmp_path, log), cwd=tmp_path,
                                   agents={"unused": lw.AgentDefinition("x", "y")}))
    r = msgs[-1]
    assert r.subtype == "success" and r.result == "the sub said it"
    assert log == ["look 1"]
    # the parent's history: Inv, its own 4 messages, the sub's text as the Agent result, no sub messages
    assert holds_final(r.messages) and len(r.messages) == 4
    assert r.messages[2]["content"][0] == {"type": "tool_result", "tool_use_id": "a1",
                                           "content": "there are 0 entries"}
    blocks = [b for m in r.messages for b in m["content"]]
    assert [b.get("id") or b.get("tool_use_id") for b in blocks if b["type"] != "text"] == ["a1", "a1"]
    assert "count the entries" not in str([m for m in r.messages if m["role"] == "user"])
    # the sub's messages were yielded, tagged, between the parent's Agent call and its result
    kinds = [(type(m).__name__, getattr(m, "parent_tool_use_id", None)) for m in msgs]
    assert kinds == [("SystemMessage", None), ("AssistantMessage", None), ("AssistantMessage", "a1"),
                     ("UserMessage", "a1"), ("AssistantMessage", "a1"), ("UserMessage", None),
                     ("AssistantMessage", None), ("ResultMessage", None)]
    assert msgs[3].tool_results[0].content == "0 entries"
    # what the sub saw: a fresh history (just the prompt), its own system prompt, no Agent tool
    sub_system, sub_tools, sub_h = model.requests[1]
    assert sub_h == [{"role": "user", "content": [text("count the entries")]}]
    assert sub_system is not None and sub_system.startswith(GENERAL_PURPOSE.prompt) and str(tmp_path) in sub_system
    assert sub_tools == ["look", "note"]
    assert "Agent" in model.requests[0][1]
    # costs: 2 parent calls + 2 sub calls, each $0.01, all in the total
    assert r.model_calls == 2 and len(r.call_usage) == 2 and len(r.subagent_call_usage) == 2
    assert r.total_cost_usd == pytest.approx(0.04, abs=1e-12)
    assert r.total_cost_usd == pytest.approx(sum(c.cost_usd for c in [*r.call_usage, *r.subagent_call_usage]))
    sub_out = sum(c.output_tokens for c in r.subagent_call_usage)
    assert r.usage.output_tokens == sum(c.output_tokens for c in r.call_usage) + sub_out


def test_definition_limits_tools_and_the_subagent_cannot_call_agent(tmp_path: Path) -> None:
    log: list[str] = []
    reviewer = lw.AgentDefinition("reads only", "You review.", tools=["look", "Agent", "Task"])
    model = Recording(lw.ScriptedModel(two_level(
        [[agent_call("a1", "review it", "reviewer")], [text("ok")]],
        [[use("s1", "Agent", {"description": "d", "prompt": "deeper"}), use("s2", "note", {"n": 2})],
         [text("could not recurse")]],
    )))
    r = run_all(lw.AgentOptions(model=model, tools=make_tools(tmp_path, log), cwd=tmp_path,
                                agents={"reviewer": reviewer}))[-1]
    assert r.subtype == "success"
    system, tools, _ = model.requests[1]
    assert tools == ["look"] and system is not None and system.startswith("You review.")
    sub_results = model.requests[2][2][-1]["content"]
    assert [b["is_error"] for b in sub_results] == [True, True]
    assert "no such tool: Agent" in sub_results[0]["content"] and "no such tool: note" in sub_results[1]["content"]
    assert log == [] and not list(tmp_path.glob("note*"))
    assert r.messages[2]["content"][0]["content"] == "could not recurse"


def test_unknown_subagent_type_is_a_clear_error_and_the_parent_goes_on(tmp_path: Path) -> None:
    model = lw.ScriptedModel([[agent_call("a1", "x", "nope")], [text("fine")]])
    r = run_all(lw.AgentOptions(model=model, tools=[make_agent_tool({"reviewer": lw.AgentDefinition("r", "p")})],
                                cwd=tmp_path))[-1]
    res = r.messages[2]["content"][0]
    assert res["is_error"] is True
    assert res["content"] == "Unknown subagent_type 'nope'. Available agent types: general-purpose, reviewer."
    assert r.subtype == "success" and model.calls == 2 and holds_final(r.messages)


@pytest.mark.parametrize("sub_turn,subtype", [
    (RuntimeError("model exploded"), "error_during_execution"),
    ([use("s1", "look", {"n": 1})], "error_max_turns"),
])
def test_subagent_that_ends_in_error_gives_is_error_and_parent_goes_on(tmp_path: Path, sub_turn: Any,
                                                                       subtype: str) -> None:
    log: list[str] = []
    loop_def = lw.AgentDefinition("loops", "p", max_turns=2)
    model = lw.ScriptedModel(two_level([[agent_call("a1", "go", "loops")], [text("recovered")]],
                                       [sub_turn] * 10))
    msgs = run_all(lw.AgentOptions(model=model, tools=make_tools(tmp_path, log), cwd=tmp_path,
                                   agents={"loops": loop_def}))
    r = msgs[-1]
    res = r.messages[2]["content"][0]
    assert res["is_error"] is True and res["content"].startswith(f"Subagent 'loops' ended with {subtype}: ")
    assert r.subtype == "success" and r.result == "recovered" and holds_final(r.messages)
    if subtype == "error_max_turns":  # T=2: 3 sub calls, 2 tool-use turns
        assert len(r.subagent_call_usage) == 3 and log == ["look 1", "look 1"]
    else:
        assert "model exploded" in res["content"]


def test_separate_model_for_the_subagent_and_exact_costs(tmp_path: Path) -> None:
    sub_model = lw.ScriptedModel([[text("sub done")]], cost_per_call_usd=0.25, name="sub-model")
    parent = lw.ScriptedModel([[agent_call("a1", "x", "cheap")], [agent_call("a2", "y", "cheap")], [text("end")]],
                              cost_per_call_usd=0.125)
    agents = {"cheap": lw.AgentDefinition("d", "p", model=sub_model)}
    r = run_all(lw.AgentOptions(model=parent, tools=[], cwd=tmp_path, agents=agents))[-1]
    # the second Agent call finds the sub model's script over: an is_error result; a call that
    # raised gave no response, so it costs nothing
    assert r.messages[2]["content"][0]["content"] == "sub done"
    assert r.messages[4]["content"][0]["is_error"] is True
    assert [c.model for c in r.subagent_call_usage] == ["sub-model"]
    assert r.total_cost_usd == 3 * 0.125 + 0.25


def test_budget_is_shared_and_bounded_by_one_call(tmp_path: Path) -> None:
    """Each call costs 1. With B, every call (parent's or sub's) starts with S < B, so the
    final S < B + 1, and S >= B when the run stops for the budget."""
    for B in (0.5, 1.5, 2.5, 3.5, 4.25, 7.0):
        log: list[str] = []
        model = lw.ScriptedModel(two_level([[agent_call(f"a{k}", "spin")] for k in range(20)],
                                           [[use(f"s{k}", "look", {"n": k})] for k in range(20)]),
                                 cost_per_call_usd=1.0)
        r = run_all(lw.AgentOptions(model=model, tools=make_tools(tmp_path, log), cwd=tmp_path, max_budget_usd=B,
                                    agents={"x": GENERAL_PURPOSE}))[-1]
        assert r.subtype == "error_max_budget_usd", B
        assert B <= r.total_cost_usd < B + 1, (B, r.total_cost_usd)
        assert r.total_cost_usd == len(r.call_usage) + len(r.subagent_call_usage) == model.calls
        assert holds_final(r.messages)
        for m in r.messages[2::2]:  # every Agent call the parent made got its result
            assert m["content"][0]["type"] == "tool_result"


def test_budget_left_for_a_second_agent_call_in_one_turn(tmp_path: Path) -> None:
    """Two Agent calls in one response run one after the other; the first spends the rest of
    B, so the second is not run, and the parent stops right after its tools."""
    model = lw.ScriptedModel(two_level([[agent_call("a1", "one"), agent_call("a2", "two")], [text("never")]],
                                       [[use("s1", "look", {})]] * 10), cost_per_call_usd=1.0)
    log: list[str] = []
    r = run_all(lw.AgentOptions(model=model, tools=[*make_tools(tmp_path, log), make_agent_tool()], cwd=tmp_path,
                                max_budget_usd=2.5))[-1]
    first, second = r.messages[2]["content"]
    assert first["is_error"] and "error_max_budget_usd" in first["content"]
    assert second["is_error"] and second["content"].startswith("Not run: the budget")
    assert r.subtype == "error_max_budget_usd" and r.total_cost_usd == 3.0 and len(r.call_usage) == 1
    assert holds_final(r.messages)


@pytest.mark.parametrize("where", ["tool", "model"])
def test_interrupting_the_parent_during_a_subagent_cancels_it(tmp_path: Path, where: str) -> None:
    cancelled: list[str] = []

    async def block(x: dict[str, Any]) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append("tool")
            raise
        return "slept"

    slow = lw.Tool("slow", "waits", {"type": "object", "properties": {}}, block)
    sub_turns: list[Any] = ([[use("s1", "slow", {})], [text("never")]] if where == "tool"
                            else [[use("s1", "look", {})], {"content": [text("late")], "delay": 30}])
    model = lw.ScriptedModel(two_level([[agent_call("a1", "x")], [text("never")]], sub_turns),
                             cost_per_call_usd=0.5)
    control = lw.RunControl()
    log: list[str] = []
    options = lw.AgentOptions(model=model, tools=[*make_tools(tmp_path, log), slow], cwd=tmp_path,
                              agents={"x": GENERAL_PURPOSE})

    async def go() -> list[Any]:
        out = []
        async for m in lw.query(PARENT_PROMPT, options, control=control):
            out.append(m)
            trigger = (lw.AssistantMessage if where == "tool" else lw.UserMessage)
            if isinstance(m, trigger) and m.parent_tool_use_id == "a1":
                control.interrupt()  # the sub is now in its slow tool, or about to call its slow model
        return out

    msgs = asyncio.run(asyncio.wait_for(go(), 20))
    r = msgs[-1]
    assert r.subtype == "error_during_execution" and r.result == "interrupted by user"
    assert holds_final(r.messages) and len(r.messages) == 3
    assert r.messages[2]["content"][0] == {"type": "tool_result", "tool_use_id": "a1", "content": INTERRUPTED,
                                           "is_error": True}
    assert cancelled == (["tool"] if where == "tool" else [])
    assert r.model_calls == 1 and len(r.subagent_call_usage) == 1  # the interrupted model call gave nothing
    assert r.total_cost_usd == 0.5 * (1 + len(r.subagent_call_usage))


def test_subagent_stop_and_tool_hooks_fire_inside_the_subagent(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    hooks = lw.Hooks()

    @hooks.on("SubagentStop", matcher="general-purpose")
    def sub_stop(data: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(data)
        return None if data["stop_hook_active"] else {"decision": "block", "reason": "also say bye"}

    @hooks.on("SubagentStop", matcher="other-type")
    def never(data: dict[str, Any]) -> None:
        seen.append({"wrong": True})

    @hooks.on("PreToolUse", matcher="look")
    def pre(data: dict[str, Any]) -> None:
        seen.append(data)

    @hooks.on("Stop")
    def stop(data: dict[str, Any]) -> None:
        seen.append(data)

    model = lw.ScriptedModel(two_level([[agent_call("a1", "x")], [text("done")]],
                                       [[use("s1", "look", {})], [text("hello")], [text("bye")]]))
    log: list[str] = []
    r = run_all(lw.AgentOptions(model=model, tools=make_tools(tmp_path, log), cwd=tmp_path, hooks=hooks,
                                agents={"x": GENERAL_PURPOSE}))[-1]
    assert r.subtype == "success" and r.messages[2]["content"][0]["content"] == "bye"
    events = [d.get("hook_event_name") for d in seen]
    assert events == ["PreToolUse", "SubagentStop", "SubagentStop", "Stop"]
    pre_data, stop1, stop2, parent_stop = seen
    assert pre_data["agent_type"] == "general-purpose" and pre_data["session_id"] == r.session_id
    assert stop1["stop_hook_active"] is False and stop1["last_assistant_message"] == "hello"
    assert stop2["stop_hook_active"] is True and stop2["last_assistant_message"] == "bye"
    assert stop1["agent_id"] and stop1["agent_id"] != r.session_id
    assert "agent_type" not in parent_stop


def test_session_transcript_holds_only_the_parent(tmp_path: Path) -> None:
    model = lw.ScriptedModel(two_level([[agent_call("a1", "x")], [text("done")]],
                                       [[use("s1", "look", {})], [text("sub text")]]))
    log: list[str] = []
    sessions = tmp_path / "sessions"
    r = run_all(lw.AgentOptions(model=model, tools=make_tools(tmp_path, log), cwd=tmp_path, persist_session=True,
                                sessions_dir=sessions, agents={"x": GENERAL_PURPOSE}))[-1]
    assert r.subtype == "success"
    assert lw.get_session_messages(r.session_id, sessions) == r.messages
    # the subagent's own transcript sits beside the parent's (a sidechain), not listed as a session
    from loopwright.sessions import load_transcript

    parent_file = next(sessions.rglob(f"{r.session_id}.jsonl"))
    (side,) = (parent_file.parent / r.session_id / "subagents").glob("agent-*.jsonl")
    h = load_transcript(side).history
    assert [m["role"] for m in h] == ["user", "assistant", "user", "assistant"] and holds_final(h)
    assert h[0]["content"] == [text("x")] and h[-1]["content"] == [text("sub text")]
    assert [s.session_id for s in lw.list_sessions(tmp_path, sessions)] == [r.session_id]


def test_a_run_adds_the_tool_once_and_task_name(tmp_path: Path) -> None:
    from loopwright.assemble import build_run

    def run_tools(o: lw.AgentOptions) -> list[lw.Tool]:  # what a run built from the options offers
        return list(build_run(replace(o, model=lw.ScriptedModel([]), cwd=tmp_path), "x").deps.tools.values())

    d = lw.AgentDefinition("Reviews diffs", "You review.", tools=["Read"])
    o = lw.AgentOptions(agents={"reviewer": d})
    assert o.tools == []  # the options stay plain data: the run adds the tool
    tools = run_tools(o)
    assert [t.name for t in tools] == ["Agent"]
    assert "- reviewer: Reviews diffs (Tools: Read)" in tools[0].description
    assert "- general-purpose:" in tools[0].description
    mine = make_agent_tool({"reviewer": d}, name="Task")
    assert [t.name for t in run_tools(lw.AgentOptions(tools=[mine], agents={"reviewer": d}))] == ["Task"]
    assert run_tools(lw.AgentOptions()) == []
    as_dict = lw.AgentOptions(agents={"r": {"description": "Reads", "prompt": "p", "tools": ["Read"], "maxTurns": 3}})
    assert "- r: Reads (Tools: Read)" in run_tools(as_dict)[0].description
    with pytest.raises(ValueError, match="needs a \"description\""):
        lw.AgentOptions(agents={"r": {"prompt": "p"}})
    own_task = lw.Tool("Task", "the user's own task tracker", {"type": "object", "properties": {}}, lambda x: "t")
    assert [t.name for t in run_tools(lw.AgentOptions(tools=[own_task], agents={"reviewer": d}))] == ["Task", "Agent"]
    model = lw.ScriptedModel(two_level([[use("t1", "Task", {"description": "d", "prompt": "p"})], [text("ok")]],
                                       [[text("from task")]]))
    r = run_all(lw.AgentOptions(model=model, tools=[mine], cwd=tmp_path))[-1]
    assert r.messages[2]["content"][0]["content"] == "from task"


@pytest.mark.e2e
def test_cli_has_the_agent_tool_streams_and_renders_subagents(tmp_path: Path) -> None:
    import json
    import subprocess

    (tmp_path / "a.txt").write_text("hello")
    script = tmp_path / "s.json"
    script.write_text(json.dumps([
        [text("asking"), agent_call("a1", "list the text files", "finder")],
        [use("s1", "Glob", {"pattern": "*.txt"})],
        [text("one text file: a.txt")],
        [text("The helper found a.txt.")],
    ]))
    agents = json.dumps({"finder": {"description": "finds files", "prompt": "You find files.", "tools": ["Glob"]}})

    def cli(*extra: str) -> subprocess.CompletedProcess[str]:
        cmd = [*loopwright_cmd(), "-p", "find", "--model", f"scripted:{script}", "--no-session-persistence", "--setting-sources", "",
               "--cwd", str(tmp_path), "--agents", agents, *extra]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

    out = cli("--output-format", "stream-json", "--verbose")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert "Agent" in lines[0]["tools"]
    tagged = [(x["type"], x.get("parent_tool_use_id")) for x in lines]
    assert tagged[1:6] == [("assistant", None), ("assistant", "a1"), ("user", "a1"), ("assistant", "a1"),
                           ("user", None)]
    assert lines[-1]["result"] == "The helper found a.txt."
    assert lines[-1]["model_calls"] == 2 and lines[-1]["subagent_model_calls"] == 2
    text_run = cli()
    assert text_run.returncode == 0 and text_run.stdout == "The helper found a.txt.\n"
    assert "  ⏺ Agent(finder: do a sub task)\n      ⏺ Glob(*.txt)\n        ⎿ ✓ Glob: a.txt\n" in text_run.stderr
    assert "(+2 in subagents)" in text_run.stderr
    bad = cli("--agents", '{"finder": {}}')
    assert bad.returncode == 2 and "--agents: agent 'finder' needs a \"description\"" in bad.stderr


def test_subagent_denials_and_hook_errors_reach_the_parent_not_its_transcript(tmp_path: Path) -> None:
    hooks = lw.Hooks()

    @hooks.on("PreToolUse", matcher="look")
    def broken(data: dict[str, Any]) -> None:
        raise RuntimeError("hook bug")

    def gate(name: str, x: dict[str, Any]) -> lw.Allow | lw.Deny:
        return lw.Deny("no notes") if name == "note" else lw.Allow()

    model = lw.ScriptedModel(two_level([[agent_call("a1", "x")], [text("done")]],
                                       [[use("s1", "look", {}), use("s2", "note", {"n": 1})], [text("sub text")]]))
    log: list[str] = []
    sessions = tmp_path / "sessions"
    msgs = run_all(lw.AgentOptions(model=model, tools=make_tools(tmp_path, log), cwd=tmp_path, hooks=hooks,
                                   can_use_tool=gate, permission_mode="default", persist_session=True,
                                   sessions_dir=sessions, agents={"x": GENERAL_PURPOSE}))
    r = msgs[-1]
    assert r.subtype == "success" and log == []  # the broken PreToolUse hook fails closed
    assert [(d["tool_name"], d["tool_use_id"]) for d in r.permission_denials] == [("look", "s1"), ("note", "s2")]
    errors = [m for m in msgs if isinstance(m, lw.SystemMessage) and m.subtype == "hook_error"]
    assert len(errors) == 1 and errors[0].data["parent_tool_use_id"] == "a1" and "hook bug" in errors[0].data["message"]
    assert lw.get_session_messages(r.session_id, sessions) == r.messages
    transcript = next(sessions.rglob(f"{r.session_id}.jsonl")).read_text()
    assert "hook bug" not in transcript and "sub text" in transcript  # the result, not the sub's messages
    assert '"id":"s1"' not in transcript  # the sub's tool call is not in the parent's lines


def test_cancelling_the_consumer_during_a_subagent_propagates_and_keeps_the_transcript_paired(
        tmp_path: Path) -> None:
    cancelled: list[str] = []

    async def block(x: dict[str, Any]) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append("tool")
            raise
        return "slept"

    slow = lw.Tool("slow", "waits", {"type": "object", "properties": {}}, block)
    model = lw.ScriptedModel(two_level([[agent_call("a1", "x")], [text("never")]],
                                       [[use("s1", "slow", {})], [text("never")]]))
    sessions = tmp_path / "sessions"
    options = lw.AgentOptions(model=model, tools=[slow], cwd=tmp_path, persist_session=True, sessions_dir=sessions,
                              agents={"x": GENERAL_PURPOSE})
    seen: list[Any] = []

    async def consume() -> None:
        async for m in lw.query(PARENT_PROMPT, options):
            seen.append(m)
            if isinstance(m, lw.SystemMessage) and m.subtype == "init":
                sid.append(str(m.data["session_id"]))
            if isinstance(m, lw.AssistantMessage) and m.parent_tool_use_id == "a1":
                task = asyncio.current_task()
                assert task is not None
                task.cancel()  # as asyncio.timeout() would, while the subagent's tool runs

    sid: list[str] = []
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(consume())
    assert cancelled == ["tool"]
    assert not isinstance(seen[-1], lw.ResultMessage)
    h = lw.get_session_messages(sid[0], sessions)
    assert holds_final(h) and len(h) == 3
    assert h[2]["content"][0] == {"type": "tool_result", "tool_use_id": "a1", "content": INTERRUPTED, "is_error": True}


def test_budget_bound_with_random_costs() -> None:
    """Prop 5.4 with subagents: whatever the per-call costs and B, the run's total stays below
    B + (the largest single call), and a budget stop means the total reached B."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=60, deadline=None)
    @given(costs=st.lists(st.sampled_from([0.1, 0.25, 0.5, 1.0, 2.0]), min_size=40, max_size=40),
           B=st.sampled_from([0.3, 1.0, 2.2, 3.7, 6.0]), sub_steps=st.integers(0, 3), agents_per_turn=st.integers(1, 3))
    def prop(costs: list[float], B: float, sub_steps: int, agents_per_turn: int) -> None:
        parent = [[agent_call(f"a{k}_{j}", "go") for j in range(agents_per_turn)] for k in range(12)]
        sub = [[use(f"s{k}", "look", {})] for k in range(sub_steps)] + [[text("sub done")]]
        model = lw.ScriptedModel(two_level(parent, sub), cost_per_call_usd=lambda k: costs[(k - 1) % len(costs)])
        log: list[str] = []
        r = run_all(lw.AgentOptions(model=model, tools=make_tools(Path("."), log), max_budget_usd=B,
                                    agents={"x": GENERAL_PURPOSE}))[-1]
        paid = [c.cost_usd for c in [*r.call_usage, *r.subagent_call_usage]]
        assert len(paid) == model.calls
        assert r.total_cost_usd == pytest.approx(sum(paid))
        assert r.total_cost_usd < B + max(paid) + 1e-9
        if r.subtype == "error_max_budget_usd":
            assert r.total_cost_usd >= B - 1e-9
        assert holds_final(r.messages)

    prop()


def test_subagent_over_the_anthropic_api_on_the_loopback_server(tmp_path: Path) -> None:
    """The real Anthropic client against the project's loopback server (strict: a request
    whose history breaks Inv gets the API's 400): the parent and its subagent share one
    model client; every request is valid; the cost adds up from the reported usage."""
    pytest.importorskip("anthropic")
    from loopwright.testing import ScriptedServer

    def fn(h: list[dict[str, Any]]) -> Any:
        parent = first_text(h) == PARENT_PROMPT
        k = n_assistant(h)
        turns = ([[text("Delegating."), agent_call("toolu_a1", "count the entries")], [text("Sub says 0.")]] if parent
                 else [[use("toolu_s1", "look", {"n": 1})], [text("0 entries")]])
        return turns[k]

    log: list[str] = []
    with ScriptedServer(fn, min_cache_tokens=0) as srv:
        msgs = run_all(lw.AgentOptions(model="claude-sonnet-4-6", base_url=srv.url, api_key="test-key",
                                       tools=make_tools(tmp_path, log), cwd=tmp_path, max_budget_usd=5.0,
                                       agents={"x": GENERAL_PURPOSE}))
        loop = srv.loop_requests
    r = msgs[-1]
    assert r.subtype == "success" and r.result == "Sub says 0." and log == ["look 1"]
    assert [q.status for q in loop] == [200, 200, 200, 200]
    names = [[t["name"] for t in q.body["tools"]] for q in loop]
    assert names == [["look", "note", "Agent"], ["look", "note"], ["look", "note"], ["look", "note", "Agent"]]
    sub_system = loop[1].body["system"]
    sub_system = sub_system if isinstance(sub_system, str) else "".join(b["text"] for b in sub_system)
    assert sub_system.startswith(GENERAL_PURPOSE.prompt)
    assert [len(q.body["messages"]) for q in loop] == [1, 1, 3, 3]
    assert [m.parent_tool_use_id for m in msgs if isinstance(m, lw.AssistantMessage)] == \
        [None, "toolu_a1", "toolu_a1", None]
    paid = [c.cost_usd for c in [*r.call_usage, *r.subagent_call_usage]]
    assert len(r.subagent_call_usage) == 2 and all(c > 0 for c in paid)
    assert r.total_cost_usd == pytest.approx(sum(paid))
