"""ConfigChange and FileChanged (issue 42): a settings file changed during a run fires ConfigChange
(source, file_path) before the next model request; unless a hook blocks it (exit 2, decision
"block"), its permission rules are in force at the next tool call, and what cannot change mid-run
is named. FileChanged fires for the files the matchers name and the hooks' watchPaths (add,
change, unlink). Real settings files in temp dirs, real command hooks, real Bash."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.loop import watch
from loopwright.settings import add_local_allow_rules
from loopwright.tools.builtin import default_tools
from tests.helpers import bash as use
from tests.helpers import text


def logger(tmp: Path, name: str, out: Any = None, code: int = 0) -> str:
    """A command hook that appends its stdin to tmp/<name>.log, prints `out` (JSON), exits `code`."""
    p = tmp / "hooks" / f"{name}.sh"
    p.parent.mkdir(exist_ok=True)
    body = f"#!/bin/sh\ncat >> {tmp}/{name}.log\necho >> {tmp}/{name}.log\n"
    if out is not None:
        body += f"cat <<'EOF'\n{json.dumps(out)}\nEOF\n"
    if code == 2:
        body += "echo 'not this change' >&2\n"
    p.write_text(body + f"exit {code}\n")
    p.chmod(0o755)
    return str(p)


def inputs(tmp: Path, name: str) -> list[dict[str, Any]]:
    path = tmp / f"{name}.log"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def hook(command: str, matcher: str | None = None) -> list[dict[str, Any]]:
    return [{**({"matcher": matcher} if matcher else {}), "hooks": [{"type": "command", "command": command}]}]


def project(tmp: Path, settings: dict[str, Any]) -> Path:
    proj = tmp / "proj"
    (proj / ".claude").mkdir(parents=True, exist_ok=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps(settings))
    return proj


@lw.tool(name="Put")
def put(path: str, content: str) -> str:
    """Write `content` to the file `path` (a protected .claude/ file too: the test's own tool)."""
    Path(path).write_text(content)
    return "written"


def put_call(path: Path, content: str, uid: str) -> dict[str, Any]:
    """A call of `Put` that writes `content` to `path`."""
    return {"type": "tool_use", "id": uid, "name": "Put", "input": {"path": str(path), "content": content}}


def write_json(path: Path, data: dict[str, Any], uid: str) -> dict[str, Any]:
    return put_call(path, json.dumps(data), uid)


def collect(prompt: str, o: lw.AgentOptions) -> list[Any]:
    async def go() -> list[Any]:
        return [m async for m in lw.query(prompt, o)]

    return asyncio.run(go())


def options(proj: Path, turns: list[Any], **kw: Any) -> lw.AgentOptions:
    return lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[*default_tools(), put], cwd=proj, claude_settings=True,
                           setting_sources=["project", "local"], allowed_tools=["Bash", "Put"], **kw)


def said(msgs: list[Any], subtype: str = "config_change") -> list[dict[str, Any]]:
    return [m.data for m in msgs if isinstance(m, lw.SystemMessage) and m.subtype == subtype]


def result_of(r: lw.ResultMessage, call: str) -> str:
    for m in r.messages:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result" and b.get("tool_use_id") == call:
                c = b["content"]
                return c if isinstance(c, str) else "".join(x.get("text", "") for x in c)
    raise AssertionError(call)


def test_a_new_deny_rule_fires_config_change_and_holds_at_the_next_call(tmp_path: Path) -> None:
    rec = logger(tmp_path, "cc")
    proj = project(tmp_path, {"hooks": {"ConfigChange": hook(rec)}})
    new = {"hooks": {"ConfigChange": hook(rec)}, "permissions": {"deny": ["Bash(touch *)"]}, "env": {"A": "1"}}
    msgs = collect("go", options(proj, [[write_json(proj / ".claude" / "settings.json", new, "c1")],
                                        [use("touch made", "c2")], [text("done")]]))
    r = msgs[-1]
    seen = inputs(tmp_path, "cc")
    assert [(x["hook_event_name"], x["source"], x["file_path"]) for x in seen] == [
        ("ConfigChange", "project_settings", str(proj / ".claude" / "settings.json"))]
    assert seen[0]["cwd"] == str(proj.resolve()) and seen[0]["session_id"] == r.session_id
    assert not (proj / "made").exists() and "deny rule Bash(touch *)" in result_of(r, "c2")
    [note] = said(msgs)
    assert note["applied"] is True and "env take effect when the next run starts" in note["message"]


