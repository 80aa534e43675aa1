"""Claude Code's settings files (~/.claude/settings.json, .claude/settings.json,
.claude/settings.local.json) are read only with --claude-settings (AgentOptions(claude_settings=True)).
A run that reads settings files without it names each such file that holds something (its deny rules,
hooks, ...) in one warning line, so a Claude Code user's rules are never dropped in silence
(docs/claude-code-settings.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from tests.conftest import CliRun

HOOK = {"type": "command", "command": "true"}


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def claude_files(proj: Path) -> dict[str, Path]:
    """A user file with 3 deny rules and 2 hooks, a project file with an allow rule and an env
    variable, a local file holding nothing that matters."""
    user = write(Path.home() / ".claude" / "settings.json",
                 {"permissions": {"deny": ["Bash(rm *)", "Bash(curl *)", "Read(./.env)"]},
                  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [HOOK, HOOK]}]}})
    project = write(proj / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(make)"]}, "env": {"A": "1"}})
    local = write(proj / ".claude" / "settings.local.json", {"$schema": "https://json.schemastore.org/claude-code"})
    return {"user": user, "project": project, "local": local}


def init_warnings(proj: Path, **kw: Any) -> list[str]:
    async def go() -> list[str]:
        model = lw.ScriptedModel([[{"type": "text", "text": "ok"}]])
        found: list[str] = []
        async for msg in lw.query("go", lw.AgentOptions(model=model, cwd=proj, **kw)):
            if isinstance(msg, lw.SystemMessage) and msg.subtype == "init":
                found += msg.data.get("warnings") or []
        return found

    import asyncio

    return asyncio.run(go())


def test_library_names_each_unread_file_once(proj: Path) -> None:
    f = claude_files(proj)
    said = [w for w in init_warnings(proj, setting_sources=["user", "project", "local"]) if ".claude" in w]
    assert len(said) == 2, said
    user, project = said
    assert user.startswith(f"{f['user']}: ") and "3 deny rules" in user and "2 hooks" in user
    assert "claude_settings=True" in user
    assert project.startswith(f"{f['project']}: ") and "1 allow rule" in project and "1 env variable" in project
    # a source the run did not ask for is not one it left out; with claude_settings they are read
    assert [w for w in init_warnings(proj, setting_sources=["project"]) if ".claude" in w] == [project]
    assert not [w for w in init_warnings(proj, setting_sources=["user", "project", "local"], claude_settings=True)
                if ".claude" in w]
    # the library's default reads no settings files at all (as the Agent SDK with no settingSources)
    assert not [w for w in init_warnings(proj) if ".claude" in w]


def test_a_file_given_with_settings_is_read_and_not_named(proj: Path) -> None:
    f = claude_files(proj)
    said = [w for w in init_warnings(proj, setting_sources=["user", "project", "local"], settings=str(f["project"]))
            if ".claude" in w]
    assert len(said) == 1 and said[0].startswith(f"{f['user']}: "), said


def test_a_malformed_file_is_named_as_such(proj: Path) -> None:
    path = write(proj / ".claude" / "settings.json", '{"permissions": ')
    said = [w for w in init_warnings(proj, setting_sources=["project"]) if ".claude" in w]
    assert len(said) == 1 and said[0].startswith(f"{path}: ") and "invalid JSON" in said[0], said
    write(proj / ".claude" / "settings.json", "[1]")
    said = [w for w in init_warnings(proj, setting_sources=["project"]) if ".claude" in w]
    assert len(said) == 1 and "not a JSON object" in said[0], said


def test_cli_names_them_once_on_stderr(proj: Path, tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    f = claude_files(proj)
    script = write(tmp_path / "script.json", [[{"type": "text", "text": "hi"}]])
    r = cli(["-p", "go", "--model", f"scripted:{script}"], cwd=proj)
    assert r.code == 0, r.err
    lines = [ln for ln in r.err.splitlines() if ".claude" in ln]
    assert len(lines) == 2, r.err
    assert lines[0] == (f"loopwright: warning: {f['user']}: not read, so its 3 deny rules, 2 hooks are not applied "
                        "(Claude Code's settings files are read with --claude-settings)")
    assert lines[1].startswith(f"loopwright: warning: {f['project']}: ") and "--claude-settings" in lines[1]
    # --claude-settings reads them; --setting-sources '' asks for none: nothing to name
    for flags in (["--claude-settings"], ["--setting-sources", ""]):
        r = cli(["-p", "go", "--model", f"scripted:{script}", *flags], cwd=proj)
        assert r.code == 0 and ".claude" not in r.err, r.err
