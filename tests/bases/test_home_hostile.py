"""home.locked() and write_private attacked (real processes, real signals, real files): a lock
held by a stopped process ends in a clear error within the bound instead of a hang; a symlink
planted where the lock file or a temporary file goes is never followed, so no file outside the
home changes mode or content."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright import home
from loopwright.home import locked, write_private
from tests.helpers import cli_env

pytestmark = pytest.mark.e2e

HOLDER = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from loopwright.home import locked
    with locked(Path(sys.argv[1])):
        print("held", flush=True)
        time.sleep(600)
''')


@pytest.fixture
def lw_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "lwhome"
    monkeypatch.setenv("LOOPWRIGHT_HOME", str(h))
    return h


@pytest.fixture
def stopped_holder(lw_home: Path) -> Iterator[subprocess.Popen[str]]:
    """Another loopwright process that took the trust store's lock and was then stopped (^Z, SIGSTOP)."""
    env = cli_env(LOOPWRIGHT_HOME=str(lw_home))
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(lw_home / "trust.json")], env=env,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        os.kill(p.pid, signal.SIGSTOP)
        yield p
    finally:
        p.kill()
        p.wait()


def test_a_lock_held_by_a_stopped_process_is_a_clear_error_not_a_hang(
        stopped_holder: subprocess.Popen[str], lw_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from loopwright.cli import main

    monkeypatch.setattr(home, "LOCK_WAIT_S", 0.5)
    (tmp_path / "ws").mkdir()
    done: list[int] = []
    t = threading.Thread(target=lambda: done.append(main(["trust", str(tmp_path / "ws")])), daemon=True)
    start = time.monotonic()
    t.start()
    t.join(timeout=30)
    assert done, "`loopwright trust DIR` hung on a lock held by a stopped process"
    assert time.monotonic() - start < 10
    assert done[0] != 0
    err = capsys.readouterr().err
    assert "trust.json is being changed by another process" in err and "fuser " in err, err
    assert not (lw_home / "trust.json").exists(), "the change was made without the lock"


def test_a_lock_released_within_the_bound_is_taken(lw_home: Path, tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    env = cli_env(LOOPWRIGHT_HOME=str(lw_home))
    script = HOLDER.replace("time.sleep(600)", "time.sleep(0.5)")
    p = subprocess.Popen([sys.executable, "-c", script, str(target)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        start = time.monotonic()
        with locked(target, timeout=20):
            assert p.poll() is not None or time.monotonic() - start >= 0.3  # it waited its turn
    finally:
        p.kill()
        p.wait()
    with locked(target), locked(target, timeout=0.1):  # nested in one thread: held once, never busy
        pass


def test_a_symlink_planted_as_the_lock_file_is_not_followed(lw_home: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    victim.chmod(0o644)
    target = lw_home / "trust.json"
    key = hashlib.sha256(os.path.realpath(target).encode()).hexdigest()[:32]
    (lw_home / "locks").mkdir(parents=True)
    (lw_home / "locks" / f"{key}.lock").symlink_to(victim)
    from loopwright.trust import trust_dir

    (tmp_path / "ws").mkdir()
    trust_dir(tmp_path / "ws")
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644, "the lock's open changed the mode of the file it points to"
    assert victim.read_text() == "mine\n"
    assert os.path.realpath(tmp_path / "ws") in target.read_text()


def test_write_private_never_writes_through_a_planted_temporary_name(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A hostile repository's .claude/ with symlinks where loopwright's temporary file for
    settings.local.json would go: the write lands in settings.local.json, nowhere else."""
    claude = tmp_path / "repo" / ".claude"
    claude.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    name = "settings.local.json"
    # the old name (pid and thread id), and a guessed random part
    (claude / f".{name}.{os.getpid()}.{threading.get_ident()}.tmp").symlink_to(victim)
    write_private(claude / name, '{"permissions": {}}\n')
    assert victim.read_text() == "mine\n", "write_private wrote through a symlink planted at its temporary name"
    assert (claude / name).read_text() == '{"permissions": {}}\n'
    assert stat.S_IMODE((claude / name).stat().st_mode) == 0o600

    monkeypatch.setattr("secrets.token_hex", lambda n: "guessed")
    (claude / f".{name}.{os.getpid()}.guessed.tmp").symlink_to(victim)
    with pytest.raises(FileExistsError):
        write_private(claude / name, "{}\n")
    assert victim.read_text() == "mine\n"
    assert (claude / name).read_text() == '{"permissions": {}}\n'  # (the last whole write stays)
