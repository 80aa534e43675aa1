"""MessageDisplay (issue 42): Claude Code 2.1.332 and loopwright on the same scripted turns with
the same settings: what the hook read, what -p printed (text, json, stream-json), and what the
model was sent next (the history keeps the original text: display-only)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
pytestmark = pytest.mark.e2e
SHOWN = {"hookSpecificOutput": {"hookEventName": "MessageDisplay", "displayContent": "SHOWN INSTEAD"}}


def run(who: str, tmp: Path, turns: list[Any], answer: dict[str, Any] | None, *args: str) -> tuple[Any, str, list[Any]]:
    """(the server's requests, -p's stdout, the MessageDisplay hook inputs)."""
    proj, home = tmp / who / "proj", tmp / who / "home"
    proj.mkdir(parents=True)
    home.mkdir()
    log, hook = tmp / who / "hooks.log", tmp / who / "hook.sh"
    out = f"echo '{json.dumps(answer)}'" if answer else ""
    hook.write_text(f"#!/bin/sh\nIN=$(cat)\nprintf '%s\\n' \"$IN\" >> \"{log}\"\n{out}\n")
    hook.chmod(0o755)
    settings = {"hooks": {"MessageDisplay": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "any",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
            cmd = [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "hi", "--model", "claude-sonnet-4-5", "--settings", json.dumps(settings),
                            "--permission-mode", "acceptEdits", *args], cwd=proj, env=env, capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (who, r.stderr)
        seen = [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()] if log.exists() else []
        return list(srv.requests), r.stdout, seen


@pytest.mark.parametrize("who", WHO)
def test_display_content_replaces_what_is_printed_not_what_the_model_sees(tmp_path: Path, who: str) -> None:
    turns = [[text("first msg"), {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo x"}}],
             [text("line one\nline two")]]
    requests, stdout, seen = run(who, tmp_path, turns, SHOWN)
    assert stdout.strip() == "SHOWN INSTEAD", who
    assert [(d["index"], d["final"], d["delta"]) for d in seen] == [(0, True, "first msg"),
                                                                   (0, True, "line one\nline two")], who
    assert seen[0]["turn_id"] == seen[1]["turn_id"] and seen[0]["message_id"] != seen[1]["message_id"], who
    sent = requests[-1].body["messages"][-2]["content"]  # the history: the model's own words
    assert sent[0] == {"type": "text", "text": "first msg"}, who


@pytest.mark.parametrize("who", WHO)
def test_json_and_stream_json_show_the_display_content(tmp_path: Path, who: str) -> None:
    _, stdout, _ = run(who, tmp_path / "a", [[text("the answer")]], SHOWN, "--output-format", "json")
    assert json.loads(stdout)["result"] == "SHOWN INSTEAD", who
    _, stdout, _ = run(who, tmp_path / "b", [[text("the answer")]], SHOWN, "--output-format", "stream-json",
                       "--verbose")
    lines = [json.loads(ln) for ln in stdout.splitlines() if ln.strip()]
    (assistant,) = [ln for ln in lines if ln["type"] == "assistant"]
    assert assistant["message"]["content"] == [{"type": "text", "text": "SHOWN INSTEAD"}], who
    assert lines[-1]["result"] == "SHOWN INSTEAD", who


@pytest.mark.parametrize("who", WHO)
def test_no_display_content_shows_the_text(tmp_path: Path, who: str) -> None:
    _, stdout, seen = run(who, tmp_path, [[text("plain answer")]], None)
    assert stdout.strip() == "plain answer" and [d["delta"] for d in seen] == ["plain answer"], who


@pytest.mark.skipif(__import__("shutil").which("tmux") is None, reason="tmux is not installed")
def test_the_interactive_mode_shows_the_display_content(tmp_path: Path) -> None:
    """With MessageDisplay hooks the interactive mode shows each message once it is complete, as
    the hooks rewrote it (not streamed line by line); the transcript keeps the model's text."""
    from loopwright.sessions import load_transcript
    from tests.cli.test_interactive import WAIT, exit_status
    from tests.cli.test_interactive_view import Session

    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{json.dumps(SHOWN)}'\n")
    hook.chmod(0o755)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"MessageDisplay": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}))
    s = Session(tmp_path, [[text("THE MODEL'S OWN WORDS")]], "--settings", str(settings))
    try:
        s.t.wait("/help for commands")
        s.t.wait("Ctrl-C twice to exit")
        s.send("hello")
        screen = s.t.wait("SHOWN INSTEAD")
        assert "THE MODEL'S OWN WORDS" not in screen
        s.send("/exit")
        exit_status(s.status, WAIT)
        h = load_transcript(s.transcripts()[0]).history
        assert h[-1]["content"][0]["text"] == "THE MODEL'S OWN WORDS"
    finally:
        s.close()
