"""Makes docs/telemetry-demo-trace.png: `loopwright demo` (the fix-the-test run) with telemetry
on, its spans received over OTLP by the loopback receiver (loopwright.testing.otlp) and drawn as
a waterfall, as a tracing backend shows them.   .venv/bin/python docs/telemetry_trace.py"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from loopwright.testing.otlp import OtlpReceiver, Span

OUT = Path(__file__).resolve().parent / "telemetry-demo-trace.png"


def label(s: Span) -> str:
    a = s.attributes
    if s.name.startswith("chat "):
        return (f"{s.name}   n_k={a.get('gen_ai.usage.input_tokens')} out={a.get('gen_ai.usage.output_tokens')} "
                f"${a.get('loopwright.cost_usd', 0):.4f} {a.get('gen_ai.response.finish_reasons', [''])[0]}")
    if s.name.startswith("execute_tool "):
        return (f"{s.name}   {a.get('loopwright.permission.decision')} via {a.get('loopwright.permission.via')}"
                f"{'  is_error' if a.get('loopwright.tool.is_error') else ''}")
    if s.name.startswith("invoke_agent "):
        return (f"{s.name}   {a.get('loopwright.result.subtype')}, {a.get('loopwright.num_turns')} turns, "
                f"{a.get('loopwright.model_calls')} calls, ${a.get('loopwright.cost_usd', 0):.4f}")
    return s.name


def main() -> None:
    with OtlpReceiver() as rx:
        env = {**os.environ, **rx.env(metrics=False), "OTEL_SERVICE_NAME": "loopwright-demo"}
        r = subprocess.run([sys.executable, "-m", "loopwright", "demo"], env=env, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        rx.wait(lambda x: any(s.name.startswith("invoke_agent") for s in x.spans), 10)
        spans = list(rx.spans)
    by_id = {s.span_id: s for s in spans}

    def depth(s: Span) -> int:
        return 0 if s.parent_id not in by_id else 1 + depth(by_id[s.parent_id])

    spans.sort(key=lambda s: (s.start_ns, depth(s)))
    t0 = min(s.start_ns for s in spans)
    end = max(s.end_ns for s in spans)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"invoke_agent": "#6c5ce7", "chat": "#0984e3", "execute_tool": "#00b894", "hook": "#fdcb6e"}
    fig, ax = plt.subplots(figsize=(12, 0.48 * len(spans) + 1.2))
    for row, s in enumerate(spans):
        start, dur = (s.start_ns - t0) / 1e6, max((s.end_ns - s.start_ns) / 1e6, 0.5)
        color = "#d63031" if s.status == 2 else colors.get(s.name.split()[0], "#636e72")
        ax.barh(row, dur, left=start, color=color, height=0.6)
        ax.text(start + dur + (end - t0) / 1e6 * 0.005, row, "    " * depth(s) + label(s), va="center", fontsize=8.5)
    ax.set_yticks([])
    ax.invert_yaxis()
    ax.set_xlim(0, (end - t0) / 1e6 * 1.9)
    ax.set_xlabel("ms since the run started")
    root = next(s for s in spans if s.parent_id == "")
    ax.set_title(f"loopwright demo: trace {root.trace_id[:16]}… as received over OTLP "
                 f"(service {root.resource.get('service.name')}); red = error status", fontsize=10)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    fig.savefig(OUT, dpi=110)
    print(OUT)
    for s in spans:
        print("  " * depth(s) + label(s))


if __name__ == "__main__":
    main()