@pytest.mark.parametrize("how", ["exit 2", "decision block"])
def test_a_blocked_change_is_not_applied(tmp_path: Path, how: str) -> None:
    rec = logger(tmp_path, "cc", *((None, 2) if how == "exit 2" else ({"decision": "block", "reason": "frozen"}, 0)))
    proj = project(tmp_path, {"hooks": {"ConfigChange": hook(rec, "project_settings")}})
    new = {"permissions": {"deny": ["Bash(touch *)"]}}
    msgs = collect("go", options(proj, [[write_json(proj / ".claude" / "settings.json", new, "c1")],
                                        [use("touch made", "c2")], [text("done")]]))
    assert len(inputs(tmp_path, "cc")) == 1 and (proj / "made").exists(), result_of(msgs[-1], "c2")
    [note] = said(msgs)
    assert note["applied"] is False and ("not this change" if how == "exit 2" else "frozen") in note["message"]


def test_the_matcher_is_the_source_and_a_local_file_is_local_settings(tmp_path: Path) -> None:
    proj_rec, local_rec = logger(tmp_path, "proj"), logger(tmp_path, "local")
    proj = project(tmp_path, {"hooks": {"ConfigChange": [*hook(proj_rec, "project_settings"),
                                                         *hook(local_rec, "local_settings")]}})
    local = proj / ".claude" / "settings.local.json"
    msgs = collect("go", options(proj, [[write_json(local, {"permissions": {"deny": ["Bash(touch *)"]}}, "c1")],
                                        [use("touch made", "c2")], [text("done")]]))
    assert not inputs(tmp_path, "proj")
    assert [(x["source"], x["file_path"]) for x in inputs(tmp_path, "local")] == [("local_settings", str(local))]
    assert not (proj / "made").exists(), result_of(msgs[-1], "c2")


def test_an_untrusted_workspace_change_can_only_narrow(tmp_path: Path) -> None:
    proj = project(tmp_path, {})
    new = {"permissions": {"allow": ["Write"], "deny": ["Bash(touch *)"]}}
    turns = [[write_json(proj / ".claude" / "settings.json", new, "c1")], [use("touch made", "c2")],
             [{"type": "tool_use", "id": "c3", "name": "Write", "input": {"file_path": str(proj / "w.txt"),
                                                                          "content": "x"}}], [text("done")]]
    r = collect("go", options(proj, turns, trust_workspace=False))[-1]
    assert not (proj / "made").exists()  # the deny rule narrows: applied
    assert not (proj / "w.txt").exists(), result_of(r, "c3")  # the allow rule would widen: left out


def test_loopwrights_own_write_fires_no_config_change(tmp_path: Path) -> None:
    rec = logger(tmp_path, "cc")
    proj = project(tmp_path, {"hooks": {"ConfigChange": hook(rec)}})

    @lw.tool(name="Remember")
    def remember() -> str:
        """Save an allow rule, as "don't ask again" does."""
        add_local_allow_rules(proj, ["Bash(git status)"])
        return "saved"

    o = lw.AgentOptions(model=lw.ScriptedModel([[{"type": "tool_use", "id": "c1", "name": "Remember", "input": {}}],
                                               [text("done")]]),
                        tools=[remember], cwd=proj, setting_sources=["project", "local"], claude_settings=True,
                        allowed_tools=["Remember"])
    msgs = collect("go", o)
    assert (proj / ".loopwright" / "settings.local.json").exists() and not inputs(tmp_path, "cc") and not said(msgs)


@lw.tool(name="SameTick")
def same_tick(path: str, content: str) -> str:
    """Write `content` over the file `path` in place, then set its mtime back to what it was: a
    second edit within the file system's timestamp tick (tests/bases/test_file_stamps.py)."""
    from tests.bases.test_file_stamps import rewrite_within_the_tick

    rewrite_within_the_tick(Path(path), content)
    return "written"


