"""A second `initialize` control request in one stream-json session, loopwright and Claude Code
2.1.332 on the same lines: both answer it with a success; its hooks replace the first's, while its
system prompt, appended prompt and disallowed tools change nothing (the session keeps the first
initialize's). loopwright says on stderr what it did not apply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, bash, claude_code_env, cli_env, loopwright_cmd, text
from tests.protofuzz import Peer

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ["loopwright", pytest.param("claude", marks=pytest.mark.skipif(not CLAUDE.exists(),
                                                                    reason="Claude Code not installed (tests/node)"))]
pytestmark = pytest.mark.e2e
MODEL = "claude-sonnet-4-5"


def control(rid: str, **request: Any) -> bytes:
    return json.dumps({"type": "control_request", "request_id": rid, "request": request}).encode()


@pytest.mark.parametrize("who", WHO)
def test_a_second_initialize_is_answered_and_only_its_hooks_apply(tmp_path: Path, who: str) -> None:
    callbacks: list[str] = []

    def answer(msg: dict[str, Any]) -> dict[str, Any] | None:  # the SDK's side: hook callbacks allowed
        if msg.get("type") == "control_request" and msg["request"].get("subtype") == "hook_callback":
            callbacks.append(msg["request"]["callback_id"])
            return {"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"],
                                                             "response": {}}}
        return None

    with ScriptedServer([[bash("echo ran-it")], [text("done")]], model=MODEL) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(tmp_path)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(tmp_path)), loopwright_cmd()
        peer = Peer([*cmd, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                     "--model", MODEL, "--allowedTools", "Bash"], env, str(tmp_path), answer)
        try:
            peer.send(control("r1", subtype="initialize", hooks=None))
            peer.wait_for(lambda m: m.get("type") == "control_response", timeout=60)
            hooks = {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["second"]}]}
            peer.send(control("r2", subtype="initialize", hooks=hooks, systemPrompt="SECOND-SYSTEM-PROMPT",
                              appendSystemPrompt="SECOND-APPENDED", disallowedTools=["Bash"]))
            again = peer.wait_for(lambda m: m.get("type") == "control_response", timeout=60)["response"]
            assert (again["subtype"], again["request_id"]) == ("success", "r2"), (who, again)
            assert "commands" in again["response"], who
            peer.send(json.dumps({"type": "user", "message": {"role": "user", "content": "go"},
                                  "parent_tool_use_id": None, "session_id": ""}).encode())
            result = peer.wait_for(lambda m: m.get("type") == "result", timeout=60)
        finally:
            peer.close()
        sent = [q.body for q in srv.loop_requests]
    assert (result["subtype"], result["result"]) == ("success", "done"), (who, result)
    assert callbacks == ["second"], who
    assert not any("SECOND-" in json.dumps(b.get("system")) for b in sent), who
    assert any(t["name"] == "Bash" for t in sent[0]["tools"]) and "ran-it" in json.dumps(sent[1]["messages"]), who
    if who == "loopwright":
        said = b"".join(peer.err).decode()
        assert "a second initialize: its systemPrompt, appendSystemPrompt, disallowedTools not applied" in said


def test_an_initialize_option_of_another_shape_is_named_not_dropped(tmp_path: Path) -> None:
    """An initialize whose systemPrompt is an object (the SDKs' preset shape, which they turn into
    flags themselves), whose appendSystemPrompt is a number, whose jsonSchema is a string, whose
    disallowedTools is one string and whose mcpServers is a list: each was passed over without a
    word (the session ran without the prompt, the schema, the denial, the servers). Each is named
    on stderr, and the session goes on."""
    with ScriptedServer([[text("done")]], model=MODEL) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                     "--model", MODEL], env, str(tmp_path), lambda m: None)
        try:
            peer.send(control("r1", subtype="initialize", systemPrompt={"type": "preset", "append": "BE BRIEF"},
                              appendSystemPrompt=5, jsonSchema="{}", disallowedTools="Bash",
                              mcpServers=[{"name": "x", "command": "true"}]))
            answered = peer.wait_for(lambda m: m.get("type") == "control_response", timeout=60)["response"]
            peer.send(json.dumps({"type": "user", "message": {"role": "user", "content": "go"},
                                  "parent_tool_use_id": None, "session_id": ""}).encode())
            result = peer.wait_for(lambda m: m.get("type") == "result", timeout=60)
        finally:
            peer.close()
    said = b"".join(peer.err).decode()
    assert answered["subtype"] == "success" and result["subtype"] == "success", (answered, result)
    for key in ("systemPrompt", "appendSystemPrompt", "jsonSchema", "disallowedTools", "mcpServers"):
        assert f"initialize: its {key} is " in said and "not applied" in said, (key, said[-2000:])
