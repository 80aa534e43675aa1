"""Issue 40's remainders: the gate's verdicts that must not go stale or be skipped.

Each test drives the real gate (`Permissions`) over real files, directories, symlinks and git
repositories in a temp dir.
"""

from __future__ import annotations

from pathlib import Path

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
