"""An MCP server's elicitation answered in the interactive session's dialog (cli/elicit_dialog.py):
`loopwright` in tmux (a private server, -L), a real SDK server over stdio
(tests/mcp/asking_mcp_server.py), the loopback Messages server scripting the tool calls; what
the server got back is the tool's result the model receives next."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")]

HERE = Path(__file__).resolve().parent


def tool_results(body: dict[str, Any]) -> list[str]:
    from tests.helpers import result_text

    return [result_text(b) for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def test_the_dialog_edits_accepts_and_cancels_a_servers_form(tmp_path: Path) -> None:
    """The form shows the schema's fields with their defaults; an edited field and Accept send the
    typed values (as the schema's types); Esc cancels the next one."""
    from loopwright.testing import ScriptedServer
    from tests.cli.test_interactive_commands import WAIT, repl
    from tests.helpers import text, until, use

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"ask": {"command": sys.executable,
                                                         "args": [str(HERE / "asking_mcp_server.py")]}}}))
    turns = [[use("t1", "mcp__ask__confirm")], [use("t2", "mcp__ask__confirm")], [text("all answered")]]
    with ScriptedServer(turns) as srv, \
            repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url, "--mcp-config", str(config),
                 "--allowedTools", "mcp__ask__confirm") as t:
        t.send("ask me")
        s = t.wait("Esc = cancel", timeout=WAIT)  # (the hint shows once the dialog takes keys)
        assert "MCP server ask asks" in s and "Your preferences?" in s, s
        assert "Color: blue" in s and "Count (integer): 3" in s, s
        for _ in "blue":
            t.keys("BSpace")
        t.type("red")
        t.wait("Color: red")
        t.keys("Down")  # count
        t.keys("BSpace")
        t.type("x")
        t.keys("Down")  # Accept
        t.keys("Enter")
        t.wait("count must be an integer")  # checked before anything is sent
        t.keys("Up")
        t.keys("BSpace")
        t.type("7")
        t.wait("Count (integer): 7")
        t.keys("Down")
        t.keys("Enter")
        t.wait("MCP server ask: accept")
        assert until(lambda: len(srv.loop_requests) >= 2, WAIT)
        assert tool_results(srv.loop_requests[1].body)[-1] == "accept: {'color': 'red', 'count': 7}"

        t.wait("Color: blue", timeout=WAIT)  # the second call's form, its defaults again
        t.wait("Esc = cancel", count=1)
        t.keys("Escape")
        t.wait("all answered", timeout=WAIT)
        assert tool_results(srv.loop_requests[2].body)[-1] == "cancel: "
