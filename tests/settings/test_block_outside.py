"""permissions.blockReadsOutsideWorkingDirectories and blockWritesOutsideWorkingDirectories, as
Claude Code 2.1.332 applies them (checked against its binary; one case runs side by side): true
in any settings file (an untrusted project's too: it narrows), the file tools' reads or writes
outside the working directories are refused in every mode whatever the allow rules say, writing a
settings file is refused too (it could lift the block), and a Bash command that reads outside them
is asked about in every mode."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.runconfig import build_run_config
from loopwright.settings import SettingsError, load_settings
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text, use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
WHO = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
READS, WRITES = "blockReadsOutsideWorkingDirectories", "blockWritesOutsideWorkingDirectories"


def setup(tmp_path: Path, perms: dict[str, Any]) -> tuple[Path, Path]:
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    (proj / ".claude").mkdir(parents=True)
    outside.mkdir()
    (outside / "f.txt").write_text("secret")
    (proj / ".claude" / "settings.json").write_text(json.dumps({"permissions": perms}))
    return proj, outside


def gate(proj: Path, mode: str | None = None, trusted: bool = True, add_dirs: list[str] | None = None) -> Any:
    opts = lw.AgentOptions(cwd=str(proj), permission_mode=mode, add_dirs=add_dirs or [])  # type: ignore[arg-type]
    return build_run_config(opts, proj, load_settings(proj, ["project"], claude=True, trusted=trusted)).permissions


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_reads_outside_are_refused_whatever_the_rules(tmp_path: Path, mode: str) -> None:
    outside = tmp_path / "outside"
    proj, _ = setup(tmp_path, {READS: True, "allow": [f"Read(/{outside}/**)", "Grep", "Bash(cat *)"]})
    g = gate(proj, mode, trusted=mode != "bypassPermissions")  # (an untrusted project may set it: it narrows)
    v = g.evaluate("Read", {"file_path": str(outside / "f.txt")})
    assert v.kind == "deny" and v.reason == (
        f"{outside / 'f.txt'} is outside {proj}; the permissions.{READS} setting blocks reads outside the working "
        "directories. Ask the user to add the directory with /add-dir, or to remove that setting."), v
    assert g.evaluate("Grep", {"pattern": "s", "path": str(outside)}).kind == "deny"
    assert g.evaluate("Read", {"file_path": str(proj / "x.txt")}, read_only=True).kind == "allow"  # (inside: as before)
    bash = g.evaluate("Bash", {"command": f"cat {outside / 'f.txt'}"})
    assert bash.kind == "ask" and "Reads outside the working directories are blocked" in bash.reason, bash
    assert gate(proj, mode, add_dirs=[str(outside)]).evaluate("Read", {"file_path": str(outside / "f.txt")}).kind \
        != "deny"  # an added directory is a working directory


def test_writes_outside_and_to_settings_files_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    proj, _ = setup(tmp_path, {WRITES: True, "allow": [f"Edit(/{outside}/**)", "Write", "Edit"]})
    g = gate(proj, "acceptEdits")
    v = g.evaluate("Write", {"file_path": str(outside / "g.txt"), "content": "x"})
    assert v.kind == "deny" and v.reason.startswith(f"{outside / 'g.txt'} is outside {proj}; the permissions.{WRITES} "
                                                    "setting blocks writes outside the working directories."), v
    v = g.evaluate("Write", {"file_path": str(proj / ".claude" / "settings.local.json"), "content": "{}"})
    assert v.kind == "deny" and "Writes to Claude Code settings files are blocked" in v.reason, v
    assert g.evaluate("Write", {"file_path": str(proj / "a.txt"), "content": "x"}).kind == "allow"
    assert g.evaluate("Read", {"file_path": str(outside / "f.txt")}).kind != "deny"  # (reads: not this setting)
    # without the setting, the allow rule and the mode write there
    (proj / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": [f"Edit(/{outside}/**)"]}}))
    assert gate(proj, "acceptEdits").evaluate("Write", {"file_path": str(outside / "g.txt"), "content": "x"}).kind \
        == "allow"


def test_true_in_any_file_wins_and_other_values_are_refused(tmp_path: Path) -> None:
    proj, _ = setup(tmp_path, {READS: True})
    s = load_settings(proj, ["project"], claude=True, extra={"permissions": {READS: False}})
    assert s.block_reads and not s.block_writes and not s.warnings
    with pytest.raises(SettingsError, match=f"permissions.{WRITES} must be true or false"):
        load_settings(proj, ["project"], claude=True, extra={"permissions": {WRITES: "yes"}})


@pytest.mark.e2e
@pytest.mark.parametrize("who", WHO)
def test_side_by_side_with_claude_code(tmp_path: Path, who: str) -> None:
    """-p with the setting and an allow rule for the file: Read is refused by both, in the same words."""
    outside = tmp_path / "outside"
    proj, _ = setup(tmp_path, {READS: True, "allow": [f"Read(/{outside}/**)"]})
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"projects": {str(proj): {"hasTrustDialogAccepted": True}}}))
    with ScriptedServer([[use("r1", "Read", file_path=str(outside / "f.txt"))], [text("done")]],
                        is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env, cmd = claude_code_env(srv.url, str(home)), [str(CLAUDE)]
        else:
            env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home),
                          LOOPWRIGHT_HOME=str(home / ".loopwright"), LOOPWRIGHT_TRUSTED_DIRS=str(proj))
            cmd = [*loopwright_cmd(), "--claude-settings"]
        r = subprocess.run([*cmd, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format", "json"], cwd=proj,
                           env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        (result,) = [b for q in srv.requests[-1:] for m in q.body["messages"] if isinstance(m["content"], list)
                     for b in m["content"] if b.get("type") == "tool_result"]
    assert r.returncode == 0, (who, r.stderr)
    said = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert result.get("is_error") is True and "secret" not in said, (who, said)
    assert said.split("\n\n<system-reminder>")[0].removeprefix("<tool_use_error>").removesuffix("</tool_use_error>") \
        == (f"{outside / 'f.txt'} is outside {proj}; the permissions.{READS} setting blocks reads outside the "
            "working directories. Ask the user to add the directory with /add-dir, or to remove that setting."), who
