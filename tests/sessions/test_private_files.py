"""Private by default on disk (issue 40, item 8): what loopwright writes — its home, transcripts,
file snapshots, the trust store, settings it saves, a session's page, batch results — is the
user's only (0700 directories, 0600 files), whatever the umask says, and what an older version
left readable is tightened when it is next used. Each check runs the real CLI (or the library)
in a subprocess with the umask set, on real files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.sessions import cwd_slug
from tests.helpers import cli_env, loopwright_cmd, write_script

pytestmark = pytest.mark.e2e  # (the CLI and python as subprocesses)


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def with_umask(umask: int, argv: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """argv run with `umask` (set in the child before exec: the umask the user's shell has)."""
    return subprocess.run(argv, cwd=cwd, env=cli_env(LOOPWRIGHT_HOME=str(home), HOME=str(home.parent)),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: os.umask(umask) and None)


def everything_under(root: Path) -> list[Path]:
    return [root, *root.rglob("*")]


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o000])
def test_a_run_writes_its_home_transcript_and_snapshots_private(tmp_path: Path, umask: int) -> None:
    home = tmp_path / "u" / ".loopwright"
    work = tmp_path / "work"
    work.mkdir()
    secret = work / ".env"
    secret.write_text("API_KEY=old\n")
    secret.chmod(0o600)
    model = write_script(tmp_path, [
        [{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": str(secret)}}],
        [{"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": str(secret), "content": "API_KEY=new\n"}}],
        [{"type": "text", "text": "done"}]])
    r = with_umask(umask, [*loopwright_cmd(), "-p", "rotate the key", "--model", model, "--output-format", "json",
                           "--permission-mode", "acceptEdits"], work, home)
    assert r.returncode == 0, r.stderr
    assert secret.read_text() == "API_KEY=new\n"
    sid = json.loads(r.stdout)["session_id"]
    transcript = home / "projects" / cwd_slug(work) / f"{sid}.jsonl"
    snapshots = transcript.with_suffix(".files")
    assert transcript.is_file() and (snapshots / "index.jsonl").is_file()
    assert b"API_KEY=old" in b"".join(p.read_bytes() for p in (snapshots / "blobs").iterdir())
    for p in everything_under(home):
        want = 0o700 if p.is_dir() else 0o600
        assert mode(p) == want, f"{p.relative_to(home)}: {oct(mode(p))} (umask {oct(umask)})"


def test_older_readable_files_are_tightened_when_used(tmp_path: Path) -> None:
    home = tmp_path / "u" / ".loopwright"
    work = tmp_path / "work"
    work.mkdir()
    model = write_script(tmp_path, [[{"type": "text", "text": "one"}], [{"type": "text", "text": "two"}]])
    first = with_umask(0o022, [*loopwright_cmd(), "-p", "hi", "--model", model, "--output-format", "json"], work, home)
    sid = json.loads(first.stdout)["session_id"]
    transcript = home / "projects" / cwd_slug(work) / f"{sid}.jsonl"
    for p in everything_under(home):  # as an older loopwright left them
        p.chmod(0o755 if p.is_dir() else 0o644)
    again = with_umask(0o022, [*loopwright_cmd(), "-p", "again", "--model", model, "--output-format", "json",
                               "--resume", sid], work, home)
    assert again.returncode == 0, again.stderr
    assert mode(home) == 0o700 and mode(home / "projects") == 0o700 and mode(transcript.parent) == 0o700
    assert mode(transcript) == 0o600


LIBRARY_WRITES = """
import sys
from pathlib import Path
from loopwright.trust.store import trust_dir
from loopwright.settings import add_local_allow_rules
trust_dir(sys.argv[1])
print(add_local_allow_rules(sys.argv[1], ["Bash(ls:*)"]))
"""


def test_trust_store_and_saved_rules_are_private(tmp_path: Path) -> None:
    home = tmp_path / "u" / ".loopwright"
    work = tmp_path / "work"
    work.mkdir()
    home.mkdir(parents=True, mode=0o755)  # as an older loopwright left it: tightened when next written
    home.chmod(0o755)
    r = with_umask(0o022, [sys.executable, "-c", LIBRARY_WRITES, str(work)], work, home)
    assert r.returncode == 0, r.stderr
    saved = Path(r.stdout.strip())
    trust_files = [p for p in home.rglob("*") if p.is_file()]
    assert trust_files, "the trust store was not written"
    for p in [*trust_files, saved]:
        assert mode(p) == 0o600, f"{p}: {oct(mode(p))}"
    assert mode(home) == 0o700


def test_a_sessions_page_and_batch_results_are_private(tmp_path: Path) -> None:
    home = tmp_path / "u" / ".loopwright"
    work = tmp_path / "work"
    work.mkdir()
    model = write_script(tmp_path, [[{"type": "text", "text": "ok"}]] * 3)
    r = with_umask(0o022, [*loopwright_cmd(), "-p", "hi", "--model", model, "--output-format", "json"], work, home)
    page = tmp_path / "page.html"
    v = with_umask(0o022, [*loopwright_cmd(), "view", json.loads(r.stdout)["session_id"], "-o", str(page)], work, home)
    assert v.returncode == 0, v.stderr
    assert mode(page) == 0o600
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "a", "prompt": "hi"}) + "\n")
    results = tmp_path / "out" / "results.jsonl"
    b = with_umask(0o022, [*loopwright_cmd(), "batch", str(tasks), "-o", str(results), "--model", model,
                           "--isolate", "copy"], work, home)
    assert b.returncode == 0, b.stderr
    assert mode(results) == 0o600 and mode(results.parent) == 0o700
    copies = results.with_suffix(".work") / "workspaces"
    assert any(copies.iterdir()) and mode(copies) == 0o700  # the project's copies: the user's only


def test_the_helpers_under_an_odd_umask_and_a_file_in_the_way(tmp_path: Path) -> None:
    from loopwright.home import open_private, private_dir, write_private

    old = os.umask(0o277)  # a umask that takes even the owner's write bit
    try:
        f = write_private(tmp_path / "a" / "b" / "f.json", "{}")
        fd = open_private(tmp_path / "a" / "log")
        os.close(fd)
    finally:
        os.umask(old)
    assert mode(f) == 0o600 and f.read_text() == "{}" and mode(tmp_path / "a" / "log") == 0o600
    assert mode(tmp_path / "a") == 0o700 and mode(tmp_path / "a" / "b") == 0o700
    older = tmp_path / "older.jsonl"
    older.write_text("x\n")
    older.chmod(0o644)
    os.close(open_private(older))
    assert mode(older) == 0o600 and older.read_text() == "x\n"  # tightened, kept
    in_the_way = tmp_path / "file"
    in_the_way.write_text("")
    in_the_way.chmod(0o644)
    with pytest.raises(FileExistsError):
        private_dir(in_the_way / "sub")
    assert mode(in_the_way) == 0o644  # not ours to change
