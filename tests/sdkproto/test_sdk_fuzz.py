"""Bad input on the Agent SDK protocol is an error, never an exit (issue 40, item 11): the real
CLI in stream-json mode gets random and mutated lines of the protocol's messages (hypothesis),
torn lines, raw bytes, JSON nested 100,000 deep and a line over the 64 MiB limit; after each, it
still answers a well-formed control request; at the end a prompt still runs, stdin's end still
ends the process, and every transcript on disk still loads into a history a resume can send."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopwright.sessions import load_transcript
from loopwright.testing import ScriptedServer
from tests.helpers import check_resumable, cli_env, loopwright_cmd, text
from tests.protofuzz import Peer, lines

pytestmark = pytest.mark.e2e
MODEL = "claude-sonnet-4-6"
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"}}
USER = {"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": None, "session_id": ""}
TEMPLATES: list[dict[str, Any]] = [
    USER,
    {**USER, "message": {"role": "user", "content": [{"type": "text", "text": "hi"},
                                                      {"type": "image", "source": {"type": "base64",
                                                                                   "media_type": "image/png",
                                                                                   "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"}}]}},
    {"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize", "hooks": None}},
    {"type": "control_request", "request_id": "r2", "request": {"subtype": "set_permission_mode", "mode": "default"}},
    {"type": "control_request", "request_id": "r3", "request": {"subtype": "set_model", "model": None}},
    {"type": "control_request", "request_id": "r4", "request": {"subtype": "get_context_usage"}},
    {"type": "control_request", "request_id": "r5", "request": {"subtype": "rewind_files", "user_message_id": "u"}},
    {"type": "control_request", "request_id": "r6", "request": {"subtype": "interrupt"}},
    {"type": "control_response", "response": {"subtype": "success", "request_id": "x", "response": {}}},
    {"type": "control_response", "response": {"subtype": "error", "request_id": "x", "error": "no"}},
    {"type": "control_cancel_request", "request_id": "x"},
    {"type": "keep_alive"},
]
_ids = itertools.count()


def answer_requests(msg: dict[str, Any]) -> dict[str, Any] | None:
    """The SDK's side: a hook callback or permission request a mutated initialize set up is answered."""
    if msg.get("type") == "control_request":
        return {"type": "control_response", "response": {"subtype": "success", "request_id": msg.get("request_id"),
                                                         "response": {}}}
    return None


