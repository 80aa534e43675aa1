"""`tool_use_result`: the structured output of a tool call on the stream-json user line that carries
its tool_result (what the Agent SDKs give as `UserMessage.tool_use_result`). Claude Code 2.1.332 and
loopwright on the same scripted turns: `-p --output-format stream-json --verbose` (one run of each,
a module fixture), and the official Python SDK with each as its CLI. Paths are normalised (each
side runs in its own project directory); durations are left out.

Claude Code 2.1.332 has no Glob, Grep or TodoWrite tool (its Bash searches); loopwright's outputs of
those are checked against the shapes the TypeScript Agent SDK declares for them (sdk-tools.d.ts)."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, bash, claude_code_env, cli_env, loopwright_cmd, text, use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
SDK_TOOLS = TESTS / "node" / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "sdk-tools.d.ts"
MCP_SERVER = str(TESTS / "mcp" / "mcp_test_server.py")
WHO = ["loopwright", pytest.param("claude", marks=pytest.mark.skipif(not CLAUDE.exists(),
                                                                    reason="Claude Code not installed (tests/node)"))]
# (360 s: the module fixture runs loopwright and Claude Code through every turn, one after the other, as
# the first test's setup; at load ~25 it took over the suite's 120 s and each test of the module errored)
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("tool_use_result_vs_claude_code"), pytest.mark.timeout(360)]

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="  # 1x1
NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {},
                                   "outputs": [], "source": ["x = 1"]}],
                       "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
def _pdf() -> bytes:
    """Two blank pages, made once (both sides read the same bytes)."""
    import io

    import pypdf

    writer, out = pypdf.PdfWriter(), io.BytesIO()
    for _ in range(2):
        writer.add_blank_page(200, 200)
    writer.write(out)
    return out.getvalue()


PDF = _pdf()
P = "<proj>"  # the project directory, in the scripted inputs (each side's own put in when it runs)
TURNS: list[Any] = [
    [bash("echo hi; echo err >&2", "bash")],
    [use("write_new", "Write", file_path=f"{P}/new.txt", content="one\ntwo\n")],
    [use("read", "Read", file_path=f"{P}/a.txt")],
    [use("edit", "Edit", file_path=f"{P}/a.txt", old_string="beta", new_string="BETA")],
    [use("write_update", "Write", file_path=f"{P}/new.txt", content="one\nthree\n")],
    [use("read_window", "Read", file_path=f"{P}/a.txt", offset=2, limit=1)],
    [use("read_empty", "Read", file_path=f"{P}/empty.txt")],
    [use("read_image", "Read", file_path=f"{P}/px.png")],
    [use("read_nonl", "Read", file_path=f"{P}/nonl.txt")],
    [use("edit_nonl", "Edit", file_path=f"{P}/nonl.txt", old_string="y", new_string="z")],
    [bash("touch made", "quiet")],
    [bash("seq 1 12000", "bash_big")],  # (past 30,000 characters: saved whole)
    [bash("echo out; exit 3", "bash_fails")],
    [use("read_missing", "Read", file_path=f"{P}/missing.txt")],
    [bash("rm -f a.txt", "refused")],
    [use("unknown", "NoSuchTool")],
    [use("mcp", "mcp__t__echo", text="hello")],
    [use("mcp_fails", "mcp__t__fail")],
    [use("mcp_structured", "mcp__t__structured")],
    [use("two_a", "Read", file_path=f"{P}/b.py"), use("two_b", "Read", file_path=f"{P}/nonl.txt")],
    [use("nb_read", "Read", file_path=f"{P}/n.ipynb")],
    [use("read_pdf", "Read", file_path=f"{P}/doc.pdf")],
    [use("nb_edit", "NotebookEdit", notebook_path=f"{P}/n.ipynb", cell_id="c1", new_source="x = 2")],
    [use("glob", "Glob", pattern="*.txt")],
    [use("grep_files", "Grep", pattern="beta")],
    [use("grep_content", "Grep", pattern="beta", output_mode="content", **{"-n": True})],
    [use("grep_count", "Grep", pattern="a", output_mode="count")],
    [use("todo", "TodoWrite", todos=[{"content": "x", "status": "pending", "activeForm": "doing x"}])],
    [use("multi", "MultiEdit", file_path=f"{P}/b.py", edits=[{"old_string": "print", "new_string": "echo"},
                                                              {"old_string": "beta", "new_string": "gamma"}])],
    [use("task_list_empty", "TaskList")],
    [use("task_create", "TaskCreate", subject="Do x", description="the x", activeForm="Doing x")],
    [use("task_create2", "TaskCreate", subject="Do y", description="the y")],
    [use("task_update", "TaskUpdate", taskId="2", addBlockedBy=["1"], owner="me", status="in_progress",
         metadata={"k": 1})],
    [use("task_update_same", "TaskUpdate", taskId="2", status="in_progress")],
    [use("task_get", "TaskGet", taskId="2")],
    [use("task_list", "TaskList")],
    [use("task_done", "TaskUpdate", taskId="1", status="completed")],
    [use("task_get_unblocked", "TaskGet", taskId="2")],
    [use("task_get_missing", "TaskGet", taskId="99")],
    [use("task_update_missing", "TaskUpdate", taskId="99", status="completed")],
    [use("task_delete", "TaskUpdate", taskId="1", status="deleted")],
    # (Claude Code runs an agent in the background unless told not to; loopwright always waits for it)
    [use("agent", "Agent", description="look", prompt="Say hi", subagent_type="general-purpose",
         run_in_background=False)],
    [bash("echo sub", "sub_bash")],  # the subagent's turns
    [use("sub_write", "Write", file_path=f"{P}/sub.txt", content="1\n2\n")],
    [use("sub_edit", "Edit", file_path=f"{P}/sub.txt", old_string="1\n2", new_string="3")],
    [text("sub done")],
    [text("done")],
]
SAME = ["bash", "write_new", "read", "edit", "write_update", "read_window", "read_empty", "read_image", "read_nonl",
        "edit_nonl", "nb_read", "read_pdf",
        "quiet", "mcp", "mcp_fails", "two_a", "two_b",
        "task_list_empty", "task_create", "task_create2", "task_update", "task_get", "task_list", "task_done",
        "task_get_unblocked", "task_get_missing", "task_update_missing", "task_delete"]
SUBAGENT = {"sub_bash", "sub_write", "sub_edit"}  # (its results' lines are the subagent's: parent_tool_use_id)
ERRORS = ["bash_fails", "read_missing", "refused", "unknown"]
NOT_IN_CLAUDE_CODE = {"glob": "GlobOutput", "grep_files": "GrepOutput", "grep_content": "GrepOutput",
                      "grep_count": "GrepOutput", "todo": "TodoWriteOutput"}
# MultiEdit: Claude Code 2.1.332 has none and sdk-tools.d.ts declares no type for it: FileEditOutput's
# keys that apply to a batch, and the edits
MULTI_EDIT_KEYS = {"filePath", "originalFile", "structuredPatch", "userModified"}


def filled(x: Any, proj: Path) -> Any:
    """`x` with P replaced by the project directory (or, `proj` given as P and the text the path,
    the other way: normalising)."""
    return json.loads(json.dumps(x).replace(P, str(proj)))


def normalised(x: Any, proj: Path) -> Any:
    return json.loads(json.dumps(x).replace(str(proj), P))


def make_project(root: Path) -> Path:
    proj = root / "proj"
    proj.mkdir(parents=True)
    (proj / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (proj / "b.py").write_text("print('beta')\n")
    (proj / "empty.txt").write_text("")
    (proj / "nonl.txt").write_text("x\ny")
    (proj / "px.png").write_bytes(base64.b64decode(PNG))
    (proj / "n.ipynb").write_text(NOTEBOOK)
    (proj / "doc.pdf").write_bytes(PDF)
    (root / "home").mkdir()
    return proj


class Run(NamedTuple):
    who: str
    proj: Path
    lines: list[dict[str, Any]]

    def user_lines(self) -> list[dict[str, Any]]:
        """The top agent's user lines (not a subagent's)."""
        return [ln for ln in self.lines if ln.get("type") == "user" and not ln.get("parent_tool_use_id")]

    def results(self) -> dict[str, Any]:
        """tool_use id -> the tool_use_result of its line (normalised), for lines with one tool_result."""
        out: dict[str, Any] = {}
        for ln in self.user_lines():
            ids = [b["tool_use_id"] for b in ln["message"]["content"] if b.get("type") == "tool_result"]
            if len(ids) == 1:
                out[ids[0]] = normalised(ln.get("tool_use_result"), self.proj)
        return out


def one_run(who: str, root: Path) -> Run:
    """One `-p` run of TURNS in stream-json, Bash and the MCP test server's tools allowed, rm denied."""
    proj = make_project(root)
    cfg = root / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"t": {"command": sys.executable, "args": [MCP_SERVER]}}}))
    # (not strict: Claude Code sends a turn's results in the order its calls ended)
    with ScriptedServer(filled(TURNS, proj), is_loop_call=lambda body: bool(body.get("tools")), strict=False) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(root / "home")), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(root / "home")), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "stream-json",
                            "--verbose", "--permission-mode", "acceptEdits", "--mcp-config", str(cfg),
                            "--allowedTools", "Bash", "mcp__t__echo", "mcp__t__fail", "mcp__t__structured",
                            "--disallowedTools", "Bash(rm:*)"],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (who, r.stderr[-3000:])
    return Run(who, proj, [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """loopwright's run of TURNS, and Claude Code's where it is installed (by who ran it)."""
    return {who: one_run(who, tmp_path_factory.mktemp(who)) for who in ("loopwright", "claude")
            if who == "loopwright" or CLAUDE.exists()}


@pytest.fixture(params=WHO)
def run(request: pytest.FixtureRequest, runs: dict[str, Run]) -> Run:
    return runs[str(request.param)]


def test_every_result_has_its_line_with_its_tool_use_result(run: Run) -> None:
    """One user line per tool result, also for the turn of two calls (as Claude Code writes them),
    each with the call's tool_use_result."""
    for ln in run.user_lines():
        blocks = [b for b in ln["message"]["content"] if b.get("type") == "tool_result"]
        assert len(blocks) == 1, (run.who, ln)
        assert "tool_use_result" in ln, (run.who, ln)
    assert set(run.results()) == {u["id"] for turn in TURNS for u in turn if u["type"] == "tool_use"} - SUBAGENT, (
        run.who)


@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code not installed (tests/node)")
def test_the_results_are_claude_codes(runs: dict[str, Run]) -> None:
    """Each SAME call's tool_use_result is Claude Code's, key for key and value for value."""
    ours, cc = runs["loopwright"].results(), runs["claude"].results()
    for uid in SAME:
        assert ours[uid] == cc[uid], (uid, ours[uid], cc[uid])


def test_a_large_output_is_saved_as_claude_codes_is(runs: dict[str, Run]) -> None:
    """A Bash output past 30,000 characters: saved whole in the session's tool-results directory
    (persistedOutputPath), its size in bytes and its first 30,000 characters in the structured
    output, as Claude Code's (each side's own path, the same layout)."""
    ours = runs["loopwright"].results()["bash_big"]
    full = "".join(f"{n}\n" for n in range(1, 12001))
    assert (ours["persistedOutputSize"], ours["stdout"]) == (len(full), full[:30000])
    saved = Path(ours["persistedOutputPath"])
    assert saved.read_text() == full and saved.parent.name == "tool-results" and saved.stat().st_mode & 0o077 == 0
    if "claude" not in runs:
        pytest.skip("Claude Code not installed (tests/node)")
    cc = runs["claude"].results()["bash_big"]
    assert set(ours) == set(cc) and {k: v for k, v in ours.items() if k != "persistedOutputPath"} == {
        k: v for k, v in cc.items() if k != "persistedOutputPath"}
    assert Path(cc["persistedOutputPath"]).parent.name == "tool-results"


def test_a_failed_call_is_error_and_its_text(run: Run) -> None:
    results = run.results()
    for uid in ERRORS:
        value = results[uid]
        assert isinstance(value, str) and value.startswith("Error: ") and not value.startswith("Error: Error"), (
            run.who, uid, value)
    assert "3" in results["bash_fails"] and "rm -f a.txt" in results["refused"], run.who
    assert "NoSuchTool" in results["unknown"], run.who


def test_bash_read_write_edit_as_expected(run: Run) -> None:
    """Named values (so that a change on both sides at once is caught too)."""
    r = run.results()
    assert r["bash"] == {"stdout": "hi\nerr", "stderr": "", "interrupted": False, "isImage": False,
                         "noOutputExpected": False}
    assert r["quiet"]["noOutputExpected"] is True and r["quiet"]["stdout"] == ""
    assert r["read"] == {"type": "text", "file": {"filePath": f"{P}/a.txt", "content": "alpha\nbeta\ngamma\n",
                                                  "numLines": 4, "startLine": 1, "totalLines": 4}}
    assert r["read_window"]["file"] == {"filePath": f"{P}/a.txt", "content": "BETA", "numLines": 1, "startLine": 2,
                                        "totalLines": 4}
    assert r["edit"]["structuredPatch"] == [{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
                                             "lines": [" alpha", "-beta", "+BETA", " gamma"]}]
    assert r["edit_nonl"]["structuredPatch"][0]["lines"] == [" x", "-y", "\\ No newline at end of file", "+z",
                                                             "\\ No newline at end of file"]
    assert (r["write_new"]["type"], r["write_new"]["originalFile"]) == ("create", None)
    assert (r["write_update"]["type"], r["write_update"]["originalFile"]) == ("update", "one\ntwo\n")
    assert r["read_image"] == {"type": "image", "file": {"base64": PNG, "type": "image/png", "originalSize": 70,
                                                         "dimensions": {"originalWidth": 1, "originalHeight": 1,
                                                                        "displayWidth": 1, "displayHeight": 1}}}
    assert r["read_pdf"] == {"type": "pdf", "file": {"filePath": f"{P}/doc.pdf", "originalSize": len(PDF),
                                                     "base64": base64.b64encode(PDF).decode()}}
    assert r["mcp"]["content"] == [{"type": "text", "text": "echo: hello"}]
    assert r["mcp_fails"]["content"] == "Error: it went wrong"
    assert r["mcp_structured"]["structuredContent"] == {"temperature": 21.5, "unit": "C"}


def test_the_task_tools_as_expected(run: Run) -> None:
    """Named values of the Task tools' outputs (TaskCreateOutput, TaskGetOutput, TaskListOutput,
    TaskUpdateOutput): a completed blocker no longer blocks; `owner` only when set."""
    r = run.results()
    assert r["task_list_empty"] == {"tasks": []}
    assert r["task_create"] == {"task": {"id": "1", "subject": "Do x", "description": "the x"}}
    assert r["task_update"] == {"success": True, "taskId": "2", "updatedFields": ["owner", "metadata", "status",
                                                                                  "blockedBy"],
                                "statusChange": {"from": "pending", "to": "in_progress"}}
    assert r["task_update_same"] == {"success": True, "taskId": "2", "updatedFields": []}
    assert r["task_get"]["task"]["blockedBy"] == ["1"] and r["task_get_unblocked"]["task"]["blockedBy"] == []
    assert r["task_list"] == {"tasks": [{"id": "1", "subject": "Do x", "status": "pending", "blockedBy": []},
                                        {"id": "2", "subject": "Do y", "status": "in_progress", "owner": "me",
                                         "blockedBy": ["1"]}]}
    assert r["task_get_missing"] == {"task": None}
    assert r["task_update_missing"] == {"success": False, "taskId": "99", "updatedFields": [],
                                        "error": "Task not found"}
    assert r["task_delete"]["updatedFields"] == ["deleted"]


def test_an_agent_call_has_claude_codes_agent_output(runs: dict[str, Run]) -> None:
    """The Agent call's tool_use_result: AgentOutput of a completed agent (sdk-tools.d.ts: only its
    keys), and where Claude Code ran the same subagent turns, its values: what the agent did and
    what it said. (Claude Code puts a frame naming the tools used before the report in `content`;
    its ids, durations and token counts are its own.)"""
    ours = runs["loopwright"].results()["agent"]
    if SDK_TOOLS.exists():
        body = SDK_TOOLS.read_text()
        start = body.index("export type AgentOutput =\n  | {") + 30
        completed = body[start:body.index("\n  | {", start)]  # (its first variant: a completed agent)
        assert set(ours) <= set(re.findall(r"^      (\w+)\??:", completed, re.M)), sorted(ours)
    assert ours["content"] == [{"type": "text", "text": "sub done"}]
    assert (ours["status"], ours["prompt"], ours["agentType"]) == ("completed", "Say hi", "general-purpose")
    assert ours["toolsUsed"] == ["Bash", "Edit", "Write"] and ours["totalToolUseCount"] == 3
    assert ours["toolStats"] == {"readCount": 0, "searchCount": 0, "bashCount": 1, "editFileCount": 2,
                                 "linesAdded": 4, "linesRemoved": 2, "otherToolCount": 0}
    usage = ours["usage"]
    assert ours["totalTokens"] == sum(usage[k] for k in ("input_tokens", "output_tokens",
                                                         "cache_creation_input_tokens", "cache_read_input_tokens"))
    assert isinstance(ours["agentId"], str) and ours["agentId"] and ours["totalDurationMs"] >= 0
    if "claude" not in runs:
        pytest.skip("Claude Code not installed (tests/node)")
    cc = runs["claude"].results()["agent"]
    same = ("status", "prompt", "agentType", "toolsUsed", "totalToolUseCount", "toolStats", "resolvedModel")
    assert {k: ours[k] for k in same} == {k: cc[k] for k in same}
    assert cc["content"][-1] == ours["content"][-1]
    assert set(ours) - {"totalDurationMs"} <= set(cc) and set(usage) <= set(cc["usage"])


def background_run(who: str, root: Path) -> dict[str, Any]:
    """A command run in the background, its output read (loopwright's BashOutput; Claude Code reads
    a file instead) and stopped (loopwright's KillShell, Claude Code's TaskStop): the model's turns
    name the shell by the id the Bash call answered."""
    proj = make_project(root)
    stop, key = ("TaskStop", "task_id") if who == "claude" else ("KillShell", "shell_id")

    def turn(h: list[dict[str, Any]]) -> Any:
        said = re.findall(r"with ID: (\w+)", json.dumps(h))
        step = sum(m["role"] == "assistant" for m in h)
        if step == 0:
            return [use("bg", "Bash", command="sleep 60", run_in_background=True)]
        if step == 1 and who == "loopwright":
            return [use("peek", "BashOutput", bash_id=said[0])]
        if step == (2 if who == "loopwright" else 1):
            return [use("stop", stop, **{key: said[0]})]
        return [text("done")]

    with ScriptedServer(turn, is_loop_call=lambda body: bool(body.get("tools")), strict=False) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(root / "home")), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(root / "home")), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "stream-json",
                            "--verbose", "--permission-mode", "acceptEdits", "--allowedTools", "Bash"],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (who, r.stderr[-3000:])
    return Run(who, proj, [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]).results()


