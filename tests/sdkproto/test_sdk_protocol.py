"""The official Claude Agent SDK (PyPI `claude-agent-sdk`) with loopwright as its CLI (sdkproto/):
the SDK's own examples on scripted turns at the loopback server, outcomes asserted on the SDK's
side. Where Claude Code is installed (tests/node), the same scenarios run against it as the
reference (`cli` = "claude"); the SDK wheel bundles its own Claude Code, so cli_path is always
given."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import LOOPWRIGHT_BIN, TESTS, bash, text, use

sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

pytestmark = pytest.mark.e2e
CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
MODEL = "claude-sonnet-4-6"
CLIS = ["loopwright", pytest.param("claude", marks=pytest.mark.skipif(not CLAUDE.exists(),
                                                                     reason="Claude Code not installed (tests/node)"))]


def cli_path(cli: str) -> str:
    if cli == "loopwright":
        return str(LOOPWRIGHT_BIN if LOOPWRIGHT_BIN.exists() else Path(sys.executable).parent / "loopwright")
    return str(CLAUDE)


def options(cli: str, srv: ScriptedServer, cwd: Path, **kw: Any) -> ClaudeAgentOptions:
    env = {"ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test", "LOOPWRIGHT_MODEL": MODEL,
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", **kw.pop("env", {})}
    kw.setdefault("model", MODEL)
    return ClaudeAgentOptions(cli_path=cli_path(cli), cwd=str(cwd), env=env, **kw)


async def collect(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=opts)]


def result_of(msgs: list[Any]) -> ResultMessage:
    return next(m for m in reversed(msgs) if isinstance(m, ResultMessage))


def texts(msgs: list[Any]) -> str:
    return " ".join(b.text for m in msgs if isinstance(m, AssistantMessage) for b in m.content if hasattr(b, "text"))


def system_text(body: dict[str, Any]) -> str:
    s = body.get("system") or ""
    return s if isinstance(s, str) else " ".join(b.get("text", "") for b in s)


def last_results(srv: ScriptedServer, i: int) -> list[dict[str, Any]]:
    """The tool_result blocks of loop request i's last message."""
    content = srv.loop_requests[i].body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    c = block.get("content")
    return c if isinstance(c, str) else " ".join(x.get("text", "") for x in c or [])


async def prompts(*items: str) -> Any:
    for p in items:
        yield {"type": "user", "message": {"role": "user", "content": p}, "parent_tool_use_id": None, "session_id": ""}


# --- quick_start.py ---------------------------------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_quick_start_basic(cli: str, tmp_path: Path) -> None:
    with ScriptedServer([[text("2 + 2 = 4")]]) as srv:
        msgs = asyncio.run(collect("What is 2 + 2?", options(cli, srv, tmp_path)))
    r = result_of(msgs)
    assert r.subtype == "success" and not r.is_error and r.session_id and r.result == "2 + 2 = 4"
    assert "4" in texts(msgs)
    init = next(m for m in msgs if isinstance(m, SystemMessage))
    assert init.subtype == "init" and init.data["model"] == MODEL and init.data["cwd"] == str(tmp_path)
    assert init.data["apiKeySource"] == "ANTHROPIC_API_KEY"  # (options(): the key is in the environment)
    assert r.model_usage is not None and r.model_usage[MODEL]["contextWindow"] > 0 < r.model_usage[MODEL]["maxOutputTokens"]
    assert "What is 2 + 2?" in json.dumps(srv.loop_requests[-1].body["messages"][-1])


@pytest.mark.parametrize("cli", CLIS)
def test_the_reminder_after_an_empty_answer_reaches_the_sdk_as_a_user_message(cli: str, tmp_path: Path) -> None:
    """An empty answer is asked about again; the SDK sees that reminder as a user message (with its
    bare text) between the prompt and the answer that follows it."""
    from claude_agent_sdk import UserMessage

    with ScriptedServer([{"content": []}, [text("here it is")]]) as srv:
        msgs = asyncio.run(collect("go", options(cli, srv, tmp_path)))
    reminder = "[Your previous response had no visible output. Please continue and produce a user-visible response.]"
    users = [m for m in msgs if isinstance(m, UserMessage)]
    assert [[b.text for b in u.content] for u in users] == [[reminder]]
    shown = [m for m in msgs if isinstance(m, (UserMessage, AssistantMessage))]
    assert shown[0] is users[0] and result_of(msgs).result == "here it is"


