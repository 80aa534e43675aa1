"""Issue 22, class 8: Grep and Glob agree on what .gitignore / .ignore / .rgignore hide, because
both use the one matcher of ignore.py (pathspec); and Grep's two engines (rg, Python) agree with it.

Each file holds a line, so Grep with the pattern `x` lists every file it does not hide; Glob `**`
lists every file it does not hide. Grep also skips hidden files and Glob lists them, so hidden
paths are left out of the comparison.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_glob_tool
from loopwright.tools.grep import make_grep_tool
from loopwright.workspace import SearchState, ToolState
from tests.helpers import call_tool

HAS_RG = shutil.which("rg") is not None


def grep_files(root: Path, engine: str) -> set[str]:
    out, err = call_tool(make_grep_tool(), ToolContext(root, state=ToolState(search=SearchState(engine=engine))),
                         {"pattern": "x", "output_mode": "files_with_matches"})
    assert not err, out
    return set() if out.startswith("No files") else set(out.splitlines()[1:])


def glob_files(root: Path, engine: str = "auto") -> set[str]:
    out, err = call_tool(make_glob_tool(), ToolContext(root, state=ToolState(search=SearchState(engine=engine))),
                         {"pattern": "**"})
    assert not err, out
    files = set() if out == "No files found" else set(out.splitlines())  # relative to the working directory
    return {f for f in files if not any(part.startswith(".") for part in f.split("/"))}


def write_tree(root: Path, files: list[str], ignores: dict[str, list[str]]) -> None:
    for rel in files:
        p = root / rel
        if p.parent.is_file() or p.is_dir():
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x\n")
    for rel, lines in ignores.items():
        p = root / rel
        if p.parent.is_file():
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")


HOSTILE = {  # ignore files a repository may ship, tricky on purpose
    ".gitignore": ["build/", "*.log", "!keep.log", "/top.txt", "docs/**", "!docs/keep/", "a/**/z.py", "#x.py",
                   "\\#lit", "sp\\ ace", "**/gen", "*.{md,txt}"],
    ".ignore": ["!build/", "secret*", "s/*.py"],
    "s/.rgignore": ["!secret2"],
    "s/t/.gitignore": ["/local.py", "!*.log"],
}
FILES = ["a.py", "top.txt", "s/top.txt", "x.log", "keep.log", "build/o.py", "docs/d.py", "docs/keep/k.py",
         "a/b/z.py", "a/z.py", "#x.py", "#lit", "sp ace", "s/gen/g.py", "gen/h.py", "r.md", "secret1", "s/secret2",
         "s/p.py", "s/t/local.py", "s/t/u/local.py", "s/t/v.log", "s/t/w.py"]


def test_grep_and_glob_hide_the_same_files_of_a_hostile_repository(tmp_path: Path) -> None:
    write_tree(tmp_path, FILES, HOSTILE)
    glob = glob_files(tmp_path, "python")
    assert glob == grep_files(tmp_path, "python")
    if HAS_RG:
        assert glob == grep_files(tmp_path, "rg") == glob_files(tmp_path, "rg")  # and as ripgrep reads them
    # what survives: `!build/` in .ignore beats .gitignore's `build/`; `!secret2` in s/.rgignore beats
    # .ignore's `secret*`; `docs/**` still hides docs/keep/k.py (`!docs/keep/` re-includes the directory only)
    assert glob == {"#x.py", "a.py", "build/o.py", "keep.log", "s/secret2", "s/t/u/local.py", "s/t/v.log", "s/t/w.py"}
    # a search that starts inside an ignored directory (`**/gen`) lists it, in both tools (as rg)
    out, _ = call_tool(make_glob_tool(), ToolContext(tmp_path), {"pattern": "*.py", "path": str(tmp_path / "s/gen")})
    assert out.splitlines() == ["s/gen/g.py"] and grep_files(tmp_path / "s/gen", "python") == {"g.py"}


_name = st.sampled_from(["a.py", "b.txt", "c.md", "d", "x.log", "keep.log", "gen"])
_dir = st.sampled_from(["", "s/", "s/t/", "build/", "s/build/", "docs/"])
_line = st.sampled_from(["build/", "*.log", "!keep.log", "/a.py", "s/*.md", "t", "*.txt", "!b.txt", "**/d",
                         "docs/**", "!docs/x/", "s/**/c.md", "gen/", "*.{md,py}", "!s/", "/s/t/", "d/"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.tuples(_dir, _name).map("".join), max_size=10),
       ignores=st.dictionaries(st.sampled_from([".gitignore", ".ignore", "s/.gitignore", "s/.ignore", "s/t/.rgignore"]),
                               st.lists(_line, max_size=4), max_size=3))
def test_grep_and_glob_agree_on_random_ignore_files(tmp_path_factory: pytest.TempPathFactory, files: list[str],
                                                    ignores: dict[str, list[str]]) -> None:
    root = tmp_path_factory.mktemp("agree")
    write_tree(root, files, ignores)
    glob = glob_files(root, "python")
    assert glob == grep_files(root, "python")
    if HAS_RG:
        assert glob == grep_files(root, "rg") == glob_files(root, "rg")