def test_a_stopped_background_command_has_claude_codes_task_stop_output(tmp_path: Path) -> None:
    """KillShell's tool_use_result is Claude Code's TaskStop's (TaskStopOutput: its successor):
    the same keys, task type and command, the id the Bash call gave. BashOutput (Claude Code
    2.1.332 has none, nor a type for it) has the Bash tool's declared BashOutput shape."""
    ours = background_run("loopwright", tmp_path / "lw")
    assert set(ours) == {"bg", "peek", "stop"}
    assert ours["stop"]["task_id"] == ours["bg"]["backgroundTaskId"]
    assert (ours["stop"]["task_type"], ours["stop"]["command"]) == ("local_bash", "sleep 60")
    assert ours["peek"]["backgroundTaskId"] == ours["bg"]["backgroundTaskId"]
    if SDK_TOOLS.exists():
        required, optional = declared("BashOutput")
        assert required <= set(ours["peek"]) <= required | optional, ours["peek"]
        required, optional = declared("TaskStopOutput")
        assert required <= set(ours["stop"]) <= required | optional, ours["stop"]
    if not CLAUDE.exists():
        pytest.skip("Claude Code not installed (tests/node)")
    cc = background_run("claude", tmp_path / "cc")
    assert set(ours["stop"]) == set(cc["stop"]) and set(ours["bg"]) == set(cc["bg"])
    assert {k: v for k, v in ours["stop"].items() if k in ("task_type", "command")} == {
        k: v for k, v in cc["stop"].items() if k in ("task_type", "command")}
    assert cc["stop"]["task_id"] == cc["bg"]["backgroundTaskId"]


