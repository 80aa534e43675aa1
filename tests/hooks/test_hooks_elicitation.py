"""Claude Code's Elicitation and ElicitationResult hooks (issue 42) around a real MCP server's
elicitation (tests/mcp/asking_mcp_server.py over stdio, `loopwright -p`): a hook answers instead of
the dialog, a hook overrides the answer going back, and each gets Claude Code's stdin fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.hooks import HOOK_INPUTS
from tests.hooks.test_hooks_claude_events import inputs, logger
from tests.mcp.test_mcp_asks import run, use
from tests.mcp.test_mcp_oauth import stream, text_of

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")


def settings(tmp_path: Path, hooks: dict[str, Any]) -> str:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": hooks}))
    return str(path)


def entry(command: str, matcher: str = "ask") -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


@pytest.mark.e2e
def test_an_elicitation_hook_answers_and_a_result_hook_overrides_the_answer(tmp_path: Path) -> None:
    answer = logger(tmp_path, "elicit", {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
                                                                "content": {"color": "red", "count": 7}}})
    result = logger(tmp_path, "result")
    p = run(tmp_path, [[use(1, "mcp__ask__confirm")], [{"type": "text", "text": "done"}]],
            "--allowedTools", "mcp__ask__confirm",
            "--settings", settings(tmp_path, {"Elicitation": entry(answer), "ElicitationResult": entry(result)}))
    assert text_of(stream(p.stdout)[1]["c1"]) == "accept: {'color': 'red', 'count': 7}"  # the hook's, not the defaults
    [asked] = inputs(tmp_path, "elicit")
    assert asked["hook_event_name"] == "Elicitation" and asked["mcp_server_name"] == "ask"
    assert asked["message"] == "Your preferences?" and asked["mode"] == "form"
    assert set(asked["requested_schema"]["properties"]) == {"color", "count"}
    [told] = inputs(tmp_path, "result")
    assert told["hook_event_name"] == "ElicitationResult" and told["action"] == "accept"
    assert told["content"] == {"color": "red", "count": 7} and told["mcp_server_name"] == "ask"
    for data in (asked, told):  # the shape of their typed dicts
        td = HOOK_INPUTS[data["hook_event_name"]]
        assert td.__required_keys__ <= set(data) <= td.__required_keys__ | td.__optional_keys__, data


@pytest.mark.e2e
def test_a_result_hook_s_override_or_exit_2_is_what_the_server_gets(tmp_path: Path) -> None:
    override = logger(tmp_path, "result", {"hookSpecificOutput": {"hookEventName": "ElicitationResult",
                                                                  "action": "decline"}})
    p = run(tmp_path, [[use(1, "mcp__ask__confirm")], [{"type": "text", "text": "done"}]],
            "--allowedTools", "mcp__ask__confirm", "--settings", settings(tmp_path, {"ElicitationResult": entry(override)}))
    assert text_of(stream(p.stdout)[1]["c1"]) == "decline: "  # headless would accept the defaults
    told = inputs(tmp_path, "result")[0]
    assert told["action"] == "accept" and told["content"] == {"color": "blue", "count": 3}
    refuse = logger(tmp_path, "refuse", code=2)
    p = run(tmp_path, [[use(1, "mcp__ask__confirm")], [{"type": "text", "text": "done"}]],
            "--allowedTools", "mcp__ask__confirm", "--settings", settings(tmp_path, {"Elicitation": entry(refuse)}))
    assert text_of(stream(p.stdout)[1]["c1"]) == "decline: "  # exit 2 declines
