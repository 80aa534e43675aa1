"""Record a real run, replay it as a test (ScriptedModel.from_session, models/replay.py): a session
recorded with `loopwright -p` on the loopback server replays offline with the same tool calls and
results; a changed tool result is reported as a divergence at its model call, with both inputs;
a Claude Code transcript replays too."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.models.replay import ReplayModel
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
PROMPT = "read the notes, then count"


def turns(work: Path) -> list[Any]:
    return [[{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": str(work / "notes.txt")}}],
            [{"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "echo one two | wc -w"}}],
            [text("two words")]]


def record(tmp: Path) -> tuple[Path, Path, str]:
    """A `loopwright -p` run on the loopback server: (work dir, sessions dir, session id)."""
    work, home = tmp / "work", tmp / "home"
    work.mkdir()
    (work / "notes.txt").write_text("first note\nsecond note\n")
    with ScriptedServer(turns(work)) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", PROMPT, "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--permission-mode", "bypassPermissions"], cwd=work, capture_output=True, text=True,
                           env=cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(home)),
                           timeout=120)
    assert r.returncode == 0, r.stderr
    return work, home / "projects", json.loads(r.stdout)["session_id"]


def replay(model: ReplayModel, work: Path) -> lw.ResultMessage:
    return lw.run(PROMPT, lw.AgentOptions(model=model, cwd=work, tools={"type": "preset", "preset": "claude_code"},  # type: ignore[arg-type]
                                          permission_mode="bypassPermissions"))


def calls_and_results(h: list[dict[str, Any]]) -> list[Any]:
    return [(b["type"], b.get("name"), b.get("input"), b.get("content"), b.get("is_error", False))
            for m in h[1:] for b in m["content"] if b["type"] in ("tool_use", "tool_result")]


@pytest.mark.e2e
def test_a_recorded_session_replays_offline_with_the_same_calls_and_results(tmp_path: Path) -> None:
    work, sessions, sid = record(tmp_path)
    recorded = lw.get_session_messages(sid, sessions_dir=sessions)
    model = lw.ScriptedModel.from_session(sid, sessions_dir=sessions)
    r = replay(model, work)
    assert r.subtype == "success" and r.result == "two words" and model.divergences == []
    assert calls_and_results(r.messages) == calls_and_results(recorded)
    assert [x[3] for x in calls_and_results(r.messages) if x[0] == "tool_result"] == ["     1\tfirst note\n     2\tsecond note", "2"]
    # by path too: the same transcript file
    path = next(sessions.glob(f"*/{sid}.jsonl"))
    assert replay(lw.ScriptedModel.from_session(path), work).subtype == "success"

    # A changed tool result (the file Read reads): reported at the model call it reaches, with both inputs
    (work / "notes.txt").write_text("first note\nchanged\n")
    model = lw.ScriptedModel.from_session(sid, sessions_dir=sessions)
    r = replay(model, work)
    assert r.subtype == "error_during_execution" and len(model.divergences) == 1
    d = model.divergences[0]
    assert d.turn == 2 and "second note" in json.dumps(d.expected) and "changed" in json.dumps(d.actual)
    assert d.recorded_response[0]["name"] == "Bash", "the recording's next call is shown"
    assert "replay diverged at model call 2" in r.errors[0] and "changed" in r.errors[0]
    # on_divergence="continue": the recording goes on, every divergence kept
    model = lw.ScriptedModel.from_session(sid, sessions_dir=sessions, on_divergence="continue")
    r = replay(model, work)
    assert r.subtype == "success" and [d.turn for d in model.divergences] == [2]


def test_ids_are_never_paths_and_missing_sessions_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="neither a transcript path nor a session id"):
        lw.ScriptedModel.from_session("..", sessions_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="no session 'nope'"):
        lw.ScriptedModel.from_session("nope", sessions_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="no transcript at"):
        lw.ScriptedModel.from_session(tmp_path / "missing.jsonl")


def test_more_calls_than_recorded_is_a_divergence_not_a_crash(tmp_path: Path) -> None:
    lines = [{"type": "user", "message": {"role": "user", "content": "hi"}},
             {"type": "assistant", "message": {"role": "assistant", "content": [
                 {"type": "tool_use", "id": "t1", "name": "probe", "input": {}}], "stop_reason": "tool_use"}}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(ln) + "\n" for ln in lines))

    async def probe(x: dict[str, Any]) -> str:
        return "ok"

    model = lw.ScriptedModel.from_session(path)
    r = lw.run("hi", lw.AgentOptions(model=model, tools=[lw.Tool("probe", "p", {"type": "object"}, probe)]))
    assert r.subtype == "error_during_execution" and "the recording has no call 2" in r.errors[0]
    assert model.divergences[0].turn == 2


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")
def test_a_claude_code_transcript_replays_through_loopwright(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "cchome"
    work.mkdir()
    script = [[{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo one two | wc -w",
                                                                            "description": "count"}}],
              [text("two words")]]
    with ScriptedServer(script) as srv:
        env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "any",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        r = subprocess.run([str(CLAUDE), "-p", PROMPT, "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--permission-mode", "acceptEdits", "--allowedTools", "Bash(echo:*)", "Bash(wc:*)"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    sid = json.loads(r.stdout)["session_id"]
    path = next((home / ".claude" / "projects").glob(f"*/{sid}.jsonl"))
    model = lw.ScriptedModel.from_session(path)
    out = replay(model, work)
    assert out.subtype == "success" and out.result == "two words", (out.errors, model.divergences)
    assert model.divergences == [] and model.calls == 2
