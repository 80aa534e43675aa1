"""Room: batch (a front end, beside cli). Owns a batch's progress on stderr (a live rich display on a
terminal, a line per task otherwise) and its summary."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Mapping
from typing import Any

from .tasks import BatchResult

# --- progress on stderr -------------------------------------------------------------------------------

class Progress:
    """Progress on stderr: a live rich display (done / running / failed, spend, ETA, a line per
    finished task above it) on a terminal, else one plain line per finished task (CI, pipes, logs);
    then a summary of the whole results file, earlier runs' results included."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.live = _isatty(self.stream)
        self.total = 0
        self.earlier: dict[str, BatchResult] = {}  # finished results of these tasks from earlier runs
        self.results: list[BatchResult] = []
        self.running: set[str] = set()
        self.spent = 0.0
        self.t0 = time.monotonic()
        self._bar: Any = None  # rich.progress.Progress, on a terminal
        self._bar_task: Any = None

    def start(self, total: int, earlier: Mapping[str, BatchResult]) -> None:
        self.total, self.earlier = total, dict(earlier)
        self.t0 = time.monotonic()
        if self.live:
            import rich.progress as rp
            from rich.console import Console

            self._bar = rp.Progress(rp.SpinnerColumn(), rp.TextColumn("batch"), rp.BarColumn(),
                                    rp.MofNCompleteColumn(), rp.TextColumn("{task.fields[status]}", markup=False),
                                    rp.TimeElapsedColumn(), redirect_stdout=False,
                                    console=Console(file=self.stream, highlight=False))
            self._bar_task = self._bar.add_task("batch", total=total, completed=len(earlier), status=self._status())
            self._bar.start()
        if earlier:
            self._print(f"{len(earlier)} of {total} tasks already in the results file; "
                        f"running the other {total - len(earlier)}")

    def started(self, task_id: str) -> None:
        self.running.add(task_id)
        self._update()

    def finished(self, r: BatchResult, spent: float) -> None:
        self.running.discard(str(r.get("id")))
        self.results.append(r)
        self.spent = spent
        cost, secs = float(r.get("total_cost_usd") or 0), float(r.get("duration_ms") or 0) / 1000
        if self._bar is not None:
            from rich.text import Text

            mark = ("✓", "green") if r.get("subtype") == "success" else ("✗", "red")
            self._bar.console.print(Text.assemble(mark, f" {r.get('id')}: {r.get('subtype')} ${cost:.4f} {secs:.1f}s"))
            self._update(advance=1)
        else:
            self._print(f"[{len(self.results) + len(self.earlier)}/{self.total}] {r.get('id')}: {r.get('subtype')} "
                        f"${cost:.4f} {secs:.1f}s · {self._status()}")

    def close(self) -> None:
        """Ends the live display (the terminal is the user's again); idempotent."""
        if self._bar is not None:
            self._update()
            self._bar.stop()
            self._bar = None

    def _failed(self) -> int:  # of the whole batch, as done is
        return sum(1 for x in [*self.earlier.values(), *self.results] if x.get("is_error"))

    def _status(self) -> str:
        left = self.total - len(self.earlier) - len(self.results)
        # the rate of this run's tasks; the earlier ones took no time of this run
        eta = (f"{(time.monotonic() - self.t0) / len(self.results) * left:.0f}s" if self.results and left
               else "0s" if not left else "?")
        return f"running {len(self.running)} · failed {self._failed()} · spent ${self.spent:.4f} · ETA {eta}"

    def _update(self, advance: int = 0) -> None:
        if self._bar is not None:
            self._bar.update(self._bar_task, advance=advance, status=self._status())

    def summary(self) -> str:
        """The whole batch as the results file now has it: this run's results over earlier ones."""
        this = {str(r.get("id")): r for r in self.results}
        rs = list({**self.earlier, **this}.values())
        wall = f"{len(this)} run this time in {time.monotonic() - self.t0:.1f}s" + (
            f", {len(self.earlier)} recorded earlier" if self.earlier else "")
        if not rs:
            return f"nothing to run ({wall})"
        ok = sum(1 for r in rs if r.get("subtype") == "success")
        turns = [int(r.get("num_turns") or 0) for r in rs]
        calls = [int(r.get("model_calls") or 0) for r in rs]
        cost = sum(float(r.get("total_cost_usd") or 0) for r in rs)
        slow = sorted(rs, key=lambda r: -float(r.get("duration_ms") or 0))[:3]
        by: dict[str, int] = {}
        for r in rs:
            by[str(r.get("subtype"))] = by.get(str(r.get("subtype")), 0) + 1
        return "\n".join([
            f"{ok}/{len(rs)} succeeded ({ok / len(rs):.0%}): " + ", ".join(f"{k} {v}" for k, v in sorted(by.items())),
            f"turns: median {statistics.median(turns):g}, max {max(turns)} · model calls: median "
            f"{statistics.median(calls):g}, max {max(calls)} · total cost ${cost:.4f}",
            "slowest: " + ", ".join(f"{r.get('id')} ({float(r.get('duration_ms') or 0) / 1000:.1f}s)" for r in slow),
            wall,
        ])

    def _print(self, s: str) -> None:
        if self._bar is not None:
            self._bar.console.print(s, markup=False, emoji=False)
        else:
            print(s, file=self.stream, flush=True)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or file-less stream
        return False
