"""`--worktree [NAME]` / `-w` and the WorktreeCreate/WorktreeRemove hooks (issue 42): Claude Code
2.1.332 and loopwright on the same scripted turns in real git repositories, with real command
hooks (Claude Code's side is skipped when it is not installed: the expectations below are what
it did, observed with these same tests)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright
from loopwright.event_types import HOOK_INPUTS
from loopwright.hooks import CommandHook, HookContext, HookMatcher, Hooks
from loopwright.testing import ScriptedServer
from loopwright.worktrees import make_git_worktree
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
SIDES = ("claude", "loopwright") if CLAUDE.exists() else ("loopwright",)
pytestmark = pytest.mark.e2e


def repo(path: Path) -> Path:
    """A git repository with one commit, at `path`."""
    path.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["-c", "user.email=a@b", "-c", "user.name=n", "commit",
                                                              "-qm", "init", "--allow-empty"]):
        if args[0] == "add":
            (path / "a.txt").write_text("a\n")
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


def logger(tmp: Path) -> str:
    """A command hook that logs its working directory and stdin, one JSON object a line."""
    h = tmp / "log.sh"
    h.write_text(f"#!/bin/sh\nprintf '{{\"pwd\": \"%s\", \"in\": %s}}\\n' \"$(pwd)\" \"$(cat)\" >> '{tmp}/hooks.log'\n")
    h.chmod(0o755)
    return str(h)


def maker(tmp: Path) -> str:
    """A WorktreeCreate hook that makes a plain directory under tmp/trees and prints its path."""
    h = tmp / "make.sh"
    h.write_text(f"#!/bin/sh\nin=$(cat)\nprintf '{{\"pwd\": \"%s\", \"in\": %s}}\\n' \"$(pwd)\" \"$in\" >> '{tmp}/hooks.log'\n"
                 "name=$(printf '%s' \"$in\" | sed 's/.*\"name\":\"\\([^\"]*\\)\".*/\\1/')\n"
                 f"mkdir -p '{tmp}/trees/'\"$name\"\necho '{tmp}/trees/'\"$name\"\n")
    h.chmod(0o755)
    return str(h)


def run(who: str, proj: Path, turns: list[Any], settings: dict[str, Any], *args: str) -> tuple[int, str, list[Any]]:
    """One CLI's -p run in `proj`: (exit code, stderr, the requests its model got)."""
    with ScriptedServer(turns, is_loop_call=lambda body: True) as srv:
        if who == "claude":
            env = claude_code_env(srv.url, str(proj.parent / "cchome"))
            cmd = [str(CLAUDE)]
        else:
            env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x"), loopwright_cmd()
        r = subprocess.run([*cmd, "-p", "hi", "--model", "claude-sonnet-4-5", "--settings", json.dumps(settings), *args],
                           cwd=proj, env=env, capture_output=True, text=True, timeout=120)
        return r.returncode, r.stderr, list(srv.requests)


