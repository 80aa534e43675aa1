"""Usage limits (limits.py, pydantic-ai's UsageLimits): each cap stops the run with its own subtype,
before the request where its size is known, after the response for output tokens; the bounds
of limits.py's docstring as hypothesis properties over random runs (as Prop 5.4's in
test_properties.py), with Inv and Thm 4.1 holding beside them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.context import AutoCompactor
from loopwright.invariant import holds_final
from loopwright.loop import NO_OUTPUT_REMINDER
from tests.helpers import text
from tests.loop.test_properties import make_tools

LIMITS = ("request_limit", "input_tokens_limit", "output_tokens_limit", "total_tokens_limit")


def use(uid: str, k: str = "a") -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": "get", "input": {"k": k}}


def test_request_limit_stops_before_the_request() -> None:
    m = lw.ScriptedModel([[use("a")], [use("b")], [use("c")], [text("done")]])
    r = lw.run("x", lw.AgentOptions(model=m, tools=make_tools({}), usage_limits=lw.UsageLimits(request_limit=2)))
    assert r.subtype == "error_max_requests" and r.is_error and m.calls == 2 and r.model_calls == 2
    assert "request_limit=2" in (r.result or "") and holds_final(r.messages)


def test_input_tokens_limit_stops_before_a_request_that_would_pass_it() -> None:
    m = lw.ScriptedModel([[use("a")], [use("b")], [text("done")]])
    free = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel([[use("a")], [use("b")], [text("done")]]),
                                       tools=make_tools({})))
    n = [c.input_tokens for c in free.call_usage]
    # room for the first two requests' input, not the third's
    r = lw.run("x", lw.AgentOptions(model=m, tools=make_tools({}),
                                    usage_limits=lw.UsageLimits(input_tokens_limit=n[0] + n[1] + n[2] - 1)))
    assert r.subtype == "error_max_input_tokens" and m.calls == 2, "the third request was never sent"
    assert r.usage.total_input_tokens == n[0] + n[1] <= n[0] + n[1] + n[2] - 1


def test_output_tokens_limit_is_checked_after_the_response_which_is_not_kept() -> None:
    m = lw.ScriptedModel([[use("a")], [text("a long answer " * 20)]])
    r = lw.run("x", lw.AgentOptions(model=m, tools=make_tools({}), usage_limits=lw.UsageLimits(output_tokens_limit=30)))
    assert r.subtype == "error_max_output_tokens" and m.calls == 2
    assert r.usage.output_tokens > 30 and "a long answer" not in json.dumps(r.messages), "the answer over the cap"
    assert holds_final(r.messages)


def test_total_tokens_limit() -> None:
    m = lw.ScriptedModel([[use("a")], [use("b")], [text("done")]])
    r = lw.run("x", lw.AgentOptions(model=m, tools=make_tools({}), usage_limits=lw.UsageLimits(total_tokens_limit=150)))
    assert r.subtype == "error_max_total_tokens"
    assert r.usage.total_input_tokens + r.usage.output_tokens <= 150 + r.call_usage[-1].output_tokens


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="request_limit must be a non-negative integer"):
        lw.UsageLimits(request_limit=-1)
    with pytest.raises(TypeError, match="usage_limits must be a UsageLimits"):
        lw.AgentOptions(usage_limits={"request_limit": 3})  # type: ignore[arg-type]


response_st = st.fixed_dictionaries({
    "text": st.text(max_size=120),
    "calls": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
    "big": st.booleans(),  # a tool result of a few hundred tokens
})
limit_st = st.one_of(st.none(), st.integers(0, 3000))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(response_st, min_size=1, max_size=10), T=st.one_of(st.none(), st.integers(0, 8)),
       requests=st.one_of(st.none(), st.integers(0, 10)), input_limit=limit_st, output_limit=limit_st,
       total_limit=limit_st)
@example(script=[{"text": "", "calls": [], "big": False}], T=0, requests=None, input_limit=None, output_limit=None,
         total_limit=None)  # an empty answer at T = 0: the ask after it is a call beyond T + 1 (found by the suite)
def test_each_cap_keeps_its_bound(script: list[dict[str, Any]], T: int | None, requests: int | None,
                                  input_limit: int | None, output_limit: int | None, total_limit: int | None) -> None:
    env = {"a": "1", "b": "x" * 1500, "c": "3"}
    ids = iter(range(10_000))

    def model(h: list[dict[str, Any]]) -> Any:
        k = sum(1 for m in h if m["role"] == "assistant")
        if k >= len(script):
            return [text("done")]
        spec = script[k]
        content = [text(spec["text"])] if spec["text"] else []
        keys = [("b" if spec["big"] else key) for key in spec["calls"]]
        return content + [use(f"t{next(ids)}", key) for key in keys]

    limits = lw.UsageLimits(requests, input_limit, output_limit, total_limit)
    tools = make_tools(env)
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(model), tools=tools, max_turns=T, usage_limits=limits))
    assert holds_final(r.messages)
    if T is not None:  # Thm 4.1 beside the caps (+ the bounded asks after an empty answer: continuations.after_answer)
        reminders = sum(1 for m in r.messages if m["content"] == [{"type": "text", "text": NO_OUTPUT_REMINDER}])
        assert r.model_calls <= T + 1 + reminders and r.num_turns <= T
    calls, inp, out = r.model_calls, r.usage.total_input_tokens, r.usage.output_tokens
    o_last = r.call_usage[-1].output_tokens if r.call_usage else 0
    # The first request's input is an estimate (the forecast is exact after it: Prop 5.2): its error
    first = AutoCompactor.forecast([], [r.messages[0]], len(json.dumps([t.definition() for t in tools])))
    e1 = max(0, r.call_usage[0].input_tokens - first) if r.call_usage and calls == 1 else 0
    if requests is not None:
        assert calls <= requests
        if r.subtype == "error_max_requests":
            assert calls == requests
    if input_limit is not None:
        assert inp <= input_limit + e1
    if output_limit is not None:
        assert out < output_limit + o_last or out == output_limit == 0
        if r.subtype == "success":
            assert out <= output_limit
    if total_limit is not None:
        assert inp + out <= total_limit + o_last + e1
    stops = {"error_max_requests": requests, "error_max_input_tokens": input_limit,
             "error_max_output_tokens": output_limit, "error_max_total_tokens": total_limit}
    if r.subtype in stops:
        assert stops[r.subtype] is not None, "a run stops only for a cap it was given"
    if r.subtype == "error_max_output_tokens":
        assert output_limit is not None and out >= output_limit


def test_compaction_summaries_count_as_requests_and_never_pass_the_request_limit(tmp_path: Any) -> None:
    """A compaction's summary call is a request: none starts once the limit is reached (checked
    before the compaction too), so requests <= R holds with automatic compaction, for R just
    before each summary call of an unlimited run."""
    from tests.execute.test_context import Agent, opts

    class Ordered(Agent):
        def __init__(self) -> None:
            super().__init__(turns=14)
            self.order: list[str] = []

        def __call__(self, h: list[dict[str, Any]]) -> Any:
            out = super().__call__(h)
            self.order.append("summary" if self.last_was_summary else "loop")
            return out

    free = Ordered()
    lw.run("look up 14 things", opts(free, tmp_path))
    before_summary = [k for k, kind in enumerate(free.order) if kind == "summary"]
    assert before_summary, "the unlimited run compacts"
    for limit in before_summary:  # R requests made, the next one would be a summary
        agent = Ordered()
        r = lw.run("look up 14 things", opts(agent, tmp_path, usage_limits=lw.UsageLimits(request_limit=limit)))
        assert len(agent.order) == limit and r.subtype == "error_max_requests"
        assert r.model_calls + len(agent.summary_requests) == limit
