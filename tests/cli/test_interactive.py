"""Interactive mode in a real terminal: `loopwright` run inside tmux against a scripted model.

One session walks through: a prompt and its trace; Esc during a long Bash call (the call is
interrupted and its process killed); a message typed while a tool runs (delivered after it,
in the same turn); a permission question answered at the prompt; Esc during a model call;
slash commands; Ctrl-C twice to exit. Every wait polls the pane with a deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.invariant import holds_final
from loopwright.sessions import load_transcript
from tests.helpers import LOOPWRIGHT_BIN, until

# only the tests that drive a real terminal need tmux; the Repl tests run in-process
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
pytest.importorskip("loopwright.tools.builtin", reason="the CLI needs the built-in tools")

SLEEP = "sleep 31.7"  # a unique command line, to find its process


WAIT = 60.0  # generous: the tmux tests share 2 cores with everything else (load 7-11 seen)


class Term:
    """A tmux pane on a private tmux server (`-L`, one per Term): no other test's `kill-server`,
    nor the user's own tmux, can take its session away or be touched by it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.socket = f"lwt-{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              timeout=30).stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.name, "-l", text)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", self.name)

    def wait(self, needle: str, timeout: float = WAIT, count: int = 1) -> str:
        end = time.monotonic() + timeout
        while True:
            s = self.screen()
            if s.count(needle) >= count:
                return s
            if time.monotonic() > end:
                raise AssertionError(f"{needle!r} (x{count}) did not appear; screen:\n{s}")
            time.sleep(0.05)

    def wait_prompt(self, runs: int, timeout: float = WAIT) -> None:
        """Wait until `runs` runs have ended and the empty prompt is drawn again (a line typed
        earlier, while the run ends, would be queued for it, not answered as a prompt of its own:
        tests/cli/test_typeahead.py)."""
        def ready() -> bool:
            s = self.screen()
            prompts = [ln.rstrip() for ln in s.splitlines() if ln.startswith("›")]
            return s.count("● success") >= runs and bool(prompts) and prompts[-1] == "›"
        if not until(ready, timeout):
            raise AssertionError(f"the prompt was not drawn again after run {runs}; screen:\n{self.screen()}")


def exit_status(path: Path, seconds: float) -> str:
    """The exit status the shell wrote to `path` after loopwright ended ('' if it did not)."""
    until(lambda: path.exists() and bool(path.read_text().strip()), seconds)
    return path.read_text().strip() if path.exists() else ""


