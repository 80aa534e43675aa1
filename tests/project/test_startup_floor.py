"""Start-up toward the floor (issue 29 item 3): the first request of `loopwright -p` loads
neither importlib.metadata nor the email package (the retry policy wants the second only to
parse a Retry-After date), nor httpcore2, anyio or sniffio: the transport is h11 on asyncio's
streams (models/wire.py), and h11 itself is loaded only once that request is on the wire."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.project.test_startup_imports import MARK, modules_of_one_call, modules_of_sdk_call

pytestmark = pytest.mark.e2e  # subprocesses: a fresh interpreter each

SLOW_STDLIB = ("importlib.metadata", "email", "csv", "zipfile")
NOT_NEEDED = ("httpcore2", "anyio", "sniffio", "typing_extensions")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_first_request_loads_no_importlib_metadata_and_no_email(provider: str, tmp_path: Path) -> None:
    loaded, requests = modules_of_one_call(provider, tmp_path)
    assert requests == 1 and "loopwright.models.wire" in loaded and "h11" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in SLOW_STDLIB or m.startswith("importlib.metadata")) == []
    assert sorted(m for m in loaded if m.split(".")[0] in NOT_NEEDED) == []


def test_the_sdk_protocol_path_to_the_first_request_loads_neither(tmp_path: Path) -> None:
    # loopwright as the Agent SDKs' CLI (--input-format stream-json) starts a process per session
    loaded, requests = modules_of_sdk_call(tmp_path)
    assert requests == 1
    assert "loopwright.models.wire" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in SLOW_STDLIB or m.startswith("importlib.metadata")) == []
    assert sorted(m for m in loaded if m.split(".")[0] in NOT_NEEDED) == []


SENT = "AT-FIRST-SEND:"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_first_request_is_on_the_wire_before_h11_is_loaded(provider: str, tmp_path: Path) -> None:
    # What is loaded when the first request's bytes go to the socket (for a server of one's own, the
    # OpenAI-compatible model's first GET asks its window), and at exit (models/framing.py says why).
    code = ("import atexit, socket, sys\n"
            "send = socket.socket.send\n"
            "def first(self, data, *a):\n"
            "    if bytes(data[:4]) in (b'POST', b'GET ') and not hasattr(first, 'seen'):\n"
            f"        first.seen = True; print({SENT!r} + ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
            "    return send(self, data, *a)\n"
            "socket.socket.send = first\n"
            f"atexit.register(lambda: print({MARK!r} + ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
            "from loopwright.cli import main\nsys.exit(main())\n")
    with ScriptedServer([[{"type": "text", "text": "done"}]]) as srv:
        env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k",
               "OPENAI_BASE_URL": srv.openai_url, "LOOPWRIGHT_HOME": str(tmp_path / ".lw")}
        model = "claude-sonnet-4-5" if provider == "anthropic" else "openai:local-model"
        p = subprocess.run([sys.executable, "-c", code, "-p", "hi", "--model", model, "--no-session-persistence"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        requests = len(srv.loop_requests)
    assert p.returncode == 0 and requests == 1, p.stderr
    [sent] = [set(x.removeprefix(SENT).split()) for x in p.stderr.splitlines() if x.startswith(SENT)]
    [loaded] = [set(x.removeprefix(MARK).split()) for x in p.stderr.splitlines() if x.startswith(MARK)]
    assert {"loopwright.models.wire", "loopwright.models.framing"} <= sent
    assert "h11" not in sent and "h11" in loaded  # it read the answer
