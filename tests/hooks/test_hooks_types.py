"""The hook types besides `command` (issue 42): `http` (the input POSTed as JSON to a loopback
server, its answer read as a command's stdout), `prompt` and `agent` (the run's model judges the
event: here the scripted model, whose turns the judging calls take, as on Claude Code)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.hooks.external import AGENT_SYSTEM, PROMPT_SYSTEM
from loopwright.tools.builtin import default_tools
from tests.helpers import bash as use
from tests.helpers import cut_short, still_alive, text
from tests.helpers import use as call


class Recorder:
    """A loopback server: records each POST (path, headers, JSON body) and answers (status, body)."""

    def __init__(self, answer: tuple[int, Any]) -> None:
        self.answer = answer
        self.posts: list[tuple[str, dict[str, str], Any]] = []
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                rec.posts.append((self.path, dict(self.headers), json.loads(body)))
                status, out = rec.answer
                data = (out if isinstance(out, str) else json.dumps(out)).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder((200, {}))
    t = threading.Thread(target=rec.server.serve_forever, daemon=True)
    t.start()
    yield rec
    rec.server.shutdown()
    rec.server.server_close()


def opts(tmp: Path, model: Any, hooks: dict[str, Any], **kw: Any) -> lw.AgentOptions:
    proj = tmp / "proj"
    proj.mkdir(exist_ok=True)
    return lw.AgentOptions(model=model, tools=default_tools(), cwd=proj, settings={"hooks": hooks},
                           setting_sources=[], **kw)


def recording(turns: list[Any]) -> tuple[lw.ScriptedModel, list[list[Any]]]:
    seen: list[list[Any]] = []

    def next_turn(h: list[Any]) -> Any:
        seen.append(json.loads(json.dumps(h)))
        return turns[len(seen) - 1]

    return lw.ScriptedModel(next_turn), seen


def tool_result(r: lw.ResultMessage, index: int = 2) -> str:
    c = r.messages[index]["content"][0]["content"]
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c)


def test_http_hook_posts_the_input_and_its_answer_decides(tmp_path: Path, recorder: Recorder,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "s3cret")
    monkeypatch.setenv("NOT_ALLOWED", "leak")
    recorder.answer = (200, {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                    "permissionDecisionReason": "the server says no"}})
    http = {"type": "http", "url": recorder.url + "/pre", "allowedEnvVars": ["HOOK_TOKEN"],
            "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "${NOT_ALLOWED}"}}
    r = lw.run("go", opts(tmp_path, lw.ScriptedModel([[use("touch made")], [text("ok")]]),
                          {"PreToolUse": [{"matcher": "Bash", "hooks": [http]}]}, permission_mode="acceptEdits"))
    assert "the server says no" in tool_result(r) and not (tmp_path / "proj" / "made").exists()
    [(path, headers, body)] = recorder.posts
    assert path == "/pre" and body["hook_event_name"] == "PreToolUse" and body["tool_input"] == {"command": "touch made"}
    assert headers["Authorization"] == "Bearer s3cret" and headers["X-Other"] == ""


def test_http_hook_error_status_is_a_non_blocking_error(tmp_path: Path, recorder: Recorder) -> None:
    recorder.answer = (500, "boom")
    http = {"type": "http", "url": recorder.url}
    msgs = []

    async def go() -> None:
        async for m in lw.query("go", opts(tmp_path, lw.ScriptedModel([[use("echo hi")], [text("ok")]]),
                                           {"PostToolUse": [{"hooks": [http]}]})):
            msgs.append(m)

    import asyncio
    asyncio.run(go())
    errors = [m.data["message"] for m in msgs if isinstance(m, lw.SystemMessage) and m.subtype == "hook_error"]
    assert any("500" in e for e in errors) and msgs[-1].subtype == "success"


def test_prompt_hook_judges_with_the_run_model_and_blocks(tmp_path: Path) -> None:
    model, seen = recording([[use("touch made")], [text('{"ok": false, "reason": "no touching"}')], [text("ok")]])
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "Refuse any touch: $ARGUMENTS"}]}]}
    r = lw.run("go", opts(tmp_path, model, hooks, permission_mode="acceptEdits"))
    assert not (tmp_path / "proj" / "made").exists()
    judged = seen[1][0]["content"][0]["text"]
    assert judged.startswith("Refuse any touch: {") and '"tool_input":{"command":"touch made"}' in judged
    # Claude Code ends the turn (continueOnBlock false): no model call after the refusal
    assert len(seen) == 2 and r.errors == ["no touching"] and tool_result(r) == "no touching"


def test_prompt_hook_ok_lets_it_run_and_continue_on_block_goes_on(tmp_path: Path) -> None:
    model, seen = recording([[use("touch made")], [text('{"ok": true, "reason": "fine"}')], [text("done")]])
    hook = {"type": "prompt", "prompt": "Check $ARGUMENTS"}
    r = lw.run("go", opts(tmp_path, model, {"PreToolUse": [{"hooks": [hook]}]}, permission_mode="acceptEdits"))
    assert (tmp_path / "proj" / "made").exists() and r.result == "done"
    model, seen = recording([[use("touch other")], [text('{"ok": false, "reason": "not that"}')], [text("fine")]])
    hook = {"type": "prompt", "prompt": "Check $ARGUMENTS", "continueOnBlock": True}
    r = lw.run("go", opts(tmp_path, model, {"PreToolUse": [{"hooks": [hook]}]}, permission_mode="acceptEdits"))
    assert not (tmp_path / "proj" / "other").exists() and "not that" in tool_result(r) and r.result == "fine"


def test_agent_hook_answers_through_structured_output(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "POLICY").write_text("no touching on Fridays\n")
    verdict = call("v1", "StructuredOutput", ok=False, reason="POLICY forbids it")
    model, seen = recording([[use("touch made")],
                             [call("r1", "Read", file_path=str(tmp_path / "proj" / "POLICY"))],  # the agent looks
                             [verdict], [text("verdict given")], [text("ok")]])
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "agent", "prompt": "Check POLICY: $ARGUMENTS"}]}]}
    r = lw.run("go", opts(tmp_path, model, hooks, permission_mode="acceptEdits"))
    assert not (tmp_path / "proj" / "made").exists()
    assert "no touching on Fridays" in json.dumps(seen[2])  # the agent read the file
    assert r.errors == ["POLICY forbids it"] and tool_result(r) == "POLICY forbids it"


def test_the_judges_instructions_are_claude_codes() -> None:
    assert PROMPT_SYSTEM.startswith("You are evaluating a hook in Claude Code.")
    assert "{event}" in AGENT_SYSTEM and "StructuredOutput" in AGENT_SYSTEM


def test_async_command_hook_decides_nothing_and_is_killed_after_its_timeout(tmp_path: Path) -> None:
    """`async: true` on PreToolUse: its exit 2 does not refuse the call (it ran in the background);
    an async hook past its `timeout` has its processes killed (its pid file's process is gone)."""
    pid = tmp_path / "pid"
    deny = {"type": "command", "command": "echo no >&2; exit 2", "async": True}

    def run(timeout: float) -> lw.ResultMessage:  # the run goes on past the hook's timeout
        slow = {"type": "command", "command": f"echo $$ > {pid}; exec sleep 30", "async": True, "timeout": timeout}
        turns = [[use("touch made")], [use(f"sleep {3 * timeout}", "t2")], [text("ok")]]
        return lw.run("go", opts(tmp_path, lw.ScriptedModel(turns),
                                 {"PreToolUse": [{"matcher": "Bash", "hooks": [deny, slow]}]}, permission_mode="acceptEdits"))

    r = cut_short(run, lambda: pid.exists() and bool(pid.read_text().strip()))
    assert (tmp_path / "proj" / "made").exists() and r.result == "ok"
    assert not still_alive([int(pid.read_text())])  # (killed: dying, not waited for)


def test_async_and_async_rewake_must_be_booleans(tmp_path: Path) -> None:
    hook = {"type": "command", "command": "true", "async": "yes"}
    with pytest.raises(ValueError, match="\"async\" must be true or false"):
        lw.run("go", opts(tmp_path, lw.ScriptedModel([[text("ok")]]), {"Stop": [{"hooks": [hook]}]}))
