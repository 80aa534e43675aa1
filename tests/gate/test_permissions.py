"""The gate's rules: syntax, matching, evaluation order, modes, the callback, and the
command splitter underneath. End-to-end canary checks live in test_permission_corpus.py."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.gate import (
    Allow,
    Deny,
    Permissions,
    Rule,
    Verdict,
    command_matches,
    path_rule_matches,
)
from loopwright.gate.shell import bashcheck, bashparse
from loopwright.tools.builtin import default_tools
from loopwright.workspace import BashState, ToolState, kernel_path, shell_cwd
from tests.helpers import bash, first_tool_result, loopwright_cmd, text, use

# --- rule syntax and matching ----------------------------------------------------------------

def test_rule_parsing() -> None:
    assert Rule.parse("Bash") == Rule("Bash", None)
    assert Rule.parse("Bash(npm run test:*)").specifier == "npm run test:*"
    assert Rule.parse("Bash(*)").specifier is None
    assert str(Rule.parse(" Edit( ./src/** ) ")) == "Edit(./src/**)"
    for bad in ("Bash(", "Ba sh", "(x)", ""):
        with pytest.raises(ValueError, match="malformed permission rule"):
            Rule.parse(bad)


@pytest.mark.parametrize("spec,command,expected", [
    ("ls *", "ls", True), ("ls *", "ls -la", True), ("ls *", "lsof", False), ("ls*", "lsof", True),
    ("npm run test:*", "npm run test", True), ("npm run test:*", "npm run test -- -k x", True),
    ("npm run test:*", "npm run testx", False), ("npm run test:*", "npm run test:unit", False),
    ("git * main", "git push origin main", True), ("git * main", "git push origin dev", False),
    ("* --version", "node --version", True), ("npm run build", "npm run build", True),
    ("npm run build", "npm run build --prod", False), ("git diff *", "git  diff   HEAD", True),
    ("git diff *", "git diffx", False), (r"echo \*", "echo *", True), (r"echo \*", "echo x", False),
])
def test_command_patterns(spec: str, command: str, expected: bool) -> None:
    assert command_matches(spec, command) is expected


@pytest.mark.parametrize("spec,path,expected", [
    ("//etc/passwd", "/etc/passwd", True), ("//etc/**", "/etc/ssh/sshd_config", True),
    ("~/.ssh/**", "/home/u/.ssh/id_rsa", True), ("~/.ssh/**", "/home/u/ssh/x", False),
    ("/src/**/*.ts", "/proj/src/a/b.ts", True), ("/src/**/*.ts", "/proj/lib/src/b.ts", False),
    ("./secrets/**", "/work/secrets/a/b", True), ("./secrets/**", "/work/x/secrets/a", False),
    ("*.env", "/work/.env", True), ("*.env", "/work/a/prod.env", True), (".env", "/work/sub/.env", True),
    ("secrets", "/work/secrets/key", True), ("./secrets/**", "/elsewhere/secrets/k", False),
])
def test_path_patterns(spec: str, path: str, expected: bool) -> None:
    # cwd /work, the settings file's project /proj, home /home/u
    cwd = "/proj" if spec.startswith("/src") else "/work"
    assert path_rule_matches(spec, path, cwd, "/proj", "/home/u") is expected


# --- evaluation order --------------------------------------------------------------------------

def gate(tmp: Path, mode: str | None = "default", **kw: Any) -> Permissions:
    return Permissions(mode, cwd=tmp, home=tmp / "home", **kw)  # type: ignore[arg-type]


def verdict(p: Permissions, name: str, x: dict[str, Any], read_only: bool = False) -> str:
    return p.evaluate(name, x, read_only).kind


def test_deny_beats_a_more_specific_allow(tmp_path: Path) -> None:
    p = gate(tmp_path, allowed_tools=["Bash(aws s3 ls)"], disallowed_tools=["Bash(aws *)"])
    assert verdict(p, "Bash", {"command": "aws s3 ls"}) == "deny"


def test_ask_beats_allow_and_bypass(tmp_path: Path) -> None:
    for mode in ("default", "bypassPermissions", "acceptEdits"):
        p = gate(tmp_path, mode, allowed_tools=["Bash"], ask_tools=["Bash(git push *)"])
        assert verdict(p, "Bash", {"command": "git push origin main"}) == "ask"
        assert verdict(p, "Bash", {"command": "git status"}) == "allow"


def test_bare_tool_rules(tmp_path: Path) -> None:
    p = gate(tmp_path, allowed_tools=["WebSearch"], disallowed_tools=["WebFetch"])
    assert verdict(p, "WebSearch", {"query": "x"}) == "allow"
    assert verdict(p, "WebFetch", {"url": "https://a.b"}) == "deny"
    assert verdict(p, "Other", {}) == "ask"
    assert verdict(p, "Other", {}, read_only=True) == "allow"


def test_bookkeeping_tools_need_no_approval_but_rules_apply(tmp_path: Path) -> None:
    from loopwright.agents import make_agent_tool
    from loopwright.tools.builtin import default_tools

    tools = {t.name: t for t in [*default_tools(), make_agent_tool({})]}
    free = {n for n, t in tools.items() if not t.needs_approval}
    assert free == {"TodoWrite", "BashOutput", "KillShell", "Agent", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate"}
    for mode in ("default", "plan", "dontAsk"):
        p = gate(tmp_path, mode, disallowed_tools=["Agent(general-purpose)"])
        # the executor passes `read_only or not needs_approval` for these tools
        assert verdict(p, "KillShell", {"shell_id": "1"}, read_only=True) == "allow"
        assert verdict(p, "Agent", {"subagent_type": "Explore", "prompt": "x"}, read_only=True) == "allow"
        assert verdict(p, "Agent", {"subagent_type": "general-purpose", "prompt": "x"}, read_only=True) == "deny"
        # the exemption belongs to the tool, not the name: a user's own "Task" tool is asked about
        assert verdict(p, "Task", {"prompt": "x"}) in ("ask", "deny")


def test_specifiers_of_other_tools(tmp_path: Path) -> None:
    p = gate(tmp_path, allowed_tools=["WebFetch(domain:docs.python.org)", "mcp__github", "Agent(Explore)"],
             disallowed_tools=["mcp__db__drop_table"])
    assert verdict(p, "WebFetch", {"url": "https://docs.python.org/3/"}) == "allow"
    assert verdict(p, "WebFetch", {"url": "https://evil.example/"}) == "ask"
    assert verdict(p, "mcp__github__create_issue", {}) == "allow"
    assert verdict(p, "mcp__db__drop_table", {}) == "deny"
    assert verdict(p, "Agent", {"subagent_type": "Explore", "prompt": "x"}) == "allow"


def test_edit_rules_cover_write_and_multiedit_and_read_deny_blocks_writes(tmp_path: Path) -> None:
    p = gate(tmp_path, allowed_tools=["Edit(./src/**)"], disallowed_tools=["Read(./.env)"])
    for tool in ("Edit", "Write", "MultiEdit"):
        assert verdict(p, tool, {"file_path": "src/a.py"}) == "allow"
        assert verdict(p, tool, {"file_path": "lib/a.py"}) == "ask"
        assert verdict(p, tool, {"file_path": ".env"}) == "deny"


def test_a_bare_write_rule_approves_write_in_the_default_mode(tmp_path: Path) -> None:
    """allowed_tools=["Read", "Write"] (the Claude Agent SDK's quick_start.py) lets Write write inside
    the working directories without asking, as Claude Code does; only Write, not Edit, and never a
    protected path or one outside (tests/sdkproto/test_official_examples.py runs the example)."""
    p = gate(tmp_path, allowed_tools=["Read", "Write"])
    assert verdict(p, "Write", {"file_path": str(tmp_path / "hello.txt")}) == "allow"
    assert verdict(p, "Edit", {"file_path": str(tmp_path / "hello.txt")}) == "ask"
    assert verdict(p, "Write", {"file_path": str(tmp_path.parent / "out.txt")}) == "ask"
    assert verdict(p, "Write", {"file_path": str(tmp_path / ".git" / "config")}) == "ask"


def test_read_rules_govern_glob_and_grep_paths(tmp_path: Path) -> None:
    p = gate(tmp_path, disallowed_tools=["Read(./private/**)"])
    assert verdict(p, "Glob", {"pattern": "*", "path": "private"}, True) == "deny"
    assert verdict(p, "Grep", {"pattern": "x", "path": "private/sub"}, True) == "deny"
    assert verdict(p, "Grep", {"pattern": "x", "path": "public"}, True) == "allow"
    assert verdict(p, "Read", {"file_path": str(tmp_path / "private" / "a")}, True) == "deny"


def test_redirections_under_a_bare_bash_rule_stay_inside_and_off_protected_paths(tmp_path: Path) -> None:
    p = gate(tmp_path, allowed_tools=["Bash"])
    assert verdict(p, "Bash", {"command": "make > build.log"}) == "allow"
    assert verdict(p, "Bash", {"command": "make > ../build.log"}) == "ask"
    assert verdict(p, "Bash", {"command": "echo x >> .git/config"}) == "ask"
    p = gate(tmp_path, allowed_tools=["Bash(make *)"])  # a narrower rule does not approve the write
    assert verdict(p, "Bash", {"command": "make > build.log"}) == "ask"
    assert verdict(p, "Bash", {"command": "make 2>/dev/null"}) == "allow"


def test_shared_verdicts_cannot_be_changed_and_a_writes_ask_names_its_program(tmp_path: Path) -> None:
    """ALLOW and the other shared verdicts are one object for many calls: a change to one would
    change every later call's answer, so they are frozen; the Bash write check's own ask still
    names the program that needs approval."""
    import dataclasses

    from loopwright.gate.verdict import ALLOW, NO_ALLOW_RULE, UNAPPROVED

    for shared in (ALLOW, NO_ALLOW_RULE, UNAPPROVED):
        with pytest.raises(dataclasses.FrozenInstanceError):
            shared.subject = "rm"  # type: ignore[misc]
    p = gate(tmp_path)
    v = p.evaluate("Bash", {"command": "tee ../out.txt"})
    assert v.kind == "ask" and v.subject == "tee" and v.code == "outside"


def test_a_rule_appended_to_a_gates_list_in_place_counts_at_the_next_call(tmp_path: Path) -> None:
    """The gate knows per tool whether any rule names it; a deny rule a caller appends to its
    list in place must still count (it used to be missed until the list was replaced)."""
    from loopwright.gate.rules import parse_rules

    p = gate(tmp_path, "bypassPermissions")
    assert verdict(p, "WebFetch", {"url": "https://example.com"}) == "allow"  # no rule names it: known
    p.deny.extend(parse_rules(["WebFetch"], "cli"))
    assert verdict(p, "WebFetch", {"url": "https://example.com"}) == "deny"


def test_unparseable_commands_are_never_auto_allowed(tmp_path: Path) -> None:
    p = gate(tmp_path, allowed_tools=["Bash(echo *)"])
    assert verdict(p, "Bash", {"command": "echo $((1+2))"}) == "ask"
    assert verdict(p, "Bash", {"command": "echo 'unterminated"}) == "ask"
    assert verdict(p, "Bash", {"command": "echo 3"}) == "allow"


def test_read_only_commands_need_every_part_read_only(tmp_path: Path) -> None:
    p = gate(tmp_path)
    for ok in ("ls -la", "git log --oneline | head -5", "cat a.txt | sort | uniq -c", "find . -name '*.py'",
               "grep -rn TODO src", "pwd && ls", "git branch", "rg foo", "echo $(git rev-parse HEAD)"):
        assert verdict(p, "Bash", {"command": ok}) == "allow", ok
    for bad in ("find . -exec cat {} +", "git branch new-feature", "git -c core.pager=sh log", "sort -o out a",
                "rg --pre ./evil x", "ls > out", "uniq a b", "git push", "sed -i s/a/b/ f", "date -s now",
                "git diff --output=x"):
        assert verdict(p, "Bash", {"command": bad}) == "ask", bad


# --- modes ------------------------------------------------------------------------------------

MODE_TABLE = [
    # mode, tool, input, expected
    ("default", "Write", {"file_path": "a.py"}, "ask"),
    ("default", "Bash", {"command": "touch a"}, "ask"),
    ("default", "Bash", {"command": "ls"}, "allow"),
    ("acceptEdits", "Write", {"file_path": "a.py"}, "allow"),
    ("acceptEdits", "Write", {"file_path": "../a.py"}, "ask"),
    ("acceptEdits", "Bash", {"command": "mkdir -p b && touch b/c && cp b/c d && mv d e"}, "allow"),
    ("acceptEdits", "Bash", {"command": "npm install"}, "ask"),
    ("plan", "Write", {"file_path": "a.py"}, "deny"),
    ("plan", "Bash", {"command": "touch a"}, "deny"),
    ("plan", "Bash", {"command": "git status"}, "allow"),
    ("bypassPermissions", "Write", {"file_path": "../a.py"}, "allow"),
    ("bypassPermissions", "Write", {"file_path": ".git/config"}, "allow"),
    ("bypassPermissions", "Bash", {"command": "anything --at all"}, "allow"),
    ("dontAsk", "Write", {"file_path": "a.py"}, "ask"),  # ask -> refused in dontAsk (see below)
    ("dontAsk", "Bash", {"command": "ls"}, "allow"),
]


@pytest.mark.parametrize("mode,tool,x,expected", MODE_TABLE)
def test_modes(mode: str, tool: str, x: dict[str, Any], expected: str, tmp_path: Path) -> None:
    assert verdict(gate(tmp_path, mode), tool, x) == expected


def decide(p: Permissions, name: str, x: dict[str, Any], read_only: bool = False) -> Allow | Deny:
    return asyncio.run(p.decide(name, x, read_only))


def test_ask_goes_to_the_callback_or_is_refused_with_a_hint(tmp_path: Path) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def cb(name: str, x: dict[str, Any]) -> dict[str, Any]:
        asked.append((name, x))
        return {"behavior": "allow", "updatedInput": {"command": "touch safer"}}

    assert decide(gate(tmp_path, can_use_tool=cb), "Bash", {"command": "touch a"}) == Allow({"command": "touch safer"})
    # the answer's own rewrite, asked about for the same plain reason (the same program, nothing
    # approves it), runs on that answer, as with Claude Code: not asked about again
    assert asked == [("Bash", {"command": "touch a"})]
    d = decide(gate(tmp_path), "Bash", {"command": "touch a"})
    assert isinstance(d, Deny) and "cannot ask" in d.message and "--allowedTools 'Bash(touch:*)'" in d.message
    # dontAsk never asks, even with a callback
    d = decide(gate(tmp_path, "dontAsk", can_use_tool=cb), "Bash", {"command": "touch a"})
    assert isinstance(d, Deny) and "dontAsk" in d.message and len(asked) == 1
    # allowed and denied calls never reach the callback
    decide(gate(tmp_path, can_use_tool=cb, disallowed_tools=["Bash(touch *)"]), "Bash", {"command": "touch a"})
    decide(gate(tmp_path, can_use_tool=cb), "Bash", {"command": "ls"})
    assert len(asked) == 1


def test_a_rewrite_for_a_new_reason_is_asked_about_again(tmp_path: Path) -> None:
    """An answer's rewrite the rules ask about for a new reason (another program, a path outside
    the working directories) is asked about again (issue 40); the answer to the rewrite decides."""
    asked: list[dict[str, Any]] = []

    def cb(name: str, x: dict[str, Any]) -> dict[str, Any]:
        asked.append(x)
        if x == {"command": "touch a"}:
            return {"behavior": "allow", "updatedInput": {"command": "chmod 600 a"}}
        if x.get("file_path", "").endswith("in.txt"):
            return {"behavior": "allow", "updatedInput": {"file_path": str(tmp_path.parent / "out.txt"), "content": ""}}
        return {"behavior": "deny", "message": "not that"}

    assert isinstance(decide(gate(tmp_path, can_use_tool=cb), "Bash", {"command": "touch a"}), Deny)
    assert asked == [{"command": "touch a"}, {"command": "chmod 600 a"}]
    d = decide(gate(tmp_path, can_use_tool=cb), "Write", {"file_path": str(tmp_path / "in.txt"), "content": ""})
    assert isinstance(d, Deny) and asked[-1] == {"file_path": str(tmp_path.parent / "out.txt"), "content": ""}


def test_mode_none_keeps_the_gate_out_of_the_way(tmp_path: Path) -> None:
    p = gate(tmp_path, None)
    assert decide(p, "Write", {"file_path": "/etc/x"}) == Allow()
    assert decide(p, "Bash", {"command": "rm -rf /nonexistent"}) == Allow()
    seen: list[str] = []

    def cb(name: str, x: dict[str, Any]) -> bool:
        seen.append(name)
        return True

    p = gate(tmp_path, None, can_use_tool=cb, disallowed_tools=["Bash(rm *)"], allowed_tools=["Bash(ls *)"])
    assert isinstance(decide(p, "Bash", {"command": "rm x"}), Deny)
    assert decide(p, "Bash", {"command": "ls"}) == Allow() and seen == []
    assert decide(p, "Write", {"file_path": "a"}) == Allow() and seen == ["Write"]


def test_decide_keeps_its_old_signature(tmp_path: Path) -> None:
    p = Permissions("default", ["Read"], [], None)
    assert asyncio.run(p.decide("Read", {"file_path": "x"}, True)) == Allow()


def test_unknown_mode_and_bad_rules_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown permission mode"):
        Permissions("yolo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="malformed permission rule"):
        Permissions("default", ["Bash(oops"])
    with pytest.raises(ValueError, match="invalid path pattern"):
        Permissions("default", [], ["Read(\\)"])


def test_very_long_commands_are_not_auto_allowed_but_still_meet_deny_rules(tmp_path: Path) -> None:
    p = gate(tmp_path, disallowed_tools=["Bash(rm *)"])
    long = "echo " + "a " * 30_000
    assert verdict(p, "Bash", {"command": long}) == "ask"
    assert verdict(p, "Bash", {"command": long + "; rm -rf x"}) == "deny"


# --- through the loop ---------------------------------------------------------------------------

def test_persistent_shell_directory_is_used_for_paths(tmp_path: Path) -> None:
    """`cd .git` in one call, `echo x > config` in the next: the write lands in .git/config
    (Bash keeps its directory), so it must be judged as .git/config, a protected path."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    model = lw.ScriptedModel([[bash("cd .git", "t1")], [bash("echo x > config", "t2")], [{"type": "text", "text": "ok"}]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=tmp_path, permission_mode="acceptEdits"))
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n"
    assert [d["tool_use_id"] for d in r.permission_denials] == ["t2"]
    assert ".git is a protected directory" in str(r.messages[4]["content"][0]["content"])


