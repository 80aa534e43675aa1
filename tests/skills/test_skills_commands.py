"""Skills (skills.py) and custom slash commands (commands.py), checked in what the loopback
server saw through the real CLI: only names and descriptions up front, a skill's body when the
model calls Skill; a command file as the -p prompt with its arguments, model and tools."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.commands import expand, find_commands
from loopwright.skills import find_skills, split_front_matter
from loopwright.testing import ScriptedServer
from tests.helpers import loopwright_cmd, text, use


def write_skill(folder: Path, text: str) -> Path:
    """A skill folder with its SKILL.md; returns the folder."""
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    return folder


def make_project(tmp: Path) -> Path:
    proj = tmp / "proj"
    sk = write_skill(proj / ".loopwright" / "skills" / "release-notes",
                     "---\nname: release-notes\ndescription: Write release notes from git log\n"
                     "allowed-tools: Bash(git log:*), Read\n---\n# Release notes\nBODY-SECRET: group by type.\n")
    (sk / "template.md").write_text("## Added\n")
    other = proj / ".claude" / "skills" / "pdf"
    other.mkdir(parents=True)
    (other / "SKILL.md").write_text("---\nname: pdf\ndescription: \"Fill PDF forms\"\n---\nPDF-BODY\n")
    bad = proj / ".claude" / "skills" / "broken"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("no front matter here\n")
    cmds = proj / ".claude" / "commands"
    (cmds / "git").mkdir(parents=True)
    (cmds / "review.md").write_text("---\ndescription: Review a file\nallowed-tools: Read\nmodel: claude-haiku-4-5\n---\n"
                                    "Review $1 for $2 issues. All: $ARGUMENTS\n")
    (cmds / "git" / "summary.md").write_text("Summarize the recent commits.\n")
    return proj


def test_front_matter() -> None:
    meta, body = split_front_matter("---\nname: x\ntools: [A, B]\nlist:\n  - one\n  - 'two'\n---\nbody\n")
    assert meta == {"name": "x", "tools": ["A", "B"], "list": ["one", "two"]} and body == "body\n"
    assert split_front_matter("no\n") == (None, "no\n")


def test_skills_found_and_bad_ones_named(tmp_path: Path) -> None:
    proj = make_project(tmp_path)
    skills, warnings = find_skills(proj, ["project"], home=tmp_path / "home")
    assert [s.name for s in skills] == ["release-notes", "pdf"]
    assert skills[0].allowed_tools == ["Bash(git log:*)", "Read"]
    assert len(warnings) == 1 and "broken/SKILL.md: no front matter" in warnings[0]
    assert find_skills(proj, [], home=tmp_path / "home") == ([], [])


@pytest.mark.e2e
def test_skill_progressive_disclosure_through_the_cli(tmp_path: Path) -> None:
    proj = make_project(tmp_path)
    turns = [[use("s1", "Skill", skill="release-notes")], [text("done")]]
    with ScriptedServer(turns) as srv:
        env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test"}
        r = subprocess.run([*loopwright_cmd(), "-p", "write release notes", "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--allowedTools", "Skill(release-notes)"],  # (its allowed-tools: asked about, as in CC)
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "broken/SKILL.md: no front matter" in r.stderr
        first, second = srv.loop_requests
    tool = next(t for t in first.body["tools"] if t["name"] == "Skill")
    assert "- release-notes: Write release notes from git log" in tool["description"]
    assert "- pdf: Fill PDF forms" in tool["description"]
    assert "BODY-SECRET" not in json.dumps(first.body), "only names and descriptions up front"
    result = second.body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error")
    content = json.dumps(result["content"])
    assert "BODY-SECRET" in content and "template.md" in content and "PDF-BODY" not in content
    assert first.body["tools"] == second.body["tools"], "tool definitions byte-stable"


def test_unknown_skill_is_an_is_error_result(tmp_path: Path) -> None:
    proj = make_project(tmp_path)
    seen: list[Any] = []

    def model(h: list[dict[str, Any]]) -> Any:
        seen.append(h[-1])
        return [use("s1", "Skill", skill="nope")] if len(h) == 1 else [text("ok")]

    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(model), cwd=proj, setting_sources=["project"]))
    assert r.subtype == "success"
    res = seen[-1]["content"][0]
    assert res["is_error"] and "Unknown skill 'nope'" in json.dumps(res) and "release-notes" in json.dumps(res)


def test_command_expansion(tmp_path: Path) -> None:
    proj = make_project(tmp_path)
    cmds = find_commands(proj, ["project"], home=tmp_path / "home")
    assert sorted(cmds) == ["git:summary", "review"]
    ex = expand('/review app.py "security and style"', cmds)
    assert ex is not None and ex.prompt == "Review app.py for security and style issues. All: app.py \"security and style\""
    assert ex.model == "claude-haiku-4-5" and ex.allowed_tools == ["Read"]
    ex = expand("/git:summary last week", cmds)
    # (unplaced: after "ARGUMENTS:", as Claude Code 2.1.332; test_command_arguments_inert compares them)
    assert ex is not None and ex.prompt == "Summarize the recent commits.\n\n\nARGUMENTS: last week"
    assert expand("/etc/hosts is broken", cmds) is None and expand("/nope", cmds) is None


@pytest.mark.e2e
def test_command_as_the_p_prompt(tmp_path: Path) -> None:
    proj = make_project(tmp_path)
    (proj / "app.py").write_text("print(1)\n")
    turns = [[use("r1", "Read", file_path=str(proj / "app.py"))], [text("looks fine")]]
    with ScriptedServer(turns) as srv:
        env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test"}
        r = subprocess.run([*loopwright_cmd(), "-p", "/review app.py bug", "--model", "claude-sonnet-4-5", "--output-format", "json"],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        first = srv.loop_requests[0].body
    assert first["model"] == "claude-haiku-4-5", "the command's model"
    assert first["messages"][0]["content"][-1]["text"] == "Review app.py for bug issues. All: app.py bug"
    out = json.loads(r.stdout)
    assert out["subtype"] == "success" and not out["permission_denials"], "its allowed-tools (Read) allowed"


# --- a skill's allowed-tools, a command's allowed-tools and model in the interactive mode ---------

def skill_project(tmp: Path) -> Path:
    proj = tmp / "proj"
    write_skill(proj / ".loopwright" / "skills" / "scaffold",
                "---\nname: scaffold\ndescription: Create project files\nallowed-tools: Bash(touch *)\n---\nTouch the files.\n")
    return proj


def skill_turns(proj: Path) -> list[Any]:
    touch = {"command": "touch made.txt", "description": "create a file"}
    return [[use("b1", "Bash", touch)], [use("s1", "Skill", skill="scaffold")],
            [use("b2", "Bash", touch), use("b3", "Bash", {"command": "touch secret.txt"})], [text("done")]]


def test_an_active_skills_allowed_tools_are_allowed_without_asking(tmp_path: Path) -> None:
    proj = skill_project(tmp_path)
    asked: list[str] = []

    def ask(name: str, x: dict[str, Any]) -> bool:
        asked.append(x.get("command", name))
        return name == "Skill"  # (loading it, which grants its allowed-tools, is asked about: yes)

    from loopwright.tools.builtin import default_tools

    r = lw.run("scaffold it", lw.AgentOptions(
        model=lw.ScriptedModel(skill_turns(proj)), tools=default_tools(), cwd=proj, setting_sources=["project"],
        can_use_tool=ask, disallowed_tools=["Bash(touch secret*)"]))
    assert r.subtype == "success"
    before, loaded, after = r.messages[2]["content"], r.messages[4]["content"], r.messages[6]["content"]
    assert before[0]["is_error"] and asked[0] == "touch made.txt", "before the skill: asked, refused"
    loaded_text = loaded[0]["content"] if isinstance(loaded[0]["content"], str) else loaded[0]["content"][0]["text"]
    assert "allowed without asking from now on): Bash(touch *)" in loaded_text
    assert not after[0].get("is_error") and (proj / "made.txt").exists(), "after it: allowed without asking"
    assert after[1]["is_error"] and not (proj / "secret.txt").exists(), "a deny rule still wins"
    assert asked == ["touch made.txt", "Skill"]


@pytest.mark.e2e
def test_skill_allowed_tools_through_the_cli(tmp_path: Path) -> None:
    proj = skill_project(tmp_path)
    with ScriptedServer(skill_turns(proj)) as srv:
        env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test"}
        r = subprocess.run([*loopwright_cmd(), "-p", "scaffold it", "--model", "claude-sonnet-4-5", "--output-format",
                            "json", "--disallowedTools", "Bash(touch secret*)", "--allowedTools", "Skill(scaffold)"],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [d["tool_use_id"] for d in out["permission_denials"]] == ["b1", "b3"]
    assert (proj / "made.txt").exists() and not (proj / "secret.txt").exists()


def test_interactive_custom_command_applies_its_allowed_tools_and_model_for_that_turn(tmp_path: Path) -> None:
    import asyncio
    import io

    from loopwright.cli.interactive import Repl
    from loopwright.cli.render import TraceRenderer
    from loopwright.tools.builtin import default_tools

    proj = make_project(tmp_path)
    (proj / ".claude" / "commands" / "mk.md").write_text(
        "---\ndescription: Make a file\nallowed-tools: Bash(touch *)\nmodel: claude-haiku-4-5\n---\nMake $1.\n")
    turns = [[use("b1", "Bash", command="touch made.txt")], [text("made")],
             [use("b2", "Bash", command="touch again.txt")], [text("refused")]]
    with ScriptedServer(turns) as srv:
        options = lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="test", tools=default_tools(),
                                  cwd=proj, setting_sources=["project"], max_retries=0)

        async def go() -> list[Any]:
            repl = Repl(options)
            repl.renderer = TraceRenderer(io.StringIO(), spinner=False)
            repl.client.options = replace(repl.client.options, can_use_tool=lambda name, x: False)  # no one to ask
            assert await repl.command("/mk made.txt")
            while repl.client.running:  # the run's task ends just after its result was shown
                await asyncio.sleep(0.01)
            await repl.run_turn("and again.txt")  # a plain turn: the command's settings are gone
            return repl.client.results

        results = asyncio.run(go())
        models = [q.body["model"] for q in srv.loop_requests]
    assert models == ["claude-haiku-4-5", "claude-haiku-4-5", "claude-sonnet-4-5", "claude-sonnet-4-5"]
    assert not results[0].permission_denials and (proj / "made.txt").exists(), "the command's Bash(touch *)"
    assert [d["tool_use_id"] for d in results[1].permission_denials] == ["b2"] and not (proj / "again.txt").exists()
