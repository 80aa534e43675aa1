"""A rewrite of a tool input that is not JSON data (a Python hook's or can_use_tool's: an object,
a set, a dict that holds itself): a tool input comes from JSON, and the code after a rewrite
copies, compares and writes it. Such a rewrite is refused, as a failed hook or answer is (the
call is not run, the run goes on); it ended the run (error_during_execution: "cannot pickle
'_thread.lock' object", a RecursionError) and lost the turn's messages."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from tests.helpers import result_text, text, use


def odd(kind: str) -> Any:
    if kind == "lock":
        return threading.Lock()
    if kind == "set":
        return {1, 2}
    if kind == "nan":  # (Python's json writes it; no JSON reader takes it)
        return float("nan")
    loop: dict[str, Any] = {}
    loop["me"] = loop
    return loop


def run(tmp_path: Path, **options: Any) -> tuple[lw.ResultMessage, list[Any]]:
    """One call of a tool that takes any object (its input is not checked against properties)."""
    ran: list[Any] = []
    loose = lw.Tool("Loose", "takes anything", {"type": "object"}, lambda x: ran.append(sorted(x)) or "ok")
    seen: list[Any] = []

    def post(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> None:
        seen.append(data["tool_input"])

    hooks = {**options.pop("hooks", {}), "PostToolUse": [lw.HookMatcher("Loose", [post])]}
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("t1", "Loose", {"a": "b"})], [text("done")]]),
                                     tools=[loose], cwd=tmp_path, hooks=hooks, **options))
    return r, ran


@pytest.mark.parametrize("kind", ["lock", "set", "loop", "nan"])
def test_a_python_hooks_rewrite_that_is_not_json_data_is_refused(tmp_path: Path, kind: str) -> None:
    def pre(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                       "updatedInput": {**data["tool_input"], "extra": odd(kind)}}}

    r, ran = run(tmp_path, hooks={"PreToolUse": [lw.HookMatcher("Loose", [pre])]})
    assert r.subtype == "success" and r.result == "done", (r.subtype, r.errors)
    result = r.messages[2]["content"][0]
    assert result.get("is_error") and "not JSON data" in result_text(result), result
    assert ran == []


def test_an_in_place_edit_that_is_not_json_data_is_refused(tmp_path: Path) -> None:
    def pre(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> None:
        data["tool_input"]["extra"] = data["tool_input"]  # (it holds itself)

    r, ran = run(tmp_path, hooks={"PreToolUse": [lw.HookMatcher("Loose", [pre])]})
    assert r.subtype == "success" and ran == [], (r.subtype, r.errors)
    assert "not JSON data" in result_text(r.messages[2]["content"][0])


@pytest.mark.parametrize("kind", ["lock", "loop"])
def test_a_can_use_tool_rewrite_that_is_not_json_data_is_refused(tmp_path: Path, kind: str) -> None:
    def ask(name: str, x: dict[str, Any]) -> lw.Allow:
        return lw.Allow({**x, "extra": odd(kind)})

    r, ran = run(tmp_path, can_use_tool=ask, permission_mode="default")
    assert r.subtype == "success" and r.result == "done", (r.subtype, r.errors)
    result = r.messages[2]["content"][0]
    assert result.get("is_error") and "not JSON data" in result_text(result), result
    assert ran == []


@pytest.mark.parametrize("updated", [["rm", "-rf"], "echo other", 5], ids=["list", "str", "int"])
def test_a_rewrite_that_is_not_an_object_is_refused_not_passed_over(tmp_path: Path, updated: Any) -> None:
    """A can_use_tool answer whose updated input is JSON but no object (a tool's input is one): it
    is refused by the gate, naming the answer (it reached the tool, whose schema check blamed the
    model: "Invalid input for tool Loose"), as a rewrite that is not JSON data is."""
    def ask(name: str, x: dict[str, Any]) -> lw.Allow:
        return lw.Allow(updated)

    r, ran = run(tmp_path, can_use_tool=ask, permission_mode="default")
    assert r.subtype == "success" and r.result == "done", (r.subtype, r.errors)
    result = r.messages[2]["content"][0]
    assert result.get("is_error") and "not an object" in result_text(result), result
    assert ran == []


def test_a_permission_request_hooks_rewrite_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    """A PermissionRequest hook's allow with an updatedInput that is no object: it was passed over
    and the call ran with the model's input (a hook that meant to rewrite it got it run as written)."""
    def answer(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                       "decision": {"behavior": "allow", "updatedInput": ["safer"]}}}

    r, ran = run(tmp_path, hooks={"PermissionRequest": [lw.HookMatcher("Loose", [answer])]}, permission_mode="default")
    assert r.subtype == "success" and r.result == "done", (r.subtype, r.errors)
    result = r.messages[2]["content"][0]
    assert result.get("is_error") and "updatedInput is a list, not an object" in result_text(result), result
    assert ran == []
