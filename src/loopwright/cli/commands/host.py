"""Room: cli. Owns what a REPL command may use of the session (the Host protocol); imports nothing
of the REPL itself, so the command modules never import cli.interactive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...client import LoopwrightClient
    from ...options import AgentOptions
    from ..dialog import PermissionAsker
    from .panel import Panel


class Host(Protocol):
    """The interactive session as the commands see it (cli/interactive.py's Repl)."""

    base_options: AgentOptions  # the options the session started with
    client: LoopwrightClient  # the conversation (its options: what is in force now)
    asker: PermissionAsker  # the permission dialog and this session's "don't ask again" rules
    renderer: Any  # the trace renderer (/expand)

    def say(self, text: str) -> None:
        """Print a line into the trace (kept for redraws)."""

    def cwd(self) -> str:
        """The session's working directory."""

    def open_panel(self, panel: Panel) -> None:
        """Show `panel` under the input box until Esc closes it."""

    async def ask_line(self, question: str) -> str:
        """One line typed at a question ('' when nobody can answer)."""

    def start_turn(self, prompt: str) -> None:
        """Send `prompt` to the model as the next turn (not awaited)."""


class Handler(Protocol):
    async def __call__(self, host: Host, arg: str) -> None: ...


class Command:
    """One built-in command: its name, one line of help, and what runs it. `busy_ok`: it may run
    while a turn works (it only shows state). `asks`: it may ask a line at the prompt
    (Host.ask_line), so it runs in the prompt's stead, not beside it."""

    __slots__ = ("name", "summary", "run", "busy_ok", "usage", "asks")

    def __init__(self, name: str, summary: str, run: Handler, *, busy_ok: bool = False, usage: str = "",
                 asks: bool = False) -> None:
        self.name, self.summary, self.run, self.busy_ok, self.asks = name, summary, run, busy_ok, asks
        self.usage = usage or f"/{name}"
