"""Claude Code's settings schema walked (issue 42): every key of Claude Code 2.1.332's settings is
honoured by loopwright (and the test that shows it exists) or refused with a reason; every hook
event is fired or named as never fired; a settings file's refused keys are named in one warning
line; docs/claude-code-settings.md is generated from the same tables."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

from loopwright.hooks.config import HOOK_EVENTS, UNFIRED_EVENTS
from loopwright.hooks.kinds import CLAUDE_HOOK_EVENTS
from loopwright.settings import load_settings
from loopwright.settingskeys import HONOURED, LOOPWRIGHT_KEYS, REFUSED, compat_markdown, compat_rows
from tests.helpers import TESTS, cli_env, loopwright_cmd, text, write_script

ROOT = TESTS.parent
FIXTURE = json.loads((TESTS / "fixtures" / "claude_code_settings_keys.json").read_text())
KEYS: dict[str, str] = FIXTURE["keys"]
BINARY = TESTS / "node" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"


def schema_keys(binary: Path) -> list[str]:
    """The top-level keys of the settings schema in Claude Code's binary (a function returning a
    zod shape whose entries read `key:()=>...`, opening with `$schema`, closing with `}}function`)."""
    data = binary.read_bytes()
    start = data.find(b"return{$schema:()=>")
    end = data.find(b"}}function", start)
    text_ = data[start + 6:end].decode("utf-8", "replace")
    return re.findall(r"[{,]([A-Za-z_$][A-Za-z0-9_$]*):\(\)=>", text_)


@pytest.mark.skipif(not BINARY.exists(), reason="Claude Code is not installed (npm install in tests/node)")
def test_the_fixture_is_the_installed_claude_codes_schema() -> None:
    assert schema_keys(BINARY) == list(KEYS)


def test_every_settings_key_is_honoured_or_refused() -> None:
    assert len(KEYS) > 150
    neither = [k for k in KEYS if k not in HONOURED and k not in REFUSED]
    assert neither == [], f"Claude Code settings keys in neither table of settingskeys.py: {neither}"
    assert not set(HONOURED) & set(REFUSED)
    assert [k for k in [*HONOURED, *REFUSED] if k not in KEYS] == []  # no stale entries
    assert all(status in ("honoured", "refused") and what for _, status, what in compat_rows(KEYS))


@pytest.mark.parametrize("key", sorted(HONOURED))
def test_each_honoured_key_names_a_test_that_exists(key: str) -> None:
    path, _, name = HONOURED[key][1].partition("::")
    tree = ast.parse((ROOT / path).read_text())
    assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, HONOURED[key][1]


def test_every_hook_event_is_fired_or_named() -> None:
    assert set(HOOK_EVENTS) | set(UNFIRED_EVENTS) == set(CLAUDE_HOOK_EVENTS)
    assert not set(HOOK_EVENTS) & set(UNFIRED_EVENTS)


def test_refused_keys_are_one_warning_line_naming_them(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.json"
    path.write_text(json.dumps({"theme": "dark", "cleanupPeriodDays": 3, "madeUpKey": 1,
                                "permissions": {"allow": ["Read"]}}))
    s = load_settings(tmp_path, ["project"], claude=True)
    [line] = s.warnings
    assert str(path) in line and "theme" in line and "cleanupPeriodDays" in line and "unknown settings" in line
    assert "madeUpKey" in line and "permissions" not in line


def test_a_key_honoured_in_part_names_only_the_sub_keys_not_applied(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.json"
    path.write_text(json.dumps({"worktree": {"baseRef": "head"}}))
    assert load_settings(tmp_path, ["project"], claude=True).warnings == []  # baseRef is applied
    path.write_text(json.dumps({"worktree": {"baseRef": "head", "sparsePaths": ["src"]}}))
    [line] = load_settings(tmp_path, ["project"], claude=True).warnings
    assert "worktree.sparsePaths" in line and "baseRef" not in line and "unknown" not in line


def test_sub_keys_of_permissions_and_status_line_not_applied_are_named(tmp_path: Path) -> None:
    """Claude Code's sub-keys loopwright does not apply are named, never silently dropped; the rest
    of the key still applies."""
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.json"
    path.write_text(json.dumps({"permissions": {"deny": ["Bash(rm *)"], "blockReadsExemptPaths": ["/x"],
                                                "workingDirectoriesAsGiven": ["/y"], "madeUp": 1},
                                "statusLine": {"type": "command", "command": "echo hi", "padding": 1,
                                               "refreshInterval": 5}}))
    s = load_settings(tmp_path, ["project"], claude=True)
    [line] = s.warnings
    honour, _, unknown = line.partition("unknown settings")
    for k in ("permissions.blockReadsExemptPaths", "permissions.workingDirectoriesAsGiven", "statusLine.refreshInterval"):
        assert k in honour, (k, line)
    assert "permissions.madeUp" in unknown and "deny" not in line and "padding" not in line
    assert [str(r) for r in s.deny] and s.status_line is not None and s.status_line["padding"] == 1
    untrusted = load_settings(tmp_path, ["project"], claude=True, trusted=False)  # (trust keeps them to be named)
    assert "permissions.blockReadsExemptPaths" in " ".join(untrusted.warnings) and untrusted.deny


def test_honoured_and_loopwright_keys_get_no_warning(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(
        {"$schema": "https://json.schemastore.org/claude-code-settings.json", "model": "sonnet", "env": {},
         "smallFastModel": "", "webFetch": {}, "hooks": {}, "disableAllHooks": False}))
    assert load_settings(tmp_path, ["project"], claude=True).warnings == []
    assert set(LOOPWRIGHT_KEYS).isdisjoint(KEYS)


@pytest.mark.e2e
def test_the_cli_shows_the_line_and_runs(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"theme": "dark", "verbose": True}))
    r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", write_script(tmp_path, [[text("done")]]),
                        "--claude-settings"], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "done" in r.stdout, r.stderr
    warned = [x for x in r.stderr.splitlines() if "theme" in x]
    assert len(warned) == 1 and "verbose" in warned[0]


def test_the_doc_is_generated_from_the_same_tables() -> None:
    doc = ROOT / "docs" / "claude-code-settings.md"
    assert doc.read_text() == compat_markdown(KEYS, FIXTURE["version"]), (
        "regenerate: python -c 'import json; from loopwright.settingskeys import compat_markdown; "
        "f = json.load(open(\"tests/fixtures/claude_code_settings_keys.json\")); "
        "print(compat_markdown(f[\"keys\"], f[\"version\"]), end=\"\")' > docs/claude-code-settings.md")
    for k in KEYS:
        assert f"| `{k}` |" in doc.read_text()
