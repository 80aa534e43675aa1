"""Batch copies never contain themselves (issue 40, item 9): with `--isolate copy`, tasks whose
cwd is the project (`"cwd": "."`) and the results file beside the task file inside it, each copy
holds the project and nothing of the batch (no copy, workspace, patch or results), so it is never
larger than the source. The real CLI on a real directory."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import cli_env, loopwright_cmd, write_script

pytestmark = pytest.mark.e2e


def size(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*") if not p.is_dir())


def test_copies_of_the_project_leave_the_batch_out(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    for i in range(20):
        (project / "src" / f"m{i}.py").write_text(f"x = {i}\n" * 200)
    (project / "workspaces.txt").write_text("a file of the project whose name starts like the batch's\n")
    tasks = project / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"t{i}", "prompt": "look", "cwd": "."}) + "\n" for i in range(4)))
    source_size = size(project)
    source_files = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    model = write_script(tmp_path, [[{"type": "text", "text": "ok"}]] * 8)
    r = subprocess.run([*loopwright_cmd(), "batch", str(tasks), "-o", str(project / "results.jsonl"), "--isolate",
                        "copy", "--concurrency", "4", "--model", model], cwd=project,
                       env=cli_env(LOOPWRIGHT_HOME=str(tmp_path / "home")), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    results = [json.loads(ln) for ln in (project / "results.jsonl").read_text().splitlines()]
    assert sorted(x["id"] for x in results) == ["t0", "t1", "t2", "t3"]
    for x in results:
        copy = Path(x["workspace"])
        assert copy.is_dir() and copy != project
        inside = sorted(str(p.relative_to(copy)) for p in copy.rglob("*"))
        assert inside == source_files, f"{copy}: {set(inside) ^ set(source_files)}"  # the project, nothing else
        assert size(copy) <= source_size
    # the batch's own files (results, workspaces) stay out of every copy, however deep
    assert not [p for p in project.rglob("results.jsonl") if p.parent != project]
    assert not [p for p in project.rglob("*.work") if p.parent != project]
    assert os.path.getsize(project / "results.jsonl") > 0
