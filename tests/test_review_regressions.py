"""Regression tests for bugs found in a review: each test failed before its fix."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.cli.render import TraceRenderer
from loopwright.invariant import holds, holds_final
from loopwright.permissions import Permissions
from loopwright.sessions import get_session_messages
from loopwright.tools.builtin import default_tools


def use(i: str, name: str, x: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": name, "input": x or {}}


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


# --- a handler's odd return values --------------------------------------------------------------

def _run_returning(value: Any) -> lw.ResultMessage:
    t = lw.Tool("t", "returns a fixed value", {"type": "object", "properties": {}}, lambda x: value)
    return lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "t")], [text("done")]]), tools=[t]))


def _result_block(r: lw.ResultMessage) -> dict[str, Any]:
    block: dict[str, Any] = r.messages[2]["content"][0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "u1"
    return block


def test_handler_returning_a_list_of_strings_gives_text_blocks() -> None:
    # Before: AttributeError 'str' has no to_wire, the run ended with an assistant tool_use
    # and no result in result.messages (Inv broken).
    r = _run_returning(["first", "second"])
    assert r.subtype == "success" and holds_final(r.messages)
    assert _result_block(r)["content"] == [text("first"), text("second")]


@pytest.mark.parametrize("value", [
    lw.ToolOutput([object()]),  # type: ignore[list-item]
    [{"type": "tool_result", "tool_use_id": "u1", "content": "nested"}],
    [{"type": "tool_use", "id": "x", "name": "t", "input": {}}],
    [{"type": "thinking", "thinking": "hm", "signature": "s"}],
])
def test_handler_returning_blocks_that_cannot_be_a_result_is_an_error_result(value: Any) -> None:
    r = _run_returning(value)
    assert r.subtype == "success" and holds_final(r.messages)
    block = _result_block(r)
    assert block["is_error"] is True and "malformed content" in block["content"]


def test_tool_output_keeps_its_error_flag_with_list_content() -> None:
    r = _run_returning(lw.ToolOutput(["bad thing"], is_error=True))  # type: ignore[list-item]
    block = _result_block(r)
    assert block["is_error"] is True and block["content"] == [text("bad thing")]


# --- cancelling the consumer of query() ----------------------------------------------------------

def _blocking_tool(started: asyncio.Event) -> lw.Tool:
    async def wait_forever(x: dict[str, Any]) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    return lw.Tool("block", "waits forever", {"type": "object", "properties": {}}, wait_forever)


@pytest.mark.parametrize("with_control", [False, True])
def test_cancelling_the_consumer_while_a_tool_runs_propagates(with_control: bool) -> None:
    # Before: the executor swallowed the task's CancelledError and the run ended with an
    # "interrupted by user" result; the cancelled task then finished normally, so
    # asyncio.timeout() / TaskGroup cancellation silently did nothing.
    async def main() -> list[str]:
        started = asyncio.Event()
        seen: list[str] = []
        options = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "block")], [text("done")]]),
                                  tools=[_blocking_tool(started)])
        control = lw.RunControl() if with_control else None

        async def consume() -> None:
            async for m in lw.query("go", options, control=control):
                seen.append(type(m).__name__)

        task = asyncio.ensure_future(consume())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    assert asyncio.run(main()) == ["SystemMessage", "AssistantMessage"]


def test_asyncio_timeout_around_query_raises_timeout_error() -> None:
    async def main() -> None:
        started = asyncio.Event()
        options = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "block")], [text("done")]]),
                                  tools=[_blocking_tool(started)])
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                async for _ in lw.query("go", options):
                    pass

    asyncio.run(main())


def test_control_interrupt_still_ends_the_run_with_a_result() -> None:
    async def main() -> lw.ResultMessage:
        started = asyncio.Event()
        options = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "block")], [text("done")]]),
                                  tools=[_blocking_tool(started)])
        control = lw.RunControl()
        last: Any = None

        async def consume() -> None:
            nonlocal last
            async for m in lw.query("go", options, control=control):
                last = m

        task = asyncio.ensure_future(consume())
        await started.wait()
        control.interrupt()
        await task
        return last

    r = asyncio.run(main())
    assert r.subtype == "error_during_execution" and holds(r.messages)
    assert r.messages[-1]["content"][0]["is_error"] is True


def test_cancelled_run_leaves_a_paired_transcript(tmp_path: Path) -> None:
    async def main() -> str:
        started = asyncio.Event()
        options = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "block")], [text("done")]]),
                                  tools=[_blocking_tool(started)], cwd=str(tmp_path),
                                  persist_session=True, sessions_dir=str(tmp_path / "s"))
        sid = ""

        async def consume() -> None:
            nonlocal sid
            async for m in lw.query("go", options):
                if isinstance(m, lw.SystemMessage) and m.subtype == "init":
                    sid = m.data["session_id"]

        task = asyncio.ensure_future(consume())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return sid

    sid = asyncio.run(main())
    h = get_session_messages(sid, sessions_dir=tmp_path / "s")
    assert [m["role"] for m in h] == ["user", "assistant", "user"] and holds(h)
    assert h[-1]["content"][0]["is_error"] is True  # the cancelled call's result was recorded


# --- the gate: git obeys the config of a planted (bare-looking) repository ---------------------

def _plant_bare_repo(d: Path, canary: Path) -> None:
    """A directory git takes for a repository, whose config runs a program on `git status`."""
    (d / "objects").mkdir(parents=True)
    (d / "refs").mkdir()
    (d / "HEAD").write_text("ref: refs/heads/main\n")
    (d / "config").write_text(f'[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch {canary}; false"\n')


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk"])
@pytest.mark.parametrize("command,bash_cwd", [
    ("cd evil && git status", None),
    ("git -C evil status", None),
    ("git --git-dir=evil status", None),
    ("git --bare log", "evil"),
    ("git status", "evil"),  # an earlier `cd evil` left the shell there
    ("cd sub/../evil; git diff", None),
])
def test_git_in_a_planted_repository_is_not_auto_approved(mode: str, command: str, bash_cwd: str | None,
                                                         tmp_path: Path) -> None:
    _plant_bare_repo(tmp_path / "evil", tmp_path / "canary")
    (tmp_path / "sub").mkdir()
    state = {"bash_cwd": str(tmp_path / bash_cwd)} if bash_cwd else {}
    p = Permissions(mode, cwd=tmp_path, home=tmp_path / "home", shell_state=state)  # type: ignore[arg-type]
    v = p.evaluate("Bash", {"command": command})
    assert v.kind == "ask", (command, v)
    plan = Permissions("plan", cwd=tmp_path, home=tmp_path / "home", shell_state=state)
    assert plan.evaluate("Bash", {"command": command}).kind == "deny"


@pytest.mark.parametrize("command", [
    "mkdir -p e/objects e/refs && echo 'ref: refs/heads/main' > e/HEAD && git -C e status",
    "cp -r fixture e; git -C e log",
])
def test_git_after_parts_that_create_files_is_not_auto_approved(command: str, tmp_path: Path) -> None:
    p = Permissions("acceptEdits", cwd=tmp_path, home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind == "ask"


@pytest.mark.parametrize("command", ["git status", "cd src && git log --oneline", "git -C src diff",
                                     "git log | head -5", "cd src; git status; cd ..; ls"])
def test_git_in_ordinary_directories_stays_auto_approved(command: str, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    p = Permissions("default", cwd=tmp_path, home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind == "allow"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_accept_edits_agent_cannot_run_a_program_through_a_planted_git_config(tmp_path: Path) -> None:
    # End to end: before, acceptEdits let the agent create the repository files and then run
    # `cd evil && git status`, which ran the config's fsmonitor command (the canary).
    canary = tmp_path.parent / f"{tmp_path.name}-canary"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = f'[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch {canary}; false"\n'
    turns = [
        [use("u1", "Bash", {"command": "mkdir -p evil/objects evil/refs"})],
        [use("u2", "Write", {"file_path": "evil/HEAD", "content": "ref: refs/heads/main\n"}),
         use("u3", "Write", {"file_path": "evil/config", "content": config})],
        [use("u4", "Bash", {"command": "cd evil && git status"})],
        [text("done")],
    ]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=str(tmp_path),
                                     permission_mode="acceptEdits"))
    assert (tmp_path / "evil" / "config").exists()  # the edits themselves were approved
    assert not canary.exists()
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u4"]


# --- the CLI -------------------------------------------------------------------------------------

BIN = Path(sys.executable).parent / "loopwright"


def test_cli_prompt_with_bytes_that_are_not_utf8_runs(tmp_path: Path) -> None:
    # Before: the argv's lone surrogate ended the run with "UnicodeEncodeError: ... surrogates
    # not allowed" (exit 1) and left an empty session behind.
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([[text("ok")]]))
    env = {**os.environ, "LOOPWRIGHT_HOME": str(tmp_path / "home")}
    p = subprocess.run([str(BIN), "-p", b"caf\xe9 \xff", "--append-system-prompt", b"\xfe",
                        "--model", f"scripted:{script}", "--output-format", "json", "--cwd", str(tmp_path)],
                       capture_output=True, env=env, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["subtype"] == "success" and out["result"] == "ok"
    h = get_session_messages(out["session_id"], sessions_dir=tmp_path / "home" / "projects")
    assert h[0]["content"][0]["text"] == "caf\ufffd \ufffd"


# --- built-in tools on special files -------------------------------------------------------------

@pytest.mark.parametrize("name,x", [
    ("Edit", {"file_path": "pipe", "old_string": "a", "new_string": "b"}),
    ("Edit", {"file_path": "pipe", "old_string": "", "new_string": "b"}),
    ("MultiEdit", {"file_path": "pipe", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("Write", {"file_path": "pipe", "content": "b"}),
])
def test_edit_tools_refuse_a_fifo_instead_of_blocking_forever(name: str, x: dict[str, Any], tmp_path: Path) -> None:
    # Before: Edit/MultiEdit read the FIFO before any other check, blocking the event loop
    # (and the whole run, beyond any interrupt) until something wrote to the pipe.
    os.mkfifo(tmp_path / "pipe")
    writer = threading.Timer(20, _unblock, (tmp_path / "pipe",))  # so a regression fails, not hangs
    writer.start()
    try:
        r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", name, x)], [text("done")]]),
                                         tools=default_tools(), cwd=str(tmp_path),
                                         permission_mode="bypassPermissions"))
    finally:
        writer.cancel()
    block = _result_block(r)
    assert block["is_error"] is True and "not a regular file" in block["content"]


def _unblock(pipe: Path) -> None:
    fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
    os.close(fd)


# --- Read deny rules and the searching tools ------------------------------------------------------

@pytest.fixture
def secret_project(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.env").write_text("API_KEY=hunter2\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("API_KEY = os.environ['API_KEY']\n")
    return tmp_path


@pytest.mark.parametrize("name,x", [
    ("Grep", {"pattern": "API_KEY", "output_mode": "content"}),
    ("Grep", {"pattern": "API_KEY", "output_mode": "files_with_matches"}),
    ("Grep", {"pattern": "API_KEY", "glob": "*.env", "output_mode": "count"}),
    ("Glob", {"pattern": "**/*"}),
])
def test_searching_tools_leave_out_files_a_read_deny_rule_covers(name: str, x: dict[str, Any],
                                                                  secret_project: Path) -> None:
    # Before: Read(secrets/key.env) was refused, but Grep over the project printed its contents.
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", name, x)], [text("done")]]),
                                     tools=default_tools(), cwd=str(secret_project), permission_mode="default",
                                     disallowed_tools=["Read(./secrets/**)"]))
    out = _result_block(r)["content"]
    assert "hunter2" not in out and "key.env" not in out
    if "glob" not in x:
        assert "a.py" in out  # the rest is still searched


def test_bash_glob_arguments_are_not_auto_approved_under_read_deny_rules(secret_project: Path) -> None:
    p = Permissions("default", cwd=secret_project, home=secret_project / "home",
                    disallowed_tools=["Read(./secrets/**)"])
    for command in ("cat sec*/key.env", "cat secrets/ke?.env", "head s[e]crets/key.env"):
        assert p.evaluate("Bash", {"command": command}).kind == "ask", command
    assert p.evaluate("Bash", {"command": "cat src/a.py"}).kind == "allow"
    assert p.evaluate("Bash", {"command": "find . -name '*.py'"}).kind == "allow"  # a quoted pattern


# --- the gate never ends the run -----------------------------------------------------------------

@pytest.mark.parametrize("name,x", [
    ("Write", {"file_path": "a\x00b", "content": "x"}),
    ("Read", {"file_path": "a\x00b"}),
    ("Bash", {"command": "cat a\x00b"}),
])
def test_a_nul_byte_in_a_path_is_refused_not_fatal(name: str, x: dict[str, Any], tmp_path: Path) -> None:
    # Before: os.path.realpath raised ValueError in the gate and the run ended with
    # error_during_execution ("embedded null byte").
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", name, x)], [text("done")]]),
                                     tools=default_tools(), cwd=str(tmp_path), permission_mode="acceptEdits"))
    assert r.subtype == "success" and r.result == "done"
    block = _result_block(r)
    assert block["is_error"] is True and "embedded null byte" in block["content"]
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u1"]


def test_a_can_use_tool_that_raises_refuses_the_call_and_ends_the_run() -> None:
    ran: list[str] = []

    def record(x: dict[str, Any]) -> str:
        ran.append("t")
        return "ran"

    t = lw.Tool("t", "records", {"type": "object", "properties": {}}, record)

    def broken(name: str, tool_input: dict[str, Any]) -> bool:
        raise RuntimeError("callback bug")

    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "t")], [text("done")]]), tools=[t],
                                     can_use_tool=broken))
    assert r.subtype == "error_during_execution" and ran == []  # fail closed, and said (issue 9 item 16)
    assert "callback bug" in r.errors[0]
    block = _result_block(r)
    assert block["is_error"] is True and "callback bug" in block["content"]


def test_a_tool_with_an_invalid_schema_gives_an_error_result_not_a_dead_run() -> None:
    # Before: jsonschema's SchemaError escaped Tool.call and the run ended with
    # error_during_execution, the whole multi-line schema dump as its message.
    bad = lw.Tool("b", "broken schema", {"type": "object", "properties": {"x": {"type": "nonsense"}}}, lambda x: "r")
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "b")], [text("done")]]), tools=[bad]))
    assert r.subtype == "success"
    block = _result_block(r)
    assert block["is_error"] is True and "input_schema is invalid" in block["content"]


def test_gate_resolves_bash_paths_where_the_shell_really_starts(tmp_path: Path) -> None:
    # The Bash tool starts in cwd when its remembered directory is gone; the gate resolved
    # relative paths against the vanished directory, so a denied path slipped through.
    state = {"bash_cwd": tmp_path / "gone"}
    p = Permissions("acceptEdits", cwd=tmp_path, home=tmp_path / "home", shell_state=state,
                    disallowed_tools=["Edit(./secret/**)"])
    assert p.evaluate("Bash", {"command": "echo x > secret/key"}).kind == "deny"


# --- what the terminal shows ---------------------------------------------------------------------

ESCAPES = "\x1b[2K\x1b[1A\x1b]0;title\x07\r\u202e"


def test_trace_shows_control_characters_as_escapes() -> None:
    # Before: ESC/BEL/CR from model text, tool input and tool output reached the terminal
    # raw, so they could erase or rewrite trace lines.
    out = io.StringIO()
    r = TraceRenderer(out, verbose=True, spinner=False)
    r.show(lw.AssistantMessage([lw.TextBlock(f"hi{ESCAPES}"), lw.ToolUseBlock("u1", "Bash", {"command": f"ls{ESCAPES}"}),
                                lw.ToolUseBlock("u2", "Write", {"file_path": f"a{ESCAPES}b", "content": ""})],
                               "scripted", "tool_use"))
    r.show(lw.UserMessage([lw.ToolResultBlock("u1", f"out{ESCAPES}\nline two{ESCAPES}"),
                           lw.ToolResultBlock("u2", f"err{ESCAPES}", True)]))
    text = out.getvalue()
    assert not any(c in text for c in "\x1b\x07\r\u202e")
    assert "\\x1b[2K" in text


def test_permission_question_shows_the_whole_command() -> None:
    # Before: the question showed the command cut at 100 characters (`echo aaa…`), so the
    # `; rm -rf ~` at its end was approved unseen; escapes went to the terminal raw.
    from loopwright.cli.interactive import Repl

    command = "echo " + "a" * 200 + f" {ESCAPES}; rm -rf ~"
    repl = Repl(lw.AgentOptions(model=lw.ScriptedModel([[text("x")]])))
    said: list[str] = []
    repl.say = said.append  # type: ignore[method-assign, assignment]

    async def main() -> Any:
        task = asyncio.ensure_future(repl.ask_permission("Bash", {"command": command}))
        while repl.permission is None:
            await asyncio.sleep(0)
        repl.permission.set_result("n")
        return await task

    decision = asyncio.run(main())
    assert isinstance(decision, lw.Deny)
    question = "\n".join(said)
    assert "rm -rf ~" in question and "a" * 200 in question
    assert not any(c in question for c in "\x1b\x07\r\u202e")


# --- the budget rule and paused turns --------------------------------------------------------------

@pytest.mark.parametrize("budget", [1.0, 2.0, 2.5])
def test_a_paused_turn_is_not_continued_past_the_budget(budget: float) -> None:
    # Before: pause_turn continuations were called whatever the spend: with B = 1 and $1 per
    # call the run spent $4 (Prop 5.4 promises spent < B + c_max = 2).
    paused: list[Any] = [{"content": [text(f"part {i}")], "stop_reason": "pause_turn"} for i in range(3)]
    turns: list[Any] = [*paused, {"content": [use("u1", "t")], "stop_reason": "tool_use"}, [text("done")]]
    ran: list[str] = []

    def record(x: dict[str, Any]) -> str:
        ran.append("t")
        return "ran"

    t = lw.Tool("t", "records", {"type": "object", "properties": {}}, record)
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns, cost_per_call_usd=1.0), tools=[t],
                                     max_budget_usd=budget, max_pause_continuations=5))
    assert r.subtype == "error_max_budget_usd"
    assert budget <= r.total_cost_usd < budget + 1.0
    assert ran == [] and holds(r.messages) and r.messages == [{"role": "user", "content": [text("go")]}]


# --- provider clients end with their run -----------------------------------------------------------

def test_sequential_runs_on_a_provider_leave_no_client_to_close_on_a_dead_loop() -> None:
    # Before: each lw.run() left its SDK client to the garbage collector, which closed it on
    # a later run's loop: "Task exception was never retrieved ... Event loop is closed"
    # tracebacks on stderr, and unclosed sockets.
    code = (
        "import gc, loopwright as lw\n"
        "from loopwright.testing import ScriptedServer\n"
        "with ScriptedServer([[{'type': 'text', 'text': 'ok'}]] * 5) as srv:\n"
        "    for _ in range(5):\n"
        "        r = lw.run('go', lw.AgentOptions(model='claude-sonnet-5-5', base_url=srv.url, api_key='test'))\n"
        "        assert r.subtype == 'success', r.errors\n"
        "        gc.collect()\n"
        "print('ok')\n"
    )
    p = subprocess.run([sys.executable, "-X", "dev", "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
    assert "Event loop is closed" not in p.stderr and "never retrieved" not in p.stderr
    assert "unclosed" not in p.stderr, p.stderr


# --- redirections of compound commands -------------------------------------------------------------

@pytest.mark.parametrize("command", [
    "{ echo x; } > ~/.bashrc",
    "{ echo x; } > .git/hooks/pre-commit",
    "(echo x) > /tmp/elsewhere",
    "for i in 1; do echo; done > /tmp/elsewhere",
    "if true; then echo; fi >> /tmp/elsewhere",
    "while false; do echo; done 2>/tmp/elsewhere",
])
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk"])
def test_a_compound_commands_redirection_is_judged(command: str, mode: str, tmp_path: Path) -> None:
    # Before: bashparse dropped the redirections of `{ }`, `( )`, for/if/while, so
    # `{ echo x; } > ~/.bashrc` ran in default mode without approval.
    p = Permissions(mode, cwd=tmp_path, home=tmp_path / "home")  # type: ignore[arg-type]
    assert p.evaluate("Bash", {"command": command}).kind == "ask"
    assert Permissions("plan", cwd=tmp_path, home=tmp_path / "home").evaluate("Bash", {"command": command}).kind == "deny"


def test_a_compound_commands_input_redirection_meets_read_deny_rules(tmp_path: Path) -> None:
    p = Permissions("default", cwd=tmp_path, home=tmp_path / "home", disallowed_tools=["Read(./secrets/**)"])
    assert p.evaluate("Bash", {"command": "{ cat; } < secrets/key"}).kind == "deny"
    assert p.evaluate("Bash", {"command": "(cat) < secrets/key"}).kind == "deny"


@pytest.mark.parametrize("command", ["(ls) 2>/dev/null", "{ ls; } >/dev/null 2>&1", "(cd sub && ls)"])
def test_harmless_compound_commands_stay_auto_approved(command: str, tmp_path: Path) -> None:
    assert Permissions("default", cwd=tmp_path).evaluate("Bash", {"command": command}).kind == "allow"


def test_default_mode_run_cannot_write_outside_through_a_brace_group(tmp_path: Path) -> None:
    target = tmp_path.parent / f"{tmp_path.name}-outside"
    turns = [[use("u1", "Bash", {"command": f"{{ echo pwned; }} > {target}"})], [text("done")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=str(tmp_path),
                                     permission_mode="default"))
    assert not target.exists()
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u1"]


@pytest.mark.skipif(shutil.which("rg") is None, reason="needs rg")
def test_grep_reports_no_context_lines_without_a_match(tmp_path: Path) -> None:
    # rg -U -C1 '^$' on "A\n" prints the context line `a.py-1-A` and no match; the tool showed
    # it as a result (the Python engine says "No matches found"; found by the engines property test).
    (tmp_path / "a.py").write_text("A\n")
    x = {"pattern": "^$", "output_mode": "content", "-C": 1, "multiline": True}
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "Grep", x)], [text("done")]]),
                                     tools=default_tools(), cwd=str(tmp_path)))
    assert _result_block(r)["content"] == "No matches found"


def test_cli_add_dir_is_relative_to_the_shell_not_to_cwd(tmp_path: Path) -> None:
    # Before: `--cwd proj --add-dir lib` was checked as ./lib but granted as proj/lib, so the
    # directory the user named stayed closed (and a proj/lib, if any, was opened instead).
    (tmp_path / "proj").mkdir()
    (tmp_path / "lib").mkdir()
    target = tmp_path / "lib" / "x.txt"
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([[use("u1", "Write", {"file_path": str(target), "content": "x"})], [text("ok")]]))
    p = subprocess.run([str(BIN), "-p", "go", "--cwd", "proj", "--add-dir", "lib", "--model", f"scripted:{script}",
                        "--permission-mode", "acceptEdits", "--no-session-persistence", "--output-format", "json"],
                       cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["permission_denials"] == [] and target.read_text() == "x"


def test_post_tool_use_context_keeps_an_image_result() -> None:
    # Before: the hook's additionalContext was joined to the result's *text*, which dropped
    # the image blocks of a list result (an image Read, a screenshot tool).
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    shot = lw.Tool("shot", "a screenshot", {"type": "object", "properties": {}}, lambda x: [image, text("caption")],
                   read_only=True)
    hooks = lw.Hooks()

    def note(data: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "seen by a hook"}}

    hooks.on("PostToolUse", note)
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "shot")], [text("done")]]), tools=[shot],
                                     hooks=hooks))
    assert _result_block(r)["content"] == [image, text("caption"), text("seen by a hook")]


# --- directories on PATH ---------------------------------------------------------------------------

@pytest.mark.parametrize("name,x", [
    ("Write", {"file_path": "bin/ls", "content": "#!/bin/sh\n"}),
    ("Edit", {"file_path": "bin/ls", "old_string": "a", "new_string": "b"}),
    ("Bash", {"command": "cp gradlew bin/ls"}),
    ("Bash", {"command": "echo x > bin/cat"}),
    ("Bash", {"command": "mkdir -p bin"}),
    ("Bash", {"command": "mv tools bin"}),
])
def test_writes_into_a_directory_on_path_are_not_auto_approved(name: str, x: dict[str, Any], tmp_path: Path) -> None:
    # Before: with PATH=<project>/bin:... (an activated .venv/bin, node_modules/.bin, direnv),
    # acceptEdits let the agent put an executable `bin/ls` in place, and the read-only `ls`
    # then ran it without approval: arbitrary code from acceptEdits.
    path = f"{tmp_path / 'bin'}{os.pathsep}/usr/bin"
    p = Permissions("acceptEdits", cwd=tmp_path, home=tmp_path / "home", exec_path=path)
    v = p.evaluate(name, x)
    assert v.kind == "ask" and "PATH" in v.reason
    assert Permissions("acceptEdits", cwd=tmp_path, exec_path="/usr/bin").evaluate(name, x).kind == "allow"
    assert Permissions("bypassPermissions", cwd=tmp_path, exec_path=path).evaluate(name, x).kind == "allow"


def test_accept_edits_agent_cannot_plant_a_command_on_path(tmp_path: Path) -> None:
    canary = tmp_path.parent / f"{tmp_path.name}-canary"
    (tmp_path / "gradlew").write_text("#!/bin/sh\necho build\n")
    (tmp_path / "gradlew").chmod(0o755)
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([
        [use("u1", "Bash", {"command": "mkdir -p bin && cp gradlew bin/ls"})],
        [use("u2", "Write", {"file_path": "bin/ls", "content": f"#!/bin/sh\ntouch {canary}\n"})],
        [use("u3", "Bash", {"command": "ls"})],
        [text("done")],
    ]))
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "LOOPWRIGHT_HOME": str(tmp_path / "home")}
    p = subprocess.run([str(BIN), "-p", "go", "--model", f"scripted:{script}", "--permission-mode", "acceptEdits",
                        "--no-session-persistence", "--output-format", "json"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0, p.stderr
    assert not canary.exists()
    assert [d["tool_use_id"] for d in json.loads(p.stdout)["permission_denials"]] == ["u1", "u2"]


def test_settings_env_path_is_the_path_the_gate_protects(tmp_path: Path) -> None:
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"env": {"PATH": f"{tmp_path / 'tools'}:/usr/bin"}}))
    turns = [[use("u1", "Write", {"file_path": "tools/git", "content": "#!/bin/sh\n"})], [text("done")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=str(tmp_path),
                                     permission_mode="acceptEdits", setting_sources=["project"]))
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u1"] and not (tmp_path / "tools" / "git").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_cli_sigterm_kills_the_running_command_and_keeps_the_session_paired(sig: int, tmp_path: Path) -> None:
    # Before: SIGTERM ended loopwright at once; the command the Bash tool had started (in its
    # own process group) kept running, and the transcript ended in an unanswered tool_use.
    pid_file = tmp_path / "pid"
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([[use("u1", "Bash", {"command": f"sleep 120 & echo $! > {pid_file}; wait"})],
                                  [text("done")]]))
    env = {**os.environ, "LOOPWRIGHT_HOME": str(tmp_path / "home")}
    p = subprocess.Popen([str(BIN), "-p", "go", "--model", f"scripted:{script}", "--allowedTools", "Bash",
                          "--output-format", "stream-json"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # wait (up to 60 s) until the command runs
            if pid_file.exists() and pid_file.read_text().strip():
                break
            threading.Event().wait(0.1)
        pid = int(pid_file.read_text())
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    try:
        assert p.returncode == 128 + sig, err
        for _ in range(100):  # the kill is SIGTERM then SIGKILL after a grace period
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            threading.Event().wait(0.1)
        else:
            pytest.fail("the command's process survived loopwright")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # a failing run must not leave it behind either
    sid = json.loads(out.splitlines()[0])["session_id"]
    h = get_session_messages(sid, sessions_dir=tmp_path / "home" / "projects")
    assert [m["role"] for m in h] == ["user", "assistant", "user"] and holds(h)
