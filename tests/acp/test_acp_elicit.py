"""An MCP server's elicitation answered by the editor through ACP (acp/permission.py's `elicit`):
the official `agent-client-protocol` client drives `loopwright acp`, the editor gives the session
a real SDK server over stdio (tests/mcp/asking_mcp_server.py), and what the server got back is the
tool's result the model receives next."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP extra is not installed")
pytest.importorskip("mcp", reason="the MCP SDK is not installed")

import acp  # noqa: E402
from acp import schema as s  # noqa: E402

from loopwright.testing import ScriptedServer  # noqa: E402
from tests.acp.test_acp import MODEL, Editor, agent_env, run  # noqa: E402
from tests.helpers import loopwright_cmd, result_text, text, use  # noqa: E402

pytestmark = pytest.mark.e2e
HERE = Path(__file__).resolve().parent
SERVER = s.McpServerStdio(name="ask", command=sys.executable, args=[str(HERE.parent / "mcp" / "asking_mcp_server.py")],
                          env=[])
ALLOWED = ("--allowedTools", "mcp__ask__confirm,mcp__ask__pick")


class FormEditor(Editor):
    """An editor that answers ACP's elicitation/create itself (it advertises form elicitation)."""

    def __init__(self, content: dict[str, Any]) -> None:
        super().__init__()
        self.content = content
        self.elicited: list[tuple[str, Any]] = []

    def caps(self) -> s.ClientCapabilities:
        c = super().caps()
        c.elicitation = s.ElicitationCapabilities(form=s.ElicitationFormCapabilities())
        return c

    async def create_elicitation(self, message: str, mode: Any, **_: Any) -> Any:
        self.elicited.append((message, mode))
        return s.AcceptElicitationResponse(action="accept", content=self.content)


def results(editor: Editor, turns: list[Any]) -> list[str]:
    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            cmd = loopwright_cmd()
            # elicitation/create is in ACP's unstable part: the client opts in to answer it
            async with acp.spawn_agent_process(editor, cmd[0], *cmd[1:], "acp", "--model", MODEL, "--base-url",
                                               srv.url, *ALLOWED, env=agent_env(editor.home),
                                               use_unstable_protocol=True) as (conn, _):
                await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=editor.caps())
                new = await conn.new_session(cwd=str(editor.home), mcp_servers=[SERVER])
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("ask me")])
                return srv.loop_requests

    requests = run(go())
    return [result_text(b) for r in requests[1:] for b in r.body["messages"][-1]["content"]
            if b.get("type") == "tool_result"]


def test_an_editor_with_elicitation_answers_the_servers_form(tmp_path: Any) -> None:
    editor = FormEditor({"color": "green", "count": 5})
    editor.home = tmp_path  # type: ignore[attr-defined]
    out = results(editor, [[use("c1", "mcp__ask__confirm")], [text("done")]])
    assert out == ["accept: {'color': 'green', 'count': 5}"]
    ((message, mode),) = editor.elicited
    assert message == "MCP server ask: Your preferences?"
    props = mode.requested_schema.properties
    assert set(props) == {"color", "count"} and props["color"].default == "blue"
    assert editor.permissions == []  # its own channel, no permission request


def test_without_it_a_permission_request_accepts_the_defaults_or_declines(tmp_path: Any) -> None:
    editor = Editor(["accept", "decline"])
    editor.home = tmp_path  # type: ignore[attr-defined]
    out = results(editor, [[use("c1", "mcp__ask__confirm")], [use("p1", "mcp__ask__pick")], [text("done")]])
    assert out == ["accept: {'color': 'blue', 'count': 3}", "decline"]
    confirm, pick = editor.permissions
    assert confirm.tool_call.title == "MCP server ask: Your preferences?"
    assert [o.name for o in confirm.options] == ["Accept (color=blue, count=3)", "Decline"]
    assert [o.option_id for o in pick.options] == ["decline"]  # a required field without a default: no accept
