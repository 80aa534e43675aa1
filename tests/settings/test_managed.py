"""Managed (policy) settings as Claude Code 2.1.332 reads them (managed.py): managed-settings.json,
then managed-settings.d/*.json by name, on top of every other file and never narrowed by trust;
allowManagedPermissionRulesOnly, allowManagedHooksOnly and disableAllHooks as Claude Code applies
them (each case was run against its binary, see test_side_by_side_with_claude_code); a document
that is not a JSON object stops the run; a file others can write only narrows. The folder is
the test's own (LOOPWRIGHT_MANAGED_SETTINGS_DIR), which /etc/claude-code would override."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.managed import BAD_DOCUMENT, ENV, SYSTEM_DIR, managed_folder
from loopwright.runconfig import build_run_config, run_settings
from loopwright.settings import SettingsError, load_settings
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, bash, claude_code_env, cli_env, loopwright_cmd, text
from tests.helpers import use as lw_use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
TOUCH = {"command": "touch made.txt"}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def project(tmp_path: Path, data: dict[str, Any]) -> Path:
    proj = tmp_path / "proj"
    write(proj / ".claude" / "settings.json", data)
    return proj


def verdict(proj: Path, options: lw.AgentOptions | None = None, trusted: bool = True, **kw: Any) -> str:
    """What the run's rules say of `touch made.txt` (the project's files read with Claude Code's)."""
    opts = options or lw.AgentOptions(cwd=str(proj), **kw)
    s = load_settings(proj, ["project"], claude=True, trusted=trusted, extra=opts.settings)
    return build_run_config(opts, proj, s).permissions.evaluate("Bash", TOUCH).kind


def test_a_managed_deny_beats_every_allow_and_is_never_narrowed(managed: Path, tmp_path: Path) -> None:
    proj = project(tmp_path, {"permissions": {"allow": ["Bash(touch *)"]}})
    assert verdict(proj) == "allow"
    write(managed / "managed-settings.json", {"permissions": {"deny": ["Bash(touch *)"]}})
    assert verdict(proj) == "deny"
    assert verdict(proj, allowed_tools=["Bash(touch *)"], permission_mode="bypassPermissions") == "deny"
    # a managed allow counts in an untrusted workspace (trust narrows the project's files, never the policy)
    write(managed / "managed-settings.json", {"permissions": {"allow": ["Bash(touch *)"]}})
    assert verdict(project(tmp_path, {}), trusted=False) == "allow"
    # the library reads no settings files by default, the managed ones all the same (as the Agent SDK)
    s = run_settings(lw.AgentOptions(cwd=str(proj)), proj)
    assert s is not None and [str(r) for r in s.allow] == ["Bash(touch *)"] and s.allow[0].source == "managed"


def test_drop_ins_follow_the_file_in_name_order(managed: Path, tmp_path: Path) -> None:
    write(managed / "managed-settings.json", {"model": "from-file", "permissions": {"deny": ["Read(/a)"]}})
    write(managed / "managed-settings.d" / "20-b.json", {"model": "from-20", "permissions": {"deny": ["Read(/b)"]}})
    write(managed / "managed-settings.d" / "10-a.json", {"model": "from-10", "env": {"X": "1"}})
    write(managed / "managed-settings.d" / ".hidden.json", "{not json")  # skipped, as Claude Code skips it
    write(managed / "managed-settings.d" / "notes.txt", "{not json")
    proj = project(tmp_path, {"model": "from-project", "env": {"X": "0", "Y": "2"}})
    s = load_settings(proj, ["project"], claude=True)
    assert s.model == "from-20" and s.env == {"X": "1", "Y": "2"}
    assert [str(r) for r in s.deny] == ["Read(/a)", "Read(/b)"]
    assert [p.name for p in s.files] == ["settings.json", "managed-settings.json", "10-a.json", "20-b.json"]
    # a drop-in folder alone is a policy too
    (managed / "managed-settings.json").unlink()
    assert load_settings(proj, ["project"], claude=True).model == "from-20"


