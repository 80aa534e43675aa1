"""Claude Code and loopwright on the same scripted turns, with the same settings (issue 42):
updatedToolOutput, a PermissionRequest hook answering an ask in -p, and a prompt hook judging a
call. Each side runs as a CLI against its own loopback Messages server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.hooks.external import PROMPT_SYSTEM
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")]


def bash(command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}


def both(tmp: Path, turns: list[Any], settings: dict[str, Any], *args: str) -> dict[str, tuple[Any, Path]]:
    """Run Claude Code, then loopwright, each in a fresh project dir; (the server's requests, the dir)."""
    out: dict[str, tuple[Any, Path]] = {}
    for who in ("claude", "loopwright"):
        proj = tmp / who
        proj.mkdir(exist_ok=True)
        with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
            if who == "claude":
                env = claude_code_env(srv.url, str(tmp / "cchome"))
                cmd = [str(CLAUDE)]
            else:
                env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"), loopwright_cmd()
            r = subprocess.run([*cmd, "-p", "hi", "--model", "claude-sonnet-4-5", "--settings", json.dumps(settings),
                                *args], cwd=proj, env=env, capture_output=True, text=True, timeout=120)
            assert r.returncode in (0, 1), (who, r.stderr)
            out[who] = (list(srv.requests), proj)
    return out


def result_text(request: Any) -> str:
    block = request.body["messages"][-1]["content"][0]
    c = block["content"]
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c)


def system_text(request: Any) -> str:
    s = request.body.get("system") or ""
    return s if isinstance(s, str) else "\n".join(b.get("text", "") for b in s)


def test_updated_tool_output_the_same(tmp_path: Path) -> None:
    out = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {
        "stdout": "REPLACED OUTPUT", "stderr": "", "interrupted": False, "isImage": False}}}
    hook = tmp_path / "post.sh"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{json.dumps(out)}'\n")
    hook.chmod(0o755)
    runs = both(tmp_path, [[bash("echo original")], [text("ok")]],
                {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(hook)}]}]}})
    for who, (requests, _) in runs.items():
        assert result_text(requests[1]).startswith("REPLACED OUTPUT"), who
        assert "original" not in result_text(requests[1]), who


def test_permission_request_hook_allows_in_print_mode_the_same(tmp_path: Path) -> None:
    out = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    hook = tmp_path / "req.sh"
    hook.write_text(f"#!/bin/sh\ncat > \"$PWD/req.json\"\necho '{json.dumps(out)}'\n")
    hook.chmod(0o755)
    runs = both(tmp_path, [[bash("touch made")], [text("ok")]],
                {"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(hook)}]}]}})
    for who, (_, proj) in runs.items():
        assert (proj / "made").exists(), who
        seen = json.loads((proj / "req.json").read_text())
        assert seen["hook_event_name"] == "PermissionRequest" and seen["tool_input"] == {"command": "touch made"}, who


def test_prompt_hook_judges_and_blocks_the_same(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "Refuse any touch. Input: $ARGUMENTS"}]}]}
    runs = both(tmp_path, [[bash("touch made")], [text('{"ok": false, "reason": "no touching"}')], [text("ok")]],
                {"hooks": hooks}, "--permission-mode", "acceptEdits")
    for who, (requests, proj) in runs.items():
        assert not (proj / "made").exists(), who
        assert len(requests) == 2, who  # the turn ends at the refusal: no third call
        judged = requests[1].body["messages"][-1]["content"][-1]["text"]
        assert judged.startswith("Refuse any touch. Input: {") and '"tool_input":{"command":"touch made"}' in judged, who
        assert PROMPT_SYSTEM in system_text(requests[1]), who
        assert not requests[1].body.get("tools"), who


