"""A repository file whose name is not UTF-8 (Python keeps its bytes as lone surrogates) found by
a tool: the session goes on. Before, the tool result held a lone surrogate, which no UTF-8
encoder takes: the next request failed, and so did every later prompt and resume of the session
(the history kept it). Now the request and the transcript carry U+FFFD in its place, the same
in both (real `-p` runs, real HTTP to the loopback server, a real file name of bytes)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd, text, use

pytestmark = pytest.mark.e2e


def run(proj: Path, home: Path, turns: list[Any], *args: str) -> tuple[dict[str, Any], list[Any]]:
    with ScriptedServer(turns) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home))
        r = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json",
                            *args], cwd=proj, env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        return json.loads(r.stdout), [q.body["messages"] for q in srv.requests]


def test_a_file_name_that_is_not_utf8_does_not_break_the_session(tmp_path: Path) -> None:
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    try:
        with open(os.path.join(os.fsencode(proj), b"evil\xff.txt"), "w") as f:
            f.write("x")
    except OSError as e:  # (a file system that takes only UTF-8 names)
        pytest.skip(f"this file system refuses a non-UTF-8 name: {e}")
    out, sent = run(proj, home, [[use("g", "Glob", pattern="*.txt")], [text("ok")]])
    assert out["subtype"] == "success" and out["result"] == "ok", out
    (result,) = [b for b in sent[-1][-1]["content"] if b.get("type") == "tool_result"]
    assert result["content"] == "evil\ufffd.txt"
    again, resent = run(proj, home, [[text("still here")]], "--resume", out["session_id"])
    assert again["subtype"] == "success" and again["result"] == "still here", again
    assert [b["content"] for m in resent[-1] if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"] == ["evil\ufffd.txt"]


def test_stream_json_and_the_sdk_protocol_write_valid_utf8(tmp_path: Path) -> None:
    """The same tool result on stdout: each line of -p's stream-json and of the Agent SDK protocol
    is valid UTF-8 (under the C locale, stdout wrote the name's raw byte; the Python SDK's reader
    fails on a line that is no UTF-8)."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    try:
        with open(os.path.join(os.fsencode(proj), b"evil\xff.txt"), "w") as f:
            f.write("x")
    except OSError as e:
        pytest.skip(f"this file system refuses a non-UTF-8 name: {e}")
    prompt = json.dumps({"type": "user", "session_id": "", "parent_tool_use_id": None,
                         "message": {"role": "user", "content": "go"}}) + "\n"
    for args, stdin in ((["-p", "go", "--output-format", "stream-json", "--verbose"], ""),
                        (["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"], prompt)):
        with ScriptedServer([[use("g", "Glob", pattern="*.txt")], [text("ok")]]) as srv:
            env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home), LC_ALL="C", LANG="C")
            r = subprocess.run([*loopwright_cmd(), *args, "--model", "claude-sonnet-4-5"], cwd=proj, env=env,
                               input=prompt.encode() if stdin else b"", capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        lines = [json.loads(ln.decode("utf-8")) for ln in r.stdout.splitlines()]  # (strict: no byte that is no UTF-8)
        results = [b["content"] for m in lines if m.get("type") == "user"
                   for b in m["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
        assert results == ["evil\ufffd.txt"], (args[0], results)
