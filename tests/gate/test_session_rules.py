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
    assert granted.rules == ["Bash(npm test:*)"]  # each once
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
