"""What converting a normal page in a killable worker process costs WebFetch (issue 40, item 10),
side by side in one run (the rows take turns, so load on the machine falls on all alike):

    .venv/bin/python bench/bench_webfetch_convert.py [--runs 21]

Rows, for an ordinary documentation page (~120 KB of HTML) and a two-page PDF: the conversion in
this process (what WebFetch did before: a thread that cannot be stopped), in a warm worker (the
usual case: an idle worker is kept), and in a fresh worker (the first page of a process, or the
one after a give-up: process start + imports). Writes bench/results/webfetch_convert.md.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from loopwright.tools.web import worker
from loopwright.tools.web.convert import to_text

HERE = Path(__file__).resolve().parent
SECTION = ("<h2>Section {i}</h2><p>The <code>spin</code> call turns the widget by <b>speed</b> steps; see "
           "<a href='/docs/{i}'>the docs</a>.</p><ul><li>fast</li><li>safe</li></ul>"
           "<table><tr><th>name</th><th>type</th></tr><tr><td>speed</td><td>int</td></tr></table>"
           "<pre><code>widget.spin(speed={i})</code></pre>")
HTML = ("<!doctype html><html><head><title>Widget API</title><style>p{color:red}</style></head><body>"
        + "".join(SECTION.format(i=i) for i in range(300)) + "</body></html>").encode()


def pdf() -> bytes:
    from fpdf import FPDF

    doc = FPDF()
    for line in ("Quarterly report: revenue grew 12 percent.", "Page two: costs fell."):
        doc.add_page()
        doc.set_font("Helvetica", size=14)
        doc.cell(text=line)
    return bytes(doc.output())


def ms(f: Callable[[], object]) -> float:
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    runs = ap.parse_args().runs
    pages = {"HTML, 120 KB": (HTML, "text/html"), "PDF, 2 pages": (pdf(), "application/pdf")}
    rows: dict[str, list[float]] = {}

    def bounded(body: bytes, ct: str) -> None:
        asyncio.run(worker.to_text_bounded(body, ct, 60))

    def fresh(body: bytes, ct: str) -> None:
        with worker._lock:
            idle, worker._idle[:] = list(worker._idle), []
        for p in idle:
            worker._end(p)
        bounded(body, ct)

    for body, ct in pages.values():
        to_text(body, ct)  # imports paid once, as in a long session
        bounded(body, ct)
    for _ in range(runs):
        for name, (body, ct) in pages.items():
            rows.setdefault(f"{name}: in this process (before)", []).append(ms(lambda b=body, c=ct: to_text(b, c)))
            rows.setdefault(f"{name}: warm worker (after)", []).append(ms(lambda b=body, c=ct: bounded(b, c)))
    for _ in range(runs):  # (after the warm rows: a fresh worker knows one kind of page only)
        for name, (body, ct) in pages.items():
            rows.setdefault(f"{name}: fresh worker (first page, or after a give-up)", []).append(
                ms(lambda b=body, c=ct: fresh(b, c)))
    lines = ["| conversion | median ms | min ms |", "|---|---:|---:|"]
    lines += [f"| {k} | {statistics.median(v):.1f} | {min(v):.1f} |" for k, v in rows.items()]
    table = "\n".join(lines)
    print(table)
    (HERE / "results" / "webfetch_convert.md").write_text(
        f"`bench/bench_webfetch_convert.py --runs {runs}`\n\n{table}\n")


if __name__ == "__main__":
    main()
