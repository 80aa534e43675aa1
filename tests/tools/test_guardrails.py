"""Output guardrails (guardrails.py, loop/guarded.py): a function on the final answer rejects it
with a reason, the model reads the reason in a bounded reminder turn; text and structured
answers alike; the run's deps reach the guardrail."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.invariant import holds_final
from tests.helpers import text
from tests.loop.test_properties import make_tools


class Seen:
    def __init__(self, turns: list[Any]) -> None:
        self.turns, self.requests = iter(turns), []  # type: list[Any]

    def __call__(self, h: list[dict[str, Any]]) -> Any:
        self.requests.append(json.loads(json.dumps(h)))
        return next(self.turns)


def no_sorry(answer: str) -> None:
    if "sorry" in answer.lower():
        raise lw.ModelRetry("do not apologise")


def test_a_rejected_text_answer_gets_a_reminder_with_the_reason() -> None:
    m = Seen([[text("Sorry, 4")], [text("4")]])
    r = lw.run("2+2?", lw.AgentOptions(model=lw.ScriptedModel(m), output_guardrails=[no_sorry]))
    assert r.subtype == "success" and r.result == "4" and r.output == "4" and r.model_calls == 2
    last = m.requests[1][-1]
    assert last["role"] == "user" and "rejected: do not apologise" in last["content"][0]["text"]
    assert m.requests[1][-2]["content"][0]["text"] == "Sorry, 4", "the rejected answer stays in the history"


def test_rejections_are_bounded_by_output_retries() -> None:
    m = Seen([[text("sorry")]] * 10)
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_guardrails=[no_sorry], output_retries=1))
    assert r.subtype == "error_output_rejected" and r.is_error and r.model_calls == 2
    assert "do not apologise" in r.errors[0] and r.output is None
    m = Seen([[text("sorry")]] * 10)
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_guardrails=[no_sorry]))
    assert r.subtype == "error_output_rejected" and r.model_calls == 3, "default: 2 reminders"
    m = Seen([[text("sorry")]] * 10)
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_guardrails=[no_sorry], output_retries=0))
    assert r.subtype == "error_output_rejected" and r.model_calls == 1, "0 retries: a tripwire"


def test_a_guardrail_may_change_the_answer_and_reads_the_deps() -> None:
    async def redact(ctx: lw.RunContext[set[str]], answer: str) -> str:
        for word in ctx.deps:
            answer = answer.replace(word, "***")
        return answer

    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel([[text("the password is hunter2")]]),
                                    output_guardrails=[redact], deps={"hunter2"}))
    assert r.result == "the password is ***"


def so(uid: str, x: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": "StructuredOutput", "input": x}


def test_a_structured_answer_is_rejected_as_the_calls_error_result() -> None:
    def at_most(ctx: lw.RunContext[int], n: int) -> int:
        if n > ctx.deps:
            raise lw.ModelRetry(f"{n} is over {ctx.deps}")
        return n

    m = Seen([[so("a", {"result": 12})], [so("b", {"result": 7})]])
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_type=int, output_guardrails=[at_most], deps=10))
    assert r.subtype == "success" and r.output == 7 and r.model_calls == 2
    result = m.requests[1][-1]["content"][0]
    assert result["is_error"] and "rejected: 12 is over 10" in json.dumps(result)
    m = Seen([[so(f"x{i}", {"result": 12})] for i in range(5)])
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_type=int, output_guardrails=[at_most], deps=10,
                                    output_retries=1))
    assert r.subtype == "error_output_rejected" and r.model_calls == 2 and "12 is over 10" in r.errors[0]


def test_guardrail_reminders_are_model_calls_under_the_usage_limits() -> None:
    m = Seen([[text("sorry")]] * 10)
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_guardrails=[no_sorry], output_retries=5,
                                    usage_limits=lw.UsageLimits(request_limit=2)))
    assert r.subtype == "error_max_requests" and r.model_calls == 2


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(st.sampled_from(["tool", "sorry", "fine"]), min_size=1, max_size=12),
       T=st.one_of(st.none(), st.integers(0, 6)), retries=st.integers(0, 4))
def test_rejections_keep_inv_and_the_T_bound_plus_the_retries(script: list[str], T: int | None, retries: int) -> None:
    """Thm 4.1 with output guardrails: at most T + 1 + output_retries model calls; Inv holds."""
    ids = iter(range(1000))

    def answer(h: list[dict[str, Any]]) -> Any:
        k = sum(1 for m in h if m["role"] == "assistant")
        kind = script[k] if k < len(script) else "fine"
        if kind == "tool":
            return [{"type": "tool_use", "id": f"u{next(ids)}", "name": "get", "input": {"k": "a"}}]
        return [text("Sorry!" if kind == "sorry" else "Here it is.")]

    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(answer), tools=make_tools({"a": "1"}), max_turns=T,
                                    output_guardrails=[no_sorry], output_retries=retries))
    assert holds_final(r.messages)
    rejected = sum(1 for m in r.messages if m["role"] == "user" and "rejected: do not apologise" in json.dumps(m))
    assert rejected <= retries
    if T is not None:
        assert r.model_calls <= T + 1 + retries and r.num_turns <= T
    if r.subtype == "success":
        assert "sorry" not in (r.result or "").lower()
    if r.subtype == "error_output_rejected":
        assert rejected == retries