def test_deny_with_interrupt_ends_the_run(tmp_path: Path) -> None:
    model = lw.ScriptedModel([[bash("touch a", "t1"), bash("touch b", "t2")], [{"type": "text", "text": "never"}]])
    r = lw.run("go", lw.AgentOptions(model=model, tools=default_tools(), cwd=tmp_path, permission_mode="default",
                                     can_use_tool=lambda n, x: Deny("stop everything", interrupt=True)))
    assert r.subtype == "error_during_execution" and r.result == "stop everything"
    assert [d["tool_use_id"] for d in r.permission_denials] == ["t1"]
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists() and model.calls == 1
    results = r.messages[2]["content"]
    assert [b["is_error"] for b in results] == [True, True]  # t2 gets its result too (Inv P2)


# --- the command splitter ---------------------------------------------------------------------------

@pytest.mark.parametrize("source,parts", [
    ("a && b || c; d | e |& f & g", ["a", "b", "c", "d", "e", "f", "g"]),
    ("a\nb", ["a", "b"]),
    ("(a; b) && { c; }", ["a", "b", "c"]),
    ("echo $(a) `b` \"$(c)\"", ["a", "b", "c", 'echo $(a) `b` "$(c)"']),
    ("cat <(a) >(b)", ["a", "b", "cat <(a) >(b)"]),
    ("timeout -s KILL 5 nice -n 3 nohup env -u X A=1 a x", ["a x"]),
    ("A=1 B=2 command -p a", ["a"]),
    ("time -p a", ["a"]),
    ("xargs -I{} -n 1 a {}", ["a {}"]),
    ("xargs", ["echo"]),
    ("find . -exec a {} \\; -execdir b {} +", ["a {}", "b {}", "find . -exec a {} \\; -execdir b {} +"]),
    ("bash -lc 'a; b'", ["a", "b"]),
    ("eval 'a && b'", ["a", "b"]),
    ("echo 'a && b' \"c; d\"", ["echo 'a && b' \"c; d\""]),
    ("sudo a", ["sudo a"]),
])
def test_splitting(source: str, parts: list[str]) -> None:
    parsed = bashparse.parse(source)
    assert parsed.ok, parsed.error
    assert [c.text for c in parsed.commands] == parts


