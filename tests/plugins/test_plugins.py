"""Claude Code plugins (plugins/): a plugin directory's commands, agents, skills, hooks, MCP servers
and output styles in a run (--plugin-dir), what it may run listed before it runs; local and git
marketplaces, `loopwright plugin install|list|enable|disable|remove`, `enabledPlugins` in
settings, and trust: an untrusted project cannot turn a plugin on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.plugins import load_plugin
from loopwright.plugins.manifest import PluginError
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, loopwright_cmd, text

pytestmark = pytest.mark.e2e
MCP_SERVER = str(TESTS / "mcp" / "mcp_test_server.py")


def make_plugin(root: Path, name: str = "myplug", mcp: bool = True, **manifest: Any) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name, "version": "1.0.0", **manifest}))
    (root / "commands").mkdir()
    (root / "commands" / "hello.md").write_text("---\ndescription: says hello\n---\nSay HELLO-FROM-PLUGIN $ARGUMENTS\n")
    (root / "agents").mkdir()
    (root / "agents" / "reviewer.md").write_text("---\ndescription: PLUGIN-REVIEWER\ntools: Read\n---\nReview.\n")
    (root / "skills" / "greet").mkdir(parents=True)
    (root / "skills" / "greet" / "SKILL.md").write_text("---\nname: greet\ndescription: PLUGIN-SKILL\n---\nGreet.\n")
    (root / "hooks").mkdir()
    hook = {"type": "command", "command": "echo hooked >> ${CLAUDE_PLUGIN_ROOT}/hook.log"}
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}))
    if mcp:
        (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"srv": {"command": sys.executable,
                                                                           "args": [MCP_SERVER]}}}))
    (root / "output-styles").mkdir()
    (root / "output-styles" / "plug.md").write_text("---\nname: PlugStyle\ndescription: d\n---\nSPEAK-PLUGIN.\n")
    return root


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def run(srv: ScriptedServer, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), "--model", "claude-sonnet-4-5", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"))


def lw_plugin(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), "plugin", *args], capture_output=True, text=True, timeout=120,
                          env=cli_env(), cwd=cwd)


def test_a_plugin_dir_brings_every_part(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    plug = make_plugin(tmp_path / "plug")
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedServer([[text("done")]]) as srv:
        r = run(srv, work, "-p", "/myplug:hello world", "--plugin-dir", str(plug),
                "--settings", json.dumps({"outputStyle": "PlugStyle"}))
        body = srv.loop_requests[0].body
    assert r.returncode == 0, r.stderr
    prompt = json.dumps(body["messages"][0]["content"])
    assert "HELLO-FROM-PLUGIN world" in prompt, "the plugin's command, /plugin:command"
    tools = {t["name"]: t for t in body["tools"]}
    assert "mcp__plugin_myplug_srv__echo" in tools, "the plugin's MCP server"
    assert "myplug:reviewer: PLUGIN-REVIEWER" in tools["Agent"]["description"]
    assert "PLUGIN-SKILL" in tools["Skill"]["description"]
    assert "# Output Style: PlugStyle\nSPEAK-PLUGIN." in system_text(body)
    assert (plug / "hook.log").read_text() == "hooked\n", "its hook ran, ${CLAUDE_PLUGIN_ROOT} resolved"
    listed = [ln for ln in r.stderr.splitlines() if "may run" in ln]
    assert listed == [f"loopwright: warning: plugin myplug ({plug}) may run: hook UserPromptSubmit: echo hooked >> "
                      f"{plug}/hook.log",
                      f"loopwright: warning: plugin myplug ({plug}) may run: MCP server plugin_myplug_srv: "
                      f"{sys.executable} {MCP_SERVER}"]


def test_a_folder_of_plugins_and_a_broken_one(tmp_path: Path) -> None:
    make_plugin(tmp_path / "many" / "a", "a", mcp=False, lspServers={"x": {}})
    bad = tmp_path / "many" / "b" / ".claude-plugin"
    bad.mkdir(parents=True)
    (bad / "plugin.json").write_text(json.dumps({"name": "no spaces allowed"}))
    with ScriptedServer([[text("done")]]) as srv:
        r = run(srv, tmp_path, "-p", "/a:hello x", "--plugin-dir", str(tmp_path / "many"))
        prompt = json.dumps(srv.loop_requests[0].body["messages"][0]["content"])
    assert r.returncode == 0, r.stderr
    assert "HELLO-FROM-PLUGIN x" in prompt
    assert "\"name\" must be letters, digits" in r.stderr
    assert "plugin 'a': loopwright does not use lspServers of its plugin.json" in r.stderr
    with pytest.raises(PluginError, match="no such directory"):
        load_plugin(tmp_path / "nope")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def test_local_marketplace_install_enable_disable_remove(tmp_path: Path) -> None:
    market = tmp_path / "market"
    make_plugin(market / "plugins" / "myplug", mcp=False)
    (market / ".claude-plugin").mkdir()
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(
        {"name": "mkt", "owner": {"name": "me"}, "plugins": [{"name": "myplug", "source": "./plugins/myplug"}]}))
    r = lw_plugin("marketplace", "add", str(market))
    assert r.returncode == 0 and r.stdout.strip() == "marketplace mkt: myplug", r.stderr
    r = lw_plugin("install", "myplug@mkt")
    assert r.returncode == 0, r.stderr
    assert "it may run: hook UserPromptSubmit: echo hooked >> " in r.stdout, "listed at install: the consent"
    store = Path(os.environ["LOOPWRIGHT_HOME"]) / "plugins"
    assert oct((store / "installed_plugins.json").stat().st_mode & 0o777) == "0o600"
    assert oct(store.stat().st_mode & 0o777) == "0o700"
    assert lw_plugin("list").stdout.startswith("myplug@mkt\tenabled\t")
    work = tmp_path / "work"
    work.mkdir()

    def prompt_of(*extra: str) -> tuple[str, str]:
        with ScriptedServer([[text("done")]]) as srv:
            r = run(srv, work, "-p", "/myplug:hello there", *extra)
            assert r.returncode == 0, r.stderr
            return json.dumps(srv.loop_requests[0].body["messages"][0]["content"]), r.stderr

    assert "HELLO-FROM-PLUGIN there" in prompt_of()[0], "an installed plugin is in every run"
    assert "may run" not in prompt_of()[1], "installed: consented already, not listed again"
    assert "HELLO-FROM-PLUGIN" not in prompt_of("--setting-sources", "project")[0], "the user's setup: with user only"
    assert "HELLO-FROM-PLUGIN" not in prompt_of("--bare")[0], "--bare: no installed plugins (Claude Code's)"
    off = json.dumps({"enabledPlugins": {"myplug@mkt": False}})
    assert "HELLO-FROM-PLUGIN" not in prompt_of("--settings", off)[0], "enabledPlugins false turns it off"
    assert lw_plugin("disable", "myplug").stdout.strip() == "myplug@mkt disabled"
    assert "HELLO-FROM-PLUGIN" not in prompt_of()[0]
    on = json.dumps({"enabledPlugins": {"myplug@mkt": True, "ghost@mkt": True}})
    text_, err = prompt_of("--settings", on)
    assert "HELLO-FROM-PLUGIN" in text_
    assert "enabledPlugins names ghost@mkt, which is not installed (loopwright plugin install ghost@mkt)" in err
    assert lw_plugin("enable", "myplug").returncode == 0
    assert lw_plugin("remove", "myplug@mkt").stdout.strip() == "myplug@mkt removed"
    assert not (store / "cache" / "mkt" / "myplug").exists()
    assert lw_plugin("list").stdout.startswith("no plugins installed")
    r = lw_plugin("install", "nothing@mkt")
    assert r.returncode == 1 and "no plugin 'nothing@mkt' in the marketplaces (mkt)" in r.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_marketplace_and_git_plugin_source(tmp_path: Path) -> None:
    plug = make_plugin(tmp_path / "plugrepo", "gitplug", mcp=False)
    git("init", "-q", cwd=plug)
    git("add", "-A", cwd=plug)
    git("commit", "-qm", "plugin", cwd=plug)
    repo = tmp_path / "marketrepo"
    (repo / ".claude-plugin").mkdir(parents=True)
    (repo / ".claude-plugin" / "marketplace.json").write_text(json.dumps(
        {"name": "gitmkt", "plugins": [{"name": "gitplug", "source": {"source": "git", "url": str(plug)}}]}))
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "market", cwd=repo)
    bare = tmp_path / "market.git"
    git("clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
    r = lw_plugin("marketplace", "add", f"file://{bare}")
    assert r.returncode == 0 and r.stdout.strip() == "marketplace gitmkt: gitplug", r.stderr
    assert "gitmkt\tgit\tfile://" in lw_plugin("marketplace", "list").stdout
    r = lw_plugin("install", "gitplug")
    assert r.returncode == 0, r.stderr
    with ScriptedServer([[text("done")]]) as srv:
        r = run(srv, tmp_path, "-p", "/gitplug:hello git")
        assert r.returncode == 0, r.stderr
        assert "HELLO-FROM-PLUGIN git" in json.dumps(srv.loop_requests[0].body["messages"][0]["content"])
    r = lw_plugin("marketplace", "add", str(tmp_path / "not-a-repo"))
    assert r.returncode == 1 and "git clone" in r.stderr


def test_an_untrusted_project_cannot_turn_a_plugin_on(tmp_path: Path) -> None:
    from loopwright.settings import load_settings

    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(
        {"enabledPlugins": {"evil@mkt": True, "quiet@mkt": False}}))
    s = load_settings(tmp_path, ["project"], claude=True, trusted=False)
    assert s.enabled_plugins == {"quiet@mkt": False}
    assert [i.item for i in s.ignored] == ["enabledPlugins evil@mkt"]
    assert load_settings(tmp_path, ["project"], claude=True, trusted=True).enabled_plugins == {
        "evil@mkt": True, "quiet@mkt": False}


def test_the_interactive_mode_expands_a_plugin_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from loopwright.cli.interactive import Repl
    from loopwright.options import AgentOptions

    plug = make_plugin(tmp_path / "plug", mcp=False)
    repl = Repl(AgentOptions(model="scripted:unused.json", cwd=str(tmp_path), plugins=[str(plug)]))
    prompt = repl.custom_command("/myplug:hello repl")
    assert prompt == "/myplug:hello repl"  # as typed: the run expands it (UserPromptExpansion), after UserPromptSubmit
    command = repl.client._next_options().slash_command
    assert command is not None and "HELLO-FROM-PLUGIN repl" in command.prompt and command.command.source == "plugin"
    assert repl.custom_command("/nothing:here") is None
