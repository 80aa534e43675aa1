"""permissions.disableBypassPermissionsMode ("disable"), as Claude Code 2.1.332 honours it: a
bypassPermissions mode from a flag or from defaultMode is dropped as the run starts (default mode,
with one line: Claude Code's "Bypass permissions mode was disabled by settings"), and a change to it
is refused (the SDK protocol's set_permission_mode: "Cannot set permission mode to bypassPermissions
because it is disabled by settings or configuration"). An untrusted project may set it: it only
narrows. (The interactive mode's Shift+Tab cycle never offers bypassPermissions.)"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

import loopwright as lw
from loopwright.runconfig import BYPASS_DISABLED, build_run_config
from loopwright.settings import load_settings
from loopwright.testing import ScriptedServer
from tests.helpers import bash, cli_env, loopwright_cmd, text, use, write_script

OFF = {"permissions": {"disableBypassPermissionsMode": "disable"}}


def project(tmp_path: Path, data: dict[str, object]) -> None:
    (tmp_path / ".claude").mkdir(exist_ok=True)
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(data))


@pytest.mark.parametrize("trusted", [True, False])
def test_bypass_from_the_options_or_default_mode_runs_in_default_mode(tmp_path: Path, trusted: bool) -> None:
    project(tmp_path, {"permissions": {"disableBypassPermissionsMode": "disable", "deny": ["Bash(rm *)"]}})
    s = load_settings(tmp_path, ["project"], claude=True, trusted=trusted)
    assert s.disable_bypass and not any("disableBypassPermissionsMode" in w for w in s.warnings)
    opts = lw.AgentOptions(permission_mode="bypassPermissions", cwd=str(tmp_path))
    config = build_run_config(opts, tmp_path, s)
    assert config.permissions.mode == "default" and s.warnings.count(BYPASS_DISABLED) == 1
    # defaultMode bypassPermissions in the user's own file, the switch in another file read
    s = load_settings(tmp_path, ["project"], claude=True, extra={"permissions": {"defaultMode": "bypassPermissions"}})
    assert build_run_config(lw.AgentOptions(cwd=str(tmp_path)), tmp_path, s).permissions.mode == "default"
    # without the switch, bypassPermissions stays
    project(tmp_path, {})
    s = load_settings(tmp_path, ["project"], claude=True)
    assert build_run_config(opts, tmp_path, s).permissions.mode == "bypassPermissions" and BYPASS_DISABLED not in s.warnings


def test_a_value_other_than_disable_is_named(tmp_path: Path) -> None:
    project(tmp_path, {"permissions": {"disableBypassPermissionsMode": True}})
    s = load_settings(tmp_path, ["project"], claude=True)
    assert not s.disable_bypass and any("disableBypassPermissionsMode True" in w for w in s.warnings), s.warnings


@pytest.mark.e2e
def test_the_flag_is_dropped_with_one_line_and_the_command_is_not_run(tmp_path: Path) -> None:
    """`-p --dangerously-skip-permissions` with the switch in --settings: Claude Code runs in default
    mode (its Bash call needs approval and -p cannot ask); so does loopwright, and says so once."""
    model = write_script(tmp_path, [[bash("touch made.txt")], [text("done")]])
    r = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", model, "--dangerously-skip-permissions",
                        "--settings", json.dumps(OFF)], cwd=tmp_path, env=cli_env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and not (tmp_path / "made.txt").exists(), r.stderr
    assert r.stderr.count("Bypass permissions mode was disabled by settings") == 1, r.stderr


def test_the_client_refuses_to_change_to_bypass(tmp_path: Path) -> None:
    project(tmp_path, OFF)

    async def go() -> str:
        opts = lw.AgentOptions(cwd=str(tmp_path), setting_sources=["project"], claude_settings=True)
        async with lw.LoopwrightClient(opts) as client:
            await client.set_permission_mode("acceptEdits")
            with pytest.raises(ValueError, match="disabled by settings") as e:
                await client.set_permission_mode("bypassPermissions")
            return str(client.options.permission_mode) + str(e.value)

    assert asyncio.run(go()).startswith("acceptEdits")


@pytest.mark.e2e
def test_set_permission_mode_is_refused_on_the_sdk_protocol(tmp_path: Path) -> None:
    project(tmp_path, OFF)
    lines = [{"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize", "hooks": None}},
             {"type": "control_request", "request_id": "r2",
              "request": {"subtype": "set_permission_mode", "mode": "bypassPermissions"}},
             {"type": "control_request", "request_id": "r3",
              "request": {"subtype": "set_permission_mode", "mode": "acceptEdits"}}]
    with ScriptedServer([]) as srv:
        p = subprocess.run([*loopwright_cmd(), "--output-format", "stream-json", "--verbose", "--model",
                            "claude-sonnet-4-6", "--setting-sources", "project", "--input-format", "stream-json"],
                           input="".join(json.dumps(x) + "\n" for x in lines), capture_output=True, text=True,
                           cwd=tmp_path, timeout=60, env=cli_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=srv.url))
    answers = {o["response"]["request_id"]: o["response"] for o in map(json.loads, p.stdout.splitlines())
               if o["type"] == "control_response"}
    assert answers["r2"]["subtype"] == "error", p.stdout
    assert answers["r2"]["error"] == ("Cannot set permission mode to bypassPermissions because it is disabled by "
                                      "settings or configuration")
    assert answers["r3"]["subtype"] == "success"


def test_the_interactive_mode_starts_in_default_mode_and_says_so(tmp_path: Path) -> None:
    """`loopwright --dangerously-skip-permissions` with the switch: the session's mode (what the
    status bar shows and Shift+Tab cycles from) is default, and the header says why once."""
    from loopwright.cli.interactive import Repl

    repl_ = Repl(lw.AgentOptions(model="scripted:unused.json", cwd=str(tmp_path), permission_mode="bypassPermissions",
                                 settings=json.dumps(OFF)))
    assert repl_.client.options.permission_mode == "default" and repl_.note == BYPASS_DISABLED
    repl_.cycle_mode()
    assert repl_.client.options.permission_mode == "acceptEdits"


@pytest.mark.e2e
def test_a_subagents_permission_mode_cannot_bypass_either(tmp_path: Path) -> None:
    """An agent file's permissionMode: bypassPermissions is dropped too (Claude Code gives the
    subagent default mode): its Bash call is refused in -p (nobody to ask); without the switch it runs."""
    (tmp_path / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / ".claude" / "agents" / "yolo.md").write_text(
        "---\ndescription: does anything\npermissionMode: bypassPermissions\n---\nGo.\n")
    turns = [[use("a1", "Agent", description="x", prompt="touch it", subagent_type="yolo")],
             [use("b1", "Bash", command="touch made.txt")], [text("sub done")], [text("done")]]
    for switch, made in ((OFF, False), ({}, True)):
        with ScriptedServer(turns) as srv:
            r = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--settings",
                                json.dumps(switch)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                               env=cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"))
        assert r.returncode == 0 and (tmp_path / "made.txt").exists() is made, r.stderr


def test_an_approved_plan_cannot_enter_bypass_either(tmp_path: Path) -> None:
    """ExitPlanMode approved "in bypassPermissions" (the SDK's and ACP's plan exits offer it) goes
    on in default mode when the settings disable bypass: the Write after it is refused headless
    (nobody to ask); without the switch it runs."""
    from loopwright.interaction import PlanApproved

    async def review(plan: str) -> PlanApproved:
        return PlanApproved("bypassPermissions")

    for switch, ran in ((OFF, False), ({}, True)):
        f = tmp_path / "a.txt"
        f.write_text("original\n")
        turns = [[use("p1", "ExitPlanMode", plan="1. change a.txt")],
                 [use("w1", "Bash", command=f"echo changed > {f}")], [text("done")]]
        r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=lw.default_tools(), cwd=str(tmp_path),
                                         permission_mode="plan", review_plan=review, settings=switch))
        assert r.subtype == "success", r
        assert (f.read_text() == "changed\n") is ran, [d["tool_name"] for d in r.permission_denials]
