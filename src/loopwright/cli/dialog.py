"""Room: cli. Owns the interactive permission dialog (PermissionDialog, PermissionAsker,
dialog_bindings); may import the rooms below cli, cli.render and cli.preview.

A permission question is a modal dialog drawn under the input box:

    Write notes.txt  (new file, 2 lines)
        1 + hello
        2 + world
    Do you want to allow this Write?
    ❯ 1. Yes
      2. Yes, and don't ask again for Edit(./**) (saved to .loopwright/settings.local.json)
      3. No, and tell the model what to do differently
    ↑/↓ + Enter or 1-3 · Esc = No · typing starts a "No" with your words

Only an explicit choice approves: a digit, or Enter on a choice the arrows moved to.
Letters typed at the dialog start choice 3 with that text (digits too, once text has
started); Enter sends it to the model as the refusal's message. What was typed before the
dialog appeared stays in the input box: the dialog takes keys only after ARM_DELAY, and
keys that arrive before that (a sentence still being typed) go on into the input box.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from ..gate import Allow, Deny
from ..gate.session import SessionRules
from .preview import Line, Preview, permission_preview, shown

# A person reacting to a dialog takes longer than this; keys faster than it are the tail of
# what they were typing before it appeared, and belong in the input box.
ARM_DELAY = 0.4
LOCAL_SETTINGS = ".loopwright/settings.local.json"


@dataclass(frozen=True)
class Answer:
    """The user's answer to a permission dialog, with what they typed to go with it."""

    choice: Literal["yes", "always", "no"]
    message: str = ""


class PermissionDialog:
    """One question: its preview, the choices (Yes, "don't ask again" unless `always_label` is
    None, No), the selection and the refusal text."""

    def __init__(self, name: str, preview: Preview, always_label: str | None, *, now: float | None = None) -> None:
        self.name = name
        self.preview = preview
        # allowManagedPermissionRulesOnly: no "don't ask again" (a rule it saved would not count; Claude Code hides it)
        self.kinds: tuple[Literal["yes", "always", "no"], ...] = ("yes", "no") if always_label is None else (
            "yes", "always", "no")
        self.choices = ["Yes", *([] if always_label is None else [always_label]),
                        "No, and tell the model what to do differently"]
        self.no = len(self.choices) - 1  # the last choice, which typed words go with
        self.selected = 0
        self.text = ""  # the words for the model, once typing started a "No"
        self.scroll = 0
        self.page = 10  # body rows shown (set by render)
        self.shown_at = time.monotonic() if now is None else now
        self.answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

    # --- keys ------------------------------------------------------------------------------

    def armed(self, now: float | None = None) -> bool:
        return (time.monotonic() if now is None else now) - self.shown_at >= ARM_DELAY

    def _done(self, answer: Answer) -> None:
        if not self.answer.done():
            self.answer.set_result(answer)

    def type(self, text: str, *, paste: bool = False) -> None:
        """Typed text: a digit with no text yet is a choice; anything else, and anything pasted,
        starts (or continues) the words of a "No"."""
        for ch in text.replace("\r", " ").replace("\n", " "):
            if not ch.isprintable():
                continue
            if not self.text and ch.isdigit() and 1 <= int(ch) <= len(self.choices) and not paste:
                self.choose(int(ch) - 1)
                return
            if not self.text and ch.isdigit() and not paste:
                continue  # not a choice, and no words started yet
            self.text += ch
            self.selected = self.no

    def choose(self, i: int) -> None:
        self.selected = i
        self._done(Answer(self.kinds[i], self.text.strip() if i == self.no else ""))

    def enter(self) -> None:
        self.choose(self.selected)

    def escape(self) -> None:
        self._done(Answer("no", self.text.strip()))  # the words typed so far are not lost

    def backspace(self) -> None:
        self.text = self.text[:-1]

    def move(self, delta: int) -> None:
        self.selected = max(0, min(self.no, self.selected + delta))

    def scroll_by(self, pages: int) -> None:
        self.scroll += pages * max(1, self.page - 1)  # render clamps it

    # --- drawing ---------------------------------------------------------------------------------

    def rows(self, width: int, height: int, now: float | None = None) -> list[Line]:
        """The dialog as screen rows of at most `width` cells, at most `height` rows (the diff
        scrolls inside it)."""
        width = max(width, 20)
        p = self.preview
        head = [[("bold", f" {p.title}"), ("ansibrightblack", f"  ({p.summary})" if p.summary else "")]]
        tail: list[Line] = [[("bold", f" Do you want to allow this {shown(self.name)}?")]]
        for i, label in enumerate(self.choices):
            mark, style = ("❯", "ansicyan bold") if i == self.selected else (" ", "")
            text = f" {mark} {i + 1}. {label}"
            if i == self.no and self.text:
                text = f" {mark} {i + 1}. No, and tell the model: {shown(self.text)}▌"
            tail.append([(style, text)])
        if self.armed(now):
            tail.append([("ansibrightblack", f" ↑/↓ + Enter or 1-{self.no + 1} · Esc = No · typing starts a "
                                             "\"No\" with your words · PgUp/PgDn scroll")])
        else:
            tail.append([("ansibrightblack", " …")])
        body = [r for ln in p.lines for r in wrap([("", "  "), *ln], width, indent=10)]
        return layout(self, head, body, tail, width, height)

    def formatted(self, width: int, height: int) -> list[tuple[str, str]]:
        return toolbar_text(self.rows(width, height), width)