@pytest.mark.parametrize("name", ["managed-settings.json", "managed-settings.d/10-a.json"])
@pytest.mark.parametrize("content", ["{\"permissions\": ", "[1, 2]", "[" * 100_000 + "]" * 100_000,
                                     '{"n": 1' + "0" * 5000 + "}"])  # (the last two: Python's json raises other errors)
def test_a_document_that_is_not_an_object_stops_the_run(managed: Path, tmp_path: Path, name: str,
                                                         content: str) -> None:
    write(managed / name, content)
    with pytest.raises(SettingsError) as e:
        load_settings(project(tmp_path, {}), [])
    assert str(e.value) == f"{managed / name}: {BAD_DOCUMENT}"


def test_only_managed_permission_rules(managed: Path, tmp_path: Path) -> None:
    """allowManagedPermissionRulesOnly: the rules of every other file (deny rules too) and
    --allowedTools are not used (named once); --disallowedTools still is; managed rules are."""
    write(managed / "managed-settings.json", {"allowManagedPermissionRulesOnly": True})
    proj = project(tmp_path, {"permissions": {"allow": ["Bash(touch *)"]}})
    assert verdict(proj) == "ask"
    flags = lw.AgentOptions(cwd=str(proj), allowed_tools=["Bash(touch *)"],
                            settings=json.dumps({"permissions": {"allow": ["Bash(touch *)"]}}))
    s = load_settings(proj, ["project"], claude=True, extra=flags.settings)
    assert build_run_config(flags, proj, s).permissions.evaluate("Bash", TOUCH).kind == "ask"
    build_run_config(flags, proj, s)
    assert s.warnings.count("Ignoring --allowedTools Bash(touch *): permission rules are restricted to managed "
                            "settings (allowManagedPermissionRulesOnly)") == 1
    write(managed / "managed-settings.json", {"allowManagedPermissionRulesOnly": True,
                                              "permissions": {"allow": ["Bash(touch *)"]}})
    project(tmp_path, {"permissions": {"deny": ["Bash(touch *)"]}})
    assert verdict(proj) == "allow"  # (Claude Code ignores the project's deny rule too)
    assert verdict(proj, disallowed_tools=["Bash(touch *)"]) == "deny"


def test_the_managed_only_switches_elsewhere_are_named_and_ignored(managed: Path, tmp_path: Path) -> None:
    proj = project(tmp_path, {"allowManagedPermissionRulesOnly": True, "allowManagedHooksOnly": True,
                              "permissions": {"allow": ["Bash(touch *)"]}})
    s = load_settings(proj, ["project"], claude=True)
    assert verdict(proj) == "allow" and not s.managed_rules_only and not s.managed_hooks_only
    line = [w for w in s.warnings if "honoured only in managed settings" in w]
    assert line == [f"{proj / '.claude' / 'settings.json'}: allowManagedHooksOnly, allowManagedPermissionRulesOnly "
                    f"is honoured only in managed settings ({SYSTEM_DIR / 'managed-settings.json'}); ignored here"]


def hook(tag: str) -> dict[str, Any]:
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"echo {tag}"}]}]}


@pytest.mark.parametrize(("policy", "proj_extra", "runs"), [
    ({}, {}, ["managed", "project"]),
    ({"allowManagedHooksOnly": True}, {}, ["managed"]),
    ({}, {"disableAllHooks": True}, ["managed"]),  # another file's disableAllHooks leaves the managed ones on
    ({"disableAllHooks": True}, {}, []),
    ({"disableAllHooks": False}, {"disableAllHooks": True}, ["managed", "project"]),  # the managed value wins
    ({}, {"bare": True}, ["managed"]),  # --bare: the managed hooks still run (Claude Code's --bare too)
])
def test_which_hooks_run(managed: Path, tmp_path: Path, policy: dict[str, Any], proj_extra: dict[str, Any],
                         runs: list[str]) -> None:
    write(managed / "managed-settings.json", {"hooks": hook("managed"), **policy})
    bare = proj_extra.get("bare", False)
    proj = project(tmp_path, {"hooks": hook("project"), **{k: v for k, v in proj_extra.items() if k != "bare"}})
    opts = lw.AgentOptions(cwd=str(proj), bare=bare)
    registry = build_run_config(opts, proj, load_settings(proj, ["project"], claude=True)).hooks
    assert [h.command.removeprefix("echo ") for m in registry.matchers.get("PreToolUse", ())  # type: ignore[attr-defined]
            for h in m.hooks] == runs


