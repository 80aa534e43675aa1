"""session/load of a live session while a prompt starts in it: the prompt that started keeps the
session (the load is refused as busy, or comes first), so a next prompt is refused as busy and a
session/cancel reaches the running prompt. Before, the load checked for a running prompt, then
built the session's options off the event loop, and a prompt that started meanwhile was left
running on a session the load then replaced: the next prompt failed with the transcript's lock
("in use by another loopwright process") and session/cancel went to the new, idle session (the
fuzz test's last prompt failed so under load: test_acp_fuzz.py's test_zz_after_all_of_it)."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd, text, until
from tests.protofuzz import Peer

pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")
from loopwright.acp.agent import PROMPT_BUSY  # noqa: E402 (it imports the ACP library)

pytestmark = pytest.mark.e2e
MODEL = "claude-sonnet-4-6"
_ids = itertools.count(1)


def request(method: str, params: dict[str, Any]) -> tuple[str, bytes]:
    rid = f"r{next(_ids)}"
    return rid, json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def answer(peer: Peer, rid: str, timeout: float = 60) -> dict[str, Any]:
    return peer.wait_for(lambda m: m.get("id") == rid and "method" not in m, timeout)


def test_a_load_racing_a_prompt_leaves_the_prompt_its_session(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    release = threading.Event()
    asked: list[str] = []

    def model(h: list[dict[str, Any]]) -> list[dict[str, Any]]:
        c = h[-1]["content"]
        said = c if isinstance(c, str) else " ".join(b.get("text", "") for b in c if isinstance(b, dict))
        asked.append(said)
        if "two" in said:  # the racing prompt's model call: held until the test is done with it
            release.wait(60)
        return [text(f"echo: {said}"[:100])]

    with ScriptedServer(model, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "lw"), HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "acp", "--model", MODEL, "--base-url", srv.url], env, str(work),
                    lambda m: None)
        try:
            rid, line = request("initialize", {"protocolVersion": 1})
            peer.send(line)
            assert "result" in answer(peer, rid)
            rid, line = request("session/new", {"cwd": str(work), "mcpServers": []})
            peer.send(line)
            sid = answer(peer, rid)["result"]["sessionId"]
            rid, line = request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "one"}]})
            peer.send(line)
            assert answer(peer, rid)["result"]["stopReason"] == "end_turn"  # a transcript to load
            # the load, and a prompt right behind it (both lines in the pipe at once)
            load_id, load = request("session/load", {"cwd": str(work), "sessionId": sid, "mcpServers": []})
            two_id, two = request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "two"}]})
            peer.send(load + b"\n" + two)
            loaded = answer(peer, load_id)
            assert "result" in loaded or PROMPT_BUSY in json.dumps(loaded), loaded
            assert until(lambda: any("two" in a for a in asked), 60), asked  # prompt two runs (held)
            # a third prompt is refused as busy: not started beside the running one (the transcript's lock)
            three_id, three = request("session/prompt", {"sessionId": sid,
                                                         "prompt": [{"type": "text", "text": "three"}]})
            peer.send(three)
            refused = answer(peer, three_id)
            assert PROMPT_BUSY in json.dumps(refused), refused
            # and session/cancel reaches the running prompt (its model call still held)
            peer.send(json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}).encode())
            assert answer(peer, two_id)["result"]["stopReason"] == "cancelled"
        finally:
            release.set()
            peer.close()