def test_what_the_splitter_refuses_to_guess() -> None:
    for source in ("echo ${x:=$(a)}", "cat <<EOF\n$(a)\nEOF", "echo $((1+2))", "case x in x) a;; esac",
                   "[[ -f x ]] && a", "echo 'open"):
        parsed = bashparse.parse(source)
        assert not parsed.ok, source
    # ...but its rough split still exposes the commands to deny rules
    assert "a" in [c.name for c in bashparse.parse("echo ${x:=$(a)}").commands]
    parsed = bashparse.parse("$X a; sh -c \"$Y\"; env -S 'a b'")
    assert parsed.ok and [c.opaque is not None or c.name is None for c in parsed.commands] == [True, True, True]
    assert bashparse.parse("PATH=. ls").commands[0].unsafe_env == ["PATH"]
    w = bashparse.parse("echo hi > ~/x 2>&1").commands[0].redirects
    assert w[0].writes and w[0].target is not None and w[0].target.tilde and not w[1].writes


# --- the examples in docs/permissions.md --------------------------------------------------------

DOC_EXAMPLES: list[tuple[str, dict[str, Any], str, dict[str, Any], str, str]] = [
    # mode, extra rules, tool, input, expected, text the refusal must contain
    ("default", {"allowed_tools": ["Bash(npm run lint:*)"]}, "Bash", {"command": "npm run lint"}, "run", ""),
    ("default", {}, "Bash", {"command": "ls -la && git status"}, "run", ""),
    ("default", {}, "Write", {"file_path": "src/a.py"}, "refused", "acceptEdits"),
    ("default", {"allowed_tools": ["Bash(npm run lint:*)"]}, "Bash", {"command": "npm run lint && rm -rf dist"},
     "refused", "--allowedTools 'Bash(rm:*)'"),
    ("acceptEdits", {}, "Write", {"file_path": "tests/test_a.py"}, "run", ""),
    ("acceptEdits", {}, "Bash", {"command": "mkdir -p build && cp a build/"}, "run", ""),
    ("acceptEdits", {}, "Write", {"file_path": "../other/x.py"}, "refused", "outside the working directories"),
    ("acceptEdits", {}, "Write", {"file_path": ".git/hooks/pre-commit"}, "refused", ".git is a protected directory"),
    ("acceptEdits", {}, "Bash", {"command": "npm install"}, "refused", "needs approval"),
    ("plan", {}, "Bash", {"command": "git log -5"}, "run", ""),
    ("plan", {}, "Edit", {"file_path": "src/a.py"}, "refused", "plan mode allows read-only tools only"),
    ("plan", {}, "Bash", {"command": "ls > files.txt"}, "refused", "it redirects output into a file"),
    ("bypassPermissions", {"disallowed_tools": ["Bash(rm *)"]}, "Bash", {"command": "make clean && touch x"}, "run", ""),
    ("bypassPermissions", {}, "Write", {"file_path": "/tmp/elsewhere.txt"}, "run", ""),
    ("bypassPermissions", {"disallowed_tools": ["Bash(rm *)"]}, "Bash", {"command": "ls && rm -rf build"},
     "refused", "matches the deny rule Bash(rm *)"),
    ("dontAsk", {"allowed_tools": ["Bash(make check)", "Edit(./src/**)"]}, "Bash", {"command": "make check"}, "run", ""),
    ("dontAsk", {"allowed_tools": ["Edit(./src/**)"]}, "Edit", {"file_path": "src/a.py"}, "run", ""),
    ("dontAsk", {"allowed_tools": ["Edit(./src/**)"]}, "Edit", {"file_path": "README.md"}, "refused",
     "dontAsk mode refuses everything else"),
]


