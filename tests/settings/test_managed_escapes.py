"""Ways around managed settings that loopwright closes, each seen run against Claude Code 2.1.332
(/etc/claude-code through a private mount, as test_managed.py's side-by-side test does): an agent
file's own `hooks` do not run under a managed allowManagedHooksOnly or disableAllHooks (Claude Code
ran neither the agent's hook nor the project's; loopwright ran the agent's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loopwright as lw
from tests.helpers import bash, text, use


@pytest.mark.parametrize("policy", [{"allowManagedHooksOnly": True}, {"disableAllHooks": True}, {}])
def test_an_agent_files_hooks_do_not_run_under_managed_hooks_switches(managed: Path, tmp_path: Path,
                                                                     policy: dict[str, bool]) -> None:
    (managed / "managed-settings.json").write_text(json.dumps(policy))
    proj, agents = tmp_path / "proj", Path.home() / ".claude" / "agents"
    proj.mkdir()
    agents.mkdir(parents=True)
    (agents / "helper.md").write_text(f"---\nname: helper\ndescription: helps\nhooks:\n  PreToolUse:\n    - matcher: Bash\n"
                                      f"      hooks:\n        - type: command\n          command: touch {proj}/hook-ran\n"
                                      "---\nYou help.\n")
    from loopwright.agents import make_agent_tool
    from loopwright.tools.builtin import default_tools

    turns = [[use("a1", "Agent", subagent_type="helper", description="d", prompt="run echo")], [bash("echo hi", "b1")],
             [text("sub done")], [text("done")]]
    lines: list[str] = []
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[*default_tools(), make_agent_tool({})],
                                     cwd=proj, setting_sources=["user"], claude_settings=True, allowed_tools=["Bash"],
                                     stderr=lines.append))
    assert r.subtype == "success" and "sub done" in json.dumps(r.messages), r.messages
    said = [w for w in lines if "helper" in w and "hooks" in w]
    if not policy:  # (the setup's check: without the switches, the agent's hook runs)
        assert (proj / "hook-ran").exists() and not said
        return
    assert not (proj / "hook-ran").exists()
    assert said and next(iter(policy)) in said[0], lines
