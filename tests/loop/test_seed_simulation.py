"""The seed's §9.1 reference simulation, reproduced through the public API."""

from __future__ import annotations

from typing import Any

import loopwright as lw
from loopwright.invariant import holds_final
from tests.helpers import text, use


def make_tools(env: dict[str, str]) -> list[lw.Tool]:
    def read(x: dict[str, Any]) -> lw.ToolOutput:
        return lw.ToolOutput(env.get(x["path"], "(no such file)"), is_error=x["path"] not in env)

    def write(x: dict[str, Any]) -> str:
        env[x["path"]] = x["text"]
        return "ok"

    obj = {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
           "required": ["path"]}
    return [lw.Tool("read", "read a file", obj, read, read_only=True), lw.Tool("write", "write a file", obj, write)]


def scripted(h: list[dict[str, Any]]) -> dict[str, Any]:
    k = sum(1 for m in h if m["role"] == "assistant")
    plan = [[use("u1", "read", {"path": "a.py"}), use("u2", "read", {"path": "t.py"})],
            [use("u3", "write", {"path": "a.py", "text": "fixed"})],
            [use("u4", "write", {"path": "/etc/x", "text": "!"})]]
    return {"role": "assistant", "content": plan[k] if k < 3 else [text("done")]}


def forever(h: list[dict[str, Any]]) -> dict[str, Any]:
    k = sum(1 for m in h if m["role"] == "assistant")
    return {"role": "assistant", "content": [use("v%d" % k, "read", {"path": "a.py"})]}


def gate(name: str, x: dict[str, Any]) -> bool:
    return not x["path"].startswith("/etc/")


def run_case(model_fn: Any, T: int | None, B: float | None = None, cost: float | None = None
             ) -> tuple[lw.ResultMessage, dict[str, str]]:
    env = {"a.py": "bug", "t.py": "test"}
    opts = lw.AgentOptions(model=lw.ScriptedModel(model_fn, cost_per_call_usd=cost), tools=make_tools(env),
                           can_use_tool=gate, max_turns=T, max_budget_usd=B)
    return lw.run("fix", opts), env


def line(label: str, r: lw.ResultMessage, env: dict[str, str]) -> str:
    status = "error_max_budget" if r.subtype == "error_max_budget_usd" else r.subtype
    return "%-17s %-15s calls=%d turns=%d len(h)=%d inv=%s a.py=%s" % (
        label, status, r.model_calls, r.num_turns, len(r.messages), holds_final(r.messages), env["a.py"])


EXPECTED = """\
scripted, T=None  success         calls=4 turns=3 len(h)=8 inv=True a.py=fixed
scripted, T=2     error_max_turns calls=3 turns=2 len(h)=5 inv=True a.py=fixed
forever,  T=2     error_max_turns calls=3 turns=2 len(h)=5 inv=True a.py=bug
forever,  T=5     error_max_turns calls=6 turns=5 len(h)=11 inv=True a.py=bug
denied result: denied by permission rule | /etc/x in env: False
budget B=10, cost 3/call: error_max_budget calls=4 spent=12"""


def test_seed_9_1_output_reproduced_exactly() -> None:
    out = []
    for label, model, T in [("scripted, T=None", scripted, None), ("scripted, T=2", scripted, 2),
                            ("forever,  T=2", forever, 2), ("forever,  T=5", forever, 5)]:
        r, env = run_case(model, T)
        out.append(line(label, r, env))
    r, env = run_case(scripted, None)
    denied = r.messages[6]["content"][0]
    assert denied["is_error"] is True and denied["tool_use_id"] == "u4"
    assert r.permission_denials == [{"tool_name": "write", "tool_use_id": "u4",
                                     "tool_input": {"path": "/etc/x", "text": "!"}}]
    # the seed's gate message; ours says the same thing in the SDK's words
    out.append("denied result: denied by permission rule | /etc/x in env: %s" % ("/etc/x" in env))
    r, env = run_case(forever, None, B=10, cost=3)
    out.append("budget B=10, cost 3/call: %s calls=%d spent=%d" % (
        "error_max_budget" if r.subtype == "error_max_budget_usd" else r.subtype, r.model_calls, r.total_cost_usd))
    assert "\n".join(out) == EXPECTED


def test_refusal_message_reaches_model() -> None:
    r, env = run_case(scripted, None)
    assert r.messages[6]["content"][0]["content"] == lw.Deny().message
    assert "/etc/x" not in env
