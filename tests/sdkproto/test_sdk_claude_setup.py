"""The official Claude Agent SDK with loopwright as its CLI (issue 42): `plugins=`, `agents=` and
`setting_sources=` with a Claude Code user's files (agent files, a plugin directory, an output
style); where Claude Code is installed the same scenarios run against it as the reference."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import text, use
from tests.plugins.test_plugins import make_plugin
from tests.sdkproto.test_sdk_protocol import CLIS, collect, options, result_of, system_text

sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import AgentDefinition, SystemMessage  # noqa: E402

pytestmark = pytest.mark.e2e


def init_of(msgs: list[Any]) -> dict[str, Any]:
    return dict(next(m for m in msgs if isinstance(m, SystemMessage) and m.subtype == "init").data)


@pytest.mark.parametrize("cli", CLIS)
def test_plugins_option_loads_a_plugin_directory(cli: str, tmp_path: Path) -> None:
    plug = make_plugin(tmp_path / "plug", mcp=False)
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedServer([[text("done")]]) as srv:
        msgs = asyncio.run(collect("/myplug:hello sdk", options(cli, srv, work,
                                                                plugins=[{"type": "local", "path": str(plug)}])))
        first = json.dumps(srv.loop_requests[0].body["messages"])
    assert result_of(msgs).result == "done"
    assert {"name": "myplug", "path": str(plug), "source": "myplug@inline", "version": "1.0.0"} in init_of(msgs)["plugins"]
    assert "HELLO-FROM-PLUGIN sdk" in first
    assert (plug / "hook.log").read_text() == "hooked\n", "the plugin's UserPromptSubmit hook ran"


def test_setting_sources_bring_agent_files(tmp_path: Path) -> None:
    """setting_sources=["project"]: .claude/agents/linter.md is a subagent type; with [] it is not.
    (Claude Code's subagent makes more calls than this script has: loopwright only.)"""
    cli = "loopwright"
    (tmp_path / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / ".claude" / "agents" / "linter.md").write_text(
        "---\nname: linter\ndescription: Lints files\ntools: Read, Grep\n---\nYou are LINTER-PROMPT.\n")
    turns = [[use("a1", "Agent", description="lint", prompt="lint it", subagent_type="linter")], [text("clean")],
             [text("all clean")]]
    with ScriptedServer(turns) as srv:
        msgs = asyncio.run(collect("lint", options(cli, srv, tmp_path, setting_sources=["project"])))
        sub = srv.loop_requests[1].body
    assert result_of(msgs).result == "all clean"
    assert "linter" in init_of(msgs)["agents"]
    assert "LINTER-PROMPT" in system_text(sub) and sorted(t["name"] for t in sub["tools"]) == ["Grep", "Read"]
    with ScriptedServer([[text("hi")]]) as srv:
        msgs = asyncio.run(collect("x", options(cli, srv, tmp_path, setting_sources=[])))
    assert "linter" not in init_of(msgs)["agents"]


def test_agents_option_with_disallowed_tools(tmp_path: Path) -> None:
    agents = {"safe": AgentDefinition(description="No shell", prompt="You are SAFE.", disallowedTools=["Bash", "Write"])}
    turns = [[use("a1", "Agent", description="x", prompt="p", subagent_type="safe")], [text("ok")], [text("done")]]
    with ScriptedServer(turns) as srv:
        msgs = asyncio.run(collect("go", options("loopwright", srv, tmp_path, agents=agents)))
        sub = srv.loop_requests[1].body
    assert result_of(msgs).result == "done"
    names = {t["name"] for t in sub["tools"]}
    assert "You are SAFE." in system_text(sub) and "Read" in names and not {"Bash", "Write"} & names


def test_setting_sources_bring_the_output_style(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"outputStyle": "Explanatory"}))
    with ScriptedServer([[text("a")], [text("b")]]) as srv:
        msgs = asyncio.run(collect("x", options("loopwright", srv, tmp_path, setting_sources=["project"])))
        assert init_of(msgs)["output_style"] == "Explanatory"
        asyncio.run(collect("x", options("loopwright", srv, tmp_path, setting_sources=[])))
        styled, plain = (system_text(r.body) for r in srv.loop_requests)
    assert "# Output Style: Explanatory" in styled and "Output Style" not in plain


def test_mcp_name_collision_in_the_init_message(tmp_path: Path) -> None:
    """github and _github both become mcp__github__: the SDK's init message names both in one line,
    and the other server's tools are there."""
    import sys

    from tests.mcp.test_name_collision import LINE, SERVER

    pytest.importorskip("mcp")
    stdio = {"command": sys.executable, "args": [SERVER]}
    servers = {"github": stdio, "_github": stdio, "other": stdio}
    with ScriptedServer([[text("hi")]]) as srv:
        msgs = asyncio.run(collect("x", options("loopwright", srv, tmp_path, mcp_servers=servers)))
        names = [t["name"] for t in srv.loop_requests[0].body["tools"]]
    init = init_of(msgs)
    assert LINE in init["warnings"]
    assert "mcp__other__echo" in names and not [n for n in names if n.startswith("mcp__github")]


@pytest.mark.parametrize("cli", CLIS)
def test_agent_for_the_main_thread_through_extra_args(cli: str, tmp_path: Path) -> None:
    """extra_args={"agent": "linter"} (Claude Code's --agent) with setting_sources=["project"]: the
    main conversation runs as the agent file's agent (its body the system prompt, its tools only)."""
    (tmp_path / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / ".claude" / "agents" / "linter.md").write_text(
        "---\nname: linter\ndescription: Lints files\ntools: Read, Grep\n---\nYou are LINTER-PROMPT.\n")
    with ScriptedServer([[text("linted")]]) as srv:
        msgs = asyncio.run(collect("lint", options(cli, srv, tmp_path, setting_sources=["project"],
                                                   extra_args={"agent": "linter"})))
        body = srv.loop_requests[0].body
    assert result_of(msgs).result == "linted"
    assert "You are LINTER-PROMPT." in system_text(body)
    assert sorted(t["name"] for t in body["tools"]) == ["Grep", "Read"]
