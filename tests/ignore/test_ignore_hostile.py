"""The one ignore/glob matcher (ignore.py) runs in polynomial time on any pattern, with pathspec's
results: a cloned repository's `.gitignore` line, a project's deny rule or the model's glob cannot
hang Glob, Grep or the gate.

pathspec compiles a glob to one regex; a pattern of many `*` becomes many `[^/]*` (and `**` many
`(?:/.+)?`), which Python's backtracking takes exponential time over on a path it does not match.
Measured on the old matcher (pathspec's regex) on this machine: the gate rule `Read(a*b*b*b*b*bc)`
on one 200-character path took 41 s; each further star multiplies that by tens, so the 20-40 star
patterns below would never finish. The new matcher answers each at once (the suite's
pytest-timeout is the bound here; bench/bench_ignore.py has the figures).
"""

from __future__ import annotations

import json
import re
from contextlib import nullcontext
from pathlib import Path

import pathspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.gate.rules import Rule
from loopwright.ignore import (
    MAX_BRACES,
    IgnoreRules,
    expand_braces,
    glob_matcher,
    path_spec,
    segment_regex,
)
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_glob_tool
from loopwright.tools.grep import make_grep_tool
from loopwright.workspace import SearchState, ToolState
from tests.helpers import call_tool, first_tool_result, result_text
from tests.ignore.test_ignore_agree import HAS_RG, glob_files, grep_files, write_tree

# --- the oracle: pathspec's own regex ----------------------------------------------------------------

_OVERRIDES = {".": "any", "/": "below a directory", "(?P<ps_d>/)": "a directory"}


def oracle(line: str) -> tuple[str, bool] | None:
    """pathspec's regex for a line, and whether it includes; None: no pattern. Two deliberate
    differences are applied: a negated class never matches the `/` between segments (as git), and
    pathspec's three whole-pattern regexes (`**`, `*/`, `**/*/**`) keep their meaning, which the old
    code's `match` (not pathspec's `search`) lost: `*/` hides every directory, as git and rg."""
    try:
        pats = pathspec.GitIgnoreSpec.from_lines([line]).patterns
    except ValueError:
        return None
    if not pats or pats[0].include is None or pats[0].regex is None:
        return None
    return pats[0].regex.pattern.replace("[^", "[^/"), bool(pats[0].include)


def oracle_check(src: str, rel: str, is_dir: bool) -> bool:
    """Does pathspec's regex match the path itself (the walk's reading), as a full match: the
    whole path, or (a trailing `/**`) something strictly below a match."""
    if src in _OVERRIDES:
        return {".": True, "/": "/" in rel, "(?P<ps_d>/)": is_dir}[src]
    for tail, make in (("(?:(?P<ps_d>/)|$)", lambda b: b), ("(?P<ps_d>/)", lambda b: b if is_dir else "(?!)"),
                       ("/", lambda b: b + "/.+")):
        if src.endswith(tail):
            return re.fullmatch(make(src[:-len(tail)]), rel, re.S) is not None
    raise AssertionError(src)


def oracle_covers(src: str, include: bool, rel: str) -> bool:
    """The gate's old reading with pathspec: the path (as a file or a directory) or a directory above."""
    parts = rel.split("/")
    tries = [rel, rel + "/", *("/".join(parts[:i]) + "/" for i in range(1, len(parts)))]
    return include and any(re.search(src, t, re.S) is not None for t in tries)


TOKENS = ["a", "b", "x", "ab", "*", "**", "?", "/", "[a-c]", "[!a]", "[^b]", "\\*", "\\[", "\\!", "!", " ", "\\ "]
LINE = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8).map("".join)
SEGMENT = st.text(alphabet="abcx*[! ", min_size=1, max_size=4)
PATH = st.lists(SEGMENT, min_size=1, max_size=5).map("/".join)
DEEP_LINE = st.lists(st.sampled_from(["a", "b", "*", "**", "/", "a*", "*b", "/**/"]), min_size=1, max_size=10).map("".join)
DEEP_PATH = st.lists(st.sampled_from(["a", "b", "ab", "ba"]), min_size=1, max_size=8).map("/".join)


def agree(line: str, rel: str, is_dir: bool) -> None:
    assume("***" not in line)  # pathspec lets `***` (not `*`) match an empty last segment: `d/***` takes `d/`
    o = oracle(line)
    rules = IgnoreRules([line])
    if o is None:  # a blank, a comment, `/`, an unclosed `[` or a trailing backslash: no rule
        assert not rules
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
            invalid = False
        except ValueError:
            invalid = True
        with pytest.raises(ValueError) if invalid else nullcontext():  # the gate refuses such a rule
            assert path_spec(line) is None
        return
    src, include = o
    want = oracle_check(src, rel, is_dir)
    assert rules.check(rel, is_dir) == ((include if want else None) if rules else None), (line, src, rel, is_dir)
    gate = path_spec(line)
    assert (gate is not None and gate.covers(rel)) == oracle_covers(src, include, rel), (line, src, rel)
    if not line.startswith(("!", "#", "/")) and not line.endswith(" "):  # the Glob tool's reading: anchored at the search directory
        anchored = oracle("/" + line)
        if anchored is not None and not is_dir:
            assert glob_matcher(line)(rel) == oracle_check(anchored[0], rel, False), (line, anchored[0], rel)


