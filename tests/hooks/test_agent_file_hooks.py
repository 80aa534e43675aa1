"""`hooks` in an agent file's front matter (Claude Code's `.claude/agents/*.md`, issue 42): they fire
only while that agent runs, its Stop hooks as SubagentStop; a project agent's hooks are commands of
the workspace, so an untrusted workspace's are named as ignored and never run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.agentfiles import find_agent_files
from loopwright.tools.builtin import default_tools
from tests.helpers import text, use


def agent_file(proj: Path, log: Path) -> None:
    d = proj / ".claude" / "agents"
    d.mkdir(parents=True)
    (d / "linter.md").write_text(f"""---
name: linter
description: lints
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "cat >> {log}; echo >> {log}"
  Stop:
    - hooks:
        - type: command
          command: "cat >> {log}; echo >> {log}"
---
You lint.
""")


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []


def test_agent_hooks_fire_only_while_it_runs(tmp_path: Path) -> None:
    proj, log = tmp_path / "proj", tmp_path / "log"
    proj.mkdir()
    agent_file(proj, log)
    from loopwright.agents import make_agent_tool

    turns = [[use("m1", "Bash", command="echo main")],  # the main thread's Bash: not the agent's hook
             [use("a1", "Agent", description="d", prompt="lint", subagent_type="linter")],
             [use("s1", "Bash", command="echo sub")], [text("linted")],  # the subagent
             [text("done")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[*default_tools(), make_agent_tool()],
                                     cwd=proj, setting_sources=["project"], permission_mode="bypassPermissions"))
    assert r.result == "done", r
    seen = logged(log)
    assert [(x["hook_event_name"], x.get("tool_input", {}).get("command"), x.get("agent_type")) for x in seen] == [
        ("PreToolUse", "echo sub", "linter"), ("SubagentStop", None, "linter")]


def test_an_untrusted_projects_agent_hooks_are_named_and_not_run(tmp_path: Path) -> None:
    proj, log = tmp_path / "proj", tmp_path / "log"
    proj.mkdir()
    agent_file(proj, log)
    found = find_agent_files(proj, ["project"], trusted=False)
    assert found.agents["linter"].hooks is None
    assert any("hooks of agent 'linter'" in i.line() for i in found.ignored)
    trusted = find_agent_files(proj, ["project"], trusted=True)
    assert set(trusted.agents["linter"].hooks or {}) == {"PreToolUse", "SubagentStop"}
    assert not found.warnings and os.path.exists(proj / ".claude" / "agents" / "linter.md")


def test_bad_agent_hooks_are_one_line_and_the_agent_still_loads(tmp_path: Path) -> None:
    d = tmp_path / ".claude" / "agents"
    d.mkdir(parents=True)
    (d / "x.md").write_text("---\nname: x\ndescription: x\nhooks:\n  Bogus:\n    - hooks: []\n  Stop: 3\n---\nBody\n")
    found = find_agent_files(tmp_path, ["project"], trusted=True)
    assert "x" in found.agents and found.agents["x"].hooks is None
    assert any("Bogus" in w for w in found.warnings) and any("hooks not applied" in w for w in found.warnings)
