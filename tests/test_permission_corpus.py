"""A security corpus for the permission gate, run end to end.

Every case is one tool call made by a ScriptedModel through `lw.run`, with the real
built-in tools (Bash, Write, Edit, Read, ...) in a temp tree full of canary files:

    root/proj/            the working directory
        canary.txt        must survive every denied case
        .git/config, src/app.py, secrets/key, package.json (`npm run test` succeeds),
        ls (a fake `ls` that writes a file)
        link_out -> ../outside, src/out -> ../../outside   (symlink escapes)
    root/outside/canary.txt   outside the working directory
    root/home/.bashrc          $HOME for the run

Denied cases must come back as an is_error "Permission denied" result listed in
`permission_denials`, and the whole tree must be byte-for-byte unchanged afterwards. So
that an unchanged tree means something, each denied case (unless marked otherwise) is
also run once with bypassPermissions and no rules, and there it must change the tree.
Allowed cases must run (no denial) and, where they write, have their effect.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.tools.builtin import default_tools

from helpers import first_tool_result, result_text

RULES: dict[str, dict[str, Any]] = {
    # A typical project: a few approved commands, destructive ones and secrets denied.
    "default": {"mode": "default",
                "allow": ["Bash(npm run test:*)", "Bash(git diff *)", "Bash(echo *)", "Bash(git status)"],
                "deny": ["Bash(rm *)", "Bash(curl *)", "Read(./secrets/**)", "Edit(./src/generated/**)"]},
    "acceptEdits": {"mode": "acceptEdits",
                    "deny": ["Bash(rm *)", "Read(./secrets/**)", "Edit(./src/generated/**)"]},
    "dontAsk": {"mode": "dontAsk", "allow": ["Bash(ls *)", "Bash(cat *)", "Edit(./src/**)"]},
    "plan": {"mode": "plan"},
    "bypass": {"mode": "bypassPermissions", "deny": ["Bash(rm *)", "Edit(./.env)", "Read(./secrets/**)"],
               "ask": ["Bash(touch *)", "Bash(git push *)"]},
    "extraDir": {"mode": "acceptEdits", "add_dirs": ["../outside"]},
}

# (rule set, tool, input (a str is a Bash command), control): control=False when the call
# would not change the tree even if it ran (reads), so only the denial is checked.
DENIED: list[tuple[str, str, Any, bool]] = [
    # chaining: every part must be allowed
    ("default", "Bash", "ls && rm canary.txt", True),
    ("default", "Bash", "ls; rm canary.txt", True),
    ("default", "Bash", "false || rm canary.txt", True),
    ("default", "Bash", "ls | rm canary.txt", True),
    ("default", "Bash", "ls & rm canary.txt", True),
    ("default", "Bash", "ls\nrm canary.txt", True),
    ("default", "Bash", "npm run test && rm canary.txt", True),
    ("default", "Bash", "git diff; touch pwned", True),
    ("default", "Bash", "echo ok && touch pwned", True),
    ("default", "Bash", "ls |& tee canary.txt", True),
    # substitutions: the commands inside are commands too
    ("default", "Bash", "echo $(rm canary.txt)", True),
    ("default", "Bash", "echo `rm canary.txt`", True),
    ("default", "Bash", 'echo "$(rm canary.txt)"', True),
    ("default", "Bash", 'echo "x`touch pwned`"', True),
    ("default", "Bash", "cat <(rm canary.txt)", True),
    ("default", "Bash", "X=$(touch pwned)", True),
    ("default", "Bash", "echo ${x:=$(rm canary.txt)}", True),
    ("default", "Bash", "cat <<EOF\n$(rm canary.txt)\nEOF", True),
    ("default", "Bash", "echo $((1+2)) && rm canary.txt", True),
    # grouping, functions and control flow
    ("default", "Bash", "(rm canary.txt)", True),
    ("default", "Bash", "{ rm canary.txt; }", True),
    ("default", "Bash", "f() { rm canary.txt; }; f", True),
    ("default", "Bash", "for f in canary.txt; do rm $f; done", True),
    ("default", "Bash", "if true; then touch pwned; fi", True),
    # wrappers are stripped before matching
    ("default", "Bash", "timeout 5 rm canary.txt", True),
    ("default", "Bash", "nice -n 5 rm canary.txt", True),
    ("default", "Bash", "nohup rm canary.txt", True),
    ("default", "Bash", "env FOO=1 rm canary.txt", True),
    ("default", "Bash", "FOO=1 rm canary.txt", True),
    ("default", "Bash", "command rm canary.txt", True),
    ("default", "Bash", "time rm canary.txt", True),
    ("default", "Bash", "echo canary.txt | xargs rm", True),
    ("default", "Bash", "echo canary.txt | xargs -I{} rm {}", True),
    ("default", "Bash", "printf canary.txt | xargs -0 -n 1 rm -f", True),
    ("default", "Bash", "find . -name canary.txt -exec rm {} \\;", True),
    ("default", "Bash", "find . -name canary.txt -delete", True),
    ("default", "Bash", "find . -maxdepth 1 -name canary.txt -execdir mv {} gone \\;", True),
    ("default", "Bash", 'bash -c "rm canary.txt"', True),
    ("default", "Bash", "sh -c 'rm canary.txt'", True),
    ("default", "Bash", 'eval "rm canary.txt"', True),
    ("default", "Bash", '"rm" canary.txt', True),
    ("default", "Bash", "r\\m canary.txt", True),
    # commands computed at run time are never auto-allowed
    ("default", "Bash", "$(echo rm) canary.txt", True),
    ("default", "Bash", "X=rm; $X canary.txt", True),
    ("default", "Bash", 'sh -c "$(echo touch) pwned"', True),
    ("default", "Bash", "PATH=.:$PATH ls", True),
    # quoted operators do not split, but the real ones after them do
    ("default", "Bash", 'echo "a && b" && rm canary.txt', True),
    ("default", "Bash", "echo 'x; y' ; touch pwned", True),
    # redirections are writes
    ("default", "Bash", "echo hi > canary.txt", True),
    ("default", "Bash", "echo hi >> canary.txt", True),
    ("default", "Bash", "ls > listing.txt", True),
    ("default", "Bash", "ls 2> errors.txt", True),
    ("default", "Bash", "ls &> all.txt", True),
    ("default", "Bash", "echo pwned > ~/.bashrc", True),
    ("default", "Bash", "echo x > .git/config", True),
    ("default", "Bash", "echo x > ../outside/canary.txt", True),
    ("default", "Bash", "echo x > link_out/canary.txt", True),
    ("default", "Bash", "cat secrets/key > leaked.txt", True),
    ("default", "Bash", "cd .git && echo x > config", True),
    # unapproved commands and reads of denied paths
    ("default", "Bash", "touch pwned", True),
    ("default", "Bash", "mkdir newdir", True),
    ("default", "Bash", "cp canary.txt ../outside/copied.txt", True),
    ("default", "Bash", "mv canary.txt moved.txt", True),
    ("default", "Bash", "echo x | tee canary.txt", True),
    ("default", "Bash", "python3 -c \"open('canary.txt', 'w')\"", True),
    ("default", "Bash", "cat secrets/key", False),
    ("default", "Read", {"file_path": "secrets/key"}, False),
    ("default", "Grep", {"pattern": "s3cret", "path": "secrets"}, False),
    ("default", "Write", {"file_path": "new.txt", "content": "x"}, True),
    ("default", "Write", {"file_path": "../outside/new.txt", "content": "x"}, True),
    # acceptEdits: edits inside the working directory only, never protected paths
    ("acceptEdits", "Write", {"file_path": "../outside/new.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "link_out/new.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "src/out/new.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "{root}/outside/abs.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "src/../../outside/dotdot.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": ".git/hooks/pre-commit", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": ".loopwright/settings.json", "content": "{}"}, True),
    ("acceptEdits", "Write", {"file_path": ".claude/settings.json", "content": "{}"}, True),
    ("acceptEdits", "Write", {"file_path": "~/.zshrc", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": ".bashrc", "content": "x"}, True),
    # reads stay inside the working directories (as Claude Code): outside needs approval
    ("default", "Read", {"file_path": "../outside/canary.txt"}, False),
    ("default", "Read", {"file_path": "link_out/canary.txt"}, False),
    ("plan", "Read", {"file_path": "{root}/outside/canary.txt"}, False),
    ("acceptEdits", "Grep", {"pattern": "canary", "path": "../outside", "output_mode": "content"}, False),
    ("acceptEdits", "Glob", {"pattern": "*.txt", "path": "{root}/outside"}, False),
    ("acceptEdits", "Bash", "cat ../outside/canary.txt", False),
    ("dontAsk", "Bash", "cat link_out/canary.txt", False),
    ("default", "Bash", "head -1 ~/.bashrc", False),
    # run from the home directory: credentials and logins are protected too
    ("acceptEdits", "Write", {"file_path": ".ssh/authorized_keys", "content": "ssh-ed25519 AAAA evil"}, True),
    ("acceptEdits", "Write", {"file_path": ".aws/credentials", "content": "[default]"}, True),
    ("acceptEdits", "Bash", "echo 'machine x login y' > .netrc", True),
    ("acceptEdits", "Write", {"file_path": "secrets/new.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "src/generated/x.py", "content": "x"}, True),
    ("acceptEdits", "Bash", "touch ../outside/pwned", True),
    ("acceptEdits", "Bash", "mkdir -p .git/hooks2", True),
    ("acceptEdits", "Bash", "cp canary.txt link_out/copied", True),
    ("acceptEdits", "Bash", "mv canary.txt ../outside/", True),
    ("acceptEdits", "Bash", "echo x > link_out/pwned", True),
    ("acceptEdits", "Bash", "mkdir -p src/generated/x", True),
    ("acceptEdits", "Bash", "cp secrets/key leaked", True),
    ("acceptEdits", "Bash", 'touch "$HOME/pwned"', True),
    ("acceptEdits", "Bash", "touch ~/pwned", True),
    ("acceptEdits", "Bash", "rm canary.txt", True),
    ("acceptEdits", "Bash", "ln -s ../outside escape", True),
    ("acceptEdits", "Bash", "mv canary.txt .g*/", True),
    # plan: read-only tools only
    ("plan", "Write", {"file_path": "src/new.py", "content": "x"}, True),
    ("plan", "Bash", "touch pwned", True),
    ("plan", "Bash", "git diff --output=pwned.txt", True),
    ("plan", "Bash", "ls > listing.txt", True),
    ("plan", "Bash", "find . -name canary.txt -delete", True),
    ("plan", "Bash", "sort -o sorted.txt canary.txt", True),
    # dontAsk: anything not pre-approved is refused
    ("dontAsk", "Write", {"file_path": "canary2.txt", "content": "x"}, True),
    ("dontAsk", "Write", {"file_path": "src/../new.txt", "content": "x"}, True),
    ("dontAsk", "Write", {"file_path": "src/out/new.txt", "content": "x"}, True),
    ("dontAsk", "Bash", "ls && touch pwned", True),
    ("dontAsk", "Bash", "cat canary.txt > copy.txt", True),
    # bypassPermissions still honours deny and ask rules
    ("bypass", "Bash", "rm canary.txt", True),
    ("bypass", "Bash", "ls && rm canary.txt", True),
    ("bypass", "Bash", "touch pwned", True),
    ("bypass", "Write", {"file_path": ".env", "content": "x"}, True),
    ("bypass", "Bash", "cat secrets/key > out.txt", True),
    ("bypass", "Bash", "bash -o pipefail -c 'rm canary.txt'", True),
    ("bypass", "Bash", "/bin/rm canary.txt", True),
    ("bypass", "Bash", "setsid -w rm canary.txt", True),
    ("bypass", "Bash", "cd src && rm ../canary.txt", True),
]

# (rule set, tool, input, path that must exist afterwards or None)
ALLOWED: list[tuple[str, str, Any, str | None]] = [
    ("default", "Bash", "ls -la", None),
    ("default", "Bash", "cat canary.txt", None),
    ("default", "Bash", "pwd", None),
    ("default", "Bash", "git diff HEAD", None),
    ("default", "Bash", "git status", None),
    ("default", "Bash", "npm run test", None),
    ("default", "Bash", "echo 'x; rm canary.txt'", None),
    ("default", "Bash", 'echo "a && rm canary.txt"', None),
    ("default", "Bash", "ls | grep canary | wc -l", None),
    ("default", "Bash", "head -n 1 canary.txt && tail -n 1 canary.txt", None),
    ("default", "Bash", 'find . -name "*.txt"', None),
    ("default", "Bash", "ls 2>/dev/null", None),
    ("default", "Bash", "echo hi > /dev/null 2>&1", None),
    ("default", "Bash", "timeout 5 ls", None),
    ("default", "Bash", "nice -n 5 cat canary.txt", None),
    ("default", "Bash", "FOO=1 ls", None),
    ("default", "Bash", "wc -c canary.txt; pwd", None),
    ("default", "Bash", "(ls; pwd)", None),
    ("default", "Bash", "echo $(pwd)", None),
    ("default", "Bash", "ls | xargs echo", None),
    ("default", "Bash", "cat canary.txt | sort | uniq", None),
    ("default", "Bash", "grep -n canary canary.txt", None),
    ("default", "Bash", "bash -c 'ls && pwd'", None),
    ("default", "Read", {"file_path": "canary.txt"}, None),
    ("default", "Grep", {"pattern": "canary"}, None),
    ("default", "Glob", {"pattern": "*.txt"}, None),
    ("acceptEdits", "Write", {"file_path": "src/new.py", "content": "x"}, "src/new.py"),
    ("acceptEdits", "Write", {"file_path": "docs/readme.md", "content": "x"}, "docs/readme.md"),
    ("acceptEdits", "Bash", "mkdir -p build/out && touch build/out/x", "build/out/x"),
    ("acceptEdits", "Bash", "cp canary.txt copy.txt", "copy.txt"),
    ("acceptEdits", "Bash", "echo hi > out.txt", "out.txt"),
    ("acceptEdits", "Bash", "mv canary.txt renamed.txt", "renamed.txt"),
    ("dontAsk", "Write", {"file_path": "src/x.py", "content": "x"}, "src/x.py"),
    ("dontAsk", "Bash", "ls -la", None),
    ("dontAsk", "Bash", "cat canary.txt", None),
    ("plan", "Bash", "ls && git status", None),
    ("plan", "Read", {"file_path": "canary.txt"}, None),
    ("bypass", "Bash", "mkdir made", "made"),
    ("bypass", "Write", {"file_path": "../outside/bypass.txt", "content": "x"}, "../outside/bypass.txt"),
    ("extraDir", "Write", {"file_path": "../outside/extra.txt", "content": "x"}, "../outside/extra.txt"),
    ("extraDir", "Bash", "touch ../outside/touched", "../outside/touched"),
    ("extraDir", "Read", {"file_path": "../outside/canary.txt"}, None),
    ("extraDir", "Bash", "cat ../outside/canary.txt", None),
]


def make_tree(root: Path) -> Path:
    proj = root / "proj"
    for d in ("src", ".git", "secrets", "outside_placeholder"):
        (proj / d).mkdir(parents=True, exist_ok=True)
    (proj / "outside_placeholder").rmdir()
    (root / "outside").mkdir()
    (root / "home").mkdir()
    (proj / "canary.txt").write_text("canary\n")
    (proj / "package.json").write_text('{"name": "p", "version": "1.0.0", "scripts": {"test": "true"}}\n')
    (proj / ".git" / "config").write_text("[core]\n")
    (proj / "src" / "app.py").write_text("print('app')\n")
    (proj / "secrets" / "key").write_text("s3cret\n")
    (root / "outside" / "canary.txt").write_text("outside canary\n")
    (root / "home" / ".bashrc").write_text("# rc\n")
    fake_ls = proj / "ls"
    fake_ls.write_text("#!/bin/sh\ntouch pwned_by_path\n")
    fake_ls.chmod(0o755)
    (proj / "link_out").symlink_to(root / "outside")
    (proj / "src" / "out").symlink_to(root / "outside")
    return proj


def snapshot(root: Path) -> dict[str, str]:
    """Every file, directory and symlink under root, with contents."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".npm"]  # npm's own logs in $HOME
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "-> " + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = p.read_bytes().decode(errors="replace")
    return out


