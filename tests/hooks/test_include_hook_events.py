"""`-p --output-format stream-json --include-hook-events` (issue 42): a hook_started and a
hook_response line for each hook that runs, in Claude Code's shape, side by side with Claude Code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
HOOKS = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre-out; echo pre-err >&2"}]}],
         "Stop": [{"hooks": [{"type": "command", "command": "exit 0"}]}]}
TURNS = [[{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo hi"}}], [text("ok")]]


def hook_lines(cmd: list[str], env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    r = subprocess.run([*cmd, "-p", "hi", "--model", "claude-sonnet-4-5", "--output-format", "stream-json", "--verbose",
                        "--include-hook-events", "--settings", json.dumps({"hooks": HOOKS})], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    return [d for d in lines if d.get("type") == "system" and d.get("subtype", "").startswith("hook_")]


def shape(lines: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(d["subtype"], d["hook_name"], d["hook_event"], d.get("stdout"), d.get("stderr"), d.get("exit_code"),
             d.get("outcome")) for d in lines]


@pytest.mark.e2e
def test_hook_lines_like_claude_codes(tmp_path: Path) -> None:
    with ScriptedServer(TURNS) as srv:
        ours = hook_lines(loopwright_cmd(), cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"), tmp_path)
    assert shape(ours) == [
        ("hook_started", "PreToolUse:Bash", "PreToolUse", None, None, None, None),
        ("hook_response", "PreToolUse:Bash", "PreToolUse", "pre-out\n", "pre-err\n", 0, "success"),
        ("hook_started", "Stop", "Stop", None, None, None, None),
        ("hook_response", "Stop", "Stop", "", "", 0, "success")]
    assert ours[0]["hook_id"] == ours[1]["hook_id"] != ours[2]["hook_id"]
    if CLAUDE.exists():  # the same lines from Claude Code on the same turns
        with ScriptedServer(TURNS) as srv:
            env = claude_code_env(srv.url, str(tmp_path / "cchome"))
            theirs = hook_lines([str(CLAUDE)], env, tmp_path)
        assert shape(theirs) == shape(ours)


@pytest.mark.e2e
def test_without_stream_json_it_is_refused_by_name(tmp_path: Path) -> None:
    r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--include-hook-events"], cwd=tmp_path, env=cli_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--include-hook-events" in r.stderr and len(r.stderr.strip().splitlines()) == 1
