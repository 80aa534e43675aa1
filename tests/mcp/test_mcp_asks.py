"""What an MCP server asks of loopwright, end to end over stdio with a real SDK server
(tests/mcp/asking_mcp_server.py) and `loopwright -p`: elicitation (headless: the defaults or a
decline), sampling (the run's model, gated, charged), roots (the working directories), and the
server's prompts as `/mcp__<server>__<prompt>` commands."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.test_mcp_oauth import stream, text_of

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")

HERE = Path(__file__).resolve().parent


def run(tmp_path: Path, turns: list[Any], *args: str, prompt: str = "go") -> Any:
    import subprocess

    from tests.helpers import cli_env, loopwright_cmd

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"ask": {"command": sys.executable,
                                                         "args": [str(HERE / "asking_mcp_server.py")]}}}))
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns))
    p = subprocess.run([*loopwright_cmd(), "-p", prompt, "--model", f"scripted:{script}", "--mcp-config", str(config),
                        "--output-format", "stream-json", "--verbose", *args], cwd=project, env=cli_env(), capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert p.returncode == 0, p.stderr
    return p


def use(i: int, name: str, **x: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"c{i}", "name": name, "input": x}


@pytest.mark.e2e
def test_headless_elicitation_takes_the_defaults_or_declines_and_roots_are_the_working_dirs(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    p = run(tmp_path, [[use(1, "mcp__ask__confirm"), use(2, "mcp__ask__pick"), use(3, "mcp__ask__roots")],
                       [{"type": "text", "text": "done"}]], "--allowedTools", "mcp__ask__confirm,mcp__ask__pick,"
                       "mcp__ask__roots", "--add-dir", str(extra))
    _, results = stream(p.stdout)
    assert text_of(results["c1"]) == "accept: {'color': 'blue', 'count': 3}"
    assert text_of(results["c2"]) == "decline"
    assert text_of(results["c3"]).splitlines() == [(tmp_path / "project").resolve().as_uri(), extra.resolve().as_uri()]


@pytest.mark.e2e
def test_sampling_goes_through_the_run_model_only_when_allowed_and_is_charged(tmp_path: Path) -> None:
    turns = [[use(1, "mcp__ask__haiku", topic="herons")],
             {"content": [{"type": "text", "text": "grey heron waits"}], "usage": {"input_tokens": 7, "output_tokens": 4}},
             [{"type": "text", "text": "done"}]]
    p = run(tmp_path, turns, "--allowedTools", "mcp__ask__haiku,mcp__ask__sampling")
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    _, results = stream(p.stdout)
    assert text_of(results["c1"]) == "model scripted said: grey heron waits"
    result = lines[-1]
    assert result["usage"]["input_tokens"] >= 7 and result["modelUsage"]["scripted"]["calls"] == 2
    # Not allowed (no rule for mcp__ask__sampling, nobody to ask): refused, and no model call is made for it.
    p2 = run(tmp_path, [[use(1, "mcp__ask__haiku", topic="herons")], [{"type": "text", "text": "done"}]],
             "--allowedTools", "mcp__ask__haiku")
    out = text_of(stream(p2.stdout)[1]["c1"])
    assert out.startswith("sampling failed:") and "mcp__ask__sampling" in out, out


@pytest.mark.e2e
def test_a_server_prompt_is_a_slash_command(tmp_path: Path) -> None:
    p = run(tmp_path, [[{"type": "text", "text": "reviewed"}]], prompt="/mcp__ask__review src/app.py")
    session = json.loads(p.stdout.splitlines()[-1])["session_id"]
    (transcript,) = Path(os.environ["LOOPWRIGHT_HOME"]).rglob(f"{session}.jsonl")
    prompts = [json.loads(x)["message"] for x in transcript.read_text().splitlines() if json.loads(x).get("type") == "user"]
    assert prompts[0]["content"] == [{"type": "text", "text": "Please review src/app.py for bugs."}]
    p2 = run(tmp_path, [[{"type": "text", "text": "ok"}]], prompt="/mcp__ask__nope x")
    assert "/mcp__ask__nope is no MCP prompt of a connected server (MCP prompts: /mcp__ask__review)" in p2.stderr


@pytest.mark.e2e
def test_a_server_prompt_typed_in_the_interactive_session_reaches_the_model(tmp_path: Path) -> None:
    import shutil
    import time

    if shutil.which("tmux") is None:
        pytest.skip("needs tmux")
    from loopwright.testing import ScriptedServer
    from tests.cli.test_interactive_commands import WAIT, repl, user_texts
    from tests.helpers import text, until

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"ask": {"command": sys.executable,
                                                         "args": [str(HERE / "asking_mcp_server.py")]}}}))
    with ScriptedServer([[text("reviewed it")]]) as srv, \
            repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url, "--mcp-config", str(config)) as t:
        # The / menu offers the server's prompt with its description once the session has listed
        # the servers' prompts (in the background, at start): type the last `_` until it shows.
        t.type("/mcp_")

        deadline = time.monotonic() + WAIT
        while True:
            t.type("_")
            if until(lambda: "Review a file carefully" in t.screen(), 3.0):
                break
            assert time.monotonic() < deadline, t.screen()
            t.keys("BSpace")
        assert "/mcp__ask__review" in t.screen()
        t.keys("Tab")  # picks the only entry: the line becomes the command
        t.wait("› /mcp__ask__review")
        t.send(" src/app.py")
        t.wait("reviewed it")
        assert until(lambda: len(srv.loop_requests) == 1, WAIT)
        assert user_texts(srv.loop_requests[0].body)[-1] == "Please review src/app.py for bugs."


@pytest.mark.e2e
def test_the_agent_sdks_on_elicitation_answers_a_servers_question(tmp_path: Path) -> None:
    """The TypeScript Agent SDK drives loopwright (its pathToClaudeCodeExecutable); the server's
    elicitation reaches the SDK's onElicitation as Claude Code sends it, and its answer the server."""
    import os
    import shutil

    from tests.sdkproto.test_sdk_typescript import NODE_DIR, scenario

    if shutil.which("node") is None or not (NODE_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk").is_dir():
        pytest.skip("node or the TypeScript Agent SDK is missing (cd tests/node && npm install)")
    os.environ.update(ASK_PYTHON=sys.executable, ASK_SERVER=str(HERE / "asking_mcp_server.py"))
    try:
        seen, srv = scenario("loopwright", "elicitation", [[use(1, "mcp__ask__confirm")], [{"type": "text",
                                                                                           "text": "set"}]], tmp_path)
    finally:
        for k in ("ASK_PYTHON", "ASK_SERVER"):
            os.environ.pop(k, None)
    (asked,) = seen["elicited"]
    assert asked["serverName"] == "ask" and asked["message"] == "Your preferences?" and asked["mode"] == "form"
    assert set(asked["requestedSchema"]["properties"]) == {"color", "count"}
    assert "accept: {'color': 'green', 'count': 5}" in json.dumps(srv.loop_requests[-1].body["messages"][-1])
