"""gate.session.SessionRules: the rules a person sets while a session runs (every asker's)."""

from __future__ import annotations

from pathlib import Path

from loopwright.gate.session import SessionRules


def test_allow_rules_set_in_a_session_approve_later_calls_they_cover(tmp_path: Path) -> None:
    granted = SessionRules(tmp_path)
    call = {"command": "npm test -- --watch"}
    assert not granted.covers("Bash", call)
    suggested = granted.suggest("Bash", call)
    assert suggested == ["Bash(npm test:*)"]
    granted.add([*suggested, *suggested])
    assert granted.rules == ("Bash(npm test:*)",)  # each once
    assert granted.covers("Bash", call) and granted.covers("Bash", {"command": "npm test"})
    assert not granted.covers("Bash", {"command": "npm publish"})
    granted.add(["Bash(npm publish:*)"])  # a rule added later counts at once (the gate is made again)
    assert granted.covers("Bash", {"command": "npm publish"})


def test_deny_rules_set_in_a_session_refuse_later_calls_they_cover(tmp_path: Path) -> None:
    refused = SessionRules(tmp_path, behavior="deny")
    assert not refused.covers("WebFetch", {"url": "https://example.com"})
    refused.add(["WebFetch"])
    assert refused.covers("WebFetch", {"url": "https://example.com"})
    assert not refused.covers("Read", {"file_path": str(tmp_path / "a.txt")})  # a call it does not name


def test_no_rule_is_suggested_for_a_call_too_broad_to_remember(tmp_path: Path) -> None:
    assert SessionRules(tmp_path).suggest("Bash", {"command": "python3 -c 'import os'"}) == []


def test_a_directory_added_later_counts_for_the_rules_set_before(tmp_path: Path) -> None:
    """/add-dir after a "don't ask again": the session's rules are judged with the new working
    directories (before, the gate built at the first question kept the old ones: issue 41's
    cache that misses an in-place edit; add_dirs is a tuple now, changed by add_dir)."""
    other = tmp_path / "other"
    other.mkdir()
    granted = SessionRules(tmp_path / "work")
    granted.add(["Edit"])
    call = {"file_path": str(other / "a.txt"), "old_string": "a", "new_string": "b"}
    assert not granted.covers("Edit", call)  # outside the working directories
    granted.add_dir(other)
    assert granted.covers("Edit", call)
    assert isinstance(granted.add_dirs, tuple) and isinstance(granted.rules, tuple)  # (no edit in place)


def test_the_gate_sees_grants_added_replaced_and_a_subagents_own() -> None:
    """The gate takes the run's granted rules (a skill's allowed-tools) by the tuple's identity:
    a grant added is seen, a grant replaced is seen (the old one goes), and a subagent's gate (a
    copy made after its parent took a grant) sees the subagent's own first grant (before, both
    were missed: the gate counted the grants it had taken, issue 41)."""
    from loopwright.gate import Permissions
    from loopwright.workspace import ToolState

    def kind(p: Permissions, command: str) -> str:
        return p.evaluate("Bash", {"command": command}).kind

    state = ToolState()
    p = Permissions("dontAsk").for_state(state)
    state.grants.add(["Bash(make:*)"])
    assert kind(p, "make") == "allow"
    state.grants.rules = ("Bash(ninja:*)",)  # replaced, the same length
    assert (kind(p, "ninja"), kind(p, "make")) == ("allow", "ask")
    child_state = ToolState()
    child = p.for_state(child_state)
    child_state.grants.add(["Bash(cmake:*)"])  # the subagent's first grant
    assert (kind(child, "cmake"), kind(child, "ninja")) == ("allow", "allow")
    assert kind(p, "cmake") == "ask"  # the parent's rules did not change
