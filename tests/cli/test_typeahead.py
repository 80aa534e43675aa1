"""Typeahead in the interactive session: keys typed while a run works, prints or ends reach the
prompt as typed (cli/terminal.py keeps the terminal raw for the whole session), in a real terminal
(tmux) against a scripted model; and the terminal's own modes are back after the exit.

Before, every line printed above the live prompt ran with the terminal in its cooked modes: keys
typed meanwhile were echoed raw into the answer and Enter came as a newline the next prompt
inserted, so the typed prompt was never sent (the race 211e62b and 66bb30d waited out in tests).
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import shutil
import termios
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopwright.sessions import load_transcript
from tests.cli.test_interactive import WAIT, Term, exit_status
from tests.helpers import LOOPWRIGHT_BIN, until

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
pytest.importorskip("loopwright.tools.builtin", reason="the CLI needs the built-in tools")

# A long answer: printing it above the prompt takes a while (a fraction of a second: 1.4 MB through tmux), the
# moment keys typed at a run's end used to meet the cooked terminal.
ROWS = "\n".join(f"row {i:05d} " + "x" * 60 for i in range(20000))


class Session:
    """loopwright in a tmux pane, started by a shell that saves `stty -a` before and after it."""

    def __init__(self, tmp: Path, turns: list[Any], *args: str) -> None:
        self.tmp, self.work = tmp, tmp / "work"
        self.work.mkdir()
        (tmp / "script.json").write_text(json.dumps(turns))
        self.name = f"lw-{uuid.uuid4().hex[:8]}"
        self.t = Term(self.name)
        env = f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={tmp / 'home'}"
        conf = tmp / "tmux.conf"  # the whole long answer stays in the scrollback (a raw echo is found)
        conf.write_text("set -g history-limit 50000\n")
        self.t.tmux("-f", str(conf), "new-session", "-d", "-s", self.name, "-x", "150", "-y", "50", "-c", str(self.work),
                    f"stty -g > {tmp / 'before'}; {env} {LOOPWRIGHT_BIN} --model scripted:{tmp / 'script.json'} "
                    f"{' '.join(args)}; s=$?; stty -g > {tmp / 'after'}; stty -a > {tmp / 'after_a'}; "
                    f"echo $s > {tmp / 'exit_status'}")
        self.t.tmux("set-option", "-t", self.name, "remain-on-exit", "on")

    def printing(self, needle: str) -> None:
        """Wait for `needle` on the visible pane, polling it as fast as tmux answers: keys typed
        next come while the rest of a long print is still being written, or just after it. (The
        needle must be on the pane at any moment of the print and after it: 'row 0' was printed
        past before the first look once, at the fresh-clone run's load, and never seen again.)"""
        assert until(lambda: needle in self.t.tmux("capture-pane", "-p", "-t", self.name), WAIT), self.t.screen()

    def whole(self) -> str:
        """The whole scrollback (the long answer scrolls far up)."""
        return self.t.tmux("capture-pane", "-p", "-J", "-S", "-50000", "-t", self.name)

    def prompts_sent(self) -> list[str]:
        """The user's texts in the session's transcript, in order."""
        path = next((self.tmp / "home" / "projects").rglob("*.jsonl"))
        return [b["text"] for m in load_transcript(path).history if m["role"] == "user" and isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "text"]

    def exit_restores_the_terminal(self) -> None:
        """Ctrl-D at the empty prompt ends the session with status 0 and the shell's modes as before."""
        self.t.keys("C-d")
        assert exit_status(self.tmp / "exit_status", WAIT) == "0", self.t.screen()
        assert (self.tmp / "after").read_text() == (self.tmp / "before").read_text()  # (stty -g: every mode)
        modes = (self.tmp / "after_a").read_text().split()
        assert "icanon" in modes and "echo" in modes and "icrnl" in modes


@pytest.fixture()
def session(tmp_path: Path) -> Iterator[Any]:
    made: list[Session] = []

    def make(turns: list[Any], *args: str) -> Session:
        made.append(Session(tmp_path, turns, *args))
        return made[-1]

    try:
        yield make
    finally:
        for s in made:
            s.t.tmux("kill-session", "-t", s.name)


def only_typed(screen: str, typed: str) -> list[str]:
    """The screen's lines showing `typed` that are not the prompt's or the queue's own lines: a key
    the terminal echoed raw (into the answer) is there."""
    ours = ("› ", "  ↳ queued: ", "  ✉ sending queued message: ")
    return [ln for ln in screen.splitlines() if typed in ln and not ln.startswith(ours)]


def last_prompt(screen: str) -> str:
    """The last prompt line on the screen (its text after '›'), '' when it is empty."""
    lines = [ln.rstrip() for ln in screen.splitlines() if ln.startswith("›")]
    return lines[-1][1:].strip() if lines else "(none)"


@pytest.mark.e2e
@needs_tmux
def test_a_prompt_typed_while_the_answer_prints_is_sent_once(session: Any) -> None:
    """The next prompt and its Enter typed while the run's long answer is printed: sent once (queued
    while the run ends, or as the next prompt), nothing echoed into the answer, the prompt empty again."""
    s = session([[{"type": "text", "text": ROWS + "\nanswer one"}], [{"type": "text", "text": "answer two"}]])
    t = s.t
    t.wait("/help for commands")
    t.type("go")
    t.keys("Enter")
    s.printing("row ")  # the answer is being printed (or has just been)
    t.type("say two\r")  # one write, as a fast typist's keys come: the text and its Enter
    t.wait("answer two")
    assert until(lambda: t.screen().count("● success") == 2 and last_prompt(t.screen()) == "", WAIT), t.screen()
    assert only_typed(s.whole(), "say two") == []
    assert s.prompts_sent() == ["go", "say two"]
    s.exit_restores_the_terminal()


@pytest.mark.e2e
@needs_tmux
def test_keys_typed_during_a_run_stay_in_the_next_prompt(session: Any, tmp_path: Path) -> None:
    """Keys typed while a tool runs and then while the answer prints (no Enter) are in the prompt once
    the run has ended, in order and nowhere else; Enter then sends them as one prompt."""
    gate = tmp_path / "gate"
    s = session([[{"type": "tool_use", "id": "b1", "name": "Bash",
                   "input": {"command": f"while [ ! -e {gate} ]; do sleep 0.05; done; echo released"}}],
                 [{"type": "text", "text": ROWS + "\nanswer one"}], [{"type": "text", "text": "answer two"}]],
                "--permission-mode", "bypassPermissions")
    t = s.t
    t.wait("/help for commands")
    t.type("go")
    t.keys("Enter")
    t.wait("⏺ Bash(while")
    t.type("kept ")  # while the tool runs
    t.wait("› kept")
    gate.touch()
    s.printing("row ")
    t.type("across the end")  # while the answer prints
    assert until(lambda: "● success" in t.screen() and last_prompt(t.screen()) == "kept across the end", WAIT), \
        t.screen()
    assert only_typed(s.whole(), "kept") == [] and only_typed(s.whole(), "across") == []
    t.keys("Enter")
    t.wait("answer two")
    assert s.prompts_sent() == ["go", "kept across the end"]
    s.exit_restores_the_terminal()


@pytest.mark.e2e
@needs_tmux
def test_a_line_sent_while_a_shell_command_runs_is_the_next_prompt(session: Any, tmp_path: Path) -> None:
    """Enter while a `!` command works (no run to take the line): queued, and sent once, as the next
    prompt, when the command ends; not left until the user types another prompt."""
    gate = tmp_path / "gate"
    s = session([[{"type": "text", "text": "answer one"}]], "--permission-mode", "bypassPermissions")
    t = s.t
    t.wait("/help for commands")
    t.type(f"!while [ ! -e {gate} ]; do sleep 0.05; done; echo shell-done\r")
    t.wait("› !while")
    t.type("after the shell\r")
    t.wait("↳ queued: after the shell")
    gate.touch()
    t.wait("answer one")
    assert until(lambda: "● success" in t.screen() and last_prompt(t.screen()) == "", WAIT), t.screen()
    assert t.screen().count("✉ sending queued message: after the shell") == 1
    assert s.prompts_sent().count("after the shell") == 1
    s.exit_restores_the_terminal()


@pytest.mark.e2e
@needs_tmux
def test_esc_still_interrupts_and_a_queued_line_is_sent_after(session: Any, tmp_path: Path) -> None:
    """Esc while a tool runs and a line is queued: the call is interrupted as before, then the queued
    line is sent once, as the next prompt (Claude Code 2.1.332 does the same, seen in tmux)."""
    s = session([[{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "sleep 41.3"}}],
                 [{"type": "text", "text": "answer two"}]], "--permission-mode", "bypassPermissions")
    t = s.t
    t.wait("/help for commands")
    t.type("go\r")
    t.wait("⏺ Bash(sleep 41.3)")
    t.type("say two\r")
    t.wait("↳ queued: say two")
    t.keys("Escape")
    t.wait("✗ Bash: Interrupted by user")
    t.wait("answer two")
    assert until(lambda: t.screen().count("● success") == 1 and last_prompt(t.screen()) == "", WAIT), t.screen()
    assert "● error_during_execution" in t.screen()
    assert s.prompts_sent().count("say two") == 1
    s.exit_restores_the_terminal()


