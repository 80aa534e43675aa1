"""sdkproto's command line and raw protocol lines: every flag the Agent SDKs pass works or fails
with a message naming it (never argparse's exit 2), and the NDJSON control channel answers what
it cannot do with an error, not silence."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from loopwright.cli import build_parser
from loopwright.sdkproto import wants_protocol
from loopwright.sdkproto.flags import FlagError, SdkFlags
from loopwright.sdkproto.flags import parse as parse_flags
from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd, text

HEAD = ["--output-format", "stream-json", "--verbose"]
TAIL = ["--input-format", "stream-json"]

# What the Python SDK's subprocess_cli builds for each option (the note's table), one at a time.
WORKS = [
    ["--permission-mode", "auto"],  # (issue 43: the classifier mode, gate/auto.py)
    ["--system-prompt", ""], ["--system-prompt", "Be brief."], ["--append-system-prompt", "Also this."],
    ["--tools", "Read,Grep"], ["--tools", ""], ["--tools", "default"], ["--allowedTools", "Read,Bash(git diff *)"],
    ["--max-turns", "3"], ["--max-budget-usd", "1.5"], ["--disallowedTools", "Bash"], ["--model", "claude-haiku-4-5"],
    ["--fallback-model", "claude-haiku-4-5"], ["--permission-prompt-tool", "stdio"],
    ["--permission-mode", "acceptEdits"], ["--permission-mode", "plan"], ["--permission-mode", "dontAsk"],
    ["--continue"], ["--session-id=3f1c2a9e-0000-4000-8000-000000000000"], ["--settings", '{"env": {}}'],
    ["--add-dir", "."], ["--mcp-config", '{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}'],
    ["--include-partial-messages"], ["--strict-mcp-config"],
    ["--setting-sources=user,project"], ["--setting-sources="], ["--thinking", "adaptive"],
    ["--thinking", "disabled"], ["--max-thinking-tokens", "2048"], ["--thinking-display", "summarized"],
    ["--effort", "high"], ["--json-schema", '{"type": "object", "properties": {"a": {"type": "integer"}}}'],
    ["--betas", "context-1m-2025-08-07"], ["--agents", '{"r": {"description": "d", "prompt": "p"}}'],
    ["--debug-to-stderr"], ["--replay-user-messages"], ["--include-hook-events"], ["--debug-file", "/dev/null"],
    ["--allow-dangerously-skip-permissions"], ["--await-initialize"], ["--initialize-fields", "settings"],
    ["--managed-settings", '{"permissions": {"deny": ["Bash"]}}'], ["--await-initialize", "--managed-settings-in-initialize"],
]
FAILS = [
    (["--permission-mode", "yolo"], "--permission-mode"), (["--resume-session-at=abc"], "--resume-session-at"),
    (["--resume-drops-turn=abc"], "--resume-drops-turn"), (["--session-mirror"], "--session-mirror"),
    (["--managed-settings-in-initialize"], "--managed-settings-in-initialize"), (["--managed-settings", "{x"], "--managed-settings"),
    (["--managed-settings", "[1]"], "--managed-settings"),
    (["--plugin-dir-no-mcp", "."], "--plugin-dir-no-mcp"), (["--task-budget", "1000"], "--task-budget"),
    (["--permission-prompt-tool", "mcp__x__ask"], "--permission-prompt-tool"),
    (["--resume=no-such-session"], "no-such-session"), (["--max-turns", "x"], "--max-turns"),
    (["--system-prompt-file", "/no/such/file"], "--system-prompt-file"), (["--frobnicate"], "--frobnicate"),
    (["--agent", "reviewer"], "--agent"), (["--max-thinking", "5"], "--max-thinking"),
]


def parse(argv: list[str]) -> SdkFlags:
    return parse_flags(argv, build_parser())


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.delenv("LOOPWRIGHT_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("flag", WORKS, ids=lambda f: " ".join(f))
def test_every_sdk_flag_is_taken(flag: list[str]) -> None:
    parse([*HEAD, *flag, *TAIL])


@pytest.mark.parametrize(("flag", "named"), FAILS, ids=lambda f: " ".join(f) if isinstance(f, list) else "")
def test_a_flag_it_cannot_honour_is_named(flag: list[str], named: str) -> None:
    with pytest.raises(FlagError, match=named.replace("*", r"\*")):
        parse([*HEAD, *flag, *TAIL])


def test_flags_shape_the_run() -> None:
    f = parse([*HEAD, "--tools", "Read,Bash", "--disallowedTools", "Bash", "--system-prompt", "S",
               "--max-thinking-tokens", "2048", "--permission-prompt-tool", "stdio",
               "--mcp-config", '{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}', *TAIL])
    assert [t.name for t in f.options.tools] == ["Read"]  # a disallowed tool is not offered
    assert f.options.system_prompt == "S" and f.ask_stdio and f.sdk_servers == ["calc"]
    assert f.options.thinking == {"type": "enabled", "budget_tokens": 2048}
    assert f.options.mcp_servers is None  # the sdk entry lives in the SDK's process, not in a config


def test_a_tool_loopwright_lacks_is_noted_not_offered() -> None:
    f = parse([*HEAD, "--tools", "Read,Monitor", *TAIL])
    assert [t.name for t in f.options.tools] == ["Read"]
    assert any("Monitor" in n and "not offered" in n for n in f.notes)


def test_model_aliases() -> None:
    f = parse([*HEAD, "--model", "sonnet", "--fallback-model", "haiku", *TAIL])
    assert f.options.model == "claude-sonnet-5-5" and f.options.fallback_model == ["claude-haiku-5-5"]


def test_wants_protocol() -> None:
    assert wants_protocol(["--input-format", "stream-json"]) and wants_protocol(["--input-format=stream-json"])
    assert not wants_protocol(["-p", "x", "--output-format", "stream-json"])


@pytest.mark.e2e
def test_unsupported_flag_exits_1_naming_it(tmp_path: Path) -> None:
    p = subprocess.run([*loopwright_cmd(), *HEAD, "--plugin-dir-no-mcp", ".", *TAIL], input="", capture_output=True,
                       text=True, env=cli_env(ANTHROPIC_API_KEY="test"), cwd=tmp_path, timeout=60)
    assert p.returncode == 1 and "--plugin-dir-no-mcp" in p.stderr and "not supported" in p.stderr


@pytest.mark.e2e
def test_raw_protocol_lines(tmp_path: Path) -> None:
    """Without an SDK: control requests answered (errors for what loopwright lacks), a bad line
    skipped with a note, one run per user line, exit 0 once stdin ends."""
    lines = [
        {"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize", "hooks": None}},
        {"type": "control_request", "request_id": "r2", "request": {"subtype": "rewind_files", "user_message_id": "u"}},
        {"type": "control_request", "request_id": "r3", "request": {"subtype": "set_permission_mode", "mode": "nope"}},
        {"type": "control_request", "request_id": "r4", "request": {"subtype": "mcp_status"}},
        "{not json",
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hello"}]},
         "parent_tool_use_id": None, "session_id": ""},
    ]
    stdin = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    with ScriptedServer([[text("hi there")]]) as srv:
        p = subprocess.run([*loopwright_cmd(), *HEAD, "--model", "claude-sonnet-4-6", *TAIL], input=stdin,
                           capture_output=True, text=True, cwd=tmp_path, timeout=60,
                           env=cli_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=srv.url))
    assert p.returncode == 0, p.stderr
    out = [json.loads(x) for x in p.stdout.splitlines()]
    answers = {o["response"]["request_id"]: o["response"] for o in out if o["type"] == "control_response"}
    assert answers["r1"]["subtype"] == "success" and "pid" in answers["r1"]["response"]
    assert answers["r2"]["subtype"] == "error" and "rewind_files" in answers["r2"]["error"]  # (no run yet)
    assert answers["r3"]["subtype"] == "error" and "nope" in answers["r3"]["error"]
    assert answers["r4"]["response"] == {"mcpServers": []}
    assert "not JSON" in p.stderr
    result = next(o for o in out if o["type"] == "result")
    assert result["result"] == "hi there" and result["uuid"] and result["num_turns"] == 0
    kinds = [o["type"] for o in out if o["type"] != "control_response"]
    assert kinds == ["system", "assistant", "result"]
    assert all(o.get("session_id") == result["session_id"] for o in out if o["type"] != "control_response")


def test_an_overlong_line_is_skipped_and_the_next_answered(capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio
    import io

    from loopwright.sdkproto.peer import Peer
    from loopwright.sdkproto.session import SdkSession

    out = io.StringIO()

    async def go() -> int:
        reader = asyncio.StreamReader()
        reader.feed_data(b'{"type": "user", "message": {"content": "' + b"x" * 1000 + b'"}}\n')
        reader.feed_data(json.dumps({"type": "control_request", "request_id": "r1",
                                     "request": {"subtype": "mcp_status"}}).encode() + b"\n")
        reader.feed_eof()
        return await SdkSession(parse([*HEAD, *TAIL]), Peer(out)).serve(reader, limit=200)

    assert asyncio.run(go()) == 1  # the overlong prompt's answer is an error result
    answers = [json.loads(x) for x in out.getvalue().splitlines()]
    by_type = {a["type"]: a for a in answers}
    assert by_type["control_response"]["response"] == {"subtype": "success", "request_id": "r1",
                                                       "response": {"mcpServers": []}}
    assert by_type["result"]["is_error"] and "over the limit of 200" in by_type["result"]["result"]
    assert "over the limit" in capsys.readouterr().err


def test_malformed_lines_from_the_peer_do_not_end_the_session(capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio
    import io

    from loopwright.sdkproto.peer import Peer
    from loopwright.sdkproto.session import SdkSession

    out = io.StringIO()
    lines = [[1, 2], {"type": "control_response", "response": [1]}, {"type": "control_request", "request": [1]},
             {"type": "control_request", "request_id": "r2", "request": {"subtype": "initialize", "hooks": [1]}},
             {"type": "control_request", "request_id": "r3", "request": {"subtype": "mcp_status"}}]

    async def go() -> int:
        reader = asyncio.StreamReader()
        for x in lines:
            reader.feed_data(json.dumps(x).encode() + b"\n")
        reader.feed_eof()
        return await SdkSession(parse([*HEAD, *TAIL]), Peer(out)).serve(reader)

    assert asyncio.run(go()) == 0
    answers = {a["response"]["request_id"]: a["response"]["subtype"] for a in map(json.loads, out.getvalue().splitlines())}
    assert answers == {"r2": "error", "r3": "success"}  # a request without its id: one stderr line
    assert "data must contain ['request_id']" in capsys.readouterr().err


@pytest.mark.e2e
def test_a_run_that_cannot_start_is_an_error_result_and_the_session_goes_on(tmp_path: Path) -> None:
    """The first prompt's run fails before its first turn (its transcript cannot be written: the
    sessions directory is a file); the SDK gets an error result, and the next prompt is answered."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "lw").write_text("not a directory")
    user = {"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": None, "session_id": ""}
    stdin = (json.dumps(user) + "\n") * 2
    with ScriptedServer([[text("hi there")]]) as srv:
        p = subprocess.run([*loopwright_cmd(), *HEAD, "--model", "claude-sonnet-4-6", *TAIL], input=stdin,
                           capture_output=True, text=True, cwd=tmp_path, timeout=60,
                           env=cli_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=srv.url,
                                       LOOPWRIGHT_HOME=str(tmp_path / "home" / "lw")))
    results = [json.loads(x) for x in p.stdout.splitlines() if json.loads(x)["type"] == "result"]
    assert len(results) == 2 and all(r["is_error"] and "transcript" in r["result"] for r in results), p.stderr
    assert p.returncode == 1 and "loopwright:" in p.stderr


