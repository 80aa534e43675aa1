"""How long `loopwright view` takes to build a page, by session size (issue: 10,000 messages
render in under 2 s of generation). Sessions are synthetic loopwright transcripts: one Read call
and its result per turn, every 100th result 5,000 characters long.

    .venv/bin/python bench/bench_view.py [--runs 5]

Writes bench/results/view.md."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from loopwright.view import load_view, render


def transcript(path: Path, messages: int) -> None:
    lines = []
    for k in range(1, messages // 2 + 1):
        lines.append({"type": "assistant", "sessionId": "bench", "timestamp": "2026-01-01T00:00:00.000Z",
                      "message": {"role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
                                  "content": [{"type": "text", "text": f"step {k}"},
                                              {"type": "tool_use", "id": f"t{k}", "name": "Read",
                                               "input": {"file_path": f"src/f{k}.py"}}],
                                  "usage": {"input_tokens": 3, "output_tokens": 40, "cache_read_input_tokens": 100 * k,
                                            "cache_creation_input_tokens": 100, "cost_usd": 0.001}}})
        lines.append({"type": "user", "sessionId": "bench", "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}",
                                                               "content": "y" * (5000 if k % 100 == 0 else 300)}]}})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in (100, 1_000, 10_000):
            p = Path(d) / f"s{n}.jsonl"
            transcript(p, n)
            times, size = [], 0
            for _ in range(args.runs):
                t0 = time.perf_counter()
                page = render(load_view(p))
                times.append(time.perf_counter() - t0)
                size = len(page.encode())
            rows.append(f"| {n:,} | {statistics.median(times) * 1000:,.0f} ms | {min(times) * 1000:,.0f} ms "
                        f"| {size / 1e6:.1f} MB |")
    table = "\n".join(["| messages | read + render, median | min | page size |", "|---|---|---|---|", *rows])
    out = Path(__file__).resolve().parent / "results" / "view.md"
    out.write_text(f"# loopwright view: page generation ({args.runs} runs each)\n\n{table}\n")
    print(table)


if __name__ == "__main__":
    main()
