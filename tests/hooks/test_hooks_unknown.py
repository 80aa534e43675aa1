"""A Claude Code user's hooks never abort a run: an event loopwright does not fire, an event name
Claude Code does not have, and a hook type loopwright does not run are each named in one warning
line, and the run goes on with the hooks it can run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from loopwright.hooks import CLAUDE_HOOK_EVENTS, HOOK_EVENTS, Hooks
from loopwright.settings import load_settings
from tests.helpers import cli_env, loopwright_cmd, text, write_script


def settings_with(tmp: Path, hooks: dict[str, object]) -> Path:
    proj = tmp / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    return proj


def test_every_event_loopwright_fires_is_a_claude_code_event() -> None:
    assert set(HOOK_EVENTS) <= set(CLAUDE_HOOK_EVENTS)


def test_unknown_events_and_types_are_warnings_not_errors(tmp_path: Path) -> None:
    ok = {"hooks": [{"type": "command", "command": "true"}]}
    proj = settings_with(tmp_path, {
        "Notificaton": [ok],  # a typo: no Claude Code event
        "Stop": [{"hooks": [{"type": "webhook", "url": "x"}, {"type": "command", "command": "true"}]}],
    })
    s = load_settings(proj, claude=True)
    assert any("unknown hook event 'Notificaton'" in w for w in s.warnings)
    assert any("hooks.Stop" in w and "'webhook'" in w for w in s.warnings)
    assert [len(m.hooks) for m in s.hooks["Stop"]] == [1]  # the command hook beside it is kept
    assert "Notificaton" not in s.hooks


def test_a_claude_code_event_loopwright_never_fires_is_named_by_the_registry() -> None:
    unfired = next(e for e in CLAUDE_HOOK_EVENTS if e not in HOOK_EVENTS)
    reg = Hooks().command(unfired, "true").command("Stop", "true").freeze()
    lines = reg.unfired()
    assert len(lines) == 1 and unfired in lines[0] and "never fires" in lines[0]


def test_a_config_change_matcher_on_a_source_loopwright_never_reports_is_named() -> None:
    reg = (Hooks().command("ConfigChange", "true", matcher="user_settings|policy_settings")
           .command("ConfigChange", "true", matcher="skills").command("ConfigChange", "true", matcher="project_settings")
           .freeze())
    lines = reg.unfired()
    assert len(lines) == 2 and "'policy_settings'" in lines[0] and "'skills'" in lines[1]
    assert all("never fires" in ln for ln in lines)


@pytest.mark.e2e
def test_the_cli_warns_once_per_item_and_the_run_goes_on(tmp_path: Path) -> None:
    marker = tmp_path / "stopped"
    unfired = next(e for e in CLAUDE_HOOK_EVENTS if e not in HOOK_EVENTS)
    proj = settings_with(tmp_path, {
        unfired: [{"hooks": [{"type": "command", "command": "true"}]}],
        "Bogus": [{"hooks": [{"type": "command", "command": "true"}]}],
        "Stop": [{"hooks": [{"type": "webhook", "url": "x"},
                            {"type": "command", "command": f"touch {marker}"}]}],
    })
    model = write_script(tmp_path, [[text("done")]])
    r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", model, "--claude-settings"], cwd=proj,
                       env=cli_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "done" in r.stdout
    warnings = [line for line in r.stderr.splitlines() if line.startswith("loopwright: warning:")]
    assert sum(unfired in w for w in warnings) == 1
    assert sum("'Bogus'" in w for w in warnings) == 1
    assert sum("'webhook'" in w for w in warnings) == 1
    assert marker.exists()  # the Stop command hook beside the refused one ran
