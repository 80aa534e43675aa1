"""Subagents defined as files (agentfiles.py): `.claude/agents/*.md` and `~/.claude/agents/*.md`
chosen by the model through the Agent tool's subagent_type, `--agent NAME` for the main thread,
`--agents` JSON still first, every front-matter key honoured or named, and trust: an untrusted
project's agent cannot widen the permission mode. Through the real CLI on the loopback server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.agentfiles import parse_agent_file
from loopwright.testing import ScriptedServer
from tests.helpers import claude_code_env, cli_env, loopwright_cmd, result_text, text, use

LINTER = """---
name: linter
description: Lints Python files and reports problems
tools: Read, Grep
model: inherit
---
You are LINTER-PROMPT: report style problems only.
"""


def write_agent(folder: Path, name: str, text_: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text_)
    return path


def run_cli(srv: ScriptedServer, cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json",
                           *args], cwd=cwd, env=env or cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"),
                          capture_output=True, text=True, timeout=120)


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


@pytest.mark.e2e
def test_the_model_picks_a_project_agent_file_by_subagent_type(tmp_path: Path) -> None:
    write_agent(tmp_path / ".claude" / "agents", "linter", LINTER)
    turns = [[use("a1", "Agent", description="lint", prompt="lint app.py", subagent_type="linter")],
             [text("no problems")], [text("the linter found nothing")]]
    with ScriptedServer(turns) as srv:
        r = run_cli(srv, tmp_path)
        calls = [q.body for q in srv.loop_requests]
    assert r.returncode == 0, r.stderr
    agent_tool = next(t for t in calls[0]["tools"] if t["name"] == "Agent")
    assert "- linter: Lints Python files and reports problems (Tools: Read, Grep)" in agent_tool["description"]
    sub = calls[1]
    assert "LINTER-PROMPT" in system_text(sub) and sorted(t["name"] for t in sub["tools"]) == ["Grep", "Read"]
    assert result_text(calls[2]["messages"][-1]["content"][0]) == "no problems"
    assert json.loads(r.stdout)["result"] == "the linter found nothing"


@pytest.mark.e2e
def test_a_user_agent_file_and_agents_json_first(tmp_path: Path) -> None:
    """~/.claude/agents/ is read; a project file of the same name shadows it; --agents shadows both."""
    home = Path(os.environ["HOME"])
    write_agent(home / ".claude" / "agents", "helper", "---\ndescription: USER-HELPER\n---\nuser prompt\n")
    write_agent(home / ".claude" / "agents", "only-user", "---\ndescription: ONLY-USER\n---\nuser prompt\n")
    write_agent(tmp_path / ".claude" / "agents", "helper", "---\ndescription: PROJECT-HELPER\n---\nproject\n")
    with ScriptedServer([[text("hi")]]) as srv:
        r = run_cli(srv, tmp_path)
        desc = next(t for t in srv.loop_requests[0].body["tools"] if t["name"] == "Agent")["description"]
    assert r.returncode == 0, r.stderr
    assert "ONLY-USER" in desc and "PROJECT-HELPER" in desc and "USER-HELPER" not in desc
    agents = json.dumps({"helper": {"description": "JSON-HELPER", "prompt": "p"}})
    with ScriptedServer([[text("hi")]]) as srv:
        r = run_cli(srv, tmp_path, "--agents", agents)
        desc = next(t for t in srv.loop_requests[0].body["tools"] if t["name"] == "Agent")["description"]
    assert r.returncode == 0, r.stderr
    assert "JSON-HELPER" in desc and "PROJECT-HELPER" not in desc and "ONLY-USER" in desc
    with ScriptedServer([[text("hi")]]) as srv:  # --setting-sources without user: no user agents
        r = run_cli(srv, tmp_path, "--setting-sources", "project")
        desc = next(t for t in srv.loop_requests[0].body["tools"] if t["name"] == "Agent")["description"]
    assert "ONLY-USER" not in desc and "PROJECT-HELPER" in desc


@pytest.mark.e2e
def test_agent_flag_runs_the_main_thread_as_the_agent(tmp_path: Path) -> None:
    write_agent(tmp_path / ".claude" / "agents", "linter", LINTER)
    with ScriptedServer([[text("linted")]]) as srv:
        r = run_cli(srv, tmp_path, "--agent", "linter")
        body = srv.loop_requests[0].body
    assert r.returncode == 0, r.stderr
    assert system_text(body).startswith("You are LINTER-PROMPT") and sorted(t["name"] for t in body["tools"]) == [
        "Grep", "Read"]
    with ScriptedServer([[text("x")]]) as srv:
        r = run_cli(srv, tmp_path, "--agent", "nobody")
    assert r.returncode == 2 and "--agent nobody: no agent of that name (agents: linter" in r.stderr


@pytest.mark.e2e
def test_untrusted_project_agent_cannot_bypass_permissions(tmp_path: Path) -> None:
    """An agent file asking for bypassPermissions in an untrusted workspace: named as ignored, and its
    Bash call is not run without asking (-p: nobody to ask, so it is refused); trusted, it runs."""
    write_agent(tmp_path / ".claude" / "agents", "yolo",
                "---\ndescription: does anything\npermissionMode: bypassPermissions\n---\nGo.\n")
    turns = [[use("a1", "Agent", description="x", prompt="touch it", subagent_type="yolo")],
             [use("b1", "Bash", command="touch made.txt")], [text("sub done")], [text("done")]]
    env = {k: v for k, v in cli_env().items() if k != "LOOPWRIGHT_TRUSTED_DIRS"}
    with ScriptedServer(turns) as srv:
        r = run_cli(srv, tmp_path, env={**env, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "x"})
    assert r.returncode == 0, r.stderr
    assert "ignored permissionMode bypassPermissions of agent 'yolo'" in r.stderr
    assert not (tmp_path / "made.txt").exists()
    with ScriptedServer(turns) as srv:
        r = run_cli(srv, tmp_path, "--trust", env={**env, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "x"})
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "made.txt").exists()


def test_every_front_matter_key_is_honoured_refused_or_named(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    name, d, warnings, _ = parse_agent_file(path, "---\nname: a\ndescription: d\ntools: [Read]\ndisallowedTools: Bash\n"
                                            "maxTurns: 3\npermissionMode: plan\ninitialPrompt: hi\nisolation: worktree\n"
                                            "colour: red\nsparkle: yes\n---\nbody\n")
    assert (name, d.tools, d.disallowed_tools, d.max_turns, d.permission_mode, d.prompt, d.isolation) == (
        "a", ["Read"], ["Bash"], 3, "plan", "body", "worktree")
    assert len(warnings) == 2
    assert warnings[0].startswith(f"{path}: loopwright does not apply initialPrompt (") and "isolation" not in warnings[0]
    assert warnings[1] == f"{path}: unknown front-matter keys colour, sparkle (not applied)"
    with pytest.raises(ValueError, match="no description"):
        parse_agent_file(path, "---\nname: a\n---\nbody")
    with pytest.raises(ValueError, match="permissionMode 'sometimes'"):
        parse_agent_file(path, "---\ndescription: d\npermissionMode: sometimes\n---\n")


@pytest.mark.parametrize("turns", ["0", "-1", "three", "2.5"])
def test_a_max_turns_that_is_no_positive_integer_skips_the_agent(tmp_path: Path, turns: str) -> None:
    with pytest.raises(ValueError, match=f"maxTurns '{turns}' must be a positive integer; agent skipped"):
        parse_agent_file(tmp_path / "a.md", f"---\ndescription: d\nmaxTurns: {turns}\n---\n")


def test_an_agent_without_a_name_is_named_by_its_file(tmp_path: Path) -> None:
    name, d, warnings, _ = parse_agent_file(tmp_path / "reviewer.md", "---\ndescription: d\n---\nbody\n")
    assert (name, d.max_turns, warnings) == ("reviewer", None, [])


@pytest.mark.e2e
def test_unknown_keys_are_a_warning_on_stderr_not_an_abort(tmp_path: Path) -> None:
    write_agent(tmp_path / ".claude" / "agents", "odd", "---\ndescription: d\nsparkle: yes\n---\nbody\n")
    with ScriptedServer([[text("hi")]]) as srv:
        r = run_cli(srv, tmp_path)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "sparkle" in ln]
    assert lines == [f"loopwright: warning: {tmp_path.resolve() / '.claude' / 'agents' / 'odd.md'}: unknown "
                     "front-matter key sparkle (not applied)"]


@pytest.mark.e2e
def test_disallowed_tools_and_permission_mode_of_a_subagent(tmp_path: Path) -> None:
    """An agent's disallowedTools take tools away; its permissionMode acceptEdits lets its edit
    run where the parent (-p, default mode, nobody to ask) would be refused."""
    write_agent(tmp_path / ".claude" / "agents", "editor",
                "---\ndescription: edits\ndisallowedTools: Bash, Write\npermissionMode: acceptEdits\n---\nEdit.\n")
    (tmp_path / "f.txt").write_text("a")
    edit = use("e1", "Edit", file_path=str(tmp_path / "f.txt"), old_string="a", new_string="b")
    read = use("r1", "Read", file_path=str(tmp_path / "f.txt"))
    turns = [[use("a1", "Agent", description="x", prompt="p", subagent_type="editor")], [read], [edit], [text("sub")],
             [text("done")]]
    with ScriptedServer(turns) as srv:
        r = run_cli(srv, tmp_path)
        sub_tools = {t["name"] for t in srv.loop_requests[1].body["tools"]}
    assert r.returncode == 0, r.stderr
    assert "Edit" in sub_tools and not {"Bash", "Write", "Agent"} & sub_tools
    assert (tmp_path / "f.txt").read_text() == "b"
    (tmp_path / "f.txt").write_text("a")
    with ScriptedServer([[read], [edit], [text("done")]]) as srv:  # the same edit by the parent itself: refused
        r = run_cli(srv, tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "f.txt").read_text() == "a"


CLAUDE = Path(__file__).resolve().parents[1] / "node" / "node_modules" / ".bin" / "claude"


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")
def test_agent_flag_side_by_side_with_claude_code(tmp_path: Path) -> None:
    """`--agent linter` on the same scripted turn: both send the agent's body as the system prompt
    (Claude Code's own default prompt left out) and offer only the agent's tools."""
    write_agent(tmp_path / ".claude" / "agents", "linter", LINTER)
    with ScriptedServer([[text("linted")]]) as srv:
        env = claude_code_env(srv.url, str(tmp_path / "cchome"))
        r = subprocess.run([str(CLAUDE), "-p", "go", "--model", "claude-sonnet-4-5", "--agent", "linter"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        theirs = srv.loop_requests[0].body
    with ScriptedServer([[text("linted")]]) as srv:
        r = run_cli(srv, tmp_path, "--agent", "linter")
        assert r.returncode == 0, r.stderr
        ours = srv.loop_requests[0].body
    body = "You are LINTER-PROMPT: report style problems only."
    assert theirs["system"][-1]["text"] == body and system_text(ours).startswith(body)
    assert sorted(t["name"] for t in theirs["tools"]) == sorted(t["name"] for t in ours["tools"]) == ["Grep", "Read"]


@pytest.mark.e2e
def test_the_agent_setting_and_trust(tmp_path: Path) -> None:
    """"agent" in settings picks the main conversation's agent (--agent overrides it); an untrusted
    project's "agent" is named as ignored (it could pick one of the user's own agents)."""
    write_agent(tmp_path / ".claude" / "agents", "linter", LINTER)
    write_agent(tmp_path / ".claude" / "agents", "other", "---\ndescription: other\n---\nYou are OTHER.\n")
    with ScriptedServer([[text("a")], [text("b")]]) as srv:
        r = run_cli(srv, tmp_path, "--settings", json.dumps({"agent": "linter"}))
        r2 = run_cli(srv, tmp_path, "--settings", json.dumps({"agent": "linter"}), "--agent", "other")
        first, second = (system_text(q.body) for q in srv.loop_requests)
    assert r.returncode == 0 and r2.returncode == 0, r.stderr + r2.stderr
    assert first.startswith("You are LINTER-PROMPT") and second.startswith("You are OTHER.")
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"agent": "linter"}))
    env = {k: v for k, v in cli_env().items() if k != "LOOPWRIGHT_TRUSTED_DIRS"}
    with ScriptedServer([[text("c")]]) as srv:
        r = run_cli(srv, tmp_path, "--claude-settings", env={**env, "ANTHROPIC_BASE_URL": srv.url,
                                                             "ANTHROPIC_API_KEY": "x"})
        system = system_text(srv.loop_requests[0].body)
    assert r.returncode == 0, r.stderr
    assert "LINTER-PROMPT" not in system and "ignored agent linter from" in r.stderr


@pytest.mark.e2e
def test_an_agents_effort_is_its_subagents(tmp_path: Path) -> None:
    """effort: high in an agent file: its subagent thinks with that effort (on Sonnet 4.5 a thinking
    budget), the parent as before; an effort loopwright does not know is one warning line."""
    write_agent(tmp_path / ".claude" / "agents", "deep", "---\ndescription: thinks hard\neffort: high\n---\nThink.\n")
    write_agent(tmp_path / ".claude" / "agents", "odd", "---\ndescription: odd\neffort: 7\n---\nThink.\n")
    turns = [[use("a1", "Agent", description="x", prompt="p", subagent_type="deep")], [text("ok")], [text("done")]]
    with ScriptedServer(turns) as srv:
        r = run_cli(srv, tmp_path)
        parent, sub = srv.loop_requests[0].body, srv.loop_requests[1].body
    assert r.returncode == 0, r.stderr
    assert "thinking" not in parent and sub["thinking"] == {"type": "enabled", "budget_tokens": 16000}
    assert "effort '7' is not one of low, medium, high, xhigh, max (not applied" in r.stderr


def _skill_project(root: Path) -> None:
    (root / ".claude" / "skills" / "tidy").mkdir(parents=True)
    (root / ".claude" / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy things up\n---\nTIDY-SKILL-BODY: always sort imports.\n")
    write_agent(root / ".claude" / "agents", "helper",
                "---\nname: helper\ndescription: helps\nskills: tidy, nosuch\n---\nYou are the helper agent.\n")


def _preloaded(requests: list[Any]) -> list[str]:
    """The text blocks after the task in the subagent's first message (its first request's)."""
    for q in requests:
        first = q.body["messages"][0]["content"]
        texts = [b["text"] for b in first if isinstance(b, dict) and b.get("type") == "text"]
        if any("<command-name>tidy</command-name>" in t for t in texts):
            return texts[texts.index("do it") + 1:] if "do it" in texts else texts[-2:]
    return []


@pytest.mark.e2e
def test_an_agent_files_skills_are_preloaded_as_claude_code_preloads_them(tmp_path: Path) -> None:
    """`skills:` in an agent file: each skill's SKILL.md follows the task in the subagent's first
    message, in Claude Code's two blocks; a skill that is not there is named in one line."""
    turns = [[use("a1", "Agent", description="d", prompt="do it", subagent_type="helper")], [text("sub done")],
             *[[text("all done")]] * 6]
    out: dict[str, list[str]] = {}
    for who in ("loopwright", "claude"):
        if who == "claude" and not CLAUDE.exists():
            continue
        proj = tmp_path / who
        _skill_project(proj)
        with ScriptedServer(turns) as srv:
            if who == "claude":
                env = claude_code_env(srv.url, str(tmp_path / "cchome"))
                subprocess.run([str(CLAUDE), "-p", "hi", "--model", "claude-sonnet-4-5"], cwd=proj, env=env,
                               capture_output=True, text=True, timeout=120)
            else:
                r = run_cli(srv, proj, "--claude-settings")
                assert r.returncode == 0, r.stderr
                assert [x for x in r.stderr.splitlines() if "'nosuch'" in x and "not preloaded" in x] != []
            out[who] = [b.replace(str(proj), "PROJ") for b in _preloaded(srv.loop_requests)]
    assert out["loopwright"] == ["<command-message>tidy</command-message>\n<command-name>tidy</command-name>\n"
                                 "<skill-format>true</skill-format>",
                                 "Base directory for this skill: PROJ/.claude/skills/tidy\n\n"
                                 "TIDY-SKILL-BODY: always sort imports.\n"]
    if "claude" in out:
        assert out["claude"] == out["loopwright"]


