"""MCP with programs nobody here wrote: the official filesystem server (npm) and time server
(PyPI) through `loopwright -p --mcp-config`, and Claude Code as a client of
`loopwright mcp serve`, all offline against loopback servers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.invariant import holds
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, loopwright_cmd

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NODE_BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"
FS_SERVER = NODE_BIN / "mcp-server-filesystem"
CLAUDE = NODE_BIN / "claude"


def use(i: int, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"c{i}", "name": name, "input": inp}


def env(home: Path, **extra: str) -> dict[str, str]:
    return cli_env(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright"), **extra)  # keeps the conftest's trust


def loopwright(*args: str, cwd: Path, home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), *args], cwd=cwd, env=env(home), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def tool_results(stream: str) -> dict[str, dict[str, Any]]:
    out = {}
    for line in stream.splitlines():
        d = json.loads(line)
        if d["type"] == "user":
            for b in d["message"]["content"]:
                if b.get("type") == "tool_result":
                    out[b["tool_use_id"]] = b
    return out


def content_text(b: dict[str, Any]) -> str:
    c = b["content"]
    return c if isinstance(c, str) else "\n".join(x.get("text", "") for x in c)


@pytest.mark.e2e
def test_third_party_servers_with_mcp_config(tmp_path: Path) -> None:
    if not FS_SERVER.exists() or shutil.which("node") is None:
        pytest.skip("the MCP filesystem server is not installed (cd tests/node && npm install)")
    pytest.importorskip("mcp_server_time", reason="mcp-server-time is not installed (pip install -e '.[dev]')")
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "a.txt").write_text("alpha from the filesystem server\n")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "fs": {"command": str(FS_SERVER), "args": ["${PROJECT_DIR}"]},
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}}))
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps([
        [use(1, "mcp__fs__read_text_file", path=str(project / "docs" / "a.txt")),
         use(2, "mcp__fs__list_directory", path=str(project)),
         use(3, "mcp__time__convert_time", source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo")],
        [use(4, "mcp__fs__write_file", path=str(project / "new.txt"), content="x")],
        [{"type": "text", "text": "done"}]]))
    os.environ["PROJECT_DIR"] = str(project)
    try:
        p = loopwright("-p", "go", "--model", f"scripted:{turns}", "--mcp-config", str(config),
                       "--allowedTools", "mcp__fs__read_text_file,mcp__fs__list_directory,mcp__time",
                       "--output-format", "stream-json", "--verbose", cwd=project, home=tmp_path / "home")
    finally:
        del os.environ["PROJECT_DIR"]
    assert p.returncode == 0, p.stderr
    init = json.loads(p.stdout.splitlines()[0])
    assert {s["name"]: s["status"] for s in init["mcp_servers"]} == {"fs": "connected", "time": "connected"}
    assert "mcp__fs__read_text_file" in init["tools"] and "mcp__time__get_current_time" in init["tools"]
    r = tool_results(p.stdout)
    assert "alpha from the filesystem server" in content_text(r["c1"])
    assert "[DIR] docs" in content_text(r["c2"])
    assert json.loads(content_text(r["c3"]))["target"]["datetime"].startswith("2") and "21:00" in content_text(r["c3"])
    assert r["c4"].get("is_error") and "--allowedTools mcp__fs__write_file" in content_text(r["c4"])
    assert not (project / "new.txt").exists()


@pytest.mark.e2e
def test_claude_code_uses_loopwright_mcp_serve(tmp_path: Path) -> None:
    if not CLAUDE.exists():
        pytest.skip("Claude Code is not installed (cd tests/node && npm install)")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("first line\nthe secret word is heron\n")
    outside = tmp_path / "outside.txt"
    mcp_config = {"mcpServers": {"lw": {"command": str(BIN / "loopwright"),
                                        "args": ["mcp", "serve", "--cwd", str(project),
                                                 "--permission-mode", "acceptEdits"]}}}
    script = [
        [use(1, "mcp__lw__Read", file_path=str(project / "notes.md"))],
        [use(2, "mcp__lw__Grep", pattern="heron", path=str(project), output_mode="content")],
        [use(3, "mcp__lw__Write", file_path=str(outside), content="should not be written")],
        [use(4, "mcp__lw__Write", file_path=str(project / "inside.txt"), content="written by loopwright")],
        [{"type": "text", "text": "done"}],
    ]
    home = tmp_path / "home"
    home.mkdir()
    with ScriptedServer(script, model="claude-sonnet-4-5", strict=False) as srv:
        e = env(home, ANTHROPIC_API_KEY="any", ANTHROPIC_BASE_URL=srv.url,
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1",
                DISABLE_ERROR_REPORTING="1", ENABLE_TOOL_SEARCH="false")  # MCP tools offered directly
        p = subprocess.run([str(CLAUDE), "-p", "use the tools", "--output-format", "json", "--model",
                            "claude-sonnet-4-5", "--permission-mode", "acceptEdits",
                            "--mcp-config", json.dumps(mcp_config), "--strict-mcp-config",
                            "--allowedTools", "mcp__lw"],
                           cwd=project, env=e, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180)
        loop = [r for r in srv.requests if r.loop_call]
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    tools = {t["name"] for t in loop[0].body["tools"]}
    assert {"mcp__lw__Read", "mcp__lw__Grep", "mcp__lw__Write", "mcp__lw__Bash"} <= tools
    last = loop[-1].body["messages"]
    assert all(holds(r.body["messages"]) for r in loop)
    results: dict[str, Any] = {}
    for m in last:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    results[b["tool_use_id"]] = b
    text = {k: json.dumps(v["content"]) for k, v in results.items()}
    assert not any("still connecting" in t or "No such tool" in t for t in text.values())
    assert "the secret word is heron" in text["c1"] and not results["c1"].get("is_error")
    assert "notes.md:2:the secret word is heron" in text["c2"]
    assert results["c3"].get("is_error") and "outside the working directories" in text["c3"]
    assert not outside.exists()
    assert (project / "inside.txt").read_text() == "written by loopwright"


@pytest.mark.e2e
def test_mcp_add_list_get_remove(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    server = str(TESTS / "mcp" / "mcp_test_server.py")
    p = loopwright("mcp", "add", "t", "-e", "A=1", "--", sys.executable, server, "--mode", "plain", cwd=project,
                   home=home)
    assert p.returncode == 0, p.stderr
    local = json.loads((project / ".loopwright" / "settings.local.json").read_text())
    assert local == {"mcpServers": {"t": {"type": "stdio", "command": sys.executable,
                                          "args": [server, "--mode", "plain"], "env": {"A": "1"}}}}
    p = loopwright("mcp", "add", "web", "--transport", "http", "http://127.0.0.1:9/mcp", "-H", "X-Key: v",
                   "--scope", "project", cwd=project, home=home)
    assert p.returncode == 0, p.stderr
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "v"}}}}
    p = loopwright("mcp", "add", "u", "--scope", "user", "--", "true", cwd=project, home=home)
    assert (home / ".loopwright" / "settings.json").is_file()
    p = loopwright("mcp", "list", cwd=project, home=home)
    assert p.returncode == 0, p.stderr
    lines = {ln.split(":")[0]: ln for ln in p.stdout.splitlines() if ":" in ln}
    assert "(local) - ✓ Connected" in lines["t"]
    assert "(project) - ⚠ Needs approval" in lines["web"]
    assert "(user) - ✗ Failed" in lines["u"]
    p = loopwright("mcp", "get", "t", cwd=project, home=home)
    assert "Status: connected" in p.stdout and "A=1" in p.stdout
    p = loopwright("mcp", "add", "t", "--", "x", cwd=project, home=home)
    assert p.returncode == 2 and "already exists" in p.stderr
    p = loopwright("mcp", "add", "bad", "--transport", "http", cwd=project, home=home)
    assert p.returncode == 2 and "one URL" in p.stderr
    p = loopwright("mcp", "remove", "t", cwd=project, home=home)
    assert p.returncode == 0 and "t" not in json.loads((project / ".loopwright" / "settings.local.json").read_text())[
        "mcpServers"]
    p = loopwright("mcp", "remove", "nope", cwd=project, home=home)
    assert p.returncode == 1 and "no MCP server named 'nope'" in p.stderr


@pytest.mark.e2e
def test_bad_mcp_config_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    p = loopwright("-p", "hi", "--model", "scripted:x.json", "--mcp-config", str(bad), cwd=tmp_path, home=tmp_path)
    assert p.returncode == 2 and f"{bad} is not valid JSON: line 1" in p.stderr
    p = loopwright("-p", "hi", "--model", "scripted:x.json", "--mcp-config", '{"servers": {}}', cwd=tmp_path,
                   home=tmp_path)
    assert p.returncode == 2 and 'no "mcpServers" object' in p.stderr


@pytest.mark.e2e
def test_a_bad_server_is_named_in_the_trace_and_the_run_goes_on(tmp_path: Path) -> None:
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps([[{"type": "text", "text": "fine"}]]))
    p = loopwright("-p", "hi", "--model", f"scripted:{turns}", "--mcp-config",
                   '{"mcpServers": {"ws": {"type": "websocket", "url": "ws://127.0.0.1:1"}, "nocmd": {"args": []}}}',
                   cwd=tmp_path, home=tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == "fine"
    assert "⚠ MCP server ws: failed: MCP server 'ws'" in p.stderr and 'unknown transport "type"' in p.stderr
    assert "⚠ MCP server nocmd: failed" in p.stderr and '"command" is missing' in p.stderr
