"""A custom command's expansion (issue 42): UserPromptExpansion and the command's inline shell
(`` !`cmd` ``) with PreSkillShellCommand, Claude Code 2.1.332 and loopwright on the same scripted
turns with the same files: what each hook read on stdin, what the model was sent, and what a
refusal does. Each side runs as a CLI (`-p "/greet world"`) against its own loopback server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
GREET = "---\ndescription: greets\nallowed-tools: Bash(echo:*)\n---\nHello $ARGUMENTS. Date: !`echo INLINE-OUT`. End.\n"
EVENTS = ("UserPromptSubmit", "UserPromptExpansion", "PreSkillShellCommand")
pytestmark = pytest.mark.e2e


def run(who: str, proj: Path, home: Path, hook_out: str = "", command: str = GREET, *args: str,
        events: tuple[str, ...] = EVENTS, prompt: str = "/greet world", turns: list[Any] | None = None,
        skill: str | None = None, **more: Any) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    """One side's run of `prompt` in `proj` with a logging hook on `events` (its stdout after the
    log: `hook_out`, a shell snippet that reads $IN); (the server's requests, the CLI's JSON
    result, the hook inputs in order)."""
    (proj / ".claude" / "commands").mkdir(parents=True, exist_ok=True)
    (proj / ".claude" / "commands" / "greet.md").write_text(command)
    home.mkdir(exist_ok=True)
    if skill is not None:  # the project skill "probe"
        (proj / ".claude" / "skills" / "probe").mkdir(parents=True)
        (proj / ".claude" / "skills" / "probe" / "SKILL.md").write_text(skill)
    log = proj.parent / f"{who}-hooks.log"
    hook = proj.parent / f"{who}-hook.sh"
    hook.write_text(f'#!/bin/sh\nIN=$(cat)\necho "$IN" >> "{log}"\n{hook_out}\n')
    hook.chmod(0o755)
    settings = {"hooks": {e: [{"hooks": [{"type": "command", "command": str(hook)}]}] for e in events}, **more}
    with ScriptedServer(turns or [[text("done")]], is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "any",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
            cmd = [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", prompt, "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--settings", json.dumps(settings), *args], cwd=proj, env=env, capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert r.returncode in (0, 1), (who, r.stderr)
        seen = [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()] if log.exists() else []
        return list(srv.requests), json.loads(r.stdout), seen


def sent(requests: Any) -> str:
    """The text of the last user message the model was sent."""
    content = requests[-1].body["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


@pytest.mark.parametrize("who", WHO)
def test_expansion_and_inline_shell_hooks_read_what_claude_codes_do(tmp_path: Path, who: str) -> None:
    requests, result, seen = run(who, tmp_path / "proj", tmp_path / "home")
    by = {d["hook_event_name"]: d for d in seen}
    assert [d["hook_event_name"] for d in seen] == list(EVENTS), who  # the order: submit, expand, then the shell
    assert by["UserPromptSubmit"]["prompt"] == "/greet world", who  # the prompt as typed
    exp = by["UserPromptExpansion"]
    assert {k: exp[k] for k in ("expansion_type", "command_name", "command_args", "command_source", "prompt")} == {
        "expansion_type": "slash_command", "command_name": "greet", "command_args": "world",
        "command_source": "projectSettings", "prompt": "/greet world"}, who
    sh = by["PreSkillShellCommand"]
    assert {k: sh[k] for k in ("tool_name", "tool_input", "command_name", "command_source", "invoked_by")} == {
        "tool_name": "Bash", "tool_input": {"command": "echo INLINE-OUT"}, "command_name": "greet",
        "command_source": "projectSettings", "invoked_by": "user"}, who
    assert sh["tool_use_id"].endswith(":inner:preamble-0"), who
    assert "Hello world. Date: INLINE-OUT. End." in sent(requests), who  # the output in the command's place
    assert result["result"] == "done", who


@pytest.mark.parametrize("who", WHO)
def test_expansion_hook_exit_2_blocks_before_any_model_call(tmp_path: Path, who: str) -> None:
    out = 'case "$IN" in *\\"UserPromptExpansion\\"*) echo "not this command" >&2; exit 2;; esac'
    requests, result, seen = run(who, tmp_path / "proj", tmp_path / "home", out)
    assert requests == [], who
    assert "UserPromptExpansion operation blocked by hook" in result["result"], who
    assert "not this command" in result["result"] and "Original prompt: /greet world" in result["result"], who
    assert "PreSkillShellCommand" not in [d["hook_event_name"] for d in seen], who  # nothing ran


@pytest.mark.parametrize("who", WHO)
def test_expansion_block_and_suppress_original_prompt(tmp_path: Path, who: str) -> None:
    answer = {"decision": "block", "reason": "json no",
              "hookSpecificOutput": {"hookEventName": "UserPromptExpansion", "suppressOriginalPrompt": True}}
    out = f"case \"$IN\" in *'\"UserPromptExpansion\"'*) echo '{json.dumps(answer)}';; esac"
    requests, result, _ = run(who, tmp_path / "proj", tmp_path / "home", out)
    assert requests == [], who
    assert "UserPromptExpansion operation blocked by hook:\njson no" in result["result"], who
    assert "Original prompt" not in result["result"], who


@pytest.mark.parametrize("who", WHO)
def test_expansion_context_reaches_the_model(tmp_path: Path, who: str) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "UserPromptExpansion", "additionalContext": "CTX-EXPANSION"}}
    out = f"case \"$IN\" in *'\"UserPromptExpansion\"'*) echo '{json.dumps(answer)}';; esac"
    requests, _, _ = run(who, tmp_path / "proj", tmp_path / "home", out)
    body = json.dumps(requests[-1].body["messages"][-1])
    assert "CTX-EXPANSION" in body and "INLINE-OUT" in body, who


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("answer", [
    {"hookSpecificOutput": {"hookEventName": "PreSkillShellCommand", "permissionDecision": "deny",
                            "permissionDecisionReason": "no shell here"}},
    {"decision": "block", "reason": "no shell here"},
])
def test_skill_shell_hook_refusal_leaves_a_placeholder(tmp_path: Path, who: str, answer: dict[str, Any]) -> None:
    out = f"case \"$IN\" in *'\"PreSkillShellCommand\"'*) echo '{json.dumps(answer)}';; esac"
    command = GREET.replace("echo INLINE-OUT", "touch ran.txt").replace("Bash(echo:*)", "Bash(touch:*)")
    requests, _, _ = run(who, tmp_path / "proj", tmp_path / "home", out, command)
    assert "Date: [not run: blocked by hook: no shell here]. End." in sent(requests), who
    assert not (tmp_path / "proj" / "ran.txt").exists(), who


@pytest.mark.parametrize("who", WHO)
def test_skill_shell_exit_2_and_changed_command_refuse(tmp_path: Path, who: str) -> None:
    out = 'case "$IN" in *\\"PreSkillShellCommand\\"*) echo "stop it" >&2; exit 2;; esac'
    requests, _, _ = run(who, tmp_path / "a" / "proj", tmp_path / "a" / "home", out)
    assert "[not run: blocked by hook: stop it]" in sent(requests), who
    answer = {"hookSpecificOutput": {"hookEventName": "PreSkillShellCommand", "updatedInput": {"command": "echo X"}}}
    out = f"case \"$IN\" in *'\"PreSkillShellCommand\"'*) echo '{json.dumps(answer)}';; esac"
    requests, _, _ = run(who, tmp_path / "b" / "proj", tmp_path / "b" / "home", out)
    assert "[not run: blocked by hook: the hook changed the command, which isn't supported here]" in sent(requests), who


@pytest.mark.parametrize("who", WHO)
def test_inline_shell_the_rules_do_not_allow_fails_the_command(tmp_path: Path, who: str) -> None:
    """No allowed-tools: `touch` would need approval, nobody is asked, the command fails whole."""
    command = "---\ndescription: greets\n---\nA !`touch made-by-inline` B\n"
    requests, result, seen = run(who, tmp_path / "proj", tmp_path / "home", "", command)
    assert requests == [], who
    assert result["result"].startswith('Shell command permission check failed for pattern "!`touch made-by-inline`": '), who
    assert not (tmp_path / "proj" / "made-by-inline").exists(), who
    assert "PreSkillShellCommand" not in [d["hook_event_name"] for d in seen], who  # the gate first


@pytest.mark.parametrize("who", WHO)
def test_inline_shell_that_fails_fails_the_command(tmp_path: Path, who: str) -> None:
    command = "---\ndescription: greets\nallowed-tools: Bash(ls:*)\n---\nA !`ls no-such-file` B\n"
    requests, result, _ = run(who, tmp_path / "proj", tmp_path / "home", "", command)
    assert requests == [], who
    assert result["result"].startswith('Shell command failed for pattern "!`ls no-such-file`": '), who
    assert "no-such-file" in result["result"][60:], who


def test_a_deny_rule_refuses_what_allowed_tools_allow(tmp_path: Path) -> None:
    """The command's allowed-tools are allow rules: the user's deny rule still wins (the same gate)."""
    _, result, seen = run("loopwright", tmp_path / "proj", tmp_path / "home", "", GREET,
                          "--disallowedTools", "Bash(echo:*)")
    assert result["result"].startswith('Shell command permission check failed for pattern "!`echo INLINE-OUT`"'), result
    assert "PreSkillShellCommand" not in [d["hook_event_name"] for d in seen]


def test_disable_skill_shell_execution_runs_nothing(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    command = GREET.replace("echo INLINE-OUT", "touch ran.txt").replace("Bash(echo:*)", "Bash(touch:*)")
    requests, _, seen = run("loopwright", proj, tmp_path / "home", "", command, disableSkillShellExecution=True)
    assert "Date: [shell command not run: disableSkillShellExecution is set]. End." in sent(requests)
    assert not (proj / "ran.txt").exists()
    assert "PreSkillShellCommand" not in [d["hook_event_name"] for d in seen]


def test_untrusted_project_commands_allowed_tools_do_not_let_its_shell_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A project command's allowed-tools grant nothing in a workspace the user has not trusted:
    its inline shell is judged by the user's own rules only (here: refused, nobody is asked)."""
    monkeypatch.setenv("LOOPWRIGHT_TRUSTED_DIRS", str(tmp_path / "elsewhere"))
    command = GREET.replace("echo INLINE-OUT", "touch ran.txt").replace("Bash(echo:*)", "Bash(touch:*)")
    requests, result, _ = run("loopwright", tmp_path / "proj", tmp_path / "home", "", command)
    assert requests == []
    assert result["result"].startswith('Shell command permission check failed for pattern "!`touch ran.txt`"'), result
    assert not (tmp_path / "proj" / "ran.txt").exists()
    # trusted, the same command runs: its allowed-tools are the grant (and its empty output is empty)
    monkeypatch.setenv("LOOPWRIGHT_TRUSTED_DIRS", str(tmp_path))
    requests, _, _ = run("loopwright", tmp_path / "proj2", tmp_path / "home2", "", command)
    assert (tmp_path / "proj2" / "ran.txt").exists()
    assert "Hello world. Date: . End." in sent(requests)


