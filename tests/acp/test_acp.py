"""`loopwright acp` driven by the official ACP library's client side (acp.spawn_agent_process)
against the loopback Messages server with scripted turns: every point of issue 25, judged on
the client's side, on disk and in the requests the server saw."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from loopwright.sessions import JsonlSessionStore
from loopwright.testing import ScriptedServer
from tests.helpers import (
    TESTS,
    bash,
    check_resumable,
    classifier_action,
    cli_env,
    loopwright_cmd,
    notes_project,
    still_alive,
    text,
    until,
    use,
    verdict,
)

acp = pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")
from acp import schema as s  # noqa: E402

pytestmark = pytest.mark.e2e
MODEL = "claude-sonnet-4-6"


class Editor:
    """The client side: records every update, answers permission requests from `answers`
    (option ids, in order), and offers fs/terminal when asked to."""

    def __init__(self, answers: list[str] | None = None, *, fs: bool = False, terminal: bool = False) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[s.RequestPermissionRequest] = []
        self.answers = list(answers or [])
        self.fs, self.terminal = fs, terminal
        self.buffers: dict[str, str] = {}  # unsaved editor buffers: what fs/read_text_file returns
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terms: dict[str, asyncio.subprocess.Process] = {}
        self.outputs: dict[str, bytes] = {}
        self.permission_event = asyncio.Event()

    def caps(self) -> s.ClientCapabilities:
        return s.ClientCapabilities(fs=s.FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
                                    terminal=self.terminal)

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def of(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def agent_text(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: s.ToolCallUpdate, options: list[Any],
                                 **_: Any) -> s.RequestPermissionResponse:
        self.permissions.append(s.RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options))
        self.permission_event.set()
        if not self.answers:
            await asyncio.Event().wait()  # a person who never answers (the cancel test)
        choice = self.answers.pop(0)
        if choice == "cancelled":
            return s.RequestPermissionResponse(outcome=s.DeniedOutcome(outcome="cancelled"))
        return s.RequestPermissionResponse(outcome=s.AllowedOutcome(outcome="selected", option_id=choice))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **_: Any) -> s.ReadTextFileResponse:
        self.reads.append(path)
        content = self.buffers.get(path)
        if content is None:
            content = Path(path).read_text()
        return s.ReadTextFileResponse(content=content)

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> s.WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content)
        return s.WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[Any] | None = None, cwd: str | None = None, output_byte_limit: int | None = None,
                              **_: Any) -> s.CreateTerminalResponse:
        p = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE,
                                                 stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        tid = f"term-{len(self.terms) + 1}"
        self.terms[tid] = p
        self.outputs[tid] = b""

        async def pump() -> None:
            assert p.stdout is not None
            while chunk := await p.stdout.read(4096):
                self.outputs[tid] += chunk

        asyncio.get_running_loop().create_task(pump())
        return s.CreateTerminalResponse(terminal_id=tid)

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> s.TerminalOutputResponse:
        p = self.terms[terminal_id]
        await asyncio.sleep(0.05)
        status = s.TerminalExitStatus(exit_code=p.returncode) if p.returncode is not None else None
        return s.TerminalOutputResponse(output=self.outputs[terminal_id].decode(), truncated=False, exit_status=status)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> s.WaitForTerminalExitResponse:
        code = await self.terms[terminal_id].wait()
        return s.WaitForTerminalExitResponse(exit_code=code)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> s.KillTerminalResponse:
        p = self.terms[terminal_id]
        if p.returncode is None:
            os.killpg(p.pid, signal.SIGKILL)
            await p.wait()
        return s.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> s.ReleaseTerminalResponse:
        await self.kill_terminal(session_id, terminal_id)
        return s.ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        pass


def agent_env(home: Path, **extra: str) -> dict[str, str]:
    return cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(home / ".loopwright"), HOME=str(home), **extra)


@asynccontextmanager
async def connected(editor: Editor, srv: ScriptedServer, home: Path, *args: str) -> AsyncIterator[tuple[Any, Any]]:
    cmd = loopwright_cmd()
    async with acp.spawn_agent_process(editor, cmd[0], *cmd[1:], "acp", "--model", MODEL, "--base-url", srv.url,
                                       *args, env=agent_env(home)) as (conn, proc):
        init = await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                                      client_capabilities=editor.caps()), 60)  # the agent's start (60 s: a loaded machine)
        assert init.protocol_version == acp.PROTOCOL_VERSION
        yield conn, proc


def transcript(home: Path, sid: str, cwd: Path) -> list[dict[str, Any]]:
    return JsonlSessionStore(home / ".loopwright" / "projects").load(sid, cwd).history


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return notes_project(tmp_path)


def test_initialize_new_prompt_edit_and_history(work: Path, tmp_path: Path) -> None:
    f = str(work / "notes.txt")
    turns = [
        [text("Looking."), use("r1", "Read", file_path=f)],
        [use("e1", "Edit", file_path=f, old_string="beta", new_string="gamma")],
        [text("Done: beta is gamma now.")],
    ]
    editor = Editor(["allow_once"])

    async def go() -> tuple[str, Any]:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("change beta to gamma")])
                return new.session_id, (r, new, srv.loop_requests)

    sid, (r, new, requests) = run(go())
    assert r.stop_reason == "end_turn"
    assert (work / "notes.txt").read_text() == "alpha\ngamma\n"
    assert new.modes is not None and new.modes.current_mode_id == "default"
    assert {"default", "acceptEdits", "plan", "bypassPermissions"} <= {m.id for m in new.modes.available_modes}
    starts = {u.tool_call_id: u for u in editor.of("tool_call")}
    assert starts["r1"].kind == "read" and starts["e1"].kind == "edit"
    assert starts["e1"].locations[0].path == f and starts["e1"].locations[0].line == 2
    assert starts["e1"].raw_input == {"file_path": f, "old_string": "beta", "new_string": "gamma"}
    done = {u.tool_call_id: u for u in editor.of("tool_call_update") if u.status}
    assert done["r1"].status == "completed" and done["e1"].status == "completed"
    diff = [c for c in done["e1"].content if c.type == "diff"][0]
    assert (diff.path, diff.old_text, diff.new_text) == (f, "beta", "gamma")
    # Edit needed approval: asked once, about the announced call, with the four options
    assert len(editor.permissions) == 1
    asked = editor.permissions[0]
    assert asked.tool_call.tool_call_id == "e1"
    shown = asked.tool_call.content[0]  # the editor shows the diff it is asked to approve
    assert (shown.type, shown.path, shown.old_text, shown.new_text) == ("diff", f, "beta", "gamma")
    assert [o.kind for o in asked.options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert "Looking." in editor.agent_text() and "gamma now" in editor.agent_text()
    # the CLI's transcript: the same session, paired, valid
    h = transcript(tmp_path, sid, work)
    check_resumable(h)
    assert len(requests) == 3 and h[0]["content"][0]["text"] == "change beta to gamma"


def test_streaming_thinking_plan_and_commands(work: Path, tmp_path: Path) -> None:
    """Text arrives as several agent_message_chunks, thinking as agent_thought_chunk, TodoWrite as
    a plan; the custom commands and skills as available_commands_update, and `/name` expands."""
    (work / ".loopwright" / "commands").mkdir(parents=True)
    (work / ".loopwright" / "commands" / "greet.md").write_text(
        "---\ndescription: say hello\nallowed-tools: Bash(echo:*)\n---\nSay hello to $ARGUMENTS. !`echo ACP-INLINE`")
    hook = work / "expansion-hook.sh"  # UserPromptExpansion fires in ACP too (issue 42)
    hook.write_text(f'#!/bin/sh\ncat > "{work}/expansion.json"\n')
    hook.chmod(0o755)
    (work / ".loopwright" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptExpansion": [
        {"hooks": [{"type": "command", "command": str(hook)}]}]}}))
    skill = work / ".loopwright" / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: tidy the notes\n---\nTidy.")
    todos = [{"content": "read", "status": "completed", "activeForm": "reading"},
             {"content": "write", "status": "in_progress", "activeForm": "writing"}]
    turns = [
        [{"type": "thinking", "thinking": "Let me plan this carefully.", "signature": "sig"},
         use("p1", "TodoWrite", todos=todos)],
        [text("Hello there, Ada! " * 20)],
    ]
    editor = Editor()

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("/greet Ada")])
                return r, srv.loop_requests

    r, requests = run(go())
    assert r.stop_reason == "end_turn"
    said, expanded = requests[0].body["messages"][0]["content"][:2]  # which command ran, then its text
    assert said["text"] == "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n" \
        "<command-args>Ada</command-args>\n"
    assert expanded["text"].startswith("Say hello to Ada. ACP-INLINE")
    seen = json.loads((work / "expansion.json").read_text())
    assert (seen["command_name"], seen["command_args"], seen["prompt"]) == ("greet", "Ada", "/greet Ada")
    chunks = editor.of("agent_message_chunk")
    assert len(chunks) > 1 and editor.agent_text() == "Hello there, Ada! " * 20
    assert "".join(u.content.text for u in editor.of("agent_thought_chunk")) == "Let me plan this carefully."
    plan = editor.of("plan")[0]
    assert [(e.content, e.status) for e in plan.entries] == [("read", "completed"), ("write", "in_progress")]
    assert editor.of("tool_call")[0].kind == "think"
    cmds = {c.name: c.description for c in editor.of("available_commands_update")[0].available_commands}
    assert cmds["greet"] == "say hello" and cmds["tidy"] == "skill: tidy the notes"


def test_message_display_hooks_rewrite_what_the_editor_shows(work: Path, tmp_path: Path) -> None:
    """A MessageDisplay hook's displayContent is the agent message the editor gets (whole, not
    streamed); the model's own text stays in the history (issue 42)."""
    hook = work / "display.sh"
    answer = {"hookSpecificOutput": {"hookEventName": "MessageDisplay", "displayContent": "SHOWN INSTEAD"}}
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{json.dumps(answer)}'\n")
    hook.chmod(0o755)
    (work / ".loopwright").mkdir(parents=True, exist_ok=True)
    (work / ".loopwright" / "settings.json").write_text(json.dumps({"hooks": {"MessageDisplay": [
        {"hooks": [{"type": "command", "command": str(hook)}]}]}}))
    editor = Editor()

    async def go() -> Any:
        with ScriptedServer([[text("THE MODEL'S WORDS")], [text("again")]], model=MODEL) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("hi")])
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("more")])
                return srv.loop_requests

    requests = run(go())
    assert editor.agent_text() == "SHOWN INSTEADSHOWN INSTEAD"
    assert "THE MODEL'S WORDS" in json.dumps(requests[1].body["messages"])


