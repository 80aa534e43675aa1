"""Typed dependencies (AgentOptions.deps, RunContext[Deps]) and output types (any type pydantic's
TypeAdapter handles, ResultMessage.output typed), on the scripted model; mypy --strict checks a
tool that uses typed deps and an output_type=list[str] run (examples/typed_deps.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict  # (pydantic needs it on Python < 3.12)

import loopwright as lw
from loopwright import RunContext
from tests.helpers import text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def so(uid: str, x: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": "StructuredOutput", "input": x}


class Seen:
    """A scripted model's function that keeps what each call was sent (tools and history)."""

    def __init__(self, turns: list[Any]) -> None:
        self.turns, self.requests = iter(turns), []  # type: list[Any]

    def __call__(self, h: list[dict[str, Any]]) -> Any:
        self.requests.append(json.loads(json.dumps(h)))
        return next(self.turns)


# --- deps ----------------------------------------------------------------------------------

def test_deps_reach_tools_hooks_and_can_use_tool() -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import typed_deps
    finally:
        sys.path.remove(str(EXAMPLES))
    colours, deps = typed_deps.main()
    assert colours == ["teal", "amber"]
    assert deps.log == ["hook saw favourite_colours", "tool for user 7", "hook saw StructuredOutput"]


def test_query_and_the_client_answer_the_typed_output() -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import typed_deps
    finally:
        sys.path.remove(str(EXAMPLES))
    assert asyncio.run(typed_deps.streamed()) == ["teal", "amber"]
    assert asyncio.run(typed_deps.conversation()) == ["teal", "amber"]


def test_can_use_tool_reads_the_deps_to_deny() -> None:
    seen: list[Any] = []

    async def gate(name: str, x: dict[str, Any], context: lw.ToolPermissionContext[dict[str, str]]) -> Any:
        seen.append(context.deps)
        return lw.Deny("no") if context.deps["role"] == "guest" else lw.Allow()

    @lw.tool
    def secret() -> str:
        """A secret."""
        return "42"

    model = [[{"type": "tool_use", "id": "a", "name": "secret", "input": {}}], [text("ok")]]
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(model), tools=[secret], deps={"role": "guest"},
                                    can_use_tool=gate))
    assert seen == [{"role": "guest"}] and r.permission_denials and r.permission_denials[0]["tool_name"] == "secret"


def test_a_plain_tool_handler_and_a_subagent_get_the_same_deps_object() -> None:
    deps = object()
    got: list[Any] = []

    async def handler(x: dict[str, Any], ctx: lw.ToolContext) -> str:
        got.append(ctx.deps)
        return "ok"

    probe = lw.Tool("probe", "p", {"type": "object", "properties": {}}, handler, read_only=True)
    turns = [
        [{"type": "tool_use", "id": "a", "name": "probe", "input": {}},
         {"type": "tool_use", "id": "b", "name": "Agent", "input": {"description": "d", "prompt": "p",
                                                                   "subagent_type": "helper"}}],
        [{"type": "tool_use", "id": "c", "name": "probe", "input": {}}],  # the subagent's call
        [text("sub done")], [text("done")]]
    agents = {"helper": lw.AgentDefinition("helps", "you help", tools=["probe"])}
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[probe], deps=deps, agents=agents,
                                    permission_mode="bypassPermissions"))
    assert r.subtype == "success" and got == [deps, deps] and got[0] is deps and got[1] is deps


def test_run_context_is_left_out_of_the_tool_schema() -> None:
    @lw.tool
    def f(ctx: RunContext[int], n: int) -> int:
        """Adds the deps."""
        return n + ctx.deps

    assert set(f.input_schema["properties"]) == {"n"}
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(
        [[{"type": "tool_use", "id": "a", "name": "f", "input": {"n": 1}}], [text("ok")]]), tools=[f], deps=41))
    assert r.messages[2]["content"][0]["content"] == "42"


# --- output types --------------------------------------------------------------------------

