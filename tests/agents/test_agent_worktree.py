"""A subagent in a worktree of its own (issue 42): the Agent tool's `isolation: "worktree"` and an
agent file's `isolation: worktree`. Claude Code 2.1.332 and loopwright run as CLIs on the same
scripted turns in real git repositories (Claude Code's side is skipped when it is not installed:
the expectations are what it did)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.agents import make_agent_tool
from loopwright.blocks import ToolResultBlock
from loopwright.options import AgentDefinition
from loopwright.tools.builtin import default_tools
from tests.cli.test_cli_worktree import SIDES, git, hooks_log, logger, maker, on, repo, run
from tests.helpers import collect, text, use

pytestmark = pytest.mark.e2e
ISOLATED = use("t1", "Agent", description="iso", prompt="do it", subagent_type="general-purpose",
               isolation="worktree", run_in_background=False)


def t1_result(r: lw.ResultMessage) -> dict[str, Any]:
    """The Agent call's tool_result block in a library run's messages."""
    return next(b for m in r.messages if isinstance(m.get("content"), list) for b in m["content"]
                if b.get("type") == "tool_result" and b.get("tool_use_id") == "t1")


def agent_result(requests: list[Any]) -> str:
    """The Agent call's result text as the parent model got it."""
    for q in requests:
        for b in q.body["messages"][-1]["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == "t1":
                c = b["content"]
                return c if isinstance(c, str) else "".join(x.get("text", "") for x in c if x.get("type") == "text")
    raise AssertionError("no Agent result")


@pytest.mark.parametrize("who", SIDES)
def test_an_unchanged_worktree_is_removed_with_its_branch(tmp_path: Path, who: str) -> None:
    proj = repo(tmp_path / "proj")
    code, err, requests = run(who, proj, [[ISOLATED], [use("s1", "Bash", command="pwd")], [text("sub done")],
                                          [text("done")]], on("SubagentStart", logger(tmp_path)),
                              "--allowedTools", "Bash")
    assert code == 0, err
    pwd = requests[2].body["messages"][-1]["content"][0]["content"]
    pwd = pwd if isinstance(pwd, str) else pwd[0]["text"]
    assert re.match(rf"^{re.escape(str(proj))}/\.claude/worktrees/agent-a[0-9a-f]{{16}}\b", pwd)  # where it ran
    [started] = hooks_log(tmp_path)  # its hooks ran there too
    assert started["pwd"] == started["in"]["cwd"] == pwd.split()[0]
    assert not list((proj / ".claude" / "worktrees").iterdir())  # gone, and its branch too
    assert git(proj, "branch").split() == ["*", "main"] and "worktreePath" not in agent_result(requests)


@pytest.mark.parametrize("who", SIDES)
def test_a_changed_worktree_is_kept_and_named_in_the_result(tmp_path: Path, who: str) -> None:
    proj = repo(tmp_path / "proj")
    code, err, requests = run(who, proj, [[ISOLATED], [use("s1", "Bash", command="echo x > new.txt")],
                                          [text("sub done")], [text("done")]], {}, "--allowedTools", "Bash")
    assert code == 0, err
    [tree] = (proj / ".claude" / "worktrees").iterdir()
    assert re.fullmatch(r"agent-a[0-9a-f]{16}", tree.name)
    assert (tree / "new.txt").read_text() == "x\n" and not (proj / "new.txt").exists()
    result = agent_result(requests)
    assert f"\nworktreePath: {tree}\nworktreeBranch: worktree-{tree.name}\n" in result + "\n"
    assert f"worktree-{tree.name}" in git(proj, "branch")


@pytest.mark.parametrize("who", SIDES)
def test_a_worktree_create_hook_makes_the_subagents_and_it_is_kept(tmp_path: Path, who: str) -> None:
    proj = repo(tmp_path / "proj")
    code, err, requests = run(who, proj, [[ISOLATED], [text("sub done")], [text("done")]],
                              on("WorktreeCreate", maker(tmp_path)))
    assert code == 0, err
    [made] = hooks_log(tmp_path)
    name = made["in"]["name"]
    assert re.fullmatch(r"agent-a[0-9a-f]{16}", name) and made["in"]["cwd"] == str(proj)
    assert (tmp_path / "trees" / name).is_dir() and not (proj / ".claude").exists()
    result = agent_result(requests)
    assert f"worktreePath: {tmp_path / 'trees' / name}" in result and "worktreeBranch" not in result


def test_outside_a_git_repository_the_call_fails_and_says_why(tmp_path: Path) -> None:
    turns = [[ISOLATED], [text("done")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[make_agent_tool()], cwd=tmp_path))
    assert r.subtype == "success"
    result = t1_result(r)
    assert result["is_error"] and "not in a git repository and no WorktreeCreate hooks are configured" in str(
        result["content"])


def test_an_agent_files_isolation_puts_every_run_in_a_worktree(tmp_path: Path) -> None:
    proj = repo(tmp_path / "proj")
    agent = AgentDefinition("edits alone", "You edit.", isolation="worktree")
    turns = [[use("t1", "Agent", description="d", prompt="p", subagent_type="loner")],
             [use("s1", "Write", file_path="new.txt", content="y\n")], [text("sub done")], [text("done")]]
    msgs = collect("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[*default_tools(),
                                                                                make_agent_tool({"loner": agent})],
                                         cwd=proj, permission_mode="acceptEdits"))
    r = msgs[-1]
    assert r.subtype == "success", r.result
    [tree] = (proj / ".claude" / "worktrees").iterdir()
    assert (tree / "new.txt").read_text() == "y\n" and not (proj / "new.txt").exists()
    assert f"worktreePath: {tree}" in str(t1_result(r)["content"])
    # the call's structured output (tool_use_result) names the kept worktree too, as AgentOutput does
    [details] = [b.details for m in msgs if isinstance(m, lw.UserMessage) and not m.parent_tool_use_id
                 for b in m.content if isinstance(b, ToolResultBlock) and b.tool_use_id == "t1"]
    assert (details["worktreePath"], details["worktreeBranch"]) == (str(tree), f"worktree-{tree.name}")
    assert (details["status"], details["agentType"], details["toolsUsed"]) == ("completed", "loner", ["Write"])
    status = subprocess.run(["git", "status", "--porcelain"], cwd=proj, capture_output=True, text=True).stdout
    assert status == "?? .claude/\n"  # the project's own files are untouched (the worktree sits in .claude/)


