"""`loopwright mcp add-json` and `mcp add-from-claude-desktop`, run as a user runs them: the
server lands in the scope's file in Claude Code's format, `mcp list` starts it, a project-scope
server still needs approval, and bad input is refused with a line that names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import cli_env, loopwright_cmd

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")

SERVER = {"command": sys.executable, "args": [str(Path(__file__).with_name("mcp_test_server.py"))]}


def lw(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), "mcp", *args], cwd=project, env=cli_env(**env), capture_output=True,
                          text=True, timeout=120)


@pytest.mark.e2e
def test_add_json_writes_the_entry_and_the_server_runs(tmp_path: Path) -> None:
    p = lw(tmp_path, "add-json", "echo", json.dumps(SERVER))
    assert p.returncode == 0, p.stderr
    local = json.loads((tmp_path / ".loopwright" / "settings.local.json").read_text())
    assert local["mcpServers"]["echo"] == SERVER
    listed = lw(tmp_path, "list")
    assert "echo: " in listed.stdout and "✓ Connected" in listed.stdout, listed.stdout
    again = lw(tmp_path, "add-json", "echo", json.dumps(SERVER))
    assert again.returncode == 2 and "already exists in local config" in again.stderr
    bad = lw(tmp_path, "add-json", "x", '{"type": "http"}')
    assert bad.returncode == 2 and '"url" is missing' in bad.stderr
    assert lw(tmp_path, "add-json", "y", "{not json").stderr.startswith("loopwright: mcp add-json: invalid JSON")


@pytest.mark.e2e
def test_add_from_claude_desktop_reads_its_config_and_project_scope_still_needs_approval(tmp_path: Path) -> None:
    if sys.platform != "linux":
        pytest.skip("the test writes Claude Desktop's Linux path ($XDG_CONFIG_HOME/Claude)")
    xdg = tmp_path / "xdg"
    (xdg / "Claude").mkdir(parents=True)
    (xdg / "Claude" / "claude_desktop_config.json").write_text(json.dumps({"mcpServers": {
        "echo": SERVER, "web": {"type": "http", "url": "https://example.com/mcp"}}, "globalShortcut": ""}))
    project = tmp_path / "project"
    project.mkdir()
    p = lw(project, "add-from-claude-desktop", "echo", "--scope", "project", XDG_CONFIG_HOME=str(xdg))
    assert p.returncode == 0, p.stderr
    assert "Added 1 MCP server from Claude Desktop" in p.stdout
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {"echo": SERVER}}
    listed = lw(project, "list")
    assert "echo: " in listed.stdout and "Needs approval" in listed.stdout, listed.stdout  # trust as for .mcp.json
    every = lw(project, "add-from-claude-desktop", "--scope", "user", XDG_CONFIG_HOME=str(xdg))
    assert every.returncode == 0, every.stderr
    user = json.loads((Path(os.environ["HOME"]) / ".loopwright" / "settings.json").read_text())  # (cli_env: HOME only)
    assert set(user["mcpServers"]) == {"echo", "web"}
    missing = lw(project, "add-from-claude-desktop", "nope", XDG_CONFIG_HOME=str(xdg))
    assert missing.returncode == 2 and "has no server 'nope' (it has: echo, web)" in missing.stderr
    none = lw(project, "add-from-claude-desktop", XDG_CONFIG_HOME=str(tmp_path / "empty"))
    assert none.returncode == 2 and "no Claude Desktop configuration at" in none.stderr
