"""Checkpoints and rewind, on real files with the real Read/Write/Edit/Bash tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.cli.rewind import rewind_main
from loopwright.sessions import cwd_slug, get_session_messages, read_lines
from loopwright.sessions.checkpoints import FileHistory
from loopwright.sessions.rewind import (
    MAX_DIFF_BYTES,
    NOT_TRACKED,
    rewind,
    rewind_conflicts,
    rewind_points,
)
from loopwright.tools.builtin import (
    make_bash_tools,
    make_edit_tool,
    make_read_tool,
    make_write_tool,
)
from tests.helpers import text, use


def tools() -> list[lw.Tool]:
    return [make_read_tool(), make_write_tool(), make_edit_tool(), *make_bash_tools()]


def opts(tmp: Path, turns: list[Any], **kw: Any) -> lw.AgentOptions:
    return lw.AgentOptions(model=lw.ScriptedModel(turns), tools=tools(), cwd=tmp / "work",
                           sessions_dir=tmp / "sessions", persist_session=True,
                           permission_mode="bypassPermissions", **kw)


@pytest.fixture()
def project(tmp_path: Path) -> dict[str, Any]:
    """Two runs of one session that edit, create and overwrite files, and run a Bash command."""
    w = tmp_path / "work"
    w.mkdir()
    a, b = w / "a.txt", w / "b.txt"
    a.write_text("original a\n")
    b.write_text("original b\n")
    b.chmod(0o640)
    c, d, made = w / "c.txt", w / "sub" / "new.txt", w / "bash_made.txt"
    r1 = lw.run("first", opts(tmp_path, [
        [use("r1", "Read", file_path=str(a))],
        [use("e1", "Edit", file_path=str(a), old_string="original", new_string="changed")],
        [use("w1", "Write", file_path=str(c), content="created in turn 1\n")],
        [text("turn 1 done")],
    ]))
    assert r1.subtype == "success", r1.messages
    r2 = lw.run("second", opts(tmp_path, [
        [use("r2", "Read", file_path=str(b)), use("r3", "Read", file_path=str(a))],
        [use("w2", "Write", file_path=str(b), content="rewritten b\n")],
        [use("e2", "Edit", file_path=str(a), old_string="changed", new_string="changed twice")],
        [use("e3", "Edit", file_path=str(a), old_string="twice", new_string="thrice")],
        [use("w3", "Write", file_path=str(d), content="new in turn 2\n")],
        [use("b1", "Bash", command=f"echo hi > {made}")],
        [text("turn 2 done")],
    ], resume=r1.session_id))
    assert r2.subtype == "success", r2.messages
    assert a.read_text() == "changed thrice a\n" and b.read_text() == "rewritten b\n"
    assert c.exists() and d.exists() and made.exists()
    points = rewind_points(r1.session_id, tmp_path / "sessions")
    assert [p.prompt for p in points] == ["first", "second"]
    return {"sid": r1.session_id, "points": points, "a": a, "b": b, "c": c, "d": d, "made": made,
            "sessions": tmp_path / "sessions", "tmp": tmp_path, "r1": r1, "r2": r2}


def test_snapshots_are_keyed_to_the_turns_prompt(project: dict[str, Any]) -> None:
    p1, p2 = project["points"]
    assert p1.files == sorted([str(project["a"]), str(project["c"])])
    assert p2.files == sorted([str(project["a"]), str(project["b"]), str(project["d"])])
    # what a rewind to each point would leave in place: every Bash command run since it
    assert p2.bash_commands == p1.bash_commands == [f"echo hi > {project['made']}"]


def test_rewind_files_to_the_second_prompt(project: dict[str, Any]) -> None:
    _, p2 = project["points"]
    report = lw.rewind_files(project["sid"], p2.uuid, project["sessions"])
    assert project["a"].read_text() == "changed a\n"  # the state before turn 2, not before its last edit
    assert project["b"].read_text() == "original b\n" and project["b"].stat().st_mode & 0o777 == 0o640
    assert not project["d"].exists()
    assert not project["d"].parent.exists()  # the directory Write created for it goes too
    assert project["c"].read_text() == "created in turn 1\n"  # turn 1's work is kept
    assert project["made"].exists()  # Bash effects are not undone ...
    assert sorted(report.restored) == sorted([str(project["a"]), str(project["b"])])
    assert report.deleted == [str(project["d"])]
    out = report.text()
    assert NOT_TRACKED in out and f"$ echo hi > {project['made']}" in out  # ... and the report says so


def test_rewind_files_to_the_first_prompt(project: dict[str, Any]) -> None:
    p1, _ = project["points"]
    report = lw.rewind_files(project["sid"], p1.uuid, project["sessions"])
    assert project["a"].read_text() == "original a\n" and project["b"].read_text() == "original b\n"
    assert not project["c"].exists() and not project["d"].exists()
    assert sorted(report.deleted) == sorted([str(project["c"]), str(project["d"])])
    again = lw.rewind_files(project["sid"], p1.uuid, project["sessions"])  # idempotent
    assert again.restored == [] and again.deleted == []


def test_rewind_conversation_in_place_then_resume(project: dict[str, Any]) -> None:
    _, p2 = project["points"]
    path = project["sessions"] / cwd_slug(project["tmp"] / "work") / f"{project['sid']}.jsonl"
    before = path.read_bytes()
    report = rewind(project["sid"], p2.uuid, code=False, sessions_dir=project["sessions"])
    assert project["a"].read_text() == "changed thrice a\n"  # conversation only: files untouched
    assert path.read_bytes().startswith(before)  # still append-only
    assert read_lines(path)[-1]["type"] == "rewind" and report.conversation
    assert get_session_messages(project["sid"], project["sessions"]) == project["r1"].messages
    r3 = lw.run("instead", opts(project["tmp"], [[text("ok")]], resume=project["sid"]))
    assert r3.messages[:len(project["r1"].messages)] == project["r1"].messages
    assert r3.messages[len(project["r1"].messages)] == {"role": "user", "content": [text("instead")]}


def test_rewind_as_fork_leaves_the_original(project: dict[str, Any]) -> None:
    _, p2 = project["points"]
    path = project["sessions"] / cwd_slug(project["tmp"] / "work") / f"{project['sid']}.jsonl"
    before = path.read_bytes()
    report = rewind(project["sid"], p2.uuid, fork=True, sessions_dir=project["sessions"])
    assert path.read_bytes() == before
    assert report.new_session_id and report.new_session_id != project["sid"]
    assert get_session_messages(report.new_session_id, project["sessions"]) == project["r1"].messages
    assert project["b"].read_text() == "original b\n"


def test_rewind_cli(project: dict[str, Any], capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOPWRIGHT_SESSIONS_DIR", str(project["sessions"]))
    monkeypatch.chdir(project["tmp"] / "work")
    assert rewind_main([project["sid"], "--list"]) == 0
    listing = capsys.readouterr().out
    assert project["points"][0].uuid in listing and "'second'" in listing
    assert rewind_main([project["sid"], "--code-only"]) == 0  # default: the latest prompt
    out = capsys.readouterr().out
    assert "restored" in out and "not tracked" in out and "echo hi" in out
    assert project["b"].read_text() == "original b\n"
    assert len(get_session_messages(project["sid"])) == len(project["r2"].messages)  # conversation kept
    assert rewind_main([project["sid"], "--to", project["points"][0].uuid, "--conversation-only"]) == 0
    capsys.readouterr()
    assert get_session_messages(project["sid"]) == []
    assert project["c"].exists()  # code untouched by --conversation-only
    assert rewind_main([project["sid"], "--to", "no-such-uuid"]) == 1
    assert "no user prompt" in capsys.readouterr().err


def test_file_history_snapshots_once_per_turn(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("v1")
    fh = FileHistory(tmp_path / "hist")
    fh.snapshot(f, "p1")
    f.write_text("v2")
    fh.snapshot(f, "p1")  # a second change in the same turn keeps the first snapshot
    fh.snapshot(tmp_path / "absent.txt", "p1")
    recs = fh.records()
    assert len(recs) == 2 and recs[0]["existed"] and recs[1]["existed"] is False
    assert (tmp_path / "hist" / "blobs" / recs[0]["blob"]).read_text() == "v1"
    assert json.loads((tmp_path / "hist" / "index.jsonl").read_text().splitlines()[0])["promptUuid"] == "p1"


def test_no_snapshots_without_persistence(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    o = opts(tmp_path, [[use("w", "Write", file_path=str(tmp_path / "work" / "n.txt"), content="x")],
                        [text("ok")]])
    o.persist_session = False
    assert lw.run("go", o).subtype == "success" and not (tmp_path / "sessions").exists()


def test_a_fork_keeps_the_snapshots(project: dict[str, Any]) -> None:
    fork = lw.run("branch", opts(project["tmp"], [[text("ok")]], resume=project["sid"], fork_session=True))
    assert fork.session_id != project["sid"]
    _, p2 = rewind_points(fork.session_id, project["sessions"])[:2]
    report = lw.rewind_files(fork.session_id, p2.uuid, project["sessions"])
    assert project["b"].read_text() == "original b\n" and report.deleted == [str(project["d"])]


def test_rewind_keeps_a_created_directory_that_holds_other_files(tmp_path: Path) -> None:
    w = tmp_path / "work"
    w.mkdir()
    new = w / "pkg" / "deep" / "mod.py"
    r = lw.run("make it", opts(tmp_path, [
        [use("w1", "Write", file_path=str(new), content="x = 1\n")],
        [use("b1", "Bash", command=f"echo notes > {w / 'pkg' / 'NOTES'}")],
        [text("done")],
    ]))
    assert r.subtype == "success", r.messages
    (p1,) = rewind_points(r.session_id, tmp_path / "sessions")
    report = lw.rewind_files(r.session_id, p1.uuid, tmp_path / "sessions")
    assert report.deleted == [str(new)]
    assert not (w / "pkg" / "deep").exists()  # created for the file, now empty: removed
    assert (w / "pkg" / "NOTES").read_text() == "notes\n"  # Bash's file keeps its directory


def test_a_rewind_never_writes_through_a_link_made_since(project: dict[str, Any]) -> None:
    """After the turn, b.txt was replaced by a link to a file outside the workspace (a command of
    the agent's can do it) and sub/ by a link to an outside folder: the rewind wrote b.txt's old
    bytes (and mode) into the link's target, and deleted the created sub/new.txt through the link
    (the outside file of that name). A restored file is the file as it was, a regular file at its
    own path: the link is replaced, never followed; a file whose folder now leads elsewhere is
    neither restored nor deleted, and the report says so."""
    _, p2 = project["points"]
    outside = project["tmp"] / "outside"
    (outside / "dir").mkdir(parents=True)
    secret = outside / "authorized_keys"
    secret.write_text("keep me\n")
    secret.chmod(0o600)
    b = project["b"]
    b.unlink()
    b.symlink_to(secret)
    d = project["d"]  # created in turn 2 (the rewind deletes it), its folder now a link outside
    (outside / "dir" / d.name).write_text("not the agent's\n")
    d.unlink()
    d.parent.rmdir()
    d.parent.symlink_to(outside / "dir")
    report = lw.rewind_files(project["sid"], p2.uuid, project["sessions"])
    assert secret.read_text() == "keep me\n" and secret.stat().st_mode & 0o777 == 0o600
    assert not b.is_symlink() and b.read_text() == "original b\n" and b.stat().st_mode & 0o777 == 0o640
    assert (outside / "dir" / d.name).read_text() == "not the agent's\n"  # (not deleted through the link)
    assert str(b) in report.restored and str(d) in report.skipped, report


def test_a_rewind_never_restores_into_a_folder_that_now_leads_elsewhere(tmp_path: Path) -> None:
    w = tmp_path / "work"
    (w / "sub").mkdir(parents=True)
    f = w / "sub" / "f.txt"
    f.write_text("original\n")
    r = lw.run("go", opts(tmp_path, [[use("r1", "Read", file_path=str(f))],
                                     [use("w1", "Write", file_path=str(f), content="changed\n")], [text("ok")]]))
    assert r.subtype == "success", r.errors
    (point,) = rewind_points(r.session_id, tmp_path / "sessions")
    outside = tmp_path / "outside"
    outside.mkdir()
    (w / "sub" / "f.txt").unlink()
    (w / "sub").rmdir()
    (w / "sub").symlink_to(outside)
    report = lw.rewind_files(r.session_id, point.uuid, tmp_path / "sessions")
    assert list(outside.iterdir()) == [], list(outside.iterdir())
    assert str(f) not in report.restored and str(f) in report.text(), report.text()


def test_a_rewind_leaves_what_is_no_longer_a_file_and_restores_the_rest(project: dict[str, Any]) -> None:
    """After the turn, b.txt (restored by a rewind) became a folder and sub/new.txt (deleted by it)
    a named pipe (a command of the agent's can make either). The rewind stopped at the first with
    IsADirectoryError, a.txt not restored; the pipe's read waited forever. Neither is touched now,
    the report names them, and the rest is restored."""
    import os
    import threading

    from tests.helpers import until

    _, p2 = project["points"]
    b, d = project["b"], project["d"]
    b.unlink()
    b.mkdir()
    (b / "kept").write_text("mine\n")
    d.unlink()
    os.mkfifo(d)
    got: list[Any] = []
    worker = threading.Thread(target=lambda: got.append(_rewound(project, p2.uuid)), daemon=True)
    worker.start()
    if not until(lambda: not worker.is_alive(), 30):
        os.close(os.open(d, os.O_WRONLY | os.O_NONBLOCK))  # (its reader gets an end of file: the thread ends)
        raise AssertionError("the rewind waited on the named pipe")
    (report,) = got
    assert not isinstance(report, BaseException), report
    assert project["a"].read_text() == "changed a\n" and str(project["a"]) in report.restored
    assert (b / "kept").read_text() == "mine\n" and d.exists()
    assert str(b) in report.skipped and str(d) in report.skipped, report
    assert f"not restored {b}: it is no longer a regular file" in report.text(), report.text()
    assert f"not deleted  {d}: it is no longer a regular file" in report.text(), report.text()


def _rewound(project: dict[str, Any], uuid: str) -> Any:
    try:
        return lw.rewind_files(project["sid"], uuid, project["sessions"])
    except Exception as e:  # noqa: BLE001 - the test names it
        return e


def test_conflicts_never_read_through_a_link_nor_a_huge_file_whole(project: dict[str, Any]) -> None:
    """After the turn, b.txt became a link to a file outside the workspace (a command of the agent's
    can make one) and a.txt a file of 50 MB: the conflicts' diffs read both whole into memory (the
    link's target, however large, shown in the diff). The link is named, not followed (the rewind
    replaces it); the big file is named with its size; sub/new.txt, edited by the user, still shows its diff."""
    outside = project["tmp"] / "outside.txt"
    outside.write_text("SECRET outside the workspace\n")
    a, b = project["a"], project["b"]
    b.unlink()
    b.symlink_to(outside)
    with open(a, "wb") as f:
        f.truncate(50 * 1024 * 1024)  # (sparse: no disk used)
    d = project["d"]
    d.write_text("the user's own\n")
    p1, _ = project["points"]
    got = {c.path: c.diff for c in rewind_conflicts(project["sid"], p1.uuid, project["sessions"])}
    assert set(got) == {str(a), str(b), str(d)}, got
    assert "SECRET" not in got[str(b)] and f"a symbolic link to {outside}" in got[str(b)], got[str(b)]
    assert f"{50 * 1024 * 1024} bytes" in got[str(a)] and len(got[str(a)]) < 1000, got[str(a)][:300]
    assert "+the user's own" in got[str(d)] and "-new in turn 2" in got[str(d)], got[str(d)]
    assert MAX_DIFF_BYTES < 50 * 1024 * 1024
