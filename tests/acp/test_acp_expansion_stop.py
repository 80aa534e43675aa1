"""A prompt a UserPromptExpansion or UserPromptSubmit hook stops, in ACP (issue 42's gap): as in `-p` and an SDK
session the prompt ends without a model call and not as a failure (stopReason end_turn), and the
editor is shown the reason as the agent's message, so nothing is stopped unseen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP extra is not installed")

import acp  # noqa: E402

from loopwright.testing import ScriptedServer  # noqa: E402
from tests.acp.test_acp import Editor, connected, run  # noqa: E402
from tests.helpers import text  # noqa: E402

pytestmark = pytest.mark.e2e


def test_a_blocked_expansion_ends_the_turn_and_shows_why(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".loopwright" / "commands").mkdir(parents=True)
    (work / ".loopwright" / "commands" / "greet.md").write_text("---\ndescription: say hello\n---\nHello $ARGUMENTS.\n")
    hook = work / "expansion-hook.sh"
    hook.write_text('#!/bin/sh\ncat > /dev/null\necho "not in this project" >&2\nexit 2\n')
    hook.chmod(0o755)
    (work / ".loopwright" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptExpansion": [
        {"hooks": [{"type": "command", "command": str(hook)}]}]}}))
    editor = Editor()

    async def go() -> Any:
        with ScriptedServer([[text("never sent")]]) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("/greet Ada")])
                return r, len(srv.loop_requests)

    r, calls = run(go())
    assert (r.stop_reason, calls) == ("end_turn", 0)
    assert editor.agent_text() == (f"UserPromptExpansion operation blocked by hook:\n[{hook}]: not in this project\n"
                                   "\n\nOriginal prompt: /greet Ada")


def test_a_blocked_prompt_ends_the_turn_and_shows_why(tmp_path: Path) -> None:
    """A UserPromptSubmit hook's block ends the same way (Claude Code: a success with the reason)."""
    work = tmp_path / "work"
    (work / ".loopwright").mkdir(parents=True)
    hook = work / "prompt-hook.sh"
    hook.write_text('#!/bin/sh\ncat > /dev/null\necho "no secrets here" >&2\nexit 2\n')
    hook.chmod(0o755)
    (work / ".loopwright" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": str(hook)}]}]}}))
    editor = Editor()

    async def go() -> Any:
        with ScriptedServer([[text("never sent")]]) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("a secret")])
                return r, len(srv.loop_requests)

    r, calls = run(go())
    assert (r.stop_reason, calls) == ("end_turn", 0)
    assert editor.agent_text() == (f"UserPromptSubmit operation blocked by hook:\n[{hook}]: no secrets here\n"
                                   "\n\nOriginal prompt: a secret")
