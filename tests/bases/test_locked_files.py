"""Files loopwright reads, changes and writes back, raced by real processes (home.locked): two
loopwright processes refreshing MCP tokens at once (mcp-credentials.json) or trusting
workspaces at once (trust.json) lose none of each other's changes; the file is valid JSON at
every moment and stays 0600 in a 0700 directory."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.helpers import cli_env

pytestmark = pytest.mark.e2e
N = 120  # updates per process: each rewrites the whole file, so unlocked ones lose entries

WRITER = textwrap.dedent('''
    import sys, time
    who, n, what, base = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    open(base + "/ready-" + who, "w").close()
    while not __import__("os").path.exists(base + "/go"):  # both start together
        time.sleep(0.001)
    if what == "credentials":
        from loopwright.mcp.oauth_store import update
        for i in range(n):
            update(f"srv{i % 7}|https://mcp.example/{who}", **{f"token_{i}": {"access_token": f"{who}-{i}"}})
    else:
        from loopwright.trust.store import trust_dir
        for i in range(n):
            trust_dir(f"{base}/ws/{who}-{i}")
''')


def race(tmp_path: Path, what: str, target: Path) -> list[str]:
    """Two processes change `target` N times each, a thread reading it meanwhile; what the reader
    found wrong (not JSON, not 0600)."""
    home = tmp_path / "home"
    (tmp_path / "ws").mkdir()
    for who in "ab":
        for i in range(N):
            (tmp_path / "ws" / f"{who}-{i}").mkdir()
    env = cli_env(LOOPWRIGHT_HOME=str(home), HOME=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, who, str(N), what, str(tmp_path)], env=env)
             for who in "ab"]
    problems: list[str] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            try:
                raw = target.read_text()
                mode = stat.S_IMODE(os.stat(target).st_mode)
            except FileNotFoundError:
                continue
            try:
                json.loads(raw)
            except ValueError as e:
                problems.append(f"not JSON: {e}")
            if mode != 0o600:
                problems.append(f"mode {mode:o}")

    reader = threading.Thread(target=read)
    reader.start()
    try:
        while not all((tmp_path / f"ready-{who}").exists() for who in "ab"):
            assert all(p.poll() is None for p in procs), "a writer died"
        (tmp_path / "go").touch()
        for p in procs:
            assert p.wait(timeout=120) == 0
    finally:
        done.set()
        reader.join()
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert stat.S_IMODE(os.stat(target.parent).st_mode) == 0o700
    return problems


def test_two_processes_refreshing_tokens_lose_nothing(tmp_path: Path) -> None:
    target = tmp_path / "home" / "mcp-credentials.json"
    problems = race(tmp_path, "credentials", target)
    assert problems == []
    data = json.loads(target.read_text())
    for who in "ab":
        got = {k for s in range(7) for k in data[f"srv{s}|https://mcp.example/{who}"]}
        assert got == {f"token_{i}" for i in range(N)}, f"{N - len(got)} of {who}'s updates were lost"


def test_two_processes_trusting_workspaces_lose_nothing(tmp_path: Path) -> None:
    target = tmp_path / "home" / "trust.json"
    problems = race(tmp_path, "trust", target)
    assert problems == []
    ws = json.loads(target.read_text())["workspaces"]
    want = {os.path.realpath(tmp_path / "ws" / f"{who}-{i}") for who in "ab" for i in range(N)}
    assert want <= set(ws), f"{len(want - set(ws))} of {2 * N} trusted workspaces were lost"
