"""What the Agent SDK protocol path imports on its way to the first model request (issue 29): the
process an SDK starts per session answers `initialize`, reads one user line and makes one model
call; the modules only a later event needs are not imported for it — the answers of a question
to the user (interaction), an SDK's in-process MCP server (mcp.inprocess), a refused request's
context-window parsing (models.window), a rewind's diff (difflib, for checkpoints)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer

pytestmark = pytest.mark.e2e  # runs the CLI as a subprocess

LATER = ("loopwright.interaction", "loopwright.mcp.inprocess", "loopwright.models.window", "difflib")
MARK = "MODULES:"


def test_the_protocol_path_imports_what_only_later_events_need_later(tmp_path: Path) -> None:
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: print({MARK!r} + ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
            "from loopwright.cli import main\n"
            "sys.exit(main())\n")
    lines = [{"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize", "hooks": None}},
             {"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": None,
              "session_id": ""}]
    with ScriptedServer([[{"type": "text", "text": "done"}]]) as srv:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOPWRIGHT_"))}
        env.update(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k", HOME=str(tmp_path),
                   LOOPWRIGHT_HOME=str(tmp_path / "lw"))
        p = subprocess.run([sys.executable, "-c", code, "--input-format", "stream-json", "--output-format",
                            "stream-json", "--verbose", "--model", "claude-sonnet-4-5"],
                           input="".join(json.dumps(x) + "\n" for x in lines), cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
        requests = len(srv.loop_requests)
    assert p.returncode == 0, p.stderr
    out = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    assert [x["subtype"] for x in out if x["type"] == "result"] == ["success"]
    assert requests == 1  # the run reached the model (with its transcript: the SDK's default)
    [line] = [x for x in p.stderr.splitlines() if x.startswith(MARK)]
    loaded = set(line.removeprefix(MARK).split())
    assert "loopwright.sdkproto.session" in loaded and "loopwright.models.wire" in loaded
    assert sorted(loaded & set(LATER)) == []
