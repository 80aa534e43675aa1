"""The everyday commands of the interactive session, typed in a real terminal (issue 43).

`loopwright` runs in tmux (a private server per test: `tmux -L`) against the loopback
Messages server, so each test reads both the screen and the requests the model received.
Every wait polls the screen with a deadline (the machine is shared: no fixed sleeps).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_interactive import Term
from tests.helpers import LOOPWRIGHT_BIN, classifier_action, text, until, verdict

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
pytest.importorskip("loopwright.tools.builtin", reason="the CLI needs the built-in tools")
WAIT = 60.0  # generous: the tmux tests share 2 cores with everything else


class PrivateTerm(Term):
    """A Term on its own tmux server (-L): no other test's or user's server is touched."""

    def __init__(self, name: str, socket: str) -> None:
        super().__init__(name)
        self.socket = socket

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20).stdout

    def wait(self, needle: str, timeout: float = WAIT, count: int = 1) -> str:
        return super().wait(needle, timeout, count)

    def send(self, line: str) -> None:
        """Type a line and press Enter."""
        self.type(line)
        self.keys("Enter")


@contextmanager
def repl(tmp_path: Path, *args: str, env: str = "") -> Iterator[PrivateTerm]:
    """`loopwright ARGS` in a tmux pane in tmp_path/work, HOME and LOOPWRIGHT_HOME in tmp_path."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    socket = f"lwt-{uuid.uuid4().hex[:8]}"
    t = PrivateTerm("main", socket)
    quoted = " ".join(f"'{a}'" for a in args)
    t.tmux("new-session", "-d", "-s", "main", "-x", "160", "-y", "50", "-c", str(work),
           f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL -u ANTHROPIC_MODEL HOME={home} "
           f"LOOPWRIGHT_HOME={home / '.loopwright'} ANTHROPIC_API_KEY=test {env} {LOOPWRIGHT_BIN} {quoted}; sleep 30")
    try:
        t.wait("Ctrl-C twice to exit")  # the toolbar: the prompt reads keys now
        yield t
    finally:
        left = close_terminal(t)
    assert not left, f"loopwright outlived its terminal by 10 s and was SIGKILLed: {left}"


def close_terminal(t: PrivateTerm) -> list[int]:
    """Kill the tmux server (the terminal closes) and wait for what ran in the pane to end; what
    is still alive 10 s later is SIGKILLed and returned (a loopwright once outlived it by 74 min)."""
    import os
    import signal

    from tests.helpers import still_alive

    pane = t.tmux("display-message", "-p", "-t", "main", "#{pane_pid}").strip()
    kids = []
    for d in os.listdir("/proc") if pane.isdigit() else []:
        try:
            if d.isdigit() and Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1] == pane:
                kids.append(int(d))
        except (OSError, IndexError):
            continue
    t.tmux("kill-server")
    left = still_alive(kids, 10)
    for k in left:
        os.kill(k, signal.SIGKILL)
    return left


def user_texts(body: dict[str, Any]) -> list[str]:
    """The texts of the last user message of a Messages request."""
    content = body["messages"][-1]["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content if b.get("type") == "text"]


@pytest.mark.e2e
@needs_tmux
def test_model_switch_and_shell_mode_reach_the_next_request(tmp_path: Path) -> None:
    """/model NAME: the next request names NAME. !cmd: asked like the model's Bash call, no model
    call; the command and its output are in the next request, as Claude Code sends them
    (<bash-input>, <bash-stdout>)."""
    from loopwright.testing import ScriptedServer

    with ScriptedServer([[text("first reply")], [text("second reply")]]) as srv, \
            repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url) as t:
        t.send("hello")
        t.wait("first reply")
        assert [r.body["model"] for r in srv.loop_requests] == ["claude-sonnet-4-5"]

        t.send("/model claude-haiku-4-5")
        t.wait("● model: claude-haiku-4-5")
        t.send("/model no-such-provider:x")
        t.wait("✗ model not changed")

        t.send("!echo bang-$((6*7)) && echo to-err >&2")
        t.wait("Do you want to allow this Bash?")  # the gate asks for it as for the model's call
        t.wait("Esc = No")
        t.type("1")
        s = t.wait("bang-42")
        assert "to-err" in s
        t.wait("Ctrl-C twice to exit")  # the prompt is back
        assert len(srv.loop_requests) == 1, "a ! command must not call the model"

        t.send("what did it print")
        t.wait("second reply")
        assert until(lambda: len(srv.loop_requests) == 2, WAIT)
        last = srv.loop_requests[-1].body
        assert last["model"] == "claude-haiku-4-5"
        texts = user_texts(last)
        assert texts[:2] == ["<bash-input>echo bang-$((6*7)) && echo to-err >&2</bash-input>",
                             "<bash-stdout>bang-42\nto-err</bash-stdout><bash-stderr></bash-stderr>"], texts
        assert texts[-1] == "what did it print"


