"""Instructions of named functions in a turn (callgrind, inclusive): where bench_instructions.py's
per-turn figure goes, function by function.

    .venv/bin/python bench/bench_regions.py [--async] [--turns 60] [--before REF] module:qualname ...

e.g. `loopwright.invariant:InvariantChecker.check loopwright.history:frozen_message`. Each function
is wrapped, in its module and in every loopwright module that imported it by name, by a wrapper
that calls os.getuid() on entry and os.getgid() on exit (an async generator's: around each of its
resumptions); callgrind dumps its counts before each of those calls, so a part that ends at the
exit is one call's instructions, the functions it calls (and any other thread meanwhile, such as
a sync tool's worker) included. The interpreter is stripped (callgrind names no C function), so
this is how Python functions get a count. One callgrind run per function, of bench_overhead.py's
run of `--turns` turns (the sync no-op `@lw.tool`, or the async one); the first quarter of the
calls is left out (warm-up). The wrapper's own cost (a wrapped no-op function's) is subtracted.
Printed per function: its calls a turn, the median call, and the mean a turn (the mean holds
the garbage collections that fell in its calls: the median does not).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_request import SRC, extract_src  # noqa: E402

HERE = Path(__file__).resolve().parent

CODE = """
import functools, importlib, inspect, os, sys
sys.path.insert(0, {bench!r})
import bench_overhead as b
import loopwright as lw

def marked(f):
    if inspect.isasyncgenfunction(f):
        @functools.wraps(f)
        async def w(*a, **k):
            os.getuid()
            try:
                async for x in f(*a, **k):
                    os.getgid()
                    yield x
                    os.getuid()
            finally:
                os.getgid()
    elif inspect.iscoroutinefunction(f):
        @functools.wraps(f)
        async def w(*a, **k):
            os.getuid()
            try:
                return await f(*a, **k)
            finally:
                os.getgid()
    else:
        @functools.wraps(f)
        def w(*a, **k):
            os.getuid()
            try:
                return f(*a, **k)
            finally:
                os.getgid()
    return w

def nothing():
    return None

if {calibrate!r}:  # the wrapper's own cost: a wrapped function that does nothing
    g = marked(nothing)
    for _ in range({turns}):
        g()
    sys.exit()
mod, _, name = {target!r}.partition(":")
owner = importlib.import_module(mod)
*path, last = name.split(".")
for p in path:
    owner = getattr(owner, p)
f = getattr(owner, last)
setattr(owner, last, marked(f))
if not path:  # a module-level function: also where it was imported by name
    for m in list(sys.modules.values()):
        if getattr(m, "__name__", "").startswith("loopwright") and getattr(m, last, None) is f:
            setattr(m, last, getattr(owner, last))
tool = b.SYNC_TOOL if {sync!r} else b.TOOL
r = lw.run("go", lw.AgentOptions(model=b.model_for({turns}), tools=[tool]))
assert r.subtype == "success" and r.num_turns == {turns}, r.subtype
"""


def calls(target: str, sync: bool, turns: int, pythonpath: str) -> list[int]:
    """The instructions of each call of `target` in a run of `turns` turns (in order)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPATH"] = pythonpath
    code = CODE.format(bench=str(HERE), target=target, calibrate=target == "calibrate", sync=sync, turns=turns)
    out = Path(tempfile.mkdtemp(prefix="lw-rg-"))
    p = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getuid", "--dump-before=getgid",
                        f"--callgrind-out-file={out}/cg", sys.executable, "-c", code],
                       env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(p.stderr[-3000:])
    parts = []
    for f in out.glob("cg.*"):
        head = f.read_text(errors="replace")[:4000]
        trigger = re.search(r"Trigger: --dump-before=(\w+)", head)
        count = re.search(r"summary: (\d+)", head)
        if trigger and count:
            parts.append((int(f.suffix[1:]), trigger.group(1), int(count.group(1))))
    shutil.rmtree(out)
    return [n for _, trigger, n in sorted(parts) if trigger == "getgid"]  # (a part that ends at an exit)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="+", help="module:qualname, e.g. loopwright.execute:Executor.run")
    ap.add_argument("--turns", type=int, default=60)
    ap.add_argument("--async", dest="is_async", action="store_true", help="the async no-op tool, not the sync one")
    ap.add_argument("--before", help="a git revision whose src/ to count (its functions' names)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    path = str(extract_src(args.before, Path(tempfile.mkdtemp(prefix="lw-rg-src-")))) if args.before else SRC
    sync = not args.is_async
    calls("calibrate", sync, 10, path)  # writes the bytecode
    cal = statistics.median(calls("calibrate", sync, 200, path))
    print(f"{'function':60} {'calls/turn':>10} {'median call':>12} {'mean a turn':>12}")
    for target in args.targets:
        each = calls(target, sync, args.turns, path)
        kept = [n - cal for n in each[len(each) // 4:]]
        if not kept:
            print(f"{target:60} {'not called':>10}")
            continue
        per_turn = statistics.fmean(kept) * len(each) / args.turns
        print(f"{target:60} {len(each) / args.turns:10.2f} {statistics.median(kept):12,.0f} {per_turn:12,.0f}", flush=True)


if __name__ == "__main__":
    main()