SKILL = "---\nname: probe\ndescription: a probe skill\nallowed-tools: Bash(echo:*)\n---\nProbe body !`echo SKILL-OUT` end.\n"


@pytest.mark.parametrize("who", WHO)
def test_a_skills_inline_shell_runs_when_the_model_loads_it(tmp_path: Path, who: str) -> None:
    """The Skill tool: the skill's inline shell runs through the gate (its allowed-tools granted)
    and PreSkillShellCommand (invoked_by claude, the Skill call's id), its output in the body."""
    turns = [[{"type": "tool_use", "id": "s1", "name": "Skill", "input": {"skill": "probe"}}], [text("done")]]
    requests, _, seen = run(who, tmp_path / "proj", tmp_path / "home", "", GREET, "--allowedTools", "Skill",
                            prompt="use probe", turns=turns, skill=SKILL)
    (sh,) = [d for d in seen if d["hook_event_name"] == "PreSkillShellCommand"]
    assert {k: sh[k] for k in ("tool_name", "tool_input", "tool_use_id", "command_name", "command_source",
                               "invoked_by")} == {
        "tool_name": "Bash", "tool_input": {"command": "echo SKILL-OUT"}, "tool_use_id": "s1:preamble-0",
        "command_name": "probe", "command_source": "projectSettings", "invoked_by": "claude"}, who
    body = json.dumps(requests[-1].body["messages"][-1])
    assert "Probe body SKILL-OUT end." in body and "!`echo" not in body, who


