"""Room: cli. Owns the interactive dialog for an MCP server's elicitation (ElicitDialog, Elicitor:
the REPL's AgentOptions.elicit); may import the rooms below cli, cli.dialog and cli.preview.

A server's question mid-call (`elicitation/create`) is a dialog where the permission one is:

     MCP server asking asks: Your preferences?
    ❯ color: blue▌
      count (integer): 3
      Accept
      Decline
    ↑/↓ move · type to edit the field · Enter on Accept/Decline answers · Esc = cancel

The form's fields come from the requested schema (string, number, integer, boolean, enum),
each prefilled with its default. Accept checks the values (required fields filled, numbers
numbers, booleans true/false, enum values among the allowed) and says what is wrong instead
of answering; Decline declines; Esc cancels (the spec's three actions). A URL elicitation
shows the URL and offers Accept / Decline only. The consent rules are the permission
dialog's: keys only after ARM_DELAY, and only Enter on Accept or Decline answers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .dialog import ARM_DELAY, layout, toolbar_text
from .preview import Line, shown


@dataclass
class Field:
    """One property of the requested schema and the text typed for it."""

    name: str
    kind: str  # string | number | integer | boolean
    required: bool
    text: str
    choices: list[str]
    title: str = ""

    def value(self) -> tuple[Any, str]:
        """The typed text as the schema's type: (value, "") or (None, why not)."""
        t = self.text.strip()
        if self.choices and t not in self.choices:
            return None, f"{self.name} must be one of {', '.join(self.choices)}"
        try:
            if self.kind == "integer":
                return int(t), ""
            if self.kind == "number":
                return float(t), ""
        except ValueError:
            return None, f"{self.name} must be a{'n integer' if self.kind == 'integer' else ' number'}"
        if self.kind == "boolean":
            if t.lower() in ("true", "yes", "y"):
                return True, ""
            if t.lower() in ("false", "no", "n"):
                return False, ""
            return None, f"{self.name} must be true or false"
        return t, ""


def fields_of(schema: Any) -> list[Field]:
    """The form's fields of a `requestedSchema` (a flat object of primitive properties)."""
    if not isinstance(schema, dict):
        return []
    required = set(schema.get("required") or [])
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        choices = [str(c) for c in prop.get("enum") or []] or \
            [str(o.get("const")) for o in prop.get("oneOf") or [] if isinstance(o, dict) and "const" in o]
        default = prop.get("default")
        text = "" if default is None else (str(default).lower() if isinstance(default, bool) else str(default))
        out.append(Field(str(name), str(prop.get("type") or "string"), name in required, text, choices,
                         str(prop.get("title") or "")))
    return out


class ElicitDialog:
    """One elicitation. `answer`: the MCP result as a dict (`action`, and `content` when accepted)."""

    def __init__(self, server: str, request: dict[str, Any], *, now: float | None = None) -> None:
        self.server = server
        self.message = str(request.get("message") or "")
        self.url = str(request.get("url") or "") if request.get("mode") == "url" else ""
        self.fields = [] if self.url else fields_of(request.get("requestedSchema"))
        self.selected = 0
        self.problem = ""
        self.scroll = 0
        self.page = 10
        self.shown_at = time.monotonic() if now is None else now
        self.answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    @property
    def accept_row(self) -> int:
        return len(self.fields)

    @property
    def text(self) -> str:
        """The selected field's text ('' on Accept/Decline); Ctrl-U clears it."""
        return self.fields[self.selected].text if self.selected < self.accept_row else ""

    @text.setter
    def text(self, value: str) -> None:
        if self.selected < self.accept_row:
            self.fields[self.selected].text = value

    def armed(self, now: float | None = None) -> bool:
        return (time.monotonic() if now is None else now) - self.shown_at >= ARM_DELAY

    def _done(self, result: dict[str, Any]) -> None:
        if not self.answer.done():
            self.answer.set_result(result)

    def type(self, text: str, *, paste: bool = False) -> None:
        if self.selected < self.accept_row:
            self.text += "".join(ch for ch in text.replace("\n", " ").replace("\r", " ") if ch.isprintable())

    def backspace(self) -> None:
        self.text = self.text[:-1]

    def move(self, delta: int) -> None:
        self.selected = max(0, min(self.accept_row + 1, self.selected + delta))

    def scroll_by(self, pages: int) -> None:
        self.scroll += pages * max(1, self.page - 1)

    def enter(self) -> None:
        if self.selected < self.accept_row:
            self.selected += 1  # Enter on a field goes on to the next row; it never answers
        elif self.selected == self.accept_row:
            self.accept()
        else:
            self._done({"action": "decline"})

    def accept(self) -> None:
        content: dict[str, Any] = {}
        for f in self.fields:
            if not f.text.strip():
                if f.required:
                    self.problem = f"{f.name} is required"
                    return
                continue
            value, why = f.value()
            if why:
                self.problem = why
                return
            content[f.name] = value
        self._done({"action": "accept", "content": content} if not self.url else {"action": "accept"})

    def escape(self) -> None:
        self._done({"action": "cancel"})

    def rows(self, width: int, height: int, now: float | None = None) -> list[Line]:
        width = max(width, 20)
        head: list[Line] = [[("ansiblack bg:ansicyan", f" MCP server {shown(self.server)} asks "),
                             ("bold", f" {shown(self.message)}")]]
        body: list[Line] = [[("", f"   open: {shown(self.url)}")]] if self.url else []
        tail: list[Line] = []
        for i, f in enumerate(self.fields):
            mark, style = ("❯", "ansicyan bold") if i == self.selected else (" ", "")
            kind = f" ({'|'.join(f.choices)})" if f.choices else ("" if f.kind == "string" else f" ({f.kind})")
            label = f"{shown(f.title or f.name)}{'*' if f.required else ''}{kind}: {shown(f.text)}"
            tail.append([(style, f" {mark} {label}{'▌' if i == self.selected else ''}")])
        for i, label in ((self.accept_row, "Accept"), (self.accept_row + 1, "Decline")):
            mark, style = ("❯", "ansicyan bold") if i == self.selected else (" ", "")
            tail.append([(style, f" {mark} {label}")])
        if self.problem:
            tail.append([("ansired", f" ✗ {self.problem}")])
        hint = " ↑/↓ move · type to edit the field · Enter on Accept/Decline answers · Esc = cancel"
        tail.append([("ansibrightblack", hint if self.armed(now) else " …")])
        return layout(self, head, body, tail, width, height)

    def formatted(self, width: int, height: int) -> list[tuple[str, str]]:
        return toolbar_text(self.rows(width, height), width)


class Elicitor:
    """The REPL's AgentOptions.elicit: one dialog at a time; `say` reports each answer."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.dialog: ElicitDialog | None = None
        self._lock = asyncio.Lock()

    async def elicit(self, server: str, request: dict[str, Any]) -> dict[str, Any]:
        async with self._lock:
            d = self.dialog = ElicitDialog(server, request)
            try:
                result = await d.answer
            finally:
                self.dialog = None
            shown_content = f": {result['content']}" if result.get("content") else ""
            self.say(f"  ? MCP server {shown(server)}: {result['action']}{shown(shown_content)}")
            return result

    def cancel(self) -> None:
        """An interrupt: the open elicitation is cancelled."""
        if self.dialog is not None:
            self.dialog.escape()
