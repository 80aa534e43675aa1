"""The rough edges a newcomer hit in their first hour (issue 47), each as they met it: a mistyped
flag, `batch --help` and `acp --help`, the scripted model's file format, `mcp add` in a workspace
not yet trusted, and the interactive mode's start-up checks (in tmux: exit 2 before the screen)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from loopwright.cli import main
from tests.helpers import LOOPWRIGHT_BIN

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scripted-turns.json"
ONE_RUN_FLAGS = ["--print", "PROMPT", "--output-format", "--include-partial-messages", "--input-format",
                 "--continue", "--resume", "--fork-session", "--session-id"]


def exits(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(argv)
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


@pytest.mark.parametrize("argv", [["--max-turns", "x"], ["--output-format", "yaml", "-p", "hi"],
                                  ["sessions", "bogus"], ["batch"], ["view", "--nope"],
                                  ["serve-scripted", "--port", "x"]])
def test_a_usage_mistake_is_one_line_and_a_pointer_to_help(argv: list[str], capsys: pytest.CaptureFixture[str],
                                                           ) -> None:
    code, out, err = exits(argv, capsys)
    lines = err.splitlines()
    assert code == 2 and out == ""
    assert len(lines) == 2, err  # not the ~23 lines of usage first
    prog = "loopwright" if argv[0].startswith("-") else f"loopwright {argv[0]}"
    assert lines[0].startswith(f"{prog}: error: ")
    assert lines[1] == f"Try '{prog} --help' for the options."


@pytest.mark.parametrize("command", ["batch", "acp"])
def test_batch_and_acp_help_list_only_the_flags_that_apply(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    if command == "acp":
        pytest.importorskip("acp", reason="the acp extra is not installed")
    code, out, _ = exits([command, "--help"], capsys)
    assert code == 0 and out.startswith(f"usage: loopwright {command}")
    text = out.replace("with --output-format json", "")  # (--json-schema's help names it)
    listed = [f for f in ONE_RUN_FLAGS if re.search(rf"(?<![\w-]){f}(?![\w-])", text)]
    assert listed == []
    for applies in ("--model", "--permission-mode", "--allowedTools", "--max-budget-usd", "--mcp-config"):
        assert applies in out
    if command == "batch":
        assert "--concurrency" in out and "--isolate" in out


@pytest.mark.parametrize(("command", "flag"), [("batch", ["-p", "hi"]), ("batch", ["--output-format", "json"]),
                                               ("acp", ["--resume", "abc"])])
def test_a_flag_left_out_is_refused_by_name_not_ignored(command: str, flag: list[str],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    if command == "acp":
        pytest.importorskip("acp", reason="the acp extra is not installed")
    extra = ["t.jsonl", "-o", "r.jsonl"] if command == "batch" else []
    code, _, err = exits([command, *extra, *flag], capsys)
    name = {"-p": "--print"}.get(flag[0], flag[0])
    assert code == 2 and f"{name} does not apply to loopwright {command}" in err.splitlines()[0]


def test_serve_scripted_help_shows_the_script_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = exits(["serve-scripted", "--help"], capsys)
    assert code == 0
    assert '"tool_use", "id": "call_1"' in out and '"stop_reason": "end_turn"' in out
    assert "examples/scripted-turns.json" in out and "--model scripted:FILE.json" in out


def test_the_shipped_script_runs_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hello.txt").write_text("hi\n")
    code = main(["-p", "what is in this directory?", "--model", f"scripted:{EXAMPLE}", "--output-format", "json"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert '"subtype": "success"' in out and '"num_turns": 1' in out and "I listed this directory" in out


def test_mcp_add_in_an_untrusted_workspace_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    monkeypatch.setenv("LOOPWRIGHT_TRUSTED_DIRS", "")  # (conftest trusts the test's temp dirs)
    assert main(["mcp", "add", "fs", "--cwd", str(work), "--", "python3", "-c", "pass"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Added stdio MCP server fs to local config"
    assert len(out) == 3 and f"loopwright trust {work}" in out[2] and "--scope user" in out[2]
    assert main(["mcp", "list", "--cwd", str(work)]) == 0
    listed = capsys.readouterr().out
    assert "not trusted" in listed and f"loopwright trust {work}" in listed
    # trusted, the same workspace says nothing more, and the server is listed
    monkeypatch.setenv("LOOPWRIGHT_TRUSTED_DIRS", str(work))
    assert main(["mcp", "add", "fs2", "--cwd", str(work), "--", "python3", "-c", "pass"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


@pytest.mark.e2e
@needs_tmux
@pytest.mark.parametrize("bad", ["model", "settings"])
def test_interactive_start_up_checks_its_inputs_before_the_screen(tmp_path: Path, bad: str) -> None:
    """`loopwright` (no -p) with a model file that does not exist or a settings file that is not
    JSON exits 2 with the reason at once, as -p does, instead of opening the screen."""
    (tmp_path / "bad.json").write_text("{not json")
    args = (["--model", "scripted:nope.json"] if bad == "model"
            else ["--model", f"scripted:{EXAMPLE}", "--settings", str(tmp_path / "bad.json")])
    status = tmp_path / "status"
    name = f"lw-newcomer-{uuid.uuid4().hex[:8]}"  # also its own tmux server (-L): no other test's, nor the user's
    env = (f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={tmp_path / 'home'} "
           f"PYTHONPATH={os.environ.get('PYTHONPATH', '')}")
    subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", name, "-x", "120", "-y", "30", "-c", str(tmp_path),
                    f"{env} {LOOPWRIGHT_BIN} {' '.join(args)}; echo $? > {status}; sleep 30"], check=True, timeout=10)
    try:
        deadline = time.monotonic() + 30
        while not (status.exists() and status.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        screen = subprocess.run(["tmux", "-L", name, "capture-pane", "-p", "-t", name], capture_output=True, text=True,
                                timeout=10).stdout
        assert (status.read_text().strip() if status.exists() else "") == "2", screen
        want = "cannot read scripted model file nope.json" if bad == "model" else "invalid JSON in settings file"
        assert f"loopwright: {want}" in screen
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, timeout=10)
