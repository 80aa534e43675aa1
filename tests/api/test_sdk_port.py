"""The Claude Agent SDK's own examples, ported to loopwright by renaming (issue 24 §3).

Each test is one of the SDK's examples (quick_start, streaming_mode, mcp_calculator,
tool_permission_callback, system_prompt, tools_option, stderr callback, error handling) with
`claude_agent_sdk` → `loopwright`, `ClaudeSDKClient` → `LoopwrightClient`, `ClaudeAgentOptions`
→ `AgentOptions` and a scripted model in place of Claude; the assertions are what the example
prints or relies on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright import (
    AgentOptions,
    AssistantMessage,
    CLIConnectionError,
    LoopwrightClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ScriptedModel,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolUseBlock,
    create_sdk_mcp_server,
    query,
    tool,
)
from loopwright.testing import ScriptedServer
from tests.helpers import text, use


def sync(f: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """An async test run on its own event loop (the suite has no asyncio plugin)."""
    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(f(*args, **kwargs), 30))
    return run


class Recording(ScriptedModel):
    """A scripted model that keeps every request it gets."""

    def __init__(self, turns: list[Any]) -> None:
        super().__init__(turns)
        self.requests: list[lw.ModelRequest] = []

    def stream(self, request: lw.ModelRequest) -> Any:
        self.requests.append(dataclasses.replace(request, messages=list(request.messages)))  # h grows on
        return super().stream(request)


def answers(*words: str) -> Recording:
    return Recording([[text(w)] for w in words])


def texts(messages: list[Any]) -> list[str]:
    return [b.text for m in messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, TextBlock)]


def results(messages: list[Any]) -> list[Any]:
    return [m for m in messages if isinstance(m, ResultMessage)]


# --- quick_start.py --------------------------------------------------------------------------

@sync
async def test_quick_start_query_with_keywords() -> None:
    got = [m async for m in query(prompt="What is 2 + 2?", options=AgentOptions(model=answers("4")))]
    assert texts(got) == ["4"] and results(got)[0].subtype == "success"


# --- mcp_calculator.py ------------------------------------------------------------------------

@tool("add", "Add two numbers", {"a": float, "b": float})
async def add_numbers(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{args['a']} + {args['b']} = {args['a'] + args['b']}"}]}


@tool("divide", "Divide one number by another", {"a": float, "b": float})
async def divide_numbers(args: dict[str, Any]) -> dict[str, Any]:
    if args["b"] == 0:
        return {"content": [{"type": "text", "text": "Error: Division by zero is not allowed"}], "is_error": True}
    return {"content": [{"type": "text", "text": f"{args['a']} / {args['b']} = {args['a'] / args['b']}"}]}


def test_the_sdks_tool_form_makes_a_tool_with_its_schema() -> None:
    assert isinstance(add_numbers, lw.Tool) and add_numbers.name == "add"
    assert add_numbers.input_schema["type"] == "object"
    assert add_numbers.input_schema["properties"] == {"a": {"type": "number"}, "b": {"type": "number"}}
    assert sorted(add_numbers.input_schema["required"]) == ["a", "b"]
    full = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert tool("search", "Search", full)(lambda args: "x").input_schema is full  # a JSON Schema as it is
    ro = tool("peek", "Peek", {}, {"readOnlyHint": True})(lambda args: "x")
    assert ro.read_only and not tool("poke", "Poke", {})(lambda args: "x").read_only
    with pytest.raises(TypeError, match="input_schema"):
        tool("bad", "Bad", 42)


@sync
async def test_mcp_calculator_tools_run_in_process_and_keep_is_error() -> None:
    calculator = create_sdk_mcp_server(name="calculator", version="2.0.0", tools=[add_numbers, divide_numbers])
    model = ScriptedModel([
        [use("t1", "mcp__calc__add", a=2, b=3.5), use("t2", "mcp__calc__divide", a=1, b=0)],
        [text("done")],
    ])
    options = AgentOptions(model=model, mcp_servers={"calc": calculator},
                           allowed_tools=["mcp__calc__add", "mcp__calc__divide"])
    got = [m async for m in query(prompt="Calculate", options=options)]
    r = results(got)[0]
    assert r.subtype == "success"
    add_result, div_result = r.messages[2]["content"]
    assert add_result["content"] == [{"type": "text", "text": "2 + 3.5 = 5.5"}] and not add_result.get("is_error")
    assert div_result["is_error"] is True
    assert div_result["content"] == [{"type": "text", "text": "Error: Division by zero is not allowed"}]


@sync
async def test_a_tool_returning_mcp_image_content_gives_an_image_block() -> None:
    @tool("shot", "A screenshot", {})
    async def shot(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}

    out = await shot.call({}, lw.ToolContext(Path(".")))
    assert not out.is_error and isinstance(out.content, list)
    assert out.content[0].to_wire() == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                      "data": "iVBORw0KGgo="}}


# --- tool_permission_callback.py --------------------------------------------------------------

@sync
async def test_tool_permission_callback_with_the_sdks_result_names(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []

    async def my_permission_callback(tool_name: str, input_data: dict[str, Any],
                                     context: ToolPermissionContext) -> PermissionResultAllow | PermissionResultDeny:
        seen.append((tool_name, context.permission_mode))
        if tool_name == "Write" and "system" in input_data.get("file_path", ""):
            return PermissionResultDeny(message="Cannot write to system directories")
        if tool_name == "Write":  # redirect writes into a safe folder
            return PermissionResultAllow(updated_input={**input_data,
                                                        "file_path": str(tmp_path / "safe" / "out.txt")})
        return PermissionResultAllow()

    (tmp_path / "safe").mkdir()
    model = ScriptedModel([
        [use("t1", "Write", file_path=str(tmp_path / "system" / "x.txt"), content="no")],
        [use("t2", "Write", file_path=str(tmp_path / "out.txt"), content="hello")],
        [text("done")],
    ])
    options = AgentOptions(model=model, tools=["Write"], can_use_tool=my_permission_callback, cwd=tmp_path,
                           permission_mode="default")
    r = results([m async for m in query(prompt="write", options=options)])[0]
    assert PermissionResultAllow().behavior == "allow" and PermissionResultDeny().behavior == "deny"
    # the callback's own redirect of a write it approved (asked about for the same plain reason) runs
    # on that answer, as with Claude Code; a redirect for a new reason is asked again (test_permissions)
    assert seen == [("Write", "default"), ("Write", "default")]
    assert r.messages[2]["content"][0]["is_error"] is True
    assert "Cannot write to system directories" in json.dumps(r.messages[2]["content"][0])
    assert (tmp_path / "safe" / "out.txt").read_text() == "hello" and not (tmp_path / "out.txt").exists()


# --- hooks.py --------------------------------------------------------------------------------

@sync
async def test_hooks_example_deny_and_stop_with_continue_(tmp_path: Path) -> None:
    async def check_bash_command(input_data: dict[str, Any], tool_use_id: str | None,
                                 context: lw.HookContext) -> lw.HookJSONOutput:
        if "foo.sh" in input_data["tool_input"].get("command", ""):
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "Command contains invalid pattern: foo.sh"}}
        return {}

    async def stop_on_error(input_data: dict[str, Any], tool_use_id: str | None,
                            context: lw.HookContext) -> lw.HookJSONOutput:
        if "critical" in json.dumps(input_data.get("tool_response", "")):
            return {"continue_": False, "stopReason": "Critical error detected - halting"}
        return {"continue_": True}

    model = ScriptedModel([
        [use("t1", "Bash", command="./foo.sh --help")],
        [use("t2", "Bash", command="echo critical")],
        [text("never reached")],
    ])
    options = AgentOptions(model=model, tools=["Bash"], allowed_tools=["Bash"], cwd=tmp_path, hooks={
        "PreToolUse": [lw.HookMatcher(matcher="Bash", hooks=[check_bash_command])],
        "PostToolUse": [lw.HookMatcher(matcher="Bash", hooks=[stop_on_error])]})
    r = results([m async for m in query(prompt="run them", options=options)])[0]
    assert "invalid pattern: foo.sh" in json.dumps(r.messages[2]["content"][0])
    assert r.messages[2]["content"][0]["is_error"] is True
    assert r.subtype == "error_during_execution" and r.result == "Critical error detected - halting"
    assert model.calls == 2  # `continue_: False` ended the run before a third call


# --- system_prompt.py -------------------------------------------------------------------------

@pytest.mark.parametrize(("system_prompt", "expect"), [
    (None, None),
    ("You are a pirate assistant. Respond in pirate speak.", "You are a pirate assistant"),
    ({"type": "preset", "preset": "claude_code"}, "You are loopwright, a coding agent"),
    ({"type": "preset", "preset": "claude_code", "append": "Always end with a joke."}, "Always end with a joke."),
])
@sync
async def test_system_prompt_forms(system_prompt: Any, expect: str | None) -> None:
    model = answers("ok")
    [m async for m in query(prompt="hi", options=AgentOptions(model=model, system_prompt=system_prompt))]
    sent = model.requests[0].system
    if expect is None:
        assert not sent
    else:
        assert sent and expect in sent
    if isinstance(system_prompt, dict) and "append" in system_prompt:
        assert sent and sent.startswith("You are loopwright")  # the preset first, then the addition


def test_a_bad_system_prompt_preset_is_refused_naming_the_fix() -> None:
    with pytest.raises(ValueError, match="claude_code"):
        AgentOptions(system_prompt={"type": "preset", "preset": "nope"})
    with pytest.raises(TypeError, match="preset"):
        AgentOptions(system_prompt={"append": "x"})  # type: ignore[arg-type]


# --- tools_option.py --------------------------------------------------------------------------

def test_tools_by_name_and_by_preset() -> None:
    assert [t.name for t in AgentOptions(tools=["Read", "Glob", "Grep"]).tools] == ["Read", "Glob", "Grep"]
    assert AgentOptions(tools=[]).tools == []
    preset = [t.name for t in AgentOptions(tools={"type": "preset", "preset": "claude_code"}).tools]  # type: ignore[arg-type]
    assert {"Read", "Write", "Edit", "Bash", "Glob", "Grep"} <= set(preset)
    mixed = AgentOptions(tools=["Read", add_numbers])  # type: ignore[list-item]
    assert [t.name for t in mixed.tools] == ["Read", "add"]
    with pytest.raises(ValueError, match="not a built-in tool"):
        AgentOptions(tools=["Teleport"])  # type: ignore[list-item]


@sync
async def test_only_the_named_tools_are_offered() -> None:
    model = answers("ok")
    [m async for m in query(prompt="hi", options=AgentOptions(model=model, tools=["Read", "Glob"]))]  # type: ignore[list-item]
    assert [t["name"] for t in model.requests[0].tools] == ["Read", "Glob"]


# --- env and stderr ---------------------------------------------------------------------------

@sync
async def test_env_reaches_the_provider_and_the_tools(tmp_path: Path) -> None:
    """The SDK's `env` goes to its CLI: the provider variables and the tools' processes."""
    turns = [[use("t1", "Bash", command="echo flavour=$FLAVOUR")], [text("done")]]
    with ScriptedServer(turns) as srv:
        options = AgentOptions(tools=["Bash"], allowed_tools=["Bash"], cwd=tmp_path,
                               env={"ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "sk-env",
                                    "ANTHROPIC_MODEL": "claude-sonnet-4-5", "FLAVOUR": "mint"})
        r = results([m async for m in query(prompt="go", options=options)])[0]
        assert r.subtype == "success" and len(srv.requests) == 2
        assert srv.requests[0].headers.get("x-api-key") == "sk-env"
        assert srv.requests[0].body["model"] == "claude-sonnet-4-5"
    assert "flavour=mint" in json.dumps(r.messages[2])


@sync
async def test_stderr_gets_the_runs_diagnostic_lines(tmp_path: Path) -> None:
    lines: list[str] = []

    def crash(data: dict[str, Any]) -> None:
        raise RuntimeError("the hook broke")

    hooks = {"UserPromptSubmit": [lw.HookMatcher(None, [crash])]}
    options = AgentOptions(model=answers("ok"), hooks=hooks, stderr=lines.append, cwd=tmp_path)
    r = results([m async for m in query(prompt="hi", options=options)])[0]
    assert r.subtype == "success"
    assert any("UserPromptSubmit" in ln and "the hook broke" in ln for ln in lines), lines
    with pytest.raises(TypeError, match="stderr"):
        AgentOptions(stderr="file.log")  # type: ignore[arg-type]


# --- streaming_mode.py ------------------------------------------------------------------------

@sync
async def test_streaming_basic_and_multi_turn() -> None:
    async with LoopwrightClient(AgentOptions(model=answers("Paris", "About 2 million"))) as client:
        await client.query("What's the capital of France?")
        first = [m async for m in client.receive_response()]
        await client.query("What's the population of that city?")
        second = [m async for m in client.receive_response()]
    assert texts(first) == ["Paris"] and texts(second) == ["About 2 million"]
    assert isinstance(first[-1], ResultMessage) and isinstance(second[-1], ResultMessage)
    assert len(second[-1].messages) == 4  # the second query continued the first conversation


@sync
async def test_streaming_concurrent_receive_messages_spans_queries() -> None:
    got: list[Any] = []
    async with LoopwrightClient(AgentOptions(model=answers("4", "12", "8"))) as client:
        async def receive_messages() -> None:
            async for message in client.receive_messages():
                got.append(message)

        receive_task = asyncio.create_task(receive_messages())
        for question in ["What is 2 + 2?", "What is the square root of 144?", "What is 10% of 80?"]:
            await client.query(question)
            while len(results(got)) < len(client.results) or client.running:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        receive_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await receive_task
    assert texts(got) == ["4", "12", "8"] and len(results(got)) == 3  # did not stop at the first result


@sync
async def test_receive_messages_ends_at_disconnect() -> None:
    client = LoopwrightClient(AgentOptions(model=answers("a")))
    await client.connect()
    await client.query("x")
    reader = asyncio.create_task(_all(client.receive_messages()))
    while client.running:
        await asyncio.sleep(0.01)
    await client.disconnect()
    got = await asyncio.wait_for(reader, 30)
    assert texts(got) == ["a"]


async def _all(it: Any) -> list[Any]:
    return [m async for m in it]


@sync
async def test_streaming_interrupt_then_a_new_query() -> None:
    model = ScriptedModel([{"content": [text("1, 2, 3, ...")], "delay": 30}, [text("a joke")]])
    async with LoopwrightClient(AgentOptions(model=model)) as client:
        await client.query("Count from 1 to 100 slowly")
        received: list[Any] = []

        async def consume_messages() -> None:
            async for message in client.receive_response():
                received.append(message)

        consume_task = asyncio.create_task(consume_messages())
        await asyncio.sleep(0.2)
        await client.interrupt()
        await asyncio.wait_for(consume_task, 30)
        await client.query("Never mind, just tell me a quick joke")
        joke = [m async for m in client.receive_response()]
    assert results(received)[0].subtype == "error_during_execution"
    assert texts(joke) == ["a joke"]


@sync
async def test_interrupt_right_after_the_init_message_gives_a_result() -> None:
    # Interrupted before the model was called, or during its call: either way "next" comes next.
    model = ScriptedModel([{"content": [text("next")], "delay": 0.5}, [text("next")]])
    async with LoopwrightClient(AgentOptions(model=model)) as client:
        await client.query("go")
        got: list[Any] = []

        async def read() -> None:
            async for msg in client.receive_response():
                got.append(msg)
                if isinstance(msg, SystemMessage) and msg.subtype == "init":
                    await client.interrupt()

        await asyncio.wait_for(read(), 30)
        await client.query("again")
        after = [m async for m in client.receive_response()]
    assert results(got) and results(got)[0].subtype == "error_during_execution"
    assert texts(after) == ["next"]


@sync
async def test_leaving_async_with_after_a_break_does_not_hang() -> None:
    model = ScriptedModel([{"content": [text("slow")], "delay": 30}])

    async def example() -> None:
        async with LoopwrightClient(AgentOptions(model=model)) as client:
            await client.query("List 5 programming languages")
            async for message in client.receive_messages():
                if isinstance(message, SystemMessage):
                    break

    await asyncio.wait_for(example(), 30)


@sync
async def test_async_iterable_prompt_one_run_per_message() -> None:
    async def create_message_stream() -> Any:
        for q in ["Hello! I have multiple questions.", "First, what's the capital of Japan?",
                  "Second, what's 15% of 200?"]:
            yield {"type": "user", "message": {"role": "user", "content": q}, "parent_tool_use_id": None,
                   "session_id": "qa-session"}

    model = answers("Hi", "Tokyo", "30")
    async with LoopwrightClient(AgentOptions(model=model)) as client:
        await client.query(create_message_stream())
        replies = [texts([m async for m in client.receive_response()]) for _ in range(3)]
    assert replies == [["Hi"], ["Tokyo"], ["30"]]
    assert len(model.requests[2].messages) == 5  # one conversation: each message continued the last


@sync
async def test_a_streamed_image_reaches_the_model_and_a_bad_block_is_the_readers_error() -> None:
    png = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"}

    async def stream() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "what is in this screenshot?"}, {"type": "image", "source": png}]}}

    model = answers("a cat")
    async with LoopwrightClient(AgentOptions(model=model)) as client:
        await client.query(stream())
        assert texts([m async for m in client.receive_response()]) == ["a cat"]
    content = model.requests[0].messages[0]["content"]
    assert {"type": "image", "source": png} in content and content[0]["text"] == "what is in this screenshot?"

    async def bad() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}}

    async with LoopwrightClient(AgentOptions(model=answers("x"))) as client:
        await client.query(bad())
        with pytest.raises(TypeError, match="text, image or document"):
            [m async for m in client.receive_response()]


@sync
async def test_a_prompt_of_content_blocks_runs_and_a_bad_one_is_refused() -> None:
    png = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"}
    model = answers("a cat")
    got = [m async for m in query([{"type": "text", "text": "what is it?"}, {"type": "image", "source": png}],
                                  AgentOptions(model=model))]
    assert texts(got) == ["a cat"] and results(got)[0].subtype == "success"
    assert model.requests[0].messages[0]["content"][1] == {"type": "image", "source": png}
    with pytest.raises(TypeError, match="source"):
        [m async for m in query([{"type": "image", "source": {}}], AgentOptions(model=answers("x")))]


@sync
async def test_control_protocol_server_info_model_and_mode(tmp_path: Path) -> None:
    cmds = tmp_path / ".loopwright" / "commands"
    cmds.mkdir(parents=True)
    (cmds / "review.md").write_text("---\ndescription: Review the diff\n---\nReview $ARGUMENTS\n")
    first, second = answers("from the first"), answers("from the second")
    async with LoopwrightClient(AgentOptions(model=first, cwd=tmp_path, setting_sources=["project"])) as client:
        info = await client.get_server_info()
        assert {"name": "review", "description": "Review the diff (project)", "argumentHint": ""} in info["commands"]
        assert info["output_style"] == "default" and "general-purpose" in info["agents"]
        await client.set_model(second)
        await client.set_permission_mode("acceptEdits")
        await client.query("hi")
        got = [m async for m in client.receive_response()]
        with pytest.raises(ValueError, match="permission_mode"):
            await client.set_permission_mode("yolo")  # type: ignore[arg-type]
    assert texts(got) == ["from the second"] and first.calls == 0
    init = next(m for m in got if isinstance(m, SystemMessage))
    assert init.data["permission_mode"] == "acceptEdits"


@sync
async def test_error_handling_cli_connection_error() -> None:
    client = LoopwrightClient(AgentOptions(model="scripted:/nonexistent/turns.json"))
    try:
        with pytest.raises(CLIConnectionError):
            await client.connect()
    finally:
        await client.disconnect()
    assert issubclass(CLIConnectionError, lw.LoopwrightError) and issubclass(lw.ProcessError, lw.LoopwrightError)


@sync
async def test_bash_command_example_sees_tool_use_and_results(tmp_path: Path) -> None:
    model = ScriptedModel([[use("t1", "Bash", command="echo 'Hello from bash!'")], [text("It said hello")]])
    options = AgentOptions(model=model, tools={"type": "preset", "preset": "claude_code"},  # type: ignore[arg-type]
                           allowed_tools=["Bash"], cwd=tmp_path)
    async with LoopwrightClient(options) as client:
        await client.query("Run a bash echo command that says 'Hello from bash!'")
        kinds: list[str] = []
        async for msg in client.receive_messages():
            kinds.append(type(msg).__name__)
            if isinstance(msg, AssistantMessage):
                assert all(not isinstance(b, ToolUseBlock) or b.name == "Bash" for b in msg.content)
            if isinstance(msg, ResultMessage):
                break
    assert {"SystemMessage", "AssistantMessage", "UserMessage", "ResultMessage"} <= set(kinds)
