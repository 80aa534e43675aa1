"""The typed records where rooms meet (issue 23): permission denials, hook reports and batch result
lines are TypedDicts whose keys are exactly what real runs write (the JSON shapes on the wire and
in RESULTS.jsonl are unchanged: the SDK and the tests read them)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any, get_type_hints

import pytest

import loopwright as lw
from loopwright.batching import BatchResult, ResultsFile, Task, batch
from loopwright.hooks import HookMatcher
from loopwright.messages import HookReportData, PermissionDenial
from tests.helpers import text, use


def test_a_denial_has_the_keys_of_permission_denial(tmp_path: Path) -> None:
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("w1", "Write", file_path="a.txt", content="x")],
                                                             [text("ok")]]),
                                     tools=lw.default_tools(), cwd=tmp_path, permission_mode="plan"))
    assert r.permission_denials and set(r.permission_denials[0]) == set(get_type_hints(PermissionDenial))
    assert r.permission_denials[0]["tool_name"] == "Write" and r.permission_denials[0]["tool_use_id"] == "w1"
    assert json.loads(json.dumps(r.to_json()))["permission_denials"] == r.permission_denials


def test_a_hook_report_has_the_keys_of_hook_report_data(tmp_path: Path) -> None:
    def broken(*_: Any) -> Any:
        raise RuntimeError("boom")

    hooks = {"PreToolUse": [HookMatcher("Bash", [broken])]}
    msgs = asyncio.run(_collect(lw.AgentOptions(model=lw.ScriptedModel([[use("b1", "Bash", command="true")],
                                                                        [text("ok")]]),
                                                tools=lw.default_tools(), cwd=tmp_path, hooks=hooks,
                                                permission_mode="bypassPermissions")))
    (err,) = [m for m in msgs if isinstance(m, lw.SystemMessage) and m.subtype == "hook_error"]
    assert set(err.data) <= set(get_type_hints(HookReportData)) and "boom" in err.data["message"]
    assert {"hook_event_name", "hook", "kind", "message"} <= set(err.data)


@pytest.mark.e2e  # git (the worktree)
def test_a_batch_result_line_declares_every_key_it_writes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty",
                                   "-m", "0"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    model = lw.ScriptedModel([[use("w1", "Write", file_path="new.txt", content="x\n")], [text("done")]])
    results = tmp_path / "results.jsonl"

    async def go() -> list[BatchResult]:
        return [r async for r in batch([Task("t1", "go", str(repo))],
                                       lw.AgentOptions(model=model, tools=lw.default_tools(),
                                                       permission_mode="bypassPermissions"),
                                       isolate="worktree", results=results)]

    (line,) = asyncio.run(go())
    declared = set(get_type_hints(BatchResult))
    assert line["subtype"] == "success" and {"workspace", "diff_stat", "patch", "attempts", "worker"} <= set(line)
    assert set(line) <= declared, set(line) - declared
    assert list(line)[0] == "id"  # the id first, the result's fields, then the batch's
    on_disk = ResultsFile(results).read()["t1"]
    assert json.loads(json.dumps(line)) == on_disk  # the file holds exactly what was yielded


async def _collect(options: lw.AgentOptions) -> list[Any]:
    return [m async for m in lw.query("go", options)]