def echo(h: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model: says the last prompt's text back (a run is known by its answer)."""
    c = h[-1]["content"]
    said = c if isinstance(c, str) else " ".join(b.get("text", "") for b in c if isinstance(b, dict))
    return [text(f"echo: {said}"[:200])]


@contextmanager
def started(home: Path) -> Iterator[tuple[Peer, Path]]:
    with ScriptedServer(echo, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(home / "lw"),
                      HOME=str(home))
        peer = Peer([*loopwright_cmd(), "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                     "--model", MODEL], env, str(home), answer_requests)
        try:
            yield peer, home
        finally:
            if peer.p.poll() is None:
                peer.p.kill()
                peer.p.wait()


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Peer, Path]]:
    """One process for the fuzz and the tests after it (each line's effects add up in it)."""
    with started(tmp_path_factory.mktemp("sdkfuzz")) as got:
        yield got


@pytest.fixture
def own_cli(tmp_path: Path) -> Iterator[tuple[Peer, Path]]:
    """A process of the test's own: its answers come in the order of its lines."""
    with started(tmp_path) as got:
        yield got


def still_answers(peer: Peer) -> None:
    rid = f"probe-{next(_ids)}"
    peer.send(json.dumps({"type": "control_request", "request_id": rid, "request": {"subtype": "mcp_status"}}).encode())
    got = peer.wait_for(lambda m: m.get("type") == "control_response" and m["response"].get("request_id") == rid)
    assert got["response"]["subtype"] == "success"
    assert peer.p.poll() is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(bad=st.lists(lines(TEMPLATES), min_size=1, max_size=3))
def test_bad_lines_never_end_the_session(cli: tuple[Peer, Path], bad: list[bytes]) -> None:
    peer, _ = cli
    for line in bad:
        peer.send(line)
    still_answers(peer)


def test_the_findings_lines_are_answered(own_cli: tuple[Peer, Path]) -> None:
    """Issue 40's own lines: a message of 7, content 5, 100,000 nested arrays; each a one-line
    error (a prompt's error result), and the next prompt runs."""
    peer, _ = own_cli
    for line in (b'{"type": "user", "message": 7}', b'{"type": "user", "message": {"role": "user", "content": 5}}'):
        peer.send(line)
        r = peer.wait_for(lambda m: m.get("type") == "result")
        assert r["is_error"] and "does not match the protocol" in r["result"]
    peer.send(b"[" * 100_000 + b"]" * 100_000)
    still_answers(peer)
    rid = f"bad-{next(_ids)}"
    peer.send(json.dumps({"type": "control_request", "request_id": rid, "request": 7}).encode())
    err = peer.wait_for(lambda m: m.get("type") == "control_response" and m["response"].get("request_id") == rid)
    assert err["response"]["subtype"] == "error" and "request" in err["response"]["error"]


def test_a_line_over_the_limit_is_skipped_to_its_end(cli: tuple[Peer, Path]) -> None:
    peer, _ = cli
    rid = f"big-{next(_ids)}"
    big = json.dumps({"type": "control_request", "request_id": rid, "request": {"subtype": "mcp_status",
                                                                                   "pad": "x" * (65 << 20)}})
    peer.send(big.encode())
    err = peer.wait_for(lambda m: m.get("type") == "control_response" and m["response"].get("request_id") == rid)
    assert err["response"]["subtype"] == "error" and "over the limit" in err["response"]["error"]
    still_answers(peer)


def test_zz_after_all_of_it_a_prompt_runs_and_the_sessions_resume(cli: tuple[Peer, Path]) -> None:
    """(Named to run last in this module: it closes the process the others shared.)"""
    peer, home = cli
    peer.send(json.dumps({**USER, "message": {"role": "user", "content": "still there?"}}).encode())
    r = peer.wait_for(lambda m: m.get("type") == "result" and m.get("result") == "echo: still there?", timeout=60)
    assert r["subtype"] == "success"
    assert peer.close() == 0  # stdin's end ends it, after a successful last run
    transcripts = list((home / "lw" / "projects").rglob("*.jsonl"))
    assert transcripts
    for t in transcripts:
        loaded = load_transcript(t)
        if loaded.history:
            check_resumable(loaded.history)


def test_a_malformed_answer_to_can_use_tool_is_a_deny_not_a_hang(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    turns = [[{"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": str(target), "content": "x"}}],
             [text("done")]]

    def malformed(msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("type") == "control_request":  # the can_use_tool question, answered with a body of 7
            return {"type": "control_response", "response": {"subtype": "success",
                                                             "request_id": msg["request_id"], "response": 7}}
        return None

    with ScriptedServer(turns, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "lw"),
                      HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                     "--model", MODEL, "--permission-prompt-tool", "stdio"], env, str(tmp_path), malformed)
        try:
            peer.send(json.dumps(USER).encode())
            r = peer.wait_for(lambda m: m.get("type") == "result", timeout=60)
        finally:
            peer.close()
        denied = json.dumps(srv.loop_requests[-1].body["messages"][-1])
    assert r["result"] == "done" and not target.exists()
    assert "does not match the protocol" in denied  # the tool's result says why it did not run


