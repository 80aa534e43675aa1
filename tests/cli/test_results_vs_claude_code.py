"""The `-p --output-format json` result of a run that ends at a limit, Claude Code 2.1.332 and
loopwright on the same scripted turns: the same subtype, exit code, denials and `terminal_reason`
(what the Agent SDKs read to tell why a run ended: "completed", "max_turns", "budget_exhausted",
"api_error" with `api_error_status`). The wording of the error and `num_turns` keep loopwright's
meaning, and a run an API error ended is `error_during_execution`, where Claude Code says `success`
with is_error (docs/agent-sdks.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import Fault, ScriptedServer
from tests.helpers import TESTS, bash, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
pytestmark = pytest.mark.e2e


def result(who: str, tmp_path: Path, turns: list[Any], *args: str, fault: Fault | None = None) -> tuple[int, dict[str, Any]]:
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if fault is not None:
            srv.inject(fault)
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json", *args],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return r.returncode, json.loads(r.stdout)


@pytest.mark.parametrize("who", WHO)
def test_max_turns_with_a_denied_call(tmp_path: Path, who: str) -> None:
    code, r = result(who, tmp_path, [[bash("touch made")], [bash("touch more", "t2")], [text("done")]],
                     "--max-turns", "1")
    assert (code, r["subtype"], r["is_error"], r["terminal_reason"]) == (1, "error_max_turns", True, "max_turns"), who
    assert r["permission_denials"] == [{"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "touch made"}}]
    assert len(r["errors"]) == 1 and "1" in r["errors"][0], who
    assert not (tmp_path / "proj" / "made").exists(), who


@pytest.mark.parametrize("who", WHO)
def test_the_budget_spent(tmp_path: Path, who: str) -> None:
    code, r = result(who, tmp_path, [[bash("echo a")], [bash("echo b", "t2")], [text("done")]],
                     "--max-budget-usd", "0.0001", "--allowedTools", "Bash")
    assert (code, r["subtype"], r["is_error"], r["terminal_reason"]) == (
        1, "error_max_budget_usd", True, "budget_exhausted"), who
    assert len(r["errors"]) == 1 and "0.0001" in r["errors"][0], who


@pytest.mark.parametrize("who", WHO)
def test_an_api_error(tmp_path: Path, who: str) -> None:
    code, r = result(who, tmp_path, [[text("never")]],
                     fault=Fault.error(400, "bad thing here", "invalid_request_error", times=9))
    assert (code, r["is_error"], r["terminal_reason"], r["api_error_status"]) == (1, True, "api_error", 400), who
    assert "bad thing here" in r["result"], who
    assert r["subtype"] == ("success" if who == "claude" else "error_during_execution")


@pytest.mark.parametrize("who", WHO)
def test_json_with_verbose_is_every_message_in_one_array(tmp_path: Path, who: str) -> None:
    """`--output-format json --verbose`: one JSON array of the stream-json messages, the result last
    (a script reads `.[-1].result`), where json alone is the result object; each with a uuid. The run
    ends in a final answer: its result is "completed" (one run for both: each is a CLI start of both
    programs, Claude Code's ~2 s of CPU)."""
    code, lines = result(who, tmp_path, [[bash("echo hi")], [text("hello")]], "--verbose", "--allowedTools", "Bash")
    assert code == 0 and isinstance(lines, list), (who, lines)
    r = lines[-1]
    assert (r["subtype"], r["is_error"], r["result"], r["terminal_reason"]) == ("success", False, "hello", "completed"), who
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "system" and kinds[-3:] == ["user", "assistant", "result"], (who, kinds)
    assert lines[0]["subtype"] == "init" and lines[-1]["result"] == "hello", who
    uuids = [line.get("uuid") for line in lines]  # every line has its own (as stream-json's lines do)
    assert all(isinstance(u, str) and len(u) == 36 for u in uuids) and len(set(uuids)) == len(uuids), (who, uuids)


@pytest.mark.parametrize("who", WHO)
def test_a_prompt_a_hook_blocked_has_no_terminal_reason(tmp_path: Path, who: str) -> None:
    hook = tmp_path / "block.sh"
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"block\", \"reason\": \"NOPE\"}'\n")
    hook.chmod(0o755)
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}
    code, r = result(who, tmp_path, [[text("never")]], "--settings", json.dumps(settings))
    assert (code, r["subtype"], r["is_error"], r.get("terminal_reason")) == (0, "success", False, None), who
    assert r["result"].startswith("UserPromptSubmit operation blocked by hook:\nNOPE"), who