@pytest.mark.parametrize("cli", CLIS)
def test_quick_start_with_tools_writes_the_file(cli: str, tmp_path: Path) -> None:
    target = tmp_path / "hello.txt"
    turns = [[use("w1", "Write", file_path=str(target), content="Hello, World!")], [text("Created hello.txt")]]
    with ScriptedServer(turns) as srv:
        opts = options(cli, srv, tmp_path, allowed_tools=["Read", "Write"], permission_mode="acceptEdits",
                       system_prompt="You are a helpful file assistant.")
        msgs = asyncio.run(collect("Create hello.txt", opts))
    r = result_of(msgs)
    assert r.subtype == "success" and r.result == "Created hello.txt"
    assert target.read_text() == "Hello, World!"
    assert "You are a helpful file assistant." in system_text(srv.loop_requests[0].body)
    if cli == "loopwright":
        assert r.num_turns == 1  # tool-use turns (seed Def 3.1); Claude Code counts differently
    tool_lines = [b for m in msgs if hasattr(m, "content") and isinstance(m.content, list) for b in m.content
                  if type(b).__name__ == "ToolResultBlock"]
    assert tool_lines and not tool_lines[0].is_error  # the user line with the tool result reached the SDK


# --- streaming_mode.py ------------------------------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_client_multi_turn_keeps_the_conversation(cli: str, tmp_path: Path) -> None:
    async def go(srv: ScriptedServer) -> tuple[list[Any], list[Any], dict[str, Any] | None]:
        async with ClaudeSDKClient(options(cli, srv, tmp_path)) as client:
            info = await client.get_server_info()
            await client.query("Remember the number 7.")
            first = [m async for m in client.receive_response()]
            await client.query("Which number?")
            second = [m async for m in client.receive_response()]
        return first, second, info

    with ScriptedServer([[text("Noted.")], [text("7")]]) as srv:
        first, second, info = asyncio.run(go(srv))
    assert result_of(first).result == "Noted." and result_of(second).result == "7"
    assert result_of(first).session_id == result_of(second).session_id
    assert "Remember the number 7." in json.dumps(srv.loop_requests[-1].body["messages"])
    assert info is not None and "commands" in info


@pytest.mark.parametrize("cli", CLIS)
def test_client_interrupt_then_next_query(cli: str, tmp_path: Path) -> None:
    async def go(srv: ScriptedServer) -> tuple[list[Any], list[Any]]:
        async with ClaudeSDKClient(options(cli, srv, tmp_path, allowed_tools=["Bash"],
                                           permission_mode="acceptEdits")) as client:
            await client.query("Run the slow command.")
            first: list[Any] = []
            async for m in client.receive_response():
                first.append(m)
                if isinstance(m, AssistantMessage) and any(type(b).__name__ == "ToolUseBlock" for b in m.content):
                    await asyncio.sleep(0.5)
                    await client.interrupt()
            await client.query("Never mind.")
            second = [m async for m in client.receive_response()]
        return first, second

    slow = 'python3 -c "import time; time.sleep(30)"'  # (Claude Code refuses a bare `sleep 30`)
    with ScriptedServer([[bash(slow)], [text("Fine.")]]) as srv:
        first, second = asyncio.run(asyncio.wait_for(go(srv), 60))
    assert result_of(first).subtype == "error_during_execution"
    assert result_of(second).subtype == "success" and result_of(second).result == "Fine."
    assert srv.loop_requests[-1].body["messages"][-1]["role"] == "user"  # the history stayed valid (strict server)


def test_client_set_model_and_permission_mode(tmp_path: Path) -> None:
    async def go(srv: ScriptedServer) -> list[Any]:
        async with ClaudeSDKClient(options("loopwright", srv, tmp_path)) as client:
            await client.set_model("claude-haiku-4-5")
            await client.set_permission_mode("acceptEdits")
            await client.query("hi")
            out = [m async for m in client.receive_response()]
            usage = await client.get_context_usage()
            assert usage["totalTokens"] > 0 and usage["model"] == "claude-haiku-4-5"
            return out

    with ScriptedServer([[text("hello")]]) as srv:
        msgs = asyncio.run(go(srv))
    assert srv.loop_requests[0].body["model"] == "claude-haiku-4-5"
    init = next(m for m in msgs if isinstance(m, SystemMessage))
    assert init.data["permissionMode"] == "acceptEdits"


# --- hooks.py ---------------------------------------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_hooks_pre_tool_use_denies(cli: str, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    async def check_bash(input_data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        seen.append(input_data)
        if "foo.sh" in input_data["tool_input"].get("command", ""):
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "Command contains invalid pattern: foo.sh"}}
        return {}

    async def go(srv: ScriptedServer) -> list[Any]:
        opts = options(cli, srv, tmp_path, allowed_tools=["Bash"], permission_mode="acceptEdits",
                       hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[check_bash])]})
        async with ClaudeSDKClient(opts) as client:
            await client.query("Run ./foo.sh --help")
            return [m async for m in client.receive_response()]

    with ScriptedServer([[bash("./foo.sh --help")], [text("It was blocked.")]]) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "It was blocked."
    assert seen and seen[0]["tool_name"] == "Bash" and seen[0]["hook_event_name"] == "PreToolUse"
    (r,) = last_results(srv, 1)
    assert r.get("is_error") and "foo.sh" in result_text(r)


