"""An agent's MEMORY.md (`memory: project | local | user`) is read as other memory files are: at
most memory.MAX_FILE_BYTES, a regular file only, and, for a project's agent, never through a link
that leads out of the workspace (a repository's MEMORY.md linked to ~/.ssh/id_rsa would be sent to
the model, trusted workspace or not). Each refusal is one line in the memory section that names
the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loopwright.agents import agent_memory
from loopwright.memory import MAX_FILE_BYTES


def _project(tmp_path: Path, scope: str = "project") -> tuple[Path, Path]:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    folder = proj / ".claude" / ("agent-memory" if scope == "project" else "agent-memory-local") / "helper"
    folder.mkdir(parents=True)
    return proj, folder / "MEMORY.md"


@pytest.mark.parametrize("scope", ["project", "local"])
def test_a_memory_md_linked_out_of_the_workspace_is_not_read(tmp_path: Path, scope: str) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("-----BEGIN PRIVATE KEY----- SECRET-KEY-MATERIAL\n")
    proj, index = _project(tmp_path, scope)
    index.symlink_to(secret)
    section = agent_memory(scope, "helper", proj)
    assert "SECRET-KEY-MATERIAL" not in section
    assert f"{index} is a link to {secret}, outside the workspace; not read" in section


def test_a_memory_md_linked_inside_the_workspace_is_read(tmp_path: Path) -> None:
    proj, index = _project(tmp_path)
    notes = proj / "docs" / "helper-memory.md"
    notes.parent.mkdir()
    notes.write_text("REMEMBERED-FACT: the build uses make.\n")
    index.symlink_to(os.path.relpath(notes, index.parent))
    assert "REMEMBERED-FACT: the build uses make." in agent_memory("project", "helper", proj)


def test_a_memory_md_over_the_cap_is_not_read(tmp_path: Path) -> None:
    proj, index = _project(tmp_path)
    index.write_text("FIRST-LINE\n" + "x" * MAX_FILE_BYTES)
    section = agent_memory("project", "helper", proj)
    assert "FIRST-LINE" not in section
    assert f"{index}: {MAX_FILE_BYTES + 11:,} bytes, over the {MAX_FILE_BYTES:,}-byte cap for a memory file; not read" \
        in section


def test_a_memory_md_that_is_a_fifo_does_not_hang_the_start(tmp_path: Path) -> None:
    proj, index = _project(tmp_path)
    os.mkfifo(index)
    section = agent_memory("project", "helper", proj)  # (read with a blocking open, this never returns)
    assert f"{index}: not a regular file (a device, FIFO or socket), not read" in section


def test_the_users_own_memory_may_be_a_link_but_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    elsewhere = tmp_path / "dotfiles" / "helper.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text("USER-FACT\n")
    folder = home / ".claude" / "agent-memory" / "helper"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").symlink_to(elsewhere)
    assert "USER-FACT" in agent_memory("user", "helper", tmp_path / "proj")
    elsewhere.write_text("USER-FACT\n" + "x" * MAX_FILE_BYTES)
    section = agent_memory("user", "helper", tmp_path / "proj")
    assert "USER-FACT" not in section and "-byte cap for a memory file; not read" in section


def test_a_memory_directory_linked_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    """`.claude/agent-memory` linked to a directory of the user's: no directory is made there and
    the model is not told to write there; the subagent does not start (its memory directory, named)."""
    outside = tmp_path / "home" / "notes"
    outside.mkdir(parents=True)
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "agent-memory").symlink_to(outside)
    with pytest.raises(ValueError, match=r"agent-memory/helper is a link to .*/home/notes/helper, outside the workspace"):
        agent_memory("project", "helper", proj)
    assert not (outside / "helper").exists()


def test_the_users_agent_memory_directories_are_made_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`memory: user` with no ~/.claude yet: every directory made on the way (~/.claude,
    ~/.claude/agent-memory, the agent's) is the user's alone (0700), whatever the umask; the
    parents were made 0755, the names of the user's agents open to every local user."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    old = os.umask(0o022)
    try:
        agent_memory("user", "helper", tmp_path)
    finally:
        os.umask(old)
    for d in (home / ".claude", home / ".claude" / "agent-memory", home / ".claude" / "agent-memory" / "helper"):
        assert oct(d.stat().st_mode & 0o777) == "0o700", d


@pytest.mark.parametrize(("name", "folder"), [("plugin:helper", "plugin-helper"), ("../../escape", "------escape"),
                                              ("a/b.c", "a-b-c"), ("", "unknown")])
def test_an_agents_memory_directory_is_named_as_claude_code_names_it(tmp_path: Path, name: str, folder: str) -> None:
    """Claude Code makes every character of the agent's name but letters, digits, `-` and `_` a
    `-` (its cli.js: `e.replace(/[^a-zA-Z0-9\\-_]/g,"-")`, "unknown" when empty): a plugin's agent
    (`plugin:helper`) has a memory, in `plugin-helper/`; a name with separators or `..` never
    leaves agent-memory/. The name was refused, so a plugin's agent with a memory did not start."""
    proj = tmp_path / "proj"
    proj.mkdir()
    section = agent_memory("project", name, proj)
    made = proj / ".claude" / "agent-memory" / folder
    assert made.is_dir() and f"`{made}/`" in section, section
    assert [p.name for p in (proj / ".claude" / "agent-memory").iterdir()] == [folder]


def test_a_plugin_agent_with_a_memory_starts(tmp_path: Path) -> None:
    import loopwright as lw
    from tests.helpers import text, use

    agent = lw.AgentDefinition(description="helps", prompt="You are the helper.", memory="project")
    r = lw.run("go", lw.AgentOptions(
        model=lw.ScriptedModel([[use("a1", "Agent", description="d", prompt="do it", subagent_type="plugin:helper")],
                                [text("sub done")], [text("all done")]]),
        tools=lw.default_tools(), cwd=tmp_path, agents={"plugin:helper": agent}))
    result = r.messages[2]["content"][0]
    assert not result.get("is_error") and "sub done" in str(result["content"]), result
    assert (tmp_path / ".claude" / "agent-memory" / "plugin-helper").is_dir()
