"""`-p --output-format stream-json --verbose`, Claude Code 2.1.332 and loopwright on the same scripted
turns in the same kind of project (a command, a skill, an agent file, a --plugin-dir plugin): the
fields of each line an Agent SDK program reads. One run of each (a module fixture; the tests
share a worker), so the comparison costs two processes. What Claude Code lists that loopwright has
no part for (its bundled skills, built-in commands and agents, built-in plugins) is left out of the
comparison by name: loopwright lists its own. The run's Stop hook blocks once: its feedback is the
hook's in the stream, in the transcript, in the viewer and in a resumed conversation's replay."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, bash, claude_code_env, cli_env, loopwright_cmd, text
from tests.plugins.test_plugins import make_plugin

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ["loopwright", pytest.param("claude", marks=pytest.mark.skipif(not CLAUDE.exists(),
                                                                    reason="Claude Code not installed (tests/node)"))]
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("stream_json_vs_claude_code")]
TURNS = [[bash("echo hi")], [text("hello")], [text("done")]]  # (the Stop hook blocks "hello" once)
# The project's and the plugin's, in Claude Code's order (its own come between and after them)
COMMANDS = ["greet2", "hello", "myplug:hello", "myplug:greet"]
SKILLS = ["greet2", "myplug:greet"]
# An agent defined on the command line (--agents JSON): the init line lists it with the files' agents
AGENTS = json.dumps({"Scout": {"description": "Looks around", "prompt": "Look.", "tools": ["Read"]}})


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


class Run(NamedTuple):
    """One `-p` run: who ran it, its stdout lines, its transcript's lines, the model calls' bodies."""

    who: str
    lines: list[dict[str, Any]]
    transcript: Path
    bodies: list[dict[str, Any]]


def run(who: str, root: Path, *args: str, turns: list[Any] = TURNS) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    """`-p go` of `who` in root's project (project()), on `turns`, with a Stop hook that blocks once
    ("KEEP GOING"); the process and the model calls' bodies."""
    proj, home, plug = project(root)
    hook = root / "stop.sh"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\n[ -e {root}/stopped ] && exit 0\ntouch {root}/stopped\n"
                    "echo KEEP GOING >&2\nexit 2\n")
    hook.chmod(0o755)
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--plugin-dir", str(plug),
                            "--settings", json.dumps(settings), *args],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        return r, [q.body for q in srv.loop_requests]