@pytest.mark.parametrize("cli", CLIS)
def test_hooks_continue_false_stops_the_run(cli: str, tmp_path: Path) -> None:
    async def stop(input_data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        return {"continue_": False, "stopReason": "Stopped by the PostToolUse hook"}

    async def go(srv: ScriptedServer) -> list[Any]:
        opts = options(cli, srv, tmp_path, allowed_tools=["Bash"], permission_mode="acceptEdits",
                       hooks={"PostToolUse": [HookMatcher(matcher="Bash", hooks=[stop])]})
        async with ClaudeSDKClient(opts) as client:
            await client.query("echo")
            return [m async for m in client.receive_response()]

    with ScriptedServer([[bash("echo hi")], [text("never reached")]]) as srv:
        msgs = asyncio.run(go(srv))
    assert len(srv.loop_requests) == 1  # the model was not called again
    assert "never reached" not in texts(msgs)


def test_hooks_user_prompt_submit_adds_context(tmp_path: Path) -> None:
    async def add(input_data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                       "additionalContext": "My favourite colour is blue."}}

    async def go(srv: ScriptedServer) -> list[Any]:
        opts = options("loopwright", srv, tmp_path, hooks={"UserPromptSubmit": [HookMatcher(hooks=[add])]})
        async with ClaudeSDKClient(opts) as client:
            await client.query("What is my favourite colour?")
            return [m async for m in client.receive_response()]

    with ScriptedServer([[text("Blue.")]]) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "Blue."
    assert "My favourite colour is blue." in json.dumps(srv.loop_requests[0].body["messages"])


# --- tool_permission_callback.py --------------------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_can_use_tool_allows_with_updated_input_and_denies(cli: str, tmp_path: Path) -> None:
    asked: list[str] = []

    async def decide(name: str, x: dict[str, Any], ctx: Any) -> Any:
        asked.append(name)
        if name == "Write":
            return PermissionResultAllow(updated_input={**x, "file_path": str(tmp_path / "safe.txt")})
        return PermissionResultDeny(message="no shell commands here")

    async def go(srv: ScriptedServer) -> list[Any]:
        async with ClaudeSDKClient(options(cli, srv, tmp_path, can_use_tool=decide)) as client:
            await client.query("write then clean up")
            return [m async for m in client.receive_response()]

    turns = [[use("w1", "Write", file_path=str(tmp_path / "a.txt"), content="x")],
             [bash("rm -rf junk", "b1")], [text("done")]]
    with ScriptedServer(turns) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "done"
    # the callback's own redirect (a write the rules ask about for the same plain reason) is not asked
    # about again, as with Claude Code
    assert asked == ["Write", "Bash"]
    assert (tmp_path / "safe.txt").read_text() == "x" and not (tmp_path / "a.txt").exists()
    (r,) = last_results(srv, 2)
    assert r.get("is_error") and "no shell commands here" in result_text(r)


@pytest.mark.parametrize("cli", CLIS)
def test_can_use_tool_that_raises_is_a_deny(cli: str, tmp_path: Path) -> None:
    async def broken(name: str, x: dict[str, Any], ctx: Any) -> Any:
        raise RuntimeError("callback broke")

    async def go(srv: ScriptedServer) -> list[Any]:
        async with ClaudeSDKClient(options(cli, srv, tmp_path, can_use_tool=broken)) as client:
            await client.query("clean up")
            return [m async for m in client.receive_response()]

    with ScriptedServer([[bash("rm -rf junk")], [text("could not")]]) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "could not"
    (r,) = last_results(srv, 1)
    assert r.get("is_error")


# --- mcp_calculator.py ------------------------------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_mcp_calculator_in_process_server(cli: str, tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"{args['a']} + {args['b']} = {args['a'] + args['b']}"}]}

    @tool("divide", "Divide two numbers", {"a": float, "b": float})
    async def divide(args: dict[str, Any]) -> dict[str, Any]:
        if args["b"] == 0:
            return {"content": [{"type": "text", "text": "Error: Division by zero"}], "is_error": True}
        return {"content": [{"type": "text", "text": str(args["a"] / args["b"])}]}

    calc = create_sdk_mcp_server(name="calc", version="2.0.0", tools=[add, divide])

    async def go(srv: ScriptedServer) -> list[Any]:
        opts = options(cli, srv, tmp_path, mcp_servers={"calc": calc},
                       allowed_tools=["mcp__calc__add", "mcp__calc__divide"])
        async with ClaudeSDKClient(opts) as client:
            await client.query("2 + 3, then 1 / 0")
            return [m async for m in client.receive_response()]

    turns = [[use("c1", "mcp__calc__add", a=2, b=3)], [use("c2", "mcp__calc__divide", a=1, b=0)], [text("5, and 1/0 fails")]]
    with ScriptedServer(turns) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "5, and 1/0 fails"
    assert calls == [{"a": 2, "b": 3}]
    if cli == "loopwright":  # (Claude Code defers MCP tools behind its ToolSearch tool)
        assert "mcp__calc__add" in [t["name"] for t in srv.loop_requests[0].body["tools"]]
    (r1,) = last_results(srv, -2)
    assert "2 + 3 = 5" in result_text(r1) and not r1.get("is_error")
    (r2,) = last_results(srv, -1)
    assert r2.get("is_error") and "Division by zero" in result_text(r2)


