"""Every change to a call's input is judged again (issue 40 finding 6): whatever rewrites a tool
input (a PreToolUse hook's updatedInput, can_use_tool's), nothing a deny rule matches runs. A
rewrite in place (the callback or hook editing the input dict it was given, returning no
updatedInput) is a rewrite too (issue 41's attack: it ran unjudged)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.hooks import Hooks
from loopwright.tools.builtin import default_tools
from tests.helpers import first_tool_result, text, use

HOME = os.path.expanduser("~")
ELSEWHERE = "/tmp/loopwright-rewrite-elsewhere/x.txt"
# Each path the rewriters may point a Write at, and which of the deny rules below matches it
# (written out by hand, not computed by the gate under test).
PATHS = ["a.txt", "src/b.txt", "secret/k.txt", "~/.bashrc", ELSEWHERE]
RULES = {
    "Write(./secret/**)": {"secret/k.txt"},
    "Edit(./secret/**)": {"secret/k.txt"},
    "Write(~/.bashrc)": {"~/.bashrc"},
    "Edit(~/.bashrc)": {"~/.bashrc"},
    "Edit(//tmp/loopwright-rewrite-elsewhere/**)": {ELSEWHERE},
}


def recording_write(ran: list[str]) -> lw.Tool:
    """A Write that records the path it was asked to write instead of writing it."""
    def record(x: dict[str, Any]) -> str:
        ran.append(x["file_path"])
        return "written"

    return lw.Tool("Write", "records", {"type": "object", "properties": {"file_path": {"type": "string"},
                                                                          "content": {"type": "string"}}},
                   record)


def hook_rewriting_to(target: str, in_place: bool = False) -> Any:
    """A PreToolUse hook that points the Write at `target` (`in_place`: by editing the input it is given)."""
    def rewrite(data: dict[str, Any]) -> dict[str, Any]:
        if in_place:
            data["tool_input"].update(file_path=target, content="x")
            return {}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "updatedInput": {"file_path": target, "content": "x"}}}

    return rewrite


@settings(max_examples=60, deadline=None)
@given(first=st.sampled_from(PATHS),
       hook_rewrites=st.lists(st.sampled_from(PATHS), max_size=2),
       answer_rewrite=st.one_of(st.none(), st.sampled_from(PATHS)),
       rule=st.sampled_from(sorted(RULES)),
       mode=st.sampled_from(["default", "acceptEdits", "bypassPermissions"]),
       in_place=st.booleans())
def test_no_sequence_of_rewriters_runs_what_a_deny_rule_matches(
        first: str, hook_rewrites: list[str], answer_rewrite: str | None, rule: str, mode: str, in_place: bool) -> None:
    ran: list[str] = []
    hooks = Hooks()
    for target in hook_rewrites:
        hooks.on("PreToolUse", hook_rewriting_to(target, in_place), matcher="Write")

    asked: list[str] = []

    def answer(name: str, x: dict[str, Any]) -> Any:
        asked.append(x["file_path"])
        if answer_rewrite is None:
            return lw.Allow()
        if in_place:
            x["file_path"] = answer_rewrite
            return True
        return lw.Allow({"file_path": answer_rewrite, "content": "x"})

    with tempfile.TemporaryDirectory() as d:
        r = lw.run("go", lw.AgentOptions(
            model=lw.ScriptedModel([[use("u1", "Write", {"file_path": first, "content": "x"})], [text("done")]]),
            tools=[recording_write(ran)], cwd=str(Path(d)), permission_mode=mode,  # type: ignore[arg-type]
            disallowed_tools=[rule], can_use_tool=answer, hooks=hooks, setting_sources=[]))
    assert r.subtype == "success"
    assert not set(ran) & RULES[rule], (ran, rule)
    # Each hook sees the model's input: one that edits it in place to what it already was has not
    # rewritten it; the last rewrite in the hooks' order is the one judged.
    rewrites = [t for t in hook_rewrites if t != first] if in_place else hook_rewrites
    judged = rewrites[-1] if rewrites else first
    final = answer_rewrite if asked and answer_rewrite is not None else judged  # the answer rewrites only when asked
    if final in RULES[rule]:
        block = first_tool_result(r)
        assert block["is_error"] is True and rule in block["content"]


def test_can_use_tool_pointing_a_write_at_a_denied_path_is_refused_naming_the_rule(tmp_path: Path) -> None:
    # Before: the answer's updatedInput replaced the input after the decision; the Write ran.
    target = tmp_path / "home" / ".bashrc"
    target.parent.mkdir()
    rule = f"Write(/{target})"

    def answer(name: str, x: dict[str, Any]) -> Any:
        return lw.Allow({"file_path": str(target), "content": "evil"})

    project = tmp_path / "proj"
    project.mkdir()
    r = lw.run("go", lw.AgentOptions(
        model=lw.ScriptedModel([[use("u1", "Write", {"file_path": "ok.txt", "content": "fine"})], [text("done")]]),
        tools=default_tools(), cwd=str(project), permission_mode="default", disallowed_tools=[rule],
        can_use_tool=answer, setting_sources=[]))
    assert not target.exists() and not (project / "ok.txt").exists()
    block = first_tool_result(r)
    assert block["is_error"] is True and rule in block["content"]
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u1"]


def test_hooks_editing_the_input_in_place_each_edit_their_own_copy_and_the_last_in_order_wins(tmp_path: Path) -> None:
    """The hooks of an event run side by side. Both edited the one input in place, so the edit that
    ran was the slower hook's (here the first's): with a deny rule on it, whether the call ran
    depended on thread timing (a flaky case of the property above). Now each hook edits its own
    copy, sees the model's input, and the edits are rewrites taken in the hooks' order."""
    import time

    seen: list[str] = []

    def editing_to(target: str, delay: float) -> Any:
        def hook(data: dict[str, Any]) -> dict[str, Any]:
            seen.append(data["tool_input"]["file_path"])
            time.sleep(delay)
            data["tool_input"].update(file_path=target)
            return {}
        return hook

    hooks = Hooks()
    hooks.on("PreToolUse", editing_to("slow.txt", 0.3), matcher="Write")
    hooks.on("PreToolUse", editing_to("secret/k.txt", 0.0), matcher="Write")
    r, ran = _write_run(tmp_path, None, mode="acceptEdits", hooks=hooks, disallowed_tools=["Write(./secret/**)"])
    assert seen == ["ok.txt", "ok.txt"] and ran == []
    block = first_tool_result(r)
    assert block["is_error"] is True and "Write(./secret/**)" in block["content"]


def _write_run(tmp_path: Path, answer: Any, mode: str = "default", **kw: Any) -> tuple[lw.ResultMessage, list[str]]:
    ran: list[str] = []
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    r = lw.run("go", lw.AgentOptions(
        model=lw.ScriptedModel([[use("u1", "Write", {"file_path": "ok.txt", "content": "fine"})], [text("done")]]),
        tools=[recording_write(ran)], cwd=str(project), permission_mode=mode,  # type: ignore[arg-type]
        can_use_tool=answer, setting_sources=[], **kw))
    return r, ran


def test_a_rewrite_the_rules_ask_about_is_asked_about_again(tmp_path: Path) -> None:
    """The user approved ok.txt; the answer re-points the Write outside the working directory,
    which the rules ask about: the question comes again, about the new input, and its no holds."""
    outside = str(tmp_path / "elsewhere.txt")
    asked: list[str] = []

    def answer(name: str, x: dict[str, Any]) -> Any:
        asked.append(x["file_path"])
        return lw.Allow({"file_path": outside, "content": "x"}) if x["file_path"] == "ok.txt" else lw.Deny("no")

    r, ran = _write_run(tmp_path, answer)
    assert asked == ["ok.txt", outside] and ran == []
    assert first_tool_result(r)["is_error"] is True
    # approved the second time, the rewritten input runs
    r, ran = _write_run(tmp_path, lambda name, x: lw.Allow({"file_path": outside, "content": "x"}))
    assert ran == [outside]
    # approved the second time by a plain yes (no updatedInput): still the rewrite the question was
    # about, never the input the first answer replaced (before: ok.txt ran)
    answers = iter([lw.Allow({"file_path": outside, "content": "x"}), True])
    r, ran = _write_run(tmp_path, lambda name, x: next(answers))
    assert ran == [outside]


def test_an_answer_editing_the_input_in_place_is_judged_as_a_rewrite(tmp_path: Path) -> None:
    """can_use_tool edits the dict it was given instead of returning updatedInput: the edit is a
    rewrite, judged again (a deny rule refuses it), and a rewrite the rules allow runs as edited
    (nothing the callback wrote is ignored)."""
    def to(path: str) -> Any:
        def answer(name: str, x: dict[str, Any]) -> bool:
            x["file_path"] = path
            return True

        return answer

    r, ran = _write_run(tmp_path, to("secret/k.txt"), disallowed_tools=["Write(./secret/**)"])
    assert ran == []  # before: ran == ["secret/k.txt"], past the deny rule
    block = first_tool_result(r)
    assert block["is_error"] is True and "Write(./secret/**)" in block["content"]
    _, ran = _write_run(tmp_path, to("notes/ok.txt"))
    assert ran == ["notes/ok.txt"]


def test_a_rewrite_the_rules_approve_is_not_asked_again(tmp_path: Path) -> None:
    asked: list[str] = []

    def answer(name: str, x: dict[str, Any]) -> Any:
        asked.append(x["file_path"])
        return lw.Allow({"file_path": "notes/ok.txt", "content": "x"})

    _, ran = _write_run(tmp_path, answer, allowed_tools=["Write(./notes/**)"])
    assert asked == ["ok.txt"] and ran == ["notes/ok.txt"]


def test_an_answer_that_rewrites_at_every_question_is_refused(tmp_path: Path) -> None:
    n = iter(range(100))
    asked: list[str] = []

    def answer(name: str, x: dict[str, Any]) -> Any:
        asked.append(x["file_path"])
        return lw.Allow({"file_path": str(tmp_path / f"out{next(n)}.txt"), "content": "x"})

    r, ran = _write_run(tmp_path, answer)
    assert ran == [] and len(asked) == 4  # MAX_REWRITES + 1 questions, then refused
    block = first_tool_result(r)
    assert block["is_error"] is True and "each time it was asked" in block["content"]



def test_a_mention_read_rewritten_at_a_denied_path_is_refused(tmp_path: Path) -> None:
    """@-mentions are judged by the same Permissions.decide: a mention outside the working
    directory is asked about; an answer re-pointing its Read at a file a deny rule covers is
    refused, and the file never reaches the model."""
    work, shared = tmp_path / "work", tmp_path / "shared.txt"
    work.mkdir()
    shared.write_text("shared\n")
    key = tmp_path / "key.txt"
    key.write_text("s3cret-canary\n")
    asked: list[str] = []

    def answer(name: str, x: dict[str, Any]) -> Any:
        asked.append(x["file_path"])
        return lw.Allow({"file_path": str(key)})

    r = lw.run(f"look at @{shared}", lw.AgentOptions(
        model=lw.ScriptedModel([[text("done")]]), tools=default_tools(), cwd=str(work), file_mentions=True,
        permission_mode="default", disallowed_tools=[f"Read(/{key})"], can_use_tool=answer, setting_sources=[]))
    assert asked == [str(shared)]
    assert "s3cret-canary" not in repr(r.messages)
    assert f"Read(/{key})" in repr(r.messages[0])