@pytest.mark.skipif(os.name != "posix", reason="owners and modes are POSIX's")
@pytest.mark.parametrize("how", ["mode", "owner"])
def test_a_file_others_can_write_only_narrows(managed: Path, tmp_path: Path, how: str) -> None:
    path = write(managed / "managed-settings.json", {"permissions": {"allow": ["Bash(touch *)"], "deny": ["Read(/x)"]},
                                                     "allowManagedPermissionRulesOnly": True})
    if how == "mode":
        path.chmod(0o666)
    elif os.geteuid() == 0:
        os.chown(path, 65534, -1)
    else:
        pytest.skip("only root can give a file to another user")
    proj = project(tmp_path, {"permissions": {"allow": ["Bash(touch *)"]}})
    s = load_settings(proj, ["project"], claude=True)
    assert [str(r) for r in s.deny] == ["Read(/x)"] and not s.managed_rules_only
    assert [str(r) for r in s.allow] == ["Bash(touch *)"] and s.allow[0].source == "project"
    (said,) = [i.line() for i in s.ignored]
    why = "mode 0666" if how == "mode" else "owned by uid 65534"
    assert said.startswith(f"ignored permissions.allow Bash(touch *) from {path}: the managed settings file is "
                           "writable by users other than root and you (") and why in said, said


def test_the_variable_never_replaces_the_systems_policy(managed: Path, tmp_path: Path) -> None:
    system = tmp_path / "etc-claude-code"
    write(managed / "managed-settings.json", {})
    assert managed_folder(system) == (managed, None)
    write(system / "managed-settings.d" / "a.json", {})
    assert managed_folder(system) == (system, f"{ENV} is ignored: {system} holds managed settings, which nothing "
                                              "may replace")


