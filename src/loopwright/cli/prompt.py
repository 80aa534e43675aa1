"""Room: cli. Owns the interactive session's input box (key_bindings, prompt_session, ESC_WAIT): its
keys, history and completers; may import the rooms below cli and cli.commands, cli.dialog,
cli.slash, cli.mention_complete, cli.terminal, never cli.interactive (the session is a Prompter).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .commands import BUILTINS
from .terminal import suspend

if TYPE_CHECKING:
    from ..options import AgentOptions
    from .terminal import SessionInput

# A terminal sends an Alt key as ESC and the key in one write; a lone ESC is the Esc key. How
# long to wait for the rest of an escape sequence, then for a second key after ESC.
ESC_WAIT = (0.05, 0.3)


class Prompter(Protocol):
    """The interactive session as its input box sees it (cli/interactive.py's Repl)."""

    base_options: AgentOptions
    terminal: SessionInput | None  # the session's raw input (None: no terminal)
    renderer: Any  # the trace renderer (Ctrl-O)
    app: Any  # set here: the prompt's application
    prompt_session: Any  # set here
    mcp_prompts: list[tuple[str, str]]  # the MCP servers' prompts for the / menu
    last_ctrl_c: float
    exit_asked: float

    @property
    def busy(self) -> bool:
        """A turn (or a command, a `!` command) runs."""

    @property
    def dialog(self) -> Any:
        """The open dialog or panel under the input box, if any."""

    def say(self, text: str) -> None:
        """Print a line into the trace."""

    def cwd(self) -> str:
        """The session's working directory."""

    def interrupt(self) -> None:
        """Esc: close a panel, interrupt a running turn."""

    def cycle_mode(self) -> None:
        """Shift+Tab: the next permission mode."""

    def toolbar(self) -> Any:
        """The bottom bar under the input box."""


def key_bindings(repl: Prompter) -> Any:
    """The session's keys: Esc and Ctrl-C interrupt, Ctrl-C twice or Ctrl-D exit, Ctrl-O expands,
    `\\` + Enter or Ctrl-J a newline, Shift+Tab the next mode, Ctrl-Z suspends."""
    from prompt_toolkit.key_binding import KeyBindings

    kb = KeyBindings()

    @kb.add("escape")  # not eager: ESC b is Alt-b (ESC_WAIT)
    def _esc(event: Any) -> None:
        repl.interrupt()

    @kb.add("c-c")
    def _ctrl_c(event: Any) -> None:
        buf = event.app.current_buffer
        if repl.busy:
            repl.interrupt()
        elif buf.text:
            buf.reset()
        elif time.monotonic() - repl.last_ctrl_c < 2.0:
            event.app.exit(exception=EOFError())
        else:
            repl.last_ctrl_c = time.monotonic()
            repl.say("  (press Ctrl-C again to exit)")

    @kb.add("c-d")
    def _ctrl_d(event: Any) -> None:
        if event.app.current_buffer.text:
            return
        if repl.busy and time.monotonic() - repl.exit_asked > 3.0:  # work would be cut: ask first
            repl.exit_asked = time.monotonic()
            repl.say("  a turn is running: press Ctrl-D again to interrupt it and exit (Esc only interrupts)")
            return
        event.app.exit(exception=EOFError())

    @kb.add("c-o")
    def _expand(event: Any) -> None:
        error = repl.renderer.toggle(None)
        if error:
            repl.say(f"  {error}")

    @kb.add("enter")
    def _enter(event: Any) -> None:
        buf = event.current_buffer
        if buf.text.endswith("\\"):
            buf.delete_before_cursor(1)
            buf.insert_text("\n")
        else:
            buf.validate_and_handle()

    @kb.add("c-j")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("s-tab")
    def _cycle_mode(event: Any) -> None:
        repl.cycle_mode()

    @kb.add("c-z")
    def _suspend(event: Any) -> None:  # the terminal in the user's modes until `fg` (cli/terminal.py)
        suspend(event.app)

    return kb


def prompt_session(repl: Prompter) -> Any:
    """The session's prompt: its keys, history ($LOOPWRIGHT_HOME/repl_history, 0600), the / menu and
    `@path` completion; set as repl.prompt_session (and its application as repl.app)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import merge_completers
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import merge_key_bindings

    from ..home import open_private, private_dir
    from ..runconfig import skills_off
    from ..sessions import loopwright_home
    from .dialog import dialog_bindings
    from .mention_complete import mention_completer
    from .slash import menu_entries, slash_completer

    try:
        home = private_dir(loopwright_home())
        os.close(open_private(home / "repl_history"))  # the prompts typed: 0600 before prompt_toolkit appends
        history: Any = FileHistory(str(home / "repl_history"))
    except OSError:
        history = InMemoryHistory()
    session: PromptSession[str] = PromptSession(
        history=history, input=repl.terminal, key_bindings=merge_key_bindings([key_bindings(repl), dialog_bindings(lambda: repl.dialog)]),
        multiline=True, bottom_toolbar=repl.toolbar,
        prompt_continuation="  ", complete_while_typing=True,
        completer=merge_completers([
            slash_completer(lambda: menu_entries(repl.cwd(), repl.base_options.setting_sources or [],
                                                 [(c.name, c.summary) for c in BUILTINS.values()],
                                                 skills_off(repl.base_options, Path(repl.cwd())))
                             + repl.mcp_prompts),
            mention_completer(repl.cwd)]))  # `@path` (cli/mention_complete.py)
    repl.app = session.app
    repl.app.ttimeoutlen, repl.app.timeoutlen = ESC_WAIT
    repl.prompt_session = session
    return session
