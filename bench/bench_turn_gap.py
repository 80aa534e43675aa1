"""The CLI's per-turn harness gap: `loopwright -p` through N turns of one Read (a trivial tool)
against the loopback server, from the server's answer k written to request k+1 read (less the
server's own parse of it; bench/measure.py `Served.gaps`), side by side with git revision REF.

    .venv/bin/python bench/bench_turn_gap.py [--turns 50] [--runs 5] [--before REF]

The runs of the two trees are interleaved (a busy machine hits both alike); bytecode is
compiled and used (PYTHONDONTWRITEBYTECODE unset, one warm-up run each). Medians (and
minima) over all gaps of all runs. Writes bench/results/turn_gap.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_request import SRC, extract_src  # noqa: E402
from measure import serve_and_run  # noqa: E402

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "src" / "loopwright" / "demo_project"
ENTRY = "import sys; from loopwright.cli import main; sys.exit(main())"


def turns_for(repo: Path, n: int) -> list[object]:
    use = {"type": "tool_use", "name": "Read", "input": {"file_path": str(repo / "grades.py")}}
    return [*([{**use, "id": f"toolu_{k:03d}"}] for k in range(n)), [{"type": "text", "text": "done"}]]


def one(repo: Path, home: Path, n: int, pythonpath: str | None) -> list[float]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "LOOPWRIGHT_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(ANTHROPIC_API_KEY="test", HOME=str(home), NO_PROXY="127.0.0.1,localhost")
    env["PYTHONPATH"] = pythonpath or SRC  # None: this checkout's src, not the venv's install
    proc, served = serve_and_run(
        turns_for(repo, n),
        lambda url: ["env", f"ANTHROPIC_BASE_URL={url}", sys.executable, "-c", ENTRY, "-p", "go", "--model", "claude-sonnet-4-5", "--output-format",
                     "json", "--permission-mode", "acceptEdits", "--allowedTools", "Read"],
        cwd=repo, env=env, model="claude-sonnet-4-5")
    assert proc.returncode == 0 and len(served.loop) == n + 1, proc.stderr[-2000:]
    return served.gaps()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--before", help="a git revision to measure side by side")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lw-gap-"))
    repo = tmp / "repo"
    shutil.copytree(DEMO, repo)
    trees: dict[str, str | None] = {"this tree": None}
    if args.before:
        trees = {f"before {args.before}": str(extract_src(args.before, tmp / "before")), **trees}
    gaps: dict[str, list[float]] = {k: [] for k in trees}
    for r in range(args.runs + 1):
        for label, path in trees.items():
            g = one(repo, tmp, args.turns, path)
            if r:  # the first run of each writes its bytecode
                gaps[label] += g
    lines = [f"`loopwright -p` through {args.turns} turns of one Read, {args.runs} interleaved runs per column "
             f"(after a warm-up each); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.", "",
             "| measurement | " + " | ".join(trees) + " |", "|---|" + "---:|" * len(trees),
             "| per-turn gap, median ms | " + " | ".join(f"{statistics.median(gaps[k]) * 1000:.2f}" for k in trees) + " |",
             "| per-turn gap, min ms | " + " | ".join(f"{min(gaps[k]) * 1000:.2f}" for k in trees) + " |"]
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "turn_gap.md").write_text(text)


if __name__ == "__main__":
    main()
