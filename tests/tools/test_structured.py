"""Structured output (structured.py): the StructuredOutput tool with the user's schema, a valid
call ends the run at once, invalid input names the field, reminders are bounded; through the
library (dict schema and pydantic), the real CLI on the loopback server, and side by side with
Claude Code on the same scripted turns."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import loopwright as lw
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "total": {"type": "number"}},
          "required": ["name", "total"]}
FORMAT = {"type": "json_schema", "schema": SCHEMA}


def so(uid: str, **x: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": "StructuredOutput", "input": x}


class Recorder:
    def __init__(self, turns: list[Any]) -> None:
        self.turns = iter(turns)
        self.seen: list[list[dict[str, Any]]] = []

    def __call__(self, h: list[dict[str, Any]]) -> Any:
        self.seen.append(json.loads(json.dumps(h)))
        return next(self.turns)


def test_invalid_input_names_the_field_then_a_valid_call_ends_the_run() -> None:
    m = Recorder([[so("a", name="ACME")], [so("b", name="ACME", total=12.5)], [text("never asked")]])
    r = lw.run("extract", lw.AgentOptions(model=lw.ScriptedModel(m), output_format=FORMAT))
    assert r.subtype == "success" and r.structured_output == {"name": "ACME", "total": 12.5}
    assert r.result == '{"name":"ACME","total":12.5}' and json.loads(r.to_json()["result"]) == r.structured_output
    assert r.to_json()["structured_output"] == {"name": "ACME", "total": 12.5}
    assert r.model_calls == 2 and r.num_turns == 2, "no call after the valid one"
    bad = m.seen[1][-1]["content"][0]
    assert bad["is_error"] and "'total' is a required property" in json.dumps(bad)
    assert lw.run("x", lw.AgentOptions(model=lw.ScriptedModel([[so("a", name="x", total=1)]]), output_format=FORMAT,
                                       max_turns=0)).subtype == "error_max_turns", "T holds: the call is a turn"


def test_a_text_answer_gets_a_reminder_and_failures_are_bounded() -> None:
    m = Recorder([[text("ACME, 12.5")], [so("a", name="ACME", total=12.5)]])
    r = lw.run("extract", lw.AgentOptions(model=lw.ScriptedModel(m), output_format=FORMAT))
    assert r.subtype == "success" and r.model_calls == 2
    assert "StructuredOutput" in m.seen[1][-1]["content"][0]["text"]
    m = Recorder([[text("no")]] * 10)
    r = lw.run("extract", lw.AgentOptions(model=lw.ScriptedModel(m), output_format=FORMAT))
    assert r.subtype == "error_max_structured_output_retries" and r.is_error and r.model_calls == 3
    m = Recorder([[so(f"x{i}", name=1)] for i in range(10)])
    r = lw.run("extract", lw.AgentOptions(model=lw.ScriptedModel(m), output_format=FORMAT))
    assert r.subtype == "error_max_structured_output_retries" and r.model_calls == 3


class Invoice(BaseModel):
    name: str
    total: float


def test_pydantic_output_type() -> None:
    r = lw.run("extract", lw.AgentOptions(model=lw.ScriptedModel([[so("a", name="ACME", total=3)]]),
                                          output_type=Invoice))
    assert isinstance(r.structured_output, Invoice) and r.structured_output.total == 3.0
    assert r.to_json()["structured_output"] == {"name": "ACME", "total": 3.0}


@pytest.mark.e2e
def test_bad_schemas_are_refused_before_any_call() -> None:
    model = lw.ScriptedModel([[text("x")]])
    with pytest.raises(ValueError, match="not valid JSON Schema"):
        lw.run("x", lw.AgentOptions(model=model, output_format={"type": "json_schema", "schema": {"type": "nope"}}))
    with pytest.raises(ValueError, match="must describe an object"):
        lw.run("x", lw.AgentOptions(model=model, output_format={"type": "json_schema", "schema": {"type": "string"}}))
    with pytest.raises(ValueError, match="output_format must be"):
        lw.run("x", lw.AgentOptions(model=model, output_format={"schema": SCHEMA}))
    assert model.calls == 0
    r = subprocess.run([*loopwright_cmd(), "-p", "x", "--model", "claude-sonnet-4-5", "--json-schema", "{not json"],
                       env={**os.environ, "ANTHROPIC_API_KEY": "x"}, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--json-schema: not valid JSON" in r.stderr


def run_loopwright(srv: ScriptedServer, cwd: Path) -> dict[str, Any]:
    env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test"}
    r = subprocess.run([*loopwright_cmd(), "-p", "extract the invoice", "--model", "claude-sonnet-4-5", "--output-format", "json",
                        "--json-schema", json.dumps(SCHEMA)], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


@pytest.mark.e2e
def test_through_the_cli(tmp_path: Path) -> None:
    with ScriptedServer([[so("toolu_1", name="ACME", total=12.5)]]) as srv:
        out = run_loopwright(srv, tmp_path)
        tool = next(t for t in srv.loop_requests[0].body["tools"] if t["name"] == "StructuredOutput")
    assert tool["input_schema"] == SCHEMA
    assert out["structured_output"] == {"name": "ACME", "total": 12.5} and out["subtype"] == "success"


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")
def test_same_calls_and_answer_as_claude_code(tmp_path: Path) -> None:
    turns = [[so("toolu_1", name="ACME", total=12.5)], [text("done")]]
    with ScriptedServer(turns) as srv:
        ours = run_loopwright(srv, tmp_path)
        our_calls = len(srv.loop_requests)
    with ScriptedServer(turns) as srv:
        env = claude_code_env(srv.url, str(tmp_path / "cchome"))
        r = subprocess.run([str(CLAUDE), "-p", "extract the invoice", "--model", "claude-sonnet-4-5", "--output-format",
                            "json", "--json-schema", json.dumps(SCHEMA)], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        theirs = json.loads(r.stdout)
        their_calls = len(srv.loop_requests)
    assert our_calls == their_calls == 1
    assert ours["structured_output"] == theirs["structured_output"] == {"name": "ACME", "total": 12.5}
    assert ours["result"] == theirs["result"]


@pytest.mark.e2e
def test_price_and_context_window_flags(tmp_path: Path) -> None:
    """--price makes a budget possible on a model outside the price table; --context-window sets W."""
    with ScriptedServer([[text("hi")]], model="my-model") as srv:
        env = {**os.environ, "OPENAI_API_KEY": "x"}
        base = [*loopwright_cmd(), "-p", "x", "--model", "openai:my-model", "--base-url", srv.openai_url, "--output-format", "json",
                "--max-budget-usd", "1"]
        r = subprocess.run(base, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "price" in r.stderr
        r = subprocess.run([*base, "--price", "my-model=3,15", "--context-window", "50000"], env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        u = out["usage"]
        assert out["total_cost_usd"] == pytest.approx((u["input_tokens"] * 3 + u["output_tokens"] * 15) / 1e6)
    r = subprocess.run([*loopwright_cmd(), "-p", "x", "--model", "scripted:nofile.json", "--price", "m=abc"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "--price 'm=abc': expected MODEL=IN,OUT" in r.stderr
