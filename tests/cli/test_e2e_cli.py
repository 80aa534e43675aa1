"""End to end: `loopwright -p` as a subprocess, through the real Anthropic SDK, against the
loopback Messages-API server, fixing a failing test in a temp git repo with the real
built-in tools, the way Claude Code's model drives Claude Code (same tool names and inputs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli.demo import PROJECT
from loopwright.invariant import holds
from loopwright.models.catalog import price_for
from loopwright.testing import ScriptedServer
from loopwright.usage import Usage
from tests.helpers import cli_env, loopwright_cmd, use

pytestmark = pytest.mark.e2e  # every test here runs programs as subprocesses

MODEL = "claude-sonnet-4-5"


def fix_script(repo: Path) -> list[Any]:
    """Seed Example 4.3 as Claude Code's model writes it: Bash{command, description},
    Read{file_path} with absolute paths, Edit{file_path, old_string, new_string}."""
    test_cmd = f"{sys.executable} run_tests.py"
    return [
        [{"type": "text", "text": "I'll run the tests first."},
         use("toolu_01A", "Bash", {"command": test_cmd, "description": "Run the test suite"})],
        [use("toolu_02A", "Read", {"file_path": str(repo / "grades.py")}),
         use("toolu_02B", "Read", {"file_path": str(repo / "test_grades.py")})],
        [use("toolu_03A", "Edit", {"file_path": str(repo / "grades.py"), "old_string": "    if score > 90:",
                                   "new_string": "    if score >= 90:"}),
         use("toolu_03B", "Bash", {"command": test_cmd, "description": "Run the tests again"})],
        [{"type": "text", "text": "The cause was the boundary check; all tests pass now."}],
    ]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo holding the bundled project, with its one failing test committed."""
    r = tmp_path / "repo"
    shutil.copytree(PROJECT, r, ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=r, check=True)
    subprocess.run([*git, "add", "."], cwd=r, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "failing test"], cwd=r, check=True)
    assert suite_passes(r) is False
    return r


def suite_passes(repo: Path) -> bool:
    return subprocess.run([sys.executable, "run_tests.py"], cwd=repo, capture_output=True, timeout=60).returncode == 0