@pytest.mark.parametrize("mode,rules,tool,x,expected,needle", DOC_EXAMPLES)
def test_docs_examples(mode: str, rules: dict[str, Any], tool: str, x: dict[str, Any], expected: str,
                       needle: str, tmp_path: Path) -> None:
    read_only = tool in ("Read", "Grep", "Glob")
    d = decide(gate(tmp_path, mode, **rules), tool, x, read_only)
    assert ("run" if isinstance(d, Allow) else "refused") == expected
    if isinstance(d, Deny):
        assert needle in d.message, d.message


# --- generated compound commands -------------------------------------------------------------------

SAFE = ["ls -la", "cat a.txt", "echo hi", "pwd", "git status", "grep -n x a.txt", "echo 'rm x && touch y'",
        'echo "a; b | c"', "wc -l a.txt", "find . -name '*.py'"]
UNSAFE = ["touch pwned", "mkdir d", "python3 -c 'import os'", "curl x", "chmod 777 a"]
DENIED_FRAGMENTS = ["rm a.txt", "rm -rf d"]
WRAPPERS = ["", "timeout 5 ", "nice -n 5 ", "env A=1 ", "command ", "time ", "nohup "]
CONTAINERS = ["{}", "echo $({})", "echo `{}`", "({})", "{{ {}; }}", "bash -c '{}'", 'echo "$({})"', "cat <({})",
              "$({})"]  # the last runs the output of the command: never auto-allowed
