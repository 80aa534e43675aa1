"""Issue 40's remainders: the gate's verdicts that must not go stale or be skipped.

Each test drives the real gate (`Permissions`) over real files, directories, symlinks and git
repositories in a temp dir.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from loopwright.gate import Permissions
from loopwright.gate.rules import Rule


def test_a_rule_replaced_in_place_changes_the_verdict_with_the_same_list_lengths(tmp_path: Path) -> None:
    """A verdict is never remembered by the rule lists' lengths: a deny rule put in place of
    another (same lengths, same list objects) applies at once."""
    p = Permissions("default", disallowed_tools=["WebSearch"], allowed_tools=["WebFetch"], cwd=tmp_path)
    assert p.evaluate("TodoWrite", {"todos": []}, True).kind == "allow"
    p.deny[0] = Rule.parse("TodoWrite")
    assert p.evaluate("TodoWrite", {"todos": []}, True).kind == "deny"
    # and back: an allow rule swapped for another lets the tool be asked again
    assert p.evaluate("WebFetch", {"url": "https://example.com"}, True).kind == "allow"
    p.allow[0] = Rule.parse("WebSearch")
    assert p.evaluate("WebFetch", {"url": "https://example.com"}, True).kind == "ask"


# --- git's configured programs (issue 40, finding 2, in the workspace's own repository) ----------

def _git(*args: str | Path, cwd: Path) -> None:
    subprocess.run(["git", *map(str, args)], cwd=cwd, check=True, capture_output=True,
                   env={**_clean_env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def _repo(tmp: Path) -> tuple[Path, Path, Path]:
    """A workspace that is a git repository with one committed file changed since, a script that
    touches a canary, and the canary's path."""
    ws, canary, script = tmp / "proj", tmp / "canary", tmp / "prog.sh"
    ws.mkdir()
    _git("init", "-q", cwd=ws)
    (ws / "a.txt").write_text("one\n")
    _git("add", "a.txt", cwd=ws)
    _git("commit", "-qm", "one", cwd=ws)
    (ws / "a.txt").write_text("two\n")
    script.write_text(f"#!/bin/sh\ntouch {canary}\ncat\n")
    script.chmod(0o755)
    return ws, canary, script


# (the config's lines, a read-only command that would run the program it names)
CONFIGURED = [
    ("[core]\n\tfsmonitor = {script}\n", "git status"),
    ("[diff]\n\texternal = {script}\n", "git diff"),
    ('[diff "x"]\n\ttextconv = {script}\n', "git diff"),  # with .gitattributes `*.txt diff=x`
    ('[filter "x"]\n\tclean = {script}\n', "git diff"),  # with .gitattributes `*.txt filter=x`
    ("[include]\n\tpath = {extra}\n", "git status"),  # the included file sets core.fsmonitor
]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("config,command", CONFIGURED)
def test_git_whose_repository_config_names_a_program_is_asked(config: str, command: str, tmp_path: Path) -> None:
    ws, canary, script = _repo(tmp_path)
    extra = tmp_path / "extra.cfg"
    extra.write_text(f"[core]\n\tfsmonitor = {script}\n")
    p = Permissions("default", cwd=ws, home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind == "allow"  # a plain repository: approved
    (ws / ".gitattributes").write_text("*.txt diff=x filter=x\n")
    with open(ws / ".git" / "config", "a") as f:
        f.write(config.format(script=script, extra=extra))
    v = p.evaluate("Bash", {"command": command})
    assert v.kind == "ask" and ".git/config" in v.reason, v
    assert not canary.exists()
    # the control: run unasked, git does run the program its config names
    subprocess.run(["bash", "-c", command], cwd=ws, capture_output=True, env=_clean_env())
    assert canary.exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_config_without_programs_stays_approved(tmp_path: Path) -> None:
    ws, _, _ = _repo(tmp_path)
    with open(ws / ".git" / "config", "a") as f:
        f.write("[core]\n\tfsmonitor = false\n[color]\n\tui = auto\n[user]\n\tname = x\n")
    p = Permissions("default", cwd=ws, home=tmp_path / "home")
    for command in ("git status", "git diff", "git log --oneline"):
        assert p.evaluate("Bash", {"command": command}).kind == "allow", command


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_in_a_linked_worktree_reads_the_common_config(tmp_path: Path) -> None:
    """A linked worktree's `.git` is a `gitdir:` file; its repository's config (the common
    directory's) counts."""
    main, canary, script = _repo(tmp_path)
    _git("worktree", "add", "-q", tmp_path / "wt", cwd=main)
    with open(main / ".git" / "config", "a") as f:
        f.write(f"[core]\n\tfsmonitor = {script}\n")
    p = Permissions("default", cwd=tmp_path / "wt", home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": "git status"}).kind == "ask"
    assert not canary.exists()


# --- plan mode goes through the same directory and symlink checks (issue 40, findings 1, 2, 5) ---

PLAN_OUTSIDE = ["cd ../other && cat secret.txt", "cd ../other; git grep s3cret", "pushd ../other && ls",
                "env -C ../other cat secret.txt", "git -C ../other show HEAD:secret.txt",
                "git -C ../other status", "rg -L s3cret d", "grep -R s3cret d", "find -L d -name id_rsa"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("command", PLAN_OUTSIDE)
def test_plan_mode_asks_about_reading_elsewhere_by_moving_or_following_links(command: str, tmp_path: Path) -> None:
    ws, other = tmp_path / "proj", tmp_path / "other"
    (ws / "d").mkdir(parents=True)
    other.mkdir()
    _git("init", "-q", cwd=other)
    (other / "secret.txt").write_text("s3cret\n")
    _git("add", "secret.txt", cwd=other)
    _git("commit", "-qm", "s", cwd=other)
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    os.symlink(tmp_path / "home" / ".ssh", ws / "d" / "keys")
    p = Permissions("plan", cwd=ws, home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind != "allow", command
    # the same command kept inside the workspace, without following links, is approved
    inside = command.replace("../other", "d").replace("-L ", "").replace("-R ", "-r ")
    assert p.evaluate("Bash", {"command": inside}).kind == "allow", inside
