"""Permission rule specifiers as Claude Code writes them (issue 42): `Tool(param:value)` matches the
call's parameter (`Agent(model:opus)`), and every form it documents (`Bash(npm run test:*)`,
`Bash(git diff *)`, `Read(//abs/**)`, `Read(~/x)`, `Edit(/proj/**)`, `WebFetch(domain:host)`,
`mcp__server`, `mcp__server__tool`, `mcp__server__*`) keeps working; a rule Claude Code refuses
is refused with one line naming it (an allow rule left out, a deny/ask rule stopping the run)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.gate import Permissions, Rule
from loopwright.gate.rules import input_matches
from loopwright.settings import SettingsError, load_settings
from tests.helpers import cli_env, loopwright_cmd, text, use, write_script


def decide(p: Permissions, name: str, x: dict[str, Any], read_only: bool = False) -> str:
    return p.evaluate(name, x, read_only).kind


@pytest.mark.parametrize("spec,x,hit", [
    ("model:opus", {"model": "opus", "prompt": "p"}, True),
    ("model:opus", {"model": "sonnet"}, False),
    ("model:opus", {"prompt": "model:opus"}, False),  # a parameter rule never reads another parameter
    ("model:op*", {"model": "opus"}, True),
    ("subagent_type:Explore", {"subagent_type": "Explore"}, True),
    ("run_in_background:true", {"run_in_background": True}, True),
])
def test_param_value_specifiers(spec: str, x: dict[str, Any], hit: bool) -> None:
    assert input_matches(spec, "Agent", x) is hit


def test_param_rules_in_the_gate_deny_ask_allow(tmp_path: Path) -> None:
    p = Permissions("default", allowed_tools=["Agent(subagent_type:Explore)"], disallowed_tools=["Agent(model:opus)"],
                    ask_tools=["Agent(model:sonnet)"], cwd=tmp_path)
    assert decide(p, "Agent", {"prompt": "x", "model": "opus", "subagent_type": "Explore"}) == "deny"
    assert decide(p, "Agent", {"prompt": "x", "model": "sonnet", "subagent_type": "Explore"}) == "ask"
    assert decide(p, "Agent", {"prompt": "x", "subagent_type": "Explore"}) == "allow"


def test_claude_codes_documented_forms_parse(tmp_path: Path) -> None:
    for text_ in ["Bash", "Bash(npm run test:*)", "Bash(git diff *)", "Read(//etc/**)", "Read(~/notes/**)",
                  "Edit(/src/**)", "Edit(./docs/*.md)", "Read(*.env)", "WebFetch(domain:example.com)",
                  "WebFetch(domain:*.google.com)", "WebSearch(claude ai)", "mcp__github", "mcp__github__get_issue",
                  "mcp__github__*", "Agent(model:opus)", "Agent(Explore)"]:
        Rule.parse(text_)
    p = Permissions("default", allowed_tools=["mcp__github__get_*", "WebFetch(domain:*.example.com)"], cwd=tmp_path)
    assert decide(p, "mcp__github__get_issue", {}) == "allow" and decide(p, "mcp__github__delete", {}) != "allow"
    assert decide(p, "WebFetch", {"url": "https://api.example.com/x", "prompt": "p"}, True) == "allow"


@pytest.mark.parametrize("rule,needle", [
    ("mcp__github(issues)", "MCP rules take no pattern"),
    ("WebFetch(https://example.com)", "not a URL"),
    ("WebFetch(example.com)", '"domain:" prefix'),
    ("WebSearch(claude*)", "no wildcards"),
    ("Bash(:*)", "prefix before :* is empty"),
    ("Read(src:*)", "for Bash prefix rules"),
    ("Bash(ls", "malformed permission rule"),
])
def test_a_rule_claude_code_refuses_is_refused_by_name(rule: str, needle: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="permission rule") as e:
        Rule.parse(rule)
    assert needle in str(e.value) and rule in str(e.value)
    # in a settings file: an allow rule is one warning line and left out; a deny rule stops the run
    s = load_settings(tmp_path, [], extra={"permissions": {"allow": [rule, "Read"]}})
    assert [str(r) for r in s.allow] == ["Read"] and len(s.warnings) == 1 and rule in s.warnings[0]
    with pytest.raises(SettingsError, match="stops the run"):
        load_settings(tmp_path, [], extra={"permissions": {"deny": [rule]}})


@pytest.mark.e2e
def test_the_cli_names_an_unreadable_allow_rule_and_runs(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["WebFetch(example.com)"]}}))
    r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", write_script(tmp_path, [[text("done")]]),
                        "--claude-settings"], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "done" in r.stdout
    assert len([x for x in r.stderr.splitlines() if "WebFetch(example.com)" in x]) == 1


def test_a_deny_param_rule_stops_the_subagent_call(tmp_path: Path) -> None:
    model = lw.ScriptedModel([[use("a1", "Agent", description="d", prompt="sub", model="opus")], [text("ok")]])
    from loopwright.agents import make_agent_tool

    r = lw.run("go", lw.AgentOptions(model=model, tools=[make_agent_tool()], cwd=tmp_path,
                                     disallowed_tools=["Agent(model:opus)"]))
    result = r.messages[2]["content"][0]
    assert result["is_error"] and "Agent(model:opus)" in json.dumps(result)
