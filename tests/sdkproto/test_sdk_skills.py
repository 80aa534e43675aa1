"""Skills and custom commands in an Agent SDK session (issue 42's gaps), through the official
Python SDK with loopwright as its CLI and, where it is installed, with Claude Code 2.1.332 on the
same files: what the init message lists (`slash_commands`, `skills`) and the initialize answer
(`get_server_info()["commands"]`), and `/skill args` / `/plugin:skill args` typed as a prompt,
with the user's skills in Claude Code's own `~/.claude/skills`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import text
from tests.sdkproto.test_sdk_protocol import CLIS, collect, options

sdk = pytest.importorskip("claude_agent_sdk")
pytestmark = pytest.mark.e2e


def skill(folder: Path, name: str, more: str = "", body: str = "") -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d {name}\n{more}---\n"
                                            f"{body or f'Body of {name}.'}\n")


def command(folder: Path, name: str, more: str = "") -> None:
    path = folder / (name.replace(":", "/") + ".md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndescription: c {name}\n{more}---\nCommand {name}: $ARGUMENTS\n")


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project, a HOME and a plugin with skills and commands whose names do not sort in the
    order they are made; (project, home, plugin)."""
    proj, home, plug = tmp_path / "proj", tmp_path / "home", tmp_path / "plug"
    for name in ("zu", "au"):
        skill(home / ".claude" / "skills", name)
    for name in ("zp", "ap"):
        skill(proj / ".claude" / "skills", name)
    skill(proj / ".claude" / "skills", "hidden", "user-invocable: false\n")
    skill(proj / ".claude" / "skills", "probe", "allowed-tools: Bash(echo:*)\n", "Probe body !`echo SKILL-OUT` end.")
    for name in ("zc", "ac", "mid:deep"):
        command(proj / ".claude" / "commands", name)
    command(proj / ".claude" / "commands", "ap")  # a command of a skill's name: listed once
    command(proj / ".claude" / "commands", "hinted", "argument-hint: [file] [mode]\n")
    for name in ("zuc", "auc"):
        command(home / ".claude" / "commands", name)
    (plug / ".claude-plugin").mkdir(parents=True)
    (plug / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "plug", "version": "1.0.0"}))
    for name in ("zps", "aps"):
        skill(plug / "skills", name)
    for name in ("zpc", "apc"):
        command(plug / "commands", name)
    return proj, home, plug


OURS = ["au", "zu", "ap", "probe", "zp", "ac", "auc", "hinted", "mid:deep", "zc", "zuc", "plug:apc", "plug:zpc",
        "plug:aps", "plug:zps"]
SKILLS = ["au", "zu", "ap", "probe", "zp", "plug:aps", "plug:zps"]


def session_options(cli: str, srv: ScriptedServer, proj: Path, home: Path, plug: Path) -> Any:
    return options(cli, srv, proj, plugins=[{"type": "local", "path": str(plug)}], setting_sources=["user", "project"],
                   env={"HOME": str(home)})


@pytest.mark.parametrize("cli", CLIS)
def test_the_init_message_and_initialize_list_skills_and_commands_as_claude_codes(cli: str, tmp_path: Path) -> None:
    """Claude Code's order: the user's skills, the project's (each by name), the commands of both
    together by name, the plugins' commands, then its skills; `user-invocable: false` unlisted.
    (Claude Code lists its own built-in skills and commands among them: only ours are compared.)"""
    proj, home, plug = setup(tmp_path)

    async def go(srv: ScriptedServer) -> tuple[list[Any], dict[str, Any]]:
        async with sdk.ClaudeSDKClient(session_options(cli, srv, proj, home, plug)) as client:
            info = await client.get_server_info()
            await client.query("hi")
            return [m async for m in client.receive_response()], info

    with ScriptedServer([[text("done")]]) as srv:
        msgs, info = asyncio.run(go(srv))
    init = next(m for m in msgs if isinstance(m, sdk.SystemMessage) and m.subtype == "init").data
    ours = set(OURS) | {"hidden"}
    assert [n for n in init["slash_commands"] if n in ours] == OURS, cli
    assert [n for n in init["skills"] if n in ours] == SKILLS, cli
    listed = {c["name"]: c for c in info["commands"] if c["name"] in ours}
    assert list(listed) == OURS, cli
    assert (listed["au"]["description"], listed["ap"]["description"], listed["auc"]["description"]) == (
        "d au (user)", "d ap (project)", "c auc (user)"), cli
    assert (listed["plug:apc"]["description"], listed["plug:aps"]["description"]) == ("(plug) c apc", "(plug) d aps"), cli
    assert listed["hinted"]["argumentHint"] == "[file] [mode]", cli
    if cli == "loopwright":  # nothing of its own besides them
        assert init["slash_commands"] == OURS and init["skills"] == SKILLS


@pytest.mark.parametrize("cli", CLIS)
@pytest.mark.parametrize(("prompt", "expanded"), [
    ("/au some args", "Base directory for this skill: {home}/.claude/skills/au\n\nBody of au.\n\n\nARGUMENTS: some args"),
    ("/probe x y", "Base directory for this skill: {proj}/.claude/skills/probe\n\nProbe body SKILL-OUT end.\n\n\n"
                   "ARGUMENTS: x y"),
    ("/plug:aps z", "Base directory for this skill: {plug}/skills/aps\n\nBody of aps.\n\n\nARGUMENTS: z"),
    ("/auc w", "Command auc: w"),
])
def test_a_skill_or_command_typed_in_an_sdk_session_expands(cli: str, tmp_path: Path, prompt: str,
                                                            expanded: str) -> None:
    """`/skill args` (the user's from ~/.claude/skills, the project's with its inline shell), a
    plugin's `/plugin:skill args` and the user's ~/.claude/commands command: the model is sent the
    expansion, as Claude Code sends it."""
    proj, home, plug = setup(tmp_path)
    (proj / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(echo:*)"]}}))
    with ScriptedServer([[text("done")]]) as srv:
        msgs = asyncio.run(collect(prompt, session_options(cli, srv, proj, home, plug)))
        content = srv.loop_requests[-1].body["messages"][-1]["content"]
    said = [b["text"] for b in content if b.get("type") == "text"] if isinstance(content, list) else [content]
    want = expanded.format(home=home, proj=proj, plug=plug.resolve())
    assert any(t.strip() == want.strip() for t in said), (cli, said)
    assert isinstance(msgs[-1], sdk.ResultMessage) and msgs[-1].result == "done", cli


@pytest.mark.parametrize("cli", CLIS)
def test_a_skill_only_claude_may_invoke_is_refused_when_typed(cli: str, tmp_path: Path) -> None:
    """`user-invocable: false`: `/hidden x` makes no model call; Claude Code's words are the answer."""
    proj, home, plug = setup(tmp_path)
    with ScriptedServer([[text("never sent")]]) as srv:
        msgs = asyncio.run(collect("/hidden x", session_options(cli, srv, proj, home, plug)))
        calls = len(srv.loop_requests)
    said = 'This skill can only be invoked by Claude, not directly by users. Ask Claude to use the "hidden" skill for you.'
    result = msgs[-1]
    assert isinstance(result, sdk.ResultMessage) and calls == 0, cli
    assert (result.subtype, result.is_error, result.result) == ("success", False, said), cli
    (answer,) = [m for m in msgs if isinstance(m, sdk.AssistantMessage)]
    assert answer.model == "<synthetic>" and [b.text for b in answer.content] == [said], cli
