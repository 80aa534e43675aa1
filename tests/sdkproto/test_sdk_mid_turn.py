"""Malformed control requests on the Agent SDK protocol while a turn runs (a Bash command still
running): each gets its answer at once, the turn ends as it would have, and the next prompt
runs. A set_model whose model is no string is an error, not a switch back to the start model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import bash, cli_env, loopwright_cmd, text
from tests.protofuzz import Peer

pytestmark = pytest.mark.e2e

BAD: list[dict[str, Any]] = [
    {"subtype": "set_permission_mode", "mode": ["x"]},
    {"subtype": "set_model", "model": {"x": 1}},
    {"subtype": "set_model", "model": 5},
    {"subtype": "rewind_files", "user_message_id": 5},
    {"subtype": "mcp_message", "server_name": "x", "message": 5},
    {"subtype": "no_such_request"},
    {"subtype": 7},
    "junk",
]


def user(content: str) -> bytes:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}, "parent_tool_use_id": None,
                       "session_id": ""}).encode()


def test_malformed_control_requests_mid_turn_are_answered_and_the_turn_goes_on(tmp_path: Path) -> None:
    # The command runs until the test has every answer (the file `go`): an answer that waited for
    # the turn would never come (the turn's result would come first, after the wait_for's bound), and
    # no time bound on a loaded machine decides it.
    go = tmp_path / "go"
    turns = [[bash(f"until [ -e {go} ]; do sleep 0.02; done; echo slept")], [text("finished")], [text("second")]]
    with ScriptedServer(turns) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="t", LOOPWRIGHT_HOME=str(tmp_path / "lw"),
                      HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "--output-format", "stream-json", "--verbose", "--input-format",
                     "stream-json", "--model", "claude-sonnet-4-5", "--permission-mode", "bypassPermissions"],
                    env, str(tmp_path), lambda m: None)
        try:
            peer.send(user("go"))
            peer.wait_for(lambda m: m.get("type") == "assistant")  # the Bash call: it waits now
            for i, req in enumerate(BAD):
                peer.send(json.dumps({"type": "control_request", "request_id": f"bad{i}", "request": req}).encode())
            answers: dict[str, dict[str, Any]] = {}
            while len(answers) < len(BAD):
                m = peer.wait_for(lambda m: m.get("type") in ("control_response", "result"), timeout=60)
                assert m["type"] == "control_response", f"the turn ended before every request was answered: {m}"
                answers[m["response"]["request_id"]] = m["response"]
            go.touch()  # every answer came while the command still ran
            assert {rid: a["subtype"] for rid, a in answers.items()} == {f"bad{i}": "error" for i in range(len(BAD))}
            assert "set_model: model must be a model name or null, not dict" in answers["bad1"]["error"]
            result = peer.wait_for(lambda m: m.get("type") == "result", timeout=30)
            assert (result["subtype"], result["result"]) == ("success", "finished")
            peer.send(user("again"))
            result = peer.wait_for(lambda m: m.get("type") == "result", timeout=30)
            assert (result["subtype"], result["result"]) == ("success", "second")
            assert peer.close() == 0
        finally:
            if peer.p.poll() is None:
                peer.p.kill()
                peer.p.wait()
