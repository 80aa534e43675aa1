"""Claude Code (the reference client, offline against the loopback Messages server) uses
`loopwright mcp serve --http` with a bearer token: its tools are in Claude Code's first model call
(no "still connecting"), calls run through loopwright's gate, and its files are resources."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env
from tests.mcp.serve_helpers import http_server, private_file

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")
CLAUDE = Path(__file__).resolve().parents[2] / "tests" / "node" / "node_modules" / ".bin" / "claude"
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed "
                                                                                "(cd tests/node && npm ci)")]


def use(i: int, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"c{i}", "name": name, "input": inp}


def test_claude_code_uses_mcp_serve_over_http_with_a_token(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("the secret word is heron\n")
    token = "claude-code-test-token"
    token_file = private_file(tmp_path / "token", token)
    script = [[use(1, "mcp__lw__Read", file_path=str(project / "notes.md"))],
              [use(2, "mcp__lw__Write", file_path=str(tmp_path / "outside.txt"), content="no")],
              [{"type": "text", "text": "done"}]]
    home = tmp_path / "home"
    home.mkdir()
    with http_server(project, tmp_path / "lwhome", "--auth-token-file", str(token_file)) as url, \
            ScriptedServer(script, model="claude-sonnet-4-5", strict=False) as srv:
        config = {"mcpServers": {"lw": {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}}}
        env = cli_env(HOME=str(home), ANTHROPIC_API_KEY="any", ANTHROPIC_BASE_URL=srv.url,
                      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1",
                      DISABLE_ERROR_REPORTING="1", ENABLE_TOOL_SEARCH="false")
        p = subprocess.run([str(CLAUDE), "-p", "use the tools", "--output-format", "json", "--model",
                            "claude-sonnet-4-5", "--permission-mode", "acceptEdits", "--mcp-config", json.dumps(config),
                            "--strict-mcp-config", "--allowedTools", "mcp__lw"],
                           cwd=project, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180)
        loop = [r for r in srv.requests if r.loop_call]
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    assert {"mcp__lw__Read", "mcp__lw__Write", "mcp__lw__Bash"} <= {t["name"] for t in loop[0].body["tools"]}
    results = {b["tool_use_id"]: b for m in loop[-1].body["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"}
    text = {k: json.dumps(v["content"]) for k, v in results.items()}
    assert "the secret word is heron" in text["c1"] and not results["c1"].get("is_error")
    assert results["c2"].get("is_error") and "outside the working directories" in text["c2"]
    assert not any("still connecting" in t or "No such tool" in t for t in text.values())
    assert not (tmp_path / "outside.txt").exists()
