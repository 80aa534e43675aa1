"""Claude Code's command line on loopwright (cli/claude_flags.py): every flag and command of
`claude --help` (2.1.332, kept in tests/fixtures/claude_code_help.txt) is either taken with Claude
Code's meaning or refused by name in one line; and the flags scripts written for `claude` use
(--dangerously-skip-permissions, --tools, --system-prompt-file, --append-system-prompt-file,
--debug, --allowedTools Read Edit, -p --input-format stream-json, a positional prompt) work."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli import SUBCOMMANDS, build_parser, main
from loopwright.cli.claude_flags import COMMANDS, REFUSED, STREAM_ONLY
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, bash, cli_env, loopwright_cmd, text

HELP = (TESTS / "fixtures" / "claude_code_help.txt").read_text()


def help_flags() -> list[str]:
    """Every option string of the help's Options section (long and short)."""
    options = HELP.split("Options:", 1)[1].split("Commands:", 1)[0]
    out: list[str] = []
    for line in options.splitlines():
        m = re.match(r"^  (-[\w-]+(?:, -[\w-]+)*)", line)
        if m:
            out += [f.strip() for f in m.group(1).split(",")]
    return out


def help_commands() -> list[str]:
    section = HELP.split("Commands:", 1)[1]
    return [n for m in re.finditer(r"^  ([\w-]+(?:\|[\w-]+)*)", section, re.M) for n in m.group(1).split("|")]


def test_the_fixture_is_claude_codes_help() -> None:
    flags = help_flags()
    assert len(flags) > 70 and "--dangerously-skip-permissions" in flags and "-w" in flags
    assert {"doctor", "plugin", "plugins", "mcp", "kill"} <= set(help_commands())


def test_every_flag_is_taken_or_refused_by_name() -> None:
    taken = {s for a in build_parser()._actions for s in a.option_strings}
    missing = [f for f in help_flags() if f not in taken]
    assert missing == [], f"flags of claude --help that loopwright neither takes nor refuses: {missing}"
    refused = [*REFUSED, *STREAM_ONLY]
    for f in help_flags():  # a refused flag is in the table, never implemented beside it
        if f in refused:
            action = next(a for a in build_parser()._actions if f in a.option_strings)
            assert action.dest.startswith("cc_"), f


@pytest.mark.parametrize("flag", [*REFUSED, *STREAM_ONLY, "-n"])
def test_a_refused_flag_is_one_line_naming_it(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-p", "hi", "--model", "scripted:none.json", flag]) == 2
    err = capsys.readouterr().err.strip()
    long = {"-n": "--name"}.get(flag, flag)
    assert len(err.splitlines()) == 1 and err.startswith(f"loopwright: {long} "), err


@pytest.mark.parametrize("command", help_commands())
def test_every_command_is_loopwrights_or_refused(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    if command in SUBCOMMANDS or command in ("plugin", "plugins"):
        return
    assert command in COMMANDS, f"claude {command} is neither a loopwright subcommand nor refused"
    assert main([command]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"loopwright: `{command}` is a Claude Code command loopwright does not have: {COMMANDS[command]}"


def test_permission_modes_as_claude_code_names_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-p", "hi", "--model", "scripted:none.json", "--permission-mode", "yolo"]) == 2
    assert "--permission-mode yolo is not supported by loopwright; use one of default" in capsys.readouterr().err
    assert main(["-p", "hi", "--dangerously-skip-permissions", "--permission-mode", "plan"]) == 2
    assert "--dangerously-skip-permissions and --permission-mode plan disagree" in capsys.readouterr().err
    assert main(["-p", "hi", "-r"]) == 2
    assert capsys.readouterr().err.startswith("loopwright: -r/--resume without a session id: loopwright takes the id")


def run(srv: ScriptedServer, cwd: Path, *args: str, stdin: str | None = None,
        **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=120, env=cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", **env))


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


@pytest.mark.e2e
def test_dangerously_skip_permissions_and_space_separated_allowed_tools(tmp_path: Path) -> None:
    turns = [[bash("touch made.txt")], [text("done")]]
    with ScriptedServer(turns) as srv:
        r = run(srv, tmp_path, "-p", "go", "--model", "sonnet")
    assert r.returncode == 0 and not (tmp_path / "made.txt").exists(), "without a flag nobody may allow it"
    with ScriptedServer(turns) as srv:
        r = run(srv, tmp_path, "-p", "go", "--dangerously-skip-permissions")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "made.txt").exists()
    (tmp_path / "made.txt").unlink()
    with ScriptedServer(turns) as srv:  # `--allowedTools Read Bash` as claude takes it, prompt after it
        r = run(srv, tmp_path, "--allowedTools", "Read", "Bash", "-p", "go")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "made.txt").exists()


@pytest.mark.e2e
def test_tools_and_prompt_files(tmp_path: Path) -> None:
    (tmp_path / "sys.txt").write_text("SYSTEM FROM FILE")
    (tmp_path / "more.txt").write_text("APPENDED FROM FILE")
    with ScriptedServer([[text("hi")]]) as srv:
        r = run(srv, tmp_path, "go", "-p", "--tools", "Read", "Grep", "--system-prompt-file", "sys.txt",
                "--append-system-prompt-file", "more.txt", "--output-format", "json")
        body = srv.loop_requests[0].body
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["result"] == "hi"
    assert sorted(t["name"] for t in body["tools"]) == ["Grep", "Read"]
    assert system_text(body).startswith("SYSTEM FROM FILE") and "APPENDED FROM FILE" in system_text(body)
    assert body["messages"][0]["content"][-1]["text"] == "go", "the positional prompt"
    with ScriptedServer([[text("hi")]]) as srv:
        r = run(srv, tmp_path, "-p", "go", "--tools", "")
        assert r.returncode == 0, r.stderr
        assert "tools" not in srv.loop_requests[0].body or srv.loop_requests[0].body["tools"] == []
    r = subprocess.run([*loopwright_cmd(), "-p", "go", "--system-prompt-file", "nope.txt"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60, env=cli_env())
    assert r.returncode == 2 and "--system-prompt-file nope.txt: No such file or directory" in r.stderr


@pytest.mark.e2e
def test_debug_on_stderr_with_a_filter_and_in_a_private_file(tmp_path: Path) -> None:
    with ScriptedServer([[text("hi")], [text("hi")], [text("hi")]]) as srv:
        r = run(srv, tmp_path, "-p", "go", "--debug")
        assert r.returncode == 0, r.stderr
        assert "[debug] loopwright.cli: argv:" in r.stderr
        r = run(srv, tmp_path, "-p", "go", "--debug=!cli")
        assert r.returncode == 0 and "[debug] loopwright.cli" not in r.stderr
        r = run(srv, tmp_path, "-p", "go", "--debug-file", "dbg.log")
        assert r.returncode == 0 and "[debug]" not in r.stderr
    log = tmp_path / "dbg.log"
    assert "[debug] loopwright.cli: argv:" in log.read_text()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


@pytest.mark.e2e
def test_print_with_stream_json_input(tmp_path: Path) -> None:
    """`claude -p --input-format stream-json --output-format stream-json`: user lines in, lines out."""
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "hello"}, "parent_tool_use_id": None,
                       "session_id": "default"})
    with ScriptedServer([[text("hi there")]]) as srv:
        r = run(srv, tmp_path, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                stdin=line + "\n")
    assert r.returncode == 0, r.stderr
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert out[0]["type"] == "system" and out[0]["subtype"] == "init"
    assert out[-1]["type"] == "result" and out[-1]["result"] == "hi there"