# --- agents.py --------------------------------------------------------------------------------

def test_agents_from_initialize(tmp_path: Path) -> None:
    agents = {"code-reviewer": AgentDefinition(description="Reviews code", prompt="You are a code reviewer.",
                                               tools=["Read", "Grep"], model="inherit")}
    turns = [[use("a1", "Agent", description="review", prompt="Review grades.py", subagent_type="code-reviewer")],
             [text("LGTM")], [text("The reviewer says LGTM.")]]
    with ScriptedServer(turns) as srv:
        msgs = asyncio.run(collect("Review the code", options("loopwright", srv, tmp_path, agents=agents)))
    assert result_of(msgs).result == "The reviewer says LGTM."
    init = next(m for m in msgs if isinstance(m, SystemMessage))
    assert "code-reviewer" in init.data["agents"]
    sub = srv.loop_requests[1].body
    assert "You are a code reviewer." in system_text(sub)
    assert sorted(t["name"] for t in sub["tools"]) == ["Grep", "Read"]


# --- include_partial_messages.py --------------------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_include_partial_messages(cli: str, tmp_path: Path) -> None:
    with ScriptedServer([[text("streamed answer")]]) as srv:
        msgs = asyncio.run(collect("hi", options(cli, srv, tmp_path, include_partial_messages=True)))
    events = [m for m in msgs if isinstance(m, StreamEvent)]
    assert events and all(e.uuid and e.session_id for e in events)
    deltas = "".join(e.event.get("delta", {}).get("text", "") for e in events if e.event.get("type") == "content_block_delta")
    assert deltas == "streamed answer"
    assert result_of(msgs).result == "streamed answer"


# --- max_budget_usd.py ------------------------------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_max_budget_usd(cli: str, tmp_path: Path) -> None:
    async def go(srv: ScriptedServer) -> list[Any]:
        out: list[Any] = []
        try:  # SDK 0.2.189 raises ResultError after an error result (the CLI exits 1)
            async for m in query(prompt="go", options=options(cli, srv, tmp_path, max_budget_usd=0.0001,
                                                              allowed_tools=["Bash"], permission_mode="acceptEdits")):
                out.append(m)
        except sdk.ProcessError:
            pass
        return out

    with ScriptedServer([[bash("echo 1")], [bash("echo 2", "t2")], [text("done")]]) as srv:
        msgs = asyncio.run(go(srv))
    r = result_of(msgs)
    assert r.subtype == "error_max_budget_usd" and r.is_error and r.total_cost_usd >= 0.0001


# --- tools_option.py / system_prompt.py / setting_sources.py ----------------------------------

def test_tools_option_and_disallowed_tools(tmp_path: Path) -> None:
    bodies = []
    for kw in ({"tools": ["Read", "Glob", "Grep"]}, {"tools": []}, {"disallowed_tools": ["Bash", "Write"]}):
        with ScriptedServer([[text("a")]]) as srv:
            msgs = asyncio.run(collect("x", options("loopwright", srv, tmp_path, **kw)))
            bodies.append((next(m for m in msgs if isinstance(m, SystemMessage)).data, srv.loop_requests[0].body))
    assert bodies[0][0]["tools"] == ["Read", "Glob", "Grep"]
    assert [t["name"] for t in bodies[0][1]["tools"]] == ["Read", "Glob", "Grep"]
    assert bodies[1][0]["tools"] == [] and not bodies[1][1].get("tools")
    offered = [t["name"] for t in bodies[2][1]["tools"]]
    assert "Read" in offered and "Bash" not in offered and "Write" not in offered


def test_system_prompt_string_preset_and_none(tmp_path: Path) -> None:
    with ScriptedServer([[text("a")], [text("b")], [text("c")]]) as srv:
        asyncio.run(collect("x", options("loopwright", srv, tmp_path, system_prompt="You are a pirate.")))
        asyncio.run(collect("x", options("loopwright", srv, tmp_path, system_prompt={
            "type": "preset", "preset": "claude_code", "append": "Always end with ARRR."})))
        asyncio.run(collect("x", options("loopwright", srv, tmp_path)))
    assert system_text(srv.loop_requests[0].body) == "You are a pirate."
    appended = system_text(srv.loop_requests[1].body)
    assert appended.endswith("Always end with ARRR.") and "loopwright" in appended  # the default prompt, then it
    assert system_text(srv.loop_requests[2].body) == ""  # the SDK's default: --system-prompt ""


