"""`-p --output-format stream-json --verbose`, Claude Code 2.1.332 and loopwright on the same scripted
turns in the same kind of project (a command, a skill, an agent file, a --plugin-dir plugin): the
fields of each line an Agent SDK program reads. One run of each (a module fixture; the tests
share a worker), so the comparison costs two processes. What Claude Code lists that loopwright has
no part for (its bundled skills, built-in commands and agents, built-in plugins) is left out of the
comparison by name: loopwright lists its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, bash, claude_code_env, cli_env, loopwright_cmd, text
from tests.plugins.test_plugins import make_plugin

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ["loopwright", pytest.param("claude", marks=pytest.mark.skipif(not CLAUDE.exists(),
                                                                    reason="Claude Code not installed (tests/node)"))]
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("stream_json_vs_claude_code")]
TURNS = [[bash("echo hi")], [text("hello")]]
# The project's and the plugin's, in Claude Code's order (its own come between and after them)
COMMANDS = ["greet2", "hello", "myplug:hello", "myplug:greet"]
SKILLS = ["greet2", "myplug:greet"]


def project(root: Path) -> tuple[Path, Path, Path]:
    """root/proj with .claude/commands/hello.md, .claude/skills/greet2, .claude/agents/linter.md; the
    plugin root/plug (tests/plugins: a command, a skill, an agent); an empty HOME."""
    proj, home = root / "proj", root / "home"
    c = proj / ".claude"
    (c / "commands").mkdir(parents=True)
    (c / "commands" / "hello.md").write_text("---\ndescription: says hi\n---\nSay hi $ARGUMENTS\n")
    (c / "skills" / "greet2").mkdir(parents=True)
    (c / "skills" / "greet2" / "SKILL.md").write_text("---\nname: greet2\ndescription: a skill\n---\nGreet.\n")
    (c / "agents").mkdir()
    (c / "agents" / "linter.md").write_text("---\nname: linter\ndescription: Lints\ntools: Read\n---\nLint.\n")
    home.mkdir()
    return proj, home, make_plugin(root / "plug", mcp=False)


def run(who: str, root: Path, *args: str, turns: list[Any] = TURNS) -> subprocess.CompletedProcess[str]:
    """`-p go` of `who` in root's project (project()), on `turns`."""
    proj, home, plug = project(root)
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        return subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--plugin-dir", str(plug), *args],
                              cwd=proj, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module", params=WHO)
def stream(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, Any]]]:
    """(who, the stream-json lines of one run of TURNS with Bash allowed)."""
    who = str(request.param)
    root = tmp_path_factory.mktemp(who)
    r = run(who, root, "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash")
    assert r.returncode == 0, (who, r.stderr[-2000:])
    return who, [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def test_the_init_line_names_what_a_prompt_may_call(stream: tuple[str, list[dict[str, Any]]]) -> None:
    """slash_commands, skills, agents, plugins, apiKeySource, output_style: the project's and the
    plugin's commands and skills in Claude Code's order, the agent files' and the plugin's agents in
    a list sorted by name, the plugin with its source and version."""
    who, lines = stream
    init = lines[0]
    assert (init["type"], init["subtype"]) == ("system", "init"), who
    assert [c for c in init["slash_commands"] if c in COMMANDS] == COMMANDS, (who, init["slash_commands"])
    assert [c for c in init["skills"] if c in COMMANDS] == SKILLS, (who, init["skills"])
    assert set(init["skills"]) <= set(init["slash_commands"]), who
    assert {"general-purpose", "linter", "myplug:reviewer"} <= set(init["agents"]), (who, init["agents"])
    assert init["agents"] == sorted(init["agents"], key=str.lower), (who, init["agents"])
    plug = str(Path(init["cwd"]).parent / "plug")
    assert init["plugins"][0] == {"name": "myplug", "path": plug, "source": "myplug@inline", "version": "1.0.0"}, who
    assert (init["apiKeySource"], init["output_style"], init["claude_code_version"]) == (
        "ANTHROPIC_API_KEY", "default", "2.1.332"), who
    assert (init["permissionMode"], init["mcp_servers"], init["model"]) == ("default", [], "claude-sonnet-4-5"), who
    assert init["session_id"] == lines[-1]["session_id"] and isinstance(init["uuid"], str), who