def test_the_compatibility_rows_cover_the_help_and_say_what_instead() -> None:
    from loopwright.cli.claude_flags import compat_rows

    rows = compat_rows(build_parser())
    named = {n.strip() for kind, names, _ in rows if kind == "flag" for n in names.split(",")}
    assert set(help_flags()) <= named
    assert {n for kind, n, _ in rows if kind == "command"} >= set(help_commands()) - {"plugins", "kill"} - set(SUBCOMMANDS)
    for _kind, name, status in rows:
        assert status == "honoured" or status.startswith(("refused: ", "honoured", "only in the Agent SDK")), name
        if status.startswith("refused: "):
            assert len(status) > len("refused: ") + 5, f"{name}: say what loopwright does instead"


def test_the_doc_is_generated_from_the_same_rows() -> None:
    from loopwright.cli.claude_flags import compat_markdown, compat_rows

    doc = Path(__file__).resolve().parents[2] / "docs" / "claude-code-flags.md"
    assert doc.read_text() == compat_markdown(compat_rows(build_parser())), (
        "stale: python -c 'from loopwright.cli import build_parser; from loopwright.cli.claude_flags import "
        "compat_markdown, compat_rows; print(compat_markdown(compat_rows(build_parser())), end=\"\")' > "
        "docs/claude-code-flags.md")


def test_version_short_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["-v"])
    assert capsys.readouterr().out.startswith("loopwright ")
    assert os.environ.get("HOME")


@pytest.mark.e2e
def test_bare_as_claude_code_means_it(tmp_path: Path) -> None:
    """--bare: no settings hooks and no memory files (Claude Code's minimal mode); without it they run."""
    (tmp_path / "CLAUDE.md").write_text("The codename is HERON.\n")
    hook = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo ran >> hook.log"}]}]}}
    with ScriptedServer([[text("a")], [text("b")]]) as srv:
        r = run(srv, tmp_path, "-p", "go", "--settings", json.dumps(hook), "--bare")
        assert r.returncode == 0, r.stderr
        assert not (tmp_path / "hook.log").exists() and "HERON" not in json.dumps(srv.loop_requests[0].body)
        r = run(srv, tmp_path, "-p", "go", "--settings", json.dumps(hook))
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "hook.log").read_text() == "ran\n" and "HERON" in json.dumps(srv.loop_requests[1].body)
