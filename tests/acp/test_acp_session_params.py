"""An editor's malformed `mcpServers` in session/new or session/load (wrong types, missing fields,
a type loopwright does not connect to, a name given twice), or `additionalDirectories` (not a list
of absolute paths), is answered with JSON-RPC's invalid
params naming the field, and the agent keeps serving. (The ACP library skips such an entry
without a word: the editor's server would silently not be there.) Raw JSON-RPC lines to a real
`loopwright acp` process, as an editor's malformed request arrives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.acp.session_params import session_params_problem
from loopwright.testing import ScriptedServer
from tests.acp.test_acp import _call, _raw_agent
from tests.helpers import notes_project, text

pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")

GOOD_STDIO = {"name": "tools", "command": "python3", "args": ["-m", "x"], "env": [{"name": "A", "value": "1"}]}
GOOD_HTTP = {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": []}
CASES: list[tuple[Any, str]] = [
    ([{"name": "x"}], "mcpServers[0].command: must be a non-empty string (it is missing)"),
    ([{**GOOD_STDIO, "name": 5}], "mcpServers[0].name: must be a non-empty string"),
    ([{**GOOD_STDIO, "args": "-m x"}], "mcpServers[0].args: must be a list of strings"),
    ([{**GOOD_STDIO, "args": ["-m", 3]}], "mcpServers[0].args[1]: must be a string"),
    ([{**GOOD_STDIO, "env": [{"name": "A"}]}], "mcpServers[0].env[0].value: must be a string (it is missing)"),
    ([GOOD_STDIO, {"type": "http", "name": "h"}], "mcpServers[1].url: must be a non-empty string (it is missing)"),
    ([{**GOOD_HTTP, "url": 5}], "mcpServers[0].url: must be a non-empty string"),
    ([{**GOOD_HTTP, "headers": {"A": "b"}}], "mcpServers[0].headers: must be a list of {name, value} objects"),
    ([7], "mcpServers[0]: must be an object"),
    ([{**GOOD_HTTP, "type": "weird"}], "mcpServers[0].type: 'weird' is not a server type loopwright connects to"),
    ([{"type": "acp", "name": "a", "serverId": "s"}], "mcpServers[0].type: 'acp' is not a server type"),
    ([GOOD_STDIO, {**GOOD_HTTP, "name": "tools"}], "mcpServers[1].name: 'tools' names two servers"),
    ("tools", "mcpServers: must be a list of MCP servers"),
]


@pytest.mark.parametrize(("servers", "said"), CASES)
def test_each_problem_names_its_field(servers: Any, said: str) -> None:
    problem = session_params_problem({"cwd": "/", "mcpServers": servers})
    assert problem is not None and f"{problem[0]}: {problem[1]}".startswith(said), problem


@pytest.mark.parametrize(("dirs", "said"), [
    ([5], "additionalDirectories[0]: 5 is not an absolute path"),
    (["/a", "rel/b"], "additionalDirectories[1]: 'rel/b' is not an absolute path"),
    ("/a", "additionalDirectories: must be a list of absolute paths"),
])
def test_additional_directories_are_checked_too(dirs: Any, said: str) -> None:
    problem = session_params_problem({"cwd": "/", "mcpServers": [], "additionalDirectories": dirs})
    assert problem is not None and f"{problem[0]}: {problem[1]}" == said, problem
    assert session_params_problem({"cwd": "/", "mcpServers": [], "additionalDirectories": ["/a", "/b"]}) is None


def test_good_servers_pass() -> None:
    assert session_params_problem({"cwd": "/", "mcpServers": [GOOD_STDIO, GOOD_HTTP, {**GOOD_HTTP, "type": "sse",
                                                                                    "name": "s"}]}) is None
    assert session_params_problem({"cwd": "/", "mcpServers": []}) is None


@pytest.mark.e2e
def test_the_agent_answers_each_malformed_request_and_keeps_serving(tmp_path: Path) -> None:
    work = notes_project(tmp_path)
    with ScriptedServer([[text("fine")]]) as srv:
        p = _raw_agent(srv, tmp_path)
        try:
            _call(p, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}')
            r = _call(p, json.dumps({"jsonrpc": "2.0", "id": 9, "method": "session/new", "params": {
                "cwd": str(work), "mcpServers": [], "additionalDirectories": [str(work), 7]}}).encode())
            assert r["error"]["code"] == -32602 and "additionalDirectories[1]" in r["error"]["message"], r
            for i, (servers, said) in enumerate(CASES[:4]):
                for method, extra in (("session/new", {}), ("session/load", {"sessionId": "abc"})):
                    r = _call(p, json.dumps({"jsonrpc": "2.0", "id": 10 + i, "method": method, "params": {
                        "cwd": str(work), "mcpServers": servers, **extra}}).encode())
                    assert r["id"] == 10 + i and r["error"]["code"] == -32602, r
                    assert said in r["error"]["message"], r
            new = _call(p, json.dumps({"jsonrpc": "2.0", "id": 50, "method": "session/new",
                                       "params": {"cwd": str(work), "mcpServers": []}}).encode())
            sid = new["result"]["sessionId"]
            ok = _call(p, json.dumps({"jsonrpc": "2.0", "id": 51, "method": "session/prompt", "params": {
                "sessionId": sid, "prompt": [{"type": "text", "text": "still fine?"}]}}).encode())
            assert ok["result"]["stopReason"] == "end_turn"
        finally:
            p.kill()
            p.wait()
        assert p.stderr is not None
        assert "mcpServers[0].command" in p.stderr.read().decode()  # said on the agent's log too
