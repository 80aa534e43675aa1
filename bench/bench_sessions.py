"""Sessions: what persistence costs per turn, and how fast a long session loads.

Usage: .venv/bin/python bench/bench_sessions.py [--turns N] [--rounds R]

1. Per-turn cost of persistence: the same scripted run (zero-latency model, a trivial tool,
   N tool-use turns) with persist_session off and on (fsync "none", the default, and "turn"),
   interleaved in one process, R rounds each; the median per-turn time of each variant and
   the difference to the run without persistence. Target: at most 1 ms per turn.
2. Loading a 10,000-message session (5,000 tool-use turns written by the real recorder):
   load_transcript (read, parse, replay, repair, Inv check) and session_info. Target: well
   under a second.

Prints a markdown table and writes it to bench/results/sessions.md.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.sessions import load_transcript, session_info

HERE = Path(__file__).resolve().parent
PAYLOAD = "result line with some ordinary tool output, paths and numbers 12345\n" * 3


def script(n: int) -> list[Any]:
    turns: list[Any] = [[{"type": "text", "text": f"step {i}"},
                         {"type": "tool_use", "id": f"toolu_{i:06d}", "name": "Echo", "input": {"x": f"arg {i}"}}]
                        for i in range(n)]
    return [*turns, [{"type": "text", "text": "done"}]]


ECHO = lw.Tool("Echo", "echo", {"type": "object", "properties": {"x": {"type": "string"}}},
               lambda i: i["x"] + "\n" + PAYLOAD)


def one_run(n: int, root: Path, persist: bool, fsync: str = "none") -> tuple[float, lw.ResultMessage]:
    o = lw.AgentOptions(model=lw.ScriptedModel(script(n)), tools=[ECHO], cwd=root, sessions_dir=root / "s",
                        persist_session=persist, session_fsync=fsync)
    t0 = time.perf_counter()
    r = lw.run("go", o)
    dt = time.perf_counter() - t0
    assert r.subtype == "success" and r.num_turns == n, r.subtype
    return dt, r


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    n = args.turns
    variants = [("no persistence", False, "none"), ("persist, fsync=none (default)", True, "none"),
                ("persist, fsync=turn", True, "turn")]
    times: dict[str, list[float]] = {v[0]: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        one_run(50, root, True)  # warm-up: imports, caches
        for _ in range(args.rounds):
            for name, persist, fsync in variants:  # interleaved: drift hits all variants alike
                dt, _ = one_run(n, root, persist, fsync)
                times[name].append(dt / n)
        base = statistics.median(times[variants[0][0]])

        # a 10,000-message session, written by the real recorder
        _, r = one_run(5000, root, True)
        path = next(p for p in (root / "s").rglob(f"{r.session_id}.jsonl"))
        load_times, info_times = [], []
        for _ in range(5):
            t0 = time.perf_counter()
            loaded = load_transcript(path)
            load_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            session_info(path)
            info_times.append(time.perf_counter() - t0)
        assert loaded.history == r.messages and len(loaded.history) == 10002
        size_mb = path.stat().st_size / 1e6

    rows = ["| measurement | value | target |", "|---|---|---|"]
    for name, _, _ in variants:
        med = statistics.median(times[name])
        extra = "" if name == variants[0][0] else f" (+{(med - base) * 1e6:.0f} µs vs none)"
        target = {"persist, fsync=none (default)": "≤ 1 ms added",
                  "persist, fsync=turn": "(opt-in durability against power loss: disk-bound)"}.get(name, "")
        rows.append(f"| per-turn time, {name} ({n} turns, median of {args.rounds}) | {med * 1e6:.0f} µs{extra} | {target} |")
    rows.append(f"| load 10,002-message session ({size_mb:.1f} MB): read, replay, repair, Inv | "
                f"{statistics.median(load_times) * 1000:.0f} ms | well under 1 s |")
    rows.append(f"| session_info (list/show summary) of the same file | {statistics.median(info_times) * 1000:.0f} ms | |")
    added = statistics.median(times[variants[1][0]]) - base
    verdict = "PASS" if added <= 1e-3 and statistics.median(load_times) < 0.5 else "FAIL"
    header = (f"# Sessions benchmark\n\nPython {platform.python_version()} on {platform.machine()}, "
              f"{platform.system()}; `{' '.join(sys.argv[1:]) or 'defaults'}`.\n\n")
    table = "\n".join(rows)
    out = f"{header}{table}\n\nVerdict: {verdict} (persistence adds {added * 1e6:.0f} µs per turn with the default fsync policy).\n"
    print(out)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "sessions.md").write_text(out)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
