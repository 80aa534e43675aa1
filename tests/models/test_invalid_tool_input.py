"""A tool call whose input is not a JSON object (issue 23, item 7): the model's text rides in a typed
marker on the block (`ToolUseBlock.invalid`), never as a key inside the input dict. Over real HTTP
with both providers: the call is answered with an is_error result quoting the text, the gate and
the tool never see it, and the session on disk holds only the model's input and resumes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.invariant import holds_final
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.base import CUT_OFF, invalid_input_error, parse_input, tool_use
from loopwright.models.openai_compat import OpenAICompatModel
from loopwright.testing import Fault, ScriptedServer
from tests.helpers import text, use


def test_the_marker_is_typed_and_the_input_is_only_the_models() -> None:
    bad = tool_use("t1", "Bash", '{"command": "ls')
    assert bad.input == {} and bad.invalid is not None and bad.invalid.text == '{"command": "ls'
    assert "not valid JSON" in (invalid_input_error(bad) or "") and '{"command": "ls' in (invalid_input_error(bad) or "")
    listed = tool_use("t2", "Bash", "[1, 2]")
    assert listed.input == {} and "a JSON list, not an object" in (invalid_input_error(listed) or "")
    assert invalid_input_error(tool_use("t3", "Bash", '{"command": "l', cut_off=True)) == CUT_OFF
    # a key that looks like the old sentinel is just the model's input now: it is run as given
    odd = tool_use("t4", "Bash", '{"__invalid_json__": {"text": "x"}}')
    assert odd.invalid is None and invalid_input_error(odd) is None and odd.input == {"__invalid_json__": {"text": "x"}}
    assert parse_input("") == {} and bad.to_wire()["input"] == {}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_invalid_json_is_an_error_result_and_the_session_on_disk_stays_valid(tmp_path: Path, provider: str) -> None:
    seen: list[dict[str, Any]] = []

    def note(x: dict[str, Any]) -> str:
        seen.append(x)
        return "noted"

    asked: list[dict[str, Any]] = []

    def can_use_tool(name: str, tool_input: dict[str, Any]) -> bool:
        asked.append(tool_input)
        return True

    tool = lw.Tool("note", "note a value", {"type": "object", "properties": {"v": {"type": "string"}}}, note)
    script = [[text("one"), use("t1", "note", {"v": "1"})], [use("t2", "note", {"v": "2"})], [text("finished")]]
    with ScriptedServer(script) as srv:
        srv.inject(Fault(bad_tool_json=True))  # the first call's input JSON is cut short on the wire
        model: lw.Model = (AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="k") if provider == "anthropic"
                           else OpenAICompatModel("local-model", base_url=srv.openai_url))
        r = lw.run("go", lw.AgentOptions(model=model, tools=[tool], cwd=tmp_path, persist_session=True,
                                         sessions_dir=tmp_path / "sessions", can_use_tool=can_use_tool))
    assert r.subtype == "success", r.errors
    assert seen == [{"v": "2"}] and asked == [{"v": "2"}]  # neither the gate nor the tool saw the broken call
    result = r.messages[2]["content"][0]
    assert result["is_error"] is True and "not valid JSON" in result["content"] and '{"v": "1"' in result["content"]
    [path] = (tmp_path / "sessions").rglob(f"{r.session_id}.jsonl")
    on_disk = path.read_text()
    assert "__invalid_json__" not in on_disk and "invalid" not in json.dumps(r.messages[1])
    assert [b for b in r.messages[1]["content"] if b["type"] == "tool_use"][0]["input"] == {}
    again = lw.run("and now?", lw.AgentOptions(model=lw.ScriptedModel([[text("resumed")]]), cwd=tmp_path,
                                               persist_session=True, sessions_dir=tmp_path / "sessions",
                                               resume=r.session_id))
    assert again.subtype == "success" and again.result == "resumed" and holds_final(again.messages)
    assert again.messages[:len(r.messages)] == r.messages


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_nan_and_infinity_are_not_json_and_never_reach_a_request(tmp_path: Path, provider: str) -> None:
    """A model's input of NaN, Infinity or -Infinity (Python's json reads them; JSON has no such
    values): taken in, the call ran with them, and each later request and the transcript carried
    them, which the Messages API (and Claude Code reading the transcript) refuses as invalid JSON:
    the run and its resume were lost. The call is answered as any input that is not JSON."""
    seen: list[dict[str, Any]] = []
    tool = lw.Tool("note", "note a value", {"type": "object"}, lambda x: seen.append(x) or "noted")
    script = [[use("t1", "note", {"v": float("nan"), "w": [float("inf"), float("-inf")]})], [text("finished")]]
    with ScriptedServer(script) as srv:
        model: lw.Model = (AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="k") if provider == "anthropic"
                           else OpenAICompatModel("local-model", base_url=srv.openai_url))
        r = lw.run("go", lw.AgentOptions(model=model, tools=[tool], cwd=tmp_path, persist_session=True,
                                         sessions_dir=tmp_path / "sessions"))
        sent = [q.raw for q in srv.requests if q.raw]
    assert r.subtype == "success" and r.result == "finished", (r.subtype, r.errors)
    assert seen == []
    result = r.messages[2]["content"][0]
    assert result["is_error"] is True and "not valid JSON" in result["content"] and "NaN" in result["content"]
    [path] = (tmp_path / "sessions").rglob(f"{r.session_id}.jsonl")
    found: list[str] = []
    for doc in [*sent, *path.read_bytes().splitlines()]:  # JSON as RFC 8259 has it: no such constants
        json.loads(doc, parse_constant=found.append)
    assert found == []


def nested(n: int) -> Any:
    v: Any = []
    for _ in range(n):
        v = [v]
    return v


def test_an_input_nested_past_the_bound_is_not_json_the_run_takes() -> None:
    """Nesting past the parser's depth (RecursionError) or past MAX_INPUT_DEPTH is an invalid input."""
    from loopwright.blocks import MAX_INPUT_DEPTH, block_from_wire

    for raw in ['{"v": ' + "[" * 5000 + "]" * 5000 + "}", json.dumps({"v": nested(MAX_INPUT_DEPTH)})]:
        bad = tool_use("t1", "note", raw)
        assert bad.input == {} and f"nested more than {MAX_INPUT_DEPTH} levels" in (invalid_input_error(bad) or "")
    assert tool_use("t2", "note", json.dumps({"v": nested(MAX_INPUT_DEPTH - 2)})).invalid is None
    whole = block_from_wire({"type": "tool_use", "id": "t3", "name": "note", "input": {"v": nested(600)}})
    assert whole.to_wire()["input"] == {} and invalid_input_error(whole)  # type: ignore[union-attr,arg-type]


