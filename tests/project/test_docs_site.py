"""The documentation site builds with `mkdocs build --strict` (mkdocs.yml, MkDocs Material,
mkdocstrings): every page the navigation names exists, a broken link fails the build, and the API
reference lists AgentOptions' fields with their docs. Skips when the `docs` extra is missing."""

from __future__ import annotations

import ast
import html
import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
needs_mkdocs = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings_handlers") is None,
    reason="the docs extra is not installed (pip install -e '.[docs]')")

# The pages issue 47 asks for, by file.
PAGES = ["getting-started.md", "cli.md", "python-api.md", "models.md", "permissions-and-trust.md", "sandbox.md",
         "mcp.md", "acp.md", "agent-sdks.md", "telemetry.md", "batch.md", "viewer.md", "guarantees.md",
         "architecture.md", "benchmarks.md", "reference/options.md"]


def build(config_dir: Path, out: Path) -> subprocess.CompletedProcess[str]:
    # no -q: mkdocs counts the warnings it logs, so a quiet build would pass a broken link
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=config_dir, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(out.parent)})


def text_of(page: Path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    p = build(ROOT, out)
    assert p.returncode == 0, p.stderr[-4000:]
    return out


def test_every_page_of_the_issue_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        assert (ROOT / "docs" / page).exists(), page
        assert f" {page}\n" in nav, page


@needs_mkdocs
@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_site_builds_strictly_with_every_page(site: Path) -> None:
    for page in PAGES:
        assert (site / page.removesuffix(".md") / "index.html").exists(), page


@needs_mkdocs
@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy)
    shutil.copytree(ROOT / "src", copy / "src")
    shutil.copytree(ROOT / "docs", copy / "docs")
    # the API reference's `::: name` blocks are mkdocstrings reading src/ (most of a build's time, and
    # test_site_builds_strictly_with_every_page's business): here the pages keep their prose and links
    for ref in (copy / "docs" / "reference").glob("*.md"):
        ref.write_text("".join(ln for ln in ref.read_text().splitlines(True) if not ln.startswith(":::")))
    page = copy / "docs" / "cli.md"
    page.write_text(page.read_text() + "\nSee [nothing](no-such-page.md).\n")
    p = build(copy, tmp_path / "site")
    assert p.returncode != 0 and "no-such-page.md" in p.stderr


def field_docs(cls: type) -> dict[str, str]:
    """A dataclass's fields and the docstring under each, read from its source."""
    node = ast.parse(inspect.getsource(cls)).body[0]
    assert isinstance(node, ast.ClassDef)
    out: dict[str, str] = {}
    for stmt, nxt in zip(node.body, [*node.body[1:], None], strict=True):
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            doc = nxt.value.value if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) else ""
            out[stmt.target.id] = str(doc)
    return out


def test_every_agent_options_field_has_a_docstring() -> None:
    from dataclasses import fields

    import loopwright as lw

    docs = field_docs(lw.AgentOptions)
    assert set(docs) == {f.name for f in fields(lw.AgentOptions)}
    assert [name for name, doc in docs.items() if len(doc.split()) < 5] == []


@needs_mkdocs
@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_reference_lists_agent_options_fields_with_their_docs(site: Path) -> None:
    import loopwright as lw

    page = (site / "reference" / "options" / "index.html").read_text()
    letters = re.sub(r"\W+", "", text_of(site / "reference" / "options" / "index.html"))
    for name, doc in field_docs(lw.AgentOptions).items():
        assert f'id="loopwright.AgentOptions.{name}"' in page, name
        first_words = re.sub(r"\W+", "", " ".join(doc.split()[:8]))  # markup aside, the doc's own words
        assert first_words in letters, (name, doc)


def bench_hook() -> Any:
    spec = importlib.util.spec_from_file_location("bench_results_hook", ROOT / "docs" / "bench_results_hook.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmarks_section_is_generated_from_every_results_file(tmp_path: Path) -> None:
    hook = bench_hook()
    (tmp_path / "results").mkdir()
    (tmp_path / "bench_first_request.py").write_text("")
    (tmp_path / "results" / "first_request_mcp_node.md").write_text("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    (tmp_path / "results" / "gone.md").write_text("| x |\n|---|\n| 3 |\n")
    text = hook.results_section(tmp_path / "results")
    assert "### first_request_mcp_node\n\nWritten by `bench/bench_first_request.py`" in text
    assert "**Title**\n\n| a | b |" in text and "| 1 | 2 |" in text
    assert "### gone\n\nWritten by a script no longer in `bench/`" in text
    real = hook.results_section()
    for path in (ROOT / "bench" / "results").glob("*.md"):
        if path.stem != "report":
            assert f"### {path.stem}\n" in real and "Written by `bench/bench_" in real.split(f"### {path.stem}\n")[1][:80]


@needs_mkdocs
@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_the_built_benchmarks_page_shows_every_results_table(site: Path) -> None:
    page = text_of(site / "benchmarks" / "index.html")
    assert "<!-- bench-results -->" not in (site / "benchmarks" / "index.html").read_text()
    for path in (ROOT / "bench" / "results").glob("*.md"):
        if path.stem == "report":
            continue
        row = next(ln for ln in path.read_text().splitlines() if ln.startswith("|") and "---" not in ln)
        cells = [c.strip().replace("`", "") for c in row.strip("|").split("|")]
        assert all(html.unescape(c) in page for c in cells if c), (path.name, cells)


def test_the_guarantees_page_names_files_and_tests_that_exist() -> None:
    """Each row of docs/guarantees.md: the files it names exist, and each test it names is defined
    in one of the test files of its row (a renamed test or module makes the page fail here)."""
    rows = [ln for ln in (ROOT / "docs" / "guarantees.md").read_text().splitlines() if ln.startswith("| ")]
    named = 0
    for row in rows:
        files = re.findall(r"`((?:src|tests)/[\w/.-]+\.py)`", row)
        for f in files:
            assert (ROOT / f).exists(), f
        tests = re.findall(r"`(test_\w+)`", row)
        sources = "".join((ROOT / f).read_text() for f in files if f.startswith("tests/"))
        for t in tests:
            assert re.search(rf"def {t}\(", sources), (t, files)
        named += len(tests)
    assert named >= 20


def test_every_name_of_the_api_reference_has_a_docstring() -> None:
    """The reference is generated from the docstrings: each `::: loopwright.NAME` of docs/reference/
    is documented, and so are its public methods and properties (an undocumented one would be
    left out of the page without a word)."""
    import loopwright as lw

    names = sorted({n for p in (ROOT / "docs" / "reference").glob("*.md")
                    for n in re.findall(r"^::: loopwright\.(\w+)$", p.read_text(), re.M)})
    assert {"AgentOptions", "query", "run", "LoopwrightClient", "tool", "Tool", "ScriptedModel", "ResultMessage",
            "Hooks", "HookMatcher", "Allow", "Deny"} <= set(names)
    missing = []
    for name in names:
        obj = getattr(lw, name)
        if not (obj.__dict__.get("__doc__") if isinstance(obj, type) else inspect.getdoc(obj)):
            missing.append(name)
        if isinstance(obj, type):
            for attr, value in obj.__dict__.items():
                f = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                if not attr.startswith("_") and (callable(f) or isinstance(value, property)) and not f.__doc__:
                    missing.append(f"{name}.{attr}")
    assert missing == []
