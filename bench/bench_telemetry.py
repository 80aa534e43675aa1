"""Telemetry's cost per turn: the same run (zero-latency scripted model, a no-op tool) with
telemetry off and on (the real SDK and OTLP http/protobuf exporter sending to a loopback
receiver), alternated in one process so that the machine's noise hits both alike.

A turn with telemetry on makes two spans (chat, execute_tool), three metric records and the
tool's context switch; the spans leave in the SDK's export thread.

Then what the collector costs a short `loopwright -p` (one model call on the loopback Messages
server), wall time from start to exit, alternated: telemetry off, on to a live loopback receiver,
on to a port that refuses, and on to a listener that never answers.

    .venv/bin/python bench/bench_telemetry.py [--quick]
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_overhead import run_seconds  # the same run: zero-latency model, no-op tool

from loopwright.testing.otlp import OtlpReceiver


def per_turn_us(turns: int) -> float:
    return run_seconds(turns) / turns * 1e6


def collector_costs(reps: int) -> tuple[str, str]:
    """-p's wall time by collector, median of `reps` alternated runs each."""
    from loopwright.testing import ScriptedServer

    loopwright = str(Path(sys.executable).with_name("loopwright"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        refused = s.getsockname()[1]
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(64)  # connections are made but never answered
    live = OtlpReceiver().start()

    def otel(port: int) -> dict[str, str]:
        return {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
                "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"}

    modes = {"off": {}, "on, live loopback receiver": otel(live.port), "on, port refuses": otel(refused),
             "on, collector never answers": otel(hang.getsockname()[1])}
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ANTHROPIC_", "TRACEPARENT"))}
    times: dict[str, list[float]] = {m: [] for m in modes}
    with ScriptedServer(lambda h: [{"type": "text", "text": "ok"}]) as srv:
        for _ in range(reps):
            for mode, extra in modes.items():
                env = {**base, **extra, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "k"}
                t0 = time.perf_counter()
                r = subprocess.run([loopwright, "-p", "hi", "--model", "claude-sonnet-4-5", "--no-session-persistence"],
                                   env=env, capture_output=True, text=True, timeout=60, cwd=Path(__file__).parent)
                times[mode].append(time.perf_counter() - t0)
                assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    live.stop()
    hang.close()
    off = statistics.median(times["off"])
    rows = ["| collector | `-p` wall time, median | min | vs off |", "|---|---:|---:|---:|"]
    rows += [f"| {m} | {statistics.median(v):.2f} s | {min(v):.2f} s | +{statistics.median(v) - off:.2f} s |"
             for m, v in times.items()]
    return f"{reps} runs of each, alternated: `loopwright -p hi`, one model call", "\n".join(rows)


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
    c_head, c_table = collector_costs(2 if quick else 5)
    if not quick:
        out = Path(__file__).resolve().parent / "results" / "telemetry.md"
        out.write_text(f"# telemetry on vs off, per turn\n\n{head}\n\n{table}\n\n{tail}\n\n"
                       f"# what the collector costs a short run\n\n{c_head}\n\n{c_table}\n")
    print(f"{head}\n\n{table}\n\n{tail}\n\n{c_head}\n\n{c_table}")


if __name__ == "__main__":
    main()
