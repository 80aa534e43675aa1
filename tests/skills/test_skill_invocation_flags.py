"""A skill's `disable-model-invocation: true` (for the user only) as Claude Code 2.1.332 honours it,
on the same scripted turns: the model is not offered it, and its Skill call is refused with
Claude Code's words (its `user-invocable: false` counterpart: tests/sdkproto/test_sdk_skills.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text, use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
pytestmark = pytest.mark.e2e
REFUSED = ("Skill nomodel cannot be used with Skill tool due to disable-model-invocation. Ask the user to run /nomodel "
           "themselves — it cannot be invoked via the Skill tool. Do not replicate this skill's workflow by other "
           "means — it is reserved for explicit user invocation.")


@pytest.mark.parametrize("who", WHO)
def test_a_skill_for_the_user_only_is_not_offered_and_its_call_is_refused(tmp_path: Path, who: str) -> None:
    proj, home = tmp_path / "proj", tmp_path / "home"
    home.mkdir()
    for name, more in (("nomodel", "disable-model-invocation: true\n"), ("other", "")):
        (proj / ".claude" / "skills" / name).mkdir(parents=True)
        (proj / ".claude" / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: the {name} skill\n{more}---\nBody of {name}.\n")
    with ScriptedServer([[use("s1", "Skill", {"skill": "nomodel"})], [text("done")]],
                        is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--allowedTools", "Skill"], cwd=proj, env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        requests: list[Any] = list(srv.requests)
    assert r.returncode == 0, (who, r.stderr)
    first = json.dumps(requests[0].body)
    assert "the other skill" in first and "nomodel" not in first, who  # offered: other only
    (result,) = [b for q in requests for m in q.body["messages"] if isinstance(m["content"], list)
                 for b in m["content"] if b.get("type") == "tool_result"][-1:]
    said = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    said = said.split("\n\n<system-reminder>")[0].removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")
    assert said == REFUSED and result.get("is_error") is True, who


@pytest.mark.parametrize("who", WHO)
def test_custom_commands_are_offered_and_loaded_by_the_skill_tool(tmp_path: Path, who: str) -> None:
    """The custom commands come after the skills in what the model is offered, each with its
    description or else its first line (a heading's `#` off); one with disable-model-invocation is
    not offered and its call refused; a call with `args` gets the command's text with them placed."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    (home / ".claude" / "commands").mkdir(parents=True)
    commands = proj / ".claude" / "commands"
    (commands / "ops").mkdir(parents=True)
    (commands / "deploy.md").write_text("---\ndescription: Ship the app\n---\nDeploy to $ARGUMENTS-env-7 now.\n")
    (commands / "review.md").write_text("# Look over the code\n\nPlease review.\n")
    (commands / "ops" / "page.md").write_text("---\ndescription: Page the on-call\n---\nPage them.\n")
    (commands / "nomodelcmd.md").write_text("---\ndescription: Only typed\ndisable-model-invocation: true\n---\nNo.\n")
    (home / ".claude" / "commands" / "mine.md").write_text("---\ndescription: The user's own\n---\nMine.\n")
    (proj / ".claude" / "skills" / "other").mkdir(parents=True)
    (proj / ".claude" / "skills" / "other" / "SKILL.md").write_text("---\nname: other\ndescription: the other skill\n"
                                                                  "---\nBody of other.\n")
    turns = [[use("s1", "Skill", {"skill": "deploy", "args": "prod"})], [use("s2", "Skill", {"skill": "nomodelcmd"})],
             [text("done")]]
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home)), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--allowedTools", "Skill"], cwd=proj, env=env, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        requests: list[Any] = list(srv.requests)
    assert r.returncode == 0, (who, r.stderr)
    first = json.dumps(requests[0].body)
    listed = ["- other: the other skill", "- deploy: Ship the app", "- mine: The user's own",
              "- ops:page: Page the on-call", "- review: Look over the code"]
    assert all(line in first for line in listed), (who, [line for line in listed if line not in first])
    assert [first.index(line) for line in listed] == sorted(first.index(line) for line in listed), who
    assert "nomodelcmd" not in first, who
    said = json.dumps(requests[-1].body["messages"])
    assert "Deploy to prod-env-7 now." in said, who
    (result,) = [b for m in requests[-1].body["messages"] if isinstance(m["content"], list)
                 for b in m["content"] if b.get("type") == "tool_result" and b["tool_use_id"] == "s2"]
    refusal = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert REFUSED.replace("nomodel", "nomodelcmd") in refusal and result.get("is_error") is True, who
