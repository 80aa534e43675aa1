"""The porting guides' examples (docs/porting-from-*.md): pydantic-ai's examples of dependencies,
output types and usage limits, and the OpenAI Agents SDK's of handoffs, context and guardrails,
ported to loopwright, run on the scripted model, every block (none is skipped), offline. Their
`assert`s check what each original shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.project.test_doc_examples import blocks, run_page

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDES = ["porting-from-pydantic-ai.md", "porting-from-openai-agents.md"]


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No provider is reachable: a block that reached for a real model would fail."""
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


@pytest.mark.parametrize("guide", GUIDES)
def test_every_ported_example_runs(guide: str, no_network: None) -> None:
    page = DOCS / guide
    assert len(blocks(page)) >= 3, "the guide has its examples"
    assert run_page(page) == [], "no block is skipped"
