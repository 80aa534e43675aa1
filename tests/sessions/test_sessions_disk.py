"""Sessions on disk under stress (issue 9, items 8, 11, 12): two processes resuming one
session, a transcript that cannot be written (a full file system, a file size limit), and
transcripts with malformed lines. The CLI runs as real processes on real files; the full
disk is a real tmpfs of a few pages (mounting needs root: the test skips otherwise)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopwright.cli.sessions import sessions_main
from loopwright.invariant import holds, holds_final
from loopwright.sessions import (
    cwd_slug,
    load_transcript,
    read_lines,
    session_info,
    sessions_root,
)
from tests.helpers import cli_env, loopwright_cmd

pytest.importorskip("loopwright.tools.builtin", reason="the -p CLI needs the built-in tools")

def env_for(home: Path) -> dict[str, str]:
    return cli_env(LOOPWRIGHT_HOME=str(home))


def scripted(tmp: Path, name: str, turns: list[Any]) -> str:
    f = tmp / f"{name}.json"
    f.write_text(json.dumps(turns))
    return f"scripted:{f}"


def text(s: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": s}]


def run_cli(home: Path, work: Path, *args: str, preexec: Any = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), "--output-format", "json", *args], cwd=work, env=env_for(home),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          preexec_fn=preexec)


def transcript(home: Path, work: Path, sid: str) -> Path:
    return home / "projects" / cwd_slug(work) / f"{sid}.jsonl"


def chained(path: Path) -> bool:
    """Each line continues the one before it: no run appended after lines it had not read."""
    lines = read_lines(path)
    return all(b.get("parentUuid") == a.get("uuid") for a, b in zip(lines, lines[1:], strict=False))


def prompts(path: Path) -> list[str]:
    return [ln["message"]["content"][0]["text"] for ln in read_lines(path) if ln.get("isPrompt")]


# --- item 8: two processes resuming one session -------------------------------------------------

# Process B: the CLI, paused right after it loaded the session (until the test says go), so
# that another process can act exactly in the window between loading and appending.
PAUSED_CLI = """
import pathlib, sys, time
import loopwright.sessions.repair as s  # where the store looks it up (at each load)
real = s.load_transcript
def paused(path):
    out = real(path)
    pathlib.Path(sys.argv[1]).write_text("loaded")
    while not pathlib.Path(sys.argv[2]).exists():
        time.sleep(0.01)
    return out
