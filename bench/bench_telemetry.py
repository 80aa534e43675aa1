"""Telemetry's cost per turn: the same run (zero-latency scripted model, a no-op tool) with
telemetry off and on (the real SDK and OTLP http/protobuf exporter sending to a loopback
receiver), alternated in one process so that the machine's noise hits both alike.

A turn with telemetry on makes two spans (chat, execute_tool), three metric records and the
tool's context switch; the spans leave in the SDK's export thread.

    .venv/bin/python bench/bench_telemetry.py [--quick]
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from bench_overhead import run_seconds  # the same run: zero-latency model, no-op tool

from loopwright.testing.otlp import OtlpReceiver


def per_turn_us(turns: int) -> float:
    return run_seconds(turns) / turns * 1e6


def main() -> None:
    quick = "--quick" in sys.argv
    turns, reps = (200, 3) if quick else (1000, 7)
    rx = OtlpReceiver().start()  # kept until exit: the SDK flushes once more at exit
    if True:
        on_env = rx.env()
        per_turn: dict[str, list[float]] = {"off": [], "on": []}
        per_turn_us(50)  # warm-up: imports, first run
        for _ in range(reps):
            for mode in ("off", "on"):
                for k in on_env:
                    os.environ.pop(k, None)
                if mode == "on":
                    os.environ.update(on_env)
                per_turn[mode].append(per_turn_us(turns))
        from loopwright.telemetry import flush

        flush(10.0)
        rx.wait(lambda x: len(x.named("invoke_agent")) >= reps, 10)
        spans = len(rx.spans)
    off, on = statistics.median(per_turn["off"]), statistics.median(per_turn["on"])
    head = f"{reps} runs of {turns} turns each, alternated; {spans} spans received by the loopback collector"
    table = "\n".join([
        "| telemetry | per turn, median | min | vs off |", "|---|---:|---:|---:|",
        f"| off | {off:.0f} µs | {min(per_turn['off']):.0f} µs | 1.00× |",
        f"| on (OTLP http/protobuf to loopback) | {on:.0f} µs | {min(per_turn['on']):.0f} µs | {on / off:.2f}× |"])
    tail = f"telemetry adds {on - off:.0f} µs per turn (2 spans, 4 metric records)"
    if not quick:
        out = Path(__file__).resolve().parent / "results" / "telemetry.md"
        out.write_text(f"# telemetry on vs off, per turn\n\n{head}\n\n{table}\n\n{tail}\n")
    print(f"{head}\n\n{table}\n\n{tail}")


if __name__ == "__main__":
    main()