@pytest.mark.e2e
@needs_tmux
def test_ctrl_z_suspends_with_the_shells_modes_and_fg_resumes(tmp_path: Path) -> None:
    """Ctrl-Z stops the session (job control: an interactive bash), the terminal in the user's modes;
    `fg` brings it back raw, the half-typed prompt kept; the modes after the exit are the shell's."""
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    (tmp_path / "work").mkdir()
    (tmp_path / "script.json").write_text(json.dumps([[{"type": "text", "text": "answer one"}]]))
    name = f"lw-{uuid.uuid4().hex[:8]}"
    t = Term(name)
    t.tmux("new-session", "-d", "-s", name, "-x", "150", "-y", "50", "-c", str(tmp_path / "work"),
           "env PS1='$ ' bash --norc --noprofile -i")
    try:
        t.wait("$ ")
        t.type(f"stty -g > {tmp_path / 'before'}; env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL "
               f"LOOPWRIGHT_HOME={tmp_path / 'home'} {LOOPWRIGHT_BIN} --model scripted:{tmp_path / 'script.json'}\r")
        t.wait("/help for commands")
        t.type("half typed")
        t.wait("› half typed")
        t.keys("C-z")
        t.wait("Stopped")
        assert until(lambda: t.screen().rstrip().endswith("$"), WAIT), t.screen()
        t.type(f"stty -g > {tmp_path / 'during'}; fg\r")
        # raw again once the prompt is drawn again (keys typed before that are the shell's terminal's)
        assert until(lambda: "› half typed" in t.screen().rpartition("; fg")[2], WAIT), t.screen()
        t.type(" more\r")
        t.wait("answer one")
        t.wait("● success")
        t.keys("C-d")
        t.wait("bye")
        t.type(f"stty -g > {tmp_path / 'after'}\r")
        assert until(lambda: (tmp_path / "after").exists() and (tmp_path / "after").read_text().strip() != "", WAIT)
        before = (tmp_path / "before").read_text()
        assert (tmp_path / "during").read_text() == before and (tmp_path / "after").read_text() == before
        assert only_typed(t.screen(), "half typed") == []
        path = next((tmp_path / "home" / "projects").rglob("*.jsonl"))
        sent = [m["content"] for m in load_transcript(path).history if m["role"] == "user"]
        assert sent == [[{"type": "text", "text": "half typed more"}]]
    finally:
        t.tmux("kill-session", "-t", name)