@pytest.mark.e2e
def test_an_agent_files_own_mcp_server_serves_that_subagent_only(tmp_path: Path) -> None:
    """`mcpServers` with an inline server: started for the subagent (its tools offered to it, a
    call reaching the server), not offered to the main conversation, stopped when it ends; in an
    untrusted workspace the project agent's inline server is named and not started."""
    import sys

    from tests.helpers import TESTS

    log = tmp_path / "mcp.log"
    server = {"command": sys.executable, "args": [str(TESTS / "mcp" / "mcp_test_server.py"), "--log", str(log)]}
    write_agent(tmp_path / ".claude" / "agents", "noter",
                "---\nname: noter\ndescription: takes notes\nmcpServers:\n  - notes: " + json.dumps(server)
                + "\n---\nYou are the noter.\n")
    turns = [[use("a1", "Agent", description="d", prompt="note it", subagent_type="noter")],
             [use("m1", "mcp__notes__write_note", text="from the subagent")], [text("noted")], [text("all done")]]
    with ScriptedServer(turns) as srv:
        r = run_cli(srv, tmp_path, "--claude-settings", "--permission-mode", "bypassPermissions")
        assert r.returncode == 0, r.stderr
        main_tools = {t["name"] for t in srv.loop_requests[0].body["tools"]}
        sub_tools = {t["name"] for t in srv.loop_requests[1].body["tools"]}
        said = json.dumps(srv.loop_requests[2].body["messages"][-1])
    assert "mcp__notes__write_note" in sub_tools and not any(n.startswith("mcp__notes") for n in main_tools)
    assert "note from the subagent" in log.read_text() and "written" in said
    env = {k: v for k, v in cli_env().items() if k != "LOOPWRIGHT_TRUSTED_DIRS"}
    with ScriptedServer([[text("hi")]]) as srv:
        r = run_cli(srv, tmp_path, "--claude-settings", env={**env, "ANTHROPIC_BASE_URL": srv.url,
                                                             "ANTHROPIC_API_KEY": "x"})
    assert r.returncode == 0 and "mcpServers of agent 'noter'" in r.stderr, r.stderr


