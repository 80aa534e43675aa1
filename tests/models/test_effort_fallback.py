"""Effort and thinking (models/reasoning.py) and fallback models (models/fallback.py), through
the loopback API server: what each model family's request carries, thinking blocks kept
verbatim across tool turns, and a 529 on one model moving the same request to the next."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.messages import ResultMessage, SystemMessage
from loopwright.models.reasoning import anthropic_params, claude_family, openai_params
from loopwright.options import AgentOptions
from loopwright.testing import Fault, ScriptedServer
from tests.helpers import cli_env, collect, loopwright_cmd, text, use

THINK = {"type": "thinking", "thinking": "The file is small; read it first.", "signature": "c2lnLTE="}
REDACTED = {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}


def echo_tool() -> lw.Tool:
    return lw.Tool("echo", "Echo", {"type": "object", "properties": {"s": {"type": "string"}}},
                   lambda x: x.get("s", ""), read_only=True)


def options(srv: ScriptedServer, model: str, **kw: Any) -> AgentOptions:
    base = srv.openai_url if model.startswith("openai:") else srv.url
    kw.setdefault("max_retries", 0)
    return AgentOptions(model=model, base_url=base, api_key="test", tools=[echo_tool()], **kw)


# --- the request per model family ------------------------------------------------------------

def test_families_are_recognised() -> None:
    assert claude_family("claude-opus-4-7") == ("opus", (4, 7))
    assert claude_family("claude-sonnet-4-20250514") == ("sonnet", (4, 0))
    assert claude_family("claude-opus-4-1-20250805") == ("opus", (4, 1))
    assert claude_family("us.anthropic.claude-3-7-sonnet-20250219-v1:0") == ("sonnet", (3, 7))
    assert claude_family("claude-sonnet-5-5") == ("sonnet", (5, 5))
    assert claude_family("claude-opus-5") == ("opus", (5, 0))
    assert claude_family("gpt-4o") is None


@pytest.mark.parametrize(("model", "effort", "thinking", "body", "betas"), [
    # 4.7+ and 5.x: adaptive only, all five effort levels
    ("claude-opus-4-7", "xhigh", {"type": "enabled", "budget_tokens": 4000},
     {"thinking": {"type": "adaptive"}, "output_config": {"effort": "xhigh"}}, []),
    ("claude-sonnet-5-5", "max", None, {"output_config": {"effort": "max"}}, []),
    ("claude-fable-5", "low", {"type": "disabled"}, {"output_config": {"effort": "low"}}, []),
    # 4.6: adaptive or enabled; xhigh is not a 4.6 level
    ("claude-opus-4-6", "xhigh", {"type": "adaptive"},
     {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}}, []),
    ("claude-sonnet-4-6", None, {"type": "enabled", "budget_tokens": 2048},
     {"thinking": {"type": "enabled", "budget_tokens": 2048}}, ["interleaved-thinking-2025-05-14"]),
    # Opus 4.5: effort (beta) low..high; thinking only when asked
    ("claude-opus-4-5", "max", None, {"output_config": {"effort": "high"}}, ["effort-2025-11-24"]),
    # budget models: effort picks the budget; Claude 4 thinks between tool calls
    ("claude-sonnet-4-5", "high", None, {"thinking": {"type": "enabled", "budget_tokens": 16000}},
     ["interleaved-thinking-2025-05-14"]),
    ("claude-haiku-4-5", "low", None, {}, []),
    ("claude-sonnet-4-5", None, {"type": "adaptive"}, {"thinking": {"type": "enabled", "budget_tokens": 16000}},
     ["interleaved-thinking-2025-05-14"]),
    # no thinking at all
    ("claude-3-5-haiku-20241022", "high", {"type": "adaptive"}, {}, []),
])
def test_anthropic_params_per_family(model: str, effort: str | None, thinking: dict[str, Any] | None,
                                     body: dict[str, Any], betas: list[str]) -> None:
    assert anthropic_params(model, effort, thinking, 32_000, True) == (body, betas)


def test_a_budget_model_without_tools_gets_room_above_its_budget() -> None:
    body, betas = anthropic_params("claude-3-7-sonnet-20250219", None, {"type": "enabled", "budget_tokens": 20000},
                                   8192, False)
    assert body == {"thinking": {"type": "enabled", "budget_tokens": 20000}, "max_tokens": 24096} and betas == []


def test_openai_reasoning_effort() -> None:
    assert openai_params("gpt-4o", "medium", None) == {"reasoning_effort": "medium"}
    assert openai_params("o3", "max", None) == {"reasoning_effort": "high"}
    assert openai_params("gpt-5.2", "xhigh", None) == {"reasoning_effort": "xhigh"}
    assert openai_params("o4-mini", None, {"type": "enabled", "budget_tokens": 2000}) == {"reasoning_effort": "low"}
    assert openai_params("o4-mini", None, {"type": "adaptive"}) == {}
    assert openai_params("o4-mini", None, None) == {}


def test_requests_carry_effort_and_thinking_on_the_wire() -> None:
    with ScriptedServer([[text("ok")], [text("ok")], [text("ok")]], min_cache_tokens=0) as srv:
        r1 = collect("hi", options(srv, "claude-opus-4-7", effort="xhigh", thinking={"type": "adaptive"}))[-1]
        r2 = collect("hi", options(srv, "claude-sonnet-4-5", effort="medium"))[-1]
        r3 = collect("hi", options(srv, "openai:gpt-4o", effort="low"))[-1]
        reqs = srv.loop_requests
    assert r1.subtype == r2.subtype == r3.subtype == "success"
    assert reqs[0].body["thinking"] == {"type": "adaptive"} and reqs[0].body["output_config"] == {"effort": "xhigh"}
    assert "anthropic-beta" not in reqs[0].headers
    assert reqs[1].body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert "output_config" not in reqs[1].body
    assert "interleaved-thinking-2025-05-14" in reqs[1].headers["anthropic-beta"].split(",")
    assert reqs[2].kind == "chat" and reqs[2].body["reasoning_effort"] == "low"


def test_without_effort_or_thinking_nothing_is_added() -> None:
    with ScriptedServer([[text("ok")]], min_cache_tokens=0) as srv:
        collect("hi", options(srv, "claude-opus-4-7"))
        body = srv.loop_requests[0].body
    assert "thinking" not in body and "output_config" not in body


def test_thinking_blocks_round_trip_verbatim_across_tool_turns() -> None:
    """Interleaved thinking: the model thinks, calls a tool, thinks again after the result; each
    later request carries every earlier thinking block byte for byte (signature included)."""
    think2 = {"type": "thinking", "thinking": "echo said hi; one more.", "signature": "c2lnLTI="}
    script = [[THINK, use("t1", "echo", {"s": "hi"})],
              [think2, REDACTED, use("t2", "echo", {"s": "again"})],
              [text("done")]]
    with ScriptedServer(script, min_cache_tokens=0) as srv:
        r = collect("go", options(srv, "claude-sonnet-4-5", thinking={"type": "enabled", "budget_tokens": 2048}))[-1]
        reqs = srv.loop_requests
    assert isinstance(r, ResultMessage) and r.subtype == "success" and r.num_turns == 2
    assert [q.body["thinking"] for q in reqs] == [{"type": "enabled", "budget_tokens": 2048}] * 3
    assert all("interleaved-thinking-2025-05-14" in q.headers.get("anthropic-beta", "") for q in reqs)
    second, third = reqs[1].body["messages"], reqs[2].body["messages"]
    assert second[1]["content"][0] == THINK
    assert third[1]["content"][0] == THINK
    assert third[3]["content"][:2] == [think2, REDACTED]


@pytest.mark.parametrize(("kw", "needle"), [
    ({"effort": "extreme"}, "effort must be one of low, medium, high, xhigh, max"),
    ({"thinking": {"type": "enabled"}}, "budget_tokens"),
    ({"thinking": {"type": "enabled", "budget_tokens": 100}}, ">= 1024"),
    ({"thinking": {"type": "adaptive", "budget_tokens": 4000}}, "type 'enabled' only"),
    ({"thinking": {"type": "on"}}, "thinking['type'] must be one of"),
    ({"thinking": "adaptive"}, "thinking must be a dict"),
    ({"fallback_model": "gpt-4o"}, "fallback_model='gpt-4o' names no provider"),
    ({"model": "claude-opus-4-7", "fallback_model": ["claude-opus-4-7"]}, "is the model itself"),
])
def test_bad_values_are_refused_naming_the_field(kw: dict[str, Any], needle: str) -> None:
    with pytest.raises((ValueError, TypeError), match=None) as e:
        AgentOptions(**kw)
    assert needle in str(e.value)


# --- fallback models -------------------------------------------------------------------------

PRICES = {"claude-opus-4-7": lw.Price.from_input(5, 25), "claude-sonnet-4-5": lw.Price.from_input(3, 15)}


def test_overloaded_model_falls_back_for_the_same_request_and_is_priced_per_model() -> None:
    script = [[use("t1", "echo", {"s": "hi"})], [text("done")]]
    with ScriptedServer(script, min_cache_tokens=0) as srv:
        srv.inject(Fault.overloaded(times=100, model="claude-opus-4-7"))
        msgs = collect("go", options(srv, "claude-opus-4-7", fallback_model="claude-sonnet-4-5", prices=PRICES,
                                     max_retries=1))
        reqs = srv.loop_requests
    r = msgs[-1]
    assert isinstance(r, ResultMessage) and r.subtype == "success", r.errors
    # the main model: its first try and one retry, both 529; then the same request on the fallback
    assert [(q.body["model"], q.status) for q in reqs] == [
        ("claude-opus-4-7", 529), ("claude-opus-4-7", 529), ("claude-sonnet-4-5", 200), ("claude-sonnet-4-5", 200)]
    assert reqs[2].body["messages"] == reqs[0].body["messages"]
    fb = [m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "model_fallback"]
    assert len(fb) == 1 and fb[0].data["from_model"] == "claude-opus-4-7" and fb[0].data["to_model"] == "claude-sonnet-4-5"
    assert fb[0].data["status"] == 529
    assert [c.model for c in r.call_usage] == ["claude-sonnet-4-5", "claude-sonnet-4-5"]
    sonnet = PRICES["claude-sonnet-4-5"]
    for c in r.call_usage:
        u = lw.Usage(c.input_tokens - c.cache_read_input_tokens - c.cache_creation_input_tokens, c.output_tokens,
                     c.cache_creation_input_tokens, c.cache_read_input_tokens)
        assert c.cost_usd == pytest.approx(sonnet.cost(u))
    assert set(r.model_usage) == {"claude-sonnet-4-5"} and r.model_usage["claude-sonnet-4-5"]["calls"] == 2
    assert r.to_json()["modelUsage"]["claude-sonnet-4-5"]["costUSD"] == pytest.approx(r.total_cost_usd)


def test_other_errors_do_not_fall_back() -> None:
    with ScriptedServer([[text("never")]], min_cache_tokens=0) as srv:
        srv.inject(Fault.error(400, "bad request", "invalid_request_error", times=5))
        r = collect("go", options(srv, "claude-opus-4-7", fallback_model="claude-sonnet-4-5"))[-1]
        reqs = srv.loop_requests
    assert r.subtype == "error_during_execution" and "bad request" in (r.result or "")
    assert [q.body["model"] for q in reqs] == ["claude-opus-4-7"]


def test_every_fallback_overloaded_ends_with_the_last_error() -> None:
    with ScriptedServer([[text("never")]], min_cache_tokens=0) as srv:
        srv.inject(Fault.overloaded(times=10, model="claude-opus-4-7"), Fault.overloaded(times=10, model="claude-sonnet-4-5"))
        msgs = collect("go", options(srv, "claude-opus-4-7", fallback_model=["claude-sonnet-4-5"]))
    r = msgs[-1]
    assert r.subtype == "error_during_execution" and "529" in (r.result or "")
    assert [m.data["to_model"] for m in msgs if isinstance(m, SystemMessage) and m.subtype == "model_fallback"] == [
        "claude-sonnet-4-5"]


def test_budget_needs_the_fallback_models_price() -> None:
    with pytest.raises(ValueError, match="price of model 'claude-unknown-9'"):
        collect("hi", AgentOptions(model="claude-opus-4-7", fallback_model="claude-unknown-9", max_budget_usd=1.0,
                                   api_key="x"))


# --- the CLI ---------------------------------------------------------------------------------

def run_cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp / "home"))
    return subprocess.run([*loopwright_cmd(), *args, "--cwd", str(tmp), "--no-session-persistence",
                           "--setting-sources", ""], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.e2e
def test_cli_effort_thinking_and_fallback(tmp_path: Path) -> None:
    with ScriptedServer([[text("ok")]], min_cache_tokens=0) as srv:
        srv.inject(Fault.overloaded(times=100, model="claude-opus-4-7"))
        p = run_cli(tmp_path, "-p", "hi", "--model", "claude-opus-4-7", "--base-url", srv.url, "--effort", "low",
                    "--thinking", "adaptive", "--fallback-model", "claude-opus-4-6", "--output-format", "stream-json",
                    "--verbose")
        reqs = srv.loop_requests
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert any(x.get("type") == "system" and x.get("subtype") == "model_fallback" for x in lines), p.stdout
    assert lines[-1]["modelUsage"].keys() == {"claude-opus-4-6"}
    last = reqs[-1]
    assert last.body["model"] == "claude-opus-4-6" and last.status == 200
    assert last.body["thinking"] == {"type": "adaptive"} and last.body["output_config"] == {"effort": "low"}
    assert reqs[0].body["model"] == "claude-opus-4-7" and reqs[0].status == 529


@pytest.mark.e2e
@pytest.mark.parametrize(("args", "needle"), [
    (["--effort", "extreme"], "invalid choice: 'extreme'"),
    (["--thinking", "lots"], "--thinking must be adaptive, disabled or a budget"),
    (["--thinking", "100"], ">= 1024"),
    (["--fallback-model", "claude-opus-4-7"], "is the --model itself"),
    (["--fallback-model", "gpt-4o"], "--fallback-model: unknown model 'gpt-4o'"),
])
def test_cli_refuses_bad_values_before_any_call(tmp_path: Path, args: list[str], needle: str) -> None:
    p = run_cli(tmp_path, "-p", "hi", "--model", "claude-opus-4-7", "--base-url", "http://127.0.0.1:9", *args)
    assert p.returncode == 2 and needle in p.stderr, p.stderr


def test_a_subagent_on_a_fallback_model_keeps_the_other_fallbacks() -> None:
    """The subagent's own model is one of the parent's fallbacks: it starts (the list drops it) and
    still falls back to the rest when its model is overloaded."""
    helper = lw.AgentDefinition("Helps", "You help.", tools=["echo"], model="claude-sonnet-4-5")

    def turns(h: list[dict[str, Any]]) -> Any:
        if h[0]["content"][0]["text"] == "main":
            return [use("a1", "Agent", {"description": "d", "prompt": "sub", "subagent_type": "helper"})] \
                if len(h) == 1 else [text("parent done")]
        return [text("sub done")]

    with ScriptedServer(turns, min_cache_tokens=0) as srv:
        srv.inject(Fault.overloaded(times=100, model="claude-sonnet-4-5"))
        r = collect("main", options(srv, "claude-opus-4-7", fallback_model=["claude-sonnet-4-5", "claude-haiku-4-5"],
                                    agents={"helper": helper}))[-1]
        sub_models = [q.body["model"] for q in srv.loop_requests if q.body["messages"][0]["content"][0]["text"] == "sub"]
    assert r.subtype == "success" and "sub done" in json.dumps(r.messages[2])
    assert sub_models == ["claude-sonnet-4-5", "claude-haiku-4-5"]
