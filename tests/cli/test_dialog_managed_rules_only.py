"""Under managed settings' allowManagedPermissionRulesOnly the interactive permission dialog offers
no "don't ask again" (Claude Code hides it): a rule it saved would be ignored, and one it kept for
the session would approve calls the organization's rules ask about. The dialog is driven in a real
terminal (tmux) against a scripted model, with a managed folder named by the environment."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from loopwright.managed import ENV, SYSTEM_DIR
from tests.cli.test_interactive_dialog import armed, dialog, results, session, transcript
from tests.helpers import bash, text

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
pytest.importorskip("loopwright.tools.builtin", reason="the CLI needs the built-in tools")


def policy(tmp_path: Path, rules_only: bool) -> Path:
    if (SYSTEM_DIR / "managed-settings.json").exists() or (SYSTEM_DIR / "managed-settings.d").exists():
        pytest.skip(f"{SYSTEM_DIR} holds managed settings on this machine: they would apply instead")
    folder = tmp_path / "policy"
    folder.mkdir()
    (folder / "managed-settings.json").write_text(json.dumps({"allowManagedPermissionRulesOnly": rules_only}))
    folder.chmod(0o700)
    (folder / "managed-settings.json").chmod(0o600)
    return folder


def test_the_dialog_without_dont_ask_again_has_two_choices() -> None:
    from loopwright.cli.dialog import Answer, PermissionDialog
    from loopwright.cli.preview import Preview

    async def answer(*keys: str) -> tuple[Answer, list[str]]:
        d = PermissionDialog("Bash", Preview("Bash command"), None, now=0.0)
        for k in keys:
            if k == "!down":
                d.move(1)
            else:
                getattr(d, k[1:])() if k.startswith("!") else d.type(k)
        assert d.answer.done()
        return d.answer.result(), d.choices

    async def go() -> None:
        got, choices = await answer("1")
        assert got == Answer("yes") and choices == ["Yes", "No, and tell the model what to do differently"]
        assert (await answer("2"))[0] == Answer("no")  # the second choice is No
        assert (await answer("3", "!enter"))[0] == Answer("yes")  # 3 is no choice: Enter on Yes
        assert (await answer("!down", "!down", "!enter"))[0] == Answer("no")  # Down stops at No
        assert (await answer("use sed", "!enter"))[0] == Answer("no", "use sed")

    asyncio.run(go())


@pytest.mark.e2e
@needs_tmux
@pytest.mark.parametrize("rules_only", [True, False])
def test_managed_rules_only_hides_dont_ask_again(tmp_path: Path, rules_only: bool) -> None:
    """With the switch: two choices, "Yes" approves that call only (the same command is asked
    again), nothing is saved. Without it (the same policy folder): "don't ask again" is offered."""
    folder = policy(tmp_path, rules_only)
    turns = [[bash("python3 -m platform", "b1")], [bash("python3 -m platform --terse", "b2")], [text("done")]]
    with session(tmp_path, turns, env={ENV: str(folder)}) as (t, work):
        t.type("go")
        t.keys("Enter")
        s = dialog(armed(t, "Do you want to allow this Bash?"))
        if not rules_only:
            assert "2. Yes, and don't ask again for Bash(python3 -m platform:*)" in s, s
            t.type("3")
            t.wait("✗ refused Bash(python3 -m platform)")
            s = dialog(armed(t, "$ python3 -m platform --terse"))  # (the second question, not the first's text)
            assert "don't ask again" in s
            t.type("3")
            t.wait("done")
            return
        assert "don't ask again" not in s and "2. No, and tell the model what to do differently" in s, s
        assert "1-2 · Esc = No" in s, s
        t.type("1")
        t.wait("✓ approved Bash(python3 -m platform)")
        s = dialog(armed(t, "$ python3 -m platform --terse"))  # asked again: nothing was remembered
        assert "don't ask again" not in s
        t.type("2")
        t.wait("done")
        # /permissions keeps no rule that would be ignored (an allow, any rule of a settings file);
        # a session deny still narrows, as --disallowedTools does
        t.type("/permissions allow Bash(python3:*)")
        t.keys("Enter")
        t.wait("✗ Bash(python3:*) not added: your organization restricts permission rules to managed settings")
        t.type("/permissions deny Bash(rm:*) --user")
        t.keys("Enter")
        t.wait("✗ Bash(rm:*) not added")
        t.type("/permissions deny Bash(rm:*)")
        t.keys("Enter")
        t.wait("✓ deny Bash(rm:*) for this session")
    assert not (tmp_path / "home" / "settings.json").exists()
    assert not (work / ".loopwright" / "settings.local.json").exists()
    got = results(transcript(tmp_path))
    assert "refused" not in got["b1"] and "refused" in got["b2"]