s.load_transcript = paused
from loopwright.cli import main
sys.exit(main(sys.argv[3:]))
"""


def wait_for_file(p: Path, proc: subprocess.Popen[str]) -> None:
    end = time.monotonic() + 30
    while not p.exists():
        if proc.poll() is not None:
            raise AssertionError(f"process ended early: {proc.communicate()}")
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {p}")
        time.sleep(0.01)


@pytest.mark.e2e
def test_resume_takes_the_lock_before_loading(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    m = scripted(tmp_path, "m", [text("reply")])
    first = run_cli(home, work, "-p", "one", "--model", m)
    assert first.returncode == 0, first.stderr
    sid = json.loads(first.stdout)["session_id"]
    path = transcript(home, work, sid)

    loaded, go = tmp_path / "loaded", tmp_path / "go"
    b = subprocess.Popen([sys.executable, "-c", PAUSED_CLI, str(loaded), str(go), "--output-format", "json",
                          "-p", "B", "--model", m, "--resume", sid], cwd=work, env=env_for(home),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_file(loaded, b)
        # B has read the session and not appended yet. A second resume must not load it now:
        a = run_cli(home, work, "-p", "A", "--model", m, "--resume", sid)
        assert a.returncode == 2, (a.stdout, a.stderr)
        assert "in use" in a.stderr and "--fork-session" in a.stderr and "Traceback" not in a.stderr
        # ... while a fork of it works, and leaves the original to B
        c = run_cli(home, work, "-p", "C", "--model", m, "--resume", sid, "--fork-session")
        assert c.returncode == 0, c.stderr
        fid = json.loads(c.stdout)["session_id"]
        assert fid != sid and prompts(transcript(home, work, fid)) == ["one", "C"]
    finally:
        go.write_text("go")
        out, err = b.communicate(timeout=60)
    assert b.returncode == 0, err
    assert prompts(path) == ["one", "B"] and chained(path)
    assert holds_final(load_transcript(path).history)


@pytest.mark.e2e
def test_two_resumes_at_once_never_interleave(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    m = scripted(tmp_path, "m", [text("reply")])
    first = run_cli(home, work, "-p", "zero", "--model", m)
    sid = json.loads(first.stdout)["session_id"]
    path = transcript(home, work, sid)
    for rnd in range(3):
        procs = [subprocess.Popen([*loopwright_cmd(), "--output-format", "json", "-p", f"r{rnd}p{i}", "--model", m,
                                   "--resume", sid], cwd=work, env=env_for(home), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
        for p in procs:
            _, err = p.communicate(timeout=60)
            assert p.returncode == 0 or (p.returncode == 2 and "in use" in err), err
    assert chained(path)
    assert holds_final(load_transcript(path).history)


# --- item 11: the transcript cannot be written ----------------------------------------------------

@contextlib.contextmanager
def small_fs(where: Path, size: str = "128k") -> Iterator[Path]:
    """A real tmpfs of a few pages (root only)."""
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {r.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(fs: Path, leave: int = 0) -> Path:
    """Fill a file system up, then give back `leave` bytes. Returns the filler (delete it to free)."""
    filler = fs / "filler"
    with open(filler, "wb", buffering=0) as f:
        with contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * 4096)
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


@pytest.mark.e2e
def test_a_full_disk_ends_the_run_cleanly_and_continue_works_after(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = tmp_path / "tool-ran"
    with small_fs(tmp_path / "fs") as fs:
        home = fs / "home"
        m = scripted(tmp_path, "m", [text("first reply")])
        first = run_cli(home, work, "-p", "one", "--model", m)
        assert first.returncode == 0, first.stderr
        sid = json.loads(first.stdout)["session_id"]
        path = transcript(home, work, sid)

        # Full before the run starts: a line fails at once (or after the rest of a page).
        filler = fill(fs)
        before = path.read_bytes()
        full = run_cli(home, work, "-p", "two", "--model", m, "--continue")
        assert full.returncode == 1, (full.stdout, full.stderr)
        res = json.loads(full.stdout)
        assert res["is_error"] and res["subtype"] == "error_during_execution"
        assert "No space left on device" in res["result"] and "ENOSPC" in res["result"]
        assert "Traceback" not in full.stderr
        assert path.read_bytes().startswith(before) and path.read_bytes().endswith(b"\n")
        assert load_transcript(path).repaired == []

        # Room for the small lines, not for the big assistant message (with a tool call): the run
        # ends there, the tool never runs (its call is not on disk), no torn line is left.
        filler.unlink()
        filler = fill(fs, leave=4096)
        big = [{"type": "text", "text": "x" * 20_000},
               {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": f"touch {marker}"}}]
        m2 = scripted(tmp_path, "m2", [big, text("done")])
        mid = run_cli(home, work, "-p", "three", "--model", m2, "--continue")
        assert mid.returncode == 1, (mid.stdout, mid.stderr)
        res = json.loads(mid.stdout)
        assert res["is_error"] and "No space left on device" in res["result"] and res["session_id"] == sid
        assert not marker.exists()
        assert path.read_bytes().endswith(b"\n") and len(path.read_bytes()) > len(before)
        loaded = load_transcript(path)
        assert loaded.repaired == [] and holds_final(loaded.history)

        filler.unlink()  # space again: the same session goes on
        again = run_cli(home, work, "-p", "four", "--model", m, "--continue")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["session_id"] == sid
        assert prompts(path)[0] == "one" and prompts(path)[-2:] == ["three", "four"] and chained(path)
        assert holds_final(load_transcript(path).history)


@pytest.mark.e2e
def test_a_file_size_limit_ends_the_run_cleanly(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    m = scripted(tmp_path, "m", [text("first reply")])
    first = run_cli(home, work, "-p", "one", "--model", m)
    sid = json.loads(first.stdout)["session_id"]
    path = transcript(home, work, sid)
    limit = len(path.read_bytes()) + 2000  # room for the init and prompt lines, not the reply

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    m2 = scripted(tmp_path, "m2", [text("y" * 10_000)])
    res = run_cli(home, work, "-p", "two", "--model", m2, "--resume", sid, preexec=small_files)
    assert res.returncode == 1, (res.stdout, res.stderr)
    out = json.loads(res.stdout)
    assert out["is_error"] and "EFBIG" in out["result"] and "Traceback" not in res.stderr
    assert path.read_bytes().endswith(b"\n") and load_transcript(path).repaired == []
    size = len(path.read_bytes())

    def no_growth() -> None:  # not even the run's first line fits
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    res = run_cli(home, work, "-p", "lost", "--model", m, "--resume", sid, preexec=no_growth)
    assert res.returncode == 1, (res.stdout, res.stderr)
    out = json.loads(res.stdout)
    assert out["is_error"] and "EFBIG" in out["result"] and out["session_id"] == sid and "Traceback" not in res.stderr
    assert len(path.read_bytes()) == size
    again = run_cli(home, work, "-p", "three", "--model", m, "--resume", sid)
    assert again.returncode == 0, again.stderr
    assert prompts(path) == ["one", "two", "three"] and chained(path)


# --- item 12: malformed lines ----------------------------------------------------------------------

def _good_lines(tmp_path: Path) -> list[str]:
    """A real transcript: two prompts, two tool calls, a compaction-free history."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir(exist_ok=True)
    turns = [[{"type": "text", "text": "look"},
              {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo 1"}}],
             [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "echo 2"}}],
             text("done")]
    m = scripted(tmp_path, "good", turns)
    r = run_cli(home, work, "-p", "one", "--model", m)
    assert r.returncode == 0, r.stderr
    path = transcript(home, work, json.loads(r.stdout)["session_id"])
    return path.read_text().splitlines()


@pytest.fixture(scope="module")
def good_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _good_lines(tmp_path_factory.mktemp("good"))


