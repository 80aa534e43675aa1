"""Claude Code's `skillOverrides` setting ({name: "on" | "name-only" | "user-invocable-only" |
"off"}), as Claude Code 2.1.332 honours it on the same files and scripted turns: `name-only` is
listed to the model without its description, `user-invocable-only` is not offered to the model
(its Skill call is refused with Claude Code's words) while `/name` still runs it, and `off` is
hidden from both (`/name` is refused without a model call; the lists of commands leave it out).
In `-p`, in an Agent SDK session (the official Python SDK), in the library, in the interactive
mode (tmux); how files merge, and an untrusted project may only hide more."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.settings import SettingsError, load_settings
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text, use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
OVERRIDES = {"bravo": "name-only", "charlie": "user-invocable-only", "delta": "off", "echo": "off"}
FOR_MODEL = "Skill charlie is disabled for model invocation in skillOverrides settings"
OFF = ("Skill \"delta\" is disabled via skillOverrides. Remove the override from your settings to run it. If your "
       "organization set it, only an admin can remove it.")


def project(tmp: Path, overrides: dict[str, str] | None = None) -> tuple[Path, Path]:
    """A project with the skills alpha..delta and the command echo, and its settings' overrides."""
    proj, home = tmp / "proj", tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    for name in ("alpha", "bravo", "charlie", "delta"):
        (proj / ".claude" / "skills" / name).mkdir(parents=True)
        (proj / ".claude" / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: the {name} skill\n---\nBody of {name}.\n")
    (proj / ".claude" / "commands").mkdir()
    (proj / ".claude" / "commands" / "echo.md").write_text("---\ndescription: the echo command\n---\nSay echo.\n")
    (proj / ".claude" / "settings.json").write_text(json.dumps({"skillOverrides": overrides or OVERRIDES}))
    return proj, home


def print_mode(who: str, proj: Path, home: Path, prompt: str, turns: list[Any]) -> tuple[Any, list[Any]]:
    """`-p prompt` of Claude Code or loopwright on `turns`: (its JSON result, the requests)."""
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home),
                               LOOPWRIGHT_HOME=str(home / ".loopwright")), [*loopwright_cmd(), "--claude-settings"]
        r = subprocess.run([*cmd, "-p", prompt, "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--allowedTools", "Skill"], cwd=proj, env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (who, r.stderr)
        return json.loads(r.stdout), list(srv.requests)


def tool_result_text(requests: list[Any]) -> tuple[str, bool]:
    (result,) = [b for q in requests for m in q.body["messages"] if isinstance(m["content"], list)
                 for b in m["content"] if b.get("type") == "tool_result"][-1:]
    said = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    said = said.split("\n\n<system-reminder>")[0].removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")
    return said, result.get("is_error") is True


@pytest.mark.e2e
@pytest.mark.parametrize("who", WHO)
def test_overrides_hide_and_shorten_as_claude_code_does(tmp_path: Path, who: str) -> None:
    proj, home = project(tmp_path)
    _, requests = print_mode(who, proj, home, "go", [[use("s1", "Skill", {"skill": "charlie"})], [text("done")]])
    first = json.dumps(requests[0].body)
    assert "- alpha: the alpha skill" in first, who
    assert re.search(r"- bravo(?!:)", first) and not re.search(r"- bravo:", first), who  # listed, no description
    assert "the bravo skill" not in first and "charlie" not in first and "delta" not in first, who
    assert tool_result_text(requests) == (FOR_MODEL, True), who


@pytest.mark.e2e
@pytest.mark.parametrize("who", WHO)
def test_off_refuses_the_typed_command_and_user_invocable_only_still_runs_it(tmp_path: Path, who: str) -> None:
    proj, home = project(tmp_path)
    result, requests = print_mode(who, proj, home, "/delta some args", [[text("never sent")]])
    assert result["result"] == OFF and result.get("local_command") == "custom" and not requests, who
    result, requests = print_mode(who, proj, home, "/echo", [[text("never sent")]])  # a command too
    assert result["result"] == OFF.replace("delta", "echo") and not requests, who
    result, requests = print_mode(who, proj, home, "/charlie x", [[text("ran it")]])
    assert result["result"] == "ran it" and "Body of charlie." in json.dumps(requests[0].body["messages"]), who


sdk = pytest.importorskip("claude_agent_sdk")


@pytest.mark.e2e
@pytest.mark.parametrize("cli", ["loopwright", *(["claude"] if CLAUDE.exists() else [])])
def test_an_sdk_session_lists_neither_off_skill_nor_command(tmp_path: Path, cli: str) -> None:
    from tests.sdkproto.test_sdk_protocol import options

    proj, home = project(tmp_path)

    async def go(srv: ScriptedServer) -> tuple[list[Any], dict[str, Any]]:
        o = options(cli, srv, proj, setting_sources=["user", "project"], env={"HOME": str(home)})
        async with sdk.ClaudeSDKClient(o) as client:
            info = await client.get_server_info()
            await client.query("hi")
            return [m async for m in client.receive_response()], info

    with ScriptedServer([[text("done")]]) as srv:
        msgs, info = asyncio.run(go(srv))
    init = next(m for m in msgs if isinstance(m, sdk.SystemMessage) and m.subtype == "init").data
    ours = ("alpha", "bravo", "charlie", "delta", "echo")
    assert [n for n in init["slash_commands"] if n in ours] == ["alpha", "bravo", "charlie"], cli
    assert [n for n in init["skills"] if n in ours] == ["alpha", "bravo", "charlie"], cli
    assert [c["name"] for c in info["commands"] if c["name"] in ours] == ["alpha", "bravo", "charlie"], cli


def test_the_library_honours_them(tmp_path: Path) -> None:
    proj, _ = project(tmp_path)
    model = lw.ScriptedModel([[use("s1", "Skill", {"skill": "delta"})], [text("done")]])
    o = lw.AgentOptions(model=model, cwd=proj, setting_sources=["project"], claude_settings=True,
                        permission_mode="bypassPermissions")
    r = lw.run("go", o)
    results = [b for m in r.messages if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert results[0]["is_error"] and FOR_MODEL.replace("charlie", "delta") in str(results[0]["content"])
    typed = lw.run("/delta", lw.AgentOptions(model=lw.ScriptedModel([[text("never")]]), cwd=proj,
                                             setting_sources=["project"], claude_settings=True))
    assert typed.result == OFF and len(typed.messages) <= 1

    async def server_info() -> dict[str, Any]:
        async with lw.LoopwrightClient(lw.AgentOptions(model=lw.ScriptedModel([]), cwd=proj, setting_sources=["project"],
                                                       claude_settings=True)) as client:
            return await client.get_server_info()

    names = [c["name"] for c in asyncio.run(server_info())["commands"]]
    assert "charlie" in names and "delta" not in names and "echo" not in names


def test_files_merge_name_by_name_and_an_untrusted_project_only_hides_more(tmp_path: Path) -> None:
    home = tmp_path / "lwhome"
    proj = tmp_path / "proj"
    (proj / ".loopwright").mkdir(parents=True)
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"skillOverrides": {"a": "off", "b": "name-only", "c": "off"}}))
    (proj / ".loopwright" / "settings.json").write_text(json.dumps({"skillOverrides": {"a": "on", "b": "off"}}))
    import os

    old = os.environ.get("LOOPWRIGHT_HOME")
    os.environ["LOOPWRIGHT_HOME"] = str(home)
    try:
        trusted = load_settings(proj, ["user", "project"], trusted=True).skill_overrides
        untrusted = load_settings(proj, ["user", "project"], trusted=False).skill_overrides
        (proj / ".loopwright" / "settings.json").write_text(json.dumps({"skillOverrides": {"a": "sometimes"}}))
        with pytest.raises(SettingsError, match="skillOverrides.*must be an object of .*\"name-only\""):
            load_settings(proj, ["user", "project"], trusted=True)
    finally:
        if old is None:
            del os.environ["LOOPWRIGHT_HOME"]
        else:
            os.environ["LOOPWRIGHT_HOME"] = old
    assert trusted == {"a": "on", "b": "off", "c": "off"}  # the later file's entry wins
    assert untrusted == {"a": "off", "b": "off", "c": "off"}  # an untrusted project cannot turn one back on


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_the_interactive_menu_leaves_an_off_skill_out_and_refuses_it_typed(tmp_path: Path) -> None:
    from tests.cli.test_interactive_view import Session

    s = Session(tmp_path, [[text("never sent")]], "--claude-settings")
    proj, _ = project(tmp_path / "p")
    shutil.copytree(proj / ".claude", s.work / ".claude")
    try:
        t = s.t
        t.wait("Ctrl-C twice to exit")
        t.type("/ch")
        assert "skill: the charlie skill" in t.wait("/charlie")
        t.keys("BSpace", "BSpace")
        t.type("delt")  # the menu shows what starts so at once (as /ch showed charlie): delta is not there
        time.sleep(2)
        assert "the delta skill" not in s.visible() and "/delta" not in s.visible().replace("› /delt", ""), s.visible()
        t.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
        s.send("/delta now")
        t.wait("is disabled via skillOverrides")
    finally:
        s.close()


