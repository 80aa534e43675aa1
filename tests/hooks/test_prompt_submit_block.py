"""How a prompt a UserPromptSubmit hook blocks ends: Claude Code 2.1.332 and loopwright on the same
scripted turns with the same files, in `-p` text, json and stream-json and through the official
Agent SDK (Python) in one session. An exit 2, `decision: block` or `continue: false` ends the
prompt with no model call as a `success` (is_error false, num_turns 0, exit 0) whose text is
Claude Code's wording of the reason; stream-json shows it first as a warning (system
`informational`, `prevent_continuation`); the blocked prompt stays out of the conversation and the
transcript. (Unlike a command's expansion, the result has no `local_command`.)"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
pytestmark = pytest.mark.e2e
EXIT_2 = 'case "$IN" in *secret*) echo "no secrets here" >&2; exit 2;; esac'
BLOCKED = "UserPromptSubmit operation blocked by hook:\n[D/hook.sh]: no secrets here\n\n\nOriginal prompt: a secret"


def project(tmp_path: Path, hook_out: str) -> tuple[Path, Path, dict[str, Any]]:
    """A project and HOME, and settings with a UserPromptSubmit hook (a shell snippet, `hook_out`,
    reading its input as $IN)."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir(parents=True)
    home.mkdir()
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\nIN=$(cat)\n{hook_out}\n")
    hook.chmod(0o755)
    return proj, home, {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}


def cli(who: str, tmp_path: Path, fmt: str, hook_out: str = EXIT_2) -> tuple[int, str, int]:
    """One `-p "a secret"` run: (exit code, stdout with the temp dir as D, model requests)."""
    proj, home, settings = project(tmp_path, hook_out)
    with ScriptedServer([[text("done")]], is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "a secret", "--model", "claude-sonnet-4-5", "--output-format", fmt,
                            *(["--verbose"] if fmt == "stream-json" else []), "--settings", json.dumps(settings)],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        return r.returncode, r.stdout.replace(str(tmp_path), "D"), len(srv.requests)


# several CLI runs in a row: 63 s under load (2 cores, -n 3, the shared machine at load ~20), where the
# suite's hang guard is 120 s per test
@pytest.mark.timeout(360)
@pytest.mark.parametrize("who", WHO)
def test_a_blocked_prompt_is_a_success_with_the_reason(tmp_path: Path, who: str) -> None:
    code, out, calls = cli(who, tmp_path / "text", "text")
    assert (code, out, calls) == (0, BLOCKED + "\n", 0), who
    code, out, calls = cli(who, tmp_path / "json", "json")
    r = json.loads(out)
    assert (code, calls) == (0, 0), who
    assert {k: r.get(k) for k in ("type", "subtype", "is_error", "result", "num_turns", "local_command")} == {
        "type": "result", "subtype": "success", "is_error": False, "result": BLOCKED, "num_turns": 0,
        "local_command": None}, who
    code, out, _ = cli(who, tmp_path / "stream", "stream-json")
    lines = [json.loads(ln) for ln in out.splitlines()]
    shown = [ln for ln in lines if ln["type"] != "system" or ln["subtype"] not in ("init", "hook_started",
                                                                                  "hook_response")]
    assert code == 0 and [ln["type"] for ln in shown] == ["system", "result"], (who, shown)
    assert {k: shown[0][k] for k in ("subtype", "content", "level", "prevent_continuation")} == {
        "subtype": "informational", "content": BLOCKED, "level": "warning", "prevent_continuation": True}, who
    assert (shown[1]["subtype"], shown[1]["is_error"], shown[1]["result"], shown[1]["num_turns"]) == (
        "success", False, BLOCKED, 0), who


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize(("hook_out", "said"), [
    ("exit 2", "UserPromptSubmit operation blocked by hook:\n[D/hook.sh]: No stderr output\n\nOriginal prompt: a secret"),
    ("echo '{\"decision\": \"block\", \"reason\": \"R\"}'",
     "UserPromptSubmit operation blocked by hook:\nR\n\nOriginal prompt: a secret"),
    ("echo '{\"continue\": false, \"stopReason\": \"S\"}'", "Operation stopped by hook: S"),
])
def test_the_reason_is_worded_as_claude_codes(tmp_path: Path, who: str, hook_out: str, said: str) -> None:
    code, out, calls = cli(who, tmp_path, "json", hook_out)
    r = json.loads(out)
    assert (code, calls, r["subtype"], r["is_error"], r["result"]) == (0, 0, "success", False, said), who


@pytest.mark.parametrize("who", WHO)
def test_in_an_sdk_session_the_blocked_prompt_stays_out_of_the_conversation(tmp_path: Path, who: str) -> None:
    """The official Python SDK: "a secret" is blocked (a warning, then a success with the reason),
    and the session goes on: the next prompt's request does not carry the blocked one."""
    sdk = pytest.importorskip("claude_agent_sdk")
    from tests.sdkproto.test_sdk_protocol import options

    proj, home, settings = project(tmp_path, EXIT_2)
    (proj / ".claude").mkdir()
    (proj / ".claude" / "settings.json").write_text(json.dumps(settings))

    async def go(srv: ScriptedServer) -> tuple[list[Any], list[Any]]:
        opts = options(who, srv, proj, setting_sources=["project"], env={"HOME": str(home)})
        async with sdk.ClaudeSDKClient(opts) as client:
            await client.query("a secret")
            first = [m async for m in client.receive_response()]
            await client.query("hello")
            second = [m async for m in client.receive_response()]
        return first, second

    with ScriptedServer([[text("hi there")]]) as srv:
        first, second = asyncio.run(go(srv))
        sent = [json.dumps(q.body["messages"]) for q in srv.loop_requests]
    said = BLOCKED.replace("D/", f"{tmp_path}/")
    (warning,) = [m for m in first if isinstance(m, sdk.SystemMessage) and m.subtype == "informational"]
    assert (warning.data["content"], warning.data["level"], warning.data["prevent_continuation"]) == (
        said, "warning", True), who
    result = first[-1]
    assert isinstance(result, sdk.ResultMessage), who
    assert (result.subtype, result.is_error, result.result, result.num_turns) == ("success", False, said, 0), who
    assert second[-1].result == "hi there", who
    assert len(sent) == 1 and "hello" in sent[0] and "a secret" not in sent[0], who