@pytest.mark.parametrize("tool", ["Write", "Read"])
def test_a_symlink_swapped_in_the_worktree_while_the_user_answers_is_refused(tmp_path: Path, tool: str) -> None:
    """An isolated subagent's file tools open what the gate judged, as the main run's do: the gate
    judges its relative path in its worktree (where the tool opens it), and while the person answers
    the worktree's sub/ becomes a link to outside/. Approved, the call must not write outside/new.txt
    (Write) nor read outside/f.txt (Read, asked about by a rule)."""
    proj, outside = repo(tmp_path / "proj"), tmp_path / "outside"
    (proj / "sub").mkdir()
    (proj / "sub" / "f.txt").write_text("inside\n")
    subprocess.run(["git", "add", "."], cwd=proj, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=n", "commit", "-qm", "sub"], cwd=proj, check=True,
                   capture_output=True)
    outside.mkdir()
    (outside / "f.txt").write_text("SECRET\n")
    x = {"file_path": "sub/new.txt", "content": "WRITTEN\n"} if tool == "Write" else {"file_path": "sub/f.txt"}
    asked: list[str] = []

    def answer(name: str, tool_input: dict[str, Any]) -> lw.Allow:
        asked.append(name)
        [tree] = (proj / ".claude" / "worktrees").iterdir()
        (tree / "sub").rename(tree / "sub.moved")
        (tree / "sub").symlink_to(outside, target_is_directory=True)
        return lw.Allow()

    turns = [[ISOLATED], [use("s1", tool, x)], [text("sub done")], [text("done")]]
    sent: list[str] = []  # each call's last message, as the model got it

    def script(h: list[Any]) -> Any:
        sent.append(json.dumps(h[-1]))
        return turns[len(sent) - 1]

    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(script), tools=[*default_tools(), make_agent_tool()],
                                     cwd=proj, permission_mode="default", can_use_tool=answer,
                                     settings={"permissions": {"ask": ["Read(sub/**)"]}}))
    assert r.subtype == "success", r.result
    assert asked == [tool]
    assert "changed in between" in sent[2] and "SECRET" not in sent[2], sent[2]
    assert sorted(os.listdir(outside)) == ["f.txt"] and (outside / "f.txt").read_text() == "SECRET\n"