def test_an_answers_malformed_rule_is_named_and_later_asks_still_reach_the_sdk(tmp_path: Path) -> None:
    """An allow whose updatedPermissions holds a rule that is no permission rule (`Read(a)b`):
    kept, it made every later ask of the session fail ("Permission check failed: malformed
    permission rule"), the SDK never asked again. It is named on stderr and not kept; the good
    rule beside it is."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    turns = [[{"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": str(a), "content": "x"}}],
             [{"type": "tool_use", "id": "w2", "name": "Write", "input": {"file_path": str(b), "content": "y"}}],
             [{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "echo kept-rule"}}],
             [text("done")]]
    asked: list[str] = []

    def allow(msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("type") != "control_request" or msg["request"].get("subtype") != "can_use_tool":
            return None
        asked.append(msg["request"]["tool_name"])
        rules = [{"toolName": "Read(a)b"}, {"toolName": "Bash", "ruleContent": "echo *"}]
        return {"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"],
                "response": {"behavior": "allow", "updatedPermissions": [
                    {"type": "addRules", "rules": rules, "behavior": "allow", "destination": "session"}]}}}

    with ScriptedServer(turns, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "lw"),
                      HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                     "--model", MODEL, "--permission-prompt-tool", "stdio"], env, str(tmp_path), allow)
        try:
            peer.send(json.dumps(USER).encode())
            r = peer.wait_for(lambda m: m.get("type") == "result", timeout=60)
        finally:
            peer.close()
    assert r["result"] == "done" and r["permission_denials"] == [], r
    assert a.read_text() == "x" and b.read_text() == "y" and asked == ["Write", "Write"]  # (Bash: the kept rule)
    assert "Read(a)b" in b"".join(peer.err).decode()


@pytest.mark.parametrize("content", ["  \n", [{"type": "text", "text": " "}], [{"type": "text", "text": ""}, IMAGE]],
                         ids=["blank-string", "blank-block", "blank-beside-an-image"])
def test_a_blank_prompt_never_poisons_the_session(tmp_path: Path, content: Any) -> None:
    """A user line of blank text (or blank text beside an image): the Messages API refuses a blank
    text block, and the prompt was kept in the session's history, so that line's run and every
    later one of the session failed (400: text content blocks must contain non-whitespace text).
    Blank text is left out; a prompt of nothing else is its own error result, not kept."""
    with ScriptedServer([[text("one")], [text("two")]], model=MODEL) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "lw"),
                      HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                     "--model", MODEL], env, str(tmp_path), lambda m: None)
        try:
            results = []
            for c in (content, "hi"):
                peer.send(json.dumps({**USER, "message": {"role": "user", "content": c}}).encode())
                results.append(peer.wait_for(lambda m: m.get("type") == "result", timeout=60))
        finally:
            peer.close()
    blank_only = not isinstance(content, list) or len(content) == 1
    assert [r["subtype"] for r in results] == (["error_during_execution", "success"] if blank_only
                                               else ["success", "success"]), results
    assert results[-1]["result"] == ("one" if blank_only else "two"), results
    if blank_only:
        assert "the prompt is empty" in results[0]["errors"][0]
    else:
        sent = srv.loop_requests[0].body["messages"][0]["content"]
        assert [{k: v for k, v in b.items() if k != "cache_control"} for b in sent] == [IMAGE], sent


def test_an_answers_rewrite_that_is_no_object_refuses_the_call(tmp_path: Path) -> None:
    """can_use_tool's allow with an updatedInput that is no object (a list): it was passed over and
    the model's own input ran (a host that meant to rewrite a call got it run as the model wrote
    it). The call is refused and the result says why."""
    target = tmp_path / "out.txt"
    turns = [[{"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": str(target), "content": "x"}}],
             [text("done")]]

    def allow(msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("type") != "control_request" or msg["request"].get("subtype") != "can_use_tool":
            return None
        return {"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"],
                "response": {"behavior": "allow", "updatedInput": [str(tmp_path / "elsewhere.txt")]}}}

    with ScriptedServer(turns, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "lw"),
                      HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                     "--model", MODEL, "--permission-prompt-tool", "stdio"], env, str(tmp_path), allow)
        try:
            peer.send(json.dumps(USER).encode())
            r = peer.wait_for(lambda m: m.get("type") == "result", timeout=60)
        finally:
            peer.close()
        said = json.dumps(srv.loop_requests[-1].body["messages"][-1])
    assert r["result"] == "done" and not target.exists()
    assert "updatedInput is a list, not an object" in said, said