# max_examples: 1000 draws (700 below) still reach LINE's 17 tokens in lines of up to 8 against paths
# of up to 5 segments many times over; CI's profile draws the same ones every run, while each local run
# draws new ones, so the search goes on across runs. 3000 and 2000 cost the 2-core suite ~25 s a run.
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(LINE, PATH, st.booleans())
def test_the_matcher_agrees_with_pathspecs_regex(line: str, rel: str, is_dir: bool) -> None:
    agree(line, rel, is_dir)


@settings(max_examples=700, deadline=None, suppress_health_check=list(HealthCheck))  # (why: above)
@given(DEEP_LINE, DEEP_PATH, st.booleans())
def test_the_matcher_agrees_on_many_double_stars(line: str, rel: str, is_dir: bool) -> None:
    agree(line, rel, is_dir)


@settings(max_examples=700, deadline=None, suppress_health_check=list(HealthCheck))  # (why: above)
@given(st.lists(st.sampled_from(["a", "b", "*", "?", "[a-c]", "[!a]", "\\*", "\\?", "!", "#", "{", "}"]),
                min_size=1, max_size=8).map("".join), st.text(alphabet="abc*?!#{}", min_size=1, max_size=8))
def test_segment_regex_agrees_with_pathspec(seg: str, name: str) -> None:
    """One segment (Grep's types, the shell's globs): pathspec's regex for the anchored segment."""
    o = oracle("/" + re.sub(r"(?<!\\)\*{2,}", "*", seg))
    want = re.escape(seg) if o is None else o[0].removeprefix("^").removesuffix("(?:(?P<ps_d>/)|$)")
    assert (segment_regex(seg).fullmatch(name) is not None) == (re.fullmatch(want, name, re.S) is not None)


@pytest.mark.parametrize("line", ["*/", "**/", "**/*/**"])
def test_what_git_and_rg_do_that_the_old_regex_did_not(tmp_path: Path, line: str) -> None:
    """`*/` and `**/` hide every directory, `**/*/**` all below one (the old `match` of pathspec's
    `search`-only regex hid nothing); `[!x]` does not match a `/` (as git; rg lets it);
    `a/**/b/**` hides `a/b/b` itself, which is below `a/b`."""
    r = IgnoreRules([line])
    assert r.check("f", False) is None and r.check("d/e", True)
    if line == "**/*/**":  # what is below a directory, not the top-level directory itself
        assert r.check("d/e/h", False) and r.check("d", True) is None
    else:  # directories (the walk does not enter them), not files
        assert r.check("d", True) and r.check("d/e/h", False) is None
    write_tree(tmp_path, ["f", "d/g", "d/e/h"], {".gitignore": [line]})
    assert glob_files(tmp_path, "python") == grep_files(tmp_path, "python") == {"f"}
    if HAS_RG:
        assert grep_files(tmp_path, "rg") == glob_files(tmp_path, "rg") == {"f"}
    assert IgnoreRules(["d[!x]g"]).check("d/g", False) is None
    assert IgnoreRules(["a/**/b/**"]).check("a/b/b", True) and IgnoreRules(["a/**/b/**"]).check("a/b", True) is None


# --- hostile patterns through each entry point -------------------------------------------------------

STARS = "a" + "*b" * 30 + "c"  # 30 stars; old: 5 stars took 41 s on 200 characters
NAME = "a" + "b" * 199  # 200 characters, not matched (no final c)
DOUBLE = "**/" + "b/**/" * 20 + "c"  # 21 `**`; old: exponential in their number
DEEP = "/".join(["b"] * 1000)  # 2000 characters, 1000 segments, no c


def test_hostile_patterns_answer_through_the_matcher() -> None:
    long_path = "/".join([NAME] * 10)  # 2000 characters
    for line in (STARS, "**/" + STARS, STARS + "/**", "x/**/" + STARS, "*" * 40 + "c", "?*" * 20 + "c"):
        rules = IgnoreRules([line])
        assert rules.check(NAME, False) is None and rules.check(long_path, True) is None, line
        assert not glob_matcher(line)(NAME) and not glob_matcher("**/" + line)(long_path)
        spec = path_spec(line)
        assert spec is not None and not spec.covers(long_path)
        assert not segment_regex(line).fullmatch(NAME)
    spec = path_spec(STARS)
    assert IgnoreRules([STARS]).check(NAME + "c", False) and spec is not None and spec.covers(NAME + "c/x")
    assert segment_regex(STARS).fullmatch(NAME + "c")
    rules = IgnoreRules([DOUBLE])
    assert rules.check(DEEP, False) is None and rules.check(DEEP + "/c", False) is True
    spec = path_spec(DOUBLE)
    assert spec is not None and not spec.covers(DEEP) and spec.covers(DEEP + "/c/d")
    assert not glob_matcher(DOUBLE)(DEEP) and glob_matcher(DOUBLE)(DEEP + "/c")