def test_a_same_size_settings_edit_within_one_tick_fires_config_change_and_holds(tmp_path: Path) -> None:
    rec = logger(tmp_path, "cc")
    first = {"hooks": {"ConfigChange": hook(rec)}, "permissions": {"deny": ["Bash(touch q)"]}}
    proj = project(tmp_path, first)
    settings = proj / ".claude" / "settings.json"
    second = json.dumps({**first, "permissions": {"deny": ["Bash(touch *)"]}})
    assert len(second) == settings.stat().st_size
    call = {"type": "tool_use", "id": "c1", "name": "SameTick", "input": {"path": str(settings), "content": second}}
    o = options(proj, [[call], [use("touch made", "c2")], [text("done")]])
    o.tools = [*(o.tools or []), same_tick]
    o.allowed_tools = [*o.allowed_tools, "SameTick"]
    r = collect("go", o)[-1]
    assert [x["file_path"] for x in inputs(tmp_path, "cc")] == [str(settings)]
    assert not (proj / "made").exists() and "deny rule Bash(touch *)" in result_of(r, "c2")


def test_a_same_size_edit_within_one_tick_fires_file_changed(tmp_path: Path) -> None:
    rec = logger(tmp_path, "fc")
    proj = project(tmp_path, {"hooks": {"FileChanged": hook(rec, ".env")}})
    (proj / ".env").write_text("A=1\n")
    call = {"type": "tool_use", "id": "c2", "name": "SameTick", "input": {"path": str(proj / ".env"), "content": "A=2\n"}}
    o = options(proj, [[use("true", "c1")], [call], [text("done")]])
    o.tools = [*(o.tools or []), same_tick]
    o.allowed_tools = [*o.allowed_tools, "SameTick"]
    collect("go", o)
    assert [(Path(x["file_path"]).name, x["event"]) for x in inputs(tmp_path, "fc")] == [(".env", "change")]


def test_file_changed_fires_for_the_matchers_files_add_change_unlink(tmp_path: Path) -> None:
    rec = logger(tmp_path, "fc")
    proj = project(tmp_path, {"hooks": {"FileChanged": hook(rec, "app.cfg|.env")}})
    (proj / ".env").write_text("A=1\n")
    turns = [[use("echo x=1 > app.cfg", "c1")], [use("echo B=2 >> .env", "c2")], [use("rm app.cfg", "c3")],
             [use("echo nothing watched > other.txt", "c4")], [text("done")]]
    collect("go", options(proj, turns))
    got = [(x["hook_event_name"], Path(x["file_path"]).name, x["event"]) for x in inputs(tmp_path, "fc")]
    assert got == [("FileChanged", "app.cfg", "add"), ("FileChanged", ".env", "change"),
                   ("FileChanged", "app.cfg", "unlink")], got
    assert inputs(tmp_path, "fc")[0]["file_path"] == str(proj.resolve() / "app.cfg")


def test_watch_paths_from_session_start_and_file_changed_replace_the_list(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "a.txt").write_text("a")
    other = tmp_path / "other.txt"
    start = logger(tmp_path, "start", {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                              "watchPaths": [str(data)]}})
    fc = logger(tmp_path, "fc", {"hookSpecificOutput": {"hookEventName": "FileChanged", "watchPaths": [str(other)]}})
    proj = project(tmp_path, {"hooks": {"SessionStart": hook(start), "FileChanged": hook(fc)}})
    # (outside the workspace, as Claude Code watches them; written by the test's own tool)
    turns = [[put_call(data / "sub" / "b.txt", "b", "c1")],  # a new file in a watched directory: add
             [put_call(data / "sub" / "a.txt", "a2", "c2"), put_call(other, "o", "c3")],  # the list: other.txt now
             [put_call(other, "o2", "c4")], [text("done")]]
    msgs = collect("go", options(proj, turns))
    got = [(Path(x["file_path"]).name, x["event"]) for x in inputs(tmp_path, "fc")]
    assert got == [("b.txt", "add"), ("other.txt", "change")], got
    assert not [m for m in msgs if isinstance(m, lw.SystemMessage) and m.subtype == "hook_error"]


def test_the_watch_list_is_capped_and_says_so_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "MAX_WATCHED", 3)
    data = tmp_path / "many"
    data.mkdir()
    for i in range(6):
        (data / f"f{i}.txt").write_text("x")
    start = logger(tmp_path, "start", {"hookSpecificOutput": {"hookEventName": "SessionStart", "watchPaths": [str(data)]}})
    proj = project(tmp_path, {"hooks": {"SessionStart": hook(start), "FileChanged": hook(logger(tmp_path, "fc"))}})
    msgs = collect("go", options(proj, [[use("true", "c1")], [use("true", "c2")], [text("done")]]))
    notes = said(msgs, "file_watch")
    assert len(notes) == 1 and "at most 3 files" in notes[0]["message"]