def test_instructions_loaded_and_stops_last_message_the_same(tmp_path: Path) -> None:
    hook = tmp_path / "log.sh"
    hook.write_text("#!/bin/sh\ncat >> \"$PWD/hooks.log\"\necho >> \"$PWD/hooks.log\"\n")
    hook.chmod(0o755)
    cmd = [{"hooks": [{"type": "command", "command": str(hook)}]}]
    for who in ("claude", "loopwright"):
        (tmp_path / who).mkdir()
        (tmp_path / who / "CLAUDE.md").write_text("be brief\n")
    runs = both(tmp_path, [[text("all done")]], {"hooks": {"InstructionsLoaded": cmd, "Stop": cmd}})
    for who, (_, proj) in runs.items():
        seen = {d["hook_event_name"]: d for d in map(json.loads, filter(str.strip,
                                                                        (proj / "hooks.log").read_text().splitlines()))}
        loaded, stop = seen["InstructionsLoaded"], seen["Stop"]
        assert (loaded["file_path"], loaded["memory_type"], loaded["load_reason"]) == (
            str(proj / "CLAUDE.md"), "Project", "session_start"), who
        assert stop["last_assistant_message"] == "all done" and stop["stop_hook_active"] is False, who


def all_text(request: Any) -> str:
    return json.dumps(request.body["messages"])


def test_async_hook_runs_in_the_background_and_its_output_goes_with_a_later_request_the_same(tmp_path: Path) -> None:
    """`async: true`: the first request after the call is not held for the hook (it sleeps 1 s);
    once it exited, its systemMessage and additionalContext go with the next tool result."""
    out = {"systemMessage": "ASYNC SYS", "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                                "additionalContext": "ASYNC CTX"}}
    hook = {"type": "command", "command": f"sleep 1; echo '{json.dumps(out)}'", "async": True}
    runs = both(tmp_path, [[bash("echo one")], [{**bash("sleep 3"), "id": "t2"}], [text("ok")]],
                {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}, "--permission-mode", "acceptEdits")
    for who, (requests, _) in runs.items():
        assert len(requests) == 3, who
        assert "ASYNC" not in all_text(requests[1]), who  # not waited for
        late = result_text(requests[2])
        assert "ASYNC SYS" in late and "ASYNC CTX" in late, who
        assert late.index("ASYNC SYS") < late.index("ASYNC CTX"), who


def test_async_rewake_hook_is_waited_for_in_print_mode_the_same(tmp_path: Path) -> None:
    """`asyncRewake: true` in -p: the hook is waited for and its exit 2 reaches the model with the
    call's result, as any PostToolUse hook's (Claude Code wakes the model later only interactively)."""
    hook = {"type": "command", "command": "sleep 1; echo REWAKE-ERR >&2; exit 2", "asyncRewake": True}
    runs = both(tmp_path, [[bash("echo one")], [text("done")]],
                {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}, "--permission-mode", "acceptEdits")
    for who, (requests, _) in runs.items():
        assert len(requests) == 2, who
        assert "REWAKE-ERR" in result_text(requests[1]), who


def test_post_tool_use_gets_the_structured_output_the_same(tmp_path: Path) -> None:
    """PostToolUse's tool_response is the tool's structured output (Bash's {stdout, ...}, Write's
    {type, filePath, ...}: docs/tool-results.md); PostToolBatch's is the text the model got."""
    hook = tmp_path / "log.sh"
    hook.write_text("#!/bin/sh\ncat >> \"$PWD/hooks.log\"\necho >> \"$PWD/hooks.log\"\n")
    hook.chmod(0o755)
    cmd = [{"hooks": [{"type": "command", "command": str(hook)}]}]
    write = {"type": "tool_use", "id": "t2", "name": "Write", "input": {"file_path": "f.txt", "content": "x\n"}}
    runs = both(tmp_path, [[bash("echo hello")], [write], [text("ok")]],
                {"hooks": {"PostToolUse": cmd, "PostToolBatch": cmd}}, "--permission-mode", "acceptEdits")
    for who, (_, proj) in runs.items():
        seen = [json.loads(ln) for ln in (proj / "hooks.log").read_text().splitlines() if ln.strip()]
        post = [d["tool_response"] for d in seen if d["hook_event_name"] == "PostToolUse"]
        batch = [d["tool_calls"][0]["tool_response"] for d in seen if d["hook_event_name"] == "PostToolBatch"]
        assert post[0] == {"stdout": "hello", "stderr": "", "interrupted": False, "isImage": False,
                           "noOutputExpected": False}, who
        assert post[1] == {"type": "create", "filePath": "f.txt", "content": "x\n", "structuredPatch": [],
                           "originalFile": None, "userModified": False}, who  # (the path as the call gave it)
        assert batch[0] == "hello", who
