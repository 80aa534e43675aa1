"""bench/report.py keeps working: a quick pass of every part (3 turns; peers that are not
installed are left out, and Claude Code's part says why it did not run), plus the block of
docs/benchmarks.md it refreshes. The figures themselves are the benchmark's business, not asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import bench_peers  # noqa: E402
import report  # noqa: E402


def quick(tmp_path: Path, *args: str) -> str:
    page_before = report.PAGE.read_text()
    p = subprocess.run([sys.executable, str(BENCH / "report.py"), "--quick", *args, "--out", str(tmp_path),
                        "--no-docs"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert report.PAGE.read_text() == page_before  # --no-docs
    md = (tmp_path / "report.md").read_text()
    assert "## Headline: ratios" in md
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "No chart" in md
    else:
        assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return md


@pytest.mark.e2e
@pytest.mark.timeout(600)  # a few fresh processes of each harness; slow only on a crowded machine
def test_quick_claude_code_part(tmp_path: Path) -> None:
    md = quick(tmp_path, "--only", "claude", "--loop-calls", "2")
    assert "| fix-the-test | loopwright -p (AnthropicModel) | 1/1 |" in md
    assert "| 2-tool-call loop | loopwright -p (AnthropicModel) | 1/1 |" in md
    if report.vscc.CLAUDE.exists():  # Claude Code when installed, else the reason it did not run
        assert "| fix-the-test | Claude Code" in md and "vs Claude Code" in md
        assert "| 2-tool-call loop | Claude Code" in md
    else:
        assert "Claude Code did not run" in md


@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_quick_peers_part(tmp_path: Path) -> None:
    md = quick(tmp_path, "--only", "peers", "--turns", "3")
    for h in bench_peers.HARNESSES:  # every installed harness ran its 3 turns; the others are named
        if h in bench_peers.available():
            assert f"| {h.label} | 3 | 1/1 |" in md, h.label
        else:
            assert f"{h.label} (`{h.dist}`)" in md
    assert "Reference, the loop alone" in md and "\n| 3 | 5 |" in md  # bench_overhead's in-process loop


def test_report_block_is_replaced_not_appended() -> None:
    text = f"intro\n{report.BEGIN}\nold table\n{report.END}\noutro\n"
    once = report.replace_block(text, "| new |")
    assert once == f"intro\n{report.BEGIN}\n| new |\n{report.END}\noutro\n"
    assert report.replace_block(once, "| newer |").count("| new") == 1  # a rerun replaces, never stacks


def test_benchmarks_page_holds_exactly_one_report_block() -> None:
    text = report.PAGE.read_text()
    assert text.count(report.BEGIN) == 1 and text.count(report.END) == 1
    with pytest.raises(ValueError, match="exactly one"):
        report.replace_block(text + text, "x")
