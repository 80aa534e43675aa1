"""Bad input on ACP is an error, never an exit (issue 40, item 11): `loopwright acp` gets random
and mutated JSON-RPC lines of ACP's messages (hypothesis), torn lines, raw bytes, JSON nested
100,000 deep and a 60 MB message; each request among them gets a JSON-RPC error (or its normal
answer), the agent still answers a well-formed request after them, a prompt still runs in the
session opened first, and every transcript on disk still loads into a history a resume can send."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopwright.sessions import load_transcript
from loopwright.testing import ScriptedServer
from tests.helpers import check_resumable, cli_env, loopwright_cmd, text
from tests.protofuzz import Peer, lines

pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")
from loopwright.acp.agent import PROMPT_BUSY  # noqa: E402 (it imports the ACP library)

pytestmark = pytest.mark.e2e
MODEL = "claude-sonnet-4-6"
_ids = itertools.count(1000)


def echo(h: list[dict[str, Any]]) -> list[dict[str, Any]]:
    c = h[-1]["content"]
    said = c if isinstance(c, str) else " ".join(b.get("text", "") for b in c if isinstance(b, dict))
    return [text(f"echo: {said}"[:200])]


def editor_side(msg: dict[str, Any]) -> dict[str, Any] | None:
    """The editor answers the agent's requests (permission, fs, terminal) with an error."""
    if "method" in msg and "id" in msg:
        return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "not here"}}
    return None


