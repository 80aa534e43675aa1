"""The Task tools and their hooks (issue 42): TaskCreated fires as TaskCreate makes a task,
TaskCompleted as TaskUpdate marks one completed; exit 2 refuses the change. Claude Code 2.1.332
offers these tools by default (deferred behind ToolSearch): both sides run as CLIs on the same
scripted turns (Claude Code's with a ToolSearch turn first), with the same real command hooks."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text, use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
FIXTURE = TESTS / "fixtures" / "claude_code_task_hooks.json"  # what Claude Code 2.1.332 did on these turns
SEARCH = use("t0", "ToolSearch", query="select:TaskCreate,TaskUpdate,TaskList,TaskGet")


def hook(tmp: Path, exit_code: int = 0) -> str:
    """A command hook that logs its stdin (one JSON a line) and exits `exit_code` with a reason."""
    h = tmp / "h.sh"
    h.write_text(f"#!/bin/sh\ncat >> '{tmp}/hooks.log'\necho >> '{tmp}/hooks.log'\n"
                 f"echo 'not yet: run the tests' >&2\nexit {exit_code}\n")
    h.chmod(0o755)
    return str(h)


def run(who: str, tmp: Path, turns: list[Any], settings: dict[str, Any]) -> tuple[list[Any], list[dict[str, Any]]]:
    """One side on `turns`: (the tool results it sent back, the hook inputs logged)."""
    proj = tmp / who
    proj.mkdir()
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env = claude_code_env(srv.url, str(tmp / "cchome"))
            cmd = [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "plan it", "--model", "claude-sonnet-4-5", "--settings", json.dumps(settings)],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (who, r.stderr)
        requests = list(srv.requests)
    results = []
    for q in requests[1:]:
        block = q.body["messages"][-1]["content"][0]
        if block.get("type") != "tool_result" or block["tool_use_id"] == "t0":
            continue
        c = block["content"]
        c = c if isinstance(c, str) else "".join(b.get("text", "") for b in c if b.get("type") == "text")
        results.append((re.sub(r"\s*<system-reminder>.*", "", c, flags=re.S), bool(block.get("is_error"))))
    log = tmp / "hooks.log"
    seen = [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []
    log.unlink(missing_ok=True)
    return results, seen


def observed(who: str, tmp: Path, turns: list[Any], settings: dict[str, Any], case: str) -> tuple[list[Any], list[Any]]:
    """One side's tool results and hook inputs (the task fields); Claude Code's side is the fixture
    when it is not installed."""
    if who == "claude" and not CLAUDE.exists():
        kept = json.loads(FIXTURE.read_text())[case]
        h = next(iter(settings["hooks"].values()))[0]["hooks"][0]["command"]
        return [(r.replace("{hook}", h), e) for r, e in kept["results"]], kept["hooks"]
    results, seen = run(who, tmp, [[SEARCH], *turns] if who == "claude" else turns, settings)
    return results, [{k: v for k, v in s.items() if k.startswith("task_") or k == "hook_event_name"} for s in seen]


FLOW = [[use("t1", "TaskCreate", subject="Write tests", description="add the tests", activeForm="Writing tests")],
        [use("t2", "TaskUpdate", taskId="1", status="in_progress")],
        [use("t3", "TaskUpdate", taskId="1", status="completed")],
        [use("t4", "TaskList", {})], [use("t5", "TaskGet", taskId="1")], [text("done")]]


@pytest.mark.e2e
def test_task_hooks_fire_as_in_claude_code(tmp_path: Path) -> None:
    cmd = [{"hooks": [{"type": "command", "command": hook(tmp_path)}]}]
    settings = {"hooks": {"TaskCreated": cmd, "TaskCompleted": cmd}}
    sides = {who: observed(who, tmp_path, FLOW, settings, "flow") for who in ("claude", "loopwright")}
    assert sides["loopwright"] == sides["claude"]
    results, seen = sides["loopwright"]
    assert [s["hook_event_name"] for s in seen] == ["TaskCreated", "TaskCompleted"]
    assert seen[0] == {"hook_event_name": "TaskCreated", "task_id": "1", "task_subject": "Write tests",
                       "task_description": "add the tests"}
    assert results[0] == ("Task #1 created successfully: Write tests", False)
    assert results[3] == ("#1 [completed] Write tests", False)


BLOCKED = [[use("t1", "TaskCreate", subject="Write tests", description="add the tests")],
           [use("t4", "TaskList", {})], [text("done")]]


@pytest.mark.e2e
def test_task_created_exit_2_refuses_the_task_as_in_claude_code(tmp_path: Path) -> None:
    h = hook(tmp_path, exit_code=2)
    settings = {"hooks": {"TaskCreated": [{"hooks": [{"type": "command", "command": h}]}]}}
    sides = {who: observed(who, tmp_path, BLOCKED, settings, "created_exit_2") for who in ("claude", "loopwright")}
    results, seen = sides["loopwright"]
    assert results == [(f"TaskCreated hook feedback:\n[{h}]: not yet: run the tests", True), ("No tasks found", False)]
    assert [s["hook_event_name"] for s in seen] == ["TaskCreated"]
    assert sides["loopwright"] == sides["claude"]


UNDONE = [[use("t1", "TaskCreate", subject="Write tests", description="add the tests")],
          [use("t2", "TaskUpdate", taskId="1", status="completed")], [use("t3", "TaskGet", taskId="1")],
          [use("t4", "TaskUpdate", taskId="1", status="deleted")], [use("t5", "TaskGet", taskId="1")],
          [use("t6", "TaskUpdate", taskId="9", status="completed")], [text("done")]]


@pytest.mark.e2e
def test_task_completed_exit_2_keeps_the_status_as_in_claude_code(tmp_path: Path) -> None:
    h = hook(tmp_path, exit_code=2)
    settings = {"hooks": {"TaskCompleted": [{"hooks": [{"type": "command", "command": h}]}]}}
    sides = {who: observed(who, tmp_path, UNDONE, settings, "completed_exit_2") for who in ("claude", "loopwright")}
    results, seen = sides["loopwright"]
    assert results == [("Task #1 created successfully: Write tests", False),
                       (f"TaskCompleted hook feedback:\n[{h}]: not yet: run the tests", False),
                       ("Task #1: Write tests\nStatus: pending\nDescription: add the tests", False),
                       ("Updated task #1 deleted", False), ("Task not found", False), ("Task not found", False)]
    assert [s["hook_event_name"] for s in seen] == ["TaskCompleted"]
    assert sides["loopwright"] == sides["claude"]


def test_the_task_tools_are_left_out_as_claude_code_leaves_them_out(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The library's default set is the CLI's: the Task tools unless CLAUDE_CODE_ENABLE_TASKS=false."""
    import loopwright as lw
    from loopwright.cli import build_parser
    from loopwright.cli.config import build_options

    def cli_tools() -> list[str]:
        args = build_parser().parse_args(["-p", "x", "--model", "scripted:none.json", "--cwd", str(tmp_path)])
        return [t.name for t in build_options(args).tools]

    tasks = ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"]
    assert [t.name for t in lw.default_tools()][-4:] == tasks
    assert cli_tools() == [*(t.name for t in lw.default_tools()), "Agent"]
    sdk_preset = lw.AgentOptions(tools={"type": "preset", "preset": "claude_code"})  # type: ignore[arg-type]
    assert [t.name for t in sdk_preset.tools][-4:] == tasks
    for off in ("false", "0"):
        monkeypatch.setenv("CLAUDE_CODE_ENABLE_TASKS", off)
        assert not {t.name for t in lw.default_tools()} & set(tasks)
        assert not set(cli_tools()) & set(tasks)
    assert [t.name for t in lw.default_tools(tasks=True)][-4:] == tasks  # what the caller says wins
    monkeypatch.delenv("CLAUDE_CODE_ENABLE_TASKS")
    assert not {t.name for t in lw.default_tools(tasks=False)} & set(tasks)