# --- the terminal's modes, in-process on a pseudo-terminal ---------------------------------------

@contextlib.contextmanager
def pseudo_terminal() -> Iterator[Any]:
    """The slave side of a new pty as a text file (stdin for SessionInput)."""
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "r", closefd=True) as f:
            yield f
    finally:
        os.close(master)


def raw(modes: list[Any]) -> bool:
    return not modes[3] & (termios.ECHO | termios.ICANON | termios.ISIG) and not modes[0] & termios.ICRNL


def test_session_modes_raw_until_handed_over_and_restored_after() -> None:
    from loopwright.cli.terminal import SessionInput

    with pseudo_terminal() as f:
        fd = f.fileno()
        user = termios.tcgetattr(fd)
        assert not raw(user)
        inp = SessionInput(f)
        with inp.session():
            assert raw(termios.tcgetattr(fd))
            with inp.cooked_mode():  # what prompt_toolkit asks for around a print above the prompt
                assert raw(termios.tcgetattr(fd))
            with inp.handing_over(), inp.cooked_mode():  # an editor, a suspended session
                assert termios.tcgetattr(fd) == user
            assert raw(termios.tcgetattr(fd))
        assert termios.tcgetattr(fd) == user
        with pytest.raises(RuntimeError), inp.session():  # a crash: the user's modes back too
            raise RuntimeError("boom")
        assert termios.tcgetattr(fd) == user


def test_a_print_above_a_live_prompt_keeps_the_terminal_raw(monkeypatch: pytest.MonkeyPatch) -> None:
    """prompt_toolkit's own path: a print through patch_stdout while a prompt runs (run_in_terminal)."""
    import asyncio

    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import run_in_terminal
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.output.vt100 import Vt100_Output

    from loopwright.cli.terminal import SessionInput

    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")
    with pseudo_terminal() as f, open(os.dup(f.fileno()), "w") as screen:
        fd = f.fileno()
        inp = SessionInput(f)
        seen: list[bool] = []

        async def main() -> None:
            out = Vt100_Output(screen, lambda: Size(24, 80))
            ps: PromptSession[str] = PromptSession(input=inp, output=out)

            async def print_then_leave() -> None:
                await asyncio.sleep(0.05)
                await run_in_terminal(lambda: seen.append(raw(termios.tcgetattr(fd))))
                ps.app.exit(result="")

            with inp.session():
                task = asyncio.ensure_future(print_then_leave())
                await ps.prompt_async("› ")
                await task
                seen.append(raw(termios.tcgetattr(fd)))  # between two prompts: still raw

        asyncio.run(main())
        assert seen == [True, True]


