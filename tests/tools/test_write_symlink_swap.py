"""Write/Edit/Read open what the gate judged: a symlink swapped into the path after the judgment
(while the user answers, or between the tool resolving the path and opening it) never leads the
write outside the allowed area, nor a read outside the working directories.

The swap is made at a point that always comes between judgment and use: inside the can_use_tool
answer (a person deciding), or right after the tool resolved the path (its resolve() is wrapped
to plant the symlink as it returns). Real files and symlinks in temp directories."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.tools import paths, read, write
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import default_tools, make_edit_tool, make_read_tool, make_write_tool
from tests.helpers import call_tool, first_tool_result, result_text, text, use


def layout(tmp_path: Path) -> tuple[Path, Path]:
    """work/ (the working directory, with work/sub/ a real directory) and outside/ beside it."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "f.txt").write_text("outside's own\n")
    return work, outside


def blocked_outside(work: Path, ask: str) -> None:
    """The project's settings: reads outside the working directories blocked, `ask` asked about."""
    (work / ".loopwright").mkdir()
    (work / ".loopwright" / "settings.json").write_text(json.dumps(
        {"permissions": {"blockReadsOutsideWorkingDirectories": True, "ask": [ask]}}))


def swap_to_link(d: Path, target: Path) -> None:
    """`d` (a directory) becomes a symlink to `target`."""
    d.rename(d.with_name(d.name + ".moved"))
    d.symlink_to(target, target_is_directory=True)


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_a_symlink_swapped_while_the_user_answers_is_refused(tmp_path: Path, tool: str) -> None:
    """default mode: the write is asked about; while the person answers, work/sub becomes a link
    to outside/. Approved, the call must not write outside/f.txt."""
    work, outside = layout(tmp_path)
    (work / "sub" / "f.txt").write_text("inside\n")
    target = "sub/f.txt"
    x = ({"file_path": target, "content": "WRITTEN\n"} if tool == "Write"
         else {"file_path": target, "old_string": "inside", "new_string": "WRITTEN"})
    asked: list[str] = []

    def answer(name: str, tool_input: dict[str, Any]) -> lw.Allow:
        asked.append(name)
        swap_to_link(work / "sub", outside)
        (outside / "f.txt").write_text("inside\n")  # (what Edit's old_string matches, so only the gate stops it)
        return lw.Allow()

    model = lw.ScriptedModel([[use("r1", "Read", file_path=target)], [use("w1", tool, x)], [text("done")]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=str(work), permission_mode="default",
                                     can_use_tool=answer))
    assert asked == [tool]
    result = first_tool_result(r, 4)
    assert result.get("is_error") and "changed in between" in result_text(result), result
    assert (outside / "f.txt").read_text() == "inside\n"  # untouched
    assert (work / "sub.moved" / "f.txt").read_text() == "inside\n"


def planted_after_resolve(monkeypatch: pytest.MonkeyPatch, module: Any, plant: Any) -> None:
    """The tool's resolve() returns, then `plant()` runs: the swap lands between the tool resolving
    the path and opening it (no gate involved: the tool itself must not follow it)."""
    real = paths.resolve

    def resolve(file_path: str, ctx: ToolContext) -> Path:
        p = real(file_path, ctx)
        plant()
        return p

    monkeypatch.setattr(module, "resolve", resolve)


def test_write_does_not_follow_a_parent_swapped_after_resolving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, outside = layout(tmp_path)
    planted_after_resolve(monkeypatch, write, lambda: swap_to_link(work / "sub", outside))
    out, err = call_tool(make_write_tool(), ToolContext(work), file_path=str(work / "sub" / "new.txt"),
                         content="WRITTEN\n")
    assert err and "symlink put there" in str(out), out
    assert not (outside / "new.txt").exists() and sorted(os.listdir(outside)) == ["f.txt"]


def test_write_does_not_follow_a_file_swapped_for_a_link(tmp_path: Path) -> None:
    """The last component: work/sub/f.txt (read, checked fresh, then) replaced by a link to
    outside/f.txt just before the write (the checkpoint hook's moment: before_file_change)."""
    work, outside = layout(tmp_path)
    f = work / "sub" / "f.txt"
    f.write_text("inside\n")

    def plant(_: Path) -> None:
        f.unlink()
        f.symlink_to(outside / "f.txt")

    ctx = ToolContext(work, before_file_change=plant)
    call_tool(make_read_tool(), ctx, file_path=str(f))
    out, err = call_tool(make_write_tool(), ctx, file_path=str(f), content="WRITTEN\n")
    assert err and "symlink put there" in str(out), out
    assert (outside / "f.txt").read_text() == "outside's own\n"