OPERATORS = [" && ", " || ", "; ", " | ", " & ", "\n", " |& "]

fragment = st.tuples(st.sampled_from(SAFE + UNSAFE + DENIED_FRAGMENTS), st.sampled_from(WRAPPERS),
                     st.sampled_from(CONTAINERS))


@settings(max_examples=300, deadline=None)
@given(st.lists(fragment, min_size=1, max_size=4), st.lists(st.sampled_from(OPERATORS), min_size=3, max_size=3))
def test_generated_compounds(frags: list[tuple[str, str, str]], ops: list[str]) -> None:
    """However the parts are wrapped, nested and chained: a denied part denies the whole, an
    unapproved part makes it ask, and only all-read-only commands run without asking."""
    parts = []
    for cmd, wrapper, container in frags:
        inner = wrapper + cmd
        if "'" in inner and container == "bash -c '{}'":
            container = "{}"
        parts.append(container.format(inner))
    command = parts[0] + "".join(op + p for op, p in zip(ops, parts[1:], strict=False))
    p = Permissions("default", [], ["Bash(rm *)"], cwd="/work/project")
    kinds = {("deny" if c in DENIED_FRAGMENTS else "ask" if c in UNSAFE or k == "$({})" else "allow")
             for c, _, k in frags}
    expected = "deny" if "deny" in kinds else "ask" if "ask" in kinds else "allow"
    assert p.evaluate("Bash", {"command": command}).kind == expected, command


def test_refusals_say_how_to_allow(tmp_path: Path) -> None:
    p = gate(tmp_path, "acceptEdits")
    d = decide(p, "Write", {"file_path": ".git/config"})
    assert isinstance(d, Deny) and "bypassPermissions" in d.message and "acceptEdits" not in d.message
    d = decide(p, "Write", {"file_path": "../elsewhere/x"})
    assert isinstance(d, Deny) and "--add-dir" in d.message
    d = decide(gate(tmp_path), "Bash", {"command": "ls && make install"})
    assert isinstance(d, Deny) and "--allowedTools 'Bash(make install:*)'" in d.message


# --- the hardening (issue 9): paths as the kernel sees them, commands as bash expands them ------

def test_kernel_path_follows_a_symlink_before_the_dotdot_after_it(tmp_path: Path) -> None:
    (tmp_path / "far" / "deep").mkdir(parents=True)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "lnk").symlink_to(tmp_path / "far" / "deep")
    assert kernel_path(f"{tmp_path}/proj/lnk/../x") == (f"{tmp_path}/far/x", False)
    assert kernel_path(f"{tmp_path}/proj/missing/../x")[0] == f"{tmp_path}/proj/x"
    assert kernel_path("/proc/self/root/etc")[1] is True and kernel_path("/dev/fd/3")[1] is True
    assert kernel_path("/dev/null") == ("/dev/null", False)
    p = gate(tmp_path / "proj", "acceptEdits")
    for name, x in (("Read", {"file_path": "lnk/../x"}), ("Write", {"file_path": "lnk/../x", "content": ""}),
                    ("Bash", {"command": "touch lnk/../x"}), ("Grep", {"pattern": "x", "path": "lnk/.."})):
        v = p.evaluate(name, x, name in ("Read", "Grep"))
        assert v.kind == "ask" and v.code == "outside", (name, v)


def test_proc_self_cwd_is_the_commands_not_the_gates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library user's process cwd is rarely the project: the gate resolved /proc/self/cwd to
    its own cwd (here proj/src, where no deny rule applies), bash to the command's (proj)."""
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / ".env").write_text("TOKEN=s3cret\n")
    monkeypatch.chdir(proj / "src")
    cmd = "cat /proc/self/cwd/.env"

    def run(mode: str, deny: list[str]) -> str:
        use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": cmd}}
        r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use], [{"type": "text", "text": "ok"}]]),
                                         tools=default_tools(), cwd=proj, permission_mode=mode,
                                         disallowed_tools=deny, setting_sources=[]))
        return json.dumps(r.messages[2]["content"][0]["content"])

    assert "s3cret" in run("bypassPermissions", [])  # the control: it does leak when run
    out = run("default", ["Read(./.env)"])
    assert "Permission denied" in out and "s3cret" not in out and "/proc/<pid>" in out


@pytest.mark.parametrize("command,reads,writes", [
    ("sort -ruo out.txt in.txt", ["in.txt"], ["out.txt"]),
    ("sort -o out.txt -u in.txt", ["in.txt"], ["out.txt"]),
    ("sort --out=out.txt in.txt", ["in.txt"], ["out.txt"]),  # an unambiguous prefix of --output
    ("sort -- -o", ["-o"], []),  # after --, an option is a file name
    ("grep -e pat -f pats.txt a b", ["pats.txt", "a", "b"], []),
    ("grep pat a", ["a"], []),  # the first plain argument is the pattern
    ("diff --from-file=x a", ["x", "a"], []),
    ("uniq in out", ["in"], ["out"]),
    ("cp -t dest a b", ["a", "b"], ["dest"]),
    ("dd if=src of=dst", ["src"], ["dst"]),
    ("head -n 5 file", ["file"], []),
    ("git diff --no-index a b", ["a", "b"], []),
    ("git log --output=o.txt", [], ["o.txt"]),
    ("tee -a log", [], ["log"]),
])
def test_options_are_parsed_from_a_table_per_command(command: str, reads: list[str], writes: list[str]) -> None:
    c = bashparse.parse(command).commands[0]
    uses = bashcheck.command_args(c).uses
    named = [(u.kind, u.value if u.value is not None else u.word.value) for u in uses if u.word is not None]
    assert [v for k, v in named if k == "read"] == reads
    assert [v for k, v in named if k == "write"] == writes