def hooks_log(tmp: Path) -> list[dict[str, Any]]:
    log = tmp / "hooks.log"
    out = [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []
    log.unlink(missing_ok=True)
    return out


def git(proj: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=proj, capture_output=True, text=True).stdout


def on(events: str, command: str) -> dict[str, Any]:
    return {"hooks": {e: [{"hooks": [{"type": "command", "command": command}]}] for e in events.split(",")}}


@pytest.mark.parametrize("who", SIDES)
@pytest.mark.parametrize(("name", "flat"), [("feat", "feat"), ("a/b", "a+b")])
def test_a_named_worktree_session_as_in_claude_code(tmp_path: Path, who: str, name: str, flat: str) -> None:
    proj = repo(tmp_path / "proj")
    code, err, requests = run(who, proj, [[text("done")]], on("SessionStart,WorktreeRemove", logger(tmp_path)),
                              "-w", name)
    assert code == 0, err
    tree = proj / ".claude" / "worktrees" / flat
    started = hooks_log(tmp_path)
    assert [(s["in"]["hook_event_name"], s["pwd"], s["in"]["cwd"]) for s in started] == [
        ("SessionStart", str(tree), str(tree))]  # the session runs in it; -p fires no WorktreeRemove
    assert (tree / "a.txt").read_text() == "a\n" and len(requests) == 1
    assert f"[worktree-{flat}]" in git(proj, "worktree", "list")  # kept after -p, on its own branch
    assert git(tree, "branch", "--show-current").strip() == f"worktree-{flat}"


@pytest.mark.parametrize("who", SIDES)
def test_an_unnamed_worktree_gets_a_three_word_name(tmp_path: Path, who: str) -> None:
    proj = repo(tmp_path / "proj")
    code, err, _ = run(who, proj, [[text("done")]], {}, "--worktree")
    assert code == 0, err
    [name] = os.listdir(proj / ".claude" / "worktrees")
    assert len(name.split("-")) == 3 and f"[worktree-{name}]" in git(proj, "worktree", "list")


@pytest.mark.parametrize("who", SIDES)
@pytest.mark.parametrize("name", ["../x", "a/../../b", ".git", "a b", "x" * 65, "a//b"])
def test_a_name_is_never_a_path(tmp_path: Path, who: str, name: str) -> None:
    proj = repo(tmp_path / "proj")
    code, err, requests = run(who, proj, [[text("done")]], {}, "-w", name)
    assert code != 0 and "Invalid worktree name" in err and not requests
    assert not (proj / ".claude").exists() and not (tmp_path / "x").exists() and not (tmp_path / "b").exists()
    assert git(proj, "branch").split() == ["*", "main"]


@pytest.mark.parametrize("who", SIDES)
def test_a_worktree_create_hook_makes_it_instead_of_git(tmp_path: Path, who: str) -> None:
    proj = repo(tmp_path / "proj")
    settings = on("WorktreeCreate", maker(tmp_path))
    settings["hooks"].update(on("SessionStart", logger(tmp_path))["hooks"])
    code, err, _ = run(who, proj, [[text("done")]], settings, "-w", "feat")
    assert code == 0, err
    made, started = hooks_log(tmp_path)
    assert made["pwd"] == str(proj) and made["in"]["cwd"] == str(proj)
    assert made["in"]["hook_event_name"] == "WorktreeCreate" and made["in"]["name"] == "feat"
    assert set(made["in"]) - {"prompt_id", "permission_mode"} == {"session_id", "transcript_path", "cwd",
                                                                  "hook_event_name", "name"}
    assert started["in"]["cwd"] == str(tmp_path / "trees" / "feat") == started["in"]["cwd"]
    assert not (proj / ".claude").exists() and git(proj, "branch").split() == ["*", "main"]  # git made nothing
    if who == "loopwright":
        td = HOOK_INPUTS["WorktreeCreate"]
        assert td.__required_keys__ <= set(made["in"]) <= td.__required_keys__ | td.__optional_keys__
        assert made["in"]["session_id"] == started["in"]["session_id"]  # the session's own id


@pytest.mark.parametrize("who", SIDES)
def test_a_worktree_create_hook_that_prints_no_path_stops_the_session(tmp_path: Path, who: str) -> None:
    proj = repo(tmp_path / "proj")
    code, err, requests = run(who, proj, [[text("done")]], on("WorktreeCreate", logger(tmp_path)), "-w", "feat")
    assert code != 0 and not requests
    assert "WorktreeCreate hook failed: hook succeeded but returned no worktree path" in err


@pytest.mark.parametrize("who", SIDES)
def test_outside_a_git_repository_without_hooks_it_says_so(tmp_path: Path, who: str) -> None:
    proj = tmp_path / "plain"
    proj.mkdir()
    code, err, requests = run(who, proj, [[text("done")]], {}, "-w", "feat")
    assert code != 0 and not requests
    if who == "loopwright":  # (Claude Code's own line names the repository it looked for; same sense)
        assert "not in a git repository and no WorktreeCreate hooks are configured" in err


def test_the_worktrees_folder_is_private_and_never_through_a_link(tmp_path: Path) -> None:
    proj = repo(tmp_path / "proj")
    wt = make_git_worktree(proj, "feat")
    assert stat.S_IMODE((proj / ".claude" / "worktrees").stat().st_mode) == 0o700
    assert make_git_worktree(proj, "feat").path == wt.path  # entered again, as it is
    other = repo(tmp_path / "other")
    (tmp_path / "elsewhere").mkdir()
    (other / ".claude").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RuntimeError, match="symbolic link"):
        make_git_worktree(other, "feat")
    assert not list((tmp_path / "elsewhere").iterdir())