def rpc(method: str, params: dict[str, Any], id_: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        msg["id"] = id_
    return json.dumps(msg).encode()


def call(peer: Peer, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    rid = f"call-{next(_ids)}"
    peer.send(rpc(method, params, rid))
    return peer.wait_for(lambda m: m.get("id") == rid and "method" not in m, timeout)


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("acpfuzz")
    work = home / "work"
    work.mkdir()
    with ScriptedServer(echo, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(home / "lw"), HOME=str(home))
        peer = Peer([*loopwright_cmd(), "acp", "--model", MODEL, "--base-url", srv.url], env, str(work), editor_side)
        try:
            assert "result" in call(peer, "initialize", {"protocolVersion": 1})
            sid = call(peer, "session/new", {"cwd": str(work), "mcpServers": []})["result"]["sessionId"]
            yield {"peer": peer, "home": home, "work": work, "sid": sid}
        finally:
            if peer.p.poll() is None:
                peer.p.kill()
                peer.p.wait()


def templates(work: Path, sid: str) -> list[dict[str, Any]]:
    def req(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}

    return [req("initialize", {"protocolVersion": 1}),
            req("session/new", {"cwd": str(work), "mcpServers": []}),
            req("session/load", {"cwd": str(work), "sessionId": sid, "mcpServers": []}),
            req("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
            req("session/set_mode", {"sessionId": sid, "modeId": "default"}),
            req("session/list", {}),
            req("authenticate", {"methodId": "x"}),
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}},
            {"jsonrpc": "2.0", "id": 3, "result": {}},
            {"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "x"}}]


def still_answers(peer: Peer) -> None:
    assert "result" in call(peer, "initialize", {"protocolVersion": 1})
    assert peer.p.poll() is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_bad_lines_never_stop_the_agent(agent: dict[str, Any], data: st.DataObject) -> None:
    peer = agent["peer"]
    bad = data.draw(st.lists(lines(templates(agent["work"], agent["sid"])), min_size=1, max_size=3))
    for line in bad:
        peer.send(line)
    still_answers(peer)


def test_malformed_requests_get_json_rpc_errors(agent: dict[str, Any]) -> None:
    peer = agent["peer"]
    peer.send(b'{"jsonrpc": "2.0", "id": 5, "method": ')  # torn: a parse error, id null
    assert peer.wait_for(lambda m: m.get("id") is None and "error" in m)["error"]["code"] == -32700
    peer.send(b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "initialize", "params": {}}')  # an id that is no id
    assert peer.wait_for(lambda m: m.get("id") is None and "error" in m)["error"]["code"] == -32600
    peer.send(b'{"jsonrpc": "2.0", "id": "m1", "method": 7}')
    assert peer.wait_for(lambda m: m.get("id") == "m1")["error"]["code"] == -32600
    peer.send(b'{"jsonrpc": "2.0", "id": "d1", "method": "initialize", "params": {"a": ' + b"[" * 5000 +
              b"]" * 5000 + b"}}")
    assert peer.wait_for(lambda m: m.get("id") is None and "error" in m)["error"]["code"] == -32700
    still_answers(peer)


def test_a_60_mb_message_is_skipped_and_answered(agent: dict[str, Any]) -> None:
    peer = agent["peer"]
    big = rpc("session/prompt", {"sessionId": agent["sid"], "prompt": [{"type": "text", "text": "x" * (60 << 20)}]},
              "huge")
    peer.send(big)
    err = peer.wait_for(lambda m: m.get("id") == "huge", timeout=60)
    assert err["error"]["code"] == -32600 and "over the limit" in err["error"]["message"]
    still_answers(peer)


def test_zz_after_all_of_it_a_prompt_runs_and_the_sessions_resume(agent: dict[str, Any]) -> None:
    """(Named to run last in this module: it closes the agent the others shared.)"""
    peer = agent["peer"]
    deadline = time.monotonic() + 60  # (a deadline, not a count of tries: a loaded machine ends a run slowly)
    while True:
        r = call(peer, "session/prompt", {"sessionId": agent["sid"], "prompt": [{"type": "text", "text": "still?"}]},
                 timeout=60)
        if "error" not in r or time.monotonic() > deadline:
            break
        # a fuzzed prompt may still be running in this session: cancel it and ask again
        assert PROMPT_BUSY in json.dumps(r), r
        peer.send(rpc("session/cancel", {"sessionId": agent["sid"]}))
        time.sleep(0.2)
    assert r["result"]["stopReason"] == "end_turn", r
    assert peer.close() == 0
    transcripts = list((agent["home"] / "lw" / "projects").rglob("*.jsonl"))
    assert any(t.stem == agent["sid"] for t in transcripts)
    for t in transcripts:
        loaded = load_transcript(t)
        if loaded.history:
            check_resumable(loaded.history)
    said = [b.get("text") for m in load_transcript(next(t for t in transcripts if t.stem == agent["sid"])).history
            for b in (m["content"] if isinstance(m["content"], list) else []) if isinstance(b, dict)]
    assert "echo: still?" in said


def test_a_malformed_answer_to_a_permission_request_fails_it_instead_of_hanging(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = work / "out.txt"
    turns = [[{"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": str(target), "content": "x"}}],
             [text("done")]]

    def malformed(msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("method") == "session/request_permission":  # an error whose code is no integer
            return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": "nope", "message": 5}}
        return editor_side(msg)

    with ScriptedServer(turns, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "lw"), HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "acp", "--model", MODEL, "--base-url", srv.url], env, str(work), malformed)
        try:
            call(peer, "initialize", {"protocolVersion": 1})
            sid = call(peer, "session/new", {"cwd": str(work), "mcpServers": []})["result"]["sessionId"]
            r = call(peer, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "write"}]},
                     timeout=60)
            # the permission request failed as an error answer does: the run stops, saying why
            assert "error" in r, r
            again = call(peer, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "on"}]},
                         timeout=60)
        finally:
            peer.close()
    assert "the editor's answer was not a JSON-RPC 2.0 message" in json.dumps(r), r
    assert again["result"]["stopReason"] == "end_turn" and not target.exists()


def test_a_failed_load_leaves_the_live_session_as_it_was(tmp_path: Path) -> None:
    """session/load of a live session with nothing on disk yet (no prompt so far) fails, and the
    session goes on (it used to be dropped: its next prompt was an unknown session)."""
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedServer(echo, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "lw"), HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "acp", "--model", MODEL, "--base-url", srv.url], env, str(work), editor_side)
        try:
            call(peer, "initialize", {"protocolVersion": 1})
            sid = call(peer, "session/new", {"cwd": str(work), "mcpServers": []})["result"]["sessionId"]
            failed = call(peer, "session/load", {"cwd": str(work), "sessionId": sid, "mcpServers": []})
            assert failed["error"]["code"] == -32602, failed
            r = call(peer, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}, timeout=60)
        finally:
            peer.close()
    assert r.get("result", {}).get("stopReason") == "end_turn", r
