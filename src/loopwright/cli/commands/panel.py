"""Room: cli. Owns the command panel (Panel): what a command shows, drawn under the input box where
the permission dialog is, scrolled with PgUp/PgDn or the arrows, closed by Esc, Enter or q; may
import the rooms below cli and cli.dialog.

A panel is read-only: it shows the state in force. Changing it is done with the command's
arguments (`/permissions allow RULE`), which the panel's last lines name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..dialog import layout, toolbar_text, wrap
from ..preview import Line, shown


class Panel:
    """A titled block of lines; `close` is called once when the user leaves it."""

    def __init__(self, title: str, lines: Sequence[str | Line], hint: str = "",
                 close: Callable[[], None] | None = None) -> None:
        self.title = title
        self.lines: list[Line] = [[("", f"  {shown(x)}")] if isinstance(x, str) else x for x in lines]
        self.hint = hint
        self.scroll = 0
        self.page = 10
        self.closed = False
        self._close = close

    def text(self) -> str:
        """The panel as plain text (title, lines, hint): what tests and the transcript log read."""
        return "\n".join([self.title, *("".join(t for _, t in ln) for ln in self.lines), self.hint])

    # --- keys (cli/dialog.py's dialog_bindings send them) ------------------------------------------

    def armed(self, now: float | None = None) -> bool:
        return not self.closed  # opened by the user's own command: it takes keys at once

    def escape(self) -> None:
        if not self.closed:
            self.closed = True
            if self._close is not None:
                self._close()

    def enter(self) -> None:
        self.escape()

    def type(self, text: str, *, paste: bool = False) -> None:
        if not paste and text in ("q", "Q"):
            self.escape()

    def move(self, delta: int) -> None:
        self.scroll = max(0, self.scroll + delta)

    def scroll_by(self, pages: int) -> None:
        self.scroll = max(0, self.scroll + pages * max(1, self.page - 1))

    def backspace(self) -> None:
        pass

    # --- drawing ------------------------------------------------------------------------------------

    def rows(self, width: int, height: int) -> list[Line]:
        width = max(width, 20)
        head: list[Line] = [[("bold", f" {shown(self.title)}")]]
        tail: list[Line] = [[("ansibrightblack", f" {self.hint + ' · ' if self.hint else ''}Esc to close")]]
        body = [r for ln in self.lines for r in wrap(ln, width, indent=4)]
        return layout(self, head, body, tail, width, height)

    def formatted(self, width: int, height: int) -> list[tuple[str, str]]:
        return toolbar_text(self.rows(width, height), width)