def loopwright(*args: str, cwd: Path, home: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = cli_env(ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(home))
    return subprocess.run([*loopwright_cmd(), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=120)


def fix_args(srv: ScriptedServer, repo: Path, *extra: str) -> list[str]:
    return ["-p", "Fix the failing test.", "--model", MODEL, "--base-url", srv.url, "--cwd", str(repo),
            "--permission-mode", "acceptEdits", "--allowedTools", "Bash", *extra]


def test_fixes_the_failing_test_json(repo: Path, tmp_path: Path) -> None:
    with ScriptedServer(fix_script(repo), model=MODEL) as srv:
        p = loopwright(*fix_args(srv, repo, "--output-format", "json"), cwd=tmp_path, home=tmp_path / "home")
        requests = srv.loop_requests
    assert p.returncode == 0, p.stderr
    assert suite_passes(repo)
    assert subprocess.run(["git", "diff", "--stat"], cwd=repo, capture_output=True, text=True).stdout.count("grades.py") == 1
    r = json.loads(p.stdout)
    assert (r["type"], r["subtype"], r["is_error"]) == ("result", "success", False)
    assert (r["num_turns"], r["model_calls"]) == (3, 4)
    assert r["result"] == "The cause was the boundary check; all tests pass now."
    assert r["stop_reason"] == "end_turn" and r["permission_denials"] == []
    assert r["session_id"] and r["duration_ms"] >= r["duration_api_ms"] >= 0
    usage = Usage.from_json(r["usage"])
    assert usage.total_input_tokens > 0 and usage.output_tokens > 0
    assert usage.cache_read_input_tokens > 0  # the prompt prefix is cached across calls
    price = price_for(MODEL)
    assert price is not None and r["total_cost_usd"] == pytest.approx(price.cost(usage), rel=1e-6)
    assert r["total_cost_usd"] > 0
    # What the server saw: 4 loop calls, each history valid, the tools and system prompt sent.
    assert len(requests) == 4
    for req in requests:
        body = req.body
        assert holds(body["messages"]) and body["model"] == MODEL
        assert {"Bash", "Read", "Edit"} <= {t["name"] for t in body["tools"]}
        assert "test" in (req.headers.get("x-api-key"), req.headers.get("authorization", "").removeprefix("Bearer "))
    system = requests[0].body["system"]
    system_text = system if isinstance(system, str) else "".join(b["text"] for b in system)
    assert str(repo) in system_text
    assert [len(req.body["messages"]) for req in requests] == [1, 3, 5, 7]
    results = requests[1].body["messages"][2]["content"]
    assert results[0]["tool_use_id"] == "toolu_01A" and results[0]["is_error"] is True  # the test failed
    results = requests[3].body["messages"][6]["content"]
    assert [x["tool_use_id"] for x in results] == ["toolu_03A", "toolu_03B"]
    assert not any(x.get("is_error") for x in results)


def test_stream_json_parses_line_by_line(repo: Path, tmp_path: Path) -> None:
    with ScriptedServer(fix_script(repo), model=MODEL) as srv:
        p = loopwright(*fix_args(srv, repo, "--output-format", "stream-json", "--verbose", "--include-partial-messages"),
                       cwd=tmp_path, home=tmp_path / "home")
    assert p.returncode == 0, p.stderr
    every = [json.loads(ln) for ln in p.stdout.splitlines()]
    partial = [x["event"] for x in every if x["type"] == "stream_event"]
    assert {"message_start", "content_block_delta", "message_stop"} <= {e["type"] for e in partial}
    lines = [x for x in every if x["type"] != "stream_event"]
    kinds = [(x["type"], x.get("subtype")) for x in lines]
    assert kinds[0] == ("system", "init") and kinds[-1] == ("result", "success")
    # one user line per tool result (5 over the 3 turns), each with its tool_use_result, as Claude Code writes them
    assert [k for k, _ in kinds].count("assistant") == 4 and [k for k, _ in kinds].count("user") == 5
    users = [x for x in lines if x["type"] == "user"]
    assert [x["message"]["content"][0]["tool_use_id"] for x in users] == [
        "toolu_01A", "toolu_02A", "toolu_02B", "toolu_03A", "toolu_03B"]
    assert users[3]["tool_use_result"]["structuredPatch"][0]["lines"].count("+    if score >= 90:") == 1
    assert lines[0]["model"] == MODEL and {"Bash", "Read", "Edit"} <= set(lines[0]["tools"])
    assert lines[-1]["num_turns"] == 3 and lines[-1]["model_calls"] == 4
    assert suite_passes(repo)


def test_text_mode_trace(repo: Path, tmp_path: Path) -> None:
    with ScriptedServer(fix_script(repo), model=MODEL) as srv:
        p = loopwright(*fix_args(srv, repo), cwd=tmp_path, home=tmp_path / "home")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "The cause was the boundary check; all tests pass now.\n"
    err = p.stderr
    assert "⏺ Read(grades.py)" in err and "⏺ Edit(grades.py: if score > 90: → if score >= 90:)" in err
    assert "⎿ ✗ Bash: exit 1: === 1 failed, 4 passed ===" in err and "⎿ ✓ Bash: === 5 passed ===" in err
    assert err.count("◆ call ") == 4 and "● success: 3 tool-use turns, 4 model calls" in err


def test_max_turns_stops_before_the_edit(repo: Path, tmp_path: Path) -> None:
    with ScriptedServer(fix_script(repo), model=MODEL) as srv:
        p = loopwright(*fix_args(srv, repo, "--output-format", "json", "--max-turns", "2"), cwd=tmp_path,
                       home=tmp_path / "home")
        calls = len(srv.loop_requests)
    assert p.returncode == 1
    r = json.loads(p.stdout)
    assert (r["subtype"], r["is_error"], r["num_turns"], r["model_calls"]) == ("error_max_turns", True, 2, 3)
    assert calls == 3
    assert subprocess.run(["git", "diff", "--quiet"], cwd=repo).returncode == 0  # the Edit never ran
    assert not suite_passes(repo)


def test_default_mode_denies_bash_and_edit(repo: Path, tmp_path: Path) -> None:
    with ScriptedServer(fix_script(repo), model=MODEL) as srv:
        p = loopwright("-p", "Fix the failing test.", "--model", MODEL, "--base-url", srv.url, "--cwd", str(repo),
                       "--output-format", "json", cwd=tmp_path, home=tmp_path / "home")
        requests = srv.loop_requests
    r = json.loads(p.stdout)
    assert p.returncode == 0 and r["subtype"] == "success"
    assert [d["tool_name"] for d in r["permission_denials"]] == ["Bash", "Edit", "Bash"]
    denied = requests[1].body["messages"][2]["content"][0]
    assert denied["is_error"] is True and "needs approval" in json.dumps(denied["content"])
    assert "--allowedTools" in json.dumps(denied["content"])  # says how to allow it
    assert subprocess.run(["git", "diff", "--quiet"], cwd=repo).returncode == 0


def test_bad_input_exits_cleanly(tmp_path: Path) -> None:
    with ScriptedServer([[{"type": "text", "text": "unused"}]], model=MODEL) as srv:
        base = ["--model", MODEL, "--base-url", srv.url]
        empty = loopwright("-p", "", *base, cwd=tmp_path, home=tmp_path / "home")
        bad_cwd = loopwright("-p", "hi", *base, "--cwd", str(tmp_path / "missing"), cwd=tmp_path, home=tmp_path / "home")
        assert srv.loop_requests == []  # nothing reached the model
    for p, needle in ((empty, "prompt is empty"), (bad_cwd, "no such directory")):
        assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr


def test_api_error_is_a_clean_error_result(tmp_path: Path) -> None:
    from loopwright.testing import Fault

    with ScriptedServer([[{"type": "text", "text": "unused"}]], model=MODEL) as srv:
        srv.inject(Fault.error(400, "bad request on purpose"))
        p = loopwright("-p", "hi", "--model", MODEL, "--base-url", srv.url, "--output-format", "json",
                       cwd=tmp_path, home=tmp_path / "home")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    r = json.loads(p.stdout)
    assert r["subtype"] == "error_during_execution" and "bad request on purpose" in json.dumps(r)


def test_same_task_through_an_openai_compatible_server(repo: Path, tmp_path: Path) -> None:
    """`--model openai:<name> --base-url <server>/v1`: same script, same tools, chat completions on the wire."""
    with ScriptedServer(fix_script(repo), model="qwen2.5-coder") as srv:
        p = loopwright("-p", "Fix the failing test.", "--model", "openai:qwen2.5-coder", "--base-url", srv.openai_url,
                       "--cwd", str(repo), "--permission-mode", "acceptEdits", "--allowedTools", "Bash",
                       "--output-format", "json", cwd=tmp_path, home=tmp_path / "home")
        kinds = [r.kind for r in srv.loop_requests]
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert (r["subtype"], r["num_turns"], r["model_calls"]) == ("success", 3, 4)
    assert kinds == ["chat"] * 4
    assert suite_passes(repo)