@pytest.mark.e2e
@needs_tmux
def test_shell_mode_goes_through_the_gate(tmp_path: Path) -> None:
    """A `!` command the rules deny is refused like the model's own call, and never runs."""
    from loopwright.testing import ScriptedServer

    marker = tmp_path / "work" / "made.txt"
    with ScriptedServer([[text("ok")]]) as srv, \
            repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url,
                 "--disallowedTools", "Bash(touch:*)") as t:
        t.send(f"!touch {marker}")
        t.wait("✗")
        s = t.wait("Ctrl-C twice to exit")
        assert "denied" in s.lower() or "refused" in s.lower(), s
        assert not marker.exists()
        t.send("and now")
        t.wait("ok")
        assert until(lambda: len(srv.loop_requests) == 1, WAIT)
        texts = user_texts(srv.loop_requests[0].body)
        assert texts[0] == f"<bash-input>touch {marker}</bash-input>"
        assert texts[1].startswith("<bash-stdout></bash-stdout><bash-stderr>") and "touch" in texts[1]


@pytest.mark.e2e
@needs_tmux
def test_shell_mode_output_survives_exit_and_resume(tmp_path: Path) -> None:
    """`!cmd` then exit with no prompt: the command and its output are in the session's
    transcript at once, so `loopwright --resume ID` and a prompt send them to the model (as the
    same session's next prompt would); the transcript loads to a valid history."""
    from loopwright.sessions import load_transcript
    from loopwright.testing import ScriptedServer

    with ScriptedServer([[text("it said hi")]]) as srv:
        with repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url,
                  "--allowedTools", "Bash(echo:*)") as t:
            t.send("!echo hi-from-bang")
            t.wait("⎿ hi-from-bang")
            t.send("/exit")
            screen = t.wait("bye")
        sid = screen.split("loopwright --resume ", 1)[1].split()[0]
        assert srv.loop_requests == [], "a ! command must not call the model"
        files = list((tmp_path / "home" / ".loopwright").rglob(f"{sid}.jsonl"))
        assert len(files) == 1, files
        loaded = load_transcript(files[0])
        assert loaded.repaired == []
        assert [m["role"] for m in loaded.history] == ["user"]

        with repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url, "--resume", sid) as t:
            t.send("what did it print")
            t.wait("it said hi")
            assert until(lambda: len(srv.loop_requests) == 1, WAIT)
        body = srv.loop_requests[0].body
        assert [m["role"] for m in body["messages"]] == ["user"]
        texts = user_texts(body)
        assert texts[:2] == ["<bash-input>echo hi-from-bang</bash-input>",
                             "<bash-stdout>hi-from-bang</bash-stdout><bash-stderr></bash-stderr>"], texts
        assert texts[-1] == "what did it print"
        assert sum(x.count("<bash-input>") for x in texts) == 1


def test_panel_closes_on_escape_and_lists_every_builtin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """/help lists every built-in command with one line; the panel closes on Esc."""
    import asyncio

    from loopwright.cli.commands import BUILTINS
    from loopwright.cli.interactive import Repl
    from loopwright.options import AgentOptions

    repl_ = Repl(AgentOptions(model="scripted:unused.json", cwd=tmp_path))

    async def go() -> None:
        assert await repl_.command("/help")
        panel = repl_.panel
        assert panel is not None and repl_.dialog is panel
        shown = panel.text()
        for c in BUILTINS.values():
            assert sum(1 for ln in shown.splitlines() if ln.strip().startswith(c.usage + " ")) == 1, c.name
        panel.escape()
        assert repl_.panel is None and repl_.dialog is None

    asyncio.run(go())


