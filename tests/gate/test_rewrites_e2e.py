"""A rewritten input is judged again, end to end (issue 40, finding 6): loopwright as a real
subprocess, driven over the Agent SDK's stream-json protocol by the official Python SDK
(`claude_agent_sdk`) and over ACP by the official ACP library, against the loopback Messages
server. A rewrite the rules would ask about is asked about again (the user approved the input
they saw, not the new one); one a deny rule matches never runs."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import text, use

pytestmark = pytest.mark.e2e


def test_sdk_can_use_tool_rewrite_is_asked_about_again(tmp_path: Path) -> None:
    pytest.importorskip("claude_agent_sdk")
    from claude_agent_sdk import ClaudeSDKClient, PermissionResultAllow, PermissionResultDeny

    from tests.sdkproto.test_sdk_protocol import last_results, options, result_of, result_text

    proj, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    proj.mkdir()
    elsewhere.mkdir()
    inside, outside, denied = proj / "a.txt", elsewhere / "x.txt", elsewhere / "denied.txt"
    asked: list[str] = []

    async def decide(name: str, x: dict[str, Any], ctx: Any) -> Any:
        asked.append(x["file_path"])
        if x["file_path"] == str(inside):  # the user approves a.txt, the program re-points it
            return PermissionResultAllow(updated_input={**x, "file_path": str(outside)})
        if x["file_path"] == str(proj / "b.txt"):
            return PermissionResultAllow(updated_input={**x, "file_path": str(denied)})
        return PermissionResultDeny(message="not that file")  # asked about x.txt: no

    async def go(srv: ScriptedServer) -> list[Any]:
        opts = options("loopwright", srv, proj, can_use_tool=decide, permission_mode="default",
                       disallowed_tools=[f"Write(/{denied})"])
        async with ClaudeSDKClient(opts) as client:
            await client.query("write them")
            return [m async for m in client.receive_response()]

    turns = [[use("w1", "Write", file_path=str(inside), content="x")],
             [use("w2", "Write", file_path=str(proj / "b.txt"), content="y")], [text("done")]]
    with ScriptedServer(turns) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "done"
    # w1: asked about a.txt, then again about the rewrite (outside the working directory); w2's
    # rewrite is refused by the deny rule without a second question
    assert asked == [str(inside), str(outside), str(proj / "b.txt")]
    assert not inside.exists() and not outside.exists() and not denied.exists()
    (r1,) = last_results(srv, 1)
    assert r1.get("is_error") and "not that file" in result_text(r1)
    (r2,) = last_results(srv, 2)
    assert r2.get("is_error") and f"Write(/{denied})" in result_text(r2)


def test_acp_editor_is_asked_about_a_hook_rewrite_acceptedits_would_have_approved(tmp_path: Path) -> None:
    """acceptEdits approves a Write inside the project; a PreToolUse hook re-points it outside.
    The editor is asked about the input that would run (its raw_input), and its refusal holds."""
    acp = pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")
    from tests.acp.test_acp import MODEL, Editor, connected, run

    home, proj = tmp_path / "home", tmp_path / "proj"
    proj.mkdir()
    outside = tmp_path / "elsewhere.txt"
    hook = (f"{sys.executable} -c 'import json,sys; x=json.load(sys.stdin)[\"tool_input\"]; "
            f"x[\"file_path\"]=\"{outside}\"; print(json.dumps({{\"hookSpecificOutput\": "
            f"{{\"hookEventName\": \"PreToolUse\", \"updatedInput\": x}}}}))'")
    (home / ".loopwright").mkdir(parents=True)
    (home / ".loopwright" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write", "hooks": [{"type": "command", "command": hook}]}]}}))
    turns = [[use("w1", "Write", file_path=str(proj / "a.txt"), content="x")], [text("done")]]
    editor = Editor(["reject_once"])

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, home) as (conn, _):
                new = await conn.new_session(cwd=str(proj), mcp_servers=[])
                await conn.set_session_mode(session_id=new.session_id, mode_id="acceptEdits")
                return await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("write a.txt")])

    r = run(go())
    assert r.stop_reason == "end_turn"
    assert len(editor.permissions) == 1
    assert editor.permissions[0].tool_call.raw_input["file_path"] == str(outside)
    assert not outside.exists() and not (proj / "a.txt").exists()
