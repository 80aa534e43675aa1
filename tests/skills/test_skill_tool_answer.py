"""What the Skill tool answers when a skill loads: where it is, its instructions, its other files,
and what its allowed-tools granted for the rest of the run (the entries that are no permission
rule named; nothing granted, and said, where the run's grants are closed)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from loopwright.skills import find_skills, make_skill_tool
from loopwright.tools.base import ToolContext

SKILL = "---\nname: tidy\ndescription: tidies\nallowed-tools: Bash(git status:*), Re@d\n---\nTidy $ARGUMENTS.\n"


def loaded(tmp_path: Path, ctx: ToolContext) -> str:
    folder = tmp_path / ".claude" / "skills" / "tidy"
    (folder / "ref").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    (folder / "ref" / "rules.md").write_text("rules")
    skills, warnings = find_skills(tmp_path, ["project"], home=tmp_path / "home", trusted=True)
    assert warnings == []
    tool = make_skill_tool(skills)
    out = asyncio.run(tool.call({"skill": "tidy", "args": "the desk"}, ctx))
    assert not out.is_error, out.content
    assert isinstance(out.content, str)
    return out.content


def test_a_loaded_skill_says_where_it_is_its_files_and_its_grants(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    said = loaded(tmp_path, ctx).split("\n\n")
    assert said[0].startswith("Skill tidy loaded. Base directory: ") and said[0].endswith("tidy")
    assert said[1] == "Tidy the desk."
    assert said[2].splitlines()[0].startswith("Files of this skill")
    assert said[2].splitlines()[1].endswith(str(Path("tidy") / "ref" / "rules.md"))
    assert said[3] == "Tools this skill uses (allowed without asking from now on): Bash(git status:*)"
    assert said[4].startswith("Ignored allowed-tools entries of ") and said[4].endswith("(not permission rules): Re@d")
    assert ctx.state.grants.rules == ("Bash(git status:*)",)


def test_closed_grants_grant_nothing_and_say_so(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path)
    ctx.state.grants.closed = "managed settings allow managed permission rules only"
    said = loaded(tmp_path, ctx).split("\n\n")
    assert said[-1].endswith("ignored: managed settings allow managed permission rules only")
    assert said[-1].startswith("allowed-tools of ")
    assert ctx.state.grants.rules == ()
