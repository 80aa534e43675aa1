"""The Python examples of the README and of every page under docs/ run, as a reader would run them:
each page's ```python blocks in order, in one namespace (a later block may use an earlier one's
names, but nothing is imported for it: a reader who copies the page's first block gets a NameError
if it uses `lw` without `import loopwright as lw`), offline. A model string reaches
a loopback Messages / chat-completions server (`loopwright.testing.ScriptedServer`) through the
environment a user would set (ANTHROPIC_BASE_URL, OPENAI_BASE_URL and their keys); it answers every
call with a short text. A block that cannot run here says why in a comment right before it:
`<!-- example: not run: REASON -->`, and the test reports it as skipped with that reason."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(?:<!-- example: not run: (?P<why>.*?) -->\n)?```python\n(?P<code>.*?)```", re.S)
PAGES = sorted(p for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")] if "```python" in p.read_text())


def blocks(page: Path) -> list[tuple[str, str | None]]:
    return [(m["code"], m["why"]) for m in BLOCK.finditer(page.read_text())]


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from loopwright.testing import ScriptedServer

    def answer(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"type": "text", "text": "ok"}]

    with ScriptedServer(answer, strict=False) as srv:
        for var, value in (("ANTHROPIC_BASE_URL", srv.url), ("ANTHROPIC_API_KEY", "test"),
                           ("OPENAI_BASE_URL", srv.url + "/v1"), ("OPENAI_API_KEY", "test")):
            monkeypatch.setenv(var, value)
        work = tmp_path / "project"
        work.mkdir()
        monkeypatch.chdir(work)
        yield work


def run_page(page: Path) -> list[str]:
    """Run the page's blocks in order in one namespace; return the reasons of those not run."""
    module = types.ModuleType(f"example_{page.stem.replace('-', '_')}")  # a module: dataclasses look theirs up
    not_run = []
    sys.modules[module.__name__] = module
    try:
        for i, (code, why) in enumerate(blocks(page), 1):
            if why:
                not_run.append(f"block {i}: {why}")
                continue
            exec(compile(code, f"{page.name}, python block {i}", "exec"), module.__dict__)  # noqa: S102
    finally:
        del sys.modules[module.__name__]
    return not_run


@pytest.mark.timeout(120)
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_the_python_examples_run(page: Path, offline: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_run = run_page(page)
    if page.name == "README.md":  # the front page's example prints what its comment says
        assert "success 1 2 It is sunny in Kyoto." in capsys.readouterr().out
    if not_run and len(not_run) == len(blocks(page)):
        pytest.skip("; ".join(not_run))


def test_a_failing_example_fails_the_test(tmp_path: Path, offline: Path) -> None:
    """The runner does not swallow errors: a block that raises makes its page's test fail."""
    page = tmp_path / "bad.md"
    page.write_text("```python\nlw.AgentOptions()\n```\n")
    with pytest.raises(NameError):  # a page's blocks import what they use, as a reader has to
        run_page(page)
    page.write_text("```python\nimport loopwright as lw\nx = 1\n```\n\n<!-- example: not run: needs a GPU -->\n"
                    "```python\nraise OSError\n```\n\n```python\nlw.AgentOptions(tools=[x])\n```\n")
    with pytest.raises(TypeError):  # the third block runs after the first (x is defined) and fails
        run_page(page)
    page.write_text(page.read_text().rsplit("```python", 1)[0])
    assert run_page(page) == ["block 2: needs a GPU"]


def test_the_readme_example_runs_with_no_server_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """The front page's first example is offline by itself: no key, no base URL, no server."""
    for var in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    code, why = blocks(ROOT / "README.md")[0]
    assert why is None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "__example__"})  # noqa: S102
    assert out.getvalue().startswith("success 1 2 It is sunny in Kyoto.")


def shell_commands(page: Path) -> list[list[str]]:
    """The `loopwright -...` command lines of a page's ```bash blocks, as argv after `loopwright`
    (continuation lines joined, comments and what follows a shell operator dropped)."""
    import shlex

    out = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip().startswith("loopwright -"):
                argv = shlex.split(line.strip(), comments=True)[1:]
                cut = [i for i, a in enumerate(argv) if a in ("&&", "||", "|", ";", "&")]
                out.append(argv[:cut[0]] if cut else argv)
    return out


def test_the_command_lines_of_the_docs_take_only_flags_loopwright_has(capsys: pytest.CaptureFixture[str]) -> None:
    """Each `loopwright -p ...` a page shows parses as written (a flag renamed or never made
    would be a reader's first error); the commands that need a key or a server are not run here."""
    from loopwright.cli import build_parser

    commands = [(page, argv) for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
                for argv in shell_commands(page)]
    assert len(commands) >= 10
    refused = []
    for page, argv in commands:
        try:
            build_parser().parse_args(argv)
        except SystemExit:
            refused.append(f"{page.relative_to(ROOT)}: loopwright {' '.join(argv)}: {capsys.readouterr().err.strip()}")
    assert refused == []
    with pytest.raises(SystemExit):  # the check can fail: a flag loopwright lacks is refused
        build_parser().parse_args(["-p", "hi", "--no-auto-compact"])
