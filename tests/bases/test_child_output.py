"""Children whose output loopwright reads (hooks, the statusLine command, apiKeyHelper), run for
real: what they print is read up to a cap and never waits on a descendant that holds the pipes."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from loopwright import apikeyhelper
from loopwright.hooks import runner
from loopwright.hooks.config import HookContext
from loopwright.hooks.kinds import CommandHook
from loopwright.hooks.results import Outcome
from loopwright.models.base import ModelError

# A subprocess transport still open when its event loop closes complains from its __del__ at the next
# garbage collection ("Exception ignored in: BaseSubprocessTransport.__del__ ... Event loop is closed"),
# in whichever test that happens: these tests collect right after their loop, and fail on it.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


def _run_then_collect(coro: Any) -> Any:
    """asyncio.run, then a garbage collection: a transport left open complains now (pytestmark)."""
    got = asyncio.run(coro)
    gc.collect()
    return got


def _end(pidfile: Path) -> None:
    """End a test's daemon (it wrote its pid), if it is still there."""
    for _ in range(100):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.02)
    try:
        os.kill(int(pidfile.read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def test_api_key_helper_past_its_timeout_is_not_waited_for_by_a_daemon_holding_its_pipes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper that double-forks a setsid daemon (its stdout inherited), then hangs: past the
    timeout its group is killed and the error comes at once; the reap used to wait for the
    daemon to close the pipes (30 s here)."""
    monkeypatch.setattr(apikeyhelper, "HELPER_TIMEOUT_S", 0.5)
    pidfile = tmp_path / "daemon.pid"
    helper = apikeyhelper.ApiKeyHelper(f"(setsid sh -c 'echo $$ > {pidfile}; exec sleep 30' &); sleep 30",
                                       str(tmp_path))
    t0 = time.monotonic()
    try:
        with pytest.raises(ModelError, match="gave no key within 0.5 s"):
            helper()
        assert time.monotonic() - t0 < 20  # not the daemon's 30 s (the margin: a loaded machine)
    finally:
        _end(pidfile)


def _run_hook(command: str, background: bool = False, timeout: float = 20) -> tuple[Outcome, list[tuple[str, ...]], float]:
    reports: list[tuple[str, ...]] = []
    run = runner.run_background if background else runner.run_command
    t0 = time.monotonic()
    out = _run_then_collect(run("PreToolUse", CommandHook(command), timeout, {"x": 1}, HookContext(cwd=os.getcwd()),
                                {}, lambda *a: reports.append(a)))
    return out, reports, time.monotonic() - t0


@pytest.mark.parametrize("background", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_hook_printing_past_the_cap_is_cut_there_and_ended(background: bool, stream: str) -> None:
    """30 MB on one stream: kept up to the cap (10 MiB), said to be cut, reported, and the hook ended
    (it used to be read whole: a hook's endless stream filled memory, or the disk for an async one)."""
    redirect = " >&2" if stream == "stderr" else ""
    out, reports, _ = _run_hook(f"head -c 30000000 /dev/zero | tr '\\0' a{redirect}; sleep 30", background)
    text = out.stdout if stream == "stdout" else out.stderr
    assert out.failed and text.startswith("a" * 1000)
    assert len(text) < runner.MAX_OUTPUT_BYTES + 100 and text.endswith(f"[{stream} cut at 10,485,760 bytes]")
    assert [r[2] for r in reports] == ["error"] and f"printed over 10,485,760 bytes on {stream}" in reports[0][3]


@pytest.mark.parametrize("background", [False, True], ids=["sync", "async"])
def test_a_hook_printing_forever_ends_at_the_cap_not_at_its_timeout(background: bool) -> None:
    out, reports, took = _run_hook("yes", background, timeout=60)
    assert out.failed and len(out.stdout) < runner.MAX_OUTPUT_BYTES + 100 and took < 20, took
    assert "printed over" in reports[0][3]


@pytest.mark.parametrize("background", [False, True], ids=["sync", "async"])
def test_a_hook_under_the_cap_is_read_whole(background: bool) -> None:
    out, reports, _ = _run_hook("head -c 5000000 /dev/zero | tr '\\0' b; echo; echo err >&2; exit 2", background)
    assert out.exit_code == 2 and out.stdout == "b" * 5_000_000 + "\n" and out.stderr == "err\n" and not reports


def test_api_key_helper_printing_forever_is_ended_at_the_cap(tmp_path: Path) -> None:
    t0 = time.monotonic()
    with pytest.raises(ModelError, match=r"printed over 1,048,576 bytes on stdout: not a key"):
        apikeyhelper.ApiKeyHelper("yes sk-secret", str(tmp_path))()
    assert time.monotonic() - t0 < 10


def test_api_key_helper_reads_its_key_and_stderr(tmp_path: Path) -> None:
    assert apikeyhelper.ApiKeyHelper("echo warn >&2; echo '  sk-1  '", str(tmp_path))() == "sk-1"
    with pytest.raises(ModelError, match="exit status 3: locked"):
        apikeyhelper.ApiKeyHelper("echo locked >&2; exit 3", str(tmp_path))()


def test_a_status_line_command_printing_forever_is_ended_at_the_cap(tmp_path: Path) -> None:
    """Its first line is shown (cut to what a line keeps), the error says why it was ended."""
    from loopwright.cli.statusline import STATUS_MAX_CHARS, CustomStatus

    status = CustomStatus("yes status", tmp_path)
    t0 = time.monotonic()
    _run_then_collect(status.run())
    # ended at the cap, not at its 5 s timeout: the error says so (a loaded machine may take seconds,
    # so no bound of time near the timeout tells them apart); and not after the endless output
    assert status.text == "status" and "printed over 1,048,576 bytes; it was ended" in status.error
    assert time.monotonic() - t0 < 30
    status = CustomStatus("head -c 3000000 /dev/zero | tr '\\0' s", tmp_path)  # one endless line
    _run_then_collect(status.run())
    assert status.text == "s" * STATUS_MAX_CHARS


async def _wait_for_file(path: Path, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} was never written"
        await asyncio.sleep(0.02)


def test_a_status_line_command_past_its_timeout_is_not_waited_for_by_a_daemon_holding_its_pipe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As apiKeyHelper's: its group is killed at the timeout and the error comes then; the reap
    waited for the setsid daemon that holds its stdout (30 s here; `sleep infinity`: forever,
    and the interactive mode's exit waits for that task)."""
    from loopwright.cli import statusline

    monkeypatch.setattr(statusline, "STATUS_TIMEOUT", 0.5)
    pidfile = tmp_path / "daemon.pid"
    status = statusline.CustomStatus(f"(setsid sh -c 'echo $$ > {pidfile}; exec sleep 30' &); sleep 30", tmp_path)
    t0 = time.monotonic()
    try:
        _run_then_collect(asyncio.wait_for(status.run(), 25))  # (and its transport closed: pytestmark)
        # not the daemon's 30 s (the margin over the 0.5 s timeout: a loaded machine)
        assert time.monotonic() - t0 < 20 and "took over" in status.error, status.error
    finally:
        _end(pidfile)


def test_a_hook_past_its_timeout_leaves_no_transport_open_to_a_daemon_holding_its_pipes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook's group is killed at its timeout; its setsid daemon keeps stdout and stderr open:
    the wait for them is bounded (REAP_S) and the pipes are then closed, not left to the loop's end."""
    monkeypatch.setattr(runner, "REAP_S", 0.5)
    pidfile = tmp_path / "daemon.pid"
    try:
        out, reports, took = _run_hook(f"(setsid sh -c 'echo $$ > {pidfile}; exec sleep 30' &); sleep 30",
                                       timeout=0.5)
        assert out.failed and out.error == "timed out after 0.5 s" and took < 10, (out, took)
        assert [r[2] for r in reports] == ["timeout"]
    finally:
        _end(pidfile)


@pytest.mark.parametrize("what", ["hook", "statusLine"])
def test_a_command_cancelled_under_its_reader_is_killed_and_its_transport_closed(what: str, tmp_path: Path) -> None:
    """An interrupt (the run's task cancelled, asyncio.run's teardown) while the command runs, a
    daemon it started holding its pipes: its group is killed, its pipes closed and the loop sees
    it exit before the loop ends (it used to be signalled only, its transport left to the loop's end)."""
    from loopwright.cli.statusline import CustomStatus

    started, daemon = tmp_path / "started", tmp_path / "daemon.pid"
    command = f"(setsid sh -c 'echo $$ > {daemon}; exec sleep 30' &); echo $$ > {started}; exec sleep 30"

    async def main() -> None:
        if what == "hook":
            task = asyncio.ensure_future(runner.run_command(
                "PreToolUse", CommandHook(command), 60, {"x": 1}, HookContext(cwd=str(tmp_path)), {},
                lambda *a: None))
        else:
            task = asyncio.ensure_future(CustomStatus(command, tmp_path).run())
        await _wait_for_file(started)
        await _wait_for_file(daemon)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 20)

    try:
        asyncio.run(main())
        pid = int(started.read_text())
        deadline = time.monotonic() + 20
        # (killed: gone within the deadline, not at once; and Python 3.11's child watcher thread,
        # which holds the transport until it has reaped the child, gone too: then the collection
        # sees it all)
        while _alive(pid) or any(t.name.startswith("waitpid-") for t in threading.enumerate()):
            assert time.monotonic() < deadline, f"the {what} command {pid} outlived the cancel"
            time.sleep(0.05)
        gc.collect()
    finally:
        _end(daemon)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
