"""Issue 22, class 6: hostile MCP servers (no trust needed to be safe). A raw JSON-RPC server
(tests/mcp/hostile_mcp_server.py) run by the real CLI: a schema's remote `$ref` is never fetched (a
loopback listener records every request), images are capped in bytes before they reach the model,
and junk on the server's stdout/stderr goes to a log file, not the terminal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from loopwright.tools.base import Tool
from tests.helpers import TESTS, cli_env, loopwright_cmd, text, use

SERVER = str(TESTS / "mcp" / "hostile_mcp_server.py")
pytest.importorskip("mcp", reason="the MCP SDK is an extra: pip install 'loopwright[mcp]'")


def run(tmp_path: Path, turns: list[Any], *server_args: str) -> tuple[subprocess.CompletedProcess[str], ScriptedServer]:
    cfg = json.dumps({"mcpServers": {"hostile": {"command": sys.executable, "args": [SERVER, *server_args]}}})
    env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(tmp_path / "home"))
    with ScriptedServer(turns) as srv:
        proc = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", "claude-sonnet-4-6", "--base-url", srv.url,
                               "--no-session-persistence", "--mcp-config", cfg, "--allowedTools", "mcp__hostile__get",
                               "--output-format", "stream-json", "--verbose"],
                              cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=120)
    return proc, srv


@pytest.mark.e2e
def test_a_remote_ref_in_a_tool_schema_is_never_fetched(tmp_path: Path) -> None:
    with ScriptedServer([], strict=False) as listener:
        proc, srv = run(tmp_path, [[use("u", "mcp__hostile__get", x="a")], [text("done")]],
                        "--ref", f"{listener.url}/schema.json")
        init = json.loads(proc.stdout.splitlines()[0])
        assert "mcp__hostile__get" not in init["tools"]  # skipped, and said so
        assert any("is never fetched" in w for w in init.get("warnings", [])) or "is never fetched" in proc.stderr
        assert listener.requests == [], [(r.method, r.path) for r in listener.requests]


def test_tool_validation_never_fetches_a_remote_ref(tmp_path: Path) -> None:
    with ScriptedServer([], strict=False) as listener:
        for ref in (f"{listener.url}/a.json", f"{listener.url}/b.json#/defs/x"):
            t = Tool("t", "d", {"type": "object", "properties": {"x": {"$ref": ref}}}, lambda x: "ok")
            for value in ("a", 1, None):  # valid or not: neither engine resolves it
                try:
                    t.validate({"x": value})
                except Exception as e:  # an unresolvable reference is an error, not a request
                    assert "Unresolvable" in type(e).__name__ or "resolv" in str(e).lower(), e
        assert listener.requests == []


@pytest.mark.e2e
def test_an_oversized_image_never_reaches_the_model(tmp_path: Path) -> None:
    proc, srv = run(tmp_path, [[use("u", "mcp__hostile__get", x="a")], [text("done")]],
                    "--image-bytes", str(6 * 1024 * 1024), "--blob-bytes", str(6 * 1024 * 1024))
    assert proc.returncode == 0, proc.stderr
    last = [r for r in srv.requests if r.loop_call][-1]
    assert len(last.raw) < 200_000  # not the 16 MB of base64 the server sent
    body = last.raw.decode()
    assert body.count("over the 5,242,880-byte cap for one image") == 2 and '"type": "image"' not in body


@pytest.mark.e2e
def test_junk_on_a_servers_stdout_and_stderr_goes_to_a_log_file(tmp_path: Path) -> None:
    proc, srv = run(tmp_path, [[use("u", "mcp__hostile__get", x="a")], [text("done")]], "--junk", "2000")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stderr.splitlines()) < 20, proc.stderr[:3000]
    assert "junk" not in proc.stderr and "Traceback" not in proc.stderr
    log = (tmp_path / "home" / "logs" / "mcp.log").read_text()
    assert log.count("Failed to parse JSONRPC message") >= 2000
    results = [b for m in (srv.requests[-1].body or {}).get("messages", []) for b in m.get("content", [])
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert results and not results[0].get("is_error"), results  # the server still worked


@pytest.mark.e2e
def test_an_endless_line_is_cut_in_linear_time_and_the_call_ends(tmp_path: Path) -> None:
    import time

    t0 = time.monotonic()
    proc, srv = run(tmp_path, [[use("u", "mcp__hostile__get", x="a")], [text("done")]], "--long-line", str(70 * 2**20))
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    results = [b for m in (srv.requests[-1].body or {}).get("messages", []) for b in m.get("content", [])
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert results and results[0].get("is_error"), results
    assert "longer than 67,108,864 characters" in json.dumps(results[0])
    assert elapsed < 90, elapsed  # a guard against the quadratic read (minutes), not a benchmark


def test_line_stream_yields_whole_lines_and_answers_a_cut_one() -> None:
    import anyio

    from loopwright.mcp import lines

    async def go(chunks: list[bytes], cap: int) -> list[str]:
        send, recv = anyio.create_memory_object_stream[bytes](100)
        for c in chunks:
            await send.send(c)
        await send.aclose()
        old, lines.MAX_LINE_CHARS = lines.MAX_LINE_CHARS, cap
        try:
            return [x async for x in lines.LineStream(recv)]
        finally:
            lines.MAX_LINE_CHARS = old

    got = anyio.run(go, [b'{"a":1}\n{"b"', b':2}\n{"id": 7, "x": "', b"z" * 50, b'"}\n', b"tail"], 30)
    assert got[:2] == ['{"a":1}\n', '{"b":2}\n'] and got[3] == "tail"
    assert json.loads(got[2])["id"] == 7 and "longer than 30 characters" in json.loads(got[2])["error"]["message"]