def test_braces_stop_at_their_cap() -> None:
    many = "{a,b}" * 40  # 2**40 alternatives: the old expansion built them all before cutting (20: 2.8 s)
    out = expand_braces(many)
    assert len(out) == MAX_BRACES and out[0] == "a" * 40 and out[1] == "a" * 39 + "b" and len(set(out)) == MAX_BRACES
    assert glob_matcher(many + "c")("a" * 40 + "c") and not glob_matcher(many)("c")
    assert expand_braces("x{a,{b,c}}y{1,2}") == ["xay1", "xay2", "xby1", "xby2", "xcy1", "xcy2"]
    deep = "{a,b}" * 3000  # the old recursion ran out of stack (RecursionError on every Glob of the repository)
    assert expand_braces(deep) == [deep] and len(expand_braces("{a,b}" * 60 + "x" * (1 << 20))) == 1


def test_a_hostile_tool_pattern_answers_at_once() -> None:
    """A rule's tool name with stars (`mcp__*`): the old `.*` regex never finished on this one."""
    rule = Rule.parse("mcp__" + "*a" * 12 + "*b", source="project")
    assert not rule.covers_tool("mcp__" + "a" * 40) and rule.covers_tool("mcp__" + "a" * 40 + "b")


def hostile_tree(root: Path) -> None:
    (root / NAME).write_text("x\n")
    (root / (NAME + "c")).write_text("x\n")
    deep = root.joinpath(*["b"] * 60)  # a deep directory: the `**` rule is tried on 60 segments
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("x\n")
    (deep / "c").write_text("x\n")
    lines = [STARS, "**/" + STARS, DOUBLE, "*" * 40 + "c", "x\\", "{a,b}" * 3000]
    (root / ".gitignore").write_text("\n".join(lines) + "\n")


def test_a_hostile_gitignore_does_not_hang_glob_or_pythons_grep(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    deep = "/".join(["b"] * 60)
    want = {NAME, f"{deep}/f.txt"}  # the lines hide NAME+c and .../c, nothing else ("x\\" is no pattern)
    ctx = ToolContext(tmp_path, state=ToolState(search=SearchState(engine="python")))
    out, err = call_tool(make_glob_tool(), ctx, {"pattern": "**"})  # the Python walk (rg's is Rust)
    assert not err and set(out.splitlines()) == want | {".gitignore"}
    out, err = call_tool(make_grep_tool(), ctx, {"pattern": "x", "output_mode": "files_with_matches"})
    assert not err and set(out.splitlines()[1:]) == want
    # the model's own globs: Grep's `glob` filter (it beats ignore files, as in rg) and Glob's pattern
    out, err = call_tool(make_grep_tool(), ctx, {"pattern": "x", "glob": STARS, "output_mode": "files_with_matches"})
    assert not err and out.splitlines()[1:] == [NAME + "c"], out
    out, err = call_tool(make_glob_tool(), ToolContext(tmp_path), {"pattern": "**/" + STARS})
    assert not err and out == "No files found"


@pytest.mark.parametrize("settings_file", [".loopwright/settings.json", ".claude/settings.json"])
def test_a_hostile_deny_rule_of_an_untrusted_project_answers_at_once(tmp_path: Path, settings_file: str) -> None:
    """The rule applies (deny rules only narrow), and a Read it does not match runs."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / NAME).write_text("readable\n")
    (proj / (NAME + "c")).write_text("secret\n")
    (proj / settings_file).parent.mkdir()
    (proj / settings_file).write_text(json.dumps({"permissions": {"deny": [f"Read({STARS})", f"Read({DOUBLE})"]}}))
    for name, denied in ((NAME, False), (NAME + "c", True)):
        use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(proj / name)}}
        opts = lw.AgentOptions(model=lw.ScriptedModel([[use], [{"type": "text", "text": "done"}]]),
                               tools=lw.default_tools(), cwd=proj, setting_sources=["project"],
                               claude_settings=True, trust_workspace=False)
        block = first_tool_result(lw.run("go", opts))
        text = result_text(block)
        assert bool(block.get("is_error")) is denied and ("secret" in text) is False, text
        assert ("readable" in text) is not denied, text