class Box(BaseModel):
    width: int
    height: int


class Point(TypedDict):
    x: int
    y: int


@dataclass
class City:
    name: str
    country: str


CASES: list[tuple[Any, Any, Any, bool]] = [
    # (output_type, the StructuredOutput input the model sends, the output, wrapped in {"result"})
    (int, {"result": 42}, 42, True),
    (list[str], {"result": ["a", "b"]}, ["a", "b"], True),
    (Point, {"x": 1, "y": 2}, {"x": 1, "y": 2}, False),
    (City, {"name": "Paris", "country": "France"}, City("Paris", "France"), False),
    (Box | str, {"result": {"width": 2, "height": 3}}, Box(width=2, height=3), True),
    (Box | str, {"result": "too small"}, "too small", True),
    (Literal["yes", "no"], {"result": "no"}, "no", True),
    (Box, {"width": 2, "height": 3}, Box(width=2, height=3), False),
]


@pytest.mark.parametrize(("kind", "sent", "output", "wrapped"), CASES)
def test_any_output_type(kind: Any, sent: Any, output: Any, wrapped: bool) -> None:
    m = Seen([[so("a", sent)]])
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_type=kind))
    assert r.subtype == "success" and r.output == output and r.structured_output == output
    assert json.loads(r.result or "") == (sent["result"] if wrapped else sent), "the result text is the unwrapped JSON"
    r2 = lw.build_run(lw.AgentOptions(model=lw.ScriptedModel([]), output_type=kind), "x")
    schema = r2.deps.tools["StructuredOutput"].input_schema
    assert schema["type"] == "object"
    assert (schema.get("required") == ["result"] and list(schema["properties"]) == ["result"]) is wrapped


def test_an_invalid_answer_is_retried_then_bounded() -> None:
    m = Seen([[so("a", {"result": ["a", 1]})], [so("b", {"result": "x"})], [so("c", {"result": ["a", "b"]})]])
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_type=list[str]))
    assert r.subtype == "success" and r.output == ["a", "b"] and r.model_calls == 3
    assert m.requests[1][-1]["content"][0]["is_error"], "the invalid call's result says so"
    m = Seen([[so(f"x{i}", {"result": "nope"})] for i in range(5)])
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_type=int))
    assert r.subtype == "error_max_structured_output_retries" and r.model_calls == 3 and r.output is None


def test_pydantic_validators_run_on_the_answer() -> None:
    from pydantic import field_validator

    class Even(BaseModel):
        n: int

        @field_validator("n")
        @classmethod
        def even(cls, v: int) -> int:
            if v % 2:
                raise ValueError("n must be even")
            return v

    m = Seen([[so("a", {"result": [{"n": 3}]})], [so("b", {"result": [{"n": 4}]})]])
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(m), output_type=list[Even]))
    assert r.output == [Even(n=4)] and "n must be even" in json.dumps(m.requests[1][-1])


def test_a_type_pydantic_cannot_describe_is_refused_before_any_call() -> None:
    class Opaque:
        pass

    model = lw.ScriptedModel([[text("x")]])
    with pytest.raises(TypeError, match="output_type .*Opaque"):
        lw.run("x", lw.AgentOptions(model=model, output_type=Opaque))
    assert model.calls == 0


def test_without_an_output_type_the_output_is_the_text() -> None:
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel([[text("hello")]])))
    assert r.output == "hello"


# --- mypy --strict on the typed example --------------------------------------------------

