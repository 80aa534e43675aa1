"""Odd model answers in `-p`, Claude Code 2.1.332 and loopwright on the same scripted turns: every
request both send is one the (strict) loopback server takes under the Messages API's rules
(testing/api_rules.py: no empty message mid-history, no blank text block, no repeated tool_use
id, Inv). What each keeps:

- an answer with no content (or only blank text) is not kept; the model is asked once more with
  Claude Code's reminder ("[Your previous response had no visible output. ...]"); a second empty
  answer in a row ends the run as a success; its result is that answer's text, "" or its
  whitespace (the history keeps no blank text, the result still says what the model wrote);
- a blank text block beside a tool call is left out of what is sent;
- a tool_use id the model reuses from an earlier turn: both run the call; loopwright sends it under
  a fresh id with its result, while Claude Code sends the first call's result in its place (its
  history keeps the call as "[Tool use interrupted]")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
REMINDER = "[Your previous response had no visible output. Please continue and produce a user-visible response.]"
pytestmark = pytest.mark.e2e


def bash(uid: str, command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": "Bash", "input": {"command": command}}


def cli(who: str, tmp_path: Path, turns: list[Any], prompts: tuple[str, ...] = ("go",)) -> tuple[
        list[dict[str, Any]], list[tuple[int, list[dict[str, Any]]]]]:
    """`-p PROMPT --output-format json` for each prompt (the later ones resuming the first's
    session): (the results, each request's (status, messages))."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir(parents=True)
    home.mkdir()
    results: list[dict[str, Any]] = []
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        for p in prompts:
            if who == "claude":
                env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
            else:
                env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
            resume = ["--resume", results[0]["session_id"]] if results else []
            r = subprocess.run([*cmd, "-p", p, "--model", "claude-sonnet-4-5", "--output-format", "json",
                                "--allowedTools", "Bash", *resume], cwd=proj, env=env, capture_output=True,
                               text=True, timeout=120, stdin=subprocess.DEVNULL)
            assert r.returncode == 0, (who, r.stdout, r.stderr)
            results.append(json.loads(r.stdout))
        return results, [(q.status, q.body["messages"]) for q in srv.requests]


def texts(m: dict[str, Any]) -> list[str]:
    c = m["content"]
    return [c] if isinstance(c, str) else [b.get("text", "") for b in c if b.get("type") == "text"]


@pytest.mark.parametrize("who", WHO)
def test_an_empty_answer_is_dropped_and_the_model_asked_once_more(tmp_path: Path, who: str) -> None:
    (r,), sent = cli(who, tmp_path, [{"content": []}, [text("second")]])
    assert (r["subtype"], r["is_error"], r["result"]) == ("success", False, "second"), who
    assert [status for status, _ in sent] == [200, 200], who
    asked = sent[1][1]
    assert all(m["role"] == "user" for m in asked) and any(REMINDER in t for t in texts(asked[-1])), (who, asked)


@pytest.mark.parametrize("who", WHO)
def test_two_empty_answers_end_the_run_and_the_session_goes_on(tmp_path: Path, who: str) -> None:
    (r, again), sent = cli(who, tmp_path, [{"content": []}, {"content": []}, [text("third")]], ("go", "and now?"))
    assert (r["subtype"], r["is_error"], r["result"]) == ("success", False, ""), who
    assert (again["subtype"], again["result"]) == ("success", "third"), who
    assert [status for status, _ in sent] == [200, 200, 200], who  # (the resumed prompt's request too)
    assert any("and now?" in t for t in texts(sent[2][1][-1])), who


@pytest.mark.parametrize("who", WHO)
def test_a_whitespace_only_last_answer_is_the_result(tmp_path: Path, who: str) -> None:
    (r,), sent = cli(who, tmp_path, [[text(" \n")], [text("  \t")]])
    assert (r["subtype"], r["is_error"], r["result"]) == ("success", False, "  \t"), who
    assert [status for status, _ in sent] == [200, 200], who


@pytest.mark.parametrize("who", WHO)
def test_a_blank_text_block_beside_a_call_is_not_sent(tmp_path: Path, who: str) -> None:
    (r,), sent = cli(who, tmp_path, [[text(""), bash("toolu_01", "echo hi")], [text("done")]])
    assert (r["subtype"], r["result"]) == ("success", "done"), who
    assert [status for status, _ in sent] == [200, 200], who
    said = sent[1][1][-2]
    assert said["role"] == "assistant" and [b["type"] for b in said["content"]] == ["tool_use"], who


@pytest.mark.parametrize("who", WHO)
def test_a_tool_use_id_reused_from_an_earlier_turn(tmp_path: Path, who: str) -> None:
    (r,), sent = cli(who, tmp_path, [[bash("toolu_01", "echo first")], [bash("toolu_01", "echo second")],
                                     [text("done")]])
    assert (r["subtype"], r["result"]) == ("success", "done"), who
    assert [status for status, _ in sent] == [200, 200, 200], who
    last = sent[2][1]
    uses = [b["id"] for m in last if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_use"]
    outputs = [str(b["content"]) for m in last if isinstance(m["content"], list) for b in m["content"]
               if b["type"] == "tool_result"]
    assert len(uses) == len(set(uses)), who
    if who == "loopwright":  # the second call under a fresh id, with its own result
        assert uses == ["toolu_01", "toolu_01_2"] and ["first" in outputs[0], "second" in outputs[1]] == [True, True]
    else:  # Claude Code: the repeat left out of what it sends, and its result with it
        assert uses == ["toolu_01"] and not any("second" in o for o in outputs)


def stream_json(who: str, tmp_path: Path, turns: list[Any], *args: str) -> list[dict[str, Any]]:
    """`-p go --output-format stream-json --verbose`: its lines."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir(parents=True)
    home.mkdir()
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "stream-json",
                            "--verbose", *args], cwd=proj, env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (who, r.stdout, r.stderr)
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("who", WHO)
def test_the_reminder_after_an_empty_answer_is_a_synthetic_user_line_in_stream_json(tmp_path: Path, who: str) -> None:
    """The reader of the stream sees the reminder the model is sent, as a user line of its own
    (its bare text, not the <system-reminder> wrapping the model gets), marked isSynthetic, between
    the empty answer (not shown) and the next one."""
    lines = stream_json(who, tmp_path, [{"content": []}, [text("second")]])
    kinds = [line["type"] for line in lines]
    assert kinds == ["system", "user", "assistant", "result"], (who, kinds)
    user = lines[1]
    assert user["message"] == {"role": "user", "content": [{"type": "text", "text": REMINDER}]}, who
    assert (user["isSynthetic"], user["parent_tool_use_id"], user["session_id"]) == (
        True, None, lines[-1]["session_id"]), who


@pytest.mark.parametrize("who", WHO)
def test_a_stop_hooks_feedback_is_a_synthetic_user_line_in_stream_json(tmp_path: Path, who: str) -> None:
    """A Stop hook that blocks (once) sends the model on; the stream shows its reason as Claude Code
    does: a synthetic user line "Stop hook feedback:\nREASON" before the next answer."""
    hook = tmp_path / "stop.sh"
    hook.write_text("#!/bin/sh\ncase \"$(cat)\" in *'\"stop_hook_active\":true'*) exit 0;; esac\n"
                    "echo '{\"decision\": \"block\", \"reason\": \"KEEP GOING\"}'\n")
    hook.chmod(0o755)
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}
    lines = stream_json(who, tmp_path, [[text("first")], [text("second")]], "--settings", json.dumps(settings))
    shown = [line for line in lines if line["type"] in ("user", "assistant")]
    assert [line["type"] for line in shown] == ["assistant", "user", "assistant"], (who, lines)
    assert shown[1]["message"]["content"] == [{"type": "text", "text": "Stop hook feedback:\nKEEP GOING"}], who
    assert shown[1]["isSynthetic"] is True and lines[-1]["result"] == "second", who
