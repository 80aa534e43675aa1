"""Room: cli. Owns the interactive question and plan dialogs (QuestionDialog, PlanDialog,
UserAsker: the REPL's interaction.AskUser and ReviewPlan); may import the rooms below cli and
cli.dialog.

AskUserQuestion, one dialog per question, drawn where the permission dialog is:

     Library  Which date library should we use?              (1 of 2)
    ❯ 1. arrow  friendly API
      2. pendulum  timezones done right
      3. Other: type your own answer
    ↑/↓ + Enter or 1-3 · Esc = decline · typing starts your own answer

ExitPlanMode: the plan (scrollable), then 1 Yes, auto-accept edits / 2 Yes, approve each edit /
3 No, keep planning (letters typed start the feedback).

The consent rules are the permission dialog's (cli/dialog.py): a dialog takes keys only after
ARM_DELAY (keys before that go on into the input box), each question is armed anew, only a
digit or Enter on a choice the arrows moved to answers, and letters start the user's own words,
which only Enter sends. In a multiSelect question digits and Space toggle, Enter submits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ..interaction import (
    Answered,
    Declined,
    PlanApproved,
    PlanRefused,
    PlanReply,
    Question,
    QuestionReply,
)
from .dialog import ARM_DELAY, layout, toolbar_text, wrap
from .preview import Line, shown


class _Dialog:
    """What the two dialogs share: arming, the selection, the user's own words, drawing."""

    def __init__(self, choices: list[str], *, now: float | None = None) -> None:
        self.choices = choices
        self.selected = 0
        self.text = ""  # the user's own words, once typing started them
        self.scroll = 0
        self.page = 10
        self.shown_at = time.monotonic() if now is None else now

    @property
    def other(self) -> int:
        return len(self.choices) - 1  # the last choice takes the user's own words

    def armed(self, now: float | None = None) -> bool:
        return (time.monotonic() if now is None else now) - self.shown_at >= ARM_DELAY

    def choose(self, i: int) -> None:
        raise NotImplementedError

    def toggle(self, i: int) -> bool:
        """A multiSelect question toggles choice i (True); others do not (False)."""
        return False

    def type(self, text: str, *, paste: bool = False) -> None:
        for ch in text.replace("\r", " ").replace("\n", " "):
            if not ch.isprintable():
                continue
            if not self.text and not paste and ch.isdigit():
                i = int(ch) - 1
                if 0 <= i < len(self.choices) and not self.toggle(i):
                    self.choose(i)
                    return
                continue  # not a choice, and no words started yet
            if not self.text and not paste and ch == " " and self.toggle(self.selected):
                continue
            if not self.text and ch == " ":
                continue
            self.text += ch
            self.selected = self.other

    def enter(self) -> None:
        self.choose(self.selected)

    def backspace(self) -> None:
        self.text = self.text[:-1]

    def move(self, delta: int) -> None:
        self.selected = max(0, min(self.other, self.selected + delta))

    def scroll_by(self, pages: int) -> None:
        self.scroll += pages * max(1, self.page - 1)

    def head(self) -> list[Line]:
        raise NotImplementedError

    def body(self) -> list[Line]:
        return []

    def labels(self) -> list[str]:
        return self.choices

    def hint(self) -> str:
        raise NotImplementedError

    def rows(self, width: int, height: int, now: float | None = None) -> list[Line]:
        width = max(width, 20)
        tail: list[Line] = []
        for i, label in enumerate(self.labels()):
            mark, style = ("❯", "ansicyan bold") if i == self.selected else (" ", "")
            if i == self.other and self.text:
                label = f"{label.split(':')[0]}: {shown(self.text)}▌"
            tail.append([(style, f" {mark} {i + 1}. {label}")])
        tail.append([("ansibrightblack", f" {self.hint()}" if self.armed(now) else " …")])
        body = [r for ln in self.body() for r in wrap([("", "  "), *ln], width, indent=4)]
        return layout(self, self.head(), body, tail, width, height)

    def formatted(self, width: int, height: int) -> list[tuple[str, str]]:
        return toolbar_text(self.rows(width, height), width)