@pytest.mark.parametrize("command", [
    "cat $F", "cat ${F}", 'cat "$F"', "cat $(echo x)", "cat `echo x`", "cat ~-/x", "cd $D && cat x",
    "popd && cat x", "for d in a b; do cd ..; done; cat x", "f() { cd ..; }; f; cat x", "wc --files0-from=l",
    "echo a | xargs cat", "cat {1..3}", "cat /proc/self/cwd/x", "cat /dev/fd/5",
])
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "dontAsk"])
def test_when_in_doubt_the_gate_asks(command: str, mode: str, tmp_path: Path) -> None:
    """A word bash would expand at run time, a directory change that cannot be followed:
    never allowed on a parse the gate is not sure of."""
    v = gate(tmp_path, mode, allowed_tools=["Bash(cat *)", "Bash(wc *)"]).evaluate("Bash", {"command": command})
    assert v.kind != "allow", (command, v)
    d = decide(gate(tmp_path, mode), "Bash", {"command": command})
    assert isinstance(d, Deny) and "Permission denied" in d.message  # headless: refused, with a hint


def test_directory_changes_are_followed_only_where_they_surely_happen(tmp_path: Path) -> None:
    (tmp_path / "p" / "src").mkdir(parents=True)
    p = gate(tmp_path / "p", "default")
    assert verdict(p, "Bash", {"command": "cd src && cat ../x"}) == "allow"  # p/x
    assert verdict(p, "Bash", {"command": "cd src; cd ..; ls"}) == "allow"
    assert verdict(p, "Bash", {"command": "(cd src); cat x"}) == "allow"  # p/x or p/src/x
    assert verdict(p, "Bash", {"command": "false && cd src; cat ../x"}) == "ask"  # may still be in p
    assert verdict(p, "Bash", {"command": "cd nothing; cat ../x"}) == "ask"  # a failed cd stays
    assert verdict(p, "Bash", {"command": "ls | cd src; cat ../x"}) == "ask"  # a pipeline's cd is a subshell's


def test_verdict_codes_choose_the_hint_not_words_in_the_reason(tmp_path: Path) -> None:
    p = gate(tmp_path, "acceptEdits")
    v = p.evaluate("Write", {"file_path": ".git/config"})
    assert v.code == "protected" and "bypassPermissions" in p.hint("Write", {}, v)
    v = p.evaluate("Write", {"file_path": "../x"})
    assert v.code == "outside" and "--add-dir" in p.hint("Write", {}, v)
    # The reason's words no longer decide: a protected-sounding reason with another code.
    odd = Verdict("ask", "this mentions protected and outside the working directories", code="not_approved")
    assert "--allowedTools" in p.hint("Bash", {"command": "make"}, odd)


