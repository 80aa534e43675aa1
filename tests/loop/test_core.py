"""The core loop's behaviour on good and bad input (seed Def 3.1, SPEC §1-§5)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Annotated, Any

import pydantic
import pytest
from typing_extensions import TypedDict  # pydantic needs it for TypedDict on Python 3.11

import loopwright as lw
from loopwright.blocks import WireFormatError, block_from_wire, blocks_from_wire
from loopwright.history import History
from loopwright.invariant import InvariantChecker, InvariantViolation, holds, holds_final
from tests.helpers import first_tool_result, text, use


@lw.tool(read_only=True)
def echo(value: Annotated[str, "what to echo"]) -> str:
    """Echo the value back."""
    return value


def opts(turns: Any, **kw: Any) -> lw.AgentOptions:
    return lw.AgentOptions(model=lw.ScriptedModel(turns), tools=kw.pop("tools", [echo]), **kw)


# --- wire format -----------------------------------------------------------------------------

WIRE = [
    {"type": "text", "text": "hi", "citations": [{"type": "char_location", "cited_text": "x"}]},
    {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"value": "a"}},
    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"},
    {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "b"}], "is_error": True},
    {"type": "thinking", "thinking": "hmm", "signature": "sig=="},
    {"type": "redacted_thinking", "data": "opaque"},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
    {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}},
    {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": []},
]


@pytest.mark.parametrize("wire", WIRE, ids=[w["type"] for w in WIRE])
def test_blocks_round_trip_exactly(wire: dict[str, Any]) -> None:
    assert block_from_wire(wire).to_wire() == wire


def test_malformed_blocks_raise_wire_format_error() -> None:
    for bad in [{"type": "text"}, {"type": "tool_use", "id": 1, "name": "x"}, "text", {"text": "no type"}]:
        with pytest.raises(WireFormatError):
            block_from_wire(bad)
    assert [b.to_wire() for b in blocks_from_wire("plain")] == [text("plain")]


# --- invariant -------------------------------------------------------------------------------

def u(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def a(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def res(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": ""}


@pytest.mark.parametrize("h,ok", [
    ([u(text("p"))], True),
    ([u(text("p")), a(use("1", "x"), use("2", "x")), u(res("1"), res("2"), text("queued"))], True),
    ([a(text("x"))], False),                                                  # P1 first
    ([u(text("p")), a(text("x"))], False),                                    # P1 last
    ([u(text("p")), a(use("1", "x"), use("2", "x")), u(res("2"), res("1"))], False),  # P2 order
    ([u(text("p")), a(use("1", "x")), u(text("before"), res("1"))], False),   # P2 text first
    ([u(text("p")), a(use("1", "x")), u()], False),                           # P2 missing
    ([u(text("p"), res("9"))], False),                                        # P3 stray
    ([u(text("p")), a(use("1", "x")), u(res("1"), res("1"))], False),         # P3 extra
    ([u(text("p")), a(use("1", "x")), a(text("y")), u(text("z"))], False),    # P2 not followed by user
])
def test_invariant_cases(h: list[dict[str, Any]], ok: bool) -> None:
    assert holds(h) is ok


def test_incremental_checker_only_looks_at_new_messages_of_a_history() -> None:
    h = History([u(text("p"))])
    c = InvariantChecker()
    c.check(h)
    h += [a(use("1", "x")), u(res("1"))]
    c.check(h)
    # an already-verified message cannot be corrupted in place: the History refuses it, so the
    # incremental check is sound
    with pytest.raises(TypeError, match="append-only"):
        h[1]["content"].append(use("2", "x"))
    # a named rewrite bumps the generation: the checker starts over and sees a bad message
    h.replace_last(u(text("not an answer")))
    with pytest.raises(InvariantViolation):
        c.check(h)


def test_checker_checks_a_plain_list_whole() -> None:
    h = [u(text("p")), a(use("1", "x")), u(res("1"))]
    c = InvariantChecker()
    c.check(h)
    h[1]["content"].append(use("2", "x"))  # (a plain list: nothing refuses this, so nothing is remembered)
    with pytest.raises(InvariantViolation):
        c.check(h)


# --- bad input gets a clear is_error result ----------------------------------------------------

def test_tool_exception_becomes_is_error_and_loop_goes_on() -> None:
    @lw.tool
    def boom() -> str:
        """Fail."""
        raise KeyError("missing")

    r = lw.run("p", opts([[use("1", "boom")], [text("ok")]], tools=[boom]))
    assert r.subtype == "success"
    result = r.messages[2]["content"][0]
    assert result["is_error"] is True and result["content"] == "KeyError: 'missing'"


def test_unknown_tool_and_schema_failure_do_not_run_handler() -> None:
    calls: list[str] = []

    @lw.tool
    def add(x: int, y: int) -> str:
        """Add."""
        calls.append("ran")
        return str(x + y)

    r = lw.run("p", opts([[use("1", "nope"), use("2", "add", {"x": "one", "y": 2}), use("3", "add", {"x": 1})],
                          [text("done")]], tools=[add]))
    r1, r2, r3 = r.messages[2]["content"]
    assert r1["is_error"] and "no such tool: nope" in r1["content"] and "add" in r1["content"]
    assert r2["is_error"] and "x: 'one' is not of type 'integer'" in r2["content"]
    assert r3["is_error"] and "'y' is a required property" in r3["content"]
    assert calls == []


def test_duplicate_tool_use_ids_run_nothing() -> None:
    ran: list[int] = []

    @lw.tool
    def mark() -> str:
        """Mark."""
        ran.append(1)
        return "x"

    r = lw.run("p", opts([[use("dup", "mark"), use("dup", "mark")]], tools=[mark]))
    assert r.subtype == "error_during_execution" and "repeats tool_use ids ['dup']" in (r.result or "")
    assert ran == [] and len(r.messages) == 1 and holds(r.messages)


def test_max_tokens_runs_the_complete_calls_and_asks_to_reissue_the_cut_one() -> None:
    ran: list[str] = []

    @lw.tool
    def mark(v: str) -> str:
        """Mark."""
        ran.append(v)
        return v

    turns = [{"content": [text("writing"), use("1", "mark", {"v": "whole"}),
                          {"type": "tool_use", "id": "2", "name": "mark", "input": '{"v": "tr'}],  # the text, cut short
                "stop_reason": "max_tokens"},
             [text("done")]]
    r = lw.run("p", opts(turns, tools=[mark]))
    assert r.subtype == "success" and ran == ["whole"] and r.num_turns == 1
    ok, cut = r.messages[2]["content"]
    assert not ok.get("is_error") and cut["is_error"] and "Re-issue" in cut["content"]


def test_pause_turn_is_continued_as_a_model_call_not_a_turn() -> None:
    seen: list[list[dict[str, Any]]] = []

    def model(h: list[dict[str, Any]]) -> dict[str, Any]:
        seen.append([dict(m) for m in h])
        if len(seen) == 1:
            return {"content": [text("searching…")], "stop_reason": "pause_turn"}
        return {"content": [text(" found it")], "stop_reason": "end_turn"}

    r = lw.run("p", lw.AgentOptions(model=lw.ScriptedModel(model)))
    assert r.subtype == "success" and r.model_calls == 2 and r.num_turns == 0
    assert seen[1][-1] == a(text("searching…"))  # the paused content is sent back
    assert r.messages[-1] == a(text("searching…"), text(" found it"))
    assert r.result == "searching… found it"


def test_pause_turn_is_bounded() -> None:
    r = lw.run("p", lw.AgentOptions(model=lw.ScriptedModel(lambda h: {"content": [text(".")], "stop_reason": "pause_turn"}),
                                    max_pause_continuations=2))
    assert r.subtype == "error_during_execution" and r.model_calls == 3 and "paused" in (r.result or "")
    assert r.messages == [u(text("p"))]


def test_model_exception_keeps_history() -> None:
    r = lw.run("p", opts([[use("1", "echo", {"value": "v"})], RuntimeError("connection reset")]))
    assert r.subtype == "error_during_execution" and r.is_error
    assert r.result == "RuntimeError: connection reset"
    assert len(r.messages) == 3 and holds(r.messages)


def test_unknown_stop_reason_is_a_clean_error() -> None:
    r = lw.run("p", opts([{"content": [text("x")], "stop_reason": "weird"}]))
    assert r.subtype == "error_during_execution" and "unknown stop_reason 'weird'" in (r.result or "")


def test_budget_with_unknown_price_is_rejected_up_front() -> None:
    class Anon:
        name = "mystery-model"

        async def stream(self, request: Any) -> Any:
            raise AssertionError("never called")
            yield  # pragma: no cover

    with pytest.raises(ValueError, match="price of model 'mystery-model' is unknown"):
        lw.run("p", lw.AgentOptions(model=Anon(), max_budget_usd=1.0))


def test_price_table_is_used_and_overridable() -> None:
    turn = {"content": [text("hi")], "usage": {"input_tokens": 1_000_000, "output_tokens": 1_000_000,
                                               "cache_creation_input_tokens": 1_000_000,
                                               "cache_read_input_tokens": 1_000_000}}

    class NoOwnCost(lw.ScriptedModel):
        has_own_cost = False

        async def stream(self, request: Any) -> Any:
            async for ev in super().stream(request):
                if isinstance(ev, lw.ModelResponse):
                    ev.cost_usd = None
                yield ev

    r = lw.run("p", lw.AgentOptions(model=NoOwnCost([turn], name="claude-sonnet-4-5-20250929")))
    assert r.total_cost_usd == pytest.approx(3 + 15 + 3.75 + 0.30)
    r = lw.run("p", lw.AgentOptions(model=NoOwnCost([turn], name="my-local"),
                                    prices={"my-local": lw.Price.from_input(1, 2)}))
    assert r.total_cost_usd == pytest.approx(1 + 2 + 1.25 + 0.1)


def test_gate_deny_interrupt_ends_run_with_valid_history() -> None:
    r = lw.run("p", opts([[use("1", "echo", {"value": "a"}), use("2", "echo", {"value": "b"})], [text("x")]],
                         can_use_tool=lambda n, x: lw.Deny("stop right there", interrupt=True)))
    assert r.subtype == "error_during_execution" and r.result == "stop right there"
    assert [b["content"] for b in r.messages[2]["content"]] == ["stop right there", "Not run: an earlier call in this turn stopped the run."]
    assert holds(r.messages) and r.model_calls == 1


def test_allow_with_updated_input_and_async_gate() -> None:
    async def gate(name: str, x: dict[str, Any]) -> lw.Allow:
        await asyncio.sleep(0)
        return lw.Allow(updated_input={"value": x["value"].upper()})

    r = lw.run("p", opts([[use("1", "echo", {"value": "abc"})], [text("x")]], can_use_tool=gate))
    assert r.messages[2]["content"][0]["content"] == "ABC"


def test_queued_text_follows_tool_results_in_same_turn() -> None:
    control = lw.RunControl()

    @lw.tool
    async def slow() -> str:
        """Slow."""
        control.send("also check the docs")
        return "done"

    async def go() -> list[Any]:
        return [m async for m in lw.query("p", opts([[use("1", "slow")], [text("ok")]], tools=[slow]), control=control)]

    msgs = asyncio.run(go())
    r = msgs[-1]
    assert r.messages[2]["content"] == [{"type": "tool_result", "tool_use_id": "1", "content": "done"}, text("also check the docs")]
    assert holds_final(r.messages)


def test_interrupt_cancels_running_tools_with_is_error_results() -> None:
    control = lw.RunControl()
    started = asyncio.Event()

    @lw.tool
    async def hang() -> str:
        """Hang."""
        started.set()
        await asyncio.sleep(60)
        return "never"

    async def go() -> lw.ResultMessage:
        async def interrupter() -> None:
            await started.wait()
            control.interrupt()

        t = asyncio.ensure_future(interrupter())
        msgs = [m async for m in lw.query("p", opts([[use("1", "echo", {"value": "v"}), use("2", "hang")], [text("x")]],
                                                     tools=[echo, hang]), control=control)]
        await t
        return msgs[-1]  # type: ignore[return-value]

    r = asyncio.run(go())
    assert r.subtype == "error_during_execution" and r.result == "interrupted by user"
    results = r.messages[2]["content"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "1", "content": "v"}
    assert results[1]["is_error"] and "Interrupted by user" in results[1]["content"]
    assert holds(r.messages)


# --- @tool ------------------------------------------------------------------------------------

class Point(pydantic.BaseModel):
    x: int
    y: int = 0


class Opts(TypedDict):
    verbose: bool


def test_tool_decorator_builds_schema_from_hints() -> None:
    @lw.tool(name="move", read_only=True)
    async def move_it(p: Point, label: Annotated[str, "a label"], opts: Opts, n: int = 3) -> str:
        """Move a point.

        More words."""
        return f"{p.x},{p.y} {label} {opts['verbose']} {n}"

    assert move_it.name == "move" and move_it.read_only
    assert move_it.description == "Move a point.\n\nMore words."
    s = move_it.input_schema
    assert s["type"] == "object" and set(s["required"]) == {"p", "label", "opts"}
    assert s["properties"]["label"] == {"description": "a label", "type": "string"}
    assert s["properties"]["n"]["default"] == 3
    r = lw.run("p", opts([[use("1", "move", {"p": {"x": 1}, "label": "L", "opts": {"verbose": True}})], [text("x")]],
                         tools=[move_it]))
    assert r.messages[2]["content"][0]["content"] == "1,0 L True 3"


def test_tool_handler_may_return_blocks_and_take_context(tmp_path: Any) -> None:
    def handler(x: dict[str, Any], ctx: lw.ToolContext) -> list[dict[str, Any]]:
        return [text(f"cwd={ctx.cwd.name} id={ctx.tool_use_id}")]

    t = lw.Tool("where", "where am I", {"type": "object", "properties": {}}, handler)
    r = lw.run("p", opts([[use("t1", "where")], [text("x")]], tools=[t], cwd=tmp_path))
    assert r.messages[2]["content"][0]["content"] == [text(f"cwd={tmp_path.name} id=t1")]


def test_tool_validation_of_definitions() -> None:
    for bad in ("bad name", "ends\n", "", "x" * 65, "naïve", 7):  # (a trailing newline: not what the API takes)
        with pytest.raises(ValueError, match="tool name"):
            lw.Tool(bad, "", {"type": "object"}, lambda x: "")  # type: ignore[arg-type]
    assert lw.Tool("x" * 64, "", {"type": "object"}, lambda x: "").name == "x" * 64
    assert lw.Tool("mcp__srv-1__do_it", "", {"type": "object"}, lambda x: "").name == "mcp__srv-1__do_it"
    with pytest.raises(ValueError, match="type 'object'"):
        lw.Tool("ok", "", {"type": "string"}, lambda x: "")
    with pytest.raises(ValueError, match="duplicate tool names"):
        lw.AgentOptions(tools=[echo, echo])
    with pytest.raises(ValueError, match="max_turns"):
        lw.AgentOptions(max_turns=-1)


@pytest.mark.e2e
def test_import_loopwright_imports_no_provider_sdk() -> None:
    code = ("import sys, loopwright; bad = [m for m in ('anthropic', 'openai', 'httpx', 'pydantic', 'jsonschema') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_price_lookup_longest_prefix_and_tiers() -> None:
    from loopwright.models.catalog import price_for

    assert price_for("claude-sonnet-5-5").cache_read == 0.10  # type: ignore[union-attr]
    assert price_for("claude-sonnet-5").cache_read == 0.20  # type: ignore[union-attr]
    assert price_for("claude-opus-4-1-20250805").input == 15  # type: ignore[union-attr]
    assert price_for("claude-opus-4-5-20251101").input == 5  # type: ignore[union-attr]
    assert price_for("claude-opus-4.6").input == 5  # type: ignore[union-attr]
    assert price_for("gpt-unknown") is None
    haiku = price_for("claude-haiku-5-5")
    assert haiku is not None
    small = lw.Usage(input_tokens=100_000, output_tokens=1_000_000)
    big = lw.Usage(input_tokens=100_001, output_tokens=1_000_000)
    assert haiku.cost(small) == pytest.approx(0.01 + 0.50)
    assert haiku.cost(big) == pytest.approx(100_001 * 0.50 / 1e6 + 2.50)
    # 1-hour cache writes are priced at 2x input, 5-minute ones at 1.25x
    u = lw.Usage(cache_creation_input_tokens=2_000_000, cache_creation_1h_input_tokens=1_000_000)
    assert price_for("claude-sonnet-4-6").cost(u) == pytest.approx(3.75 + 6.0)  # type: ignore[union-attr]


def test_a_dict_result_reaches_the_model_as_json() -> None:
    @lw.tool
    def info() -> dict[str, Any]:
        """Info."""
        return {"ok": True, "n": None, "name": "東京"}

    r = lw.run("p", opts([[use("1", "info")], [text("x")]], tools=[info]))
    assert r.messages[2]["content"][0]["content"] == '{"ok": true, "n": null, "name": "東京"}'


# --- a handler's odd return values ----------------------------------------------------------------

def _run_returning(value: Any) -> lw.ResultMessage:
    t = lw.Tool("t", "returns a fixed value", {"type": "object", "properties": {}}, lambda x: value)
    return lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "t")], [text("done")]]), tools=[t]))


def test_handler_returning_a_list_of_strings_gives_text_blocks() -> None:
    # Before: AttributeError 'str' has no to_wire, the run ended with an assistant tool_use
    # and no result in result.messages (Inv broken).
    r = _run_returning(["first", "second"])
    assert r.subtype == "success" and holds_final(r.messages)
    assert first_tool_result(r)["content"] == [text("first"), text("second")]


@pytest.mark.parametrize("value", [
    lw.ToolOutput([object()]),  # type: ignore[list-item]
    [{"type": "tool_result", "tool_use_id": "u1", "content": "nested"}],
    [{"type": "tool_use", "id": "x", "name": "t", "input": {}}],
    [{"type": "thinking", "thinking": "hm", "signature": "s"}],
])
def test_handler_returning_blocks_that_cannot_be_a_result_is_an_error_result(value: Any) -> None:
    r = _run_returning(value)
    assert r.subtype == "success" and holds_final(r.messages)
    block = first_tool_result(r)
    assert block["is_error"] is True and "malformed content" in block["content"]


def test_tool_output_keeps_its_error_flag_with_list_content() -> None:
    r = _run_returning(lw.ToolOutput(["bad thing"], is_error=True))  # type: ignore[list-item]
    block = first_tool_result(r)
    assert block["is_error"] is True and block["content"] == [text("bad thing")]



# --- a tool with an invalid schema ----------------------------------------------------------------

def test_a_tool_with_an_invalid_schema_gives_an_error_result_not_a_dead_run() -> None:
    # Before: jsonschema's SchemaError escaped Tool.call and the run ended with
    # error_during_execution, the whole multi-line schema dump as its message.
    bad = lw.Tool("b", "broken schema", {"type": "object", "properties": {"x": {"type": "nonsense"}}}, lambda x: "r")
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "b")], [text("done")]]), tools=[bad]))
    assert r.subtype == "success"
    block = first_tool_result(r)
    assert block["is_error"] is True and "input_schema is invalid" in block["content"]



# --- the budget rule and paused turns -------------------------------------------------------------

@pytest.mark.parametrize("budget", [1.0, 2.0, 2.5])
def test_a_paused_turn_is_not_continued_past_the_budget(budget: float) -> None:
    # Before: pause_turn continuations were called whatever the spend: with B = 1 and $1 per
    # call the run spent $4 (Prop 5.4 promises spent < B + c_max = 2).
    paused: list[Any] = [{"content": [text(f"part {i}")], "stop_reason": "pause_turn"} for i in range(3)]
    turns: list[Any] = [*paused, {"content": [use("u1", "t")], "stop_reason": "tool_use"}, [text("done")]]
    ran: list[str] = []

    def record(x: dict[str, Any]) -> str:
        ran.append("t")
        return "ran"

    t = lw.Tool("t", "records", {"type": "object", "properties": {}}, record)
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns, cost_per_call_usd=1.0), tools=[t],
                                     max_budget_usd=budget, max_pause_continuations=5))
    assert r.subtype == "error_max_budget_usd"
    assert budget <= r.total_cost_usd < budget + 1.0
    assert ran == [] and holds(r.messages) and r.messages == [{"role": "user", "content": [text("go")]}]