@pytest.mark.parametrize("code", [0, 2])
def test_a_change_between_two_prompts_fires_at_the_next_runs_first_step(tmp_path: Path, code: int) -> None:
    """A conversation (LoopwrightClient, as the interactive mode and the SDK's sessions) keeps its
    watch: a file changed between two prompts fires ConfigChange as the next run starts; blocked,
    the next runs keep the version applied before (the file on disk is not what they use)."""
    rec = logger(tmp_path, "cc", code=code)
    proj = project(tmp_path, {"hooks": {"ConfigChange": hook(rec)}})
    new = {"hooks": {"ConfigChange": hook(rec)}, "permissions": {"deny": ["Bash(touch *)"]}}
    o = options(proj, [[text("first")], [use("touch made", "c2")], [text("done")], [use("touch again", "c3")],
                       [text("done")]])

    async def go() -> list[Any]:
        async with lw.LoopwrightClient(o) as client:
            await client.query("one")
            first = [m async for m in client.receive_response()]
            (proj / ".claude" / "settings.json").write_text(json.dumps(new))
            await client.query("two")
            second = [m async for m in client.receive_response()]
            await client.query("three")
            third = [m async for m in client.receive_response()]
        assert not said(first) and not said(third)
        return second

    second = asyncio.run(go())
    assert [x["source"] for x in inputs(tmp_path, "cc")] == ["project_settings"]  # once, at the second prompt
    [note] = said(second)
    assert note["applied"] is (code == 0)
    assert (proj / "made").exists() is (code == 2) and (proj / "again").exists() is (code == 2)


def env_hook(tmp: Path, name: str, line: str) -> str:
    """A command hook that appends `line` to $CLAUDE_ENV_FILE (and logs the path it was given)."""
    p = tmp / "hooks" / f"{name}.sh"
    p.parent.mkdir(exist_ok=True)
    p.write_text(f'#!/bin/sh\ncat >/dev/null\necho "$CLAUDE_ENV_FILE" >> {tmp}/{name}.path\n'
                 f"echo '{line}' >> \"$CLAUDE_ENV_FILE\"\n")
    p.chmod(0o755)
    return str(p)


def test_claude_env_file_from_session_start_and_file_changed_reaches_later_bash_commands(tmp_path: Path) -> None:
    """SessionStart's and FileChanged's hooks write exports to CLAUDE_ENV_FILE; the Bash commands
    after them run with those variables (the files are private: 0600 in a 0700 directory)."""
    start = env_hook(tmp_path, "start", "export GREETING=hello")
    changed = env_hook(tmp_path, "fc", "export STAGE=changed")
    proj = project(tmp_path, {"hooks": {"SessionStart": hook(start), "FileChanged": hook(changed, "app.cfg")}})
    turns = [[use('echo "[$GREETING][$STAGE]"; echo x > app.cfg', "c1")], [use('echo "[$GREETING][$STAGE]"', "c2")],
             [text("done")]]
    r = collect("go", options(proj, turns))[-1]
    assert result_of(r, "c1").startswith("[hello][]") and result_of(r, "c2").startswith("[hello][changed]")
    path = Path((tmp_path / "start.path").read_text().strip())
    assert path.name == "sessionstart-hook-0.sh" and path.parent.name == r.session_id
    assert Path((tmp_path / "fc.path").read_text().strip()).name == "filechanged-hook-0.sh"
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700


def test_a_cd_empties_what_cwd_changed_and_file_changed_hooks_exported(tmp_path: Path) -> None:
    changed = env_hook(tmp_path, "fc", "export STAGE=changed")
    proj = project(tmp_path, {"hooks": {"FileChanged": hook(changed, "app.cfg")}})
    (proj / "sub").mkdir()
    turns = [[use("echo x > app.cfg", "c1")], [use('echo "[$STAGE]"; cd sub', "c2")], [use('echo "[$STAGE]"', "c3")],
             [text("done")]]
    r = collect("go", options(proj, turns))[-1]
    assert result_of(r, "c2").startswith("[changed]") and result_of(r, "c3").startswith("[]")
