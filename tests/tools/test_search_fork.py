"""Glob's Python walk (in a worker thread) beside Grep's Python engine (in a forked child) in one
turn: the child must not inherit a module import the thread had under way (it would wait for it
forever). Each try is a fresh interpreter, where nothing of the matcher is imported yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import asyncio, sys
from pathlib import Path
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_glob_tool
from loopwright.tools.grep import make_grep_tool
from loopwright.workspace import SearchState, ToolState
ctx = ToolContext(Path(sys.argv[1]), state=ToolState(search=SearchState(engine="python")))
async def main():
    return await asyncio.wait_for(asyncio.gather(
        make_glob_tool().call({"pattern": "**/*.py"}, ctx, in_thread=True),
        make_grep_tool().call({"pattern": "NEEDLE"}, ctx)), 15)
glob, grep = asyncio.run(main())
print(str(grep.content).splitlines()[0], len(str(glob.content).splitlines()))
"""


@pytest.mark.e2e
def test_python_grep_and_glob_side_by_side_never_hang(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    for i in range(40):
        (tmp_path / f"f{i}.py").write_text(f"NEEDLE {i}\n")
    src = str(Path(__file__).resolve().parents[2] / "src")
    for _ in range(6):  # the race was lost about one time in three
        p = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, timeout=60,
                           env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert p.returncode == 0 and p.stdout.split() == ["Found", "40", "files", "40"], p.stderr[-800:]