def _mypy(path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), str(path)],
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.e2e
def test_mypy_sees_the_deps_and_output_types(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    cache = tmp_path / "cache"
    ok = _mypy(EXAMPLES / "typed_deps.py", cache)
    assert ok.returncode == 0, ok.stdout
    # The same file with two type errors mypy can only see through the types: deps' field, the output's
    bad = tmp_path / "typed_deps_bad.py"
    source = (EXAMPLES / "typed_deps.py").read_text()
    source = source.replace("ctx.deps.user_id}", "ctx.deps.user_name}")
    source = source.replace("colours: list[str] = result.output", "colours: list[int] = result.output")
    source = source.replace("context.deps.log.append", "context.deps.logs.append")
    # query()'s and LoopwrightClient's ResultMessage are typed by the options' output_type too
    source = source.replace("streamed_colours: list[str]", "streamed_colours: list[int]")
    source = source.replace("client_colours: list[str]", "client_colours: list[int]")
    bad.write_text(source)
    out = _mypy(bad, cache).stdout
    assert '"Deps" has no attribute "user_name"' in out and '"Deps" has no attribute "logs"' in out
    wrong = 'Incompatible types in assignment (expression has type "list[str]", variable has type "list[int]")'
    lines = [line for line in out.splitlines() if wrong in line]
    assert len(lines) == 3, out  # run()'s, query()'s and the client's
    assert {int(line.split(":")[1]) for line in lines} == {
        i for i, line in enumerate(source.splitlines(), 1) if ": list[int] = " in line}


def test_a_subagent_answers_in_text_when_the_parent_owes_a_typed_answer() -> None:
    turns = [[{"type": "tool_use", "id": "a", "name": "Agent", "input": {"description": "d", "prompt": "count",
                                                                        "subagent_type": "helper"}}],
             [text("three")],  # the subagent's answer: text, no StructuredOutput owed
             [so("b", {"result": 3})]]
    agents = {"helper": lw.AgentDefinition("helps", "you help", tools=[])}
    r = lw.run("x", lw.AgentOptions(model=lw.ScriptedModel(turns), agents=agents, output_type=int,
                                    permission_mode="bypassPermissions"))
    assert r.subtype == "success" and r.output == 3 and r.model_calls == 2
    assert "three" in json.dumps(r.messages[2])


# --- pydantic-ai's RunContext reads: usage, retry, prompt, messages --------------------------

def test_a_tool_reads_the_runs_usage_retry_prompt_and_messages() -> None:
    seen: list[tuple[int, lw.UsageView, Any, int]] = []

    @lw.tool
    def probe(ctx: RunContext[None], fail: bool) -> str:
        """Fails when asked to."""
        history = ctx.messages
        seen.append((ctx.retry, ctx.usage, ctx.prompt, len(history)))
        history.clear()  # a copy: the run's history is not changed
        if fail:
            raise ValueError("asked to fail")
        return "ok"

    def call(i: int, fail: bool) -> list[dict[str, Any]]:
        return [{"type": "tool_use", "id": f"c{i}", "name": "probe", "input": {"fail": fail}}]

    turns = [call(1, True), call(2, True), call(3, False), call(4, True), call(5, False), [text("done")]]
    r = lw.run("probe it", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[probe],
                                          permission_mode="bypassPermissions"))
    assert r.subtype == "success" and len(r.messages) == 12  # nothing of it cleared
    assert [s[0] for s in seen] == [0, 1, 2, 0, 1]  # failures in a row, 0 again after a success
    assert [s[1].requests for s in seen] == [1, 2, 3, 4, 5]
    inputs = [s[1].input_tokens for s in seen]
    assert inputs == sorted(inputs) and 0 < inputs[0] and inputs[-1] < r.usage.input_tokens
    assert seen[-1][1].total_tokens == seen[-1][1].input_tokens + seen[-1][1].output_tokens
    assert {s[2] for s in seen} == {"probe it"}
    # each call saw the conversation before its turn's answer: the prompt, then two messages a turn
    assert [s[3] for s in seen] == [1, 3, 5, 7, 9]


def test_outside_a_run_the_context_reads_are_empty(tmp_path: Path) -> None:
    ctx: lw.RunContext[None] = lw.RunContext(tmp_path)
    assert (ctx.retry, ctx.usage, ctx.prompt, ctx.messages) == (0, lw.UsageView(), None, [])
