"""MCP's own conformance suite (npm @modelcontextprotocol/conformance, pinned in tests/node) with
`loopwright mcp serve --http` as the server: one test per server scenario, read from one run of the
whole suite (`--suite all`) against one server.

Most scenarios call test items by fixed names (`test_simple_text`, `test://static-text`,
`test_simple_prompt`, …), which `--conformance-fixtures` adds beside loopwright's own; the run with
them must pass every scenario. The scenarios that need no fixture (initialize, ping, logging,
completion, the three listings, DNS rebinding, several SSE streams) must also pass against the plain
server, on loopwright's real tools, files and commands."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.serve_helpers import http_server
from tests.mcp.test_conformance import NODE, SUITE, suite_listing

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")


def server_scenarios() -> list[str]:
    """The suite's server scenarios, as its `list` command prints them (empty when it is missing)."""
    out = suite_listing()
    if not out:
        return []
    part = out.split("Server scenarios", 1)[-1].split("Client scenarios", 1)[0]
    return [ln.strip()[2:].split(" [")[0] for ln in part.splitlines() if ln.strip().startswith("- ")]


SCENARIOS = server_scenarios()
WITHOUT_FIXTURES = {"server-initialize", "ping", "logging-set-level", "completion-complete", "tools-list",
                    "resources-list", "prompts-list", "dns-rebinding-protection", "server-sse-multiple-streams"}
pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not SCENARIOS, reason="the conformance suite or Node 22 is missing "
                                                       "(cd tests/node && npm ci)")]


def run_suite(tmp: Path, fixtures: bool) -> dict[str, Any]:
    work = tmp / "work"
    (work / ".loopwright" / "commands").mkdir(parents=True)
    (work / "README.md").write_text("a workspace file\n")
    (work / ".loopwright" / "commands" / "review.md").write_text("---\ndescription: Review\n---\nReview $ARGUMENTS\n")
    out = tmp / "results"
    flags = ["--conformance-fixtures"] if fixtures else []
    with http_server(work, tmp / "home", *flags) as url:
        p = subprocess.run([str(NODE), str(SUITE), "server", "--url", url, "--suite", "all", "-o", str(out)],
                           cwd=tmp, capture_output=True, text=True, timeout=300)
    checks = {}
    for d in out.iterdir():
        name = next((s for s in SCENARIOS if d.name.startswith(f"server-{s}-")), None)
        if name is not None:
            checks[name] = json.loads((d / "checks.json").read_text())
    return {"returncode": p.returncode, "stdout": p.stdout, "checks": checks}


@pytest.fixture(scope="module")
def with_fixtures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    yield run_suite(tmp_path_factory.mktemp("conformance-fixtures"), True)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    yield run_suite(tmp_path_factory.mktemp("conformance-plain"), False)


def failures(checks: list[dict[str, Any]]) -> list[str]:
    return [f"{c['id']}: {c.get('errorMessage')}" for c in checks if c["status"] == "FAILURE"]


@pytest.mark.parametrize("scenario", SCENARIOS or ["none"])
def test_server_scenario_with_fixtures(with_fixtures: dict[str, Any], scenario: str) -> None:
    checks = with_fixtures["checks"].get(scenario)
    assert checks is not None, f"{scenario} did not run:\n{with_fixtures['stdout'][-3000:]}"
    assert not failures(checks), failures(checks)


@pytest.mark.parametrize("scenario", sorted(WITHOUT_FIXTURES))
def test_server_scenario_without_fixtures(plain: dict[str, Any], scenario: str) -> None:
    checks = plain["checks"].get(scenario)
    assert checks is not None, f"{scenario} did not run:\n{plain['stdout'][-3000:]}"
    assert not failures(checks), failures(checks)
    assert any(c["status"] == "SUCCESS" for c in checks)


def test_the_whole_suite_passes_and_the_fixtures_are_needed(with_fixtures: dict[str, Any],
                                                            plain: dict[str, Any]) -> None:
    """The suite's own verdict: exit 0 with the fixtures. Without them, the scenarios that call a
    fixture by name fail (so the fixture runs above do test something)."""
    assert with_fixtures["returncode"] == 0, with_fixtures["stdout"][-3000:]
    assert failures(plain["checks"]["tools-call-simple-text"])
    assert failures(plain["checks"]["resources-read-text"])