def test_python_hooks_refuse_by_decision_and_stop_the_run(tmp_path: Path) -> None:
    """A Python (SDK) hook's `decision: "block"` refuses like exit 2; `continue: false` ends the run."""
    import loopwright as lw
    from loopwright.hooks import Hooks
    from loopwright.tools.builtin import make_task_tools

    seen: list[dict[str, Any]] = []
    hooks = Hooks()
    hooks.on("TaskCreated", lambda data: seen.append(data) or (
        {"decision": "block", "reason": "subjects start with a verb"} if data["task_subject"] == "tests" else None))
    hooks.on("TaskCompleted", lambda data: {"continue": False, "stopReason": "all planned"})
    turns = [[use("t1", "TaskCreate", subject="tests", description="d")],
             [use("t2", "TaskCreate", subject="Write tests", description="d")],
             [use("t3", "TaskUpdate", taskId="1", status="completed")], [text("never asked")]]
    r = lw.run("plan", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=make_task_tools(), hooks=hooks, cwd=tmp_path))
    results = [b for m in r.messages if isinstance(m.get("content"), list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert results[0]["is_error"] and "TaskCreated hook feedback:" in str(results[0]["content"])
    assert "subjects start with a verb" in str(results[0]["content"])
    assert str(results[1]["content"]) == "Task #1 created successfully: Write tests"  # the refused one used no id
    assert [d["task_subject"] for d in seen] == ["tests", "Write tests"]
    assert r.model_calls == 3 and "all planned" in (r.result or "") + " ".join(r.errors or [])
