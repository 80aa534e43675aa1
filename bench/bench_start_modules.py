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
(side by side in one run). `--classes` adds each `@dataclass` declared on the way (its declaration
bracketed the same way: what CPython 3.11 spends generating and compiling its methods) and whether
the run had made an instance of it before its first send(), from one more run without callgrind
whose child notes each class's first instance (issue 41: what a run could declare later).
Writes bench/results/start_modules.md.
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
# call), and the loads' order is written at exit, to pair the dumps with the modules. With
# --classes, each dataclass declaration too, once dataclasses is loaded.
PRELUDE = """
import os as _os, sys as _sys, atexit as _atexit
_boot = _sys.modules["_frozen_importlib"]
_load, _events = _boot._load_unlocked, []
def _timed_load(spec):
    _os.getppid(); _events.append("E " + spec.name)
    try:
        module = _load(spec)
    finally:
        _os.getppid(); _events.append("X " + spec.name)
    if spec.name == "dataclasses" and _os.environ.get("LW_START_CLASSES"):
        _process = module._process_class
        def _timed_class(cls, *args):
            _os.getppid(); _events.append(f"C {cls.__module__}.{cls.__qualname__}")
            try:
                return _process(cls, *args)
            finally:
                _os.getppid(); _events.append("Y")
        module._process_class = _timed_class
    return module
_boot._load_unlocked = _timed_load
_atexit.register(lambda: open(_os.environ["LW_START_EVENTS"], "w").write("\\n".join(_events)))
"""

