"""The per-turn hot path's shortcuts answer as the general paths do: Inv's one-pass check
against a reference written from seed Def 3.3, the gate's judging of a tool no rule names
(kept per tool while the rule lists stay the same), and a turn's results and ids."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.gate import Allow, Deny, Permissions
from loopwright.invariant import InvariantChecker, InvariantViolation
from loopwright.workspace import ToolState

# --- Inv: the incremental one-pass checker against a reference ---------------------------


def reference_inv(h: list[dict[str, Any]]) -> bool:
    """Seed Def 3.3, written plainly: (P1) h is non-empty, starts and ends with a user message;
    (P2) every assistant message's tool_use ids are answered, in order, by the first blocks of
    the next message, a user message; (P3) no other tool_result anywhere."""
    if not h or h[0].get("role") != "user" or h[-1].get("role") != "user":
        return False
    pending: list[str] = []
    for m in h:
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if m.get("role") == "user":
            lead = blocks[:len(pending)]
            if len(lead) < len(pending) or [b.get("tool_use_id") if isinstance(b, dict) and b.get("type") == "tool_result"
                                            else None for b in lead] != pending:
                return False
            if len(results) != len(pending):
                return False
            pending = []
        elif m.get("role") == "assistant":
            if pending or results:
                return False
            pending = [b["id"] for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        else:
            return False
    return True


ids = st.sampled_from(["a", "b", "c"])
block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["x", "y"])),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "t", "input": {}}, ids),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "ok"}, ids),
    st.just("not a block"),
)
message = st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["user", "assistant", "system"]),
                    st.one_of(st.lists(block, max_size=4), st.just("plain text")))


@settings(max_examples=400, deadline=None)
@given(st.lists(message, max_size=7), st.integers(0, 7))
def test_incremental_inv_matches_the_reference(h: list[dict[str, Any]], cut: int) -> None:
    """Checked in two steps (a prefix, then the rest appended) or at once: Inv holds exactly
    when the reference says so."""
    def holds(check: InvariantChecker, upto: int) -> bool:
        try:
            check.check(h[:upto] if upto < len(h) else h)
        except InvariantViolation:
            return False
        return True

    expected = reference_inv(h)
    assert holds(InvariantChecker(), len(h)) is expected
    c = InvariantChecker()
    if 0 < cut < len(h) and holds(c, cut):  # a valid prefix verified first, then the whole
        assert holds(c, len(h)) is expected


# --- the gate: a tool no rule names ----------------------------------------------------------


def decide(p: Permissions, name: str, read_only: bool = False) -> Allow | Deny:
    return asyncio.run(p.decide(name, {}, read_only))


def test_a_tool_no_rule_names_runs_in_mode_none_and_is_refused_in_dont_ask() -> None:
    assert isinstance(decide(Permissions(), "noop"), Allow)
    v = Permissions().evaluate("noop", {})
    assert (v.kind, v.soft) == ("ask", True)
    refused = decide(Permissions(mode="dontAsk"), "noop")
    assert isinstance(refused, Deny) and "dontAsk" in refused.message
    assert Permissions(mode="dontAsk").evaluate("Probe", {}, read_only=True).kind == "allow"  # read-only, safe
    assert Permissions(mode="dontAsk").evaluate("mcp__s__probe", {}, read_only=True).kind == "ask"  # a server's claim
    assert Permissions(mode="plan").evaluate("noop", {}).kind == "deny"


def test_rules_that_name_the_tool_are_matched() -> None:
    assert isinstance(decide(Permissions(disallowed_tools=["noop"]), "noop"), Deny)
    assert isinstance(decide(Permissions(mode="dontAsk", allowed_tools=["noop"]), "noop"), Allow)
    assert isinstance(decide(Permissions(mode="dontAsk", allowed_tools=["mcp__s"]), "mcp__s__t"), Allow)
    assert Permissions(ask_tools=["no*"]).evaluate("noop", {}).reason == "ask rule no*"
    # The same gate asked about another tool first and then this one: each is known on its own.
    p = Permissions(disallowed_tools=["other"])
    assert isinstance(decide(p, "noop"), Allow) and isinstance(decide(p, "other"), Deny)


def test_a_grant_after_the_first_call_is_seen_and_a_copy_keeps_its_own() -> None:
    state = ToolState()
    p = Permissions(mode="dontAsk").for_state(state)
    assert isinstance(decide(p, "noop"), Deny)  # known per tool now: no rule names it
    child_state = ToolState()
    child = p.for_state(child_state)
    child_state.grants.add(["noop"])  # a skill the subagent loaded
    assert isinstance(decide(child, "noop"), Allow)
    assert isinstance(decide(p, "noop"), Deny)  # the parent's rules did not change
    state.grants.add(["noop"])
    assert isinstance(decide(p, "noop"), Allow)


# --- a turn: results and ids -------------------------------------------------------------------


def test_repeated_ids_in_one_turn_run_nothing_and_a_lone_call_runs() -> None:
    ran: list[str] = []

    async def tool(x: dict[str, Any]) -> str:
        ran.append("ran")
        return "ok"

    t = lw.Tool("t", "", {"type": "object", "properties": {}}, tool)
    use = {"type": "tool_use", "id": "u1", "name": "t", "input": {}}
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use, dict(use)]]), tools=[t]))
    assert r.subtype == "error_during_execution" and "repeats tool_use ids ['u1']" in (r.result or "")
    assert ran == []
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use], [{"type": "text", "text": "done"}]]), tools=[t]))
    assert r.subtype == "success" and ran == ["ran"]
    assert r.messages[2]["content"] == [{"type": "tool_result", "tool_use_id": "u1", "content": "ok"}]


# --- the request: built for each call, so a model that changed one changes no later call -----


class _RecordingModel:
    """Records what each call's request held when it arrived; on call `mutate_at` it changes
    the request it was given, as a careless wrapper might."""

    name = "recording"

    def __init__(self, turns: int, mutate_at: int) -> None:
        self.turns, self.mutate_at = turns, mutate_at
        self.seen: list[tuple[int, str | None, dict[str, Any], int, int | None]] = []

    async def stream(self, request: Any) -> Any:
        k = len(self.seen) + 1
        self.seen.append((id(request), request.system, dict(request.extra), len(request.messages), request.max_tokens))
        if k == self.mutate_at:
            request.system = (request.system or "") + " (changed by the model)"
            request.extra["stray"] = True
            request.max_tokens = 7
        blocks: list[Any] = ([lw.ToolUseBlock(f"u{k}", "t", {})] if k <= self.turns else [lw.TextBlock("done")])
        yield lw.ModelResponse(blocks, "tool_use" if k <= self.turns else "end_turn", lw.Usage(1, 1), self.name, 0.0)


def test_a_request_a_model_changed_reaches_no_later_call() -> None:
    async def tool(x: dict[str, Any]) -> str:
        return "ok"

    t = lw.Tool("t", "", {"type": "object", "properties": {}}, tool)
    m = _RecordingModel(turns=4, mutate_at=2)
    r = lw.run("go", lw.AgentOptions(model=m, tools=[t], system_prompt="sys", max_tokens=100))
    assert r.subtype == "success" and r.num_turns == 4
    for k, (_, system, extra, n, max_tokens) in enumerate(m.seen):
        assert system == "sys" and extra == {} and max_tokens == 100, k  # never what the model wrote
        assert n == 1 + 2 * k  # the live history: the prompt, then a call and its results a turn


# --- a call's context: its own, for a handler that takes one ---------------------------------


def test_a_handler_that_takes_a_context_gets_its_own_and_the_run_s_is_untouched() -> None:
    """Read-only calls side by side and a lone call each see their own tool_use_id and siblings
    (a context is made per call only for a handler that takes one: Tool.takes_context)."""
    seen: list[tuple[str, str, int]] = []

    async def probe(x: dict[str, Any], ctx: lw.ToolContext) -> str:
        await asyncio.sleep(0)  # side by side: each still reads its own
        seen.append((x["tag"], ctx.tool_use_id, ctx.siblings))
        return "ok"

    async def plain(x: dict[str, Any]) -> str:
        return "ok"

    schema = {"type": "object", "properties": {"tag": {"type": "string"}}}
    ro = lw.Tool("probe", "", schema, probe, read_only=True)
    lone = lw.Tool("lone", "", schema, probe)
    other = lw.Tool("plain", "", schema, plain)
    assert (ro.takes_context, other.takes_context) == (True, False)
    turn1 = [{"type": "tool_use", "id": f"r{i}", "name": "probe", "input": {"tag": f"r{i}"}} for i in range(3)]
    turn2 = [{"type": "tool_use", "id": "l1", "name": "lone", "input": {"tag": "l1"}},
             {"type": "tool_use", "id": "p1", "name": "plain", "input": {}}]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([turn1, turn2, [{"type": "text", "text": "done"}]]),
                                     tools=[ro, lone, other]))
    assert r.subtype == "success"
    assert sorted(seen) == [("l1", "l1", 1), ("r0", "r0", 3), ("r1", "r1", 3), ("r2", "r2", 3)]