def declared(interface: str) -> tuple[set[str], set[str]]:
    """The (required, optional) top-level keys of an `export interface` of sdk-tools.d.ts."""
    source = SDK_TOOLS.read_text()
    body = source[source.index(f"export interface {interface} {{"):]
    body = body[:body.index("\n}\n")]
    keys = re.findall(r"^  (\w+)(\??):", body, re.M)
    return {k for k, opt in keys if not opt}, {k for k, opt in keys if opt}


@pytest.mark.skipif(not SDK_TOOLS.exists(), reason="the TypeScript Agent SDK is not installed (tests/node)")
def test_glob_grep_todo_have_the_declared_shapes(run: Run) -> None:
    if run.who == "claude":
        pytest.skip("Claude Code 2.1.332 has no Glob, Grep or TodoWrite")
    r = run.results()
    for uid, interface in NOT_IN_CLAUDE_CODE.items():
        required, optional = declared(interface)
        assert required <= set(r[uid]) <= required | optional, (uid, sorted(r[uid]), required, optional)
    assert sorted(r["glob"]["filenames"]) == ["a.txt", "empty.txt", "new.txt", "nonl.txt"]  # (newest first)
    assert (r["glob"]["numFiles"], r["glob"]["truncated"]) == (4, False)
    assert (r["grep_files"]["mode"], r["grep_files"]["filenames"], r["grep_files"]["numFiles"]) == (
        "files_with_matches", ["b.py"], 1)  # (a.txt's beta is BETA by then)
    assert (r["grep_content"]["content"], r["grep_content"]["numLines"]) == ("b.py:1:print('beta')", 1)
    assert r["grep_count"]["mode"] == "count" and r["grep_count"]["numMatches"] >= 3
    assert r["todo"] == {"oldTodos": [], "newTodos": [{"content": "x", "status": "pending", "activeForm": "doing x"}]}
    assert MULTI_EDIT_KEYS <= set(declared("FileEditOutput")[0] | declared("FileEditOutput")[1])
    assert set(r["multi"]) == MULTI_EDIT_KEYS | {"edits"}
    assert (r["multi"]["filePath"], r["multi"]["originalFile"]) == (f"{P}/b.py", "print('beta')\n")
    assert r["multi"]["structuredPatch"] == [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                              "lines": ["-print('beta')", "+echo('gamma')"]}]
    assert r["multi"]["edits"][1] == {"old_string": "beta", "new_string": "gamma", "replace_all": False}


