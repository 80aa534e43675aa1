"""A hook's huge output (exit 2 with 300 KB on stderr, or a JSON answer whose reason, message or
context is 300 KB) never reaches the model, the transcript or a front end whole: every text of a
hook that enters the conversation or a message is capped (hooks/output.cap, 10,000 characters,
saying how much was cut). Real command hooks from a settings object, real HTTP to the loopback
server, the requests it saw and the messages query() yields."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.testing import ScriptedServer
from tests.helpers import bash, text

pytestmark = pytest.mark.e2e
HUGE = 300_000
LIMIT = 12_000  # the cap (10,000) and the words around it


def hook(tmp_path: Path, code: int, out: dict[str, Any] | None = None) -> str:
    """A command hook that prints HUGE characters on stderr and exits `code` (or prints `out`, with
    "HUGE" replaced by HUGE characters, as JSON on stdout and exits 0)."""
    script = tmp_path / f"hook{code}.py"
    if out is None:
        script.write_text(f"import sys; sys.stdin.read(); sys.stderr.write('E' * {HUGE}); sys.exit({code})")
    else:
        script.write_text("import json, sys; sys.stdin.read(); "
                          f"print(json.dumps({json.dumps(out)}).replace('HUGE', 'J' * {HUGE}))")
    return f"python3 {script}"


def longest(value: Any) -> int:
    """The longest string anywhere in `value` (a message's fields, a request's body)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max((longest(v) for v in value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return max((longest(v) for v in value), default=0)
    if dataclasses.is_dataclass(value):  # (messages and blocks: slotted dataclasses)
        return max((longest(getattr(value, f.name)) for f in dataclasses.fields(value)), default=0)
    return 0


CASES: dict[str, tuple[str, str | None, int, dict[str, Any] | None]] = {
    # name: (event, matcher, exit code, JSON output)
    "PreToolUse exit 2": ("PreToolUse", "Bash", 2, None),
    "PreToolUse deny reason": ("PreToolUse", "Bash", 0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "HUGE"}}),
    "PermissionRequest exit 2": ("PermissionRequest", "Bash", 2, None),
    "PermissionRequest deny message": ("PermissionRequest", "Bash", 0, {"hookSpecificOutput": {
        "hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "HUGE"}}}),
    "PostToolUse exit 2": ("PostToolUse", "Bash", 2, None),
    "UserPromptSubmit exit 2": ("UserPromptSubmit", None, 2, None),
    "UserPromptSubmit block reason": ("UserPromptSubmit", None, 0, {"decision": "block", "reason": "HUGE"}),
    "Stop exit 2": ("Stop", None, 2, None),
    "systemMessage": ("PreToolUse", "Bash", 0, {"systemMessage": "HUGE"}),
    "stopReason": ("PreToolUse", "Bash", 0, {"continue": False, "stopReason": "HUGE"}),
    "SessionStart exit 2": ("SessionStart", None, 2, None),
    "SessionStart context": ("SessionStart", None, 0, {"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": "HUGE"}}),
    "UserPromptSubmit context": ("UserPromptSubmit", None, 0, {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "HUGE"}}),
    "PostToolUse updatedToolOutput": ("PostToolUse", "Bash", 0, {"hookSpecificOutput": {
        "hookEventName": "PostToolUse", "updatedToolOutput": "HUGE"}}),
    "PostToolUse context": ("PostToolUse", "Bash", 0, {"hookSpecificOutput": {
        "hookEventName": "PostToolUse", "additionalContext": "HUGE"}}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_huge_hook_output_is_capped_everywhere(tmp_path: Path, case: str) -> None:
    event, matcher, code, out = CASES[case]
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": hook(tmp_path, code, out)}]}
    if matcher:
        entry["matcher"] = matcher
    settings = {"hooks": {event: [entry]}}
    # (PermissionRequest: Bash is asked about, the hook answers; the others: Bash runs unasked)
    allowed = [] if event == "PermissionRequest" else ["Bash"]
    turns = [[bash("touch made")], [text("ok")], [text("again")], [text("more")]]  # (a write: asked about)
    with ScriptedServer(turns) as srv:
        options = lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="k", cwd=tmp_path,
                                  max_retries=0, settings=settings, tools=lw.default_tools(), max_turns=4,
                                  permission_mode="default", allowed_tools=allowed, include_hook_events=True,
                                  can_use_tool=lambda name, x: lw.Allow())

        async def go() -> list[Any]:
            return [m async for m in lw.query("go", options)]

        messages = asyncio.run(go())
        bodies = [q.body for q in srv.requests]
    seen = json.dumps(bodies) + "".join(repr(m) for m in messages)
    if case != "stopReason":  # (said nowhere but the run's end)
        assert "EEEEEEEEEE" in seen or "JJJJJJJJJJ" in seen, (case, "the hook's output is nowhere: did it run?")
    assert longest(bodies) < LIMIT, (case, "a request", longest(bodies))
    for m in messages:
        assert longest(m) < LIMIT, (case, type(m).__name__, getattr(m, "subtype", ""), longest(m))
    transcripts = list((tmp_path).rglob("*.jsonl"))
    for t in transcripts:
        for line in t.read_text().splitlines():
            assert longest(json.loads(line)) < LIMIT, (case, "the transcript", t)


def test_a_replacement_no_longer_than_the_tools_output_is_kept_whole(tmp_path: Path) -> None:
    """updatedToolOutput is bounded by the tool's own output (or the hook cap), not cut below it:
    a redacted 30,000-character Read result (of 2,000 lines: ~40,000) goes to the model whole."""
    (tmp_path / "big.txt").write_text("line of text\n" * 6000)  # ~78,000 characters read
    script = tmp_path / "redact.py"
    script.write_text("import json, sys; sys.stdin.read(); print(json.dumps({'hookSpecificOutput': {"
                      "'hookEventName': 'PostToolUse', 'updatedToolOutput': 'R' * 30000}}))")
    settings = {"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": f"python3 {script}"}]}]}}
    turns = [[{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": str(tmp_path / "big.txt")}}],
             [text("ok")]]
    with ScriptedServer(turns) as srv:
        options = lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="k", cwd=tmp_path,
                                  max_retries=0, settings=settings, tools=lw.default_tools())
        asyncio.run(lw.arun("go", options))
        last = srv.requests[-1].body["messages"][-1]["content"]
    (result,) = [b for b in last if b.get("type") == "tool_result"]
    assert result["content"] in ("R" * 30000, [{"type": "text", "text": "R" * 30000}]), str(result)[:200]