class Scrolls(Protocol):
    """What `layout` keeps of a dialog between draws: the first body row shown, rows per page."""

    scroll: int
    page: int


def layout(d: Scrolls, head: list[Line], body: list[Line], tail: list[Line], width: int, height: int) -> list[Line]:
    """A dialog's rows: a rule, `head` and `tail` (wrapped to `width`) around `body` (already
    wrapped), which scrolls inside `height` rows (d.scroll, clamped here; d.page set here)."""
    head = [r for ln in head for r in wrap(ln, width)]
    tail = [r for ln in tail for r in wrap(ln, width)]
    room = max(3, height - len(head) - len(tail) - 2)
    rule: Line = [("ansibrightblack", "─" * width)]
    if len(body) <= room:
        d.scroll = 0
        d.page = len(body)
        return [rule, *head, *body, *tail]
    d.page = room - 1
    d.scroll = max(0, min(d.scroll, len(body) - d.page))
    shown_rows = body[d.scroll:d.scroll + d.page]
    where: Line = [("ansibrightblack reverse", f" lines {d.scroll + 1}-{d.scroll + len(shown_rows)} of "
                                               f"{len(body)} · PgUp/PgDn to scroll ")]
    return [rule, *head, *shown_rows, where, *tail]


def toolbar_text(rows: list[Line], width: int) -> list[tuple[str, str]]:
    """Rows as one prompt_toolkit formatted text for the bottom toolbar. Every fragment is
    `noreverse` and each row is padded to the full width: the toolbar's own style is reverse video."""
    out: list[tuple[str, str]] = []
    for i, row in enumerate(rows):
        if i:
            out.append(("noreverse", "\n"))
        used = 0
        for style, text in row:
            out.append((f"noreverse {style}".strip(), text))
            used += cells(text)
        out.append(("noreverse", " " * max(0, width - used)))
    return out


def cells(text: str) -> int:
    from prompt_toolkit.utils import get_cwidth

    return get_cwidth(text)


def wrap(line: Line, width: int, indent: int = 3) -> list[Line]:
    """`line` cut into rows of at most `width` cells; later rows start with `indent` spaces."""
    from prompt_toolkit.utils import get_cwidth

    rows: list[Line] = [[]]
    used = 0
    for style, text in line:
        chunk = ""
        for ch in text:
            w = get_cwidth(ch)
            if used + w > width:
                if chunk:
                    rows[-1].append((style, chunk))
                rows.append([("", " " * indent)])
                used, chunk = indent, ""
            chunk += ch
            used += w
        if chunk:
            rows[-1].append((style, chunk))
    return rows


# --- the question, asked through the dialog -------------------------------------------------------

