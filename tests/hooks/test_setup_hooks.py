"""Setup hooks (issue 42): Claude Code's --init, --init-only and --maintenance, Claude Code 2.1.332
and loopwright on the same scripted turns with the same settings: which hooks fired in which
order with what stdin, whether the model was called, and what the model was sent."""

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
pytestmark = pytest.mark.e2e


def run(who: str, tmp: Path, *args: str, hook_out: str = "") -> tuple[Any, int, list[dict[str, Any]]]:
    """One side's run with a logging hook on Setup, SessionStart and UserPromptSubmit; (the
    server's requests, the exit code, the hook inputs in order)."""
    proj, home = tmp / who / "proj", tmp / who / "home"
    proj.mkdir(parents=True)
    home.mkdir()
    log, hook = tmp / who / "hooks.log", tmp / who / "hook.sh"
    hook.write_text(f"#!/bin/sh\nIN=$(cat)\nprintf '%s\\n' \"$IN\" >> \"{log}\"\n{hook_out}\n")
    hook.chmod(0o755)
    settings = {"hooks": {e: [{"hooks": [{"type": "command", "command": str(hook)}]}]
                          for e in ("Setup", "SessionStart", "UserPromptSubmit")}}
    with ScriptedServer([[text("done")]], is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "any",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
            cmd = [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, *args, "--model", "claude-sonnet-4-5", "--settings", json.dumps(settings)],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        seen = [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()] if log.exists() else []
        return list(srv.requests), r.returncode, seen


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize(("flag", "trigger"), [("--init", "init"), ("--maintenance", "maintenance")])
def test_setup_fires_before_session_start_then_the_run_goes_on(tmp_path: Path, who: str, flag: str,
                                                               trigger: str) -> None:
    requests, code, seen = run(who, tmp_path, "-p", "hi", flag)
    assert code == 0, who
    assert [d["hook_event_name"] for d in seen] == ["Setup", "SessionStart", "UserPromptSubmit"], who
    assert seen[0]["trigger"] == trigger and seen[0]["cwd"] == str(tmp_path / who / "proj"), who
    assert len(requests) == 1, who


@pytest.mark.parametrize("who", WHO)
def test_without_a_flag_no_setup(tmp_path: Path, who: str) -> None:
    _, _, seen = run(who, tmp_path, "-p", "hi")
    assert "Setup" not in [d["hook_event_name"] for d in seen], who


@pytest.mark.parametrize("who", WHO)
def test_init_only_runs_setup_and_session_start_then_exits(tmp_path: Path, who: str) -> None:
    requests, code, seen = run(who, tmp_path, "--init-only")
    assert code == 0, who
    assert [(d["hook_event_name"], d.get("trigger") or d.get("source")) for d in seen] == [
        ("Setup", "init"), ("SessionStart", "startup")], who
    assert requests == [], who  # no prompt, no model call


@pytest.mark.parametrize("who", WHO)
def test_setup_context_does_not_reach_the_model(tmp_path: Path, who: str) -> None:
    """Claude Code documents Setup's additionalContext, but -p sends neither it nor plain stdout."""
    answer = {"hookSpecificOutput": {"hookEventName": "Setup", "additionalContext": "SETUP-CONTEXT"}}
    out = f"case \"$IN\" in *'\"Setup\"'*) echo '{json.dumps(answer)}';; esac"
    requests, code, _ = run(who, tmp_path, "-p", "hi", "--init", hook_out=out)
    assert code == 0 and len(requests) == 1, who
    assert "SETUP-CONTEXT" not in json.dumps(requests[0].body), who


def test_two_triggers_are_refused_by_name(tmp_path: Path) -> None:
    _, code, seen = run("loopwright", tmp_path, "-p", "hi", "--init", "--maintenance")
    assert code == 2 and seen == []


@pytest.mark.parametrize("who", WHO)
def test_setup_through_the_agent_sdk(tmp_path: Path, who: str) -> None:
    """The official Agent SDK passing --init (extra_args) to its CLI: Setup fires, then SessionStart."""
    import asyncio

    sdk = pytest.importorskip("claude_agent_sdk")
    log, hook = tmp_path / "hooks.log", tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\nIN=$(cat)\nprintf '%s\\n' \"$IN\" >> \"{log}\"\n")
    hook.chmod(0o755)
    settings = {"hooks": {e: [{"hooks": [{"type": "command", "command": str(hook)}]}] for e in ("Setup", "SessionStart")}}
    cli = str(CLAUDE) if who == "claude" else loopwright_cmd()[0]
    with ScriptedServer([[text("done")]], is_loop_call=lambda body: True) as srv:
        options = sdk.ClaudeAgentOptions(
            cli_path=cli, cwd=str(tmp_path), extra_args={"init": None}, settings=json.dumps(settings),
            model="claude-sonnet-4-5", env={"ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "x",
                                            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})

        async def go() -> list[Any]:
            return [m async for m in sdk.query(prompt="hi", options=options)]

        msgs = asyncio.run(go())
    assert any(isinstance(m, sdk.ResultMessage) and m.result == "done" for m in msgs), who
    seen = [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()]
    assert [(d["hook_event_name"], d.get("trigger") or d.get("source")) for d in seen] == [
        ("Setup", "init"), ("SessionStart", "startup")], who
