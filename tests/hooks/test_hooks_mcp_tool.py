"""The `mcp_tool` hook type (issue 42): a hook that calls a configured MCP server's tool (the test
server of tests/mcp, over stdio), `${path}` in its input filled from the hook's input JSON; Claude
Code 2.1.332 and loopwright on the same scripted turns, with the same settings and --mcp-config."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from loopwright.hooks.external import mcp_arguments
from tests.helpers import TESTS, text
from tests.hooks.test_hooks_vs_claude_code import CLAUDE, bash, both, result_text

SERVER = str(TESTS / "mcp" / "mcp_test_server.py")
claude_code = pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")


def mcp_config(tmp: Path, log: Path) -> str:
    path = tmp / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"t": {"command": sys.executable, "args": [SERVER, "--log", str(log)]}}}))
    return str(path)


def test_input_paths_are_filled_as_claude_code_fills_them() -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "echo one"}}
    given = {"text": "${tool_input.command}|${tool_name}|${missing.x}|${tool_input}", "n": 3, "l": ["${tool_name}"]}
    assert mcp_arguments(given, payload) == {"text": 'echo one|Bash||{"command":"echo one"}', "n": 3, "l": ["Bash"]}


@pytest.mark.e2e
@claude_code
def test_mcp_tool_hook_calls_the_servers_tool_with_the_filled_input_the_same(tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    hooks = {"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "mcp_tool", "server": "t", "tool": "write_note",
         "input": {"text": "${tool_input.command}|${tool_name}|${missing.x}|${tool_input}"}},
        {"type": "mcp_tool", "server": "t", "tool": "echo", "input": {"text": "plain text"}}]}]}
    runs = both(tmp_path, [[bash("echo one")], [text("ok")]], {"hooks": hooks}, "--permission-mode", "acceptEdits",
                "--mcp-config", mcp_config(tmp_path, log))
    notes = log.read_text().splitlines()
    assert notes == ['note echo one|Bash||{"command":"echo one"}'] * 2  # once per side
    for who, (requests, _) in runs.items():
        assert result_text(requests[1]).startswith("one"), who
        assert "plain text" not in json.dumps(requests[1].body["messages"]), who  # plain text is no context here


# several CLI runs in a row: 57 s under load (2 cores, -n 3, the shared machine at load ~20), where the
# suite's hang guard is 120 s per test
@pytest.mark.timeout(360)
@pytest.mark.e2e
@claude_code
def test_a_failing_mcp_tool_hook_goes_on_unless_on_failure_blocks_the_same(tmp_path: Path) -> None:
    cfg = mcp_config(tmp_path, tmp_path / "mcp.log")
    failing = [{"type": "mcp_tool", "server": "t", "tool": "fail"}, {"type": "mcp_tool", "server": "nosuch", "tool": "x"}]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    runs = both(tmp_path / "a", [[bash("touch made")], [text("ok")]],
                {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": failing}]}}, "--permission-mode", "acceptEdits",
                "--mcp-config", cfg)
    for who, (_, proj) in runs.items():
        assert (proj / "made").exists(), who  # a failure is reported; the call goes ahead
    blocking = [{"type": "mcp_tool", "server": "t", "tool": "fail", "onFailure": "block"}]
    runs = both(tmp_path / "b", [[bash("touch made")], [text("ok")]],
                {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": blocking}]}}, "--permission-mode", "acceptEdits",
                "--mcp-config", cfg)
    for who, (requests, proj) in runs.items():
        assert not (proj / "made").exists(), who
        block = requests[1].body["messages"][-1]["content"][0]
        assert block["is_error"] is True and "[t/fail]" in result_text(requests[1]), who
