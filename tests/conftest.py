"""Test configuration: in CI, hypothesis draws the same examples on every run (a failure
there is reproducible from the log); locally it explores new ones each run."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import NamedTuple

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with its own HOME and LOOPWRIGHT_HOME, so a user's own
    ~/.loopwright/settings.json cannot change a result and no test writes into the real home."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LOOPWRIGHT_HOME", str(home / ".loopwright"))
    # Workspace trust (trust.py): every test's temp workspace is trusted, as a user trusts their own
    # projects; a test of untrusted workspaces removes this (tests/trust/test_trust.py: the `untrusted` fixture).
    monkeypatch.setenv("LOOPWRIGHT_TRUSTED_DIRS", str(tmp_path_factory.getbasetemp()))
    for var in ("LOOPWRIGHT_SESSIONS_DIR", "LOOPWRIGHT_MODEL", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY",
                "OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


class CliRun(NamedTuple):
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliRun]:
    """The `loopwright` command in this process: `cli(argv, stdin="", cwd=None)` runs
    `loopwright.cli.main(argv)` and gives its exit code, stdout and stderr (no subprocess, so the
    test needs no e2e mark; signals and terminals still need a real process)."""
    import io

    from loopwright.cli import main

    def run(argv: Sequence[str], stdin: str = "", cwd: str | os.PathLike[str] | None = None) -> CliRun:
        capsys.readouterr()  # what the test printed before is not the command's
        with monkeypatch.context() as m:
            m.setattr("sys.stdin", io.StringIO(stdin))
            if cwd is not None:
                m.chdir(cwd)
            try:
                code = main(list(argv))
            except SystemExit as e:  # argparse's --help, --version and usage errors
                code = e.code if isinstance(e.code, int) else int(e.code is not None)
        out, err = capsys.readouterr()
        return CliRun(code, out, err)

    return run
