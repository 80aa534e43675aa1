"""The interactive dialogs for AskUserQuestion and ExitPlanMode (cli/questions.py): their keys in
process, and the REPL in a real terminal (tmux, on its own -L socket) against a scripted model."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli.dialog import ARM_DELAY
from loopwright.cli.questions import PlanDialog, QuestionDialog
from loopwright.interaction import PlanApproved, PlanRefused, Question
from loopwright.sessions import load_transcript
from tests.cli.test_interactive import Term as _Term
from tests.helpers import LOOPWRIGHT_BIN, bash, text, use, write_script
from tests.tools.test_ask_and_plan import Q2, Q

# --- the keys, in process ------------------------------------------------------------------------

def _answer(q: dict[str, Any], *steps: str) -> tuple[str | None, str] | None:
    async def go() -> tuple[str | None, str] | None:
        d = QuestionDialog(Question.from_input(q), 0, 1)
        for s in steps:
            {"<enter>": d.enter, "<esc>": d.escape, "<down>": lambda: d.move(1),
             "<bs>": d.backspace}.get(s, lambda: d.type(s))()  # noqa: B023
        return d.answer.result() if d.answer.done() else None

    return asyncio.run(go())


def test_question_keys() -> None:
    assert _answer(Q, "2") == ("pendulum", "")
    assert _answer(Q, "<down>") is None  # moving selects nothing yet
    assert _answer(Q, "<down>", "<enter>") == ("pendulum", "")
    assert _answer(Q, "use dateutil", "<enter>") == ("use dateutil", "use dateutil")  # "Other": own words
    assert _answer(Q, "v2 please") is None  # words, not sent until Enter
    assert _answer(Q, "x", "2") is None  # a digit inside words is text
    assert _answer(Q, "3", "<enter>") is None  # "Other" with no words answers nothing
    assert _answer(Q, "no idea", "<esc>") == (None, "no idea")  # Esc declines, the words kept
    assert _answer(Q2, "1", "3") is None  # multiSelect: digits toggle ...
    assert _answer(Q2, "1", "3", "<enter>") == ("ruff, pytest", "")  # ... Enter submits
    assert _answer(Q2, "1", "1", " ", "<enter>") == ("ruff", "")  # toggled off, Space toggles the focused one


def test_plan_keys_and_rows() -> None:
    async def go(*steps: str) -> Any:
        d = PlanDialog("step one\nstep two")
        for s in steps:
            {"<enter>": d.enter, "<esc>": d.escape}.get(s, lambda: d.type(s))()  # noqa: B023
        return d.answer.result() if d.answer.done() else d

    assert asyncio.run(go("1")) == PlanApproved("acceptEdits")
    assert asyncio.run(go("2")) == PlanApproved("default")
    assert asyncio.run(go("tests first", "<enter>")) == PlanRefused("tests first")
    assert asyncio.run(go("<esc>")) == PlanRefused("")
    d = asyncio.run(go())
    rows = ["".join(t for _, t in r) for r in d.rows(80, 20, now=d.shown_at + ARM_DELAY)]
    assert "  step one" in rows and "  step two" in rows and " ❯ 1. Yes, and auto-accept edits" in rows
    early = ["".join(t for _, t in r) for r in d.rows(80, 20, now=d.shown_at)]
    assert early[-1] == " …" and not d.armed(d.shown_at)  # not taking keys yet


# --- in a terminal ---------------------------------------------------------------------------------

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


class Term(_Term):
    """A tmux pane on this test's own server (-L)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.sock = f"lwq-{name}"

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True, timeout=10).stdout


@contextmanager
def repl(tmp_path: Path, turns: list[Any], *args: str) -> Iterator[Term]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(exist_ok=True)
    model = write_script(tmp_path, turns)
    t = Term(uuid.uuid4().hex[:8])
    env = f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={home}"
    quoted = " ".join(f"'{a}'" for a in args)
    t.tmux("new-session", "-d", "-s", t.name, "-x", "150", "-y", "50", "-c", str(work),
           f"{env} {LOOPWRIGHT_BIN} --model {model} {quoted}")
    try:
        t.wait("Ctrl-C twice to exit")
        yield t
    finally:
        t.tmux("kill-server")


