"""Room: cli. Owns the interactive session's terminal modes (SessionInput, session_input, suspend,
handed_over); imports no other room of loopwright.

The interactive session keeps the terminal in raw mode from its first prompt to its exit, as
Claude Code (an Ink app) does, so what the user types while a run prints or ends reaches the prompt
as typed. prompt_toolkit alone gives the terminal back its cooked modes around every line printed
above a live prompt (patch_stdout writes through run_in_terminal) and between two prompts: keys
typed in those moments went through the line discipline, which echoed them raw onto the screen
(ECHO) and turned Enter into a newline (ICRNL) that the next prompt inserted instead of submitting.
The user's own modes come back on exit (a crash too: a `with` block), while the session is
suspended (Ctrl-Z) and while a program of the user's runs in the terminal ($EDITOR).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import termios
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from prompt_toolkit.application import get_app_or_none, run_in_terminal
from prompt_toolkit.input.vt100 import Vt100Input

T = TypeVar("T")


class SessionInput(Vt100Input):
    """The terminal's input for a whole interactive session: raw while the session lasts
    (session()), and raw too where prompt_toolkit asks for cooked modes to print above the prompt.
    Only a hand-over (handed_over()) gives the terminal its user's modes back for a while."""

    def __init__(self, stdin: Any) -> None:
        super().__init__(stdin)
        self.user_modes = termios.tcgetattr(self.fileno())  # what the shell gave us, restored on exit
        self._handovers = 0

    def cooked_mode(self) -> contextlib.AbstractContextManager[None]:
        """prompt_toolkit's cooked modes around a print or a hand-over: the print keeps the raw modes
        (keys typed meanwhile wait, unechoed, for the prompt), a hand-over gets the user's modes."""
        if self._handovers:
            return _modes(self.fileno(), self.user_modes)
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Raw modes from here to the end of the block, the user's modes back after it (whatever
        ended it: the exit, an exception)."""
        with self.raw_mode():
            yield

    def restore(self) -> None:
        """The user's modes now, for good (a forced exit, which runs no `finally`)."""
        with contextlib.suppress(termios.error):
            termios.tcsetattr(self.fileno(), termios.TCSANOW, self.user_modes)

    @contextlib.contextmanager
    def handing_over(self) -> Iterator[None]:
        """While the block runs, prompt_toolkit's run_in_terminal gives the terminal the user's modes."""
        self._handovers += 1
        try:
            yield
        finally:
            self._handovers -= 1


@contextlib.contextmanager
def _modes(fd: int, modes: list[Any]) -> Iterator[None]:
    """`modes` on the terminal `fd` while the block runs, then the modes it had before."""
    try:
        before = termios.tcgetattr(fd)
        termios.tcsetattr(fd, termios.TCSANOW, modes)
    except termios.error:  # (the terminal is gone: nothing to give back)
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, before)


def session_input() -> SessionInput | None:
    """The session's input on stdin when it is a terminal (None otherwise: prompt_toolkit's own)."""
    if sys.platform == "win32" or not sys.stdin.isatty():
        return None
    try:
        return SessionInput(sys.stdin)
    except (termios.error, OSError):
        return None


async def handed_over(func: Callable[[], T]) -> T:
    """Run `func` (in a thread) with the terminal in the user's modes, the prompt hidden meanwhile
    (an editor the user works in)."""
    inp = getattr(get_app_or_none(), "input", None)
    with inp.handing_over() if isinstance(inp, SessionInput) else contextlib.nullcontext():
        return await run_in_terminal(func, in_executor=True)


def suspend(app: Any) -> asyncio.Task[None] | None:
    """Ctrl-Z: stop the process (the shell's job control takes over) with the terminal in the user's
    modes; raw again and the prompt redrawn when the shell continues it (`fg`)."""
    inp = getattr(app, "input", None)
    if not isinstance(inp, SessionInput) or not hasattr(signal, "SIGTSTP"):
        return None

    async def stop() -> None:
        with inp.handing_over():
            # (the whole process group, as the terminal's own Ctrl-Z would: a shell pipeline's too)
            await run_in_terminal(lambda: os.kill(0, signal.SIGTSTP))

    return asyncio.ensure_future(stop())