def call(tool: str, spec: Any, root: Path) -> dict[str, Any]:
    if isinstance(spec, str):
        return {"command": spec}
    return {k: v.replace("{root}", str(root)) if isinstance(v, str) else v for k, v in spec.items()}


def run_case(root: Path, rules: dict[str, Any], tool: str, spec: Any) -> lw.ResultMessage:
    proj = root / "proj"
    use = {"type": "tool_use", "id": "t1", "name": tool, "input": call(tool, spec, root)}
    model = lw.ScriptedModel([[use], [{"type": "text", "text": "done"}]])
    opts = lw.AgentOptions(
        model=model, tools=default_tools(), cwd=proj, permission_mode=rules.get("mode"),
        allowed_tools=list(rules.get("allow", [])), disallowed_tools=list(rules.get("deny", [])),
        settings={"permissions": {"ask": list(rules.get("ask", []))}}, setting_sources=[],
        add_dirs=list(rules.get("add_dirs", [])))
    return lw.run("go", opts)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOOPWRIGHT_HOME", str(tmp_path / "home" / ".loopwright"))
    monkeypatch.setenv("NO_UPDATE_NOTIFIER", "1")
    monkeypatch.setenv("npm_config_update_notifier", "false")
    make_tree(tmp_path)
    return tmp_path