def _system(body: dict[str, Any]) -> str:
    s = body.get("system") or ""
    return s if isinstance(s, str) else "\n".join(b.get("text", "") for b in s)


@pytest.mark.e2e
def test_an_agents_memory_is_its_own_directory_like_claude_codes(tmp_path: Path) -> None:
    """`memory: project`: the subagent's system prompt names its directory
    (.claude/agent-memory/<name>/) and holds its MEMORY.md; Read, Write and Edit come with it
    (its `tools` says Bash only); as Claude Code 2.1.332 on the same turns. A missing directory is
    made private to the user; an untrusted project's agent gets no memory (named)."""
    turns = [[use("a1", "Agent", description="d", prompt="do it", subagent_type="helper")], [text("sub done")],
             *[[text("all done")]] * 6]
    seen: dict[str, tuple[str, set[str]]] = {}
    for who in ("loopwright", "claude"):
        if who == "claude" and not CLAUDE.exists():
            continue
        proj = tmp_path / who
        write_agent(proj / ".claude" / "agents", "helper",
                    "---\nname: helper\ndescription: helps\ntools: Bash\nmemory: project\n---\nYou are the helper.\n")
        (proj / ".claude" / "agent-memory" / "helper").mkdir(parents=True)
        (proj / ".claude" / "agent-memory" / "helper" / "MEMORY.md").write_text("REMEMBERED-FACT: the build uses make.\n")
        with ScriptedServer(turns) as srv:
            if who == "claude":
                env = claude_code_env(srv.url, str(tmp_path / "cchome"))
                subprocess.run([str(CLAUDE), "-p", "hi", "--model", "claude-sonnet-4-5"], cwd=proj, env=env,
                               capture_output=True, text=True, timeout=120)
            else:
                r = run_cli(srv, proj, "--claude-settings")
                assert r.returncode == 0, r.stderr
            sub = next(q.body for q in srv.loop_requests if "REMEMBERED-FACT" in _system(q.body))
            seen[who] = (_system(sub), {t["name"] for t in sub["tools"]})
    assert len(seen) == 1 + CLAUDE.exists()
    for who, (system, tools) in seen.items():
        assert f"`{tmp_path / who}/.claude/agent-memory/helper/`" in system, who
        assert "REMEMBERED-FACT: the build uses make." in system, who
        assert tools == {"Bash", "Read", "Write", "Edit"}, (who, tools)
    fresh = tmp_path / "fresh"
    write_agent(fresh / ".claude" / "agents", "helper",
                "---\nname: helper\ndescription: helps\nmemory: local\n---\nYou are the helper.\n")
    with ScriptedServer(turns) as srv:
        assert run_cli(srv, fresh, "--claude-settings").returncode == 0
    folder = fresh / ".claude" / "agent-memory-local" / "helper"
    assert folder.is_dir() and folder.stat().st_mode & 0o777 == 0o700
    env = {k: v for k, v in cli_env().items() if k != "LOOPWRIGHT_TRUSTED_DIRS"}
    with ScriptedServer(turns) as srv:
        r = run_cli(srv, tmp_path / "loopwright", "--claude-settings",
                    env={**env, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "x"})
        assert not any("REMEMBERED-FACT" in _system(q.body) for q in srv.loop_requests)
    assert "memory project of agent 'helper'" in r.stderr, r.stderr
