"""The README is a front page: at most 250 lines, opening with exactly the two commands (the demo;
the test suite, which `.ci/run` runs as written), and every relative link in it leads to a file."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
DEMO = 'python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/loopwright demo'
TESTS = 'python3 -m venv .venv && .venv/bin/pip install -q -e ".[dev]" && .venv/bin/python -m pytest'


def test_readme_is_a_front_page() -> None:
    assert len(README.splitlines()) <= 250


def test_readme_opens_with_the_two_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    assert blocks[:2] == [DEMO, TESTS]
    before = README[: README.index("```bash")]
    assert before.strip() == "# loopwright"  # nothing comes before them but the title


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == TESTS


def test_readme_links_lead_to_files() -> None:
    links = [t for t in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README) if "://" not in t]
    assert links, "the README links into the documentation"
    missing = [t for t in links if not (ROOT / t).exists()]
    assert missing == []


def test_readme_anchors_exist_on_their_pages() -> None:
    """A link to a section (`docs/models.md#a-scripted-model-...`) names a heading of that page."""
    for page, anchor in re.findall(r"\]\((docs/[^)#\s]+)#([^)]+)\)", README):
        heads = re.findall(r"^#+ (.+)$", (ROOT / page).read_text(), re.M)
        slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in heads}
        assert anchor in slugs, (page, anchor)