def test_a_line_sent_as_the_run_ends_is_sent_in_the_same_turn(tmp_path: Path) -> None:
    """Enter pressed while a run ends (its result shown, the turn not over yet): the line is queued
    (the session is busy) and must still be sent, as the next prompt, before the turn ends: not left
    for a run that never comes."""
    import asyncio
    import io

    from loopwright.cli.interactive import Repl
    from loopwright.cli.render import TraceRenderer
    from loopwright.hooks import Hooks
    from loopwright.messages import Message, ResultMessage
    from loopwright.options import AgentOptions
    from tests.helpers import text, write_script

    model = write_script(tmp_path, [[text("answer one")], [text("answer two")]])
    # a SessionEnd hook: the run goes on after its result (loop/steps.py's _close), as with MCP servers
    hooks = Hooks().command("SessionEnd", "sleep 0.5")
    repl = Repl(AgentOptions(model=model, cwd=tmp_path, hooks=hooks))
    repl.renderer = TraceRenderer(io.StringIO(), spinner=False)
    shown = repl.show

    def show(msg: Message) -> None:
        shown(msg)
        if isinstance(msg, ResultMessage) and len(repl.client.results) == 1:
            repl.client.send("late line")  # what _read_prompts does with a line typed while busy

    repl.show = show  # type: ignore[method-assign]

    async def turn() -> list[Any]:
        await repl.run_turn("go")
        await repl.client.disconnect()
        return [r.result for r in repl.client.results]

    assert asyncio.run(turn()) == ["answer one", "answer two"]
    assert repl.client.pending == []


@pytest.mark.e2e
def test_a_forced_exit_gives_the_terminal_back() -> None:
    """A second SIGTERM (or the graceful stop's bound) ends the process with os._exit, which runs no
    `finally`: Ending's `last` gives the terminal its user's modes first (the session's wiring)."""
    import signal
    import subprocess
    import sys

    code = ("import asyncio, sys\n"
            "from loopwright.children import Ending\n"
            "from loopwright.cli.terminal import SessionInput\n"
            "inp = SessionInput(sys.stdin)\n"
            "async def main():\n"
            "    with inp.session():\n"
            "        Ending(lambda _: None, last=inp.restore).install().force('a test')\n"
            "asyncio.run(main())\n")
    with pseudo_terminal() as f:
        user = termios.tcgetattr(f.fileno())
        p = subprocess.run([sys.executable, "-c", code], stdin=f, capture_output=True, text=True, timeout=120)
        assert p.returncode == 128 + signal.SIGTERM, p.stderr
        assert "a test" in p.stderr
        assert termios.tcgetattr(f.fileno()) == user


@pytest.mark.e2e
@needs_tmux
@pytest.mark.parametrize("busy", ["shell", "run"])
def test_lines_still_queued_when_the_user_leaves_are_named_not_sent(session: Any, tmp_path: Path, busy: str) -> None:
    """Ctrl-D while a `!` command or a run's tool works, with a line queued: the session ends (no
    run starts for the line: the user is leaving) and says which line was not sent, rather than
    dropping it without a word."""
    gate = tmp_path / "gate"
    s = session([[{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "sleep 41.7"}}],
                 [{"type": "text", "text": "ANSWER-TWO"}]], "--permission-mode", "bypassPermissions")
    t = s.t
    t.wait("/help for commands")
    if busy == "shell":
        t.type(f"!while [ ! -e {gate} ]; do sleep 0.05; done\r")
        t.wait("› !while")
    else:
        t.type("go\r")
        t.wait("⏺ Bash(sleep 41.7)")
    t.type("left behind\r")
    t.wait("↳ queued: left behind")
    t.keys("C-d")
    t.wait("press Ctrl-D again")
    t.keys("C-d")
    assert exit_status(tmp_path / "exit_status", WAIT) == "0", t.screen()
    screen = s.whole()
    assert "not sent" in screen and "left behind" in screen.split("not sent", 1)[1], screen
    assert "ANSWER-TWO" not in screen and "sending queued message" not in screen, screen