@pytest.mark.parametrize("who", WHO)
def test_a_skills_inline_shell_a_hook_refuses(tmp_path: Path, who: str) -> None:
    turns = [[{"type": "tool_use", "id": "s1", "name": "Skill", "input": {"skill": "probe"}}], [text("done")]]
    out = 'case "$IN" in *\\"PreSkillShellCommand\\"*) echo "not in a skill" >&2; exit 2;; esac'
    requests, _, _ = run(who, tmp_path / "proj", tmp_path / "home", out, GREET, "--allowedTools", "Skill",
                         prompt="use probe", turns=turns, skill=SKILL)
    body = json.dumps(requests[-1].body["messages"][-1])
    assert "Probe body [not run: blocked by hook: not in a skill] end." in body, who


@pytest.mark.parametrize("who", WHO)
def test_a_skill_typed_as_a_command_expands_as_one(tmp_path: Path, who: str) -> None:
    """`/probe some args`: the skill expands in the prompt's place (its folder, its body with its
    inline shell run, the arguments), with UserPromptExpansion and PreSkillShellCommand (invoked_by user)."""
    proj = tmp_path / "proj"
    requests, _, seen = run(who, proj, tmp_path / "home", "", GREET, prompt="/probe some args", skill=SKILL)
    by = {d["hook_event_name"]: d for d in seen}
    assert [d["hook_event_name"] for d in seen] == list(EVENTS), who
    assert (by["UserPromptExpansion"]["command_name"], by["UserPromptExpansion"]["command_args"]) == (
        "probe", "some args"), who
    assert (by["PreSkillShellCommand"]["invoked_by"], by["PreSkillShellCommand"]["command_source"]) == (
        "user", "projectSettings"), who
    assert (f"Base directory for this skill: {proj / '.claude' / 'skills' / 'probe'}\n\nProbe body SKILL-OUT end."
            "\n\n\nARGUMENTS: some args") in sent(requests), who