@pytest.fixture(scope="module", params=WHO)
def stream(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One run of TURNS with Bash allowed, in stream-json."""
    who = str(request.param)
    root = tmp_path_factory.mktemp(who)
    r, bodies = run(who, root, "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash",
                    "--agents", AGENTS)
    assert r.returncode == 0, (who, r.stderr[-2000:])
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    found = list((root / "home").glob(f"*/projects/*/{lines[-1]['session_id']}.jsonl"))
    assert len(found) == 1, (who, found)
    return Run(who, lines, found[0], bodies)


def test_the_init_line_names_what_a_prompt_may_call(stream: Run) -> None:
    """slash_commands, skills, agents, plugins, apiKeySource, output_style: the project's and the
    plugin's commands and skills in Claude Code's order, the agent files', the plugin's and --agents'
    agents in a list sorted by name, the plugin with its source and version."""
    who, lines = stream.who, stream.lines
    init = lines[0]
    assert (init["type"], init["subtype"]) == ("system", "init"), who
    assert [c for c in init["slash_commands"] if c in COMMANDS] == COMMANDS, (who, init["slash_commands"])
    assert [c for c in init["skills"] if c in COMMANDS] == SKILLS, (who, init["skills"])
    assert set(init["skills"]) <= set(init["slash_commands"]), who
    assert {"general-purpose", "linter", "myplug:reviewer", "Scout"} <= set(init["agents"]), (who, init["agents"])
    assert init["agents"] == sorted(init["agents"], key=str.lower), (who, init["agents"])
    plug = str(Path(init["cwd"]).parent / "plug")
    assert init["plugins"][0] == {"name": "myplug", "path": plug, "source": "myplug@inline", "version": "1.0.0"}, who
    assert (init["apiKeySource"], init["output_style"], init["claude_code_version"]) == (
        "ANTHROPIC_API_KEY", "default", "2.1.332"), who
    assert (init["permissionMode"], init["mcp_servers"], init["model"]) == ("default", [], "claude-sonnet-4-5"), who
    assert init["session_id"] == lines[-1]["session_id"] and isinstance(init["uuid"], str), who


def test_a_stop_hooks_feedback_is_the_hooks_everywhere(stream: Run) -> None:
    """The model is sent the feedback in a <system-reminder> (not as the user's words); the stream shows
    it as a synthetic user line; the transcript marks its line as the hook's (isMeta, hookText); the
    session viewer shows it as hook feedback, not a prompt, on either program's transcript."""
    from loopwright.view.model import load_view

    who = stream.who
    sent = stream.bodies[2]["messages"][-1]["content"]
    fed = "".join(b["text"] for b in sent if b.get("type") == "text")
    assert fed.startswith("<system-reminder>") and "Stop hook feedback:" in fed and "KEEP GOING" in fed, (who, fed)
    shown = [ln for ln in stream.lines if ln["type"] == "user" and ln.get("isSynthetic")]
    assert len(shown) == 1 and shown[0]["message"]["content"][0]["text"].startswith("Stop hook feedback:\n"), who
    assert "KEEP GOING" in shown[0]["message"]["content"][0]["text"], who
    saved = [json.loads(x) for x in stream.transcript.read_text().splitlines()]
    marked = [x for x in saved if x.get("type") == "user" and "KEEP GOING" in json.dumps(x.get("message"))]
    assert len(marked) == 1 and marked[0].get("isMeta") is True and marked[0].get("hookText") is True, (who, marked)
    events = load_view(stream.transcript).events
    hooks = [e for e in events if e.kind == "hook" and "KEEP GOING" in e.text]
    assert len(hooks) == 1 and hooks[0].title == "Stop hook feedback", (who, [(e.kind, e.title) for e in events])
    assert not [e for e in events if e.kind in ("prompt", "text_user", "queued") and "KEEP GOING" in e.text], who


def test_a_resumed_conversations_replay_shows_the_stop_hooks_feedback_as_the_hooks(stream: Run) -> None:
    """/resume's replay of loopwright's saved session: the feedback under the answer it followed, as the
    Stop hook's, never as a `› prompt`."""
    if stream.who == "claude":
        pytest.skip("the replay is loopwright's (/resume of its own session)")
    from loopwright.cli.slash import replay
    from loopwright.sessions.repair import load_transcript

    lines = replay(load_transcript(stream.transcript).history, None)
    assert "  ⎿ Stop hook feedback: KEEP GOING" in lines, lines
    assert [ln for ln in lines if ln.startswith("›")] == ["› go"], lines
    assert lines.index("  ⎿ Stop hook feedback: KEEP GOING") == lines.index("  hello") + 1, lines


def test_assistant_and_user_lines_carry_what_the_sdks_read(stream: Run) -> None:
    """Each assistant and user line: its own uuid, the session's id, a timestamp (ISO 8601 UTC with
    milliseconds), parent_tool_use_id; an assistant line's message id (the SDKs' message_id)."""
    from datetime import datetime

    who, lines = stream.who, stream.lines
    sid = lines[-1]["session_id"]
    said = [ln for ln in lines if ln["type"] in ("assistant", "user")]
    assert [ln["type"] for ln in said] == ["assistant", "user", "assistant", "user", "assistant"], who
    for ln in said:
        assert len(ln["uuid"]) == 36 and ln["session_id"] == sid and ln["parent_tool_use_id"] is None, (who, ln)
        assert ln["timestamp"].endswith("Z") and len(ln["timestamp"]) == 24, (who, ln["timestamp"])
        datetime.fromisoformat(ln["timestamp"].replace("Z", "+00:00"))
    ids = [ln["message"]["id"] for ln in said if ln["type"] == "assistant"]
    assert all(i.startswith("msg_") for i in ids) and len(set(ids)) == 3, (who, ids)
    block = said[1]["message"]["content"][0]
    assert {k: block.get(k) for k in ("type", "tool_use_id", "content")} == {
        "type": "tool_result", "tool_use_id": "t1", "content": "hi"}, (who, block)


def test_the_result_line_has_what_the_sdks_read(stream: Run) -> None:
    """The result: its outcome, durations, cost, usage, and a modelUsage entry per model with every field
    the TypeScript SDK's ModelUsage type requires (contextWindow and maxOutputTokens among them)."""
    who, r = stream.who, stream.lines[-1]
    assert (r["type"], r["subtype"], r["is_error"], r["result"], r["stop_reason"], r["terminal_reason"]) == (
        "result", "success", False, "done", "end_turn", "completed"), who
    assert r["permission_denials"] == [] and len(r["uuid"]) == 36 and r["session_id"] == stream.lines[0]["session_id"]
    assert all(isinstance(r[k], int) and r[k] >= 0 for k in ("duration_ms", "duration_api_ms", "num_turns")), who
    assert isinstance(r["total_cost_usd"], float) and r["total_cost_usd"] > 0, who
    tokens = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    assert all(isinstance(r["usage"][k], int) for k in tokens), (who, r["usage"])
    used = r["modelUsage"]["claude-sonnet-4-5"]
    required = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "webSearchRequests",
                "costUSD", "contextWindow", "maxOutputTokens")
    assert all(isinstance(used.get(k), (int, float)) for k in required), (who, used)
    assert used["contextWindow"] >= 200_000 and used["maxOutputTokens"] > 0, (who, used)
    assert abs(used["costUSD"] - r["total_cost_usd"]) < 1e-9 and used["outputTokens"] == r["usage"]["output_tokens"], who