def panel_closes(t: PrivateTerm) -> None:
    """Esc closes the open panel (its hint line leaves the screen) and the prompt is back."""
    t.wait("Esc to close")
    t.keys("Escape")
    assert until(lambda: "Esc to close" not in t.screen(), WAIT), t.screen()


@pytest.mark.e2e
@needs_tmux
def test_state_commands_show_what_is_in_force(tmp_path: Path) -> None:
    """/context /permissions /mcp /agents /config /status /output-style /memory each show the state
    in force, naming the user's rule, the server, the agent file, the style file, the memory file;
    each panel closes on Esc. /permissions adds a rule to the user's settings."""
    import sys

    from loopwright.testing import ScriptedServer
    from tests.helpers import cli_env

    work, home = tmp_path / "work", tmp_path / "home"
    lw_home = home / ".loopwright"
    (work / ".claude" / "agents").mkdir(parents=True)
    (work / ".claude" / "output-styles").mkdir(parents=True)
    lw_home.mkdir(parents=True)
    (lw_home / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(npm test:*)"]}}))
    (work / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: reviews diffs for bugs\ntools: Read, Grep\n---\nReview the diff.\n")
    (work / ".claude" / "output-styles" / "pirate.md").write_text(
        "---\nname: Pirate\ndescription: talks like a pirate\n---\nArr.\n")
    (work / "AGENTS.md").write_text("# Project notes\nUse tabs.\n")
    server = Path(__file__).resolve().parents[1] / "mcp" / "mcp_test_server.py"
    mcp_config = tmp_path / "mcp.json"
    mcp_config.write_text(json.dumps({"mcpServers": {
        "testsrv": {"command": sys.executable, "args": [str(server)]},
        "gone": {"command": str(tmp_path / "no-such-server")}}}))
    subprocess.run([str(LOOPWRIGHT_BIN), "trust", str(work)], env={**cli_env(), "HOME": str(home),
                   "LOOPWRIGHT_HOME": str(lw_home)}, check=True, capture_output=True, timeout=60)

    with ScriptedServer([[text("ok")]]) as srv, \
            repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url, "--mcp-config", str(mcp_config)) as t:
        t.send("/context")
        s = t.wait("free")
        for part in ("system prompt", "tools", "memory", "MCP tools", "messages", "of 200,000 tokens"):
            assert part in s, (part, s)
        panel_closes(t)

        t.send("/permissions")
        s = t.wait("Bash(npm test:*)")
        assert f"Bash(npm test:*)  ({lw_home / 'settings.json'})" in s, s
        panel_closes(t)
        t.send("/permissions deny Bash(rm:*) --user")
        t.wait("✓ deny Bash(rm:*)")
        assert json.loads((lw_home / "settings.json").read_text())["permissions"] == {
            "allow": ["Bash(npm test:*)"], "deny": ["Bash(rm:*)"]}

        t.send("/mcp")
        s = t.wait("mcp__testsrv__echo", timeout=WAIT * 2)
        assert "testsrv  [connected]" in s and "gone  [failed]" in s, s
        panel_closes(t)

        t.send("/agents")
        s = t.wait("reviewer")
        assert str(work / ".claude" / "agents" / "reviewer.md") in s and "tools: Read, Grep" in s, s
        panel_closes(t)

        t.send("/config")
        s = t.wait("Bash(rm:*)")
        assert str(lw_home / "settings.json") in s
        panel_closes(t)

        t.send("/status")
        s = t.wait("permission mode: default")
        assert "model: claude-sonnet-4-5" in s and srv.url in s, s
        panel_closes(t)

        t.send("/output-style")
        s = t.wait("Pirate")
        assert str(work / ".claude" / "output-styles" / "pirate.md") in s, s
        panel_closes(t)

        t.send("/memory")
        s = t.wait("AGENTS.md")
        assert f"project  {work / 'AGENTS.md'}" in s, s
        panel_closes(t)
        t.send("/memory add always run the linter")
        t.wait("✓ remembered")
        assert (work / "AGENTS.md").read_text().endswith("Use tabs.\n- always run the linter\n")

        t.send("/nope")
        t.wait("unknown command /nope")
        assert "Traceback" not in t.screen()
        assert srv.loop_requests == [], "no command calls the model"

        # `#` is not a memory shortcut (Claude Code 2.1.332 has none): the line is a prompt
        t.send("# a heading for the model")
        t.wait("ok")
        assert until(lambda: len(srv.loop_requests) == 1, WAIT)
        assert user_texts(srv.loop_requests[0].body)[-1] == "# a heading for the model"
        assert "a heading" not in (work / "AGENTS.md").read_text()


@pytest.mark.e2e
@needs_tmux
def test_agents_lists_the_plugins_agents_with_their_source(tmp_path: Path) -> None:
    """/agents shows a --plugin-dir plugin's agent (named plugin:agent, as the Agent tool knows
    it) with its plugin and file, its tools and its description."""
    from loopwright.testing import ScriptedServer

    plugin = tmp_path / "helpers"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "agents").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "helpers", "version": "1.0.0"}))
    md = plugin / "agents" / "linter.md"
    md.write_text("---\nname: linter\ndescription: lints the changed files\ntools: Read, Bash\n---\nLint.\n")
    with ScriptedServer([[text("ok")]]) as srv, \
            repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url, "--plugin-dir", str(plugin)) as t:
        t.send("/agents")
        s = t.wait("helpers:linter")
        assert f"helpers:linter  (plugin helpers · {md.resolve()}) · tools: Read, Bash" in s, s
        assert "lints the changed files" in s and "general-purpose" in s, s
        panel_closes(t)
        assert srv.loop_requests == []


