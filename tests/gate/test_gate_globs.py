"""The gate's `*` patterns (Bash specifiers, other tools' specifiers, WebFetch domains) are matched
without backtracking: the same language as the regex translation they replace (checked against it
on arbitrary small patterns and texts), and a rule with many stars, as a hostile project's
settings may plant, answers at once instead of hanging the gate on every command."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.gate import Permissions, command_matches
from loopwright.gate.rules import Glob, input_matches


def regex_of(s: str) -> str:
    """The translation the matcher replaced: `*` is `.*`, `\\*` a literal star (the oracle here)."""
    out, i = [], 0
    while i < len(s):
        if s.startswith("\\*", i):
            out.append(re.escape("*"))
            i += 2
            continue
        out.append(".*" if s[i] == "*" else re.escape(s[i]))
        i += 1
    return "".join(out)


def regex_command_matches(spec: str, command: str) -> bool:
    spec, command = " ".join(spec.split()), " ".join(command.split())
    if spec.endswith(":*") and "*" not in spec[:-2]:
        rx = re.escape(spec[:-2]) + r"(?: .*)?"
    elif spec.endswith(" *") and spec.count("*") - spec.count("\\*") == 1:
        rx = regex_of(spec[:-2]) + r"(?: .*)?"
    else:
        rx = regex_of(spec)
    return re.fullmatch(rx, command, re.S) is not None


PATTERN = st.text(alphabet="ab *\\:", max_size=9)
TEXT = st.text(alphabet="ab *\\:\n", max_size=12)


@settings(max_examples=1500, deadline=None)
@given(PATTERN, TEXT)
def test_the_same_language_as_the_regex(spec: str, command: str) -> None:
    assert command_matches(spec, command) is regex_command_matches(spec, command)
    assert Glob.of(spec).fullmatch(command) is (re.fullmatch(regex_of(spec), command, re.S) is not None)


def test_a_rule_of_many_stars_answers_at_once(tmp_path: Path) -> None:
    many = "a" + "*b" * 40 + "c"  # the regex took exponential time on a text it does not match
    command = "a" + "b" * 200
    assert not command_matches(many, command) and not command_matches("a" + "*" * 60 + "c", command)
    assert command_matches(many, command + "c")
    p = Permissions("default", disallowed_tools=[f"Bash({many})"], ask_tools=[f"WebFetch(domain:{many})"], cwd=tmp_path)
    assert p.evaluate("Bash", {"command": command}).kind == "ask"  # not denied (and not hung): no rule approves it
    assert p.evaluate("Bash", {"command": command + "c"}).kind == "deny"
    assert not input_matches(f"domain:{many}", "WebFetch", {"url": f"https://{command}.example/"})
    assert not input_matches(many, "Grep", {"pattern": command})