def _results(tmp_path: Path) -> dict[str, dict[str, Any]]:
    h = load_transcript(next((tmp_path / "home" / "projects").rglob("*.jsonl"))).history
    return {b["tool_use_id"]: b for m in h if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"}


def _text(b: dict[str, Any]) -> str:
    c = b["content"]
    return c if isinstance(c, str) else "".join(x.get("text", "") for x in c)


def _prompt_line(t: Term) -> str:
    return [ln for ln in t.screen().splitlines() if ln.startswith("›")][-1]


@pytest.mark.e2e
@needs_tmux
def test_questions_in_the_terminal_and_typing_ahead_never_answers(tmp_path: Path) -> None:
    turns = [[bash("sleep 2; echo slept", "b1")],
             [use("q1", "AskUserQuestion", questions=[Q, Q2])],
             [text("thanks, noted")]]
    with repl(tmp_path, turns, "--allowedTools", "Bash(sleep:*)") as t:
        t.type("go")
        t.keys("Enter")
        t.wait("⏺ Bash(sleep 2; echo slept)")
        t.type("2 of them")  # typed ahead, starting with a digit that would pick "pendulum"
        t.wait("› 2 of them")
        s = t.wait("1. arrow  friendly API")  # the dialog (the trace line above names the questions too)
        assert " Library  Which date library should we use?  (1 of 2)" in s and "3. Other: type your own answer" in s
        t.wait("Esc = decline")  # armed
        assert _prompt_line(t) == "› 2 of them"  # the typed-ahead text stayed in the input box
        t.keys("2")
        assert " Checks  Which checks do you want?" in t.wait("(2 of 2)")
        t.wait("? Library: pendulum")
        t.wait("Space or 1-3 toggles")
        t.keys("1")
        t.keys("3")
        t.wait("[x] pytest")
        t.keys("Enter")
        t.wait("thanks, noted")
        assert _prompt_line(t) == "› 2 of them"
    res = _results(tmp_path)["q1"]
    assert not res.get("is_error")
    assert '"Which date library should we use?"="pendulum"' in _text(res)
    assert '"Which checks do you want?"="ruff, pytest"' in _text(res)


@pytest.mark.e2e
@needs_tmux
def test_plan_refused_with_feedback_then_approved_in_the_terminal(tmp_path: Path) -> None:
    target = tmp_path / "work" / "notes.txt"
    turns = [[use("p1", "ExitPlanMode", plan="1. Write notes.txt\n2. Done")],
             [use("p2", "ExitPlanMode", plan="1. Add a test\n2. Write notes.txt")],
             [use("w1", "Write", file_path=str(target), content="planned\n")],
             [text("all done")]]
    with repl(tmp_path, turns, "--permission-mode", "plan") as t:
        t.type("plan it")
        t.keys("Enter")
        s = t.wait("Here is the plan:")
        assert "1. Write notes.txt" in s
        t.wait("Esc = keep planning")
        t.type("add a test first")
        t.wait("No, keep planning, and tell the model: add a test first▌")
        t.keys("Enter")
        t.wait("plan refused; still planning: add a test first")
        t.wait("1. Add a test")
        t.wait("Esc = keep planning")
        t.keys("1")  # auto-accept edits: the Write after it runs without a permission question
        t.wait("all done")
        assert "Do you want to allow" not in t.screen()
    assert target.read_text() == "planned\n"
    res = _results(tmp_path)
    assert res["p1"]["is_error"] and "add a test first" in _text(res["p1"])
    assert "approved your plan" in _text(res["p2"]) and not res["w1"].get("is_error")


@pytest.mark.e2e
def test_print_mode_questions_are_an_error_and_a_plan_is_the_result(tmp_path: Path) -> None:
    from tests.helpers import cli_env, loopwright_cmd

    turns = [[use("q1", "AskUserQuestion", questions=[Q])], [use("p1", "ExitPlanMode", plan="the plan")],
             [text("not reached")]]
    out = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", write_script(tmp_path, turns),
                          "--permission-mode", "plan", "--output-format", "json"], cwd=tmp_path, env=cli_env(),
                         capture_output=True, text=True, timeout=60)
    r = json.loads(out.stdout)
    assert r["subtype"] == "success" and r["result"] == "the plan" and r["num_turns"] == 2, out.stdout


def test_trace_lines_and_the_notebook_edit_preview(tmp_path: Path) -> None:
    from loopwright.cli.preview import permission_preview
    from loopwright.cli.render import describe_input

    nb = {"notebook_path": str(tmp_path / "a.ipynb"), "cell_id": "c1", "new_source": "x = 1\ny = 2"}
    p = permission_preview("NotebookEdit", nb, tmp_path)
    assert (p.title, p.summary) == ("NotebookEdit a.ipynb", "replace cell c1")
    assert ["".join(t for _, t in ln) for ln in p.lines] == ["x = 1", "y = 2"]
    assert describe_input("NotebookEdit", nb, tmp_path) == "a.ipynb: replace c1"
    assert describe_input("AskUserQuestion", {"questions": [Q, Q2]}, tmp_path) == (
        "Which date library should we use?; Which checks do you want?")
    assert describe_input("ExitPlanMode", {"plan": "1. test\n2. fix"}, tmp_path) == "1. test"
