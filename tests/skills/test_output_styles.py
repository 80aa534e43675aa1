"""Output styles (outputstyles.py): Claude Code's built-ins with its own text, style files of the
user and the project, selected by "outputStyle" in settings (or AgentOptions.output_style), and
what they do to the system prompt; side by side with Claude Code on the same scripted turn."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.outputstyles import BUILT_IN, find_styles, list_styles, pick_style
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def run_cli(srv: ScriptedServer, cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", "claude-sonnet-4-5", *args], cwd=cwd,
                          env=env or cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"),
                          capture_output=True, text=True, timeout=120)


def test_the_built_ins_are_claude_codes() -> None:
    assert list(BUILT_IN) == ["default", "Proactive", "Concise", "Explanatory", "Learning"]
    assert BUILT_IN["Learning"].prompt is not None and "TODO(human)" in BUILT_IN["Learning"].prompt
    assert all(s.keep_coding_instructions for s in BUILT_IN.values())


@pytest.mark.e2e
def test_settings_output_style_changes_the_system_prompt(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"outputStyle": "Explanatory"}))
    with ScriptedServer([[text("ok")], [text("ok")]]) as srv:
        r = run_cli(srv, tmp_path, "--claude-settings")
        styled = system_text(srv.loop_requests[0].body)
        r2 = run_cli(srv, tmp_path)  # without Claude Code's files: the default style
        plain = system_text(srv.loop_requests[1].body)
    assert r.returncode == 0 and r2.returncode == 0, r.stderr + r2.stderr
    assert f"# Output Style: Explanatory\n{BUILT_IN['Explanatory'].prompt}" in styled
    assert "Explanatory output style is active" in styled
    assert "How to work:" in styled, "the built-ins keep the coding instructions"
    assert "Output Style" not in plain


@pytest.mark.e2e
def test_a_project_style_file_replaces_the_coding_instructions(tmp_path: Path) -> None:
    styles = tmp_path / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "pirate.md").write_text("---\nname: Pirate\ndescription: Arr\nmood: salty\n---\nAnswer like a pirate.\n")
    with ScriptedServer([[text("ok")]]) as srv:
        r = run_cli(srv, tmp_path, "--settings", json.dumps({"outputStyle": "Pirate"}))
        system = system_text(srv.loop_requests[0].body)
    assert r.returncode == 0, r.stderr
    assert system.startswith('You are an interactive agent that helps users according to your "Output Style"')
    assert f"Working directory: {tmp_path.resolve()}" in system and "How to work:" not in system
    assert "# Output Style: Pirate\nAnswer like a pirate." in system
    assert f"{styles.resolve() / 'pirate.md'}: unknown front-matter key mood (not applied)" in r.stderr


@pytest.mark.e2e
def test_an_unknown_style_is_named_and_the_default_is_used(tmp_path: Path) -> None:
    with ScriptedServer([[text("ok")]]) as srv:
        r = run_cli(srv, tmp_path, "--settings", json.dumps({"outputStyle": "Nope"}))
        system = system_text(srv.loop_requests[0].body)
    assert r.returncode == 0 and "Output Style" not in system
    assert "outputStyle 'Nope': no such output style (styles: default, Proactive" in r.stderr


def test_the_python_option_and_the_list_for_the_interactive_mode(tmp_path: Path) -> None:
    user = Path(os.environ["HOME"]) / ".claude" / "output-styles"
    user.mkdir(parents=True)
    (user / "terse.md").write_text("---\ndescription: very short\nkeep-coding-instructions: true\n---\nBe terse.\n")
    names = [(s.name, s.source) for s in list_styles(tmp_path, ["user", "project"])]
    assert names[-1] == ("terse", "user") and ("Learning", "built-in") in names
    styles, _ = find_styles(tmp_path, ["user"])
    assert pick_style("explanatory", styles)[0] is BUILT_IN["Explanatory"], "names match as Claude Code's do"
    from loopwright.assemble import build_run

    run = build_run(lw.AgentOptions(model=lw.ScriptedModel([[text("ok")]]), output_style="terse", cwd=str(tmp_path),
                                    system_prompt={"type": "preset", "preset": "claude_code"},
                                    setting_sources=["user"]), "hi")
    system = run.deps.system or ""
    assert "# Output Style: terse\nBe terse." in system and "How to work:" in system, "keep-coding-instructions: true"


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")
@pytest.mark.parametrize("style", ["Explanatory", "Learning"])
def test_same_style_text_as_claude_code(tmp_path: Path, style: str) -> None:
    """Claude Code sends the style as `# Output Style: NAME` + its text (in a reminder); loopwright
    sends the same text, in its system prompt."""
    settings = json.dumps({"outputStyle": style})
    with ScriptedServer([[text("ok")]]) as srv:
        env = claude_code_env(srv.url, str(tmp_path / "cchome"))
        r = subprocess.run([str(CLAUDE), "-p", "hi", "--model", "claude-sonnet-4-5", "--settings", settings],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        blocks = [b["text"] for b in srv.loop_requests[0].body["messages"][0]["content"] if "text" in b]
    theirs = next(b for b in blocks if b.startswith(f"<system-reminder>\n# Output Style: {style}\n"))
    theirs = theirs.removeprefix("<system-reminder>\n").removesuffix("\n</system-reminder>")
    with ScriptedServer([[text("ok")]]) as srv:
        r = run_cli(srv, tmp_path, "--settings", settings)
        ours = system_text(srv.loop_requests[0].body)
    assert r.returncode == 0, r.stderr
    assert theirs in ours
