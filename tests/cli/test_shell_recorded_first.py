"""`!command` in the interactive CLI: the command and its output are in the session's transcript
before the output is shown, so an exit the moment the user sees it (which interrupts a turn still
running) loses nothing (the fresh-clone run's test_shell_mode_output_survives_exit_and_resume
saw the output, exited, and found no session to resume)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.cli.commands.shell import run_shell
from loopwright.sessions import cwd_slug


class Host:
    def __init__(self, client: lw.LoopwrightClient, cwd: Path) -> None:
        self.client = client
        self.base_options = client.options
        self._cwd = cwd
        self.said: list[tuple[str, bool]] = []  # (line, recorded in the transcript when said)

    def recorded(self) -> bool:
        sid = self.client.session_id
        path = self._cwd / "sessions" / cwd_slug(self._cwd) / f"{sid}.jsonl"
        return sid is not None and path.exists() and "hi-from-bang" in path.read_text()

    def say(self, text: str) -> None:
        self.said.append((text, self.recorded()))

    def cwd(self) -> str:
        return str(self._cwd)


def test_output_is_shown_only_once_it_is_recorded(tmp_path: Path) -> None:
    opts = lw.AgentOptions(model=lw.ScriptedModel([]), tools=lw.default_tools(), cwd=tmp_path, sessions_dir=tmp_path / "sessions",
                           persist_session=True, permission_mode="bypassPermissions")

    async def go() -> list[tuple[str, bool]]:
        async with lw.LoopwrightClient(opts) as c:
            host: Any = Host(c, tmp_path)
            await run_shell(host, "echo hi-from-bang")
            return host.said  # type: ignore[no-any-return]

    said = asyncio.run(go())
    shown = [rec for line, rec in said if "⎿ hi-from-bang" in line]
    assert shown == [True], said
