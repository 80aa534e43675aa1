"""The watchdog (children.py) runs before a command whose group it must end is spawned: owning the
group right after the spawn is then one pipe write. Started only by that `own`, a SIGKILL of
loopwright during the watchdog's own start left the just-started apiKeyHelper or hook running
(tests/cli/test_child_signals.py's SIGKILL case failed so on a loaded machine)."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopwright import children
from loopwright.apikeyhelper import ApiKeyHelper
from loopwright.hooks import runner
from loopwright.hooks.config import HookContext
from loopwright.hooks.kinds import CommandHook


@pytest.fixture
def fresh_watchdog(monkeypatch: pytest.MonkeyPatch) -> Iterator[children._Watchdog]:
    """A watchdog of this test's own, not started yet (the worker's may run since another test)."""
    dog = children._Watchdog()
    monkeypatch.setattr(children, "WATCHDOG", dog)
    yield dog
    if dog.proc is not None:
        assert dog.proc.stdin is not None
        dog.proc.stdin.close()  # (its pipe closed: it ends, killing nothing still owned)
        dog.proc.wait(timeout=30)


def watching(dog: children._Watchdog) -> bool:
    return dog.proc is not None and dog.proc.poll() is None


def test_the_api_key_helper_is_spawned_only_once_the_watchdog_runs(
        fresh_watchdog: children._Watchdog, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[bool] = []
    real = subprocess.Popen

    def popen(args: Any, *a: Any, **kw: Any) -> Any:
        if args == "echo key":  # the helper (the watchdog's own start is a Popen too)
            seen.append(watching(fresh_watchdog))
        return real(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", popen)
    assert ApiKeyHelper("echo key", str(tmp_path))() == "key"
    assert seen == [True]


def test_a_command_hook_is_spawned_only_once_the_watchdog_runs(
        fresh_watchdog: children._Watchdog, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[bool] = []
    real = runner.start

    async def start(*a: Any, **kw: Any) -> Any:
        seen.append(watching(fresh_watchdog))
        return await real(*a, **kw)

    monkeypatch.setattr(runner, "start", start)
    outcome = asyncio.run(runner.run_command("PreToolUse", CommandHook("exit 0"), 60, {"x": 1},
                                             HookContext(cwd=str(tmp_path)), {}, lambda *a: None))
    assert not outcome.failed, outcome
    assert seen == [True]
