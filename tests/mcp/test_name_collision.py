"""Two MCP servers whose names sanitise to one tool prefix (`github` and `_github` both give
`mcp__github__`): one line naming both in every mode (stderr with -p, the init message's warnings
for the SDK and the Python API), neither is started, and the other servers still load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import loopwright as lw
from loopwright.mcp.naming import clash_lines
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, collect, loopwright_cmd, text

pytest.importorskip("mcp")
SERVER = str(TESTS / "mcp" / "mcp_test_server.py")
LINE = ("MCP servers '_github' and 'github' both become mcp__github__: neither is started (rename one; the other "
        "servers still load)")


def servers() -> dict[str, object]:
    stdio = {"command": sys.executable, "args": [SERVER]}
    return {"mcpServers": {"github": stdio, "_github": stdio, "other": stdio}}


def test_clash_lines() -> None:
    assert clash_lines(["github", "_github", "other", "a.b", "a_b"]) == [
        LINE, "MCP servers 'a.b' and 'a_b' both become mcp__a_b__: neither is started (rename one; the other "
        "servers still load)"]
    assert clash_lines(["github", "gitlab"]) == []


@pytest.mark.e2e
def test_print_mode_names_both_and_keeps_the_others(tmp_path: Path) -> None:
    with ScriptedServer([[text("hi")]]) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--mcp-config",
                            json.dumps(servers())], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                           env=cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"))
        names = [t["name"] for t in srv.loop_requests[0].body["tools"]]
    assert r.returncode == 0, r.stderr
    assert [ln for ln in r.stderr.splitlines() if "mcp__github__" in ln] == [f"loopwright: warning: {LINE}"]
    assert "mcp__other__echo" in names and not [n for n in names if n.startswith("mcp__github")]


@pytest.mark.e2e
def test_init_message_names_both(tmp_path: Path) -> None:
    msgs = collect("go", lw.AgentOptions(model=lw.ScriptedModel([[text("hi")]]), cwd=str(tmp_path),
                                         mcp_servers=servers()))
    init = msgs[0]
    assert init.subtype == "init" and LINE in init.data["warnings"]
    status = {s["name"]: s["status"] for s in init.data["mcp_servers"]}
    assert status == {"github": "failed", "_github": "failed", "other": "connected"}


def test_the_interactive_trace_shows_the_line_and_print_mode_leaves_it_to_stderr() -> None:
    import io

    from loopwright.cli.render import TraceRenderer
    from loopwright.cli.toolview import Log, ReplRenderer
    from loopwright.messages import SystemMessage

    init = SystemMessage("init", {"session_id": "s", "model": "m", "permission_mode": "default", "warnings": [LINE]})
    repl = io.StringIO()
    ReplRenderer(repl, Log()).show(init)
    assert LINE in repl.getvalue()
    plain = io.StringIO()
    TraceRenderer(plain, spinner=False).show(init)
    assert LINE not in plain.getvalue(), "-p prints the warnings itself, once"
