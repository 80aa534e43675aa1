"""What the interactive mode shows, in a real terminal: `loopwright` in tmux on a scripted model.

Tool output under each call and expanded in place (Ctrl-O, /expand N), Edit diffs, full counts;
the status line while working; Ctrl-D during a tool; the resume hint on exit; a queued message
on Esc; /resume and -r/-c/--fork-session checks; rewind (refused commands, files changed after
the agent's edit); the slash-command menu; the header once per session. Every wait polls the
pane with a deadline.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopwright.sessions import load_transcript
from tests.cli.test_interactive import WAIT, Term, exit_status, running
from tests.helpers import LOOPWRIGHT_BIN, bash, cli_env, loopwright_cmd, text, until, use

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")]
pytest.importorskip("loopwright.tools.builtin", reason="the CLI needs the built-in tools")

SLEEP = "sleep 29.3"  # a unique command line, to find its process
# a command that works until the test lets it end (touching `go` in the work dir): the status line
# of a running tool is checked while it surely runs, however slow the machine is
GATED = "until [ -e go ]; do sleep 0.1; done; echo woke"


class Session:
    """One `loopwright` in a tmux pane, on a scripted model, in tmp/work with its own home."""

    def __init__(self, tmp: Path, turns: list[Any], *args: str, name: str = "script.json") -> None:
        self.tmp, self.work, self.home = tmp, tmp / "work", tmp / "home"
        self.work.mkdir(exist_ok=True)
        script = tmp / name
        script.write_text(json.dumps(turns))
        self.status = tmp / f"exit-{uuid.uuid4().hex[:6]}"
        self.t = Term(f"lw-{uuid.uuid4().hex[:8]}")
        env = f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={self.home}"
        quoted = " ".join(f"'{a}'" for a in args)
        # 200 columns: a line naming a temp path (popen-gwN/ under xdist) stays one line on the screen
        self.t.tmux("new-session", "-d", "-s", self.t.name, "-x", "200", "-y", "50", "-c", str(self.work),
                    f"{env} {LOOPWRIGHT_BIN} --model scripted:{script} {quoted}; echo $? > {self.status}")
        self.t.tmux("set-option", "-t", self.t.name, "remain-on-exit", "on")

    def send(self, line: str) -> None:
        self.t.type(line)
        self.t.keys("Enter")

    def visible(self) -> str:
        """The screen as it is now (no scrollback)."""
        return self.t.tmux("capture-pane", "-p", "-J", "-t", self.t.name)

    def transcripts(self) -> list[Path]:
        return sorted((self.home / "projects").rglob("*.jsonl"))

    def close(self) -> None:
        self.t.tmux("kill-session", "-t", self.t.name)


@pytest.fixture()
def sessions() -> Iterator[list[Session]]:
    made: list[Session] = []
    yield made
    for s in made:
        s.close()


def test_tool_output_preview_expand_diff_and_status_line(tmp_path: Path, sessions: list[Session]) -> None:
    app = tmp_path / "work" / "app.py"
    app.parent.mkdir()
    app.write_text("def f():\n    return 1\n\nprint(f())\n")
    s = Session(tmp_path, [
        [bash("seq 1 40", "s1")],
        [use("r1", "Read", file_path=str(app))],
        [use("e1", "Edit", file_path=str(app), old_string="    return 1", new_string="    return 2")],
        [text("edited")],
        [bash("seq 1 100000", "s2")],
        [bash(GATED, "s3")],  # runs until the test has seen the status line (no race with a timer)
        [text("slept")],
    ], "--permission-mode", "bypassPermissions", "--context-window", "200000")
    sessions.append(s)
    t = s.t
    t.wait("/help for commands")
    s.send("show me")
    screen = t.wait("● success")
    # a few lines under the call, with the count of the rest
    assert "✓ Bash: 40  (40 lines)" in screen
    assert "… +37 lines (ctrl+o to expand · /expand 1)" in screen
    # an Edit shows its diff, numbered as in the file
    assert "✓ Edit: Updated app.py with 1 addition and 1 removal" in screen
    assert "    2 -     return 1" in screen and "    2 +     return 2" in screen
    assert app.read_text() == "def f():\n    return 2\n\nprint(f())\n"

    # Ctrl-O: the outputs redrawn in full, in place (under their calls, before what followed)
    t.keys("C-o")
    screen = t.wait("(ctrl+o or /expand 1 to collapse)")
    lines = screen.splitlines()
    first = lines.index("    ⎿ ✓ Bash: 40  (40 lines)")
    assert [ln.strip() for ln in lines[first + 1:first + 41]] == [str(i) for i in range(1, 41)]
    assert screen.index("      40\n") < screen.index("⏺ Read(app.py)") < screen.index("     4    print(f())")
    assert "+37 lines" not in screen
    # Ctrl-O again collapses; /expand 1 expands that one result only
    t.keys("C-o")
    t.wait("+37 lines (ctrl+o to expand")
    s.send("/expand 1")
    screen = t.wait("(ctrl+o or /expand 1 to collapse)")
    assert "      40\n" in screen and "(ctrl+o to expand · /expand 2)" in screen
    s.send("/expand 9")
    t.wait("no tool result 9 (there are 3)")

    # counts describe the full output: the tool cut 100000 lines in the middle, the count does not
    s.send("again")
    t.wait("(100000 lines)")
    # the status line while a tool works: time, the call, tokens, cost, window n_k / W
    t.wait(f"⏺ Bash({GATED})")
    bar = t.wait(f"· Bash({GATED}) · Esc to interrupt").splitlines()[-1]
    assert "working…" in bar and "tokens" in bar and "$0.0000" in bar and "/200k (" in bar, bar
    (tmp_path / "work" / "go").touch()  # the tool may end now
    t.wait("slept")
    # the header: once per session, not once per prompt
    assert t.screen().count("● session ") == 1


def during_a_tool(tmp_path: Path, sessions: list[Session], answer: str) -> Session:
    """A session whose first prompt runs SLEEP in Bash (then the model answers `answer`),
    returned once the call is on screen."""
    s = Session(tmp_path, [[bash(SLEEP)], [text(answer)]], "--permission-mode", "bypassPermissions")
    sessions.append(s)
    s.t.wait("/help for commands")
    s.send("go")
    s.t.wait(f"⏺ Bash({SLEEP})")
    return s


def test_ctrl_d_during_a_tool_asks_then_exit_says_how_to_resume(tmp_path: Path, sessions: list[Session]) -> None:
    s = during_a_tool(tmp_path, sessions, "never")
    t = s.t
    assert until(lambda: running(SLEEP), WAIT)
    t.keys("C-d")
    t.wait("press Ctrl-D again to interrupt it and exit")
    assert running(SLEEP) and not s.status.exists()  # asked, nothing stopped
    t.keys("C-d")
    screen = t.wait("bye")
    assert exit_status(s.status, 20) == "0"
    assert until(lambda: not running(SLEEP), 25)
    sid = s.transcripts()[0].stem
    assert f"to resume this session: loopwright --resume {sid}" in screen


def test_queued_message_survives_esc_during_a_tool(tmp_path: Path, sessions: list[Session]) -> None:
    s = during_a_tool(tmp_path, sessions, "got your note")
    t = s.t
    s.send("stop, use the other file")
    t.wait("↳ queued: stop, use the other file")
    t.keys("Escape")
    screen = t.wait("got your note")
    assert screen.index("✗ Bash: Interrupted by user") < screen.index(
        "✉ sending queued message: stop, use the other file") < screen.index("got your note")
    assert until(lambda: not running(SLEEP), 25)
    h = load_transcript(s.transcripts()[0]).history
    asked = [m["content"][0]["text"] for m in h if m["role"] == "user" and m["content"][0].get("type") == "text"]
    assert asked == ["go", "stop, use the other file"]  # delivered as its own prompt, read by the model
    assert h[-1] == {"role": "assistant", "content": [{"type": "text", "text": "got your note"}]}


def run_headless(tmp: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env=cli_env(LOOPWRIGHT_HOME=str(tmp / "home")), stdin=subprocess.DEVNULL)


def test_session_arguments_and_resume_checks(tmp_path: Path, sessions: list[Session]) -> None:
    # -r with no such session: exit 2 before anything starts
    bad = Session(tmp_path, [], "-r", "nosuchid")
    sessions.append(bad)
    assert exit_status(bad.status, 20) == "2"
    screen = bad.t.screen()
    assert "no session 'nosuchid' to resume" in screen and "/help for commands" not in screen
    fork = Session(tmp_path, [], "--fork-session")
    sessions.append(fork)
    assert exit_status(fork.status, 20) == "2"
    assert "--fork-session needs --resume ID or --continue" in fork.t.screen()

    # another project's session: its id prefix must not be picked up by /resume here
    other = tmp_path / "other"
    other.mkdir()
    (tmp_path / "o.json").write_text(json.dumps([[text("other answer")]]))
    r = run_headless(tmp_path, other, "-p", "elsewhere", "--model", f"scripted:{tmp_path / 'o.json'}",
                     "--output-format", "json")
    assert r.returncode == 0, r.stderr
    other_id = json.loads(r.stdout)["session_id"]

    # -c with nothing to continue here says so, and starts a new session
    s = Session(tmp_path, [
        [text("first answer"), use("w1", "Write", file_path=str(tmp_path / "work" / "a.txt"), content="a\n")],
        [text("wrote a")],
    ], "-c", "--permission-mode", "bypassPermissions", name="main.json")
    sessions.append(s)
    t = s.t
    t.wait(f"no session in {tmp_path / 'work'} to continue: starting a new one")
    s.send("make a")
    t.wait("wrote a")
    s.send("/resume 7")
    t.wait("no session 7: the list has 1 (see /resume)")
    s.send(f"/resume {other_id[:8]}")
    t.wait(f"no session {other_id[:8]!r} in this directory (see /resume)")
    s.send("/clear")
    t.wait("new conversation")
    # /resume replays the conversation it resumes
    s.send("/resume 1")
    screen = t.wait("(end of the resumed conversation)")
    replayed = screen[screen.index("● resuming"):]
    assert "› make a" in replayed and "first answer" in replayed and "⏺ Write(" in replayed
    assert "⎿ ✓ Write: File created successfully" in replayed and replayed.index("› make a") < replayed.index(
        "wrote a")


def test_rewind_lists_commands_that_ran_and_asks_about_later_changes(tmp_path: Path,
                                                                      sessions: list[Session]) -> None:
    work = tmp_path / "work"
    notes = work / "notes.txt"
    s = Session(tmp_path, [
        [text("first")],
        [use("w1", "Write", file_path=str(notes), content="agent line\n"),
         bash("echo ran-ok", "b1"), bash("rm -rf nothing-here", "b2")],
        [text("wrote notes")],
    ], "--permission-mode", "bypassPermissions", "--disallowedTools", "Bash(rm:*)")
    sessions.append(s)
    t = s.t
    t.wait("/help for commands")
    s.send("hello")
    t.wait("● success")
    s.send("write notes")
    t.wait("wrote notes")
    assert notes.read_text() == "agent line\n"
    notes.write_text("agent line\nmy own line\n")  # the user edits the file after the agent

    s.send("/rewind 2")
    t.wait("rewind anyway? [y/N]")
    screen = t.wait("+my own line")  # the diff the rewind would undo
    assert f"⚠ {notes} changed after the agent's edit; rewinding undoes this too:" in screen
    assert screen.index("⚠") < screen.index("+my own line") < screen.rindex("rewind anyway? [y/N]")
    s.send("n")
    t.wait("not rewound")
    assert notes.read_text() == "agent line\nmy own line\n"  # nothing lost

    s.send("/rewind 2")
    t.wait("rewind anyway? [y/N]", count=2)
    s.send("y")
    screen = t.wait("Bash commands that ran in the rewound span")
    assert not notes.exists()  # created by the agent: deleted
    assert "$ echo ran-ok" in screen and "rm -rf nothing-here" not in screen.split("rewound session")[-1]

    # the lists are right after the rewind: /rewind and /resume show the conversation as it is now
    s.send("/rewind")
    screen = t.wait("/rewind N (or a uuid)")
    listing = screen[screen.rindex("› /rewind\n"):]
    assert "'hello'" in listing and "'write notes'" not in listing
    s.send("/resume")
    screen = t.wait("/resume N (or an id)")
    row = next(ln for ln in screen[screen.rindex("› /resume"):].splitlines() if ln.strip().startswith("1. "))
    assert "1 prompts" in row and row.endswith("'hello'"), row


def test_slash_menu_completes_builtins_custom_commands_and_skills(tmp_path: Path, sessions: list[Session]) -> None:
    work = tmp_path / "work"
    (work / ".loopwright" / "commands").mkdir(parents=True)
    (work / ".loopwright" / "commands" / "greet.md").write_text(
        "---\ndescription: say hello nicely\n---\nSay hello. !`echo TMUX-INLINE`\n")  # (its shell runs as it expands)
    (work / ".loopwright" / "skills" / "tidy").mkdir(parents=True)
    (work / ".loopwright" / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: tidy up the imports\n---\nSort the imports.\n")
    s = Session(tmp_path, [[text("hello there")]], "--permission-mode", "bypassPermissions")
    sessions.append(s)
    t = s.t
    t.wait("/help for commands")
    t.wait("Ctrl-C twice to exit")  # the toolbar: the prompt reads keys (raw mode) now
    t.type("/")
    screen = t.wait("/expand")
    for entry in ("/help", "/resume", "/rewind", "/expand"):
        assert entry in screen, entry
    t.type("ti")  # (the built-ins fill the menu's first rows: narrowed, the skill shows)
    screen = t.wait("skill: tidy up the imports")
    assert "/tidy" in screen
    t.keys("BSpace", "BSpace")
    t.type("gr")
    assert "say hello nicely" in t.wait("/greet")
    t.wait("/greet")
    assert until(lambda: "/resume" not in s.visible(), 60)  # narrowed as one types
    t.keys("Tab")
    t.wait("› /greet")
    t.keys("Enter")
    t.wait("hello there")
    h = load_transcript(s.transcripts()[0]).history
    # Claude Code's <command-message> block names the command first (70fb5d1), then its expansion
    assert h[0]["content"][0]["text"].startswith("<command-message>greet</command-message>")
    assert h[0]["content"][1]["text"] == "Say hello. TMUX-INLINE"


def test_session_list_is_right_after_compaction(tmp_path: Path) -> None:
    """Against the loopback API server (a priced model): after /compact, the /resume list counts
    the conversation's prompts and the whole cost, the summarizing call's included."""
    import re

    from loopwright.testing import ScriptedServer

    work = tmp_path / "work"
    work.mkdir()
    replies = [[text("answer one")], [text("answer two")], [text("answer three")], [text("summary of the talk")]]
    with ScriptedServer(replies) as srv:
        t = Term(f"lw-{uuid.uuid4().hex[:8]}")
        env = (f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={tmp_path / 'home'} "
               f"ANTHROPIC_API_KEY=test")
        t.tmux("new-session", "-d", "-s", t.name, "-x", "150", "-y", "50", "-c", str(work),
               f"{env} {LOOPWRIGHT_BIN} --model claude-sonnet-4-5 --base-url {srv.url}")
        try:
            t.wait("/help for commands")
            for i, n in enumerate(("one", "two", "three"), 1):
                t.type(f"say {n}")
                t.keys("Enter")
                t.wait(f"answer {n}")
                t.wait_prompt(i)
            t.type("/compact")
            t.keys("Enter")
            t.wait("✂ compacted:")
            t.type("/resume")
            t.keys("Enter")
            t.wait("/resume N (or an id)")
            # the toolbar (the client's total, /compact's included) is redrawn now and then: poll for both
            assert until(lambda: "Ctrl-C twice to exit" in t.screen(), WAIT)
            screen = t.screen()
            row = next(ln for ln in screen[screen.rindex("› /resume"):].splitlines() if ln.strip().startswith("1. "))
            bar = next(ln for ln in screen.splitlines() if "Ctrl-C twice to exit" in ln)
            total = re.findall(r"\$(\d+\.\d{4})", bar)[-1]
            assert "3 prompts" in row and row.endswith("'say three'"), row
            assert f"${total}" in row and float(total) > 0, (row, total)
        finally:
            t.tmux("kill-session", "-t", t.name)


def test_rewind_command_refuses_to_undo_later_changes_without_force(tmp_path: Path) -> None:
    """`loopwright rewind` (no terminal to ask on): a file changed after the agent's edit is shown
    with its diff and left alone; --force rewinds it."""
    work = tmp_path / "work"
    work.mkdir()
    target = work / "conf.ini"
    target.write_text("a=1\n")
    (tmp_path / "m.json").write_text(json.dumps([
        [use("r", "Read", file_path=str(target))],
        [use("e", "Edit", file_path=str(target), old_string="a=1", new_string="a=2")],
        [text("changed")]]))
    r = run_headless(tmp_path, work, "-p", "set a to 2", "--model", f"scripted:{tmp_path / 'm.json'}",
                     "--permission-mode", "acceptEdits", "--output-format", "json")
    assert r.returncode == 0, r.stderr
    sid = json.loads(r.stdout)["session_id"]
    assert target.read_text() == "a=2\n"
    target.write_text("a=2\nb=3\n")  # the user's own change, after the agent's
    r = run_headless(tmp_path, work, "rewind", sid)
    assert r.returncode == 1 and "not rewound (--force rewinds anyway)" in r.stderr
    assert f"⚠ {target} changed after the agent's edit" in r.stdout and "+b=3" in r.stdout
    assert target.read_text() == "a=2\nb=3\n"
    r = run_headless(tmp_path, work, "rewind", sid, "--force")
    assert r.returncode == 0, r.stderr
    assert target.read_text() == "a=1\n"