def test_leaving_an_interactive_session(tmp_path: Path) -> None:
    """The interactive mode's exit (cli.worktree.leave): unchanged: removed with its branch;
    changed: kept unless the user says yes; a hook's: its WorktreeRemove hooks remove it."""
    import asyncio

    from loopwright.cli.worktree import Session, leave
    from loopwright.worktrees import make_worktree

    proj = repo(tmp_path / "proj")
    settings = {"WorktreeCreate": [HookMatcher(None, [CommandHook(maker(tmp_path))])],
                "WorktreeRemove": [HookMatcher(None, [CommandHook(logger(tmp_path))])]}
    hooks = Hooks(settings).for_run(HookContext("s1", "", str(proj)))
    plain = Hooks({}).for_run(HookContext("s1", "", str(proj)))
    said: list[str] = []

    def session(name: str, with_hooks: bool) -> Session:
        h = hooks if with_hooks else plain
        return Session(asyncio.run(make_worktree(proj, name, h)), h)

    unchanged = session("same", False)
    leave(unchanged, lambda q: pytest.fail("nothing to ask"), said.append)
    assert not unchanged.worktree.path.exists() and "worktree-same" not in git(proj, "branch")
    kept = session("kept", False)
    (kept.worktree.path / "new.txt").write_text("work\n")
    leave(kept, lambda q: "n", said.append)
    assert (kept.worktree.path / "new.txt").exists() and "worktree-kept" in git(proj, "branch")
    committed = session("committed", False)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=n", "commit", "-qm", "x", "--allow-empty"],
                   cwd=committed.worktree.path, check=True)
    questions: list[str] = []
    leave(committed, lambda q: questions.append(q) or "y", said.append)
    assert questions and not committed.worktree.path.exists() and "worktree-committed" not in git(proj, "branch")
    by_hook = session("hooked", True)
    assert by_hook.worktree.path == tmp_path / "trees" / "hooked"
    hooks_log(tmp_path)
    leave(by_hook, lambda q: "y", said.append)
    [removed] = hooks_log(tmp_path)
    assert removed["in"]["hook_event_name"] == "WorktreeRemove" and removed["in"]["worktree_path"] == str(by_hook.worktree.path)
    td = HOOK_INPUTS["WorktreeRemove"]
    assert td.__required_keys__ <= set(removed["in"]) <= td.__required_keys__ | td.__optional_keys__
    assert said == [f"worktree removed: {unchanged.worktree.path}",
                    f"worktree kept: {kept.worktree.path} (branch worktree-kept)",
                    f"worktree removed: {committed.worktree.path}", f"worktree removed: {by_hook.worktree.path}"]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_an_interactive_worktree_session_removes_it_unchanged_and_asks_when_changed(tmp_path: Path) -> None:
    """The real REPL in a terminal (tmux): `-w NAME` starts in the worktree; /exit removes it when
    the session changed nothing, and asks when it did (answered no: kept, and said)."""
    from tests.cli.test_interactive_commands import repl

    src = Path(loopwright.__file__).resolve().parents[1]  # this checkout's code in the terminal too
    for name, change in (("same", False), ("kept", True)):
        base = tmp_path / name
        proj = repo(base / "work")
        tree = proj / ".claude" / "worktrees" / name
        with repl(base, "-w", name, "--model", "claude-sonnet-4-5", "--base-url", "http://127.0.0.1:9",
                  env=f"PYTHONPATH={src}") as t:
            assert (tree / "a.txt").exists()
            if change:
                (tree / "new.txt").write_text("work\n")
            t.send("/exit")
            if change:
                t.wait("has changes. Remove it and its branch worktree-kept?")
                t.send("n")
                t.wait(f"worktree kept: {tree} (branch worktree-kept)")
                assert (tree / "new.txt").exists() and "worktree-kept" in git(proj, "branch")
            else:
                t.wait(f"worktree removed: {tree}")
                assert not tree.exists() and git(proj, "branch").split() == ["*", "main"]


def test_an_sdk_hook_answers_with_worktree_path(tmp_path: Path) -> None:
    """A Python (Agent SDK) WorktreeCreate hook answers hookSpecificOutput.worktreePath; a path that
    is no directory is refused, never used."""
    import asyncio

    from loopwright.worktrees import make_worktree

    made = tmp_path / "elsewhere"
    made.mkdir()
    for answer, ok in ((str(made), True), (str(tmp_path / "missing"), False)):
        hooks = Hooks()

        def answers(data: dict[str, Any], *_: Any, path: str = answer) -> dict[str, Any]:
            assert data["name"] == "feat" and data["hook_event_name"] == "WorktreeCreate"
            return {"hookSpecificOutput": {"hookEventName": "WorktreeCreate", "worktreePath": path}}

        hooks.on("WorktreeCreate", answers)
        run_hooks = hooks.for_run(HookContext("s1", "", str(tmp_path)))
        if ok:
            wt = asyncio.run(make_worktree(tmp_path, "feat", run_hooks))
            assert wt.path == made and wt.hook_based
        else:
            with pytest.raises(RuntimeError, match="not a directory"):
                asyncio.run(make_worktree(tmp_path, "feat", run_hooks))


@pytest.mark.parametrize(("base_ref", "from_origin"), [(None, True), ("fresh", True), ("head", False)])
def test_worktree_base_ref_setting_picks_origin_head_or_local_head(tmp_path: Path, base_ref: str | None,
                                                                    from_origin: bool) -> None:
    """Claude Code's `worktree.baseRef`: "fresh" (the default) starts --worktree from origin/HEAD, "head"
    from the local HEAD with its unpushed commit."""
    origin = repo(tmp_path / "origin")
    subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / "proj")], check=True, capture_output=True)
    proj = tmp_path / "proj"
    (proj / "b.txt").write_text("unpushed\n")
    git(proj, "add", ".")
    git(proj, "-c", "user.email=a@b", "-c", "user.name=n", "commit", "-qm", "local")
    settings = {} if base_ref is None else {"worktree": {"baseRef": base_ref}}
    code, err, _ = run("loopwright", proj, [[text("done")]], settings, "-w", "b")
    assert code == 0, err
    tree = proj / ".claude" / "worktrees" / "b"
    want = git(proj, "rev-parse", "origin/HEAD" if from_origin else "HEAD").strip()
    assert git(tree, "rev-parse", "HEAD").strip() == want
    assert (tree / "b.txt").exists() is not from_origin


def test_a_bad_worktree_base_ref_is_named(tmp_path: Path) -> None:
    proj = repo(tmp_path / "proj")
    code, err, _ = run("loopwright", proj, [[text("done")]], {"worktree": {"baseRef": "main"}}, "-w", "b")
    assert code != 0 and "worktree.baseRef" in err
