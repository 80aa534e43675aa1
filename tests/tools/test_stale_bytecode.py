"""An edit never runs stale code: Write, Edit and MultiEdit (and NotebookEdit, through the same
atomic_write) move a file's mtime on by whole seconds, so Python's .pyc check (source mtime in
whole seconds + size) never takes the old bytecode for the new source."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import (
    make_edit_tool,
    make_multi_edit_tool,
    make_read_tool,
    make_write_tool,
)
from tests.helpers import call_tool

READ, WRITE, EDIT, MULTI = make_read_tool(), make_write_tool(), make_edit_tool(), make_multi_edit_tool()


def _import_value(d: Path) -> str:
    """A fresh interpreter imports mod (writing or reusing __pycache__/mod.*.pyc) and prints mod.X."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    out = subprocess.run([sys.executable, "-c", "import mod; print(mod.X)"], cwd=d, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _compile(p: Path) -> None:
    """Write what a fresh interpreter's `import` writes, __pycache__/<name>.*.pyc recording the source's
    mtime in whole seconds and its size (timestamp mode, whatever SOURCE_DATE_EPOCH says), here in
    this process: the steps that must fall within one second leave no room for an interpreter's
    start on a loaded machine (CI: 2 cores, 3 workers)."""
    py_compile.compile(str(p), cfile=importlib.util.cache_from_source(str(p)), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)


def _seconds(p: Path) -> int:
    return p.stat().st_mtime_ns // 1_000_000_000


@pytest.mark.e2e
def test_edit_import_edit_within_the_second_imports_the_new_code(tmp_path: Path) -> None:
    """Each edit keeps the size and lands in the second the previous version was compiled in;
    each import still sees the new code. The scenario is retried until the first edit really
    fell in the same second as the original's mtime (else it could not catch the bug)."""
    for _attempt in range(5):
        d = tmp_path / f"try{_attempt}"
        d.mkdir()
        ctx = ToolContext(d)
        mod = d / "mod.py"
        time.sleep(1 - time.time() % 1 + 0.01)  # start of a second: room for the steps below
        mod.write_text("X = 'aaa'\n")
        original = _seconds(mod)
        _compile(mod)  # __pycache__/mod.*.pyc, recording `original`
        assert list((d / "__pycache__").glob("mod.*.pyc"))
        call_tool(READ, ctx, file_path=str(mod))
        edit_second = int(time.time())
        out, err = call_tool(EDIT, ctx, file_path=str(mod), old_string="aaa", new_string="bbb")
        assert not err, out
        if edit_second != original:
            continue  # the machine was too slow for this second: try again
        assert (mod.stat().st_size, _seconds(mod)) == (len("X = 'aaa'\n"), original + 1)
        assert _import_value(d) == "bbb"
        edited = _seconds(mod)
        out, err = call_tool(WRITE, ctx, file_path=str(mod), content="X = 'ccc'\n")
        assert not err, out
        assert _import_value(d) == "ccc"
        written = _seconds(mod)
        out, err = call_tool(MULTI, ctx, file_path=str(mod), edits=[{"old_string": "ccc", "new_string": "ddd"}])
        assert not err, out
        assert _import_value(d) == "ddd"
        # strictly increasing (by one where an edit fell within the second of the last; the real
        # time where the machine was slower): no earlier .pyc's second can match
        assert original < edited < written < _seconds(mod), (original, edited, written, _seconds(mod))
        return
    pytest.fail("could not edit within the second of the original's mtime in 5 tries (machine too slow)")


def test_a_later_second_keeps_the_real_mtime(tmp_path: Path) -> None:
    """An edit in a later second than the old mtime keeps its own mtime (no drift ahead of the clock)."""
    ctx = ToolContext(tmp_path)
    f = tmp_path / "a.py"
    f.write_text("X = 1\n")
    old = f.stat().st_mtime_ns - 10 * 1_000_000_000
    os.utime(f, ns=(old, old))
    call_tool(READ, ctx, file_path=str(f))
    before = time.time_ns()
    out, err = call_tool(EDIT, ctx, file_path=str(f), old_string="1", new_string="2")
    assert not err, out
    assert before - 1_000_000_000 < f.stat().st_mtime_ns <= time.time_ns()


@pytest.mark.e2e
def test_a_rewind_restores_code_that_runs(tmp_path: Path) -> None:
    """A rewind's restore moves the mtime on too: the restored version runs, not the agent's."""
    import loopwright as lw
    from loopwright.sessions.rewind import rewind_files, rewind_points
    from tests.helpers import text, use

    work = tmp_path / "work"
    work.mkdir()
    mod = work / "mod.py"
    mod.write_text("X = 'old'\n")
    turns = [[use("r1", "Read", file_path=str(mod))],
             [use("e1", "Edit", file_path=str(mod), old_string="old", new_string="new")], [text("ok")]]
    r = lw.run("edit", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[READ, EDIT], cwd=work,
                                       sessions_dir=tmp_path / "s", persist_session=True,
                                       permission_mode="acceptEdits"))
    assert r.subtype == "success"
    point = rewind_points(r.session_id, tmp_path / "s")[0]
    for _attempt in range(5):
        time.sleep(1 - time.time() % 1 + 0.01)
        now = time.time_ns()
        os.utime(mod, ns=(now, now))  # the agent's version, compiled in this very second
        _compile(mod)
        rewind_files(r.session_id, point.uuid, tmp_path / "s")
        if time.time_ns() // 1_000_000_000 != now // 1_000_000_000:
            mod.write_text("X = 'new'\n")  # too slow for this second: again
            continue
        assert mod.read_text() == "X = 'old'\n" and _import_value(work) == "old"
        return
    pytest.fail("could not rewind within the second in 5 tries (machine too slow)")