@pytest.mark.e2e
def test_an_image_in_a_user_line_reaches_the_model(tmp_path: Path) -> None:
    """The SDK's user line with text and an image block: the model's first message holds both; a
    block that cannot be a prompt is named on stderr and left out, the run goes on."""
    png = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"}
    content = [{"type": "text", "text": "what is in it?"}, {"type": "image", "source": png},
               {"type": "tool_result", "tool_use_id": "x", "content": "no"}]
    stdin = json.dumps({"type": "user", "message": {"role": "user", "content": content},
                        "parent_tool_use_id": None, "session_id": ""}) + "\n"
    with ScriptedServer([[text("a cat")]]) as srv:
        p = subprocess.run([*loopwright_cmd(), *HEAD, "--model", "claude-sonnet-4-6", *TAIL], input=stdin,
                           capture_output=True, text=True, cwd=tmp_path, timeout=60,
                           env=cli_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=srv.url))
        sent = srv.loop_requests[0].body["messages"][0]["content"]
    assert p.returncode == 0, p.stderr
    assert any(b.get("type") == "image" and b["source"] == png for b in sent)
    assert sent[0]["text"] == "what is in it?" and "tool_result" in p.stderr
    result = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")][-1]
    assert result["type"] == "result" and result["subtype"] == "success"
