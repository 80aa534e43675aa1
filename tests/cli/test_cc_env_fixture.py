"""Every environment variable Claude Code documents (tests/fixtures/claude_code_env_vars.json: its
CHANGELOG's names that its 2.1.332 binary still reads, with the user's knobs the binary reads as
process.env) is in loopwright.ccenv's table: honoured (with a test), refused (one line when set) or
not applicable (never said). Set all at once, a run says one line per refused variable and nothing
else: no spam, nothing silently ignored."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from loopwright.ccenv import HONOURED, NOT_APPLICABLE, REFUSED, ZERO_ASKS, env_lines
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, loopwright_cmd, text

FIXTURE = json.loads((TESTS / "fixtures" / "claude_code_env_vars.json").read_text())
VARS: dict[str, str] = FIXTURE["vars"]
BINARY = TESTS / "node" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
# (set to "1" in the run below they would change where git or the run looks: another program's)
NOT_SET = ("GIT_DIR", "GIT_WORK_TREE")


def test_every_documented_variable_is_in_the_table_once() -> None:
    """Each of the fixture's variables is honoured, refused or not applicable, in exactly one table,
    each with a reason (the one a notice or the docs give)."""
    assert len(VARS) >= 180 and FIXTURE["version"] == "2.1.332"
    tables = (set(HONOURED), set(REFUSED), set(NOT_APPLICABLE))
    missing = sorted(n for n in VARS if not any(n in t for t in tables))
    assert not missing, f"Claude Code variables loopwright's table does not name: {missing}"
    assert not (tables[0] & tables[1]) and not (tables[0] & tables[2]) and not (tables[1] & tables[2])
    assert all(why.strip() for why in [*REFUSED.values(), *NOT_APPLICABLE.values(), *(w for w, _ in HONOURED.values())])


@pytest.mark.skipif(not BINARY.exists(), reason="Claude Code is not installed (npm install in tests/node)")
@pytest.mark.skipif(shutil.which("grep") is None, reason="no grep")
def test_the_fixtures_variables_are_in_the_installed_claude_binary() -> None:
    """The fixture is Claude Code's, not made up: every name is in the installed binary (one grep,
    a fixed-string search for all names at once)."""
    found = subprocess.run(["grep", "-aoF", *(a for n in VARS for a in ("-e", n)), str(BINARY)],
                           capture_output=True, timeout=120).stdout.decode().split()
    assert not sorted(set(VARS) - set(found))


def test_each_refused_variable_set_is_one_line_and_the_others_none() -> None:
    """All documented variables set to 1: one line per refused one, naming it; none for the honoured
    or the not-applicable ones. Set to 0: only the ones whose 0 asks something (ZERO_ASKS)."""
    on = dict.fromkeys(VARS, "1") | {"CLAUDE_CODE_EFFORT_LEVEL": "high"}
    lines = env_lines(on)
    refused = [n for n in VARS if n in REFUSED]
    assert len(lines) == len(refused) and refused
    for n in refused:
        assert sum(x.startswith(f"{n} is set: ") for x in lines) == 1, n
    off = env_lines(dict.fromkeys(VARS, "0") | {"CLAUDE_CODE_EFFORT_LEVEL": "auto"})
    assert sorted(x.split()[0] for x in off) == sorted(n for n in VARS if n in ZERO_ASKS)


@pytest.mark.e2e
def test_a_run_with_every_unused_variable_set_says_each_refused_one_once(tmp_path: Path) -> None:
    """`loopwright -p` with every refused and not-applicable variable of the fixture set (the shell's
    or a settings file's env): each refused one is named in exactly one stderr line, no
    not-applicable one is named, and the run answers."""
    names = [n for n in VARS if n in REFUSED or (n in NOT_APPLICABLE and n not in NOT_SET)]
    half = len(names) // 2
    settings = tmp_path / "cc-settings.json"
    settings.write_text(json.dumps({"env": dict.fromkeys(names[:half], "1")}))
    home = tmp_path / "home"
    with ScriptedServer([[text("done")]]) as srv:
        p = subprocess.run([*loopwright_cmd(), "-p", "go", "--base-url", srv.url, "--settings", str(settings)],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                           env=cli_env(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright"),
                                       ANTHROPIC_API_KEY="k", **dict.fromkeys(names[half:], "1")))
    assert p.returncode == 0 and "done" in p.stdout, p.stderr
    lines = p.stderr.splitlines()
    for n in names:
        said = [x for x in lines if f" {n} is set: " in f" {x}"]
        assert len(said) == (1 if n in REFUSED else 0), (n, said)
