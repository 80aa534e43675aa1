"""The `loopwright` command: flags, output formats, exit codes, clear errors, the trace."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from loopwright.cli import main
from loopwright.cli.config import UsageError, check_model, default_system_prompt, split_tools
from loopwright.cli.render import Spinner, TraceRenderer
from loopwright.invariant import holds
from loopwright.messages import AssistantMessage, ResultMessage, SystemMessage, UserMessage
from loopwright.sessions import get_session_messages
from loopwright.usage import CallUsage, Usage
from tests.helpers import cli_env, loopwright_cmd, still_alive, text, until, use, write_script


def cli(*args: str, cwd: Path | None = None, stdin: str | None = None, env: dict[str, str] | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), *args], cwd=cwd, input=stdin if stdin is not None else "", capture_output=True,
                          text=True, timeout=timeout, env=cli_env(**(env or {})))


def assert_clean_error(p: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout
    for n in needles:
        assert n in p.stderr, (n, p.stderr)


# --- startup ------------------------------------------------------------------------------

@pytest.mark.e2e
def test_version() -> None:
    p = cli("--version")
    assert p.returncode == 0 and p.stdout.strip().startswith("loopwright ")


@pytest.mark.e2e
def test_import_stays_light() -> None:
    """`import loopwright` and the CLI entry point load no provider SDK and no UI library."""
    code = ("import sys, loopwright, loopwright.cli; "
            "print(sorted(m for m in ('anthropic', 'openai', 'rich', 'prompt_toolkit', 'jsonschema', 'pydantic', 'httpx', 'bashlex') "
            "if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_split_tools_keeps_rules_whole() -> None:
    assert split_tools(["Bash Read", "Edit,Write", "Bash(git diff *)"]) == ["Bash", "Read", "Edit", "Write", "Bash(git diff *)"]


def test_default_system_prompt_is_byte_stable(tmp_path: Path) -> None:
    from loopwright.tools.base import Tool

    tools = [Tool("Read", "read", {"type": "object"}, lambda x: "", read_only=True),
             Tool("Bash", "run", {"type": "object"}, lambda x: "")]
    a = default_system_prompt(tmp_path, tools)
    assert a == default_system_prompt(tmp_path, tools)
    assert str(tmp_path) in a and "Read, Bash" in a and "Is a git repository: no" in a
    (tmp_path / ".git").mkdir()
    assert "Is a git repository: yes" in default_system_prompt(tmp_path / "sub", tools)


# --- bad input: a clear message and a non-zero exit, never a traceback -----------------------

@pytest.mark.e2e
def test_empty_prompt(tmp_path: Path) -> None:
    assert_clean_error(cli("-p", "", "--model", "scripted:x.json", cwd=tmp_path), 2, "prompt is empty")
    assert_clean_error(cli("-p", "--model", "scripted:x.json", stdin="  \n", cwd=tmp_path), 2, "prompt is empty")


@pytest.mark.e2e
def test_nonexistent_cwd(tmp_path: Path) -> None:
    p = cli("-p", "hi", "--model", "scripted:x.json", "--cwd", str(tmp_path / "nope"))
    assert_clean_error(p, 2, "--cwd", "no such directory")


@pytest.mark.e2e
def test_unknown_model_provider(tmp_path: Path) -> None:
    assert_clean_error(cli("-p", "hi", "--model", "mistral:large", cwd=tmp_path), 2, "unknown model provider 'mistral'")
    assert_clean_error(cli("-p", "hi", "--model", "gpt-4o", cwd=tmp_path), 2, "unknown model 'gpt-4o'")


@pytest.mark.e2e
def test_missing_api_key(tmp_path: Path) -> None:
    p = cli("-p", "hi", "--model", "claude-sonnet-4-5", cwd=tmp_path)
    assert_clean_error(p, 2, "ANTHROPIC_API_KEY", "--model scripted:")


@pytest.mark.e2e
def test_missing_script_file(tmp_path: Path) -> None:
    p = cli("-p", "hi", "--model", f"scripted:{tmp_path / 'missing.json'}", cwd=tmp_path)
    assert_clean_error(p, 2, "cannot read scripted model file")


def test_check_model_accepts_known_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    for spec in ("claude-sonnet-4-5", "anthropic:claude-x", "scripted:f.json", "openai:gpt-4o"):
        check_model(spec, "http://127.0.0.1:1")
    with pytest.raises(UsageError):
        check_model("openai:", None)


def test_every_subcommand_entry_names_a_function_and_its_usage() -> None:
    # A subcommand is one line in SUBCOMMANDS: a typo there must fail here, not for a user.
    import importlib

    from loopwright.cli import SUBCOMMANDS, main_parser

    epilog = main_parser().epilog or ""  # (what `loopwright --help` ends with)
    for name, (target, usage) in SUBCOMMANDS.items():
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), name
        assert usage.split()[0] == name and usage in epilog


def test_main_picks_interactive_only_without_p_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import loopwright.cli.headless as headless
    import loopwright.cli.interactive as interactive

    calls: list[str] = []
    monkeypatch.setattr(interactive, "interactive_main", lambda args: calls.append("interactive") or 0)
    monkeypatch.setattr(headless, "run_cli", lambda args: calls.append("headless") or 0)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    assert main([]) == 0 and main(["-p", "x"]) == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # piped input: headless
    assert main([]) == 0
    assert calls == ["interactive", "headless", "headless"]


def test_unexpected_exception_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import loopwright.cli.headless as headless

    def boom(args: Any) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(headless, "run_cli", boom)
    assert main(["-p", "x"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "disk on fire" in err and "--verbose" in err and "Traceback" not in err
    assert main(["-p", "x", "--verbose"]) == 1
    assert "Traceback" in capsys.readouterr().err


# --- runs with the scripted model and the built-in tools ----------------------------------------

def fix_turns(d: Path) -> list[Any]:
    """Read a.txt, Edit it, answer: Claude Code's tool names and inputs (absolute paths)."""
    f = str(d / "a.txt")
    return [
        [{"type": "text", "text": "Reading it."}, use("u1", "Read", {"file_path": f})],
        [use("u2", "Edit", {"file_path": f, "old_string": "bug", "new_string": "fix"})],
        [{"type": "text", "text": "Fixed."}],
    ]


