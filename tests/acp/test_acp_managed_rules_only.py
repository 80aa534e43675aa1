"""Under managed settings' allowManagedPermissionRulesOnly, `loopwright acp` offers the editor no
"allow always" (Claude Code hides "don't ask again"), and an editor that answers it anyway
approves that one call: nothing is saved or kept for the session. Driven by the official ACP
client library against the loopback Messages server, with a managed folder named by the
environment."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.managed import ENV, SYSTEM_DIR
from loopwright.testing import ScriptedServer
from tests.acp.test_acp import MODEL, Editor, agent_env, run, transcript
from tests.helpers import loopwright_cmd, notes_project, text, use

acp = pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("rules_only", [True, False])
def test_no_allow_always_under_managed_rules_only(tmp_path: Path, rules_only: bool) -> None:
    if (SYSTEM_DIR / "managed-settings.json").exists() or (SYSTEM_DIR / "managed-settings.d").exists():
        pytest.skip(f"{SYSTEM_DIR} holds managed settings on this machine: they would apply instead")
    work = notes_project(tmp_path)
    folder = tmp_path / "policy"
    folder.mkdir(mode=0o700)
    (folder / "managed-settings.json").write_text(json.dumps({"allowManagedPermissionRulesOnly": rules_only}))
    (folder / "managed-settings.json").chmod(0o600)
    f = str(work / "notes.txt")
    turns = [
        [use("r1", "Read", file_path=f)],
        [use("e1", "Edit", file_path=f, old_string="alpha", new_string="ALPHA")],
        [use("e2", "Edit", file_path=f, old_string="beta", new_string="BETA")],  # what Edit(./**) would cover
        [text("ok")],
    ]
    # The editor answers "allow always" though it may not be offered (a hostile or stale editor).
    editor = Editor(["allow_always", "reject_once"] if rules_only else ["allow_always"])

    async def go() -> Any:
        cmd = loopwright_cmd()
        with ScriptedServer(turns, model=MODEL) as srv:
            async with acp.spawn_agent_process(editor, cmd[0], *cmd[1:], "acp", "--model", MODEL, "--base-url",
                                               srv.url, env=agent_env(tmp_path, **{ENV: str(folder)})) as (conn, _):
                await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                                       client_capabilities=editor.caps()), 60)
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("go")])
                return new.session_id, r

    sid, r = run(go())
    assert r.stop_reason == "end_turn"
    kinds = [[o.kind for o in p.options] for p in editor.permissions]
    if not rules_only:  # the same policy folder without the switch: offered, saved, not asked again
        assert kinds == [["allow_once", "allow_always", "reject_once", "reject_always"]]
        assert (work / "notes.txt").read_text() == "ALPHA\nBETA\n"
        return
    assert kinds == [["allow_once", "reject_once", "reject_always"]] * 2  # asked twice: nothing was kept
    assert [p.tool_call.tool_call_id for p in editor.permissions] == ["e1", "e2"]
    assert (work / "notes.txt").read_text() == "ALPHA\nbeta\n"
    assert not (work / ".loopwright" / "settings.local.json").exists()
    results = {b["tool_use_id"]: b for m in transcript(tmp_path, sid, work) if m["role"] == "user"
               for b in m["content"] if b.get("type") == "tool_result"}
    assert not results["e1"].get("is_error") and results["e2"]["is_error"]