@pytest.mark.e2e
@pytest.mark.parametrize("who", ["claude", "loopwright"])
def test_side_by_side_with_claude_code(tmp_path: Path, who: str) -> None:
    """`-p` with a managed deny rule and a project allow rule: the command is refused by both. Claude
    Code reads only /etc/claude-code, so it runs in a mount namespace of its own where a read-only
    overlay puts the test's folder there (nothing of the machine's /etc is written)."""
    policy = tmp_path / "low" / "claude-code"
    write(policy / "managed-settings.json", {"permissions": {"deny": ["Bash(touch *)"]}})
    proj, home = project(tmp_path, {"permissions": {"allow": ["Bash(touch *)", "Bash(echo *)"]}}), tmp_path / "home"
    write(home / ".claude.json", {"projects": {str(proj): {"hasTrustDialogAccepted": True}}})
    args = ["-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json"]
    with ScriptedServer([[bash("echo ok; touch made.txt")], [text("done")]], is_loop_call=lambda body: True) as srv:
        if who == "claude":
            if not CLAUDE.exists() or shutil.which("unshare") is None:
                pytest.skip("needs Claude Code (tests/node) and unshare")
            overlay = f"mount -t overlay overlay -o lowerdir={policy.parent}:/etc /etc && exec \"$@\""
            cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", overlay, "sh", str(CLAUDE), *args]
            env = claude_code_env(srv.url, str(home))
        else:
            cmd = [*loopwright_cmd(), "--claude-settings", *args]
            env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home), **{ENV: str(policy)},
                          LOOPWRIGHT_HOME=str(home / ".loopwright"), LOOPWRIGHT_TRUSTED_DIRS=str(proj))
        r = subprocess.run(cmd, cwd=proj, env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        if who == "claude" and "mount" in r.stderr and r.returncode != 0:
            pytest.skip(f"no private mount namespace here: {r.stderr.strip()}")
        results = [b for q in srv.requests for m in q.body["messages"] if isinstance(m["content"], list)
                   for b in m["content"] if b.get("type") == "tool_result"]
    assert r.returncode == 0, (who, r.stderr)
    assert not (proj / "made.txt").exists() and results and results[0].get("is_error") is True, (who, results)


def test_a_hosts_managed_settings_keep_what_restricts(managed: Path, tmp_path: Path) -> None:
    """AgentOptions.managed_settings (the TypeScript SDK's managedSettings): as Claude Code filters a
    host's tier; left out where the machine has managed settings, unless they say "merge"."""
    proj = project(tmp_path, {"permissions": {"allow": ["Bash(touch *)"]}, "hooks": hook("project")})
    host = {"permissions": {"deny": ["Bash(touch *)"], "allow": ["Read"], "defaultMode": "acceptEdits"},
            "disableAllHooks": True, "hooks": hook("host"), "env": {"X": "1"}, "deniedMcpServers": [{"serverName": "x"}]}
    opts = lw.AgentOptions(cwd=str(proj), managed_settings=host)
    s = run_settings(opts, proj)  # (the library reads no other file by default: the host's still apply)
    assert s is not None and [str(r) for r in s.deny] == ["Bash(touch *)"] and [str(r) for r in s.allow] == ["Read"]
    assert s.managed_hooks_only and not s.managed_hooks and s.env == {} and s.default_mode is None
    assert ("--managed-settings: only what restricts is taken from a host's managed settings; not taken: "
            "permissions.defaultMode, hooks, env") in s.warnings
    assert any("deniedMcpServers" in w and "does not honour" in w for w in s.warnings), s.warnings  # (kept, refused)
    opts = lw.AgentOptions(cwd=str(proj), managed_settings=host, setting_sources=["project"], claude_settings=True)
    config = build_run_config(opts, proj)
    assert config.permissions.evaluate("Bash", TOUCH).kind == "deny" and not config.hooks.matchers.get("PreToolUse")
    # the machine's managed settings leave the host's out, unless they merge them
    write(managed / "managed-settings.json", {"permissions": {"deny": ["Read(/x)"]}})
    s = run_settings(opts, proj)
    assert s is not None and [str(r) for r in s.deny] == ["Read(/x)"] and not s.managed_hooks_only
    assert ("--managed-settings left out of the policy tier: an administrator's managed settings apply and do not "
            "set parentSettingsBehavior to 'merge'") in s.warnings
    write(managed / "managed-settings.json", {"parentSettingsBehavior": "merge", "allowManagedPermissionRulesOnly": True})
    s = run_settings(opts, proj)
    assert s is not None and [str(r) for r in s.deny] == ["Bash(touch *)"]
    assert [r for r in s.allow if r.source == "managed"] == []  # (the host's allow rules go under rules-only)


@pytest.mark.e2e
def test_managed_settings_in_initialize(managed: Path, tmp_path: Path) -> None:
    """--managed-settings-in-initialize: the initialize request's managedSettings deny the command a
    project rule allows; without them, initialize and the prompt are answered with errors."""
    proj = project(tmp_path, {"permissions": {"allow": ["Bash(touch *)"]}})

    def session(init: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
        lines = [{"type": "control_request", "request_id": "i", "request": {"subtype": "initialize", **init}},
                 {"type": "user", "message": {"role": "user", "content": "go"}, "parent_tool_use_id": None,
                  "session_id": ""}]
        with ScriptedServer([[bash("touch made.txt")], [text("done")]]) as srv:
            p = subprocess.run([*loopwright_cmd(), "--output-format", "stream-json", "--verbose", "--input-format",
                                "stream-json", "--model", "claude-sonnet-4-6", "--setting-sources", "project",
                                "--await-initialize", "--managed-settings-in-initialize"],
                               input="".join(json.dumps(x) + "\n" for x in lines), capture_output=True, text=True,
                               cwd=proj, timeout=60, env=cli_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=srv.url,
                                                                 **{ENV: str(managed)}))
        return [json.loads(x) for x in p.stdout.splitlines()], list(srv.requests)

    out, requests = session({"managedSettings": {"permissions": {"deny": ["Bash(touch *)"]}}})
    (answer,) = [o["response"] for o in out if o["type"] == "control_response"]
    assert answer["subtype"] == "success" and answer["response"]["managed_settings_applied"] is True
    assert out[-1]["type"] == "result" and not (proj / "made.txt").exists()
    out, requests = session({})
    (answer,) = [o["response"] for o in out if o["type"] == "control_response"]
    assert answer["subtype"] == "error" and "no managedSettings object" in answer["error"]
    assert out[-1]["type"] == "result" and out[-1]["is_error"] and "not delivered" in str(out[-1]), out[-1]
    assert requests == []  # (the prompt never ran)


def test_a_skills_allowed_tools_grant_nothing_under_managed_rules_only(managed: Path, tmp_path: Path) -> None:
    """allowManagedPermissionRulesOnly: a skill's allowed-tools are not granted (the tool result says
    why, in Claude Code's words); its Bash call is asked like any other (here: refused)."""
    from loopwright.managed import RULES_ONLY
    from loopwright.tools.builtin import default_tools

    write(managed / "managed-settings.json", {"allowManagedPermissionRulesOnly": True})
    proj = tmp_path / "proj"
    write(proj / ".loopwright" / "skills" / "scaffold" / "SKILL.md",
          "---\nname: scaffold\ndescription: Create files\nallowed-tools: Bash(touch *)\n---\nTouch the files.\n")
    asked: list[str] = []
    turns = [[lw_use("s1", "Skill", skill="scaffold")], [lw_use("b1", "Bash", command="touch made.txt")], [text("done")]]
    r = lw.run("scaffold it", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=proj,
                                              setting_sources=["project"],
                                              can_use_tool=lambda name, x: name == "Skill" or asked.append(x["command"]) or False))
    loaded = r.messages[2]["content"][0]["content"]
    loaded = loaded if isinstance(loaded, str) else loaded[0]["text"]
    assert f"allowed-tools of {proj / '.loopwright' / 'skills' / 'scaffold' / 'SKILL.md'} ignored: {RULES_ONLY}" in loaded
    assert asked == ["touch made.txt"] and not (proj / "made.txt").exists()


