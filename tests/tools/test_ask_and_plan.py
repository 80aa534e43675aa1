"""AskUserQuestion and ExitPlanMode through the loop: the ports (interaction.py) a front end gives,
and what a headless run does with nobody to ask."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.interaction import Answered, Declined, PlanApproved, PlanRefused, Question
from tests.helpers import result_text, text, use

Q = {"question": "Which date library should we use?", "header": "Library", "multiSelect": False,
     "options": [{"label": "arrow", "description": "friendly API"},
                 {"label": "pendulum", "description": "timezones done right"}]}
Q2 = {"question": "Which checks do you want?", "header": "Checks", "multiSelect": True,
      "options": [{"label": "ruff", "description": "lint"}, {"label": "mypy", "description": "types"},
                  {"label": "pytest", "description": "tests"}]}


def _results(r: lw.ResultMessage) -> list[dict[str, Any]]:
    return [b for m in r.messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def _run(tmp: Path, turns: list[Any], **kw: Any) -> lw.ResultMessage:
    return lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=lw.default_tools(), cwd=tmp, **kw))


def test_headless_ask_is_an_error_that_says_nobody_can_answer(tmp_path: Path) -> None:
    r = _run(tmp_path, [[use("q1", "AskUserQuestion", questions=[Q])], [text("I assumed arrow.")]],
             permission_mode="default")
    assert r.subtype == "success" and r.result == "I assumed arrow."
    (res,) = _results(r)
    assert res["is_error"] and "Nobody can answer questions" in result_text(res)
    assert r.permission_denials == []  # not a refusal by the gate: the tool answered


def test_the_ask_port_gets_typed_questions_and_its_answers_reach_the_model(tmp_path: Path) -> None:
    seen: list[tuple[Question, ...]] = []

    async def ask(questions: tuple[Question, ...]) -> Answered:
        seen.append(questions)
        return Answered({Q["question"]: "pendulum", Q2["question"]: "ruff, pytest"})

    r = _run(tmp_path, [[use("q1", "AskUserQuestion", questions=[Q, Q2])], [text("ok")]], ask_user=ask,
             permission_mode="dontAsk")  # never asks for permission: the tool changes nothing
    (qs,) = seen
    assert [q.header for q in qs] == ["Library", "Checks"] and [q.multi_select for q in qs] == [False, True]
    assert [o.label for o in qs[1].options] == ["ruff", "mypy", "pytest"]
    (res,) = _results(r)
    assert not res.get("is_error")
    assert result_text(res) == ('User has answered your questions: "Which date library should we use?"="pendulum", '
                                '"Which checks do you want?"="ruff, pytest". You can now continue with the '
                                "user's answers in mind.")


def test_declined_questions_and_bad_ones_are_errors(tmp_path: Path) -> None:
    async def ask(questions: tuple[Question, ...]) -> Declined:
        return Declined("just pick one")

    bad = {**Q, "options": [Q["options"][0]]}  # one option: the schema wants 2-4
    r = _run(tmp_path, [[use("q1", "AskUserQuestion", questions=[Q])], [use("q2", "AskUserQuestion", questions=[bad])],
                        [use("q3", "AskUserQuestion", questions=[Q, Q])], [text("ok")]], ask_user=ask)
    a, b, c = _results(r)
    assert a["is_error"] and "declined" in result_text(a) and "just pick one" in result_text(a)
    assert b["is_error"] and "Invalid input" in result_text(b)
    assert c["is_error"] and "must be different" in result_text(c)


def test_answers_given_in_the_input_are_not_asked_again(tmp_path: Path) -> None:
    """The Agent SDK's way: the client's can_use_tool asks the user and returns updatedInput with answers."""
    def can_use(name: str, x: dict[str, Any]) -> lw.Allow:
        return lw.Allow({**x, "answers": {Q["question"]: "arrow"}}) if name == "AskUserQuestion" else lw.Allow()

    r = _run(tmp_path, [[use("q1", "AskUserQuestion", questions=[Q])], [text("ok")]], can_use_tool=can_use)
    (res,) = _results(r)
    assert not res.get("is_error") and '"Which date library should we use?"="arrow"' in result_text(res)


PLAN = "1. Add a test for parse_date\n2. Fix parse_date to accept ISO weeks"


def _plan_turns(f: Path) -> list[Any]:
    return [[use("r1", "Read", file_path=str(f))],
            [use("w0", "Write", file_path=str(f), content="too early\n")],  # plan mode: refused
            [use("p1", "ExitPlanMode", plan=PLAN)],
            [use("w1", "Write", file_path=str(f), content="changed\n")],
            [text("done")]]


def test_headless_plan_mode_ends_with_the_plan_as_the_result(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("original\n")
    r = _run(tmp_path, _plan_turns(f), permission_mode="plan")
    assert r.subtype == "success" and r.result == PLAN and r.num_turns == 3
    assert f.read_text() == "original\n"  # nothing after the plan ran
    assert [d["tool_name"] for d in r.permission_denials] == ["Write"]


def test_an_approved_plan_goes_on_in_the_chosen_mode(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("original\n")
    plans: list[str] = []

    async def review(plan: str) -> PlanApproved:
        plans.append(plan)
        return PlanApproved("acceptEdits")

    r = _run(tmp_path, _plan_turns(f), permission_mode="plan", review_plan=review)
    assert plans == [PLAN] and r.subtype == "success" and r.result == "done"
    assert f.read_text() == "changed\n"  # acceptEdits: the Write after the approval ran
    res = _results(r)
    assert "approved your plan" in result_text(res[2]) and "acceptEdits" in result_text(res[2])


def test_a_refused_plan_stays_in_plan_mode_with_the_feedback(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("original\n")

    async def review(plan: str) -> PlanRefused:
        return PlanRefused("write the test first, in tests/")

    r = _run(tmp_path, _plan_turns(f), permission_mode="plan", review_plan=review)
    assert f.read_text() == "original\n"
    res = _results(r)
    assert res[2]["is_error"] and "write the test first" in result_text(res[2])
    assert [d["tool_name"] for d in r.permission_denials] == ["Write", "Write"]  # still plan mode


def test_exit_plan_mode_outside_plan_mode_is_an_error(tmp_path: Path) -> None:
    r = _run(tmp_path, [[use("p1", "ExitPlanMode", plan=PLAN)], [text("ok")]], permission_mode="default")
    (res,) = _results(r)
    assert res["is_error"] and "not in plan mode" in result_text(res) and r.result == "ok"


def test_plan_mode_tells_the_model_how_it_ends(tmp_path: Path) -> None:
    from loopwright.tools.ask import PLAN_REMINDER
    from tests.helpers import Recording

    for mode, told in (("plan", True), ("default", False)):
        rec = Recording([[text("ok")]])
        lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(rec), tools=lw.default_tools(), cwd=tmp_path,
                                     permission_mode=mode))  # type: ignore[arg-type]
        assert ({"type": "text", "text": PLAN_REMINDER} in rec.seen[0][0]["content"]) is told
