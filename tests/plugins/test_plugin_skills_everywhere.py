"""A plugin's skill typed as `/plugin:skill` expands in every front end that expands commands:
they all take the plugins' folders from plugins.plugin_command_dirs (-p's expansion is compared
with Claude Code's in tests/hooks/test_command_expansion.py); here the interactive mode's and
ACP's own expansion, which left plugin skills out."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import loopwright as lw
from loopwright.acp.agent import expand_command
from loopwright.commands import find_commands
from loopwright.plugins import plugin_command_dirs

SKILL = "---\nname: probe\ndescription: a probe skill\n---\nProbe body.\n"


def plugin(tmp: Path) -> Path:
    plug = tmp / "plug"
    (plug / ".claude-plugin").mkdir(parents=True)
    (plug / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "plug", "version": "1.0.0"}))
    (plug / "skills" / "probe").mkdir(parents=True)
    (plug / "skills" / "probe" / "SKILL.md").write_text(SKILL)
    (plug / "commands").mkdir()
    (plug / "commands" / "hello.md").write_text("Hello $ARGUMENTS.\n")
    return plug


def test_the_plugins_commands_and_skills_folders(tmp_path: Path) -> None:
    plug = plugin(tmp_path)
    options: lw.AgentOptions[Any, Any] = lw.AgentOptions(cwd=tmp_path, plugins=[{"type": "local", "path": str(plug)}])
    extra, skills = plugin_command_dirs(options, tmp_path, [])
    assert [n for _, n in extra] == ["plug"] and [n for _, n in skills] == ["plug"]
    found = find_commands(tmp_path, [], extra=extra, skills=True, plugin_skills=skills)
    assert {"plug:hello", "plug:probe"} <= set(found)


def test_acp_expands_a_plugins_skill_and_command(tmp_path: Path) -> None:
    plug = plugin(tmp_path)
    options: lw.AgentOptions[Any, Any] = lw.AgentOptions(cwd=tmp_path, plugins=[str(plug)])
    session: Any = SimpleNamespace(cwd=str(tmp_path), options=options)
    for line, name in (("/plug:probe some args", "plug:probe"), ("/plug:hello you", "plug:hello")):
        prompt, _, _, ex = expand_command(line, session)
        assert prompt == line and ex is not None and ex.command.name == name, line
        assert ex.command.source == "plugin"
