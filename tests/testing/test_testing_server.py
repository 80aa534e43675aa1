"""The loopback scripted API server itself: wire shapes (streaming and not, both APIs),
side requests that do not use turns, strict validation like the real API, the prompt
cache simulation, and the `loopwright serve-scripted` command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import Fault, PromptCache, ScriptedServer, load_script_file
from loopwright.testing.prompt_cache import anthropic_segments
from tests.helpers import loopwright_cmd, text, use

MODEL = "claude-sonnet-4-6"


def sdk(name: str) -> Any:
    """A provider SDK (a dev extra): only the tests that drive one need it, so collection does not."""
    return pytest.importorskip(name, reason=f"the {name} SDK is not installed (pip install -e '.[dev]')")


TOOL = {"name": "get", "description": "get", "input_schema": {"type": "object", "properties": {}}}


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def msgs(*contents: Any) -> list[dict[str, Any]]:
    roles = ["user", "assistant"]
    return [{"role": roles[i % 2], "content": c} for i, c in enumerate(contents)]


def test_non_streaming_messages_and_side_endpoints() -> None:
    with ScriptedServer([[text("hi"), use("t1", "get", {})]]) as srv:
        status, body = post(srv.url + "/v1/messages", {"model": MODEL, "max_tokens": 100, "tools": [TOOL],
                                                       "messages": msgs("hello")})
        assert status == 200
        assert body["type"] == "message" and body["role"] == "assistant" and body["model"] == MODEL
        assert body["content"] == [text("hi"), use("t1", "get", {})] and body["stop_reason"] == "tool_use"
        assert body["usage"]["input_tokens"] > 0 and body["usage"]["output_tokens"] > 0
        status, counted = post(srv.url + "/v1/messages/count_tokens", {"model": MODEL, "messages": msgs("hello")})
        assert status == 200 and counted["input_tokens"] > 0
        with urllib.request.urlopen(urllib.request.Request(srv.url + "/", method="HEAD"), timeout=5) as r:
            assert r.status == 200
        with urllib.request.urlopen(srv.url + "/v1/models", timeout=5) as r:
            assert json.loads(r.read())["data"][0]["id"] == MODEL
        status, err = post(srv.url + "/v1/nothing", {})
        assert status == 404 and err["error"]["type"] == "not_found_error"
        kinds = [r.kind for r in srv.requests]
    assert kinds == ["messages", "count_tokens", "health", "models", "other"]
    assert srv.turns_served == 1


def test_sync_sdk_clients_stream_from_the_server() -> None:
    anthropic, openai = sdk("anthropic"), sdk("openai")
    with ScriptedServer([[text("one two three " * 4)], [text("four"), use("z", "get", {"a": [1, 2]})]]) as srv:
        client: Any = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        with client.messages.stream(model=MODEL, max_tokens=50, messages=msgs("hi")) as s:
            final = s.get_final_message()
        assert final.content[0].text == "one two three " * 4 and final.stop_reason == "end_turn"
        oa: Any = openai.OpenAI(base_url=srv.openai_url, api_key="none", max_retries=0)
        out = oa.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                         tools=[{"type": "function", "function": {"name": "get", "parameters": {}}}])
        choice = out.choices[0]
        assert choice.finish_reason == "tool_calls" and choice.message.content == "four"
        assert choice.message.tool_calls[0].function.arguments == '{"a": [1, 2]}'
        assert out.usage is not None and out.usage.prompt_tokens > 0


def test_side_requests_do_not_use_turns() -> None:
    with ScriptedServer([[text("first")], [text("second")]]) as srv:
        probe = {"model": MODEL, "max_tokens": 1, "messages": msgs("quota")}
        assert post(srv.url + "/v1/messages", probe)[1]["content"] == [text("ok")]
        loop = {"model": MODEL, "max_tokens": 100, "tools": [TOOL], "messages": msgs("task")}
        assert post(srv.url + "/v1/messages", loop)[1]["content"] == [text("first")]
        title = {"model": MODEL, "max_tokens": 50, "messages": msgs("give this a title")}
        assert post(srv.url + "/v1/messages", title)[1]["content"] == [text("ok")]  # no tools, after tools
        loop2 = {**loop, "messages": msgs("task", [text("first")], "more")}
        assert post(srv.url + "/v1/messages", loop2)[1]["content"] == [text("second")]
        assert [r.loop_call for r in srv.requests] == [False, True, False, True]
        assert [r.turn for r in srv.requests] == [None, 1, None, 2]


def test_tool_less_conversations_are_scripted_before_any_tools() -> None:
    with ScriptedServer([[text("a")], [text("b")]]) as srv:
        assert post(srv.url + "/v1/messages", {"model": MODEL, "max_tokens": 9, "messages": msgs("x")})[1][
            "content"] == [text("a")]
        assert post(srv.url + "/v1/messages", {"model": MODEL, "max_tokens": 9,
                                               "messages": msgs("x", [text("a")], "y")})[1]["content"] == [text("b")]


def test_custom_loop_call_rule_and_turn_function() -> None:
    seen: list[int] = []

    def fn(h: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.append(len(h))
        return [text(f"you sent {len(h)} messages")]

    with ScriptedServer(fn, is_loop_call=lambda body: body.get("model") == "main") as srv:
        _, side = post(srv.url + "/v1/messages", {"model": "small", "max_tokens": 9, "messages": msgs("x")})
        _, main = post(srv.url + "/v1/messages", {"model": "main", "max_tokens": 9,
                                                  "messages": msgs("x", [text("y")], "z")})
    assert side["content"] == [text("ok")]
    assert main["content"] == [text("you sent 3 messages")] and seen == [3]


def test_strict_mode_rejects_what_the_real_api_rejects() -> None:
    with ScriptedServer([[text("never")]]) as srv:
        orphan = msgs("go", [use("t1", "get", {})], "no result here")
        status, err = post(srv.url + "/v1/messages", {"model": MODEL, "max_tokens": 9, "messages": orphan})
        assert status == 400 and err["error"]["type"] == "invalid_request_error"
        assert "`tool_use` ids were found without `tool_result` blocks immediately after" in err["error"]["message"]
        cc = {"type": "ephemeral"}
        many = msgs(*[[{"type": "text", "text": str(i), "cache_control": cc}] for i in range(5)])
        status, err = post(srv.url + "/v1/messages", {"model": MODEL, "max_tokens": 9, "messages": many})
        assert status == 400 and "A maximum of 4 blocks with cache_control" in err["error"]["message"]
        status, err = post(srv.url + "/v1/chat/completions", {"model": "m", "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get", "arguments": "{}"}}]},
            {"role": "user", "content": "skipped the tool message"}]})
        assert status == 400 and "error" in err
        assert srv.turns_served == 0


def test_system_role_messages_are_accepted() -> None:
    # newer API versions (and Claude Code) put role "system" messages in the list
    with ScriptedServer([[text("fine")]]) as srv:
        body = {"model": MODEL, "max_tokens": 9, "tools": [TOOL],
                "messages": [{"role": "user", "content": "hi"}, {"role": "system", "content": "env: linux"}]}
        status, reply = post(srv.url + "/v1/messages", body)
    assert status == 200 and reply["content"] == [text("fine")]


def test_faults_answer_in_each_api_error_shape() -> None:
    with ScriptedServer([[text("a")], [text("b")]]) as srv:
        srv.inject(Fault.overloaded(), Fault.rate_limited(retry_after=2))
        body = {"model": MODEL, "max_tokens": 9, "messages": msgs("x")}
        status, err = post(srv.url + "/v1/messages", body)
        assert status == 529 and err["type"] == "error"
        assert err["error"] == {"type": "overloaded_error", "message": "Overloaded"}
        status, err = post(srv.openai_url + "/chat/completions", {"model": "m", "messages": [
            {"role": "user", "content": "x"}]})
        assert status == 429 and err["error"]["type"] == "rate_limit_error"
        assert post(srv.url + "/v1/messages", body)[1]["content"] == [text("a")]  # faults used no turns
        assert [r.status for r in srv.requests] == [529, 429, 200]


def test_prompt_cache_simulation_reads_writes_and_minimum() -> None:
    now = [0.0]
    cache = PromptCache(min_tokens=100, clock=lambda: now[0])
    cc = {"type": "ephemeral"}
    big = "x" * 2000  # ~500 tokens
    tools = [{**TOOL, "description": big, "cache_control": cc}]
    first = {"tools": tools, "messages": msgs([{"type": "text", "text": "hello", "cache_control": cc}])}
    u1 = cache.usage(anthropic_segments(first))
    assert u1["cache_read_input_tokens"] == 0 and u1["cache_creation_input_tokens"] > 500
    assert u1["input_tokens"] == 0
    second = {"tools": tools, "messages": msgs([text("hello")], [text("hi")],
                                               [{"type": "text", "text": "again", "cache_control": cc}])}
    u2 = cache.usage(anthropic_segments(second))
    assert u2["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]  # found by the 20-block lookback
    assert u2["cache_creation_input_tokens"] > 0 and u2["input_tokens"] == 0
    now[0] = 301.0  # 5-minute entries expire
    u3 = cache.usage(anthropic_segments(second))
    assert u3["cache_read_input_tokens"] == 0
    small = PromptCache(min_tokens=10_000)
    u4 = small.usage(anthropic_segments(first))
    assert u4["cache_creation_input_tokens"] == 0 and u4["input_tokens"] > 0  # below the minimum: not cached
    one_hour = {"tools": [{**TOOL, "cache_control": {"type": "ephemeral", "ttl": "1h"}}], "messages": msgs("q")}
    u5 = PromptCache(min_tokens=0).usage(anthropic_segments(one_hour))
    assert u5["cache_creation"]["ephemeral_1h_input_tokens"] == u5["cache_creation_input_tokens"] > 0


def test_lookback_is_limited_to_twenty_blocks() -> None:
    cache = PromptCache(min_tokens=0)
    cc = {"type": "ephemeral"}
    base = [{"type": "text", "text": "a" * 400, "cache_control": cc}]
    written = cache.usage(anthropic_segments({"messages": msgs(base)}))["cache_creation_input_tokens"]
    assert written > 0
    far = [text("a" * 400)] + [text(f"b{i}") for i in range(25)]
    far[-1] = {**far[-1], "cache_control": cc}
    assert cache.usage(anthropic_segments({"messages": msgs(far)}))["cache_read_input_tokens"] == 0
    near = [text("a" * 400)] + [text(f"c{i}") for i in range(5)]
    near[-1] = {**near[-1], "cache_control": cc}
    assert cache.usage(anthropic_segments({"messages": msgs(near)}))["cache_read_input_tokens"] == written


def test_script_file_and_loopback_only(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"turns": [[text("x")]], "faults": [{"status": 529, "error_type": "overloaded_error"}]}))
    turns, faults = load_script_file(p)
    assert turns == [[text("x")]] and faults[0].status == 529
    with pytest.raises(ValueError):
        Fault.from_json({"stauts": 500})
    with pytest.raises(ValueError, match="loopback"):
        ScriptedServer([], host="0.0.0.0")


@pytest.mark.e2e
def test_serve_scripted_command_serves_a_client(tmp_path: Path) -> None:
    anthropic = sdk("anthropic")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [[text("served by the command")]],
                                  "faults": [{"status": 529, "error_type": "overloaded_error"}]}))
    proc = subprocess.Popen([*loopwright_cmd(), "serve-scripted", str(script), "--port", "0", "--loop-model", "sonnet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in first
        url = first.split("listening on ")[1].split()[0]
        client: Any = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        hi = [{"role": "user", "content": "hi"}]
        side = client.messages.create(model="claude-haiku-4-5", max_tokens=20, messages=hi)
        assert side.content[0].text == "ok"  # not the loop model: no turn used
        with pytest.raises(anthropic.APIStatusError) as err:  # the fault from the script file
            client.messages.create(model=MODEL, max_tokens=20, messages=hi)
        assert err.value.status_code == 529
        reply = client.messages.create(model=MODEL, max_tokens=20, messages=hi)
        assert reply.content[0].text == "served by the command"
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("POST /v1/messages -> 200 side")
        assert lines[1].startswith("POST /v1/messages -> 529") and "fault=529" in lines[1]
        assert lines[2].startswith("POST /v1/messages -> 200 turn 1")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _claude_bin() -> str | None:
    return os.environ.get("LOOPWRIGHT_CLAUDE_BIN") or shutil.which("claude")


@pytest.mark.e2e
@pytest.mark.skipif(_claude_bin() is None, reason="Claude Code not installed (set LOOPWRIGHT_CLAUDE_BIN)")
def test_claude_code_runs_a_tool_turn_against_the_server(tmp_path: Path) -> None:
    """The real Claude Code CLI, pointed at the server with ANTHROPIC_BASE_URL: a 529 and a
    stream dropped before any content are retried by Claude Code (older versions do not retry
    a drop after content), the retry gets the same turn, the Bash call runs."""
    script = [[text("Writing it."), use("toolu_01", "Bash", {"command": "echo hello > out.txt",
                                                              "description": "write out.txt"})],
              [text("Wrote out.txt.")]]
    home = tmp_path / "home"
    home.mkdir()
    with ScriptedServer(script) as srv:  # strict: Claude Code's requests must be valid
        srv.inject(Fault.overloaded(), Fault.drop(after=2))
        env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test",
               "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        out = subprocess.run([str(_claude_bin()), "-p", "write hello to out.txt", "--allowedTools", "Bash",
                              "--output-format", "json"], env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=180)
        loop = srv.loop_requests
    result = json.loads(out.stdout)
    assert result["subtype"] == "success" and result["result"] == "Wrote out.txt.", out.stdout[-2000:]
    assert (tmp_path / "out.txt").read_text() == "hello\n"
    assert [r.status for r in loop] == [529, 0, 200, 200] and [r.turn for r in loop] == [None, 1, 1, 2]


def test_strict_mode_refuses_an_image_the_messages_api_cannot_process() -> None:
    """Data not base64, no image (a PNG's head alone), a JPEG called image/png, 9000 px a side, in a
    prompt or in a tool result: the Messages API answers 400; so does the strict server's rule."""
    from loopwright.testing.api_rules import messages_problem
    from tests.sdkproto.test_sdk_prompt_images import PNG, encoded, image

    def problem(img: dict[str, object]) -> str | None:
        return messages_problem([{"role": "user", "content": [{"type": "text", "text": "x"}, img]}])

    assert problem(image(PNG, "image/png")) is None
    assert "not valid base64" in (problem(image("not base64!", "image/png")) or "")
    assert "Could not process image" in (problem(image("iVBORw0KGgo=", "image/png")) or "")
    assert "appears to be a image/jpeg" in (problem(image(encoded("JPEG", (4, 4)), "image/png")) or "")
    assert "8000 pixels" in (problem(image(encoded("PNG", (9000, 4)), "image/png")) or "")
    nested = [{"role": "user", "content": "x"},
              {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                            "content": [image("iVBORw0KGgo=", "image/png")]}]}]
    assert (messages_problem(nested) or "").startswith("messages.2.content.0.content.0.image")