def pid_of(fragment: str) -> int:
    """The pid of the loopwright process whose command line contains `fragment`."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            argv0 = cmd.split(" ", 1)[0]
            if fragment in cmd and "python" in Path(argv0).name:  # not the shell that started it
                return int(d)
    raise AssertionError(f"no process with {fragment!r}")


def running(cmdline: str) -> bool:
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").strip() == cmdline.encode():
                    return True
            except OSError:
                pass
    return False


@pytest.fixture()
def term(tmp_path: Path) -> Iterator[tuple[Term, Path]]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        [{"type": "text", "text": "running a long command"},
         {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": SLEEP}}],
        [{"type": "tool_use", "id": "b2", "name": "Bash", "input": {"command": "sleep 2; echo slept-ok"}}],
        [{"type": "text", "text": "all done here"}],
        [{"type": "tool_use", "id": "w1", "name": "Write",
          "input": {"file_path": str(work / "new.txt"), "content": "hello\n"}}],
        [{"type": "text", "text": "wrote the file"}],
        {"content": [{"type": "text", "text": "too slow"}], "delay": 60},
        [{"type": "tool_use", "id": "b3", "name": "Bash", "input": {"command": SLEEP}}],
    ]))
    name = f"lw-{uuid.uuid4().hex[:8]}"
    t = Term(name)
    env = f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={home}"
    t.tmux("new-session", "-d", "-s", name, "-x", "150", "-y", "50", "-c", str(work),
           f"{env} {LOOPWRIGHT_BIN} --model scripted:{script}; echo $? > {tmp_path / 'exit_status'}")
    t.tmux("set-option", "-t", name, "remain-on-exit", "on")
    try:
        yield t, tmp_path
    finally:
        t.tmux("kill-session", "-t", name)


@pytest.mark.e2e
@needs_tmux
def test_interactive_session_in_tmux(term: tuple[Term, Path]) -> None:
    t, tmp = term
    t.wait("/help for commands")

    # 1. a prompt, its trace, then Esc while Bash sleeps: interrupted, process gone, prompt back
    t.type("run the long thing")
    t.keys("Enter")
    t.wait(f"⏺ Bash({SLEEP})")
    assert until(lambda: running(SLEEP), WAIT)
    t.keys("Escape")
    s = t.wait("● error_during_execution")
    assert "✗ Bash: Interrupted by user" in s and "interrupted by user" in s
    assert until(lambda: not running(SLEEP), 25), "the interrupted command's process is still running"

    # 2. type while a tool runs: queued, then delivered after the tool's result, same turn
    t.type("now the short one")
    t.keys("Enter")
    t.wait("⏺ Bash(sleep 2; echo slept-ok)")
    t.type("also say hi")
    t.keys("Enter")
    t.wait("↳ queued: also say hi")
    s = t.wait("all done here")
    assert s.index("✓ Bash: slept-ok") < s.index("✉ queued message: also say hi") < s.index("all done here")
    t.wait_prompt(1)

    # 3. a permission question answered in its dialog (tests/cli/test_interactive_dialog.py has the rest)
    t.type("write a file")
    t.keys("Enter")
    t.wait("Do you want to allow this Write?")
    t.wait("Esc = No")  # armed: it takes keys now
    t.type("1")
    t.wait("wrote the file")
    assert (tmp / "work" / "new.txt").read_text() == "hello\n"
    t.wait_prompt(2)

    # 4. Esc during a (60 s) model call ends the run at once with h intact
    t.type("one more")
    t.keys("Enter")
    t.wait("working…")
    t.keys("Escape")
    t.wait("● error_during_execution", count=2)

    # 5. Ctrl-C during a tool call interrupts it too
    t.type("and again")
    t.keys("Enter")
    t.wait(f"⏺ Bash({SLEEP})", count=2)
    t.keys("C-c")
    t.wait("● error_during_execution", count=3)
    t.wait("✗ Bash: Interrupted by user", count=2)

    # 6. slash commands, and the input history (Up recalls the last line)
    t.type("/cost")
    t.keys("Enter")
    t.wait("5 prompts")
    t.type("/rewind")
    t.keys("Enter")
    t.wait("'write a file'")
    t.keys("Up")
    t.wait("› /rewind", count=2)

    # the transcript: queued text in the same user message as the tool result; Inv holds
    path = next((tmp / "home" / "projects").rglob("*.jsonl"))
    loaded = load_transcript(path)
    assert holds_final(loaded.history)
    b2 = next(m for m in loaded.history if m["role"] == "user" and m["content"][0].get("tool_use_id") == "b2")
    assert b2["content"][1] == {"type": "text", "text": "also say hi"}
    one_more = {"role": "user", "content": [{"type": "text", "text": "one more"}]}
    assert loaded.history[-4] == one_more  # the cancelled model call left no trace

    # 7. Ctrl-C clears a typed line; twice at an empty prompt exits cleanly
    t.keys("C-c")
    time.sleep(0.3)
    assert "press Ctrl-C again" not in t.screen()
    t.keys("C-c")
    t.wait("press Ctrl-C again")
    t.keys("C-c")
    t.wait("bye")
    # the exit status, written by the shell that ran loopwright (tmux's pane_dead_status can
    # stay empty for a while on a loaded machine)
    assert exit_status(tmp / "exit_status", 30) == "0"


def test_streamed_text_is_shown_line_by_line_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Text deltas are printed as whole lines as they arrive; the finished message does not repeat them."""
    import io

    from loopwright.blocks import TextBlock
    from loopwright.cli.interactive import Repl
    from loopwright.cli.render import TraceRenderer
    from loopwright.messages import AssistantMessage, StreamEvent
    from loopwright.options import AgentOptions

    repl = Repl(AgentOptions(model="scripted:unused.json", cwd=tmp_path))
    repl.renderer = TraceRenderer(io.StringIO(), spinner=False)

    def delta(s: str) -> StreamEvent:
        return StreamEvent({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": s}})

    repl.show(delta("alpha li"))
    assert capsys.readouterr().out == ""  # no newline yet: nothing printed
    repl.show(delta("ne\nbeta"))
    assert capsys.readouterr().out == "  alpha line\n"  # printed before the message is complete
    repl.show(AssistantMessage([TextBlock("alpha line\nbeta")], "m", "end_turn"))
    assert capsys.readouterr().out == "  beta\n"
    assert "alpha" not in repl.renderer.out.getvalue()  # type: ignore[attr-defined]


@pytest.mark.e2e
@needs_tmux
def test_interactive_against_the_loopback_api_server(tmp_path: Path) -> None:
    """`loopwright --model claude-... --base-url` in tmux: streamed multi-line text, shown once."""
    from loopwright.testing import ScriptedServer

    work = tmp_path / "work"
    work.mkdir()
    reply = [{"type": "text", "text": "alpha line from the server\nbeta line from the server\ngamma line"}]
    with ScriptedServer([reply]) as srv:
        name = f"lw-{uuid.uuid4().hex[:8]}"
        t = Term(name)
        env = (f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={tmp_path / 'home'} "
               f"ANTHROPIC_API_KEY=test")
        t.tmux("new-session", "-d", "-s", name, "-x", "150", "-y", "50", "-c", str(work),
               f"{env} {LOOPWRIGHT_BIN} --model claude-sonnet-4-5 --base-url {srv.url}")
        try:
            t.wait("/help for commands")
            t.type("hello")
            t.keys("Enter")
            s = t.wait("● success")
            for line in ("alpha line from the server", "beta line from the server", "gamma line"):
                assert s.count(line) == 1, s
            assert s.index("alpha line") < s.index("gamma line") < s.index("● success")
            t.type("/exit")
            t.keys("Enter")
            t.wait("bye")
        finally:
            t.tmux("kill-session", "-t", name)


def test_slash_commands_rewind_resume_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The REPL's commands on a real persisted session (driven without a terminal)."""
    import asyncio
    import io

    import loopwright as lw
    from loopwright.cli.interactive import Repl
    from loopwright.cli.render import TraceRenderer
    from loopwright.tools.builtin import make_write_tool

    work = tmp_path / "work"
    work.mkdir()
    target = work / "made.txt"
    model = lw.ScriptedModel([
        [{"type": "text", "text": "first answer"}],
        [{"type": "tool_use", "id": "w", "name": "Write", "input": {"file_path": str(target), "content": "x\n"}}],
        [{"type": "text", "text": "wrote it"}],
        [{"type": "text", "text": "after rewind"}],
    ])
    options = lw.AgentOptions(model=model, tools=[make_write_tool()], cwd=work, sessions_dir=tmp_path / "s",
                              persist_session=True, permission_mode="bypassPermissions")

    async def go() -> None:
        repl = Repl(options)
        repl.renderer = TraceRenderer(io.StringIO(), spinner=False)
        await repl.run_turn("hello")
        await repl.run_turn("write the file")
        assert target.exists()
        sid = repl.client.session_id
        assert await repl.command("/cost")
        assert "2 prompts" in capsys.readouterr().out
        assert await repl.command("/rewind")
        listing = capsys.readouterr().out
        assert "'hello'" in listing and "'write the file'  (1 files)" in listing
        assert await repl.command("/rewind 2")
        out = capsys.readouterr().out
        assert "deleted" in out and "not tracked" in out and not target.exists()
        await repl.run_turn("something else")
        assert repl.client.session_id == sid
        assert repl.client.history is not None and [m["content"][0].get("text") for m in repl.client.history] == [
            "hello", "first answer", "something else", "after rewind"]
        assert await repl.command("/clear")
        assert repl.client.history is None
        assert await repl.command("/resume")
        assert sid is not None and sid[:8] in capsys.readouterr().out
        assert await repl.command("/resume 1")
        assert "4 messages" in capsys.readouterr().out
        assert await repl.command("/nope")
        assert "unknown command" in capsys.readouterr().out
        assert not await repl.command("/exit")

    asyncio.run(go())


def test_long_answers_are_shown_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from loopwright.blocks import TextBlock
    from loopwright.cli.interactive import Repl
    from loopwright.cli.render import TraceRenderer
    from loopwright.messages import AssistantMessage
    from loopwright.options import AgentOptions

    repl = Repl(AgentOptions(model="scripted:unused.json", cwd=tmp_path))
    repl.renderer = TraceRenderer(io.StringIO(), spinner=False)
    long = "\n".join(f"line {i} " + "x" * 100 for i in range(20))
    repl.show(AssistantMessage([TextBlock(long)], "m", "end_turn"))
    out = capsys.readouterr().out
    assert out == "".join(f"  line {i} " + "x" * 100 + "\n" for i in range(20))


def test_always_approves_one_bash_command_not_every_one(tmp_path: Path) -> None:
    """"Don't ask again" approves the suggested prefix rule (or, with none, that exact call)."""
    import asyncio

    from loopwright import Allow, Deny
    from loopwright.cli.interactive import Repl
    from loopwright.options import AgentOptions

    repl = Repl(AgentOptions(model="scripted:unused.json", cwd=tmp_path))

    async def ask(name: str, tool_input: dict[str, str], key: str | None) -> object:
        task = asyncio.ensure_future(repl.ask_permission(name, tool_input))
        for _ in range(3000):  # the preview is built in a thread (up to 30 s: a loaded machine)
            await asyncio.sleep(0.01)
            if task.done() or repl.asker.dialog is not None:
                break
        if key is None:  # no question must be asked: it is already approved
            assert task.done() and repl.asker.dialog is None
        else:
            assert repl.asker.dialog is not None
            repl.asker.dialog.type(key)
        return await task

    async def go() -> None:
        assert isinstance(await ask("Bash", {"command": "npm test"}, "2"), Allow)
        assert repl.asker.granted.rules == ("Bash(npm test:*)",)
        assert isinstance(await ask("Bash", {"command": "npm test -- -u"}, None), Allow)  # remembered
        assert isinstance(await ask("Bash", {"command": "npm publish"}, "3"), Deny)  # asked again
        assert isinstance(await ask("Bash", {"command": "sudo make"}, "2"), Allow)  # no safe prefix: this call
        assert isinstance(await ask("Bash", {"command": "sudo make"}, None), Allow)
        assert isinstance(await ask("Bash", {"command": "sudo make install"}, "3"), Deny)

    asyncio.run(go())


@pytest.mark.e2e
@needs_tmux
def test_sigterm_cancels_the_running_tool_and_exits(tmp_path: Path) -> None:
    """SIGTERM while Bash runs: the command's process group is killed and loopwright exits 143."""
    import signal

    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps([[{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": SLEEP}}],
                                  [{"type": "text", "text": "never"}]]))
    name = f"lw-{uuid.uuid4().hex[:8]}"
    t = Term(name)
    env = f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={home}"
    t.tmux("new-session", "-d", "-s", name, "-x", "150", "-y", "50", "-c", str(work),
           f"{env} {LOOPWRIGHT_BIN} --model scripted:{script} --permission-mode bypassPermissions; "
           f"echo $? > {tmp_path / 'exit_status'}")
    t.tmux("set-option", "-t", name, "remain-on-exit", "on")
    try:
        t.wait("/help for commands")
        t.type("go")
        t.keys("Enter")
        t.wait(f"⏺ Bash({SLEEP})")
        assert until(lambda: running(SLEEP), WAIT)
        os.kill(pid_of(f"scripted:{script}"), signal.SIGTERM)
        assert exit_status(tmp_path / "exit_status", 20) == str(128 + signal.SIGTERM), t.screen()
        assert until(lambda: not running(SLEEP), 25), "the running command survived SIGTERM"
    finally:
        t.tmux("kill-session", "-t", name)