@pytest.mark.e2e
def test_json_result_fields(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a bug\n")
    p = cli("-p", "fix it", "--model", write_script(tmp_path, fix_turns(tmp_path)), "--output-format", "json",
            "--permission-mode", "acceptEdits", "--no-session-persistence", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    for key in ("type", "subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "result", "session_id",
                "total_cost_usd", "usage", "permission_denials", "stop_reason", "model_calls"):
        assert key in r, key
    assert (r["type"], r["subtype"], r["is_error"], r["num_turns"], r["model_calls"]) == ("result", "success", False, 2, 3)
    assert r["result"] == "Fixed." and r["stop_reason"] == "end_turn" and r["permission_denials"] == []
    assert (tmp_path / "a.txt").read_text() == "a fix\n"


@pytest.mark.e2e
def test_text_mode_trace_on_stderr_result_on_stdout(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a bug\n")
    p = cli("-p", "fix it", "--model", write_script(tmp_path, fix_turns(tmp_path)), "--permission-mode", "acceptEdits",
            "--no-session-persistence", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "Fixed.\n"
    assert "⏺ Read(a.txt)" in p.stderr and "⏺ Edit(a.txt: bug → fix)" in p.stderr
    assert "◆ call 1: n_k=" in p.stderr and "◆ call 3:" in p.stderr and "● success" in p.stderr
    assert "\r" not in p.stderr and "\x1b" not in p.stderr  # no spinner when stderr is not a TTY


@pytest.mark.e2e
def test_default_mode_denies_edit_with_clear_message(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a bug\n")
    p = cli("-p", "fix it", "--model", write_script(tmp_path, fix_turns(tmp_path)), "--output-format", "json",
            "--no-session-persistence", cwd=tmp_path)
    r = json.loads(p.stdout)
    assert p.returncode == 0 and r["subtype"] == "success"
    assert [d["tool_name"] for d in r["permission_denials"]] == ["Edit"]
    assert (tmp_path / "a.txt").read_text() == "a bug\n"


@pytest.mark.e2e
def test_allowed_and_disallowed_tools(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a bug\n")
    model = write_script(tmp_path, fix_turns(tmp_path))
    p = cli("-p", "fix it", "--model", model, "--output-format", "json", "--allowedTools", "Edit",
            "--no-session-persistence", cwd=tmp_path)
    assert json.loads(p.stdout)["permission_denials"] == []
    assert (tmp_path / "a.txt").read_text() == "a fix\n"
    (tmp_path / "a.txt").write_text("a bug\n")
    p = cli("-p", "fix it", "--model", model, "--output-format", "stream-json", "--verbose", "--disallowedTools", "Read,Edit",
            "--permission-mode", "bypassPermissions", "--no-session-persistence", cwd=tmp_path)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    tools = lines[0]["tools"]  # a disallowed tool is not offered at all, so the model cannot call it
    assert "Read" not in tools and "Edit" not in tools and "Write" in tools
    assert (tmp_path / "a.txt").read_text() == "a bug\n"


@pytest.mark.e2e
def test_max_turns_exit_1(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a bug\n")
    p = cli("-p", "fix it", "--model", write_script(tmp_path, fix_turns(tmp_path)), "--output-format", "json", "--max-turns", "1",
            "--permission-mode", "acceptEdits", "--no-session-persistence", cwd=tmp_path)
    r = json.loads(p.stdout)
    assert p.returncode == 1 and r["subtype"] == "error_max_turns" and r["is_error"] is True
    assert (r["num_turns"], r["model_calls"]) == (1, 2)
    assert (tmp_path / "a.txt").read_text() == "a bug\n"


@pytest.mark.e2e
def test_stream_json_lines_end_with_result(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a bug\n")
    p = cli("-p", "fix it", "--model", write_script(tmp_path, fix_turns(tmp_path)), "--output-format", "stream-json",
            "--verbose", "--permission-mode", "acceptEdits", "--no-session-persistence", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(ln) for ln in p.stdout.splitlines()]
    assert [x["type"] for x in lines] == ["system", "assistant", "user", "assistant", "user", "assistant", "result"]
    assert lines[0]["subtype"] == "init" and lines[-1]["subtype"] == "success"
    assert lines[0]["permissionMode"] == "acceptEdits" and lines[0]["cwd"] == str(tmp_path.resolve())
    sid = lines[0]["session_id"]
    assert all(x["session_id"] == sid for x in lines)
    assert lines[2]["message"]["content"][0]["tool_use_id"] == "u1"


@pytest.mark.e2e
def test_prompt_from_stdin(tmp_path: Path) -> None:
    p = cli("-p", "--model", write_script(tmp_path, [[{"type": "text", "text": "hello back"}]]),
            "--no-session-persistence", stdin="hello\n", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == "hello back\n", p.stderr


# --- the renderer ------------------------------------------------------------------------------

class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def _messages(cwd: Path) -> list[Any]:
    cu = CallUsage(1200, 30, 0, 0, 0.0042, "m")
    return [
        SystemMessage("init", {"session_id": "abcdef123456", "model": "m", "cwd": str(cwd), "permission_mode": "default"}),
        AssistantMessage([TextBlock("Running."), ToolUseBlock("u1", "Bash", {"command": "pytest -q"})], "m", "tool_use", cu),
        UserMessage([ToolResultBlock("u1", "collected 3\n1 failed, 2 passed", True)]),
        AssistantMessage([TextBlock("Done.")], "m", "end_turn", cu),
        ResultMessage("success", False, 1, 2, [], "Done.", "end_turn", 0.0084, Usage(), [cu, cu], 10, 5, "abc", []),
    ]


def test_renderer_plain_lines_when_not_a_tty(tmp_path: Path) -> None:
    out = io.StringIO()
    r = TraceRenderer(out)
    for m in _messages(tmp_path):
        r.show(m)
    r.close()
    text = out.getvalue()
    assert "⏺ Bash(pytest -q)" in text and "⎿ ✗ Bash: 1 failed, 2 passed  (2 lines)" in text
    assert "n_k=1200 in, 30 out, $0.0042" in text
    assert "\r" not in text and "\x1b" not in text


def test_spinner_draws_on_a_tty_and_clears_before_lines() -> None:
    out = FakeTTY()
    s = Spinner(out, enabled=True)
    s.start("model call 1…")
    until(lambda: "model call 1…" in out.getvalue())  # wait for a frame (no timing asserted)
    s.write("line\n")
    s.close()
    text = out.getvalue()
    assert "model call 1…" in text
    assert "\r\x1b[2Kline\n" in text  # the frame was erased before the trace line


def test_renderer_verbose_shows_full_tool_output(tmp_path: Path) -> None:
    out = io.StringIO()
    r = TraceRenderer(out, verbose=True)
    for m in _messages(tmp_path):
        r.show(m)
    r.close()
    assert "      │ collected 3\n      │ 1 failed, 2 passed\n" in out.getvalue()


def test_piped_stdin_is_appended_to_the_prompt(tmp_path: Path) -> None:
    import argparse

    from loopwright.cli.headless import read_prompt

    r, w = os.pipe()
    os.write(w, b"diff --git a/x b/x\n")
    os.close(w)
    with os.fdopen(r) as stdin:
        assert read_prompt(argparse.Namespace(prompt="review this"), stdin) == "review this\n\ndiff --git a/x b/x\n"
    empty = tmp_path / "empty"
    empty.write_text("")
    with empty.open() as stdin:
        assert read_prompt(argparse.Namespace(prompt="just this"), stdin) == "just this"
    with empty.open() as stdin:
        assert read_prompt(argparse.Namespace(prompt=None), stdin) == ""


def test_describe_input_shows_what_a_reader_needs(tmp_path: Path) -> None:
    from loopwright.cli.render import describe_input

    assert describe_input("Bash", {"command": "make test", "description": "run"}, tmp_path) == "make test"
    assert describe_input("Bash", {"command": "npm run dev", "run_in_background": True}, None) == "npm run dev &"
    assert describe_input("Read", {"file_path": str(tmp_path / "src" / "a.py")}, tmp_path) == "src/a.py"
    assert describe_input("Read", {"file_path": "/etc/hosts"}, tmp_path) == "/etc/hosts"
    assert describe_input("MultiEdit", {"file_path": str(tmp_path / "a.py"), "edits": [{}, {}]}, tmp_path) == "a.py: 2 edits"
    assert describe_input("Grep", {"pattern": "TODO", "path": str(tmp_path / "src")}, tmp_path) == "TODO in src"
    assert describe_input("TodoWrite", {"todos": [{}, {}, {}]}, tmp_path) == "3 todos"
    assert describe_input("BashOutput", {"bash_id": "bash_2"}, tmp_path) == "bash_2"
    assert describe_input("custom", {"x": 1}, tmp_path) == '{"x": 1}'


@pytest.mark.e2e
def test_closed_stdin_is_not_a_crash(tmp_path: Path) -> None:
    """Some runners start programs with fd 0 closed: sys.stdin is then None."""
    script = tmp_path / "s.json"
    script.write_text('[[{"type": "text", "text": "hi"}]]')
    code = ("import os, sys; os.close(0); sys.stdin = None; from loopwright.cli import main; "
            f"sys.exit(main(['-p', 'hello', '--model', 'scripted:{script}', '--output-format', 'json']))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["result"] == "hi"


# --- arguments that are not UTF-8 -----------------------------------------------------------------

@pytest.mark.e2e
def test_cli_prompt_with_bytes_that_are_not_utf8_runs(tmp_path: Path) -> None:
    # Before: the argv's lone surrogate ended the run with "UnicodeEncodeError: ... surrogates
    # not allowed" (exit 1) and left an empty session behind.
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([[text("ok")]]))
    env = {**os.environ, "LOOPWRIGHT_HOME": str(tmp_path / "home")}
    p = subprocess.run([*loopwright_cmd(), "-p", b"caf\xe9 \xff", "--append-system-prompt", b"\xfe",
                        "--model", f"scripted:{script}", "--output-format", "json", "--cwd", str(tmp_path)],
                       capture_output=True, env=env, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["subtype"] == "success" and out["result"] == "ok"
    h = get_session_messages(out["session_id"], sessions_dir=tmp_path / "home" / "projects")
    assert h[0]["content"][0]["text"] == "caf\ufffd \ufffd"



# --- what the terminal shows ----------------------------------------------------------------------

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


def test_every_character_shown_as_an_escape_is_one_str_isprintable_refuses() -> None:
    """visible() returns printable text as it is, without its pattern: that is right only if
    no character the pattern escapes is printable (over all of Unicode)."""
    import re

    from loopwright.cli.render import _CONTROL, visible

    escaped = [chr(c) for c in range(0x110000) if re.match(_CONTROL, chr(c))]
    assert len(escaped) > 60 and not any(c.isprintable() for c in escaped)
    assert visible("plain · text …") == "plain · text …" and visible("a\x1bb\u202ec") == "a\\x1bb\\u202ec"
    assert visible("two\tcolumns\nlines\n") == "two\tcolumns\nlines\n" and visible("a\rb\n") == "a\\x0db\n"


def test_permission_question_shows_the_whole_command() -> None:
    # Before: the question showed the command cut at 100 characters (`echo aaa…`), so the
    # `; rm -rf ~` at its end was approved unseen; escapes went to the terminal raw.
    from loopwright.cli.interactive import Repl

    command = "echo " + "a" * 200 + f" {ESCAPES}; rm -rf ~"
    repl = Repl(lw.AgentOptions(model=lw.ScriptedModel([[text("x")]])))

    async def main() -> Any:
        task = asyncio.ensure_future(repl.ask_permission("Bash", {"command": command}))
        while repl.asker.dialog is None:
            await asyncio.sleep(0.01)
        rows = repl.asker.dialog.rows(1000, 100)  # the permission dialog, on a wide screen
        repl.asker.dialog.escape()
        return await task, "\n".join("".join(t for _, t in r) for r in rows)

    decision, question = asyncio.run(main())
    assert isinstance(decision, lw.Deny)
    assert "rm -rf ~" in question and "a" * 200 in question
    assert not any(c in question for c in "\x1b\x07\r\u202e")



def test_permission_question_for_leaving_the_sandbox_says_so_and_is_its_own_always(tmp_path: Path) -> None:
    from loopwright.cli.dialog import PermissionAsker
    from loopwright.cli.preview import permission_preview

    boxed, unboxed = {"command": "make"}, {"command": "make", "dangerouslyDisableSandbox": True}
    p = permission_preview("Bash", unboxed)
    assert "outside the sandbox" in p.summary
    assert any("OUTSIDE the sandbox" in t for ln in p.lines for _, t in ln)
    assert not any("OUTSIDE" in t for ln in permission_preview("Bash", boxed).lines for _, t in ln)
    asker = PermissionAsker(lw.AgentOptions(cwd=str(tmp_path)), lambda _s: None)

    async def ask(inp: dict[str, Any], choice: int) -> tuple[Any, str]:
        task = asyncio.ensure_future(asker.ask("Bash", inp))
        while asker.dialog is None:
            await asyncio.sleep(0.01)
        label = asker.dialog.choices[1]
        asker.dialog.choose(choice)
        return await task, label

    decision, label = asyncio.run(ask(unboxed, 1))  # "don't ask again"
    assert isinstance(decision, lw.Allow) and "this exact call" in label  # no rule for an escape
    assert asker.approved("Bash", unboxed) and not asker.approved("Bash", boxed)
    assert asker.granted.rules == ()


# --- --add-dir is relative to the shell -----------------------------------------------------------

@pytest.mark.e2e
def test_cli_add_dir_is_relative_to_the_shell_not_to_cwd(tmp_path: Path) -> None:
    # Before: `--cwd proj --add-dir lib` was checked as ./lib but granted as proj/lib, so the
    # directory the user named stayed closed (and a proj/lib, if any, was opened instead).
    (tmp_path / "proj").mkdir()
    (tmp_path / "lib").mkdir()
    target = tmp_path / "lib" / "x.txt"
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([[use("u1", "Write", {"file_path": str(target), "content": "x"})], [text("ok")]]))
    p = subprocess.run([*loopwright_cmd(), "-p", "go", "--cwd", "proj", "--add-dir", "lib", "--model", f"scripted:{script}",
                        "--permission-mode", "acceptEdits", "--no-session-persistence", "--output-format", "json"],
                       cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["permission_denials"] == [] and target.read_text() == "x"



# --- signals end the run cleanly ------------------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_cli_sigterm_kills_the_running_command_and_keeps_the_session_paired(sig: int, tmp_path: Path) -> None:
    # Before: SIGTERM ended loopwright at once; the command the Bash tool had started (in its
    # own process group) kept running, and the transcript ended in an unanswered tool_use.
    pid_file = tmp_path / "pid"
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([[use("u1", "Bash", {"command": f"sleep 120 & echo $! > {pid_file}; wait"})],
                                  [text("done")]]))
    env = {**os.environ, "LOOPWRIGHT_HOME": str(tmp_path / "home")}
    p = subprocess.Popen([*loopwright_cmd(), "-p", "go", "--model", f"scripted:{script}", "--allowedTools", "Bash",
                          "--output-format", "stream-json", "--verbose"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
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
        # the kill is SIGTERM then SIGKILL after a grace period, not waited for; a zombie (an orphan a
        # container's PID 1 may never reap) is ended, which os.kill(pid, 0) did not tell
        assert not still_alive([pid]), "the command's process survived loopwright"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # a failing run must not leave it behind either
    sid = json.loads(out.splitlines()[0])["session_id"]
    h = get_session_messages(sid, sessions_dir=tmp_path / "home" / "projects")
    assert [m["role"] for m in h] == ["user", "assistant", "user"] and holds(h)

