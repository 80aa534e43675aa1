"""Rule forms Claude Code 2.1.332 refuses by their tool part (issue 42): `Bash()` (empty
parentheses), one of its tool names in another case (`bash`; a lowercase program tool like `noop` is
accepted), and a wildcard tool name in an allow rule (`Bas*`,
`mcp__*`; `mcp__server__get_*` is allowed); deny and ask rules take wildcard tool names. Each
refusal is one line naming the rule; loopwright and Claude Code on the same scripted turns."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from loopwright.gate import Permissions, Rule
from loopwright.settings import SettingsError, load_settings
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, bash, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"


@pytest.mark.parametrize("rule,kind,needle", [
    ("Bash()", None, 'empty parentheses: either specify a pattern or use just "Bash" without parentheses'),
    ("bash", None, 'tool names must start with uppercase: use "Bash"'),
    ("webfetch(domain:x.org)", None, 'tool names must start with uppercase: use "WebFetch"'),
    ("Bas*", "allow", 'wildcard tool name "Bas*" is not supported in allow rules'),
    ("mcp__*", "allow", 'wildcard tool name "mcp__*" is not supported in allow rules'),
    ("mcp__git*__x", "allow", "not supported in allow rules"),
])
def test_refused_forms_name_the_rule(rule: str, kind: str | None, needle: str) -> None:
    with pytest.raises(ValueError) as e:
        Rule.parse(rule, kind=kind)
    assert repr(rule) in str(e.value) and needle in str(e.value)


def test_accepted_forms(tmp_path: Path) -> None:
    for rule in ("Bash(*)", "mcp__github__get_*", "mcp__github__*", "mcp__github", "my_tool", "noop"):
        Rule.parse(rule, kind="allow")
    for rule in ("Bas*", "mcp__*", "*"):
        Rule.parse(rule, kind="deny")
        Rule.parse(rule, kind="ask")
    p = Permissions("default", allowed_tools=["Bash"], disallowed_tools=["Bas*"], cwd=tmp_path)
    assert p.evaluate("Bash", {"command": "ls"}, False).kind == "deny"
    with pytest.raises(ValueError, match="not supported in allow rules"):
        Permissions("default", allowed_tools=["Bas*"], cwd=tmp_path)


def test_settings_leave_a_refused_allow_rule_out_and_stop_at_a_deny(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.json"
    path.write_text(json.dumps({"permissions": {"allow": ["Bash()", "bash", "Bas*", "Read"]}}))
    s = load_settings(tmp_path, ["project"], claude=True)
    assert [str(r) for r in s.allow] == ["Read"] and len(s.warnings) == 3
    assert all("the rule is ignored" in w for w in s.warnings)
    path.write_text(json.dumps({"permissions": {"deny": ["Bash()"]}}))
    with pytest.raises(SettingsError, match="empty parentheses"):
        load_settings(tmp_path, ["project"], claude=True)


@pytest.mark.e2e
@pytest.mark.parametrize("allow", ["Bash()", "Bas*", "bash"])
def test_the_refused_allow_rule_grants_nothing_and_is_named_like_claude_code(tmp_path: Path, allow: str) -> None:
    for who in ("loopwright", "claude"):
        if who == "claude" and not CLAUDE.exists():
            continue
        proj = tmp_path / who
        proj.mkdir()
        with ScriptedServer([[bash("touch made")], [text("ok")]], is_loop_call=lambda b: True) as srv:
            if who == "claude":
                env = claude_code_env(srv.url, str(tmp_path / "cchome"))
                cmd = [str(CLAUDE)]
            else:
                env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"), loopwright_cmd()
            r = subprocess.run([*cmd, "-p", "hi", "--model", "claude-sonnet-4-5", "--settings",
                                json.dumps({"permissions": {"allow": [allow]}})], cwd=proj, env=env,
                               capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (who, r.stderr)
        assert not (proj / "made").exists(), who  # the rule granted nothing
        named = [line for line in r.stderr.splitlines() if f'"{allow}"' in line or f"'{allow}'" in line]
        assert len(named) == 1, (who, r.stderr)