def test_a_deeply_nested_input_is_answered_and_the_run_goes_on(tmp_path: Path) -> None:
    """A model's input nested 600 levels deep (the JSON parser takes it): the code that copies,
    freezes and records a call's input recursed past Python's limit and ended the run
    (error_during_execution: RecursionError), the turn lost. It is answered as an invalid input."""
    seen: list[Any] = []
    tool = lw.Tool("note", "note a value", {"type": "object"}, lambda x: seen.append(x) or "noted")
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("t1", "note", {"v": nested(600)})], [text("finished")]]),
                                     tools=[tool], cwd=tmp_path, persist_session=True, sessions_dir=tmp_path / "sessions"))
    assert r.subtype == "success" and r.result == "finished", r.errors
    result = r.messages[2]["content"][0]
    assert seen == [] and result["is_error"] is True and "nested more than" in result["content"]


def test_the_nesting_bound_holds_over_the_wire(tmp_path: Path) -> None:
    """A server's whole-message answer (not streamed) with an input nested past the bound: the same
    answer. (Sent raw: the scripted server's own model would apply the bound before sending it.)"""
    seen: list[Any] = []
    tool = lw.Tool("note", "note a value", {"type": "object"}, lambda x: seen.append(x) or "noted")
    body = json.dumps({"id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                       "content": [{"type": "tool_use", "id": "t1", "name": "note", "input": {"v": nested(150)}}],
                       "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}})
    with ScriptedServer([[text("finished")]]) as srv:
        srv.inject(Fault(raw_body=body, content_type="application/json"))
        r = lw.run("go", lw.AgentOptions(model=AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="k"),
                                         tools=[tool], cwd=tmp_path))
    assert r.subtype == "success" and r.result == "finished", r.errors
    result = r.messages[2]["content"][0]
    assert seen == [] and result["is_error"] is True and "nested more than" in result["content"]