def test_an_mcp_prompt_fires_user_prompt_expansion(tmp_path: Path) -> None:
    """`/mcp__server__prompt args`: UserPromptExpansion with expansion_type mcp_prompt (no command_source)."""
    from tests.mcp.test_mcp_asks import run as run_with_mcp

    log, hook = tmp_path / "hooks.log", tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\nIN=$(cat)\nprintf '%s\\n' \"$IN\" >> \"{log}\"\n")
    hook.chmod(0o755)
    settings = {"hooks": {"UserPromptExpansion": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}
    run_with_mcp(tmp_path, [[text("reviewed")]], "--settings", json.dumps(settings),
                 prompt="/mcp__ask__review src/app.py")
    (seen,) = [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()]
    assert {k: seen[k] for k in ("expansion_type", "command_name", "command_args", "prompt")} == {
        "expansion_type": "mcp_prompt", "command_name": "mcp__ask__review", "command_args": "src/app.py",
        "prompt": "/mcp__ask__review src/app.py"}
    assert "command_source" not in seen


TOUCH_SKILL = SKILL.replace("echo SKILL-OUT", "touch made-by-skill").replace("Bash(echo:*)", "Bash(touch:*)")


@pytest.mark.parametrize(("who", "skill"), [*((w, SKILL) for w in WHO), ("loopwright", TOUCH_SKILL)])
def test_a_skill_an_agent_file_preloads_runs_its_inline_shell_in_the_subagent(tmp_path: Path, who: str,
                                                                              skill: str) -> None:
    """An agent file's `skills: probe`: the skill's inline shell runs as the subagent starts (its
    allowed-tools granted, the Bash gate, PreSkillShellCommand with invoked_by other), its output
    in the preloaded body the subagent's first message carries."""
    proj = tmp_path / "proj"
    (proj / ".claude" / "agents").mkdir(parents=True)
    (proj / ".claude" / "agents" / "helper.md").write_text(
        "---\nname: helper\ndescription: helps\nskills: probe\n---\nYou are the helper agent.\n")
    turns = [[{"type": "tool_use", "id": "a1", "name": "Agent",
               "input": {"description": "d", "prompt": "do it", "subagent_type": "helper"}}],
             [text("sub done")], *[[text("done")]] * 4]
    requests, _, seen = run(who, proj, tmp_path / "home", "", GREET, prompt="go", turns=turns, skill=skill,
                            events=("PreSkillShellCommand",))
    (sh,) = [d for d in seen if d["hook_event_name"] == "PreSkillShellCommand"]
    if skill == TOUCH_SKILL:  # a command the rules would ask about: the skill's allowed-tools let it run
        assert sh["tool_input"] == {"command": "touch made-by-skill"} and (proj / "made-by-skill").exists()
        return
    assert {k: sh[k] for k in ("tool_name", "tool_input", "command_name", "command_source", "invoked_by")} == {
        "tool_name": "Bash", "tool_input": {"command": "echo SKILL-OUT"}, "command_name": "probe",
        "command_source": "projectSettings", "invoked_by": "other"}, who
    firsts = [json.dumps(q.body["messages"][0]) for q in requests]
    (sub,) = [f for f in firsts if "<command-name>probe</command-name>" in f]
    assert "Probe body SKILL-OUT end." in sub and "!`echo" not in sub, who


@pytest.mark.parametrize("who", WHO)
def test_a_plugins_skill_typed_as_plugin_colon_skill_expands(tmp_path: Path, who: str) -> None:
    """`/plug:probe some args` (-p): the plugin's skill expands as a project skill typed as
    `/probe` does (its folder, its inline shell run, the arguments), command_source plugin."""
    plug = tmp_path / "plug"
    (plug / ".claude-plugin").mkdir(parents=True)
    (plug / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "plug", "version": "1.0.0"}))
    (plug / "skills" / "probe").mkdir(parents=True)
    (plug / "skills" / "probe" / "SKILL.md").write_text(SKILL)
    requests, _, seen = run(who, tmp_path / "proj", tmp_path / "home", "", GREET, "--plugin-dir", str(plug),
                            prompt="/plug:probe some args")
    by = {d["hook_event_name"]: d for d in seen}
    assert (by["UserPromptExpansion"]["command_name"], by["UserPromptExpansion"]["command_args"]) == (
        "plug:probe", "some args"), who
    assert (by["PreSkillShellCommand"]["invoked_by"], by["PreSkillShellCommand"]["command_source"]) == (
        "user", "plugin"), who
    assert (f"Base directory for this skill: {plug.resolve() / 'skills' / 'probe'}\n\nProbe body SKILL-OUT end."
            "\n\n\nARGUMENTS: some args") in sent(requests), who