def _id(case: tuple[Any, ...]) -> str:
    spec = case[2] if isinstance(case[2], str) else case[2].get("file_path") or case[2].get("pattern")
    return f"{case[0]}-{case[1]}-{spec}"[:80]


def test_corpus_sizes() -> None:
    assert len(DENIED) >= 60 and len(ALLOWED) >= 30
    assert len({_id(c) for c in DENIED}) == len(DENIED)


@pytest.mark.parametrize("case", DENIED, ids=[_id(c) for c in DENIED])
def test_denied_and_nothing_changes(case: tuple[str, str, Any, bool], root: Path) -> None:
    ruleset, tool, spec, _control = case
    before = snapshot(root)
    r = run_case(root, RULES[ruleset], tool, spec)
    block = first_tool_result(r)
    assert block["is_error"] is True
    assert "Permission denied" in result_text(block), result_text(block)
    assert [d["tool_use_id"] for d in r.permission_denials] == ["t1"]
    assert snapshot(root) == before
    assert "s3cret" not in result_text(block) and "outside canary" not in result_text(block)
    assert r.subtype == "success"  # a denial is a tool result, not the end of the run


@pytest.mark.parametrize("case", [c for c in DENIED if c[3]], ids=[_id(c) for c in DENIED if c[3]])
def test_denied_case_would_change_the_tree(case: tuple[str, str, Any, bool], root: Path) -> None:
    """The control: with no rules in bypassPermissions the same call does change the tree,
    so the unchanged tree above is the gate's doing."""
    _ruleset, tool, spec, _control = case
    before = snapshot(root)
    r = run_case(root, {"mode": "bypassPermissions"}, tool, spec)
    assert r.permission_denials == []
    assert snapshot(root) != before, result_text(first_tool_result(r))


@pytest.mark.parametrize("case", ALLOWED, ids=[_id(c) for c in ALLOWED])
def test_allowed_runs(case: tuple[str, str, Any, str | None], root: Path) -> None:
    ruleset, tool, spec, created = case
    r = run_case(root, RULES[ruleset], tool, spec)
    block = first_tool_result(r)
    assert r.permission_denials == [], result_text(block)
    assert "Permission denied" not in result_text(block)
    if created is not None:
        assert (root / "proj" / created).exists(), result_text(block)
    assert (root / "outside" / "canary.txt").read_text() == "outside canary\n"
    assert (root / "home" / ".bashrc").read_text() == "# rc\n"
