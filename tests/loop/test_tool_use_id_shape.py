"""A tool call id not of the Messages API's shape ('^[a-zA-Z0-9_-]+$', bounded) from a hostile or
broken server is replaced at the model boundary by a fresh id: the call runs, the next request
(which the real API would refuse with the id in it, for the rest of the session) is accepted, the
id reaches no file name, and the session resumes. Real `-p` runs over real HTTP to the loopback
server, whose strict mode answers 400 as the API does."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.loop.model_call import good_id, sendable
from loopwright.testing import ScriptedServer
from loopwright.testing.api_rules import content_problem
from tests.helpers import cli_env, loopwright_cmd, text, use

pytestmark = pytest.mark.e2e
BAD = ["../../evil id", "call.1", "x" * 300, "t\u00e9", ""]


def run(proj: Path, home: Path, turns: list[Any], *args: str) -> tuple[dict[str, Any], list[Any]]:
    with ScriptedServer(turns) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home))
        r = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--allowedTools", "Bash(echo:*)", *args], cwd=proj, env=env, capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        return json.loads(r.stdout), [q.body["messages"] for q in srv.requests]


def ids(messages: list[Any]) -> list[str]:
    return [b.get("id") or b.get("tool_use_id") for m in messages if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") in ("tool_use", "tool_result")]


def test_the_loopback_server_refuses_an_id_the_api_refuses() -> None:
    """(The rule the e2e test leans on: the strict server says what the API says. The length bound is
    loopwright's own: an id names files and lines of logs.)"""
    for bad in [b for b in BAD if len(b) < 128]:
        msgs = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": bad, "name": "Read", "input": {}}]}]
        assert "String should match pattern" in (content_problem(msgs) or ""), bad
    assert content_problem([{"role": "user", "content": "go"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_01-A_b", "name": "Read", "input": {}}]}]) is None


def test_bad_ids_are_replaced_and_the_session_resumes(tmp_path: Path) -> None:
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    (proj / "notes.txt").write_text("alpha\n")
    turns = [[use(BAD[0], "Bash", command="echo one"), use(BAD[2], "Read", file_path=str(proj / "notes.txt"))],
             [use(BAD[1], "Bash", command="echo two")],
             [text("ok")]]
    out, sent = run(proj, home, turns)
    assert out["subtype"] == "success" and out["result"] == "ok", out
    last = ids(sent[-1])
    assert len(last) == 6 and all(good_id(i) for i in last) and not set(last) & set(BAD), last
    assert last[0] == last[2] and last[1] == last[3] and last[4] == last[5]  # each call and its result
    assert len(set(last)) == 3
    results = [b["content"] for m in sent[-1] if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert "one" in str(results[0]) and "alpha" in str(results[1]) and "two" in str(results[2])
    for d in (home, proj):  # no file or directory is named after an id
        for root, dirs, files in os.walk(d):
            assert not [n for n in dirs + files if "evil" in n or "xxxxxxxx" in n], (root, dirs, files)
    again, resent = run(proj, home, [[text("still here")]], "--resume", out["session_id"])
    assert again["subtype"] == "success" and again["result"] == "still here", again
    assert ids(resent[-1]) == last


def test_sendable_keeps_good_ids_and_a_repeat_within_one_answer() -> None:
    from loopwright.blocks import ToolUseBlock

    a = [ToolUseBlock("toolu_1", "Read", {}), ToolUseBlock("a b", "Read", {}), ToolUseBlock("a b", "Read", {})]
    out = sendable(a, set())
    assert out[0].id == "toolu_1" and out[1].id == out[2].id and re.fullmatch(r"toolu_[0-9a-f]{24}", out[1].id)
    long = [ToolUseBlock("y" * 127, "Read", {})]  # good, taken, and no room for its number: a fresh one
    assert good_id(sendable(long, {"y" * 127})[0].id)


def test_a_transcript_with_bad_ids_resumes(tmp_path: Path) -> None:
    """A transcript written before ids were replaced (here: a run's ids edited into bad ones, as an
    older loopwright wrote what the model sent) resumes: the ids are replaced on loading, in the
    calls and their results alike, and the next request is accepted."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    out, _ = run(proj, home, [[use("call_a", "Bash", command="echo one")], [use("call_b", "Bash", command="echo two")],
                              [text("ok")]])
    (transcript,) = list(home.rglob(f"{out['session_id']}.jsonl"))
    raw = transcript.read_text()
    assert raw.count('"call_a"') >= 2 and raw.count('"call_b"') >= 2  # each call and its result
    transcript.write_text(raw.replace('"call_a"', '"call.a/../x"').replace('"call_b"', '"call b"'))
    again, resent = run(proj, home, [[text("still here")]], "--resume", out["session_id"])
    assert again["subtype"] == "success" and again["result"] == "still here", again
    got = ids(resent[-1])
    assert len(got) == 4 and all(good_id(i) for i in got) and got[0] == got[1] and got[2] == got[3], got
    assert got[0] != got[2]



def streamed_ids(ev: dict[str, Any]) -> list[str]:
    """The tool call ids a partial event shows: an Anthropic tool_use's content_block_start, an OpenAI
    chat chunk's tool_calls, a Responses function_call item as it is added."""
    if ev.get("type") == "content_block_start" and ev["content_block"]["type"] == "tool_use":
        return [ev["content_block"]["id"]]
    if ev.get("type") == "response.output_item.added" and ev["item"]["type"] == "function_call":
        return [ev["item"]["call_id"]]
    return [c["id"] for ch in ev.get("choices") or [] for c in (ch.get("delta") or {}).get("tool_calls") or []
            if c.get("id")]


@pytest.mark.parametrize("provider", ["anthropic", "openai", "responses"])
def test_the_streamed_events_show_the_ids_the_answer_keeps(tmp_path: Path, provider: str) -> None:
    """-p stream-json with --include-partial-messages: each tool call's id in the partial events is the
    id its assistant line (and its result, and the next request) has, not the one the server sent: a
    bad id and an id the history already has (a model numbering its calls anew) are replaced before
    they are streamed, on each provider's wire. The server's bad id is on no line."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    turns = [[use(BAD[0], "Bash", command="echo one"), use("call_0", "Bash", command="echo two")],
             [use("call_0", "Bash", command="echo three")], [text("ok")]]
    with ScriptedServer(turns, model="m") as srv:
        model = ["--model", "claude-sonnet-4-5"] if provider == "anthropic" else [
            "--model", f"{provider}:m", "--base-url", srv.openai_url]
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", OPENAI_API_KEY="x", HOME=str(home))
        r = subprocess.run([*loopwright_cmd(), "-p", "go", *model, "--output-format", "stream-json", "--verbose",
                            "--include-partial-messages", "--allowedTools", "Bash(echo:*)"],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        kinds = [q.kind for q in srv.requests if q.kind in ("messages", "chat", "responses")]
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert kinds == [{"anthropic": "messages", "openai": "chat", "responses": "responses"}[provider]] * 3, kinds
    assert "evil" not in r.stdout
    streamed: list[str] = []
    kept: list[str] = []
    results: list[str] = []
    for ln in (json.loads(x) for x in r.stdout.splitlines() if x.strip()):
        if ln["type"] == "stream_event":
            streamed += [i for i in streamed_ids(ln["event"]) if i not in streamed]
        elif ln["type"] == "assistant":
            kept += [b["id"] for b in ln["message"]["content"] if b["type"] == "tool_use"]
            assert streamed == kept, (streamed, kept)  # (each answer's events come before its line)
        elif ln["type"] == "user":
            # (a user line per tool result, as Claude Code writes them)
            results += [b["tool_use_id"] for b in ln["message"]["content"] if b.get("type") == "tool_result"]
            assert results == kept[:len(results)], (results, kept)
    assert results == kept, (results, kept)
    assert len(kept) == 3 and len(set(kept)) == 3 and all(good_id(i) for i in kept), kept
    assert kept[1] == "call_0" and kept[2] != "call_0", kept


def test_a_streamed_id_that_is_an_earlier_calls_new_id_is_replaced_too() -> None:
    """The stream sees an answer one call at a time: when a later call's own id is the id an earlier
    call was given, the later one is replaced, in the events and in the answer alike."""
    from loopwright.blocks import ToolUseBlock
    from loopwright.loop.model_call import StreamedIds
    from loopwright.messages import StreamEvent

    taken = {"call_0"}
    s = StreamedIds(taken, [])
    first = s.kept("call_0")
    assert first != "call_0" and good_id(first)
    ev = s.event(StreamEvent({"type": "content_block_start", "index": 1,
                              "content_block": {"type": "tool_use", "id": first, "name": "Read", "input": {}}}))
    second = ev.event["content_block"]["id"]
    assert second not in (first, "call_0") and good_id(second)
    answer = [ToolUseBlock("call_0", "Read", {}), ToolUseBlock(first, "Read", {})]
    assert [b.id for b in sendable(answer, taken, s.fresh)] == [first, second]
