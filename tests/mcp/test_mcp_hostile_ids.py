"""A tool_use id is never a path: a model (a provider, a proxy) that sends an id such as
`../../x` cannot make loopwright write outside the session's folder. The full text of a long MCP
result is saved beside the transcript under the call's id: that id named the file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, loopwright_cmd, text, use

SERVER = str(TESTS / "mcp" / "hostile_mcp_server.py")
pytest.importorskip("mcp", reason="the MCP SDK is an extra: pip install 'loopwright[mcp]'")


@pytest.mark.e2e
def test_a_long_results_file_is_never_named_by_a_hostile_tool_use_id(tmp_path: Path) -> None:
    home, work, outside = tmp_path / "home", tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    bad = "../" * 12 + str(outside / "pwned").lstrip("/")
    cfg = json.dumps({"mcpServers": {"hostile": {"command": sys.executable, "args": [SERVER, "--long-line", "120000"]}}})
    env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(home))
    with ScriptedServer([[use(bad, "mcp__hostile__get", x="a")], [text("done")]]) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", "claude-sonnet-4-6", "--base-url", srv.url,
                            "--mcp-config", cfg, "--allowedTools", "mcp__hostile__get", "--output-format", "json"],
                           cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        result = json.dumps(srv.loop_requests[-1].body["messages"][-1]["content"][0])
    assert list(outside.iterdir()) == []
    saved = [p for p in home.rglob("tool-results/*") if p.is_file()]
    assert len(saved) == 1 and saved[0].read_text() == "y" * 120000
    assert "output cut" in result and str(saved[0]) in result


@pytest.mark.e2e
def test_a_huge_description_is_cut_and_a_huge_schema_refused(tmp_path: Path) -> None:
    """What every request carries stays bounded: a 1 MB description is cut to 4096 characters as
    Claude Code cuts it; a tool whose schema is 300 KB is not offered, and a line says so."""
    cfg = json.dumps({"mcpServers": {"hostile": {"command": sys.executable, "args": [
        SERVER, "--description-chars", "1000000", "--schema-bytes", "300000"]}}})
    env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "home"))
    with ScriptedServer([[text("done")]]) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", "claude-sonnet-4-6", "--base-url", srv.url,
                            "--no-session-persistence", "--mcp-config", cfg, "--output-format", "json"],
                           cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        tools = {t["name"]: t for t in srv.loop_requests[-1].body["tools"]}
    assert len(srv.loop_requests[-1].raw) < 200_000
    desc = tools["mcp__hostile__get"]["description"]
    assert len(desc) == 4096 and desc.startswith("get itddd") and desc.endswith("\u2026 [truncated]")
    assert "mcp__hostile__fat" not in tools
    assert "tool 'fat' skipped: its input schema is 300,0" in r.stderr and "over the 100,000" in r.stderr


@pytest.mark.e2e
def test_a_huge_resource_list_is_cut_as_any_mcp_output(tmp_path: Path) -> None:
    """ListMcpResources' answer is the server's words too: 2,000 resources with long descriptions
    (2 MB) went into the history whole, and every later request of the run carried them. It is
    cut at MAX_MCP_OUTPUT_TOKENS as a tool's result is, the rest saved beside the transcript."""
    cfg = json.dumps({"mcpServers": {"hostile": {"command": sys.executable, "args": [SERVER, "--resources", "2000"]}}})
    env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "home"))
    with ScriptedServer([[use("l1", "ListMcpResources")], [text("done")]]) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", "claude-sonnet-4-6", "--base-url", srv.url,
                            "--mcp-config", cfg, "--output-format", "json"], cwd=tmp_path, env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        last = srv.loop_requests[-1]
    result = json.dumps(last.body["messages"][-1]["content"][0])
    assert len(last.raw) < 250_000 and "output cut" in result and "file:///r0" in result, len(last.raw)
    saved = [p for p in (tmp_path / "home").rglob("tool-results/*") if p.is_file()]
    assert len(saved) == 1 and "file:///r1999" in saved[0].read_text()