# (--classes) Run first in a child outside callgrind: which dataclasses have an instance before the
# first send() (each class's generated __init__ wrapped to note it), written at that send.
USE_PRELUDE = """
import os as _os, socket as _socket, dataclasses as _dc
_made, _sent, _process, _send = set(), [], _dc._process_class, _socket.socket.send
def _noted(cls, *args):
    cls = _process(cls, *args)
    init = cls.__dict__.get("__init__")
    if init is not None:
        name = f"{cls.__module__}.{cls.__qualname__}"
        def __init__(self, *a, **k):
            _made.add(name)
            init(self, *a, **k)
        cls.__init__ = __init__
    return cls
def _first_send(self, *args):
    if not _sent:
        _sent.append(True)
        open(_os.environ["LW_START_MADE"], "w").write("\\n".join(sorted(_made)))
    return _send(self, *args)
_dc._process_class, _socket.socket.send = _noted, _first_send
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


Profile = tuple[dict[str, tuple[int, int, int]], int, int, dict[str, int]]


def profile(pythonpath: str | None, home: Path, classes: bool = False) -> Profile:
    """Per module loaded before the first send(): (inclusive, self, depth) instructions; the
    instructions outside any import; the whole count to the first send(); with `classes`, each
    dataclass declared before it: its declaration's instructions (also in its module's self)."""
    out = Path(tempfile.mkdtemp(prefix="lw-mods-"))
    try:
        for _ in range(2):  # the first run writes the bytecode
            shutil.rmtree(out)
            out.mkdir()
            with ScriptedServer([[{"type": "text", "text": "hi"}]], model=MODEL) as srv:
                env = child_env(Series("", pythonpath), srv, home)
                env.update(PYTHONHASHSEED="0", LW_START_EVENTS=str(out / "events"))
                if classes:
                    env["LW_START_CLASSES"] = "1"
                p = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", "--dump-before=send",
                                    f"--callgrind-out-file={out}/cg", sys.executable, "-c", PRELUDE + ENTRY,
                                    *cli_args(False)], cwd=home, env=env, capture_output=True, text=True, timeout=900)
            if p.returncode != 0 or not srv.loop_requests:
                raise SystemExit(p.stderr[-3000:])
        events = (out / "events").read_text().split("\n")
        rows: dict[str, tuple[int, int, int]] = {}
        declared: dict[str, int] = {}
        stack: list[list[Any]] = []  # [name, own, children]; a class's frame: ["C name", own, children]
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
            kind, _, name = event.partition(" ")
            if kind in ("E", "C"):
                stack.append([name if kind == "E" else event, 0, 0])
            elif kind == "Y":  # a class declared: part of its module's own body
                done, own, children = stack.pop()
                declared[done[2:]] = own + children
                if stack:
                    stack[-1][1] += own + children
                else:  # (a class declared by a function: outside any import)
                    outside += own + children
            else:
                done, own, children = stack.pop()
                assert done == name, (done, name)
                rows[name] = (own + children, own, len(stack))
                if stack:
                    stack[-1][2] += own + children
        return rows, outside, whole, declared
    finally:
        shutil.rmtree(out, ignore_errors=True)


def made_before_send(pythonpath: str | None, home: Path) -> set[str]:
    """The dataclasses a `-p` run has made an instance of before its first send() (one run without
    callgrind, USE_PRELUDE noting each class's first instance)."""
    out = Path(tempfile.mkdtemp(prefix="lw-made-"))
    try:
        with ScriptedServer([[{"type": "text", "text": "hi"}]], model=MODEL) as srv:
            env = child_env(Series("", pythonpath), srv, home)
            env["LW_START_MADE"] = str(out / "made")
            p = subprocess.run([sys.executable, "-c", USE_PRELUDE + ENTRY, *cli_args(False)], cwd=home, env=env,
                               capture_output=True, text=True, timeout=300)
        if p.returncode != 0 or not srv.loop_requests:
            raise SystemExit(p.stderr[-3000:])
        return set((out / "made").read_text().split("\n"))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def classes_table(declared: dict[str, int], made: set[str], label: str) -> list[str]:
    """--classes: the dataclasses declared before the first send(), those the run had made an
    instance of by then and those it had not, counts and instructions; then each class."""
    def m(n: float) -> str:
        return f"{n / 1e6:,.1f}"

    unused = {k: v for k, v in declared.items() if k not in made}
    lines = ["", f"Dataclasses {label} declares before the first send() (their declarations' instructions, "
             "M; also in their modules' self counts):", "",
             "| | classes | instructions |", "|---|---:|---:|",
             f"| declared | {len(declared)} | {m(sum(declared.values()))} |",
             f"| with an instance before the first send() | {len(declared) - len(unused)} | "
             f"{m(sum(declared.values()) - sum(unused.values()))} |",
             f"| without | {len(unused)} | {m(sum(unused.values()))} |", "",
             "Each, and whether the run had made an instance of it before its first send():", "",
             "| class | instructions | an instance |", "|---|---:|---|"]
    lines += [f"| {k} | {m(v)} | {'no' if k in unused else 'yes'} |"
              for k, v in sorted(declared.items(), key=lambda kv: -kv[1])]
    return lines


def area(module: str) -> str:
    """loopwright.X (its subpackage or module) or the library / stdlib's top-level name."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "loopwright" else "(stdlib and libraries)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="a git revision to count side by side")
    ap.add_argument("--min", type=float, default=2.0, help="list modules whose self count is at least this (M)")
    ap.add_argument("--classes", action="store_true", help="also each dataclass declared on the way, and whether "
                                                           "the run made one before its first send()")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    tmp = Path(tempfile.mkdtemp(prefix="lw-start-modules-"))
    (tmp / "home").mkdir()
    trees: dict[str, str | None] = {"this tree": str(HERE.parent / "src")}
    if args.before:
        trees = {f"before {args.before}": str(extract_src(args.before, tmp / "before")), **trees}
    got = {label: profile(path, tmp / "home", args.classes) for label, path in trees.items()}
    labels = list(trees)

    def m(n: float) -> str:
        return f"{n / 1e6:,.1f}"

    lines = [f"`-p` start → first request, callgrind's instructions (M) per module loaded on the way, "
             f"`python bench/bench_start_modules.py{f' --before {args.before}' if args.before else ''}"
             f"{' --classes' if args.classes else ''}`" + (" (each class's declaration bracketed too: a few thousand "
                                                           "instructions a class)" if args.classes else ""), "",
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
    if args.classes:
        lines += classes_table(got[labels[-1]][3], made_before_send(trees[labels[-1]], tmp / "home"), labels[-1])
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "start_modules.md").write_text(text)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
