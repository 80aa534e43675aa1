"""ConfigChange and FileChanged: Claude Code 2.1.332 and loopwright on the same scripted turns, with
the same project settings (issue 42). Each side runs as a CLI against its own loopback Messages
server; a Bash command (or a PostToolUse hook) changes a file, then runs the project's settle.sh:
Claude Code's watcher waits for a write to settle (~0.5 s) before it fires, so there it waits until
the hook has logged (and 2 s where no hook may fire); loopwright looks before the next request, and
its settle.sh waits for nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")]


def bash(command: str, uid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": "Bash", "input": {"command": command}}


def logger(tmp: Path, code: int = 0) -> str:
    """A command hook that appends its stdin to $CLAUDE_PROJECT_DIR/hooks.log and exits `code`."""
    p = tmp / f"log{code}.sh"
    p.write_text(f'#!/bin/sh\ncat >> "$CLAUDE_PROJECT_DIR/hooks.log"\necho >> "$CLAUDE_PROJECT_DIR/hooks.log"\n'
                 f"exit {code}\n")
    p.chmod(0o755)
    return str(p)


# Claude Code's side: wait until N hooks have logged to hooks.log (at most ~15 s), then a moment for
# Claude Code to act on what the hook said; `quiet`: a change that must fire nothing, the time to fire.
SETTLE_CLAUDE = """#!/bin/sh
if [ "$1" = quiet ]; then sleep 2; exit 0; fi
log="$(dirname "$0")/hooks.log"
i=0
until [ "$(cat "$log" 2>/dev/null | grep -c .)" -ge "$1" ] || [ $i -ge 300 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.3
"""
SETTLE_LOOPWRIGHT = "#!/bin/sh\nexit 0\n"  # it looks before the next request: nothing to wait for


def both(tmp: Path, turns: list[Any], project: dict[str, Any], flag_settings: dict[str, Any] | None = None,
         files: dict[str, str] | None = None) -> dict[str, tuple[Any, Path]]:
    """Claude Code, then loopwright, each in a fresh project with `project` as .claude/settings.json
    (and `files`, and its side's settle.sh); (the server's requests, the project dir)."""
    out: dict[str, tuple[Any, Path]] = {}
    for who in ("claude", "loopwright"):
        proj = tmp / who
        (proj / ".claude").mkdir(parents=True)
        (proj / ".claude" / "settings.json").write_text(json.dumps(project))
        for name, content in (files or {}).items():
            (proj / name).write_text(content)
        (proj / "settle.sh").write_text(SETTLE_CLAUDE if who == "claude" else SETTLE_LOOPWRIGHT)
        (proj / "settle.sh").chmod(0o755)
        args = ["-p", "hi", "--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits",
                "--allowedTools", "Bash"]
        if flag_settings is not None:
            args += ["--settings", json.dumps(flag_settings)]
        with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
            if who == "claude":
                env = claude_code_env(srv.url, str(tmp / "cchome"))
                cmd = [str(CLAUDE)]
            else:
                env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"), [*loopwright_cmd(),
                                                                                       "--claude-settings"]
            r = subprocess.run([*cmd, *args], cwd=proj, env=env, capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, (who, r.stderr)
            out[who] = (list(srv.requests), proj)
    return out


def hook_inputs(proj: Path) -> list[dict[str, Any]]:
    log = proj / "hooks.log"
    return [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []


def last_result(request: Any) -> dict[str, Any]:
    block: dict[str, Any] = request.body["messages"][-1]["content"][0]
    return block


@pytest.mark.parametrize("code", [0, 2])
def test_config_change_the_same(tmp_path: Path, code: int) -> None:
    """A PostToolUse hook writes a new .claude/settings.json (a deny rule): both fire ConfigChange
    with the same fields; unblocked, the next Bash call is refused by the new rule; blocked (exit 2),
    it runs."""
    rec = logger(tmp_path, code)
    project = {"hooks": {"ConfigChange": [{"hooks": [{"type": "command", "command": rec}]}]}}
    new = {**project, "permissions": {"deny": ["Bash(touch *)"]}}
    edit = tmp_path / "edit.sh"
    edit.write_text('#!/bin/sh\ncat >/dev/null\ncp "$CLAUDE_PROJECT_DIR/new.json" '
                    '"$CLAUDE_PROJECT_DIR/.claude/settings.json"\n"$CLAUDE_PROJECT_DIR/settle.sh" 1\n')
    edit.chmod(0o755)
    post = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(edit)}]}]}}
    runs = both(tmp_path, [[bash("echo one", "t1")], [bash("touch made", "t2")], [text("done")]], project, post,
                {"new.json": json.dumps(new)})
    for who, (requests, proj) in runs.items():
        seen = [x for x in hook_inputs(proj) if x["hook_event_name"] == "ConfigChange"]
        assert seen and {(x["source"], x["file_path"]) for x in seen} == {
            ("project_settings", str(proj / ".claude" / "settings.json"))}, (who, seen)
        assert {"session_id", "transcript_path", "cwd", "hook_event_name", "source", "file_path"} <= set(seen[0]), who
        if code == 0:
            assert len(seen) == 1, who
            assert not (proj / "made").exists() and last_result(requests[2]).get("is_error") is True, who
        else:
            assert (proj / "made").exists() and not last_result(requests[2]).get("is_error"), who


def test_file_changed_the_same(tmp_path: Path) -> None:
    """A FileChanged hook on `app.cfg`: created, appended to, removed by Bash; another file written
    fires nothing."""
    rec = logger(tmp_path)
    project = {"hooks": {"FileChanged": [{"matcher": "app.cfg", "hooks": [{"type": "command", "command": rec}]}]}}
    turns = [[bash("echo x > app.cfg; ./settle.sh 1", "t1")], [bash("echo y >> app.cfg; ./settle.sh 2", "t2")],
             [bash("rm app.cfg; ./settle.sh 3", "t3")], [bash("echo o > other.cfg; ./settle.sh quiet", "t4")],
             [text("done")]]
    runs = both(tmp_path, turns, project)
    for who, (_, proj) in runs.items():
        seen = hook_inputs(proj)
        assert [(x["hook_event_name"], x["file_path"], x["event"]) for x in seen] == [
            ("FileChanged", str(proj / "app.cfg"), e) for e in ("add", "change", "unlink")], (who, seen)


def test_claude_env_file_the_same(tmp_path: Path) -> None:
    """SessionStart's and FileChanged's hooks append exports to $CLAUDE_ENV_FILE: the later Bash
    commands see them, on both. (FileChanged's hook then logs its input, for settle.sh.)"""
    hooks = {}
    for event, line, log in (("start", "export GREETING=hello", ">/dev/null"),
                             ("fc", "export STAGE=changed", '>> "$CLAUDE_PROJECT_DIR/hooks.log"')):
        p = tmp_path / f"{event}.sh"
        p.write_text(f"#!/bin/sh\ninput=$(cat)\necho '{line}' >> \"$CLAUDE_ENV_FILE\"\necho \"$input\" {log}\n")
        p.chmod(0o755)
        hooks[event] = str(p)
    project = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": hooks["start"]}]}],
                         "FileChanged": [{"matcher": "app.cfg", "hooks": [{"type": "command", "command": hooks["fc"]}]}]}}
    turns = [[bash('echo "[$GREETING][$STAGE]"; echo x > app.cfg; ./settle.sh 1', "t1")],
             [bash('echo "[$GREETING][$STAGE]"', "t2")], [text("done")]]
    runs = both(tmp_path, turns, project)
    for who, (requests, _) in runs.items():
        said = [last_result(requests[i])["content"] for i in (1, 2)]
        texts = [c if isinstance(c, str) else "".join(b.get("text", "") for b in c) for c in said]
        assert texts[0].startswith("[hello][]") and texts[1].startswith("[hello][changed]"), (who, texts)
