"""The TypeScript Agent SDK (npm `@anthropic-ai/claude-agent-sdk`, pinned in tests/node) with
loopwright as `pathToClaudeCodeExecutable`: tests/node/sdk_scenarios.mjs runs a scenario and
prints what the SDK's side saw; Claude Code runs the same scenarios as the reference. This SDK
sends some options inside `initialize` (system prompt, JSON schema, disallowed tools, MCP
servers) and ends the session unless the CLI confirms them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import LOOPWRIGHT_BIN, TESTS, bash, cli_env, text, use

NODE_DIR = TESTS / "node"
SCRIPT = NODE_DIR / "sdk_scenarios.mjs"
CLAUDE = NODE_DIR / "node_modules" / ".bin" / "claude"
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(not (NODE_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk").is_dir(),
                       reason="the TypeScript Agent SDK is not installed (cd tests/node && npm install)"),
]
CLIS = ["loopwright", pytest.param("claude", marks=pytest.mark.skipif(not CLAUDE.exists(),
                                                                     reason="Claude Code not installed (tests/node)"))]


def scenario(cli: str, name: str, turns: list[Any], cwd: Path) -> tuple[dict[str, Any], ScriptedServer]:
    path = str(LOOPWRIGHT_BIN if LOOPWRIGHT_BIN.exists() else Path(sys.executable).parent / "loopwright") \
        if cli == "loopwright" else str(CLAUDE)
    with ScriptedServer(turns) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                      DISABLE_AUTOUPDATER="1", HOME=os.environ["HOME"])
        p = subprocess.run(["node", str(SCRIPT), path, name, str(cwd)], capture_output=True, text=True, env=env,
                           timeout=120, cwd=NODE_DIR)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), srv


@pytest.mark.parametrize("cli", CLIS)
def test_ts_query_basic(cli: str, tmp_path: Path) -> None:
    seen, _ = scenario(cli, "basic", [[text("2 + 2 = 4")]], tmp_path)
    (r,) = seen["results"]
    assert r["subtype"] == "success" and r["result"] == "2 + 2 = 4" and r["session_id"] == seen["init"]["session_id"]


@pytest.mark.parametrize("cli", CLIS)
def test_ts_write_tool(cli: str, tmp_path: Path) -> None:
    turns = [[use("w1", "Write", file_path=str(tmp_path / "hello.txt"), content="hi")], [text("made")]]
    seen, _ = scenario(cli, "write", turns, tmp_path)
    assert seen["results"][-1]["result"] == "made" and (tmp_path / "hello.txt").read_text() == "hi"
    # the Write's structured output, as the SDK hands it on (tests/sdkproto/test_sdk_tool_use_result.py)
    assert seen["toolResults"] == [{"is_error": False, "tool_use_result": {
        "type": "create", "filePath": str(tmp_path / "hello.txt"), "content": "hi", "structuredPatch": [],
        "originalFile": None, "userModified": False}}]


@pytest.mark.parametrize("cli", CLIS)
def test_ts_can_use_tool_denies(cli: str, tmp_path: Path) -> None:
    seen, srv = scenario(cli, "can_use_tool", [[bash("rm -rf junk")], [text("could not")]], tmp_path)
    assert seen["asked"] == ["Bash"] and [r["is_error"] for r in seen["toolResults"]] == [True]
    assert seen["toolResults"][0]["tool_use_result"].startswith("Error: ")  # a refusal: its text
    assert "no shell commands here" in json.dumps(srv.loop_requests[-1].body["messages"][-1])


@pytest.mark.parametrize("cli", CLIS)
def test_ts_hook_denies(cli: str, tmp_path: Path) -> None:
    seen, srv = scenario(cli, "hooks", [[bash("./foo.sh")], [text("blocked")]], tmp_path)
    assert seen["hooked"] == ["Bash"] and seen["results"][-1]["result"] == "blocked"
    assert "no foo.sh" in json.dumps(srv.loop_requests[-1].body["messages"][-1])


@pytest.mark.parametrize("cli", CLIS)
def test_ts_multi_turn_input(cli: str, tmp_path: Path) -> None:
    seen, srv = scenario(cli, "multi", [[text("ok")], [text("7")]], tmp_path)
    assert [r["result"] for r in seen["results"]] == ["ok", "7"]
    assert "Remember 7." in json.dumps(srv.loop_requests[-1].body["messages"])


@pytest.mark.parametrize("cli", CLIS)
def test_ts_in_process_mcp_server(cli: str, tmp_path: Path) -> None:
    seen, srv = scenario(cli, "mcp", [[use("c1", "mcp__calc__add", a=2, b=3)], [text("5")]], tmp_path)
    assert seen["results"][-1]["result"] == "5" and [r["is_error"] for r in seen["toolResults"]] == [False]
    assert seen["toolResults"][0]["tool_use_result"] == [{"type": "text", "text": "2 + 3 = 5"}]  # (Claude Code's too)
    assert "2 + 3 = 5" in json.dumps(srv.loop_requests[-1].body["messages"][-1])


def test_ts_options_sent_in_initialize(tmp_path: Path) -> None:
    seen, srv = scenario("loopwright", "options", [[use("s1", "StructuredOutput", answer=4)], [text("done")]], tmp_path)
    assert seen["results"][-1]["structured_output"] == {"answer": 4}
    body = srv.loop_requests[0].body
    assert "You are a pirate." in json.dumps(body["system"])
    names = [t["name"] for t in body["tools"]]
    assert "Bash" not in names and "Read" in names