@pytest.mark.e2e
@needs_tmux
def test_auto_mode_by_shift_tab_runs_benign_calls_and_asks_risky_ones(tmp_path: Path) -> None:
    """Shift+Tab to `auto`; against the loopback server, whose scripted classifier allows the edit
    (it runs with no question) and marks `rm -rf` risky (the permission dialog asks)."""
    from loopwright.testing import ScriptedServer
    from tests.helpers import bash, use

    work = tmp_path / "work"
    (work / "build").mkdir(parents=True)
    note = work / "note.txt"
    agent = iter([[use("w1", "Write", file_path=str(note), content="hi\n")], [text("wrote the note")],
                  [bash("rm -rf build", "b1")], [text("left build alone")]])
    judged: list[str] = []

    def answer(history: list[dict[str, Any]]) -> Any:
        action = classifier_action(history)
        if action is not None:
            judged.append(action.split("\n")[1][:40])
            return verdict("ask" if "rm -rf" in action else "allow", "s")
        return next(agent)

    with ScriptedServer(answer) as srv, repl(tmp_path, "--model", "claude-sonnet-4-5", "--base-url", srv.url) as t:
        for _ in range(3):  # default -> acceptEdits -> plan -> auto
            t.keys("BTab")
        t.wait("● permission mode: auto")
        t.wait("auto mode (shift+tab to cycle)")
        t.send("write the note")
        s = t.wait("wrote the note")
        assert note.read_text() == "hi\n" and "Do you want to allow" not in s
        t.send("clean up")
        t.wait("Do you want to allow this Bash?")
        t.wait("Esc = No")
        t.keys("Escape")
        t.wait("left build alone")
        assert (work / "build").is_dir()
        assert [j.split(":")[0] for j in judged] == ["Write", "Bash"]


def test_init_asks_the_model_to_write_claude_md(tmp_path: Path) -> None:
    """/init is a turn: the model reads the repository and writes CLAUDE.md (scripted here)."""
    import asyncio

    import loopwright as lw
    from loopwright.cli.commands.memory import INIT_PROMPT
    from loopwright.cli.interactive import Repl
    from loopwright.tools.builtin import make_write_tool
    from tests.helpers import use

    model = lw.ScriptedModel([[use("w", "Write", file_path=str(tmp_path / "CLAUDE.md"), content="# CLAUDE.md\n")],
                              [text("wrote CLAUDE.md")]])
    repl_ = Repl(lw.AgentOptions(model=model, cwd=tmp_path, tools=[make_write_tool()],
                                 permission_mode="bypassPermissions"))

    async def go() -> None:
        import io

        from loopwright.cli.render import TraceRenderer

        repl_.renderer = TraceRenderer(io.StringIO(), spinner=False)
        assert await repl_.command("/init")
        assert repl_.turn is not None
        await repl_.turn

    asyncio.run(go())
    assert (tmp_path / "CLAUDE.md").read_text() == "# CLAUDE.md\n"
    assert repl_.client.history is not None and repl_.client.history[0]["content"][0]["text"].startswith(
        INIT_PROMPT[:40])