def _tool_ids(h: list[dict[str, Any]]) -> list[str]:
    return [b["id"] for m in h if m["role"] == "assistant" for b in m["content"] if b.get("type") == "tool_use"]


def check_loads(path: Path) -> list[str]:
    """What every corrupt transcript must allow: a load (no exception), a history that satisfies
    Inv with unique tool ids and well-formed blocks, a summary and `sessions show`."""
    loaded = load_transcript(path)
    ids = _tool_ids(loaded.history)
    resumed = [*loaded.history, {"role": "user", "content": [{"type": "text", "text": "go on"}]}]
    assert holds(resumed) and len(ids) == len(set(ids))  # what a resume sends the model
    session_info(path)
    return loaded.repaired


def corrupt(lines: list[str], line: int, how: str) -> list[str]:
    out = list(lines)
    try:
        obj = json.loads(out[line])
    except ValueError:  # corrupt already
        obj = {}
    obj = obj if isinstance(obj, dict) else {}
    if how == "garbage":
        out[line] = "}{ not json \x00"
    elif how == "duplicate":
        out.insert(line, out[line])
    elif how == "drop":
        del out[line]
    elif how == "no_id":
        msg = obj.get("message")
        for b in (msg.get("content") or [] if isinstance(msg, dict) else []):
            if isinstance(b, dict):
                b.pop("id", None)
                b.pop("tool_use_id", None)
        out[line] = json.dumps(obj)
    elif how == "bad_compact":
        out.insert(line, json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": "c",
                                     "data": {"messages": [{"role": "assistant", "content": 7}, "x", None]}}))
    elif how == "compact_not_object":
        out.insert(line, json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": "c2", "data": [1]}))
    elif how == "message_not_object":
        obj["message"] = ["not", "an", "object"]
        out[line] = json.dumps(obj)
    elif how == "bad_blocks":
        obj["message"] = {"role": obj.get("type"), "content": [{"type": "tool_use", "id": 5},
                                                               {"type": "text"}, 3, {"no": "type"}]}
        out[line] = json.dumps(obj)
    elif how == "wrong_types":
        obj.update({"uuid": ["x"], "toUuid": {"a": 1}, "type": "rewind", "dropUuid": [1]})
        out[line] = json.dumps(obj)
    return out


HOWS = ["garbage", "duplicate", "drop", "no_id", "bad_compact", "compact_not_object", "message_not_object",
        "bad_blocks", "wrong_types"]


def test_a_tool_use_without_an_id_is_repaired_and_reported(tmp_path: Path, good_lines: list[str]) -> None:
    at = next(i for i, ln in enumerate(good_lines) if '"tool_use"' in ln)
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(corrupt(good_lines, at, "no_id")) + "\n")
    notes = check_loads(p)
    assert any("malformed tool_use" in n for n in notes), notes


def test_garbage_a_torn_line_and_a_bad_compact_boundary_are_reported(tmp_path: Path, good_lines: list[str]) -> None:
    p = tmp_path / "s.jsonl"
    lines = corrupt(corrupt(good_lines, 3, "garbage"), 5, "compact_not_object")
    p.write_text("\n".join(lines) + "\n" + good_lines[-1][: len(good_lines[-1]) // 2])
    notes = check_loads(p)
    assert any("not JSON objects (line 4)" in n for n in notes), notes
    assert any("torn last line" in n for n in notes), notes
    assert any("compact_boundary" in n for n in notes), notes


def test_a_duplicated_line_never_repeats_a_tool_id(tmp_path: Path, good_lines: list[str]) -> None:
    for i, ln in enumerate(good_lines):
        if '"tool_use"' in ln or '"tool_result"' in ln:
            p = tmp_path / f"s{i}.jsonl"
            p.write_text("\n".join(corrupt(good_lines, i, "duplicate")) + "\n")
            notes = check_loads(p)
            assert any("repeated line" in n for n in notes), notes
            assert len(_tool_ids(load_transcript(p).history)) == 2


def test_a_repeated_tool_id_on_another_line_is_dropped(tmp_path: Path, good_lines: list[str]) -> None:
    lines = list(good_lines)
    at = next(i for i, ln in enumerate(lines) if '"tool_use"' in ln)
    copy = json.loads(lines[at])
    copy["uuid"] = "another-uuid"  # the same assistant message, not the same line
    lines.insert(at + 2, json.dumps(copy))
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n")
    notes = check_loads(p)
    assert any("repeated tool_use" in n for n in notes), notes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 1000), st.sampled_from(HOWS)), min_size=1, max_size=4),
       st.integers(0, 200))
def test_any_corruption_loads_repaired(tmp_path: Path, good_lines: list[str],
                                       cuts: list[tuple[int, str]], tear: int) -> None:
    lines = list(good_lines)
    for at, how in cuts:
        if lines:
            lines = corrupt(lines, at % len(lines), how)
    body = "\n".join(lines) + "\n"
    body = body[: max(0, len(body) - tear)]  # a crash may cut the end anywhere
    p = sessions_root() / "corrupt" / "corrupt-session.jsonl"  # where `sessions show` finds it
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(body)
    check_loads(p)
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        assert sessions_main(["show", "corrupt-session"]) == 0
