"""The user's own status line (Claude Code's "statusLine" command, cli/statusline.py's CustomStatus):
run with Claude Code's JSON on stdin, its first line shown under the interactive prompt; a
project's statusLine runs only in a trusted workspace."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
from pathlib import Path

import pytest

from loopwright.cli.statusline import CustomStatus
from loopwright.messages import SystemMessage
from loopwright.options import AgentOptions

pytestmark = pytest.mark.e2e  # the status commands are real processes
SCRIPT = ("import json, sys; d = json.load(sys.stdin); "
          "print('MODEL=' + d['model']['id'] + ' CWD=' + d['cwd'] + ' STYLE=' + d['output_style']['name']); print('second')")


def command() -> str:
    return f"{sys.executable} -c \"{SCRIPT}\""


def test_the_command_gets_the_json_and_its_first_line_is_shown(tmp_path: Path) -> None:
    status = CustomStatus(command(), tmp_path, padding=2)
    seen: list[str] = []
    status.on_change = lambda: seen.append(status.text)  # the REPL redraws its toolbar on it

    async def go() -> None:
        status.observe(SystemMessage("init", {"model": "claude-x", "session_id": "s1"}))
        assert status._task is not None
        await status._task

    asyncio.run(go())
    assert status.text == f"  MODEL=claude-x CWD={tmp_path} STYLE=default" and status.error == ""
    assert seen == [status.text], "the new line is announced once it is there"


# (CI printed "Exception ignored in: BaseSubprocessTransport.__del__ ... Event loop is closed" here: the
# timed-out command's transport was left open when its reap took longer than the bound on a loaded
# machine; it is closed now (childout.close), and a collection right after the loop would show it)
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_slow_or_failing_command_keeps_the_last_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("loopwright.cli.statusline.STATUS_TIMEOUT", 0.3)
    status = CustomStatus("sleep 5", tmp_path)
    status.text = "before"
    asyncio.run(status.run())
    gc.collect()
    assert status.text == "before" and "took over" in status.error
    status = CustomStatus("echo half; exit 3", tmp_path)
    asyncio.run(status.run())
    assert status.text == "half" and status.error == "statusLine command exited with 3"


def test_settings_select_it_and_trust_gates_a_projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = {"statusLine": {"type": "command", "command": command()}}
    user = Path(os.environ["HOME"]) / ".claude"
    user.mkdir(parents=True)
    (user / "settings.json").write_text(json.dumps({**line, "outputStyle": "Explanatory"}))
    opts = AgentOptions(cwd=str(tmp_path), setting_sources=["user", "project"], claude_settings=True)
    status = CustomStatus.from_options(opts)
    assert status is not None and status.command == command()
    assert status.data["output_style"] == {"name": "Explanatory"}
    (user / "settings.json").unlink()
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(line))
    assert CustomStatus.from_options(opts) is not None, "a trusted workspace's own status line runs"
    monkeypatch.delenv("LOOPWRIGHT_TRUSTED_DIRS")
    assert CustomStatus.from_options(opts) is None, "untrusted: the project's command never runs"
    from loopwright.settings import load_settings

    ignored = load_settings(tmp_path, ["project"], claude=True, trusted=False).ignored
    assert [i.item for i in ignored] == ["statusLine"]
    with pytest.raises(ValueError, match="statusLine"):
        load_settings(tmp_path, [], extra={"statusLine": "echo hi"})


def test_the_interactive_prompt_shows_it(tmp_path: Path) -> None:
    from loopwright.cli.interactive import Repl

    opts = AgentOptions(model="scripted:unused.json", cwd=str(tmp_path), setting_sources=["user"],
                        settings={"statusLine": {"type": "command", "command": command()}})
    repl = Repl(opts)
    assert repl.custom_status is not None

    async def go() -> None:
        repl.custom_status.refresh()  # type: ignore[union-attr]
        await repl.custom_status.aclose()  # type: ignore[union-attr]

    asyncio.run(go())
    assert repl.toolbar().splitlines()[0] == f"MODEL= CWD={tmp_path.resolve()} STYLE=default"


@pytest.mark.skipif(__import__("shutil").which("tmux") is None, reason="needs tmux")
def test_in_a_real_terminal(tmp_path: Path) -> None:
    """`loopwright` in tmux with a statusLine in --settings: its line is under the prompt."""
    from tests.cli.test_interactive_dialog import session
    from tests.helpers import text

    line = {"statusLine": {"type": "command", "command": "echo STATUS-FROM-USER-$(basename $PWD)"}}
    with session(tmp_path, [[text("hi")]], "--settings", json.dumps(line)) as (t, _):
        t.wait("STATUS-FROM-USER-work")
