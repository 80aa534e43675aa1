"""`loopwright mcp serve` on the wire: a real subprocess spoken to in JSON-RPC lines over stdio,
as any MCP client speaks to it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli_env, loopwright_cmd

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")


def _exchange(cwd: Path, home: Path, requests: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Initialize, send `requests`, and return the answers by id (stdin closed: the server ends)."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}}
    lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *requests]
    proc = subprocess.Popen([*loopwright_cmd(), "mcp", "serve", "--cwd", str(cwd)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright")))
    answers: dict[int, dict[str, Any]] = {}
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for msg in lines:
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()
            if "id" in msg:  # one answer per request, in order: read it before the next
                answer = json.loads(proc.stdout.readline())
                answers[answer["id"]] = answer
        proc.stdin.close()
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return answers


@pytest.mark.e2e
def test_unknown_tool_is_a_json_rpc_invalid_params_error(tmp_path: Path) -> None:
    """The spec answers a call to a tool the server does not have with error -32602, not a tool
    result; a known tool still answers with its result, and the server keeps serving after it."""
    (tmp_path / "note.txt").write_text("hello from the workspace\n")
    answers = _exchange(tmp_path, tmp_path / "home", [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "NoSuchTool", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "Read", "arguments": {"file_path": str(tmp_path / "note.txt")}}},
    ])
    assert "result" not in answers[1]
    assert answers[1]["error"]["code"] == -32602
    assert "NoSuchTool" in answers[1]["error"]["message"]
    result = answers[2]["result"]
    assert not result.get("isError")
    assert "hello from the workspace" in result["content"][0]["text"]
