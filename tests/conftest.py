"""Test configuration: hypothesis sets no deadline per example; in CI (`.ci/run` passes
`--hypothesis-profile=ci` in PYTEST_ADDOPTS; a CI service's `CI` variable selects it too) it draws the same examples on
every run, so a landing cannot fail on a random draw the next run would not make (a failure there is
reproducible from the log); locally it explores new ones each run. The suite runs on
pytest-xdist's workers (pyproject.toml's addopts: `--dist loadgroup`); each test has its own HOME
and temp dirs, and the tests that share a module-scoped fixture run on one worker."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import settings

# No deadline per example (hypothesis's default is 200 ms): on a loaded machine (CI: 2 cores, 3
# workers) an example can take longer for reasons not the code's (a descheduled worker, a GC), and
# the DeadlineExceeded / FlakyFailure that follows fails the run. A test whose point is a deadline
# sets its own in @settings.
# "ci": derandomized (the examples follow from each test, not from a seed), no example database.
# .ci/run loads it with hypothesis's own option (PYTEST_ADDOPTS=--hypothesis-profile=ci, which wins
# over the line below), not by setting CI, which would change what the Node peers (Claude Code, npm) do there.
settings.register_profile("suite", deadline=None)
settings.register_profile("ci", settings.get_profile("suite"), derandomize=True, database=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "suite")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that use one of this suite's module-scoped fixtures (a llama-server, a local Ray, a
    built docs site, a web site) run on the same xdist worker, one after another: the fixture is set up
    once, as in a serial run, instead of once on each worker. A test that names its own xdist_group
    keeps it; the others are handed out one by one."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None or item.get_closest_marker("xdist_group") is not None:
            continue
        shared = any(d.scope == "module" for name in info.names_closure for d in info.name2fixturedefs.get(name, ()))
        if shared:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    if getattr(config.option, "loadgroup", False) and items and hasattr(items[0], "_id"):  # an xdist worker
        _group_node_ids(items)


def _group_node_ids(items: list[pytest.Item]) -> None:
    """A worker's grouped test ends its node id in `@<group>`, all that the controller's loadgroup
    scheduler reads. pytest-xdist 3.8 writes it to `item._nodeid`, which pytest 9 no longer reads (its
    id is `item._id`, a NodeId): there every group was silently split over both workers, each one
    setting the module fixture up again (two llama-servers of each size, two docs builds) and two Rays
    running at once. So on a pytest with `_id` the suffix goes there, as xdist's hook would put it."""
    from _pytest.nodeid import NodeId

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        if names:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")  # type: ignore[attr-defined]


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


# The programs a test may start only under the e2e mark (README: "tests marked e2e start programs
# (the CLI, python, tmux, node) as subprocesses"). A tool's own commands (Bash's shell, rg, git)
# are what the in-process tests run through the loop.
_E2E_PROGRAMS = ("python", "loopwright", "tmux", "node", "npm", "npx", "claude", "acpx", "mypy",
                 "llama-server", "raylet", "gcs_server", "valgrind")


def _program(args: Any) -> str:
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args or [""])
    return Path(os.fsdecode(argv[0])).name if argv else ""


@pytest.fixture(autouse=True)
def _e2e_marks_subprocesses(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test that starts one of the e2e programs without the e2e mark fails, naming it, so
    `pytest -m "not e2e"` stays the in-process run it says it is."""
    if request.node.get_closest_marker("e2e") is not None:
        yield
        return
    real = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen[Any], args: Any, *a: Any, **kw: Any) -> None:
        name = _program(args)
        if name.startswith(_E2E_PROGRAMS) or os.path.realpath(name) == os.path.realpath(sys.executable):
            pytest.fail(f"{request.node.nodeid} starts {name!r} as a subprocess: mark it e2e", pytrace=False)
        real(self, args, *a, **kw)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)
    yield


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
