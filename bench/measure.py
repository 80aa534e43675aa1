"""Measuring one child process (wall time, peak RSS, start time) and, when it talks to the
loopback server, what the server saw of it on the server's clock. Shared by the benches.

Peak RSS comes two ways. `maxrss_kib` is the child's own VmHWM (read from /proc while it runs;
exact: the kernel keeps it), of ONE process, not a sum. (ru_maxrss from wait4() is the fallback
without psutil; it is not the child's own peak: Linux keeps it across exec.)
`tree_peak_kib` (with `sample_tree=True`, needs psutil) is the largest SUM of the
resident sets of the child and all its descendants, sampled every `interval` seconds,
so it can miss a spike shorter than that.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loopwright.testing import RecordedRequest


@dataclass
class Proc:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    maxrss_kib: int
    tree_peak_kib: int | None
    started: float  # time.monotonic() just before the spawn (comparable with the server's stamps)
    timed_out: bool = False  # killed after `timeout` seconds


class _TreeSampler(threading.Thread):
    def __init__(self, pid: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak = 0
        self.root_hwm = 0  # the child's own VmHWM (kernel-kept, exact since its exec)
        self.done = threading.Event()

    def _hwm(self) -> None:
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for ln in f:
                    if ln.startswith("VmHWM:"):
                        self.root_hwm = max(self.root_hwm, int(ln.split()[1]))
        except (OSError, ValueError):
            pass

    def run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self.done.is_set():
            self._hwm()
            total = 0
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            for p in procs:
                try:
                    total += p.memory_info().rss
                except psutil.Error:  # it exited between the listing and the read
                    pass
            self.peak = max(self.peak, total // 1024)
            self.done.wait(self.interval)


def have_psutil() -> bool:
    try:
        import psutil  # noqa: F401
    except ImportError:
        return False
    return True


def spawn(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
          sample_tree: bool = False, interval: float = 0.01, timeout: float = 600.0) -> Proc:
    """Run `cmd` to its end (stdin closed), measuring it. Bytecode is written and used, as users
    have it: PYTHONDONTWRITEBYTECODE (set on some machines) is not passed on."""
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        # Always sampled when psutil is there: ru_maxrss from wait4() is not the child's own peak
        # (Linux keeps it across exec, so a child of a large process reports at least its parent's
        # size); the child's VmHWM is.
        sampler = _TreeSampler(p.pid, interval) if have_psutil() else None
        if sampler:
            sampler.start()
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            p.kill()

        killer = threading.Timer(timeout, kill)
        killer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            killer.cancel()
        timed_out = killed.is_set()
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if sampler:
            sampler.done.set()
            sampler.join()
        out.seek(0)
        err.seek(0)
        maxrss = sampler.root_hwm if sampler and sampler.root_hwm else ru.ru_maxrss
        return Proc(p.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                    wall, maxrss, sampler.peak if sampler and sample_tree else None, started, timed_out)


@dataclass
class Stat:
    """Runs, median and min of a list of samples (the form every table row takes)."""

    values: list[float]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else float("nan")

    @property
    def min(self) -> float:
        return min(self.values) if self.values else float("nan")

    @classmethod
    def of(cls, xs: Iterable[float]) -> Stat:
        return cls([float(x) for x in xs])


# --- a harness against the loopback server: what the server saw, on its clock ---------------

TURN_RE = re.compile(r" turn (\d+)\b")


class _Timeline:
    """When the server finished answering each turn: ScriptedServer logs a request after
    its answer's last byte is written (TCP_NODELAY: written = sent)."""

    def __init__(self) -> None:
        self.finished: dict[int, float] = {}

    def log(self, line: str) -> None:
        now = time.monotonic()
        m = TURN_RE.search(line)
        if m:
            self.finished[int(m.group(1))] = now


def _parse_s(raw: bytes) -> float:
    """How long the server's json.loads of this body takes (best of 3, re-timed after the run)."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        json.loads(raw)
        best = min(best, time.perf_counter() - t0)
    return best


@dataclass
class Served:
    """What the server saw of one harness run (all times time.monotonic())."""

    started: float  # the harness process was spawned
    loop: list[RecordedRequest]  # the model calls ("loop calls"), in arrival order
    side: list[RecordedRequest]  # everything else (probes, health checks, token counts)
    finished: dict[int, float]  # turn -> its answer was written

    @property
    def first_request_s(self) -> float:
        """Process start → the first model request read and parsed by the server."""
        return self.loop[0].received - self.started if self.loop else float("nan")

    def gaps(self) -> list[float]:
        """Harness time per turn: from answer k written to request k+1 read by the server,
        less the server's own JSON parse of request k+1 (`received` is stamped after it)."""
        out = []
        for r in self.loop:
            if r.turn and r.turn - 1 in self.finished:
                out.append(r.received - self.finished[r.turn - 1] - _parse_s(r.raw))
        return out

    def server_times(self) -> list[float]:
        """The server's own time per model call: request parsed → answer written."""
        return [self.finished[r.turn] - r.received for r in self.loop if r.turn in self.finished]


def serve_and_run(turns: list[Any], cmd: Callable[[str], list[str]], *, cwd: Path | None = None,
                  env: dict[str, str] | None = None, sample_tree: bool = False, timeout: float = 600.0,
                  model: str = "claude-sonnet-4-5") -> tuple[Proc, Served]:
    """Serve `turns` on a fresh loopback server (in this process, so the harness's RSS is its
    own) and run `cmd(server_url)` in a child to its end. strict=False: the real API
    accepts a turn's tool_results in any order, so the server must too."""
    from loopwright.testing import ScriptedServer

    tl = _Timeline()
    with ScriptedServer(turns, model=model, strict=False, log=tl.log) as srv:
        proc = spawn(cmd(srv.url), cwd=cwd, env=env, sample_tree=sample_tree, timeout=timeout)
        reqs = list(srv.requests)
    return proc, Served(proc.started, [r for r in reqs if r.loop_call], [r for r in reqs if not r.loop_call],
                        dict(tl.finished))
