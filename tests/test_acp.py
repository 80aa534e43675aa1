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

from helpers import bash, cli_env, loopwright_cmd, text, use
from loopwright.invariant import check
from loopwright.sessions import JsonlSessionStore
from loopwright.testing import ScriptedServer

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
                                                      client_capabilities=editor.caps()), 30)
        assert init.protocol_version == acp.PROTOCOL_VERSION
        yield conn, proc


def transcript(home: Path, sid: str, cwd: Path) -> list[dict[str, Any]]:
    return JsonlSessionStore(home / ".loopwright" / "projects").load(sid, cwd).history


def paired(h: list[dict[str, Any]]) -> None:
    """Inv holds for the saved history with the next prompt appended (what the model would see)."""
    check([*h, {"role": "user", "content": [{"type": "text", "text": "next"}]}] if h[-1]["role"] == "assistant" else h)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    (d / "notes.txt").write_text("alpha\nbeta\n")
    return d


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
    assert [o.kind for o in asked.options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert "Looking." in editor.agent_text() and "gamma now" in editor.agent_text()
    # the CLI's transcript: the same session, paired, valid
    h = transcript(tmp_path, sid, work)
    paired(h)
    assert len(requests) == 3 and h[0]["content"][0]["text"] == "change beta to gamma"


def test_streaming_thinking_plan_and_commands(work: Path, tmp_path: Path) -> None:
    """Text arrives as several agent_message_chunks, thinking as agent_thought_chunk, TodoWrite as
    a plan; the custom commands and skills as available_commands_update, and `/name` expands."""
    (work / ".loopwright" / "commands").mkdir(parents=True)
    (work / ".loopwright" / "commands" / "greet.md").write_text("---\ndescription: say hello\n---\nSay hello to $ARGUMENTS.")
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
    assert requests[0].body["messages"][0]["content"][0]["text"].startswith("Say hello to Ada.")
    chunks = editor.of("agent_message_chunk")
    assert len(chunks) > 1 and editor.agent_text() == "Hello there, Ada! " * 20
    assert "".join(u.content.text for u in editor.of("agent_thought_chunk")) == "Let me plan this carefully."
    plan = editor.of("plan")[0]
    assert [(e.content, e.status) for e in plan.entries] == [("read", "completed"), ("write", "in_progress")]
    assert editor.of("tool_call")[0].kind == "think"
    cmds = {c.name: c.description for c in editor.of("available_commands_update")[0].available_commands}
    assert cmds["greet"] == "say hello" and cmds["tidy"] == "skill: tidy the notes"


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
                alive = _alive(pid)
                second = await conn.prompt(session_id=sid, prompt=[acp.text_block("still there?")])
                return sid, first, second, alive, srv.loop_requests

    sid, first, second, alive, requests = run(go())
    assert first.stop_reason == "cancelled"
    assert not alive, "the cancelled command's process is still running"
    assert second.stop_reason == "end_turn" and "second prompt answered" in editor.agent_text()
    h = transcript(tmp_path, sid, work)
    paired(h)
    # the second prompt's request carried the paired, interrupted call
    sent = requests[-1].body["messages"]
    assert sent[1]["content"][0]["id"] == "b1" and sent[2]["content"][0]["tool_use_id"] == "b1"
    assert sent[2]["content"][0]["is_error"] is True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")