class PermissionAsker:
    """The REPL's can_use_tool: one dialog at a time, and what "don't ask again" approved.

    "Don't ask again" adds the suggested rules (Permissions.suggest_rules) to this session's
    allow rules (this run's later calls and every later run), and saves them to
    .loopwright/settings.local.json when the session reads that file. When no rule is narrow
    enough, it remembers that exact call for this session. Under managed settings'
    allowManagedPermissionRulesOnly it is not offered, and nothing is remembered (`closed`)."""

    def __init__(self, options: Any, say: Callable[[str], None], client: Any = None) -> None:
        self.options = options
        self.say = say
        self.client = client
        self.granted = SessionRules(self.cwd, list(options.add_dirs or []))  # "don't ask again"'s rules
        self.exact: set[str] = set()
        self.dialog: PermissionDialog | None = None
        self._lock = asyncio.Lock()

    @property
    def cwd(self) -> Path:
        return Path(str(self.options.cwd or ".")).resolve()

    def saves(self) -> bool:
        return "local" in (self.options.setting_sources or [])

    def closed(self) -> bool:
        """Whether managed settings' allowManagedPermissionRulesOnly is in force (read at each
        question, as the SDK protocol's asker does): only the managed rules count, so "don't ask
        again" is not offered and an answer of it approves this call only. Claude Code hides it
        too; a rule it saved would be ignored, and one it kept for the session would approve what
        the organization's rules ask about."""
        from ..managed import rules_only

        return rules_only(getattr(self.options, "managed_settings", None))

    def approved(self, name: str, tool_input: dict[str, Any]) -> bool:
        return _key(name, tool_input) in self.exact or self.granted.covers(name, tool_input)

    async def ask(self, name: str, tool_input: dict[str, Any]) -> Allow | Deny:
        async with self._lock:  # parallel calls: one question at a time
            closed = self.closed()
            if not closed and self.approved(name, tool_input):
                return Allow()
            # Leaving the OS sandbox: "don't ask again" remembers this exact call only (a rule
            # would approve the command's later escapes along with its runs in the box).
            escape = name == "Bash" and isinstance(tool_input, dict) and tool_input.get("dangerouslyDisableSandbox")
            rules = [] if escape is True or closed else self.granted.suggest(name, tool_input)
            where = f"(saved to {LOCAL_SETTINGS})" if self.saves() else "(this session)"
            label = None if closed else (
                f"Yes, and don't ask again for {', '.join(shown(r) for r in rules)} {where}" if rules
                else "Yes, and don't ask again for this exact call (this session)")
            preview = await asyncio.to_thread(permission_preview, name, tool_input, self.cwd)
            self.dialog = PermissionDialog(name, preview, label)
            try:
                answer = await self.dialog.answer
            finally:
                self.dialog = None
            return self._apply(answer, name, tool_input, rules, closed)

    def _apply(self, answer: Answer, name: str, tool_input: dict[str, Any], rules: list[str],
               closed: bool = False) -> Allow | Deny:
        from .render import describe_input

        call = f"{name}({describe_input(name, tool_input, self.cwd)})"
        if answer.choice == "no":
            if answer.message:
                self.say(f"  ✗ refused {call}: {shown(answer.message)}")
                return Deny(f"The user refused this {name} call (it did not run), and said: {answer.message}")
            self.say(f"  ✗ refused {call}")
            return Deny(f"The user refused {name}. Ask them how to proceed.")
        if answer.choice == "always" and closed:  # (an editor may answer what it was not offered)
            self.say(f"  ✓ approved {call} this once: permission rules are restricted to managed settings "
                     "(allowManagedPermissionRulesOnly)")
        elif answer.choice == "always":
            if rules:
                self.remember(rules)
            else:
                self.exact.add(_key(name, tool_input))
                self.say(f"  ✓ approved {call}; this exact call will not be asked again in this session")
        else:
            self.say(f"  ✓ approved {call}")
        return Allow()

    def remember(self, rules: list[str]) -> None:
        from ..settings import SettingsError, add_local_allow_rules

        self.granted.add(rules)
        if self.client is not None:  # later runs: the gate itself approves them
            o = self.client.options
            self.client.options = replace(o, allowed_tools=[*o.allowed_tools, *(r for r in rules
                                                                                if r not in o.allowed_tools)])
        listed = ", ".join(shown(r) for r in rules)
        if not self.saves():
            self.say(f"  ✓ approved; {listed} allowed for this session")
            return
        try:
            path = add_local_allow_rules(self.cwd, rules)
        except SettingsError as e:
            self.say(f"  ✓ approved; {listed} allowed for this session, but not saved: {shown(str(e))}")
            return
        self.say(f"  ✓ approved; {listed} saved to {shown(str(path))}")

    def cancel(self) -> None:
        """An interrupt: the open question is answered No."""
        if self.dialog is not None:
            self.dialog.escape()


def _key(name: str, tool_input: dict[str, Any]) -> str:
    return json.dumps([name, tool_input], sort_keys=True, ensure_ascii=False, default=str)


def dialog_bindings(get: Callable[[], PermissionDialog | None]) -> Any:
    """Key bindings that send keys to the open dialog once it is armed (before that, and with
    no dialog, they do nothing and the keys go to the input box)."""
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    kb = KeyBindings()
    active = Condition(lambda: (d := get()) is not None and d.armed())

    def on(*keys: str | Keys, act: Callable[[PermissionDialog, Any], None]) -> None:
        @kb.add(*keys, filter=active)
        def _(event: Any) -> None:
            d = get()
            if d is not None:
                act(d, event)
                event.app.invalidate()

    on(Keys.Any, act=lambda d, e: d.type(e.data))
    on(Keys.BracketedPaste, act=lambda d, e: d.type(e.data, paste=True))
    on("enter", act=lambda d, e: d.enter())
    on("escape", act=lambda d, e: d.escape())
    on("up", act=lambda d, e: d.move(-1))
    on("down", act=lambda d, e: d.move(1))
    on("pageup", act=lambda d, e: d.scroll_by(-1))
    on("pagedown", act=lambda d, e: d.scroll_by(1))
    on("backspace", act=lambda d, e: d.backspace())
    on("c-u", act=lambda d, e: setattr(d, "text", ""))
    return kb
