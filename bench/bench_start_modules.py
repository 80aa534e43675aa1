"""Where `-p` start → first request goes, module by module: callgrind's instructions per import.

    .venv/bin/python bench/bench_start_modules.py [--before REF] [--min 2.0]

One `loopwright -p hi` process (bench_first_request.py's run: the loopback server outside it,
bytecode compiled and used, one warm-up run) under `valgrind --tool=callgrind`, counted up to the
first request's `send()` as bench_instructions.py's `--start` does, and cut at each module's load:
the child's importer is wrapped (in this benchmark's child only) so that each module's load
begins and ends with a `getppid()` call, and callgrind dumps its counts before each one
(`--dump-before=getppid`). A module's inclusive count is what ran between its two dumps (its own
body and the modules it imported), its self count that minus its imports': what its own body
costs (a `@dataclass` is paid where the class is declared). What ran outside any import (argv,
building the run, the event loop) is one row. Instructions repeat to a few per run, so two trees
compare on a busy machine. `--before REF` counts the `src/` of git revision REF the same way
(side by side in one run). Writes bench/results/start_modules.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_request import ENTRY, MODEL, Series, child_env, cli_args, extract_src  # noqa: E402

from loopwright.testing import ScriptedServer  # noqa: E402

HERE = Path(__file__).resolve().parent

# Run first in the child: each module load is bracketed by getppid() (callgrind dumps before each
# call), and the loads' order is written at exit, to pair the dumps with the modules.
PRELUDE = """
import os as _os, sys as _sys, atexit as _atexit
_boot = _sys.modules["_frozen_importlib"]
_load, _events = _boot._load_unlocked, []
def _timed_load(spec):
    _os.getppid(); _events.append("E " + spec.name)
    try:
        return _load(spec)
    finally:
        _os.getppid(); _events.append("X " + spec.name)
_boot._load_unlocked = _timed_load
_atexit.register(lambda: open(_os.environ["LW_START_EVENTS"], "w").write("\\n".join(_events)))
"""


def _totals(path: Path) -> tuple[int, str]:
    """A dump's instruction count and what triggered it."""
    total, trigger = 0, ""
    for line in path.read_text().splitlines():
        if line.startswith("desc: Trigger:"):
            trigger = line
        elif line.startswith("totals:"):
            total = int(line.split()[1])
    return total, trigger


def profile(pythonpath: str | None, home: Path) -> tuple[dict[str, tuple[int, int, int]], int, int]:
    """Per module loaded before the first send(): (inclusive, self, depth) instructions; the
    instructions outside any import; the whole count to the first send()."""
    out = Path(tempfile.mkdtemp(prefix="lw-mods-"))
    try:
        for _ in range(2):  # the first run writes the bytecode
            shutil.rmtree(out)
            out.mkdir()
            with ScriptedServer([[{"type": "text", "text": "hi"}]], model=MODEL) as srv:
                env = child_env(Series("", pythonpath), srv, home)
                env.update(PYTHONHASHSEED="0", LW_START_EVENTS=str(out / "events"))
                p = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", "--dump-before=send",
                                    f"--callgrind-out-file={out}/cg", sys.executable, "-c", PRELUDE + ENTRY,
                                    *cli_args(False)], cwd=home, env=env, capture_output=True, text=True, timeout=900)
            if p.returncode != 0 or not srv.loop_requests:
                raise SystemExit(p.stderr[-3000:])
        events = (out / "events").read_text().split("\n")
        rows: dict[str, tuple[int, int, int]] = {}
        stack: list[list[Any]] = []  # [name, own, children]
        outside = whole = 0
        for k, event in enumerate([*events, ""], start=1):
            count, trigger = _totals(out / f"cg.{k}")
            whole += count
            if stack:
                stack[-1][1] += count
            else:
                outside += count
            if "send" in trigger:  # the first request's bytes: what follows is not start-up
                break
            kind, name = event.split(" ", 1)
            if kind == "E":
                stack.append([name, 0, 0])
            else:
                done, own, children = stack.pop()
                assert done == name, (done, name)
                rows[name] = (own + children, own, len(stack))
                if stack:
                    stack[-1][2] += own + children
        return rows, outside, whole
    finally:
        shutil.rmtree(out, ignore_errors=True)


def area(module: str) -> str:
    """loopwright.X (its subpackage or module) or the library / stdlib's top-level name."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "loopwright" else "(stdlib and libraries)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="a git revision to count side by side")
    ap.add_argument("--min", type=float, default=2.0, help="list modules whose self count is at least this (M)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    tmp = Path(tempfile.mkdtemp(prefix="lw-start-modules-"))
    (tmp / "home").mkdir()
    trees: dict[str, str | None] = {"this tree": str(HERE.parent / "src")}
    if args.before:
        trees = {f"before {args.before}": str(extract_src(args.before, tmp / "before")), **trees}
    got = {label: profile(path, tmp / "home") for label, path in trees.items()}
    labels = list(trees)

    def m(n: float) -> str:
        return f"{n / 1e6:,.1f}"

    lines = [f"`-p` start → first request, callgrind's instructions (M) per module loaded on the way, "
             f"`python bench/bench_start_modules.py{f' --before {args.before}' if args.before else ''}`", "",
             "| | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels),
             "| to the first send() | " + " | ".join(m(got[k][2]) for k in labels) + " |",
             "| outside any import (argv, the run's assembly, the event loop) | "
             + " | ".join(m(got[k][1]) for k in labels) + " |", "",
             "Self counts summed per area (a module's own body: its classes, its constants):", "",
             "| area | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    areas: dict[str, dict[str, int]] = {}
    for k in labels:
        for name, (_, own, _) in got[k][0].items():
            areas.setdefault(area(name), dict.fromkeys(labels, 0))[k] += own
    for name, by in sorted(areas.items(), key=lambda kv: -kv[1][labels[-1]]):
        lines.append(f"| {name} | " + " | ".join(m(by[k]) for k in labels) + " |")
    last = got[labels[-1]][0]
    lines += ["", f"Modules of {labels[-1]} whose self count is ≥ {args.min} M (inclusive in brackets):", "",
              "| module | self | inclusive |" + "".join(f" self, {k} |" for k in labels[:-1]),
              "|---|---:|---:|" + "---:|" * (len(labels) - 1)]
    for name, (inc, own, _) in sorted(last.items(), key=lambda kv: -kv[1][1]):
        if own >= args.min * 1e6:
            before = "".join(f" {m(got[k][0][name][1]) if name in got[k][0] else '—'} |" for k in labels[:-1])
            lines.append(f"| {name} | {m(own)} | ({m(inc)}) |{before}")
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "start_modules.md").write_text(text)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