def test_allow_always_saves_the_dialogs_rule_reject_goes_on(work: Path, tmp_path: Path) -> None:
    """allow_always saves what the interactive dialog saves (.loopwright/settings.local.json) and
    is not asked again; a rejected call is an is_error result and the run goes on; reject_always
    refuses the next such call without asking."""
    f = str(work / "notes.txt")
    turns = [
        [use("r1", "Read", file_path=f)],
        [use("e1", "Edit", file_path=f, old_string="alpha", new_string="ALPHA")],
        [use("e2", "Edit", file_path=f, old_string="beta", new_string="BETA")],   # covered by the saved rule
        [bash("touch made-by-bash", "b1")],                                      # rejected once
        [bash("touch made-by-bash", "b2")],                                      # rejected always
        [bash("touch made-by-bash", "b3")],                                      # refused, not asked
        [text("ok")],
    ]
    editor = Editor(["allow_always", "reject_once", "reject_always"])

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("go")])
                return new.session_id, r, srv.loop_requests

    sid, r, requests = run(go())
    assert r.stop_reason == "end_turn"
    assert (work / "notes.txt").read_text() == "ALPHA\nBETA\n"
    saved = json.loads((work / ".loopwright" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Edit(./**)"]
    thoughts = [u.content.text for u in editor.of("agent_thought_chunk")]
    assert len(thoughts) == 1 and "Edit(./**) saved to" in thoughts[0]  # only what "always" did
    assert [p.tool_call.tool_call_id for p in editor.permissions] == ["e1", "b1", "b2"]
    assert not (work / "made-by-bash").exists()
    results = {b["tool_use_id"]: b for m in transcript(tmp_path, sid, work) if m["role"] == "user"
               for b in m["content"] if b.get("type") == "tool_result"}
    assert not results["e2"].get("is_error")
    assert all(results[k]["is_error"] for k in ("b1", "b2", "b3"))
    assert "asked not to be asked again" in str(results["b2"]["content"])
    assert len(requests) == 7  # the run went on after every refusal
    failed = {u.tool_call_id for u in editor.of("tool_call_update") if u.status == "failed"}
    assert failed == {"b1", "b2", "b3"}


def test_cancel_stops_the_tool_pairs_history_and_the_next_prompt_works(work: Path, tmp_path: Path) -> None:
    pid_file = work / "sleeper.pid"
    turns = [
        [bash(f"echo $$ > {pid_file}; exec sleep 60", "b1")],
        [text("second prompt answered")],
        [use("w1", "Write", file_path=str(work / "new.txt"), content="x")],  # asked; nobody answers
        [text("third prompt answered")],
    ]
    editor = Editor()

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path, "--allowedTools", "Bash") as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                sid = new.session_id
                task = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("sleep")]))
                while not pid_file.exists() or not pid_file.read_text().strip():
                    await asyncio.sleep(0.05)
                pid = int(pid_file.read_text())
                await conn.cancel(session_id=sid)
                first = await task
                alive = await asyncio.to_thread(still_alive, [pid])  # (killed: dying, not waited for)
                second = await conn.prompt(session_id=sid, prompt=[acp.text_block("still there?")])
                asking = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("write")]))
                await editor.permission_event.wait()
                await conn.cancel(session_id=sid)
                third = await asking
                fourth = await conn.prompt(session_id=sid, prompt=[acp.text_block("and now?")])
                return sid, first, second, alive, srv.loop_requests, (third, fourth)

    sid, first, second, alive, requests, (third, fourth) = run(go())
    assert (third.stop_reason, fourth.stop_reason) == ("cancelled", "end_turn")
    assert not (work / "new.txt").exists()
    assert first.stop_reason == "cancelled"
    assert not alive, "the cancelled command's process is still running"
    assert second.stop_reason == "end_turn" and "second prompt answered" in editor.agent_text()
    h = transcript(tmp_path, sid, work)
    check_resumable(h)
    # the second prompt's request carried the paired, interrupted call
    sent = requests[1].body["messages"]
    assert sent[1]["content"][0]["id"] == "b1" and sent[2]["content"][0]["tool_use_id"] == "b1"
    assert sent[2]["content"][0]["is_error"] is True



def test_load_replays_history_and_the_cli_resumes_the_same_session(work: Path, tmp_path: Path) -> None:
    """session/load replays the saved history as session/update, then continues the same session
    id; `loopwright -r ID` continues the same transcript."""
    f = str(work / "notes.txt")
    turns = [
        [use("r1", "Read", file_path=f)],
        [text("It says alpha and beta.")],
        [text("Loaded and continued.")],
        [text("And the CLI too.")],
    ]

    async def first(srv: ScriptedServer) -> str:
        async with connected(Editor(), srv, tmp_path) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("what is in notes.txt?")])
            return str(new.session_id)

    async def second(srv: ScriptedServer, sid: str, editor: Editor) -> Any:
        async with connected(editor, srv, tmp_path) as (conn, _):
            loaded = await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
            replayed = list(editor.updates)
            listed = await conn.list_sessions(cwd=str(work))
            r = await conn.prompt(session_id=sid, prompt=[acp.text_block("and now?")])
            return loaded, replayed, listed, r

    editor = Editor()
    with ScriptedServer(turns, model=MODEL) as srv:
        sid = run(first(srv))
        loaded, replayed, listed, r = run(second(srv, sid, editor))
        cli = subprocess.run([*loopwright_cmd(), "-p", "and the cli?", "-r", sid, "--model", MODEL, "--base-url",
                              srv.url, "--cwd", str(work)], env=agent_env(tmp_path), capture_output=True, text=True,
                             timeout=60)
        requests = srv.loop_requests
    assert cli.returncode == 0, cli.stderr
    assert loaded.modes is not None and r.stop_reason == "end_turn"
    kinds = [u.session_update for sid_, u in replayed if sid_ == sid]
    assert kinds[:4] == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert replayed[0][1].content.text == "what is in notes.txt?"
    assert replayed[1][1].tool_call_id == "r1" and replayed[2][1].status == "completed"
    assert "It says alpha and beta." in replayed[3][1].content.text
    assert sid in [x.session_id for x in listed.sessions]
    # the third request (the editor's) and the fourth (the CLI's) continue the same conversation
    assert [m["role"] for m in requests[2].body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert len(requests[3].body["messages"]) == 7
    h = transcript(tmp_path, sid, work)
    check_resumable(h)
    assert [m for m in h if m["role"] == "user"][-1]["content"][0]["text"] == "and the cli?"


def test_modes_and_models(work: Path, tmp_path: Path) -> None:
    """session/set_mode (and the mode config option) set the next prompt's permission mode;
    the model option changes the model the server is asked for."""
    f = str(work / "notes.txt")
    turns = [
        [use("r1", "Read", file_path=f)],
        [use("e1", "Edit", file_path=f, old_string="alpha", new_string="one")],  # acceptEdits: not asked
        [text("edited")],
        [bash("touch bypassed", "b1")],  # bypassPermissions: not asked
        [text("ran")],
    ]
    editor = Editor()

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                sid = new.session_id
                await conn.set_session_mode(session_id=sid, mode_id="acceptEdits")
                a = await conn.prompt(session_id=sid, prompt=[acp.text_block("edit")])
                opts = await conn.set_config_option(config_id="mode", session_id=sid, value="bypassPermissions")
                opts = await conn.set_config_option(config_id="model", session_id=sid, value="claude-opus-4-6")
                b = await conn.prompt(session_id=sid, prompt=[acp.text_block("run")])
                try:
                    await conn.set_session_mode(session_id=sid, mode_id="yolo")
                    bad = None
                except acp.RequestError as e:
                    bad = e
                return new, a, b, opts, bad, srv.loop_requests

    new, a, b, opts, bad, requests = run(go())
    assert (a.stop_reason, b.stop_reason) == ("end_turn", "end_turn")
    assert editor.permissions == []
    assert (work / "notes.txt").read_text().startswith("one") and (work / "bypassed").exists()
    assert [u.current_mode_id for u in editor.of("current_mode_update")] == ["acceptEdits", "bypassPermissions"]
    models = {o.id: o for o in new.config_options}
    assert models["model"].current_value == MODEL and models["mode"].current_value == "default"
    assert {o.id: o.current_value for o in opts.config_options} == {"mode": "bypassPermissions",
                                                                     "model": "claude-opus-4-6"}
    assert [r.body["model"] for r in requests] == [MODEL] * 3 + ["claude-opus-4-6"] * 2
    assert bad is not None and bad.code == -32602


def test_disable_bypass_permissions_mode_holds_in_acp(work: Path, tmp_path: Path) -> None:
    """permissions.disableBypassPermissionsMode: --permission-mode bypassPermissions starts the
    session in default mode, and session/set_mode to bypassPermissions is refused in Claude Code's
    words (its SDK's set_permission_mode); another mode still changes."""
    off = json.dumps({"permissions": {"disableBypassPermissionsMode": "disable"}})

    async def go() -> Any:
        with ScriptedServer([], model=MODEL) as srv:
            async with connected(Editor(), srv, tmp_path, "--permission-mode", "bypassPermissions",
                                 "--settings", off) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                try:
                    await conn.set_session_mode(session_id=new.session_id, mode_id="bypassPermissions")
                    bad = None
                except acp.RequestError as e:
                    bad = e
                await conn.set_session_mode(session_id=new.session_id, mode_id="acceptEdits")
                return new, bad

    new, bad = run(go())
    assert new.modes.current_mode_id == "default"
    assert bad is not None and bad.code == -32602 and "disabled by settings" in json.dumps(bad.data)


def test_auto_mode_is_offered_and_its_classifier_judges_what_the_rules_would_ask(work: Path, tmp_path: Path) -> None:
    """`auto` is among the modes an editor can pick; set to it, the classifier call (to the same
    server) lets the benign edit run without a question, and the call it marks risky is asked
    of the editor (rejected here: it does not run)."""
    f = str(work / "notes.txt")
    agent = iter([[use("r1", "Read", file_path=f)],
                  [use("e1", "Edit", file_path=f, old_string="alpha", new_string="one")],
                  [bash("touch risky", "b1")], [text("done")]])
    judged: list[str] = []

    def answer(history: list[dict[str, Any]]) -> Any:
        action = classifier_action(history)
        if action is not None:
            judged.append(action.strip().split(":")[0])
            return verdict("ask" if "touch risky" in action else "allow", "s")
        return next(agent)

    editor = Editor(["reject_once"])

    async def go() -> Any:
        with ScriptedServer(answer, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                await conn.set_session_mode(session_id=new.session_id, mode_id="auto")
                done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("edit, then touch")])
                return new, done

    new, done = run(go())
    assert "auto" in {m.id for m in new.modes.available_modes}
    assert "auto" in {o.value for o in {c.id: c for c in new.config_options}["mode"].options}
    assert done.stop_reason == "end_turn"
    assert [u.current_mode_id for u in editor.of("current_mode_update")] == ["auto"]
    assert judged == ["Edit", "Bash"]
    assert (work / "notes.txt").read_text().startswith("one")  # allowed by the classifier, not asked
    assert [p.tool_call.raw_input.get("command") for p in editor.permissions] == ["touch risky"]
    assert not (work / "risky").exists()


def test_client_fs_and_terminal(work: Path, tmp_path: Path) -> None:
    """With the editor's fs and terminal capabilities: Read sees the unsaved buffer, Edit lands in
    it (through fs/write_text_file), Bash runs in the editor's terminal, embedded in the call."""
    f = str(work / "notes.txt")
    turns = [
        [use("r1", "Read", file_path=f)],
        [use("e1", "Edit", file_path=f, old_string="unsaved", new_string="saved")],
        [bash("echo from-the-terminal; exit 3", "b1")],
        [text("done")],
    ]
    editor = Editor(fs=True, terminal=True)
    editor.buffers[f] = "alpha\nunsaved line\n"

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path, "--permission-mode", "bypassPermissions") as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("go")])
                return new.session_id, r, srv.loop_requests

    sid, r, requests = run(go())
    assert r.stop_reason == "end_turn"
    sent = requests[1].body["messages"][2]["content"][0]
    assert "unsaved line" in str(sent["content"])  # the buffer, not the file on disk
    assert editor.writes == [(f, "alpha\nsaved line\n")]
    assert (work / "notes.txt").read_text() == "alpha\nsaved line\n"
    bash_result = requests[3].body["messages"][6]["content"][0]
    assert "from-the-terminal" in str(bash_result["content"]) and "Exit code 3" in str(bash_result["content"])
    assert bash_result["is_error"] is True
    assert list(editor.terms) == ["term-1"]
    done = [u for u in editor.of("tool_call_update") if u.tool_call_id == "b1"]
    assert any(c.type == "terminal" and c.terminal_id == "term-1" for u in done for c in (u.content or []))
    check_resumable(transcript(tmp_path, sid, work))


def test_stop_reasons_and_the_clients_mcp_server(work: Path, tmp_path: Path) -> None:
    """refusal, max_tokens and max_turn_requests as the run ended; the editor's mcpServers join the run.
    An answer still cut off after its continuations (the loop asks for the rest 3 times) is max_tokens."""
    turns = [
        {"content": [text("I can't help with that.")], "stop_reason": "refusal"},
        *[{"content": [text("cut off mid")], "stop_reason": "max_tokens"}] * 4,
        [use("m1", "mcp__tools__echo", text="hi there")],
        [use("m2", "mcp__tools__echo", text="again")],
    ]
    server = s.McpServerStdio(name="tools", command=sys.executable,
                              args=[str(TESTS / "mcp" / "mcp_test_server.py")], env=[])

    editor = Editor()

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path, "--max-turns", "1",
                                 "--allowedTools", "mcp__tools__echo") as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[server])
                out = [(await conn.prompt(session_id=new.session_id, prompt=[acp.text_block(p)])).stop_reason
                       for p in ("a", "b", "c")]
                return out, srv.loop_requests

    reasons, requests = run(go())
    assert reasons == ["refusal", "max_tokens", "max_turn_requests"]
    assert "[loopwright stopped: reached max_turns=1]" in editor.agent_text()  # the limit is visible
    assert "cut off at max_tokens 4 times" in editor.agent_text()
    assert any(t["name"] == "mcp__tools__echo" for t in requests[5].body["tools"])
    echoed = requests[6].body["messages"][-1]["content"][0]
    assert echoed["tool_use_id"] == "m1" and "hi there" in str(echoed["content"])


def _raw_agent(srv: ScriptedServer, home: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*loopwright_cmd(), "acp", "--model", MODEL, "--base-url", srv.url, *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=agent_env(home))


def _call(p: subprocess.Popen[bytes], line: bytes) -> dict[str, Any]:
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(line + b"\n")
    p.stdin.flush()
    while True:
        msg = json.loads(p.stdout.readline())
        if "id" in msg and "method" not in msg:
            return msg  # a response (notifications skipped)


def test_bad_input_gets_json_rpc_errors(work: Path, tmp_path: Path) -> None:
    """An unknown method, a malformed line, bad params, a prompt for an unknown session: each a
    JSON-RPC error; the agent goes on answering."""
    with ScriptedServer([[text("fine")]], model=MODEL) as srv:
        p = _raw_agent(srv, tmp_path)
        try:
            init = _call(p, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}')
            assert init["result"]["protocolVersion"] == 1  # asked for 7: we speak 1
            caps = init["result"]["agentCapabilities"]
            assert caps["loadSession"] is True and caps["promptCapabilities"]["embeddedContext"] is True
            assert caps["promptCapabilities"]["image"] is True
            assert caps["mcpCapabilities"] == {"http": True, "sse": True}
            assert _call(p, b'{"jsonrpc":"2.0","id":2,"method":"session/teleport","params":{}}')["error"]["code"] == -32601
            assert _call(p, b'{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":7}}')["error"]["code"] == -32602
            unknown = _call(p, b'{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"nope",'
                               b'"prompt":[{"type":"text","text":"hi"}]}}')
            assert unknown["error"]["code"] == -32602 and "unknown session" in json.dumps(unknown["error"])
            rel = _call(p, b'{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}')
            assert rel["error"]["code"] == -32602
            assert p.stdin is not None
            p.stdin.write(b'{"jsonrpc": "2.0", "id": 6, "method": \n')  # a torn line: JSON-RPC's parse error
            p.stdin.flush()
            torn = _call(p, b'[1, 2]')  # JSON, but no message: invalid request
            assert torn == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": torn["error"]["message"]}}
            assert "Parse error" in torn["error"]["message"]
            assert p.stdout is not None
            batch = json.loads(p.stdout.readline())
            assert batch["id"] is None and batch["error"]["code"] == -32600
            new = _call(p, json.dumps({"jsonrpc": "2.0", "id": 7, "method": "session/new",
                                       "params": {"cwd": str(work), "mcpServers": []}}).encode())
            sid = new["result"]["sessionId"]
            ok = _call(p, json.dumps({"jsonrpc": "2.0", "id": 8, "method": "session/prompt", "params": {
                "sessionId": sid, "prompt": [{"type": "text", "text": "still fine?"}]}}).encode())
            assert ok["result"]["stopReason"] == "end_turn"
        finally:
            p.kill()
            p.wait()
        assert p.stderr is not None
        err = p.stderr.read().decode()
        assert "skipped a line that is not JSON" in err and "skipped a line that is not a JSON-RPC 2.0 message" in err


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM"])
def test_the_editor_disappearing_mid_run_ends_cleanly(work: Path, tmp_path: Path, how: str) -> None:
    """stdin closes (or SIGTERM comes) while a command runs: the command is stopped, the agent
    exits, and the transcript is valid and resumable."""
    pid_file = work / "sleeper.pid"
    with ScriptedServer([[bash(f"echo $$ > {pid_file}; exec sleep 60", "b1")]], model=MODEL) as srv:
        p = _raw_agent(srv, tmp_path, "--allowedTools", "Bash")
        _call(p, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}')
        new = _call(p, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                                   "params": {"cwd": str(work), "mcpServers": []}}).encode())
        sid = new["result"]["sessionId"]
        assert p.stdin is not None
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
            "sessionId": sid, "prompt": [{"type": "text", "text": "sleep"}]}}).encode() + b"\n")
        p.stdin.flush()
        assert until(lambda: pid_file.exists() and bool(pid_file.read_text().strip()), 60), "the command never ran"
        pid = int(pid_file.read_text())
        if how == "SIGTERM":
            p.send_signal(signal.SIGTERM)
        else:
            p.stdin.close()  # the editor is gone
        assert p.wait(timeout=30) == 0
        assert not still_alive([pid])
    h = transcript(tmp_path, sid, work)
    check_resumable(h)
    assert h[-1]["content"][0]["tool_use_id"] == "b1" and h[-1]["content"][0]["is_error"] is True


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    p = subprocess.run([*loopwright_cmd(), "acp", "--model", MODEL, "--no-session-persistence"],
                       capture_output=True, text=True, env=agent_env(tmp_path), timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "drop --no-session-persistence" in p.stderr
    p = subprocess.run([*loopwright_cmd(), "acp", "--model", "nonsense:x"], capture_output=True, text=True,
                       env=agent_env(tmp_path), timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "unknown model provider" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_without_the_extra_one_line_names_it(tmp_path: Path) -> None:
    # find_spec is what extras.require asks: here it does not find the library, as on a plain
    # install (.ci/plain_install.py runs `loopwright acp` on a real one)
    code = ("import sys, importlib.util as u; real = u.find_spec; "
            "u.find_spec = lambda n, *a: None if n == 'acp' else real(n, *a); "
            "from loopwright.cli import main; sys.exit(main(['acp']))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=agent_env(tmp_path),
                       timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == ['loopwright: loopwright acp needs the acp extra: pip install "loopwright[acp]"']


def test_with_the_sandbox_on_bash_runs_locally_inside_it(work: Path, tmp_path: Path) -> None:
    """The editor offers terminals, but the OS sandbox is on: the command runs in loopwright's
    sandbox (a write outside the working directory fails), not in the editor's terminal."""
    from loopwright.sandbox import unavailable_reason

    if (why := unavailable_reason()) is not None:
        pytest.skip(f"OS sandbox unavailable: {why}")
    outside = tmp_path / "outside.txt"
    turns = [[bash(f"echo inside > inside.txt; touch {outside}; echo done", "b1")], [text("ok")]]
    editor = Editor(terminal=True)

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path, "--sandbox", "--permission-mode",
                                 "bypassPermissions") as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("go")])
                return r, srv.loop_requests

    r, requests = run(go())
    assert r.stop_reason == "end_turn"
    assert editor.terms == {}  # not the editor's terminal
    assert (work / "inside.txt").read_text() == "inside\n" and not outside.exists()
    assert "done" in json.dumps(requests[1].body["messages"][-1])


def test_prompt_content_blocks(work: Path, tmp_path: Path) -> None:
    """Text, a resource link (its path), an embedded text resource (inline) and an image (an image
    block the model sees: the agent advertises image: true) become the run's prompt."""
    f = work / "notes.txt"
    blocks = [acp.text_block("look at these"), acp.resource_link_block("notes.txt", f.as_uri()),
              acp.resource_block(acp.embedded_text_resource("file:///sel.py", "def selected(): pass")),
              acp.image_block("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", "image/png")]

    async def go() -> Any:
        with ScriptedServer([[text("seen")]], model=MODEL) as srv:
            async with connected(Editor(), srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=blocks)
                return r, srv.loop_requests

    r, requests = run(go())
    assert r.stop_reason == "end_turn"
    sent = requests[0].body["messages"][0]["content"][0]["text"]
    assert sent.startswith("look at these\n@" + str(f) + "\n")
    assert '<context ref="file:///sel.py">\ndef selected(): pass\n</context>' in sent
    images = [b for b in requests[0].body["messages"][0]["content"] if b.get("type") == "image"]
    assert len(images) == 1 and images[0]["source"] == {"type": "base64", "media_type": "image/png",
                                                        "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"}


def test_exit_plan_mode_asks_the_editor_and_switches_the_mode(work: Path, tmp_path: Path) -> None:
    """In plan mode, ExitPlanMode's plan goes to the editor; "accept edits" switches the run (and
    the session) to acceptEdits, so the next edit runs without a question."""
    new_file = str(work / "plan-done.txt")
    turns = [
        [use("x1", "ExitPlanMode", plan="1. write plan-done.txt")],
        [use("w1", "Write", file_path=new_file, content="done\n")],
        [text("wrote it")],
    ]
    editor = Editor(["acceptEdits"])

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path, "--permission-mode", "plan") as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("plan, then do")])
                return new, r

    new, r = run(go())
    assert new.modes.current_mode_id == "plan" and r.stop_reason == "end_turn"
    assert len(editor.permissions) == 1  # the plan; the Write after it was not asked about
    asked = editor.permissions[0].tool_call
    assert (asked.tool_call_id, asked.kind) == ("x1", "switch_mode")
    assert "1. write plan-done.txt" in asked.content[0].content.text
    assert [u.current_mode_id for u in editor.of("current_mode_update")] == ["acceptEdits"]
    assert Path(new_file).read_text() == "done\n"


def test_ask_user_question_through_the_editor(work: Path, tmp_path: Path) -> None:
    """AskUserQuestion's choices as a permission request; the one picked is the model's answer."""
    q = {"question": "Which colour?", "header": "Colour", "multiSelect": False,
         "options": [{"label": "red", "description": "warm"}, {"label": "blue", "description": "cool"}]}
    turns = [[use("q1", "AskUserQuestion", questions=[q])], [text("blue it is")]]
    editor = Editor(["choice-1"])

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                r = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("ask me")])
                return r, srv.loop_requests

    r, requests = run(go())
    assert r.stop_reason == "end_turn"
    asked = editor.permissions[0]
    assert asked.tool_call.tool_call_id == "q1" and asked.tool_call.title == "Which colour?"
    assert [o.name for o in asked.options] == ["red: warm", "blue: cool", "Skip the questions"]
    answer = requests[1].body["messages"][-1]["content"][0]
    assert answer["tool_use_id"] == "q1" and not answer.get("is_error") and "blue" in json.dumps(answer)


def test_an_untrusted_workspace_is_narrowed_and_the_editor_told(work: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A committed project settings file that allows Bash and runs a hook: before trust the hook
    never runs, the allow rule is not taken (Bash is asked), and the editor reads why."""
    monkeypatch.delenv("LOOPWRIGHT_TRUSTED_DIRS", raising=False)  # this workspace is not trusted
    marker = tmp_path / "PWNED"
    (work / ".loopwright").mkdir(exist_ok=True)
    (work / ".loopwright" / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}}))
    turns = [[bash("touch made-by-bash", "b1")], [text("ok")]]
    editor = Editor(["reject_once"])

    async def go() -> Any:
        with ScriptedServer(turns, model=MODEL) as srv:
            async with connected(editor, srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                return await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("go")])

    r = run(go())
    assert r.stop_reason == "end_turn"
    assert not marker.exists() and not (work / "made-by-bash").exists()
    assert [p.tool_call.tool_call_id for p in editor.permissions] == ["b1"]  # the project's allow rule not taken
    told = "".join(u.content.text for u in editor.of("agent_thought_chunk"))
    assert "is not trusted" in told and "loopwright trust" in told and "hook" in told.lower()


def test_the_library_loads_without_reading_docstrings_or_building_models_and_pydantic_is_left_as_it_was(
        tmp_path: Path) -> None:
    """acp_main imports the library with its models deferred and without their fields'
    docstrings (~half of an editor's wait at each session's start); they validate and serialize
    as the library's own, and a model declared afterwards is pydantic's as usual."""
    code = r'''
import sys, json
import pydantic
declared = pydantic.ConfigDict
from loopwright.acp import load_library
load_library()
assert pydantic.ConfigDict is declared
from acp import schema as s
cfg = s.InitializeRequest.model_config
assert cfg["defer_build"] is True and cfg["use_attribute_docstrings"] is False and cfg["populate_by_name"] is True
assert s.ToolCallUpdate.model_fields["tool_call_id"].description is None  # (a docstring in the library's source)
req = s.InitializeRequest.model_validate({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}})
out = s.InitializeResponse(protocol_version=1, agent_capabilities=s.AgentCapabilities(load_session=True))
try:
    s.ToolCall.model_validate({"title": "no id"})
    raise SystemExit("a tool call without its id was accepted")
except pydantic.ValidationError:
    pass

class Later(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(use_attribute_docstrings=True)
    x: int = 0
    """the docstring"""

print(json.dumps({"req": req.client_capabilities.fs.read_text_file, "out": out.model_dump(by_alias=True, exclude_none=True),
                  "later": Later.model_fields["x"].description, "built": type(Later.__pydantic_validator__).__name__}))
'''
    script = tmp_path / "load.py"  # (a file: pydantic reads docstrings from the source)
    script.write_text(code)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["req"] is True
    assert got["out"]["protocolVersion"] == 1 and got["out"]["agentCapabilities"]["loadSession"] is True
    assert got["later"] == "the docstring" and got["built"] == "SchemaValidator"


def test_picking_a_model_fires_the_model_switch_hooks(work: Path, tmp_path: Path) -> None:
    """The editor's model pick is a model switch (`source` "sdk", as Claude Code's headless
    set_model its ACP adapters call): a PreModelSwitch hook's deny refuses it (an error naming the
    hook, the model unchanged); an allowed pick runs PostModelSwitch, whose context goes with the
    next prompt."""
    log = tmp_path / "hooks.log"
    deny = {"hookSpecificOutput": {"hookEventName": "PreModelSwitch", "permissionDecision": "deny",
                                   "permissionDecisionReason": "no haiku here"}}
    context = {"hookSpecificOutput": {"hookEventName": "PostModelSwitch", "additionalContext": "SWITCHED CTX"}}
    pre, post = tmp_path / "pre.sh", tmp_path / "post.sh"
    pre.write_text(f"#!/bin/sh\nd=$(cat); echo \"$d\" >> {log}\n"
                   f"case \"$d\" in *'\"to_model\":\"claude-haiku-4-5\"'*) echo '{json.dumps(deny)}';; esac\n")
    post.write_text(f"#!/bin/sh\ncat >> {log}; echo >> {log}\necho '{json.dumps(context)}'\n")
    pre.chmod(0o755)
    post.chmod(0o755)
    settings = {"hooks": {"PreModelSwitch": [{"hooks": [{"type": "command", "command": str(pre)}]}],
                          "PostModelSwitch": [{"hooks": [{"type": "command", "command": str(post)}]}]}}

    async def go() -> Any:
        with ScriptedServer([[text("hello")]], model=MODEL) as srv:
            async with connected(Editor(), srv, tmp_path, "--settings", json.dumps(settings)) as (conn, _):
                sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
                with pytest.raises(acp.RequestError) as refused:
                    await conn.set_config_option(config_id="model", session_id=sid, value="claude-haiku-4-5")
                opts = await conn.set_config_option(config_id="model", session_id=sid, value="claude-sonnet-4-5")
                await conn.prompt(session_id=sid, prompt=[acp.text_block("hi")])
                return refused.value, opts, srv.loop_requests

    refused, opts, requests = run(go())
    assert "Model switch blocked by a PreModelSwitch hook: no haiku here" in json.dumps(refused.data)
    assert {o.id: o.current_value for o in opts.config_options}["model"] == "claude-sonnet-4-5"
    assert requests[0].body["model"] == "claude-sonnet-4-5" and "SWITCHED CTX" in json.dumps(requests[0].body["messages"])
    seen = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    assert [(d["hook_event_name"], d["to_model"], d["source"]) for d in seen] == [
        ("PreModelSwitch", "claude-haiku-4-5", "sdk"), ("PreModelSwitch", "claude-sonnet-4-5", "sdk"),
        ("PostModelSwitch", "claude-sonnet-4-5", "sdk")]
    assert seen[1]["from_model"] == MODEL
