"""The benchmarks page's generated part (a MkDocs hook, named in mkdocs.yml): every table the
benchmark scripts wrote to `bench/results/`, each with the script that writes it, put where
docs/benchmarks.md holds the `<!-- bench-results -->` marker when the site is built. So the
page shows what the last run of each script measured, never a hand copy of it.

(Not a page itself: mkdocs.yml's exclude_docs leaves docs/*.py out of the site.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
MARKER = "<!-- bench-results -->"
SKIP = {"report"}  # bench/report.py's own page: its headline block is on the page already


def script_for(name: str, bench: Path = ROOT / "bench") -> str | None:
    """The bench script that writes results/NAME.md: bench_NAME.py, else the longest bench_X.py
    with NAME = X_<variant> (first_request_mcp_node.md: bench_first_request.py --mcp node)."""
    stems = sorted((p.stem.removeprefix("bench_") for p in bench.glob("bench_*.py")), key=len, reverse=True)
    found = next((s for s in stems if name == s or name.startswith(s + "_")), None)
    return f"bench/bench_{found}.py" if found else None


def results_section(results: Path = RESULTS) -> str:
    """Every results file as a section: its name, its script, its text (its `#` titles made bold)."""
    out: list[str] = []
    for path in sorted(results.glob("*.md")):
        if path.stem in SKIP:
            continue
        lines = [f"**{ln.lstrip('#').strip()}**" if ln.startswith("#") else ln  # its titles: under ours
                 for ln in path.read_text().strip().splitlines()]
        script = script_for(path.stem, results.parent)
        made_by = f"Written by `{script}`" if script else "Written by a script no longer in `bench/`"
        out += [f"### {path.stem}", "", f"{made_by} (`bench/results/{path.name}`).", "", *lines, ""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """MkDocs' hook: fill the marker of the benchmarks page."""
    if page.file.src_uri != "benchmarks.md":
        return markdown
    if markdown.count(MARKER) != 1:
        raise ValueError(f"docs/benchmarks.md must hold {MARKER} exactly once")
    return markdown.replace(MARKER, results_section())