def test_setting_sources(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("The project codename is HERON.\n")
    with ScriptedServer([[text("a")], [text("b")]]) as srv:
        asyncio.run(collect("x", options("loopwright", srv, tmp_path, setting_sources=["project"])))
        asyncio.run(collect("x", options("loopwright", srv, tmp_path, setting_sources=[])))
    assert "HERON" in json.dumps(srv.loop_requests[0].body["messages"])
    assert "HERON" not in json.dumps(srv.loop_requests[1].body["messages"])


# --- structured outputs / stderr callback -----------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_structured_output(cli: str, tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    turns = [[use("s1", "StructuredOutput", answer=4)], [text("done")]]
    with ScriptedServer(turns) as srv:
        msgs = asyncio.run(collect("2+2?", options(cli, srv, tmp_path,
                                                   output_format={"type": "json_schema", "schema": schema})))
    r = result_of(msgs)
    assert r.subtype == "success" and r.structured_output == {"answer": 4}


def test_stderr_callback_gets_debug_lines(tmp_path: Path) -> None:
    lines: list[str] = []
    with ScriptedServer([[text("ok")]]) as srv:
        msgs = asyncio.run(collect("x", options("loopwright", srv, tmp_path, stderr=lines.append,
                                                extra_args={"debug-to-stderr": None})))
    assert result_of(msgs).subtype == "success"
    assert any("argv" in line and "--input-format stream-json" in line for line in lines)


def test_a_typod_allowed_tools_rule_is_named_once(tmp_path: Path) -> None:
    """ClaudeAgentOptions(allowed_tools=['Bsh']): named once on stderr, as the SDK's option, and
    in the init line's warnings (the CLI's flag line said it a second time, as --allowedTools)."""
    lines: list[str] = []
    with ScriptedServer([[text("ok")]]) as srv:
        msgs = asyncio.run(collect("x", options("loopwright", srv, tmp_path, stderr=lines.append,
                                                allowed_tools=["Bsh"])))
    assert result_of(msgs).subtype == "success"
    named = [line for line in lines if "Bsh" in line]
    assert len(named) == 1 and "allowed_tools Bsh" in named[0] and "did you mean Bash" in named[0], lines
    init = next(m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "init")
    assert any("allowed_tools Bsh" in w for w in init.data.get("warnings", [])), init.data


# --- streaming input (an AsyncIterable prompt) ------------------------------------------------

def test_async_iterable_prompt_runs_each_message(tmp_path: Path) -> None:
    async def go(srv: ScriptedServer) -> list[Any]:
        opts = options("loopwright", srv, tmp_path)
        return [m async for m in query(prompt=prompts("first", "second"), options=opts)]

    with ScriptedServer([[text("one")], [text("two")]]) as srv:
        msgs = asyncio.run(go(srv))
    assert [r.result for r in msgs if isinstance(r, ResultMessage)][:1] == ["one"]
    assert "first" in json.dumps(srv.loop_requests[1].body["messages"])  # the second run continued the first


# --- sessions, max_turns, MCP status ----------------------------------------------------------

@pytest.mark.parametrize("cli", CLIS)
def test_resume_a_session(cli: str, tmp_path: Path) -> None:
    with ScriptedServer([[text("Noted: 7.")], [text("It was 7.")], [text("Still 7.")]]) as srv:
        first = asyncio.run(collect("Remember the number 7.", options(cli, srv, tmp_path)))
        sid = result_of(first).session_id
        second = asyncio.run(collect("Which number?", options(cli, srv, tmp_path, resume=sid)))
        assert "Remember the number 7." in json.dumps(srv.loop_requests[-1].body["messages"])
        forked = asyncio.run(collect("And now?", options(cli, srv, tmp_path, resume=sid, fork_session=True)))
    assert result_of(second).result == "It was 7." and result_of(second).session_id == sid
    assert result_of(forked).result == "Still 7." and result_of(forked).session_id != sid
    assert "Which number?" in json.dumps(srv.loop_requests[-1].body["messages"])


def test_max_turns_and_mcp_status(tmp_path: Path) -> None:
    async def go(srv: ScriptedServer) -> tuple[list[Any], Any]:
        opts = options("loopwright", srv, tmp_path, max_turns=1, allowed_tools=["Bash"], permission_mode="acceptEdits",
                       mcp_servers={"calc": create_sdk_mcp_server(name="calc", tools=[])})
        async with ClaudeSDKClient(opts) as client:
            await client.query("loop")
            out = [m async for m in client.receive_response()]
            return out, await client.get_mcp_status()

    with ScriptedServer([[bash("echo 1")], [bash("echo 2", "t2")]]) as srv:
        msgs, status = asyncio.run(go(srv))
    r = result_of(msgs)
    assert r.subtype == "error_max_turns" and r.num_turns == 1 and len(srv.loop_requests) == 2
    assert status["mcpServers"] == [{"name": "calc", "status": "connected"}]


def test_a_refusal_names_the_sdk_option(tmp_path: Path) -> None:
    """No can_use_tool and no rule: the call is refused, and the refusal says how to allow it in
    the SDK's terms (allowed_tools=[...]), not as a command-line flag."""
    with ScriptedServer([[bash("rm -rf junk")], [text("refused")]]) as srv:
        msgs = asyncio.run(collect("clean up", options("loopwright", srv, tmp_path)))
    r = result_of(msgs)
    assert r.result == "refused" and r.permission_denials and r.permission_denials[0]["tool_name"] == "Bash"
    (block,) = last_results(srv, 1)
    assert block.get("is_error") and "allowed_tools=" in result_text(block) and "--allowedTools" not in result_text(block)


@pytest.mark.parametrize("cli", CLIS)
def test_client_interrupt_during_the_model_call(cli: str, tmp_path: Path) -> None:
    """streaming_mode.py's example_with_interrupt: consume in the background, interrupt while the
    model is still answering, then a new query."""
    async def go(srv: ScriptedServer) -> tuple[list[Any], list[Any]]:
        async with ClaudeSDKClient(options(cli, srv, tmp_path)) as client:
            await client.query("Count from 1 to 100 slowly.")
            first: list[Any] = []

            async def consume() -> None:
                async for m in client.receive_response():
                    first.append(m)

            task = asyncio.create_task(consume())
            while not srv.loop_requests:  # the model call is under way
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            await client.interrupt()
            await task
            await client.query("Just say hello.")
            second = [m async for m in client.receive_response()]
        return first, second

    turns = [{"content": [text("1, 2, 3")], "delay": 3}, [text("Hello!")]]  # (the server answers in order: keep it short)
    with ScriptedServer(turns) as srv:
        first, second = asyncio.run(asyncio.wait_for(go(srv), 60))
    assert result_of(first).subtype == "error_during_execution"
    assert result_of(second).result == "Hello!"


@pytest.mark.parametrize("cli", CLIS)
def test_can_use_tool_suggestions_kept_for_the_session(cli: str, tmp_path: Path) -> None:
    """Allowing with the suggested rules (updated_permissions) approves later calls like it
    without asking again."""
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    asked: list[Any] = []

    async def decide(name: str, x: dict[str, Any], ctx: Any) -> Any:
        asked.append(ctx.suggestions)
        return PermissionResultAllow(updated_permissions=ctx.suggestions)

    async def go(srv: ScriptedServer) -> list[Any]:
        async with ClaudeSDKClient(options(cli, srv, tmp_path, can_use_tool=decide)) as client:
            await client.query("remove both")
            return [m async for m in client.receive_response()]

    turns = [[bash("rm a.txt", "r1")], [bash("rm b.txt", "r2")], [text("removed")]]
    with ScriptedServer(turns) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "removed"
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()
    assert len(asked) == 1 and asked[0]  # asked once, with suggestions


@pytest.mark.parametrize("cli", CLIS)
def test_include_hook_events(cli: str, tmp_path: Path) -> None:
    """include_hook_events: a hook_started and a hook_response message for each run of a settings
    file's hook (its stdout, stderr, exit code); the SDK's own callbacks are not reported, as
    Claude Code 2.1.332 does not report them."""
    called: list[str] = []

    async def allow(input_data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        called.append(input_data["hook_event_name"])
        return {}

    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo pre-out; echo pre-err >&2"}]}]}}

    async def go(srv: ScriptedServer) -> list[Any]:
        opts = options(cli, srv, tmp_path, allowed_tools=["Bash"], permission_mode="acceptEdits", include_hook_events=True,
                       settings=json.dumps(settings), hooks={"Stop": [HookMatcher(hooks=[allow])]})
        async with ClaudeSDKClient(opts) as client:
            await client.query("echo")
            return [m async for m in client.receive_response()]

    with ScriptedServer([[bash("echo hi")], [text("done")]]) as srv:
        msgs = asyncio.run(go(srv))
    events = [(m.subtype, m.hook_event_name, m.data["hook_name"], m.data.get("stdout"), m.data.get("stderr"),
               m.data.get("exit_code")) for m in msgs if isinstance(m, sdk.HookEventMessage)]
    assert events == [("hook_started", "PreToolUse", "PreToolUse:Bash", None, None, None),
                      ("hook_response", "PreToolUse", "PreToolUse:Bash", "pre-out\n", "pre-err\n", 0)]
    assert called == ["Stop"] and result_of(msgs).result == "done"


@pytest.mark.parametrize("cli", CLIS)
def test_rewind_files_to_a_prompt(cli: str, tmp_path: Path) -> None:
    """ClaudeSDKClient.rewind_files's own example: file checkpointing, the prompt's uuid from its
    replayed user line, then the files as they were before that prompt."""
    target = tmp_path / "notes.txt"

    async def go(srv: ScriptedServer) -> None:
        opts = options(cli, srv, tmp_path, enable_file_checkpointing=True, permission_mode="acceptEdits",
                       extra_args={"replay-user-messages": None})
        async with ClaudeSDKClient(opts) as client:
            await client.query("Write version 1")
            _ = [m async for m in client.receive_response()]
            await client.query("Write version 2")
            prompt_ids = [m.uuid async for m in client.receive_response()
                          if type(m).__name__ == "UserMessage" and m.uuid and isinstance(m.content, str)]
            assert target.read_text() == "v2"
            await client.rewind_files(prompt_ids[0])

    turns = [[use("w1", "Write", file_path=str(target), content="v1")], [text("wrote 1")],
             [use("r2", "Read", file_path=str(target))],  # (loopwright's read-before-write state is per run)
             [use("w2", "Write", file_path=str(target), content="v2")], [text("wrote 2")]]
    with ScriptedServer(turns) as srv:
        asyncio.run(go(srv))
    assert target.read_text() == "v1"


@pytest.mark.parametrize("cli", CLIS)
def test_custom_slash_command(cli: str, tmp_path: Path) -> None:
    """setting_sources.py: the project's commands are listed in the init message, and a prompt
    naming one runs it."""
    (tmp_path / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / ".claude" / "commands" / "greet.md").write_text(
        "---\nallowed-tools: Bash(echo:*)\n---\nSay a warm hello to $ARGUMENTS. !`echo SDK-INLINE`\n")
    hook = tmp_path / "hook.sh"  # UserPromptExpansion and PreSkillShellCommand fire here too (issue 42)
    hook.write_text(f'#!/bin/sh\ncat >> "{tmp_path}/hooks.log"\necho >> "{tmp_path}/hooks.log"\n')
    hook.chmod(0o755)
    logged = {e: [{"hooks": [{"type": "command", "command": str(hook)}]}]
              for e in ("UserPromptExpansion", "PreSkillShellCommand")}
    with ScriptedServer([[text("Hello, Bob!")]]) as srv:
        msgs = asyncio.run(collect("/greet Bob", options(cli, srv, tmp_path, setting_sources=["project"],
                                                         settings=json.dumps({"hooks": logged}))))
    init = next(m for m in msgs if isinstance(m, SystemMessage))
    assert "greet" in init.data["slash_commands"]
    assert result_of(msgs).result == "Hello, Bob!"
    assert "Say a warm hello to Bob. SDK-INLINE" in json.dumps(srv.loop_requests[0].body["messages"])
    seen = [json.loads(ln) for ln in (tmp_path / "hooks.log").read_text().splitlines() if ln.strip()]
    assert [(d["hook_event_name"], d["command_name"]) for d in seen] == [
        ("UserPromptExpansion", "greet"), ("PreSkillShellCommand", "greet")]
    assert seen[1]["tool_input"] == {"command": "echo SDK-INLINE"}


@pytest.mark.parametrize("cli", CLIS)
def test_ask_user_question_through_can_use_tool(cli: str, tmp_path: Path) -> None:
    """AskUserQuestion reaches the SDK's can_use_tool, whose allow carries the answers."""
    seen: list[dict[str, Any]] = []

    async def decide(name: str, x: dict[str, Any], ctx: Any) -> Any:
        seen.append({"name": name, **x})
        if name == "AskUserQuestion":
            return PermissionResultAllow(updated_input={**x, "answers": {"Which colour?": "Blue"}})
        return PermissionResultDeny(message="no")

    async def go(srv: ScriptedServer) -> list[Any]:
        async with ClaudeSDKClient(options(cli, srv, tmp_path, can_use_tool=decide)) as client:
            await client.query("ask me")
            return [m async for m in client.receive_response()]

    question = {"question": "Which colour?", "header": "Colour", "multiSelect": False,
                "options": [{"label": "Blue", "description": "the sky"}, {"label": "Red", "description": "a rose"}]}
    with ScriptedServer([[use("q1", "AskUserQuestion", questions=[question])], [text("Blue it is.")]]) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "Blue it is."
    assert seen and seen[0]["name"] == "AskUserQuestion" and seen[0]["questions"][0]["question"] == "Which colour?"
    (r,) = last_results(srv, -1)
    assert not r.get("is_error") and "Blue" in result_text(r)


def test_exit_plan_mode_through_can_use_tool(tmp_path: Path) -> None:
    """In plan mode, ExitPlanMode's plan goes to the SDK's can_use_tool; allowed, the run goes on.
    (Claude Code 2.1.332 does not ask can_use_tool about ExitPlanMode.)"""
    cli = "loopwright"
    plans: list[str] = []

    async def decide(name: str, x: dict[str, Any], ctx: Any) -> Any:
        if name == "ExitPlanMode":
            plans.append(x["plan"])
        return PermissionResultAllow()

    async def go(srv: ScriptedServer) -> list[Any]:
        async with ClaudeSDKClient(options(cli, srv, tmp_path, can_use_tool=decide, permission_mode="plan")) as client:
            await client.query("plan it")
            return [m async for m in client.receive_response()]

    with ScriptedServer([[use("p1", "ExitPlanMode", plan="1. Write notes.txt")], [text("Planned.")]]) as srv:
        msgs = asyncio.run(go(srv))
    assert result_of(msgs).result == "Planned." and plans == ["1. Write notes.txt"]
    (r,) = last_results(srv, -1)
    assert not r.get("is_error") and "approved" in result_text(r).lower()


@pytest.mark.parametrize("cli", CLIS)
def test_set_model_fires_the_model_switch_hooks(cli: str, tmp_path: Path) -> None:
    """The SDK's set_model is a model switch with `source` "sdk": a PreModelSwitch hook's deny
    refuses it (the SDK's error, in Claude Code's words); an allowed switch runs PostModelSwitch,
    whose additionalContext goes to the model with the next prompt."""
    log = tmp_path / "hooks.log"
    deny = {"hookSpecificOutput": {"hookEventName": "PreModelSwitch", "permissionDecision": "deny",
                                   "permissionDecisionReason": "no haiku here"}}
    pre = tmp_path / "pre.sh"
    pre.write_text(f"#!/bin/sh\nd=$(cat); echo \"$d\" >> {log}\n"
                   f"case \"$d\" in *'\"to_model\":\"claude-haiku-4-5\"'*) echo '{json.dumps(deny)}';; esac\n")
    post = tmp_path / "post.sh"
    context = {"hookSpecificOutput": {"hookEventName": "PostModelSwitch", "additionalContext": "SWITCHED CTX"}}
    post.write_text(f"#!/bin/sh\ncat >> {log}; echo >> {log}\necho '{json.dumps(context)}'\n")
    pre.chmod(0o755)
    post.chmod(0o755)
    settings = {"hooks": {"PreModelSwitch": [{"hooks": [{"type": "command", "command": str(pre)}]}],
                          "PostModelSwitch": [{"hooks": [{"type": "command", "command": str(post)}]}]}}
    work = tmp_path / "work"
    work.mkdir()

    async def go(srv: ScriptedServer) -> str:
        async with ClaudeSDKClient(options(cli, srv, work, settings=json.dumps(settings))) as client:
            with pytest.raises(Exception) as refused:
                await client.set_model("claude-haiku-4-5")
            await client.set_model("claude-sonnet-4-5")
            await client.query("hi")
            [m async for m in client.receive_response()]
            return str(refused.value)

    with ScriptedServer([[text("hello")]]) as srv:
        refusal = asyncio.run(go(srv))
    assert "Model switch blocked by a PreModelSwitch hook: no haiku here" in refusal
    first = srv.loop_requests[0].body
    assert first["model"] == "claude-sonnet-4-5" and "SWITCHED CTX" in json.dumps(first["messages"])
    seen = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    assert [(d["hook_event_name"], d["to_model"], d["source"]) for d in seen] == [
        ("PreModelSwitch", "claude-haiku-4-5", "sdk"), ("PreModelSwitch", "claude-sonnet-4-5", "sdk"),
        ("PostModelSwitch", "claude-sonnet-4-5", "sdk")]
    assert seen[1]["from_model"] == MODEL and seen[1]["requested_model"] == "claude-sonnet-4-5"


@pytest.mark.parametrize("cli", CLIS)
def test_agents_skills_are_preloaded_for_the_subagent(cli: str, tmp_path: Path) -> None:
    """`agents=` with an AgentDefinition's `skills`: the skill's SKILL.md follows the task in the
    subagent's first message (Claude Code's blocks); a key loopwright does not apply
    (`initialPrompt`) is named, never dropped silently."""
    work = tmp_path / "work"
    (work / ".claude" / "skills" / "tidy").mkdir(parents=True)
    (work / ".claude" / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy things up\n---\nTIDY-SKILL-BODY: always sort imports.\n")
    stderr: list[str] = []
    agents = {"helper": AgentDefinition(description="helps", prompt="You are the helper.", skills=["tidy"],
                                        initialPrompt="start here")}
    turns = [[use("a1", "Agent", description="d", prompt="do it", subagent_type="helper")], [text("sub done")],
             *[[text("all done")]] * 6]

    async def go(srv: ScriptedServer) -> None:
        opts = options(cli, srv, work, agents=agents, setting_sources=["project"], permission_mode="acceptEdits",
                       stderr=stderr.append)
        async with ClaudeSDKClient(opts) as client:
            await client.query("hi")
            [m async for m in client.receive_response()]

    with ScriptedServer(turns) as srv:
        asyncio.run(go(srv))
    firsts = [[b["text"] for b in q.body["messages"][0]["content"] if isinstance(b, dict) and b.get("type") == "text"]
              for q in srv.loop_requests]
    sub = next(t for t in firsts if any("<command-name>tidy</command-name>" in x for x in t))
    assert sub[-2:] == ["<command-message>tidy</command-message>\n<command-name>tidy</command-name>\n"
                        "<skill-format>true</skill-format>",
                        f"Base directory for this skill: {work}/.claude/skills/tidy\n\n"
                        "TIDY-SKILL-BODY: always sort imports.\n"]
    if cli == "loopwright":
        assert any("'helper'" in line and "initialPrompt" in line for line in stderr), stderr