def test_one_shell_cwd_resolver_for_the_bash_tool_and_the_gate(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    state = ToolState(BashState(cwd=tmp_path / "src"))
    p = gate(tmp_path, "default", tool_state=state)
    assert shell_cwd(state, tmp_path) == tmp_path / "src" and p.ws.shell_cwd() == str(tmp_path / "src")
    state.bash.cwd = tmp_path / "gone"  # a directory that is gone: both start in cwd
    assert shell_cwd(state, tmp_path) == tmp_path and p.ws.shell_cwd() == str(tmp_path)


def test_a_bare_bash_rule_allows_reads_anywhere_but_keeps_deny_rules_and_protected_paths(tmp_path: Path) -> None:
    p = gate(tmp_path, "default", allowed_tools=["Bash"], disallowed_tools=["Read(./secrets/**)"])
    for command in ("cat /etc/os-release", "ls ~", "cat ../x", "grep -r x /etc"):
        assert verdict(p, "Bash", {"command": command}) == "allow", command
    assert verdict(p, "Bash", {"command": "cat secrets/key"}) == "deny"
    assert verdict(p, "Bash", {"command": "rm -rf .git"}) == "ask"
    assert verdict(p, "Bash", {"command": "cat $F"}) == "ask"  # could be a denied file


def test_a_subagents_gate_copy_keeps_its_own_shell(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    parent_state, sub_state = ToolState(), ToolState(BashState(cwd=tmp_path / "src"))
    parent = gate(tmp_path, "default", tool_state=parent_state)
    sub = parent.for_state(sub_state)
    assert sub.ws.shell_cwd() == str(tmp_path / "src") and parent.ws.shell_cwd() == str(tmp_path)
# --- git obeys the config of a planted (bare-looking) repository ----------------------------------

def _plant_bare_repo(d: Path, canary: Path) -> None:
    """A directory git takes for a repository, whose config runs a program on `git status`."""
    (d / "objects").mkdir(parents=True)
    (d / "refs").mkdir()
    (d / "HEAD").write_text("ref: refs/heads/main\n")
    (d / "config").write_text(f'[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch {canary}; false"\n')


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk"])
@pytest.mark.parametrize("command,bash_cwd", [
    ("cd evil && git status", None),
    ("git -C evil status", None),
    ("git --git-dir=evil status", None),
    ("git --bare log", "evil"),
    ("git status", "evil"),  # an earlier `cd evil` left the shell there
    ("cd sub/../evil; git diff", None),
])
def test_git_in_a_planted_repository_is_not_auto_approved(mode: str, command: str, bash_cwd: str | None,
                                                         tmp_path: Path) -> None:
    _plant_bare_repo(tmp_path / "evil", tmp_path / "canary")
    (tmp_path / "sub").mkdir()
    state = ToolState(BashState(cwd=tmp_path / bash_cwd if bash_cwd else None))
    p = Permissions(mode, cwd=tmp_path, home=tmp_path / "home", tool_state=state)
    v = p.evaluate("Bash", {"command": command})
    assert v.kind == "ask", (command, v)
    plan = Permissions("plan", cwd=tmp_path, home=tmp_path / "home", tool_state=state)
    assert plan.evaluate("Bash", {"command": command}).kind == "deny"


@pytest.mark.parametrize("command", [
    "mkdir -p e/objects e/refs && echo 'ref: refs/heads/main' > e/HEAD && git -C e status",
    "cp -r fixture e; git -C e log",
])
def test_git_after_parts_that_create_files_is_not_auto_approved(command: str, tmp_path: Path) -> None:
    p = Permissions("acceptEdits", cwd=tmp_path, home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind == "ask"


@pytest.mark.parametrize("command", ["git status", "cd src && git log --oneline", "git -C src diff",
                                     "git log | head -5", "cd src; git status; cd ..; ls"])
def test_git_in_ordinary_directories_stays_auto_approved(command: str, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    p = Permissions("default", cwd=tmp_path, home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind == "allow"


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_accept_edits_agent_cannot_run_a_program_through_a_planted_git_config(tmp_path: Path) -> None:
    # End to end: before, acceptEdits let the agent create the repository files and then run
    # `cd evil && git status`, which ran the config's fsmonitor command (the canary).
    canary = tmp_path.parent / f"{tmp_path.name}-canary"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = f'[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch {canary}; false"\n'
    turns = [
        [use("u1", "Bash", {"command": "mkdir -p evil/objects evil/refs"})],
        [use("u2", "Write", {"file_path": "evil/HEAD", "content": "ref: refs/heads/main\n"}),
         use("u3", "Write", {"file_path": "evil/config", "content": config})],
        [use("u4", "Bash", {"command": "cd evil && git status"})],
        [text("done")],
    ]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=str(tmp_path),
                                     permission_mode="acceptEdits"))
    assert (tmp_path / "evil" / "config").exists()  # the edits themselves were approved
    assert not canary.exists()
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u4"]



# --- Read deny rules and the searching tools ------------------------------------------------------

@pytest.fixture
def secret_project(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.env").write_text("API_KEY=hunter2\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("API_KEY = os.environ['API_KEY']\n")
    return tmp_path


@pytest.mark.parametrize("name,x", [
    ("Grep", {"pattern": "API_KEY", "output_mode": "content"}),
    ("Grep", {"pattern": "API_KEY", "output_mode": "files_with_matches"}),
    ("Grep", {"pattern": "API_KEY", "glob": "*.env", "output_mode": "count"}),
    ("Glob", {"pattern": "**/*"}),
])
def test_searching_tools_leave_out_files_a_read_deny_rule_covers(name: str, x: dict[str, Any],
                                                                  secret_project: Path) -> None:
    # Before: Read(secrets/key.env) was refused, but Grep over the project printed its contents.
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", name, x)], [text("done")]]),
                                     tools=default_tools(), cwd=str(secret_project), permission_mode="default",
                                     disallowed_tools=["Read(./secrets/**)"]))
    out = first_tool_result(r)["content"]
    assert "hunter2" not in out and "key.env" not in out
    if "glob" not in x:
        assert "a.py" in out  # the rest is still searched


def test_bash_glob_arguments_are_not_auto_approved_under_read_deny_rules(secret_project: Path) -> None:
    p = Permissions("default", cwd=secret_project, home=secret_project / "home",
                    disallowed_tools=["Read(./secrets/**)"])
    for command in ("cat sec*/key.env", "cat secrets/ke?.env", "head s[e]crets/key.env"):
        # globs are expanded against the file system as bash would: the deny rule matches
        assert p.evaluate("Bash", {"command": command}).kind == "deny", command
    assert p.evaluate("Bash", {"command": "cat src/a.py"}).kind == "allow"
    assert p.evaluate("Bash", {"command": "find . -name '*.py'"}).kind == "allow"  # a quoted pattern



# --- the gate never ends the run ------------------------------------------------------------------

@pytest.mark.parametrize("name,x", [
    ("Write", {"file_path": "a\x00b", "content": "x"}),
    ("Read", {"file_path": "a\x00b"}),
    ("Bash", {"command": "cat a\x00b"}),
])
def test_a_nul_byte_in_a_path_is_refused_not_fatal(name: str, x: dict[str, Any], tmp_path: Path) -> None:
    # Before: os.path.realpath raised ValueError in the gate and the run ended with
    # error_during_execution ("embedded null byte").
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", name, x)], [text("done")]]),
                                     tools=default_tools(), cwd=str(tmp_path), permission_mode="acceptEdits"))
    assert r.subtype == "success" and r.result == "done"
    block = first_tool_result(r)
    assert block["is_error"] is True and "embedded null byte" in block["content"]
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u1"]


def test_a_can_use_tool_that_raises_refuses_the_call_and_ends_the_run() -> None:
    ran: list[str] = []

    def record(x: dict[str, Any]) -> str:
        ran.append("t")
        return "ran"

    t = lw.Tool("t", "records", {"type": "object", "properties": {}}, record)

    def broken(name: str, tool_input: dict[str, Any]) -> bool:
        raise RuntimeError("callback bug")

    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "t")], [text("done")]]), tools=[t],
                                     can_use_tool=broken))
    assert r.subtype == "error_during_execution" and ran == []  # fail closed, and said (issue 9 item 16)
    assert "callback bug" in r.errors[0]
    block = first_tool_result(r)
    assert block["is_error"] is True and "callback bug" in block["content"]


def test_gate_resolves_bash_paths_where_the_shell_really_starts(tmp_path: Path) -> None:
    # The Bash tool starts in cwd when its remembered directory is gone; the gate resolved
    # relative paths against the vanished directory, so a denied path slipped through.
    state = ToolState(BashState(cwd=tmp_path / "gone"))
    p = Permissions("acceptEdits", cwd=tmp_path, home=tmp_path / "home", tool_state=state,
                    disallowed_tools=["Edit(./secret/**)"])
    assert p.evaluate("Bash", {"command": "echo x > secret/key"}).kind == "deny"



# --- redirections of compound commands ------------------------------------------------------------

@pytest.mark.parametrize("command", [
    "{ echo x; } > ~/.bashrc",
    "{ echo x; } > .git/hooks/pre-commit",
    "(echo x) > /tmp/elsewhere",
    "for i in 1; do echo; done > /tmp/elsewhere",
    "if true; then echo; fi >> /tmp/elsewhere",
    "while false; do echo; done 2>/tmp/elsewhere",
])
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk"])
def test_a_compound_commands_redirection_is_judged(command: str, mode: str, tmp_path: Path) -> None:
    # Before: bashparse dropped the redirections of `{ }`, `( )`, for/if/while, so
    # `{ echo x; } > ~/.bashrc` ran in default mode without approval.
    p = Permissions(mode, cwd=tmp_path, home=tmp_path / "home")  # type: ignore[arg-type]
    assert p.evaluate("Bash", {"command": command}).kind == "ask"
    assert Permissions("plan", cwd=tmp_path, home=tmp_path / "home").evaluate("Bash", {"command": command}).kind == "deny"


