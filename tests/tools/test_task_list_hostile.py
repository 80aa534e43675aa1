"""A session's task list file damaged or hand-edited between runs (real `-p --resume` runs on the
loopback server): what the tools cannot use is one clear error naming the file, the file is
never written over, and a list whose next id fell behind its tasks does not lose one to the
next TaskCreate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import text, use
from tests.tools.test_task_list_session import cli

pytestmark = pytest.mark.e2e

KEEP = {"id": "1", "subject": "Keep me", "description": "d", "status": "pending", "activeForm": None, "owner": None,
        "blocks": [], "blockedBy": [], "metadata": {}}
CREATE_AND_LIST = [[use("c2", "TaskCreate", subject="New", description="d")], [use("l", "TaskList", {})], [text("ok")]]


def saved_session(tmp_path: Path) -> tuple[Path, Path, str, Path]:
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    sid, _ = cli("loopwright", proj, home, [[use("c", "TaskCreate", subject="Keep me", description="d")], [text("ok")]])
    (kept,) = home.glob(f".loopwright/projects/*/{sid}.tasks.json")
    assert json.loads(kept.read_text()) == {"tasks": {"1": KEEP}, "next_id": 2}
    return proj, home, sid, kept


def test_a_next_id_behind_the_kept_tasks_never_replaces_one(tmp_path: Path) -> None:
    proj, home, sid, kept = saved_session(tmp_path)
    kept.write_text(json.dumps({"tasks": {"1": KEEP}}))  # (no next_id: an older or hand-written file)
    _, said = cli("loopwright", proj, home, CREATE_AND_LIST, "--resume", sid)
    assert said == ["#1 [pending] Keep me\n#2 [pending] New"]
    assert json.loads(kept.read_text())["tasks"]["1"] == KEEP


@pytest.mark.parametrize("bad", [
    {"tasks": {"1": "garbage"}, "next_id": 2},
    {"tasks": {"1": {"id": "1"}}, "next_id": 2},
    {"tasks": {"1": {**KEEP, "status": "exploded"}}, "next_id": 2},
    {"tasks": {"1": {**KEEP, "blocks": [{"x": 1}]}}, "next_id": 2},
    {"tasks": {"1": KEEP}, "next_id": "2"},
    {"tasks": [KEEP]},
])
def test_a_damaged_task_is_one_clear_error_and_the_file_is_kept(tmp_path: Path, bad: dict[str, Any]) -> None:
    proj, home, sid, kept = saved_session(tmp_path)
    kept.write_text(json.dumps(bad))
    _, said = cli("loopwright", proj, home, CREATE_AND_LIST, "--resume", sid)
    (listed,) = said  # (TaskList's; TaskCreate's failed the same way: the file is as it was)
    assert listed.startswith(f"the session's task list {kept} could not be read: "), said
    assert json.loads(kept.read_text()) == bad  # nothing written over it
