"""The Skill tool's call judged as Claude Code 2.1.332 judges it (seen on the same files: a -p run in
acceptEdits mode): a `Skill(name)` rule is about the skill's name, however the model spells the call
(`/x`, ` x `; never its `args`), and a skill or command whose `allowed-tools` would widen what the
model may do is asked about before it loads ("Execute skill: x"); one that grants nothing loads
unasked, its inline shell gated as Bash. In-process: each test runs in well under a second."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import loopwright as lw
from tests.helpers import result_text, text, use


def project(tmp: Path, front: str, body: str) -> Path:
    proj = tmp / "proj"
    (proj / ".claude" / "commands").mkdir(parents=True)
    (proj / ".claude" / "commands" / "x.md").write_text(f"---\ndescription: x\n{front}---\n{body}\n")
    return proj


def run(proj: Path, calls: list[dict[str, Any]], asked: list[Any] | None = None, yes: bool = False,
        **options: Any) -> list[dict[str, Any]]:
    """The Skill calls' results, with a can_use_tool that notes what it is asked and says `yes`."""
    from loopwright.tools.builtin import default_tools

    def ask(name: str, x: dict[str, Any]) -> bool:
        if asked is not None:
            asked.append((name, x))
        return yes

    turns = [[use(f"s{i}", "Skill", c)] for i, c in enumerate(calls)] + [[text("done")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=proj,
                                     setting_sources=["project"], can_use_tool=ask, permission_mode="default",
                                     **options))
    return [b for m in r.messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def test_a_deny_rule_on_a_skill_holds_however_the_model_spells_its_name(tmp_path: Path) -> None:
    proj = project(tmp_path, "", "Hello !`touch ran.txt`")
    results = run(proj, [{"skill": "/x"}, {"skill": " x "}, {"skill": "x"}], disallowed_tools=["Skill(x)"],
                  allowed_tools=["Bash(touch:*)"])  # (its shell would run: only the deny rule stops it)
    assert [r.get("is_error") for r in results] == [True, True, True], [result_text(r) for r in results]
    assert not (proj / "ran.txt").exists()


def test_a_skill_rule_is_about_the_name_not_the_args(tmp_path: Path) -> None:
    """`Skill(safe)` allows the skill named safe: not skill x called with args "safe"."""
    proj = project(tmp_path, "allowed-tools: Bash(touch:*)\n", "Hello !`touch ran.txt`")
    asked: list[Any] = []
    (result,) = run(proj, [{"skill": "x", "args": "safe"}], asked, allowed_tools=["Skill(safe)"])
    assert result.get("is_error") and asked == [("Skill", {"skill": "x", "args": "safe"})], result_text(result)
    assert not (proj / "ran.txt").exists()


def test_a_command_whose_allowed_tools_widen_the_rules_is_asked_about_first(tmp_path: Path) -> None:
    """Refused: nothing of it ran and it granted nothing; approved: it loads and its grant holds."""
    proj = project(tmp_path, "allowed-tools: Bash(touch:*)\n", "Hello !`touch ran.txt`")
    asked: list[Any] = []
    (refused,) = run(proj, [{"skill": "x"}], asked)
    assert refused.get("is_error") and [n for n, _ in asked] == ["Skill"], result_text(refused)
    assert not (proj / "ran.txt").exists() and "allowed without asking" not in result_text(refused)
    asked.clear()
    (loaded,) = run(proj, [{"skill": "x"}], asked, yes=True)
    assert not loaded.get("is_error") and (proj / "ran.txt").exists(), result_text(loaded)
    assert [n for n, _ in asked] == ["Skill"]  # (its touch: allowed by its grant, not asked)


def test_a_command_that_grants_nothing_loads_unasked(tmp_path: Path) -> None:
    proj = project(tmp_path, "", "Just follow these steps.")
    asked: list[Any] = []
    (loaded,) = run(proj, [{"skill": "x"}], asked)
    assert not loaded.get("is_error") and "Just follow these steps." in result_text(loaded)
    assert asked == []


def test_the_models_args_never_run_as_inline_shell(tmp_path: Path) -> None:
    """Placed as a typed /x places them (af63b2e's escaping): the model's `args` bring no shell."""
    proj = project(tmp_path, "", "Do $ARGUMENTS now")
    args = "!`touch a.txt` $(touch b.txt)\n!`touch c.txt`\n```!\ntouch d.txt\n```"
    (loaded,) = run(proj, [{"skill": "x", "args": args}], bypass := [])
    assert not loaded.get("is_error") and bypass == [], result_text(loaded)
    assert sorted(p.name for p in proj.iterdir()) == [".claude"]
    assert "\\! `touch a.txt` $(touch b.txt)" in result_text(loaded)


def test_a_hooks_rewrite_to_a_skill_that_widens_the_rules_is_asked_about(tmp_path: Path) -> None:
    """A PreToolUse hook that rewrites a call of a skill that grants nothing into one of a skill with
    allowed-tools: the rewrite is judged as the call that runs (asked about, refused here), not
    passed unasked because the model's own call would have been (every rewrite is judged again)."""
    proj = project(tmp_path, "allowed-tools: Bash(touch:*)\n", "Hello !`touch ran.txt`")
    (proj / ".claude" / "commands" / "safe.md").write_text("---\ndescription: safe\n---\nJust read.\n")

    def pre(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"skill": "x"}}}

    asked: list[Any] = []
    (result,) = run(proj, [{"skill": "safe"}], asked, hooks={"PreToolUse": [lw.HookMatcher("Skill", [pre])]})
    assert result.get("is_error") and asked == [("Skill", {"skill": "x"})], result_text(result)
    assert not (proj / "ran.txt").exists()


def test_an_answers_rewrite_to_a_skill_that_widens_the_rules_is_asked_about_again(tmp_path: Path) -> None:
    """The same for an answer's rewrite (an ask rule on the skill that grants nothing): the answer
    approved `safe`; `x` is asked about again and refused."""
    from loopwright import PermissionResultAllow, PermissionResultDeny

    proj = project(tmp_path, "allowed-tools: Bash(touch:*)\n", "Hello !`touch ran.txt`")
    (proj / ".claude" / "commands" / "safe.md").write_text("---\ndescription: safe\n---\nJust read.\n")
    (proj / ".loopwright").mkdir()
    (proj / ".loopwright" / "settings.json").write_text('{"permissions": {"ask": ["Skill(safe)"]}}')
    asked: list[Any] = []

    def answer(name: str, x: dict[str, Any], ctx: Any) -> Any:
        asked.append(dict(x))
        return PermissionResultAllow(updated_input={"skill": "x"}) if x["skill"] == "safe" else PermissionResultDeny("no")

    turns = [[use("s0", "Skill", {"skill": "safe"})], [text("done")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), cwd=proj, setting_sources=["project"],
                                     can_use_tool=answer, permission_mode="default"))
    (result,) = [b for m in r.messages if m["role"] == "user" and isinstance(m["content"], list)
                 for b in m["content"] if b.get("type") == "tool_result"]
    assert result.get("is_error") and asked == [{"skill": "safe"}, {"skill": "x"}], (result_text(result), asked)
    assert not (proj / "ran.txt").exists()
