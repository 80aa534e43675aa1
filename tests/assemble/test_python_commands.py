"""`lw.query("/cmd args")` in loopwright's own Python API (issue 42's gap): a custom command or a
skill typed as the prompt expands as the Claude Agent SDK's CLI expands it, when the options read
setting sources (or name plugins), and literal text stays literal. Compared with the official
Python SDK driving Claude Code 2.1.332 on the same files and prompts, where it is installed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.hooks import Hooks
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, text, use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
GREET = "---\ndescription: greets\nallowed-tools: Bash(touch:*)\nmodel: claude-haiku-4-5\n---\nHello $ARGUMENTS.\n"
SKILL = "---\nname: probe\ndescription: a probe\n---\nProbe body.\n"


def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / ".claude" / "commands").mkdir(parents=True)
    (proj / ".claude" / "commands" / "greet.md").write_text(GREET)
    (proj / ".claude" / "skills" / "probe").mkdir(parents=True)
    (proj / ".claude" / "skills" / "probe" / "SKILL.md").write_text(SKILL)
    return proj


def sent(srv: ScriptedServer) -> str:
    """The prompt's texts the model was sent (the harness's reminders and command tags left out)."""
    content = srv.loop_requests[0].body["messages"][-1]["content"]
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    return "\n".join(b["text"].strip() for b in blocks if b.get("type") == "text"
                     and not b["text"].startswith(("<system-reminder>", "<command-message>")))


def loopwright_sent(proj: Path, prompt: Any, **kw: Any) -> tuple[str, lw.ResultMessage, str]:
    """loopwright's API on `prompt`: (the prompt text the model got, the result, the model asked)."""
    with ScriptedServer([[text("done")]]) as srv:
        r = lw.run(prompt, lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="k", cwd=proj,
                                           max_retries=0, **kw))
        return sent(srv), r, srv.loop_requests[0].body["model"]


CASES = [("/greet world", "Hello world."), ("/probe x", "Base directory for this skill: {proj}/.claude/skills/probe"
                                                          "\n\nProbe body.\n\n\nARGUMENTS: x"),
         ("/nosuch thing", "/nosuch thing"), ("/etc/hosts is broken", "/etc/hosts is broken")]


@pytest.mark.parametrize(("prompt", "want"), CASES)
def test_a_typed_command_expands_when_setting_sources_are_read(tmp_path: Path, prompt: str, want: str) -> None:
    proj = project(tmp_path)
    got, r, model = loopwright_sent(proj, prompt, setting_sources=["project"])
    assert got == want.format(proj=proj) and r.result == "done"
    if prompt.startswith("/greet"):  # the command's model, for that run
        assert model == "claude-haiku-4-5"


def test_literal_text_stays_literal(tmp_path: Path) -> None:
    """No setting sources (the library's default: it reads none) and no plugins: sent as is; so
    are content blocks and a prompt that does not start with `/`."""
    proj = project(tmp_path)
    assert loopwright_sent(proj, "/greet world")[0] == "/greet world"
    assert loopwright_sent(proj, [{"type": "text", "text": "/greet world"}], setting_sources=["project"])[0] == \
        "/greet world"
    assert loopwright_sent(proj, " /greet world", setting_sources=["project"])[0] == "/greet world"
    assert loopwright_sent(proj, "/greet world", setting_sources=[])[0] == "/greet world"


def test_the_command_runs_as_in_the_cli_hooks_and_allowed_tools(tmp_path: Path) -> None:
    """UserPromptSubmit reads the prompt as typed, UserPromptExpansion names the command, and its
    allowed-tools approve its Bash call for that run, with a LoopwrightClient too."""
    proj = project(tmp_path)
    seen: list[tuple[str, str]] = []
    hooks = Hooks()
    hooks.on("UserPromptSubmit", lambda d: seen.append(("submit", d["prompt"])))
    hooks.on("UserPromptExpansion", lambda d: seen.append(("expand", d["command_name"] + " " + d["command_args"])))
    turns = [[use("b1", "Bash", command="touch made.txt")], [text("made")], [text("again")]]
    with ScriptedServer(turns) as srv:
        options = lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="k", cwd=proj, max_retries=0,
                                  setting_sources=["project"], hooks=hooks, tools=lw.default_tools(),
                                  trust_workspace=True)

        async def go() -> list[Any]:
            async with lw.LoopwrightClient(options) as client:
                await client.query("/greet world")
                first = [m async for m in client.receive_response()]
                await client.query("/nosuch")
                return [first, [m async for m in client.receive_response()]]

        first, second = asyncio.run(go())
        bodies = [json.dumps(q.body["messages"]) for q in srv.loop_requests]
    assert seen == [("submit", "/greet world"), ("expand", "greet world"), ("submit", "/nosuch")]
    assert (proj / "made.txt").exists() and not first[-1].permission_denials
    assert "Hello world." in bodies[0] and "/nosuch" in bodies[-1]


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code not installed (tests/node)")
@pytest.mark.parametrize(("prompt", "want"), CASES)
def test_the_agent_sdk_sends_the_same(tmp_path: Path, prompt: str, want: str) -> None:
    """The official SDK with Claude Code as its CLI, setting_sources=["project"]: the same text
    reaches the model (Claude Code puts a <command-message> block before it, left out here)."""
    sdk = pytest.importorskip("claude_agent_sdk")
    from tests.sdkproto.test_sdk_protocol import collect, options

    proj = project(tmp_path)
    (tmp_path / "home").mkdir()
    with ScriptedServer([[text("done")]]) as srv:
        msgs = asyncio.run(collect(prompt, options("claude", srv, proj, setting_sources=["project"],
                                                   env={"HOME": str(tmp_path / "home")})))
        theirs = sent(srv)
    assert isinstance(msgs[-1], sdk.ResultMessage) and msgs[-1].result == "done"
    assert theirs == want.format(proj=proj) == loopwright_sent(proj, prompt, setting_sources=["project"])[0]