@pytest.mark.e2e
def test_the_sdks_rule_updates_are_not_kept_under_managed_rules_only(managed: Path, tmp_path: Path) -> None:
    """As the Agent SDK's CLI under allowManagedPermissionRulesOnly: can_use_tool gets no suggested
    rules, and the rules its answer adds are not kept (each call is asked; one stderr line says
    why, Claude Code's "Rule not saved: managed rules only")."""
    import asyncio
    import sys

    sdk = pytest.importorskip("claude_agent_sdk", reason="the Python Agent SDK is not installed")
    from claude_agent_sdk.types import PermissionRuleValue

    from tests.helpers import LOOPWRIGHT_BIN

    write(managed / "managed-settings.json", {"allowManagedPermissionRulesOnly": True})
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    asked: list[Any] = []
    said: list[str] = []

    async def decide(name: str, x: dict[str, Any], ctx: Any) -> Any:
        asked.append(ctx.suggestions)
        return sdk.PermissionResultAllow(updated_permissions=[sdk.PermissionUpdate(
            type="addRules", rules=[PermissionRuleValue(tool_name="Bash", rule_content="rm *")], behavior="allow",
            destination="session")])

    async def go(srv: ScriptedServer) -> None:
        cli = str(LOOPWRIGHT_BIN if LOOPWRIGHT_BIN.exists() else Path(sys.executable).parent / "loopwright")
        env = {"ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test", ENV: str(managed)}
        opts = sdk.ClaudeAgentOptions(cli_path=cli, cwd=str(tmp_path), env=env, model="claude-sonnet-4-6",
                                      can_use_tool=decide, stderr=said.append)
        async with sdk.ClaudeSDKClient(opts) as client:
            await client.query("remove both")
            _ = [m async for m in client.receive_response()]

    with ScriptedServer([[bash("rm a.txt", "r1")], [bash("rm b.txt", "r2")], [text("removed")]]) as srv:
        asyncio.run(go(srv))
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists(), (asked, said)
    assert asked == [[], []], asked  # asked twice, nothing suggested
    assert any("Rule not saved: managed rules only" in x for x in said), said
