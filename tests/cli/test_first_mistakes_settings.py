"""A new user's first mistakes in a settings file, each as a real `loopwright` subprocess in a temp
dir with its own HOME: one line naming the setting and what to write instead, exit 2 before any
model request, never a Python traceback and never a value quietly replaced by a default."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd

pytestmark = pytest.mark.e2e


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env=cli_env(HOME=str(cwd / "home"), LOOPWRIGHT_HOME=str(cwd / "home" / ".loopwright"), **env),
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("value", "says"), [("nosuch", "openai:nosuch"), ("openai:", "openai:")])
def test_a_settings_model_naming_no_model_is_refused_not_replaced_by_the_default(
        tmp_path: Path, value: str, says: str) -> None:
    """`"model": "nosuch"` in settings.json ran claude-sonnet-5-5 instead, saying nothing (the
    refusal was dropped on the way); `--model nosuch` was refused."""
    home = tmp_path / "home" / ".loopwright"
    home.mkdir(parents=True)
    (home / "settings.json").write_text(f'{{"model": "{value}"}}')
    requests: list[str] = []
    with ScriptedServer([[{"type": "text", "text": "ok"}]], log=requests.append) as srv:
        p = run("-p", "hi", cwd=tmp_path, ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k")
    assert "Traceback" not in p.stderr
    assert p.returncode == 2, p.stderr
    assert requests == []
    [line] = p.stderr.splitlines()
    assert line.startswith("loopwright: settings: model=") and says in line, line
