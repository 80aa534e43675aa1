"""`loopwright demo`: seed Example 4.3 on a real copy of the bundled project."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli import demo
from loopwright.invariant import InvariantViolation
from loopwright.models.base import ModelRequest
from loopwright.models.scripted import ScriptedModel
from tests.helpers import cli_env, loopwright_cmd


def run_demo_cli(*args: str) -> subprocess.CompletedProcess[str]:
    # no provider keys: offline by construction
    return subprocess.run([*loopwright_cmd(), "demo", *args], capture_output=True, text=True, timeout=120, env=cli_env())


@pytest.mark.e2e
def test_demo_fixes_the_test() -> None:
    p = run_demo_cli()
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "tests before: 1 failed, 4 passed" in out
    assert "⏺ Read(grades.py)" in out and "⏺ Read(test_grades.py)" in out
    assert "⏺ Edit(grades.py: if score > 90: → if score >= 90:)" in out
    assert "● success: 3 tool-use turns, 4 model calls" in out
    assert "checked on every request: 4 of 4 calls ✓" in out
    assert "tests after the run (run again, outside the loop): 5 passed ✓" in out
    # the final history is the 8 rows of the seed's table, (P2) pairs 2-3, 4-5, 6-7
    assert " 5  user       tool_result(toolu_02), tool_result(toolu_03)\n" in out
    assert " 8  assistant  text \"The cause was the boundary check" in out
    assert "\r" not in out and "\x1b" not in out  # not a TTY: no spinner, no colour


@pytest.mark.e2e
def test_demo_turn_limit_stops_before_the_edit() -> None:
    p = run_demo_cli("--max-turns", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "● error_max_turns: 2 tool-use turns, 3 model calls" in out
    assert "not run (error_max_turns): Edit, Bash" in out
    assert "grades.py unchanged: yes ✓" in out
    assert "turns=2 = T, calls=3 = T + 1" in out
    assert " 5  user       tool_result(toolu_02), tool_result(toolu_03)\n" in out and "\n 6  " not in out


@pytest.mark.e2e
def test_demo_exits_1_when_the_run_does_not_fix_the_test(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    real = demo.script

    def wrong_fix(project: Path) -> list[Any]:
        turns = real(project)
        turns[2][0]["input"]["new_string"] = "    if score > 91:"  # edits, but the test still fails
        return turns

    monkeypatch.setattr(demo, "script", wrong_fix)
    assert demo.demo_main([]) == 1
    out = capsys.readouterr().out
    assert "tests after the run (run again, outside the loop): 1 failed, 4 passed ✗" in out
    assert "✗ not as expected" in out


def test_demo_needs_no_pytest() -> None:
    """The README's install has no dev extras: the demo's commands use the shipped runner."""
    commands = [b["input"]["command"] for turn in demo.script(Path("/p")) for b in turn
                if b.get("type") == "tool_use" and b["name"] == "Bash"]
    assert commands and all("run_tests.py" in c and "pytest" not in c for c in commands)


@pytest.mark.e2e
def test_bundled_project_has_one_failing_test(tmp_path: Path) -> None:
    project = demo.copy_project(tmp_path)
    assert sorted(p.name for p in project.iterdir()) == ["grades.py", "run_tests.py", "test_grades.py"]
    code, verdict = demo.run_tests(project)
    assert (code, verdict) == (1, "1 failed, 4 passed")
    assert not (project / "__pycache__").exists()  # the runner leaves the project as it was
    shutil.rmtree(project)


def test_checked_model_refuses_a_history_without_its_tool_results() -> None:
    model = demo.CheckedModel(ScriptedModel([[{"type": "text", "text": "ok"}]]))
    bad = [{"role": "user", "content": [{"type": "text", "text": "x"}]},
           {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "Bash", "input": {}}]},
           {"role": "user", "content": [{"type": "text", "text": "no result"}]}]

    async def go() -> None:
        async for _ in model.stream(ModelRequest(None, [], bad)):
            pass

    with pytest.raises(InvariantViolation):
        asyncio.run(go())
    assert model.checks == 0
