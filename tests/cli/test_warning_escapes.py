"""A repository's file names reach `-p`'s warnings on stderr (a skill skipped, a command's name
taken): a name holding a terminal's escape sequences (set the window title, move the cursor,
clear the screen) is shown with its control characters as visible escapes, never sent to the
terminal raw (a real -p run against the loopback server)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd, text

pytestmark = pytest.mark.e2e


def test_a_hostile_file_name_in_a_warning_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    proj, home = tmp_path / "proj", tmp_path / "home"
    (proj / ".claude" / "skills" / "\x1b]0;PWNED\x07\x1b[2J").mkdir(parents=True)
    (proj / ".claude" / "skills" / "\x1b]0;PWNED\x07\x1b[2J" / "SKILL.md").write_text("no front matter\n")
    home.mkdir()
    with ScriptedServer([[text("ok")]]) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home))
        r = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", "claude-sonnet-4-5"], cwd=proj, env=env,
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    (line,) = [ln for ln in r.stderr.splitlines() if "SKILL.md" in ln]
    assert "\\x1b]0;PWNED\\x07\\x1b[2J" in line, line
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr, repr(r.stderr)
