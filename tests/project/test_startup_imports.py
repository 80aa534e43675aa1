"""What `loopwright -p` imports on its way to the first model request (issue 12 item 2):
no provider SDK, no UI library it does not draw, no validator or shell parser before a
tool call needs one. A one-call run whose model answers with text calls no tool, so
everything it imports, it imported on the way to that first request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer

pytestmark = pytest.mark.e2e  # every test here runs programs as subprocesses

# Each of these costs milliseconds to seconds and is needed only later, if ever: the SDKs
# (a user's own client), pydantic (their dependency), rich / prompt_toolkit / pygments
# (interactive mode), bashlex and loopwright's own shell parser and judge (judging a shell
# command), jsonschema / fastjsonschema (validating a tool input), httpx, httpx2, httpcore2
# and anyio (an SDK client's HTTP stack: ours is models/wire.py), the OS sandbox (when one is configured), the
# session store (this run keeps no transcript: --no-session-persistence), the event TypedDicts
# (annotations only), the uuid module (it imports `platform`; ids.py makes the ids), MCP's
# config parsing (no server is configured), the gate's advice (the wording of a refusal) and its Bash
# verdicts (a Bash call), the usage limits (a run given UsageLimits),
# a handoff taking effect (a run with handoffs), auto mode's classifier (a call judged in auto mode)
# the usage and budget views (a tool that reads them) and can_use_tool's context (a run given one);
# with no hook configured, the kinds of hook, what hooks decide, and what runs them (issue 41:
# ~27 M instructions of the start to the first request); compaction itself (a run that compacts);
# secrets and hashlib with hmac and random (a worktree's name, a shared file's lock: ~9 M); the
# skills and the agent files (a run with skill or agent folders: configdirs.any_folder); datetime
# (stream-json's timestamps: ~3.5 M instructions).
HEAVY = ("anthropic", "openai", "pydantic", "pydantic_core", "rich", "prompt_toolkit", "pygments", "bashlex",
         "jsonschema", "fastjsonschema", "httpx", "httpx2", "httpcore2", "anyio", "yaml")
HEAVY_OWN = ("loopwright.gate.shell.bashparse", "loopwright.gate.shell.bashcheck", "loopwright.sandbox", "loopwright.sessions",
             "loopwright.event_types", "uuid", "loopwright.mcp.config", "loopwright.gate.advice", "loopwright.gate.bash",
             "loopwright.limits", "loopwright.loop.handoff", "loopwright.gate.auto",
             "loopwright.tools.views", "loopwright.permission_context", "loopwright.hooks.kinds",
             "loopwright.hooks.results", "loopwright.hooks.runner", "loopwright.hooks.external", "loopwright.hooks.envfile",
             "loopwright.context", "secrets", "hashlib",
             "loopwright.skills", "loopwright.agentfiles", "datetime")
MARK = "MODULES:"
# The child prints every module it has at its exit. The Bash parser's warm-up while a model thinks
# (idle.py: after a read has waited 0.5 s) is turned off in it: a loaded machine can stall the
# loopback server's answer that long, and what is imported then is imported after the request.
ONE_RUN = ("import atexit, sys\n"
           f"atexit.register(lambda: print({MARK!r} + ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
           "import loopwright.idle\n"
           "loopwright.idle.when_idle = lambda work: None\n"
           "from loopwright.cli import main\n"
           "sys.exit(main())\n")


def modules_of_one_call(provider: str, tmp_path: Path, persist: bool = False) -> tuple[set[str], int]:
    code = ONE_RUN
    with ScriptedServer([[{"type": "text", "text": "done"}]]) as srv:
        env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k",
               "OPENAI_BASE_URL": srv.openai_url, "LOOPWRIGHT_HOME": str(tmp_path / ".lw")}
        model = "claude-sonnet-4-5" if provider == "anthropic" else "openai:local-model"
        keep = [] if persist else ["--no-session-persistence"]
        p = subprocess.run([sys.executable, "-c", code, "-p", "hi", "--model", model, *keep],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        n = len(srv.loop_requests)
    assert p.returncode == 0, p.stderr
    [line] = [x for x in p.stderr.splitlines() if x.startswith(MARK)]
    return set(line.removeprefix(MARK).split()), n


def modules_of_sdk_call(tmp_path: Path) -> tuple[set[str], int]:
    """The same for loopwright as the Agent SDKs start it (--input-format stream-json: a
    process per session), one user message on stdin."""
    code = ONE_RUN
    msg = json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": None,
                      "session_id": ""})
    with ScriptedServer([[{"type": "text", "text": "done"}]]) as srv:
        env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "k", "HOME": str(tmp_path)}
        p = subprocess.run([sys.executable, "-c", code, "--input-format", "stream-json", "--output-format",
                            "stream-json", "--verbose", "--model", "claude-sonnet-4-5", "--no-session-persistence"],
                           input=msg + "\n", cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        n = len(srv.loop_requests)
    assert p.returncode == 0, p.stderr
    [line] = [x for x in p.stderr.splitlines() if x.startswith(MARK)]
    return set(line.removeprefix(MARK).split()), n


def test_a_new_persisted_session_loads_the_writing_half_of_sessions_only(tmp_path: Path) -> None:
    """A run's default keeps a transcript: the store, the writer, the recorder and the file
    snapshots; not the readers (repair, summaries), the listing or rewind."""
    loaded, requests = modules_of_one_call("anthropic", tmp_path, persist=True)
    assert requests == 1 and list((tmp_path / ".lw").rglob("*.jsonl"))  # a transcript was written
    assert {"loopwright.sessions.recorder", "loopwright.sessions.jsonl", "loopwright.sessions.checkpoints"} <= loaded
    readers = {"loopwright.sessions.repair", "loopwright.sessions.summaries", "loopwright.sessions.rewind",
               "loopwright.event_types", "uuid", "shutil"}
    assert sorted(loaded & readers) == []


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_print_mode_imports_nothing_heavy_before_the_first_request(provider: str, tmp_path: Path) -> None:
    loaded, requests = modules_of_one_call(provider, tmp_path)
    assert requests == 1  # the run really reached the model
    assert "loopwright.models.wire" in loaded  # through the transport, not a stub
    assert sorted({m.split(".")[0] for m in loaded} & set(HEAVY)) == []
    assert sorted(loaded & set(HEAVY_OWN)) == []


def test_importing_the_providers_loads_no_http_client() -> None:
    """The HTTP client is loaded at the first call, so `import loopwright`, `--version` and
    building a model object stay light."""
    code = ("import sys, loopwright, loopwright.cli\n"
            "from loopwright.models.anthropic import AnthropicModel\n"
            "from loopwright.models.openai_compat import OpenAICompatModel\n"
            "AnthropicModel('claude-x', api_key='k'); OpenAICompatModel('m', base_url='http://127.0.0.1:1')\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {{'h11', *{HEAVY!r}}}))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_version_loads_neither_asyncio_nor_the_run() -> None:
    """`loopwright --version` answers from the parser: no event loop, no run's rooms (asyncio alone is ~30 ms)."""
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: print({MARK!r} + ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
            "from loopwright.cli import main\nsys.exit(main())\n")
    p = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("loopwright "), p.stderr
    [line] = [x for x in p.stderr.splitlines() if x.startswith(MARK)]
    loaded = set(line.removeprefix(MARK).split())
    assert sorted(loaded & {"asyncio", "loopwright.loop", "loopwright.assemble", "loopwright.models.wire", "ssl"}) == []