def test_a_compound_commands_input_redirection_meets_read_deny_rules(tmp_path: Path) -> None:
    p = Permissions("default", cwd=tmp_path, home=tmp_path / "home", disallowed_tools=["Read(./secrets/**)"])
    assert p.evaluate("Bash", {"command": "{ cat; } < secrets/key"}).kind == "deny"
    assert p.evaluate("Bash", {"command": "(cat) < secrets/key"}).kind == "deny"


@pytest.mark.parametrize("command", ["(ls) 2>/dev/null", "{ ls; } >/dev/null 2>&1", "(cd sub && ls)"])
def test_harmless_compound_commands_stay_auto_approved(command: str, tmp_path: Path) -> None:
    assert Permissions("default", cwd=tmp_path).evaluate("Bash", {"command": command}).kind == "allow"


def test_default_mode_run_cannot_write_outside_through_a_brace_group(tmp_path: Path) -> None:
    target = tmp_path.parent / f"{tmp_path.name}-outside"
    turns = [[use("u1", "Bash", {"command": f"{{ echo pwned; }} > {target}"})], [text("done")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=default_tools(), cwd=str(tmp_path),
                                     permission_mode="default"))
    assert not target.exists()
    assert [d["tool_use_id"] for d in r.permission_denials] == ["u1"]



# --- directories on PATH --------------------------------------------------------------------------

@pytest.mark.parametrize("name,x", [
    ("Write", {"file_path": "bin/ls", "content": "#!/bin/sh\n"}),
    ("Edit", {"file_path": "bin/ls", "old_string": "a", "new_string": "b"}),
    ("Bash", {"command": "cp gradlew bin/ls"}),
    ("Bash", {"command": "echo x > bin/cat"}),
    ("Bash", {"command": "mkdir -p bin"}),
    ("Bash", {"command": "mv tools bin"}),
])
def test_writes_into_a_directory_on_path_are_not_auto_approved(name: str, x: dict[str, Any], tmp_path: Path) -> None:
    # Before: with PATH=<project>/bin:... (an activated .venv/bin, node_modules/.bin, direnv),
    # acceptEdits let the agent put an executable `bin/ls` in place, and the read-only `ls`
    # then ran it without approval: arbitrary code from acceptEdits.
    path = f"{tmp_path / 'bin'}{os.pathsep}/usr/bin"
    p = Permissions("acceptEdits", cwd=tmp_path, home=tmp_path / "home", exec_path=path)
    v = p.evaluate(name, x)
    assert v.kind == "ask" and "PATH" in v.reason
    assert Permissions("acceptEdits", cwd=tmp_path, exec_path="/usr/bin").evaluate(name, x).kind == "allow"
    assert Permissions("bypassPermissions", cwd=tmp_path, exec_path=path).evaluate(name, x).kind == "allow"


@pytest.mark.e2e
def test_accept_edits_agent_cannot_plant_a_command_on_path(tmp_path: Path) -> None:
    canary = tmp_path.parent / f"{tmp_path.name}-canary"
    (tmp_path / "gradlew").write_text("#!/bin/sh\necho build\n")
    (tmp_path / "gradlew").chmod(0o755)
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([
        [use("u1", "Bash", {"command": "mkdir -p bin && cp gradlew bin/ls"})],
        [use("u2", "Write", {"file_path": "bin/ls", "content": f"#!/bin/sh\ntouch {canary}\n"})],
        [use("u3", "Bash", {"command": "ls"})],
        [text("done")],
    ]))
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "LOOPWRIGHT_HOME": str(tmp_path / "home")}
    p = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", f"scripted:{script}", "--permission-mode", "acceptEdits",
                        "--no-session-persistence", "--output-format", "json"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0, p.stderr
    assert not canary.exists()
    assert [d["tool_use_id"] for d in json.loads(p.stdout)["permission_denials"]] == ["u1", "u2"]



# --- issue 40, findings 1 and 2: a command's effective directory is checked like a path --------

@pytest.mark.parametrize("command", [
    "git -C ../other show HEAD:secret.txt", "cd ../other && git grep secret", "cd ../other; git log",
    "pushd ../other", "env -C ../other git log", "git --git-dir=../other/.git log",
    "git --work-tree=../other status", "GIT_DIR=../other/.git git log",
])
@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
def test_git_and_directory_changes_outside_the_working_directories_are_asked(mode: str, command: str,
                                                                            tmp_path: Path) -> None:
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    (tmp_path / "proj" / "sub").mkdir()
    (tmp_path / "other" / ".git").mkdir(parents=True)
    p = Permissions(mode, cwd=tmp_path / "proj", home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind == "ask", command
    assert p.evaluate("Bash", {"command": "git -C sub status"}).kind == "allow"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("command", ["git -C vendor/lib status", "cd vendor/lib && git status"])
def test_git_in_a_nested_repository_is_not_auto_approved(command: str, tmp_path: Path) -> None:
    ws, canary = tmp_path / "proj", tmp_path / "canary"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "init", "-q", str(ws / "vendor" / "lib")], check=True)
    with open(ws / "vendor" / "lib" / ".git" / "config", "a") as f:
        f.write(f'[core]\n\tfsmonitor = "touch {canary}; false"\n')
    p = Permissions("default", cwd=ws, home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind == "ask"
    assert not canary.exists()
    # the control: run unasked, that repository's config does run its program
    subprocess.run(["bash", "-c", command], cwd=ws, capture_output=True)
    assert canary.exists()


@pytest.mark.parametrize("command", ["rg -L secret d", "rg --follow secret", "grep -R secret d",
                                     "find -L d", "find d -follow"])
def test_a_followed_symlink_out_of_the_workspace_is_asked(command: str, tmp_path: Path) -> None:
    # issue 40, finding 5: a committed `keys -> ~/.ssh` read through a link-following search
    (tmp_path / "proj" / "d").mkdir(parents=True)
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    os.symlink(tmp_path / "home" / ".ssh", tmp_path / "proj" / "d" / "keys")
    p = Permissions("default", cwd=tmp_path / "proj", home=tmp_path / "home")
    assert p.evaluate("Bash", {"command": command}).kind == "ask", command
    assert p.evaluate("Bash", {"command": command.replace(" -L", "").replace(" --follow", "").replace(
        " -follow", "").replace("-R", "-r").replace("-rr", "-r")}).kind == "allow"
