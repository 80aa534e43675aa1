"""Settings files: where they are read from, how they merge, what they configure, and how
a broken one is reported (through the library and through the CLI)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.settings import SettingsError, load_settings
from loopwright.tools.builtin import default_tools
from tests.helpers import bash, cli_env, loopwright_cmd, text, use


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    proj = tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("LOOPWRIGHT_HOME", raising=False)
    return {"home": home, "proj": proj, "tmp": tmp_path}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def perms(**kw: Any) -> dict[str, Any]:
    return {"permissions": kw}


def test_files_merge_in_order_lists_concatenate_scalars_later_win(env: dict[str, Path]) -> None:
    home, proj = env["home"], env["proj"]
    write(home / ".loopwright" / "settings.json", perms(allow=["Bash(ls *)"], defaultMode="plan"))
    write(proj / ".loopwright" / "settings.json", perms(allow=["Bash(make *)"], deny=["Bash(rm *)"],
                                                        defaultMode="acceptEdits"))
    write(proj / ".loopwright" / "settings.local.json", perms(ask=["Bash(git push *)"]))
    s = load_settings(proj)
    assert [str(r) for r in s.allow] == ["Bash(ls *)", "Bash(make *)"]
    assert [str(r) for r in s.deny] == ["Bash(rm *)"] and [str(r) for r in s.ask] == ["Bash(git push *)"]
    assert s.default_mode == "acceptEdits"
    assert [p.name for p in s.files] == ["settings.json", "settings.json", "settings.local.json"]
    only_local = load_settings(proj, ["local"])
    assert only_local.allow == [] and len(only_local.ask) == 1


def test_loopwright_home_overrides_the_user_directory(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    other = env["tmp"] / "cfg"
    write(other / "settings.json", perms(allow=["Read"]))
    monkeypatch.setenv("LOOPWRIGHT_HOME", str(other))
    assert [str(r) for r in load_settings(env["proj"], ["user"]).allow] == ["Read"]


def test_claude_code_files_only_when_asked(env: dict[str, Path]) -> None:
    home, proj = env["home"], env["proj"]
    write(home / ".claude" / "settings.json", perms(allow=["Bash(npm test)"]))
    write(proj / ".claude" / "settings.json", perms(deny=["Bash(curl *)"]))
    write(proj / ".claude" / "settings.local.json", perms(defaultMode="dontAsk"))
    write(proj / ".loopwright" / "settings.json", perms(allow=["Bash(make)"]))
    assert [str(r) for r in load_settings(proj).allow] == ["Bash(make)"]
    s = load_settings(proj, claude=True)
    assert [str(r) for r in s.allow] == ["Bash(npm test)", "Bash(make)"]
    assert [str(r) for r in s.deny] == ["Bash(curl *)"] and s.default_mode == "dontAsk"


@pytest.mark.parametrize("content,needle", [
    ('{"permissions": {"allow": ["Bash(ls *)",]}}', "invalid JSON in settings file"),
    ('{"permissions": {"allow": "Bash"}}', "permissions.allow must be a list"),
    ('{"permissions": {"deny": ["Bash(ls"]}}', "malformed permission rule"),
    ('{"permissions": {"defaultMode": "yolo"}}', "defaultMode 'yolo'"),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}', "needs a \"command\" string"),
    ('[1, 2]', "must be a JSON object"),
])
def test_bad_files_are_clear_errors_naming_the_file(env: dict[str, Path], content: str, needle: str) -> None:
    path = write(env["proj"] / ".loopwright" / "settings.json", content)
    with pytest.raises(SettingsError) as e:
        load_settings(env["proj"])
    assert needle in str(e.value) and str(path) in str(e.value)


def test_invalid_json_reports_line_and_column(env: dict[str, Path]) -> None:
    write(env["proj"] / ".loopwright" / "settings.local.json", '{\n  "permissions": {\n    "allow": [oops]\n}}')
    with pytest.raises(SettingsError, match=r"settings.local.json: line 3 column 15"):
        load_settings(env["proj"])


def test_settings_option_accepts_a_file_json_or_dict(env: dict[str, Path]) -> None:
    conf = write(env["tmp"] / "conf" / "team.json", perms(allow=["Edit(/allowed/**)"]))
    s = load_settings(env["proj"], [], extra=str(conf))
    assert s.allow[0].base == str(conf.parent)  # `/path` is anchored at the file's directory
    assert [str(r) for r in load_settings(env["proj"], [], extra='{"permissions": {"deny": ["Read"]}}').deny] == ["Read"]
    assert load_settings(env["proj"], [], extra={"env": {"A": "1"}}).env == {"A": "1"}
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings(env["proj"], [], extra="missing.json")


# --- settings in a run ------------------------------------------------------------------------

def run(env: dict[str, Path], turns: list[Any], **kw: Any) -> lw.ResultMessage:
    model = lw.ScriptedModel([*turns, [{"type": "text", "text": "ok"}]])
    return lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=env["proj"], **kw))


def test_library_reads_no_settings_unless_asked(env: dict[str, Path]) -> None:
    write(env["proj"] / ".loopwright" / "settings.json", perms(deny=["Bash(touch *)"]))
    r = run(env, [[bash("touch free")]])
    assert (env["proj"] / "free").exists() and r.permission_denials == []
    r = run(env, [[bash("touch blocked")]], setting_sources=["project"])
    assert not (env["proj"] / "blocked").exists() and "deny rule Bash(touch *)" in json.dumps(r.messages[2])


def test_settings_mode_rules_dirs_and_options_on_top(env: dict[str, Path]) -> None:
    extra = env["tmp"] / "extra"
    extra.mkdir()
    write(env["proj"] / ".loopwright" / "settings.json",
          perms(defaultMode="acceptEdits", additionalDirectories=["../extra"], allow=["Bash(make *)"]))
    write_call = {"type": "tool_use", "id": "t1", "name": "Write",
                  "input": {"file_path": str(extra / "a.txt"), "content": "x"}}
    r = run(env, [[write_call]], setting_sources=["project"])
    assert (extra / "a.txt").exists() and r.permission_denials == []
    # an explicit permission_mode option beats defaultMode
    write_call["input"] = {"file_path": str(extra / "b.txt"), "content": "x"}
    r = run(env, [[write_call]], setting_sources=["project"], permission_mode="plan")
    assert not (extra / "b.txt").exists() and "plan mode" in json.dumps(r.messages[2])
    # with settings in use and no mode anywhere, the mode is "default" (asks; headless: refused)
    write(env["proj"] / ".loopwright" / "settings.json", perms())
    r = run(env, [[bash("touch x")]], setting_sources=["project"])
    assert not (env["proj"] / "x").exists() and "cannot ask" in json.dumps(r.messages[2])


def test_hooks_and_env_from_settings_run(env: dict[str, Path]) -> None:
    out = env["tmp"] / "hook.txt"
    hook = {"type": "command", "command": f'cat >/dev/null; echo "$TEAM" > {out}; echo "from settings" >&2; exit 2'}
    write(env["proj"] / ".loopwright" / "settings.json",
          {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}, "env": {"TEAM": "blue"}})
    r = run(env, [[bash("touch never")]], setting_sources=["project"], permission_mode="bypassPermissions")
    assert out.read_text().strip() == "blue" and not (env["proj"] / "never").exists()
    assert "from settings" in json.dumps(r.messages[2])


def test_env_from_settings_reaches_bash_commands(env: dict[str, Path]) -> None:
    write(env["proj"] / ".loopwright" / "settings.json", {"env": {"TEAM": "green"}})
    r = run(env, [[bash("echo team=$TEAM")], [{"type": "text", "text": "ok"}]], setting_sources=["project"],
            permission_mode="bypassPermissions")
    assert "team=green" in json.dumps(r.messages[2])
    assert "TEAM" not in os.environ  # the harness's own environment is unchanged


def test_broken_settings_through_the_library_is_a_value_error(env: dict[str, Path]) -> None:
    write(env["proj"] / ".loopwright" / "settings.json", "{")
    with pytest.raises(ValueError, match="invalid JSON in settings file .*settings.json"):
        run(env, [], setting_sources=["project"])


# --- the CLI --------------------------------------------------------------------------------------

def cli(env: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), *args], cwd=env["proj"], capture_output=True, text=True,
                          timeout=60, env=cli_env(HOME=str(env["home"])), stdin=subprocess.DEVNULL)


def script(env: dict[str, Path], turns: list[Any]) -> str:
    p = write(env["tmp"] / "script.json", turns)
    return f"scripted:{p}"


@pytest.mark.e2e
def test_cli_reads_project_and_user_settings(env: dict[str, Path]) -> None:
    write(env["home"] / ".loopwright" / "settings.json", perms(allow=["Bash(touch allowed)"]))
    write(env["proj"] / ".loopwright" / "settings.json", perms(deny=["Bash(touch denied)"]))
    model = script(env, [[bash("touch allowed", "a"), bash("touch denied", "b"), bash("touch asked", "c")],
                         [{"type": "text", "text": "done"}]])
    p = cli(env, "-p", "go", "--model", model, "--output-format", "json")
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert [d["tool_use_id"] for d in result["permission_denials"]] == ["b", "c"]
    assert (env["proj"] / "allowed").exists() and not (env["proj"] / "denied").exists()
    assert not (env["proj"] / "asked").exists()
    # --setting-sources '' reads none; --settings adds a JSON string
    p = cli(env, "-p", "go", "--model", model, "--output-format", "json", "--setting-sources", "",
            "--settings", '{"permissions": {"allow": ["Bash(touch *)"]}}')
    assert p.returncode == 0, p.stderr
    assert (env["proj"] / "denied").exists() and json.loads(p.stdout)["permission_denials"] == []


@pytest.mark.e2e
def test_cli_broken_settings_is_one_clean_line(env: dict[str, Path]) -> None:
    path = write(env["proj"] / ".loopwright" / "settings.json", '{"permissions": ')
    p = cli(env, "-p", "go", "--model", script(env, [[{"type": "text", "text": "hi"}]]))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"invalid JSON in settings file {path}" in p.stderr


# --- the settings' env PATH is the PATH the gate protects -----------------------------------------

def test_settings_env_path_is_the_path_the_gate_protects(tmp_path: Path) -> None:
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"env": {"PATH": f"{tmp_path / 'tools'}:/usr/bin"}}))
    turns = [[use("u1", "Write", {"file_path": "tools/git", "content": "#!/bin/sh\n"})], [text("done")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=str(tmp_path),
                                     permission_mode="acceptEdits", setting_sources=["project"]))
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u1"] and not (tmp_path / "tools" / "git").exists()



@pytest.mark.parametrize("text", ['{"permissions": ' + "[" * 100_000 + "]" * 100_000 + "}", '{"n": 1' + "0" * 5000 + "}"],
                         ids=["nested", "5000-digits"])
def test_a_settings_file_python_cannot_read_is_named(tmp_path: Path, text: str) -> None:
    """A repository's settings file nested past the parser's depth (RecursionError) or holding a
    5000-digit number (ValueError): the start ended with a bare 'unexpected error: RecursionError',
    naming no file. It is refused as any invalid JSON is, the file named."""
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.json"
    path.write_text(text)
    with pytest.raises(SettingsError, match=f"invalid JSON in settings file {path}"):
        load_settings(tmp_path, ["project"], claude=True)
