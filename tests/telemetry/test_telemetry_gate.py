"""The gate's verdict on execute_tool spans (issue 26): which rule decided a call and where the
rule came from, exported by the real OTLP exporter to the loopback receiver (opentelemetry-proto),
for a call allowed by a rule, a call an ask rule asked about that the callback then allowed, and
a call a deny rule refused; beside them, the same verdicts straight from the gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.gate import Permissions, Rule
from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, text, use

APP = r'''
import json, sys
import loopwright as lw

url, cwd = sys.argv[1:3]
asked = []

def can_use_tool(name, tool_input):
    asked.append(tool_input["command"])
    return lw.Allow()

r = lw.run("tidy up", lw.AgentOptions(model="claude-sonnet-4-6", base_url=url, api_key="k", cwd=cwd,
                                      permission_mode="default", allowed_tools=["Bash(touch:*)"],
                                      setting_sources=["project", "local"], can_use_tool=can_use_tool,
                                      tools=lw.default_tools()))
print(json.dumps({"subtype": r.subtype, "asked": asked, "denied": [d["tool_input"] for d in r.permission_denials]}))
'''


@pytest.mark.e2e
def test_the_execute_tool_span_names_the_rule_that_decided_and_its_source(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed (pip install 'loopwright[otel]')")
    from loopwright.testing.otlp import OtlpReceiver

    deep = "/".join(["d" * 60] * 5)
    ask_rule = f"Bash(mkdir -p {deep})"  # a long rule: the attribute is cut short
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"permissions": {"ask": [ask_rule]}}))
    (tmp_path / ".loopwright" / "settings.local.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    turns = [[use("t1", "Bash", command="touch a.txt")], [use("t2", "Bash", command=f"mkdir -p {deep}")],
             [use("t3", "Bash", command="rm -f a.txt")], [text("done")]]
    script = tmp_path / "app.py"
    script.write_text(APP)
    with ScriptedServer(turns) as srv, OtlpReceiver() as rx:
        r = subprocess.run([sys.executable, str(script), srv.url, str(tmp_path)], env=cli_env(**rx.env(metrics=False)),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert rx.wait(lambda x: sum(s.name == "execute_tool Bash" for s in x.spans) == 3, 10), rx.spans
    out = json.loads(r.stdout)
    assert out["subtype"] == "success" and out["asked"] == [f"mkdir -p {deep}"] and out["denied"] == [{"command": "rm -f a.txt"}]
    assert (tmp_path / "a.txt").exists() and (tmp_path / deep).is_dir()  # touched and made; the rm was refused
    spans = {s.attributes["gen_ai.tool.call.id"]: s.attributes for s in rx.spans if s.name == "execute_tool Bash"}
    got = {k: (a["loopwright.permission.decision"], a["loopwright.permission.via"], a["loopwright.permission.rules"],
               a.get("loopwright.permission.rule"), a["loopwright.permission.rule_source"]) for k, a in spans.items()}
    assert got == {
        "t1": ("allow", "rules", "allow", "Bash(touch:*)", "cli"),  # AgentOptions.allowed_tools
        "t2": ("allow", "ask", "ask", ask_rule[:255] + "…", "project"),  # .loopwright/settings.json asked; the callback allowed
        "t3": ("deny", "rules", "deny", "Bash(rm:*)", "local"),  # .loopwright/settings.local.json refused it
    }
    assert "a.txt" not in json.dumps(list(spans.values()))  # the rule is named, the call's arguments are not


def test_a_verdict_names_the_rule_or_what_else_decided(tmp_path: Path) -> None:
    user = Rule.parse("Bash(git status:*)", source="user")
    p = Permissions("default", [user, "Bash(make:*)"], ["Edit(./secret/**)"], cwd=tmp_path)
    v = p.evaluate("Bash", {"command": "git status && make test"})
    assert (v.kind, v.rule, v.source) == ("allow", "Bash(git status:*), Bash(make:*)", "user")
    v = p.evaluate("Write", {"file_path": "secret/k"})
    assert (v.kind, v.rule, v.source) == ("deny", "Edit(./secret/**)", "cli")
    assert (p.evaluate("Read", {"file_path": "a.py"}, True).source, p.evaluate("Read", {"file_path": "a.py"}).rule) == (
        "default", None)  # read-only inside the working directory: the gate's own default
    v = Permissions("acceptEdits", cwd=tmp_path).evaluate("Write", {"file_path": "a.py"})
    assert (v.kind, v.rule, v.source) == ("allow", "acceptEdits", "mode")
    v = Permissions("bypassPermissions", cwd=tmp_path).evaluate("Bash", {"command": "rm -rf x"})
    assert (v.kind, v.rule, v.source) == ("allow", "bypassPermissions", "mode")
    v = Permissions("plan", cwd=tmp_path).evaluate("Write", {"file_path": "a.py"})
    assert (v.kind, v.rule, v.source) == ("deny", "plan", "mode")
    v = Permissions("default", cwd=tmp_path).evaluate("Bash", {"command": "make"}, hook_decision="allow")
    assert (v.kind, v.source) == ("allow", "hook")
    v = Permissions("default", ask_tools=["Bash(make:*)"], cwd=tmp_path).evaluate("Bash", {"command": "make"})
    assert (v.kind, v.rule, v.source) == ("ask", "Bash(make:*)", "cli")
    v = Permissions("default", cwd=tmp_path).evaluate("Bash", {"command": "make"})
    assert (v.kind, v.rule, v.source) == ("ask", None, "default")


def test_a_skills_grant_is_a_session_rule(tmp_path: Path) -> None:
    from loopwright.workspace import ToolState

    state = ToolState()
    p = Permissions("default", cwd=tmp_path, tool_state=state)
    assert p.evaluate("Bash", {"command": "make"}).kind == "ask"
    state.grants.add(["Bash(make:*)"])  # what the Skill tool does when a skill is loaded
    v = p.evaluate("Bash", {"command": "make"})
    assert (v.kind, v.rule, v.source) == ("allow", "Bash(make:*)", "session")