# --- the official Python SDK ------------------------------------------------------------------

SDK_TURNS: list[Any] = [
    [use("s_add", "mcp__calc__add", a=2, b=3)],
    [use("s_fail", "mcp__calc__fail")],
    [bash("echo hi", "s_bash")],
    [use("s_write", "Write", file_path=f"{P}/w.txt", content="w\n")],
    [use("s_read", "Read", file_path=f"{P}/w.txt"), use("s_read2", "Read", file_path=f"{P}/a.txt")],
    [text("done")],
]


def sdk_results(who: str, root: Path) -> dict[str, Any]:
    """tool_use id -> UserMessage.tool_use_result (normalised), of SDK_TURNS through the SDK with
    `who` as its CLI; an SDK MCP server's tools among the built-in ones."""
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        ToolResultBlock,
        UserMessage,
        create_sdk_mcp_server,
        query,
        tool,
    )

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}

    @tool("fail", "Fail", {})
    async def fail(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "it failed"}], "is_error": True}

    proj = make_project(root)
    cli = str(CLAUDE) if who == "claude" else loopwright_cmd()[0]
    with ScriptedServer(filled(SDK_TURNS, proj), strict=False) as srv:
        opts = ClaudeAgentOptions(
            cli_path=cli, cwd=str(proj), model="claude-sonnet-4-6", permission_mode="acceptEdits",
            mcp_servers={"calc": create_sdk_mcp_server(name="calc", version="2.0.0", tools=[add, fail])},
            allowed_tools=["Bash", "mcp__calc__add", "mcp__calc__fail"],
            env={"ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test", "HOME": str(root / "home"),
                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"})

        async def go() -> list[Any]:
            return [m async for m in query(prompt="go", options=opts)]

        msgs = asyncio.run(go())
    out: dict[str, Any] = {}
    for m in msgs:
        if isinstance(m, UserMessage) and isinstance(m.content, list):
            ids = [b.tool_use_id for b in m.content if isinstance(b, ToolResultBlock)]
            assert len(ids) <= 1, (who, m)  # one result a message
            if ids:
                out[ids[0]] = normalised(m.tool_use_result, proj)
    return out


@pytest.mark.skipif(sys.version_info < (3, 10), reason="claude_agent_sdk needs 3.10")
def test_the_python_sdk_gets_tool_use_result(tmp_path: Path) -> None:
    pytest.importorskip("claude_agent_sdk")
    ours = sdk_results("loopwright", tmp_path / "lw")
    assert set(ours) == {"s_add", "s_fail", "s_bash", "s_write", "s_read", "s_read2"}
    assert ours["s_bash"]["stdout"] == "hi" and ours["s_bash"]["interrupted"] is False
    assert ours["s_write"]["type"] == "create" and ours["s_write"]["filePath"] == f"{P}/w.txt"
    assert ours["s_read"]["file"]["content"] == "w\n" and ours["s_read2"]["file"]["numLines"] == 4
    # (an in-process server has no serverInfo: the content alone, as Claude Code gives it)
    assert ours["s_add"] == [{"type": "text", "text": "5"}]
    assert ours["s_fail"] == "Error: it failed"
    if CLAUDE.exists():  # the same through the SDK with Claude Code as its CLI
        assert ours == sdk_results("claude", tmp_path / "cc")


QUESTION = {"question": "Which lib?", "header": "Lib", "multiSelect": False,
            "options": [{"label": "A", "description": "a lib"}, {"label": "B", "description": "b lib"}]}


def interactive_results(who: str, root: Path) -> dict[str, Any]:
    """tool_use id -> tool_use_result of an AskUserQuestion and an ExitPlanMode call in plan mode
    through the SDK with `who` as its CLI, the SDK's can_use_tool answering the question (its
    updatedInput's `answers`) and approving the plan (in `-p` Claude Code has neither tool)."""
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        PermissionResultAllow,
        ToolResultBlock,
        UserMessage,
        query,
    )

    async def answer(name: str, x: dict[str, Any], context: Any) -> PermissionResultAllow:
        if name == "AskUserQuestion":
            return PermissionResultAllow(updated_input={**x, "answers": {q["question"]: "A" for q in x["questions"]}})
        return PermissionResultAllow()

    proj = make_project(root)
    cli = str(CLAUDE) if who == "claude" else loopwright_cmd()[0]
    turns = [[use("ask", "AskUserQuestion", questions=[QUESTION])], [use("plan", "ExitPlanMode", plan="1. do it")],
             [text("done")]]
    with ScriptedServer(turns, strict=False, is_loop_call=lambda body: bool(body.get("tools"))) as srv:
        opts = ClaudeAgentOptions(
            cli_path=cli, cwd=str(proj), model="claude-sonnet-4-6", permission_mode="plan", can_use_tool=answer,
            env={"ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test", "HOME": str(root / "home"),
                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"})

        async def go() -> list[Any]:
            async def prompt() -> Any:  # (can_use_tool needs the streaming input)
                yield {"type": "user", "message": {"role": "user", "content": "go"}}
            return [m async for m in query(prompt=prompt(), options=opts)]

        msgs = asyncio.run(go())
    return {b.tool_use_id: m.tool_use_result for m in msgs if isinstance(m, UserMessage) and isinstance(m.content, list)
            for b in m.content if isinstance(b, ToolResultBlock)}


@pytest.mark.skipif(sys.version_info < (3, 10), reason="claude_agent_sdk needs 3.10")
def test_an_answered_question_and_an_approved_plan_have_claude_codes_outputs(tmp_path: Path) -> None:
    """AskUserQuestionOutput: the questions as asked and the answers, Claude Code's value for value.
    ExitPlanModeOutput (sdk-tools.d.ts): the plan presented and isAgent; Claude Code's keys but
    filePath: Claude Code reads the plan from a plan file it keeps (here none was written, so its
    `plan` is null), loopwright has the plan of the call's input and keeps no plan file."""
    pytest.importorskip("claude_agent_sdk")
    ours = interactive_results("loopwright", tmp_path / "lw")
    assert ours["ask"] == {"questions": [QUESTION], "answers": {"Which lib?": "A"}}
    assert ours["plan"] == {"plan": "1. do it", "isAgent": False}
    if SDK_TOOLS.exists():
        for uid, interface in (("ask", "AskUserQuestionOutput"), ("plan", "ExitPlanModeOutput")):
            required, optional = declared(interface)
            assert required <= set(ours[uid]) <= required | optional, uid
    if CLAUDE.exists():
        cc = interactive_results("claude", tmp_path / "cc")
        assert cc["ask"] == ours["ask"]
        assert set(ours["plan"]) == set(cc["plan"]) - {"filePath"} and cc["plan"]["isAgent"] is False, cc
        assert cc["plan"]["plan"] is None, cc


def test_the_session_stays_as_it_was_and_resumes(runs: dict[str, Run], tmp_path: Path) -> None:
    """The structured outputs are not written into loopwright's transcript (it keeps what the
    model saw), and the session resumes: its tool results go with the next request."""
    run = runs["loopwright"]
    sid = run.lines[0]["session_id"]
    home = run.proj.parent / "home"
    (transcript,) = home.rglob(f"{sid}.jsonl")
    saved = transcript.read_text()
    assert "structuredPatch" not in saved and "noOutputExpected" not in saved and "toolUseResult" not in saved
    assert "echo: hello" in saved  # (the results themselves are there)
    with ScriptedServer([[text("again")]]) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", "once more", "--resume", sid, "--model", "claude-sonnet-4-5",
                            "--output-format", "json"], cwd=run.proj, capture_output=True, text=True, timeout=120,
                           env=cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)),
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr[-2000:]
        sent = json.dumps(srv.loop_requests[0].body["messages"])
    assert json.loads(r.stdout)["result"] == "again"
    assert "echo: hello" in sent and "structuredPatch" not in sent


def test_notebook_edit_is_claude_codes_but_for_how_the_file_is_written(runs: dict[str, Run]) -> None:
    """NotebookEdit's structured output: Claude Code's keys and values, but original_file and
    updated_file are each side's own file text (Claude Code writes a notebook with its own JSON
    layout, loopwright with nbformat's)."""
    ours = runs["loopwright"].results()["nb_edit"]
    assert ours["original_file"] == NOTEBOOK and json.loads(ours["updated_file"])["cells"][0]["source"] in (
        "x = 2", ["x = 2"])  # (nbformat writes a source as its lines)
    if "claude" not in runs:
        pytest.skip("Claude Code not installed (tests/node)")
    cc = runs["claude"].results()["nb_edit"]
    assert set(ours) == set(cc)
    files = ("original_file", "updated_file")
    assert {k: v for k, v in ours.items() if k not in files} == {k: v for k, v in cc.items() if k not in files}
    assert json.loads(cc["updated_file"])["cells"][0]["source"] == "x = 2"