def test_a_dangling_link_planted_at_a_new_files_name_is_not_followed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, outside = layout(tmp_path)
    new = work / "sub" / "new.txt"
    planted_after_resolve(monkeypatch, write, lambda: new.symlink_to(outside / "made.txt"))
    out, err = call_tool(make_write_tool(), ToolContext(work), file_path=str(new), content="WRITTEN\n")
    assert err, out
    assert not (outside / "made.txt").exists()


def test_edit_does_not_follow_a_parent_swapped_before_the_write(tmp_path: Path) -> None:
    """Edit read and checked work/sub/f.txt; just before the write (before_file_change) work/sub
    becomes a link to outside/, whose f.txt has the same text."""
    work, outside = layout(tmp_path)
    f = work / "sub" / "f.txt"
    f.write_text("outside's own\n")  # the same text: only where the write goes differs
    ctx = ToolContext(work, before_file_change=lambda _: swap_to_link(work / "sub", outside))
    call_tool(make_read_tool(), ctx, file_path=str(f))
    out, err = call_tool(make_edit_tool(), ctx, file_path=str(f), old_string="own", new_string="WRITTEN")
    assert err and "symlink put there" in str(out), out
    assert (outside / "f.txt").read_text() == "outside's own\n"


def test_read_blocked_outside_is_not_read_through_a_swapped_link(tmp_path: Path) -> None:
    """permissions.blockReadsOutsideWorkingDirectories: Read of work/sub/f.txt is judged inside;
    swapped to outside/ while the (asked) read waits, it is refused, not read."""
    work, outside = layout(tmp_path)
    (work / "sub" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("SECRET\n")
    blocked_outside(work, "Read")

    def answer(name: str, tool_input: dict[str, Any]) -> lw.Allow:
        swap_to_link(work / "sub", outside)
        return lw.Allow()

    model = lw.ScriptedModel([[use("r1", "Read", file_path="sub/f.txt")], [text("done")]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=str(work), permission_mode="default",
                                     can_use_tool=answer, setting_sources=["project"]))
    result = first_tool_result(r)
    assert result.get("is_error") and "SECRET" not in result_text(result), result


def test_read_does_not_follow_a_parent_swapped_after_resolving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, outside = layout(tmp_path)
    (work / "sub" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("SECRET\n")
    planted_after_resolve(monkeypatch, read, lambda: swap_to_link(work / "sub", outside))
    out, err = call_tool(make_read_tool(), ToolContext(work), file_path=str(work / "sub" / "f.txt"))
    assert err and "SECRET" not in str(out), out


def test_writing_through_a_link_the_gate_saw_still_works(tmp_path: Path) -> None:
    """No swap: a symlink that was there when judged is written through (the link stays a link),
    and a new file in a new directory is created."""
    work, _ = layout(tmp_path)
    real = work / "sub" / "real.txt"
    real.write_text("one\n")
    (work / "link.txt").symlink_to(real)
    model = lw.ScriptedModel([[use("r1", "Read", file_path="link.txt")],
                              [use("w1", "Write", file_path="link.txt", content="two\n")],
                              [use("w2", "Write", file_path="a/b/new.txt", content="new\n")], [text("done")]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=str(work), permission_mode="acceptEdits"))
    assert not first_tool_result(r, 4).get("is_error") and not first_tool_result(r, 6).get("is_error")
    assert (work / "link.txt").is_symlink() and real.read_text() == "two\n"
    assert (work / "a" / "b" / "new.txt").read_text() == "new\n"


def test_a_second_judgment_of_the_same_path_does_not_cover_the_first(tmp_path: Path) -> None:
    """Two Reads of one path in one turn are judged in turn, then run side by side. The first is
    approved (inside); while it is asked about, work/sub becomes a link to outside/, so the
    second is judged outside and refused by blockReadsOutsideWorkingDirectories. The first must
    not then read outside: the later judgment does not stand in for the one it was approved on."""
    work, outside = layout(tmp_path)
    (work / "sub" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("SECRET\n")
    blocked_outside(work, "Read")
    asked: list[str] = []

    def answer(name: str, tool_input: dict[str, Any]) -> lw.Allow:
        asked.append(name)
        swap_to_link(work / "sub", outside)
        return lw.Allow()

    model = lw.ScriptedModel([[use("r1", "Read", file_path="sub/f.txt"), use("r2", "Read", file_path="sub/f.txt")],
                              [text("done")]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=str(work), permission_mode="default",
                                     can_use_tool=answer, setting_sources=["project"]))
    assert asked == ["Read"]  # the second was refused before anyone was asked
    results = r.messages[2]["content"]
    assert all(b.get("is_error") for b in results) and "SECRET" not in json.dumps(results), results


@pytest.mark.parametrize("tool", ["Grep", "Glob", "Glob-prefix"])
def test_a_search_judged_inside_does_not_run_through_a_link_swapped_since(tmp_path: Path, tool: str) -> None:
    """Grep and Glob are judged by their path as Read is (Glob: its pattern's literal directory
    too): one judged inside, whose directory becomes a link to outside/ while another call of the
    turn is asked about, must not then search outside/ (blockReadsOutsideWorkingDirectories would
    have refused it there)."""
    work, outside = layout(tmp_path)
    (work / "sub" / "f.txt").write_text("inside\n")
    (outside / "SECRET-NAME.txt").write_text("SECRET\n")
    (work / "other.txt").write_text("other\n")
    blocked_outside(work, "Read")

    def answer(name: str, tool_input: dict[str, Any]) -> lw.Allow:
        if name == "Read":  # (a Read rule covers the searches too: the search is asked first, unswapped)
            swap_to_link(work / "sub", outside)
        return lw.Allow()

    search = {"Grep": {"path": "sub", "pattern": "SECRET", "output_mode": "content"},
              "Glob": {"path": "sub", "pattern": "*"}, "Glob-prefix": {"pattern": "sub/*"}}[tool]
    model = lw.ScriptedModel([[use("s1", tool.split("-")[0], search), use("r1", "Read", file_path="other.txt")], [text("done")]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=str(work), permission_mode="default",
                                     can_use_tool=answer, setting_sources=["project"]))
    results = r.messages[2]["content"]
    assert "SECRET" not in json.dumps(results), results
    assert results[0].get("is_error") and "changed in between" in result_text(results[0]), results


def test_one_tools_run_does_not_take_another_tools_judgment_of_the_same_path(tmp_path: Path) -> None:
    """A Grep and a Read of one path in a turn: the Grep (judged inside) runs first; the Read,
    approved while work/sub became a link to outside/, must still be checked against its own
    judgment when it runs, not find it taken by the Grep's run."""
    work, outside = layout(tmp_path)
    (work / "sub" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("SECRET\n")
    blocked_outside(work, "Read")

    def answer(name: str, tool_input: dict[str, Any]) -> lw.Allow:
        if name == "Read":
            swap_to_link(work / "sub", outside)
        return lw.Allow()

    model = lw.ScriptedModel([[use("g1", "Grep", path="sub/f.txt", pattern="nothing-matches-this"),
                               use("r1", "Read", file_path="sub/f.txt")], [text("done")]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=str(work), permission_mode="default",
                                     can_use_tool=answer, setting_sources=["project"]))
    results = r.messages[2]["content"]
    assert "SECRET" not in json.dumps(results), results
    assert results[1].get("is_error"), results


def test_a_denied_reads_judgment_does_not_refuse_a_later_read(tmp_path: Path) -> None:
    """A Read refused (blockReadsOutsideWorkingDirectories: link.txt led outside) leaves no
    judgment behind: once link.txt is a file of the workspace, a later Read of it reads it, not
    'link.txt now names ..., not outside/f.txt as when its permission was checked'."""
    work, outside = layout(tmp_path)
    (outside / "f.txt").write_text("SECRET\n")
    (work / "link.txt").symlink_to(outside / "f.txt")
    blocked_outside(work, "WebFetch")
    model = lw.ScriptedModel([[use("r1", "Read", file_path="link.txt")],
                              [use("b1", "Bash", command="rm link.txt && echo inside-now > link.txt")],
                              [use("r2", "Read", file_path="link.txt")], [text("done")]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=str(work), permission_mode="default",
                                     can_use_tool=lambda name, x: lw.Allow(), setting_sources=["project"]))
    assert first_tool_result(r, 2).get("is_error"), r.messages[2]  # refused outside
    second = first_tool_result(r, 6)
    assert not second.get("is_error") and "inside-now" in result_text(second), second


def test_each_read_of_a_path_in_a_turn_is_checked_when_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two Reads of one path, both judged inside, run side by side: work/sub becomes a link to
    outside/ once the first has resolved. The second must be checked against its own judgment
    (the first's run took only its own), not read outside/'s SECRET unchecked."""
    work, outside = layout(tmp_path)
    (work / "sub" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("SECRET\n")
    planted: list[bool] = []

    def plant() -> None:
        if not planted:
            planted.append(True)
            swap_to_link(work / "sub", outside)

    planted_after_resolve(monkeypatch, read, plant)
    model = lw.ScriptedModel([[use("r1", "Read", file_path="sub/f.txt"), use("r2", "Read", file_path="sub/f.txt")],
                              [text("done")]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=str(work), permission_mode="default"))
    assert planted
    results = r.messages[2]["content"]
    assert "SECRET" not in json.dumps(results), results