class QuestionDialog(_Dialog):
    """One question. `answer`: the chosen label(s) or the user's words; None: declined."""

    def __init__(self, q: Question, index: int, count: int, *, now: float | None = None) -> None:
        super().__init__([o.label for o in q.options] + ["Other: type your own answer"], now=now)
        self.q = q
        self.index, self.count = index, count
        self.checked: set[int] = set()
        self.answer: asyncio.Future[tuple[str | None, str]] = asyncio.get_running_loop().create_future()

    def _done(self, value: str | None) -> None:
        if not self.answer.done():
            self.answer.set_result((value, self.text.strip()))

    def toggle(self, i: int) -> bool:
        if not self.q.multi_select or i == self.other:
            return False
        self.checked ^= {i}
        self.selected = i
        return True

    def choose(self, i: int) -> None:
        self.selected = i
        if i == self.other:
            if self.text.strip():
                self._done(self.text.strip())
            return  # "Other" with no words yet: type them first
        if self.q.multi_select:
            picked = sorted(self.checked) or [i]
            self._done(", ".join(self.q.options[j].label for j in picked))
        else:
            self._done(self.q.options[i].label)

    def escape(self) -> None:
        self._done(None)

    def head(self) -> list[Line]:
        where = f"  ({self.index + 1} of {self.count})" if self.count > 1 else ""
        return [[("ansiblack bg:ansicyan", f" {shown(self.q.header)} "), ("bold", f" {shown(self.q.question)}"),
                 ("ansibrightblack", where)]]

    def labels(self) -> list[str]:
        out = []
        for i, o in enumerate(self.q.options):
            box = ("[x] " if i in self.checked else "[ ] ") if self.q.multi_select else ""
            out.append(f"{box}{shown(o.label)}" + (f"  {shown(o.description)}" if o.description else ""))
        return [*out, self.choices[-1]]

    def body(self) -> list[Line]:
        if self.selected < len(self.q.options) and self.q.options[self.selected].preview:
            return [[("ansibrightblack", shown(ln))] for ln in str(self.q.options[self.selected].preview).splitlines()]
        return []

    def hint(self) -> str:
        n = len(self.choices)
        if self.q.multi_select:
            return (f"Space or 1-{n - 1} toggles · Enter submits · Esc = decline · typing starts your own answer")
        return f"↑/↓ + Enter or 1-{n} · Esc = decline · typing starts your own answer"


PLAN_CHOICES = ["Yes, and auto-accept edits", "Yes, and approve each edit", "No, keep planning (type what to change)"]


class PlanDialog(_Dialog):
    """The plan and three choices. `answer`: PlanApproved(mode) or PlanRefused(feedback)."""

    def __init__(self, plan: str, *, now: float | None = None) -> None:
        super().__init__(list(PLAN_CHOICES), now=now)
        self.plan = plan
        self.answer: asyncio.Future[PlanReply] = asyncio.get_running_loop().create_future()

    def _done(self, reply: PlanReply) -> None:
        if not self.answer.done():
            self.answer.set_result(reply)

    def choose(self, i: int) -> None:
        self.selected = i
        if i == 0:
            self._done(PlanApproved("acceptEdits"))
        elif i == 1:
            self._done(PlanApproved("default"))
        else:
            self._done(PlanRefused(self.text.strip()))

    def escape(self) -> None:
        self._done(PlanRefused(self.text.strip()))

    def head(self) -> list[Line]:
        return [[("bold", " Here is the plan:")]]

    def body(self) -> list[Line]:
        return [[("", shown(ln))] for ln in self.plan.splitlines()]

    def labels(self) -> list[str]:
        return [*self.choices[:-1], "No, keep planning, and tell the model: ..." if self.text else self.choices[-1]]

    def hint(self) -> str:
        return "↑/↓ + Enter or 1-3 · Esc = keep planning · typing starts what to change · PgUp/PgDn scroll"


class UserAsker:
    """The REPL's interaction ports: `ask` (AskUser) and `review_plan` (ReviewPlan), one dialog
    at a time. `on_mode(mode)` is called when a plan is approved (the REPL's later prompts run in
    that mode too)."""

    def __init__(self, say: Callable[[str], None], on_mode: Callable[[str], None]) -> None:
        self.say = say
        self.on_mode = on_mode
        self.dialog: QuestionDialog | PlanDialog | None = None
        self._lock = asyncio.Lock()

    async def ask(self, questions: tuple[Question, ...]) -> QuestionReply:
        async with self._lock:
            answers: dict[str, str] = {}
            for i, q in enumerate(questions):
                d = self.dialog = QuestionDialog(q, i, len(questions))
                try:
                    value, words = await d.answer
                finally:
                    self.dialog = None
                if value is None:
                    self.say(f"  ✗ declined: {shown(q.question)}" + (f" ({shown(words)})" if words else ""))
                    return Declined(words)
                answers[q.question] = value
                self.say(f"  ? {shown(q.header)}: {shown(value)}")
            return Answered(answers)

    async def review_plan(self, plan: str) -> PlanReply:
        async with self._lock:
            d = self.dialog = PlanDialog(plan)
            try:
                reply = await d.answer
            finally:
                self.dialog = None
            if isinstance(reply, PlanApproved):
                self.on_mode(reply.mode)
                self.say(f"  ✓ plan approved; permission mode: {reply.mode}")
            else:
                self.say("  ✗ plan refused; still planning" + (f": {shown(reply.feedback)}" if reply.feedback else ""))
            return reply

    def cancel(self) -> None:
        """An interrupt: the open question is declined, the open plan refused."""
        if self.dialog is not None:
            self.dialog.escape()