def test_mcp_serve_offers_no_prompt_of_an_off_skill_or_command(tmp_path: Path) -> None:
    """`loopwright mcp serve`'s prompts (mcp/serve_prompts.py) leave out what the settings turn off."""
    from loopwright.mcp.serve_prompts import Prompts, Refused

    proj, _ = project(tmp_path)
    o = lw.AgentOptions(cwd=proj, setting_sources=["project"], claude_settings=True)
    prompts = Prompts(proj, ["project"], o)
    names = [p["name"] for p in prompts.listed()]
    assert "skill:charlie" in names and "skill:delta" not in names and "echo" not in names, names
    with pytest.raises(Refused):
        prompts.get("skill:delta", None)
    assert "skill:delta" in [p["name"] for p in Prompts(proj, ["project"]).listed()]  # (no settings: all of them)


@pytest.mark.e2e
@pytest.mark.parametrize("who", WHO)
def test_a_plugins_skills_are_offered_as_plugin_name_and_overridden_by_that_name_only(tmp_path: Path, who: str) -> None:
    """A plugin's skills reach the model as `plugin:skill`, after the plugin's commands, as Claude
    Code lists them; an override naming one by its bare name changes nothing in either (loopwright
    says so on stderr). Named in full, loopwright honours it; Claude Code 2.1.332 applies no
    skillOverrides to a plugin loaded from a directory (docs/memory-and-skills.md: kept, as a
    setting the user wrote is honoured)."""
    plug = tmp_path / "plug"
    (plug / ".claude-plugin").mkdir(parents=True)
    (plug / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "myplug", "version": "1.0.0"}))
    for name in ("greet", "wave"):
        (plug / "skills" / name).mkdir(parents=True)
        (plug / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: the {name} skill\n---\nB.\n")
    (plug / "commands").mkdir()
    (plug / "commands" / "pcmd.md").write_text("---\ndescription: the pcmd command\n---\nP.\n")
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    settings = json.dumps({"skillOverrides": {"greet": "off", "myplug:wave": "name-only"}})
    with ScriptedServer([[text("done")]], is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--settings", settings,
                            "--plugin-dir", str(plug)], cwd=proj, env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        first = json.dumps(srv.requests[0].body)
    assert r.returncode == 0, (who, r.stderr)
    listed = ["- myplug:pcmd: the pcmd command", "- myplug:greet: the greet skill"]
    assert all(line in first for line in listed) and first.index(listed[0]) < first.index(listed[1]), who
    assert "- greet:" not in first, who
    if who == "loopwright":
        assert re.search(r"- myplug:wave(?!:)", first) and "the wave skill" not in first  # name-only, by its full name
        assert "skillOverrides names 'greet', which no skill or command is (did you mean 'myplug:greet'?)" in r.stderr
    else:
        assert "- myplug:wave: the wave skill" in first
