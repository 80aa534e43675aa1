"""Instructions per turn of the loop, counted by callgrind: a figure a busy machine does not move.

    .venv/bin/python bench/bench_instructions.py [--turns 200 1200] [--before REF] [--start] [--gap] [--paths] [--window]

Each case runs `lw.run` under `valgrind --tool=callgrind` at two turn counts of the zero-latency
scripted model of bench_overhead.py; (instructions at the larger - at the smaller) / the turns
between them is the per-turn cost with the run's start-up cancelled out. Cases: an async no-op
tool (the loop's own cost) and a sync no-op `@lw.tool` handler (with its thread hand-off:
threads.run_in_worker). Every thread's instructions count (callgrind
runs them one at a time). `--before REF` counts the `src/` of git revision REF beside the
working tree's. Bytecode is compiled and used (PYTHONDONTWRITEBYTECODE unset, one warm-up run).
`--start` adds the instructions of a whole one-call `loopwright -p` process against the loopback
server (bench_first_request.py's run: start-up, the request, the answer, the exit), and of its
part up to the first request (to the first `send()` of the request's bytes: callgrind's
`--dump-before=send`), which repeat to a few instructions where wall time moves by ±5 %: what a
start-up change costs or saves (page faults and system calls are not in it). Beside them, for
scale: issue 29's reference `python -c 'import asyncio, json, socket'` (a whole process) and
bench/sdk_floor_cli.py's `-p` (to its first request). `--gap` adds the CLI's cost per turn of one
Read (bench_turn_gap.py's run at 20 and 60 turns, the difference over 40): the instructions behind
the per-turn gap. `--paths` adds the async case's second paths (issue 41: a second path stays only
above 1 % of the CLI's per-turn gap): under a RunControl (the stream and the tools in tasks of
their own, loop/stream.py and loop/turn.py) and through a Relay (a run with a subagent inbox:
the tools in a task, loop/relay.py). `--window` counts each case's turns in one run: callgrind
dumps its counts at the model's calls TURNS[0] and TURNS[1] (the model calls os.getppid() there,
`--dump-before=getppid`), so neither the start-up nor the exit is in the count, and a second
run's start-up (which moves by ~2 M instructions between runs: ~2,000 a turn over 1,000 turns)
is not subtracted; repeated, the async case's figure moves by ~50 instructions a turn. What a
turn pays the garbage collector depends on whether a full collection falls in the window (each
walks the whole heap). Writes bench/results/instructions.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_request import ENTRY, MODEL, SRC, Series, child_env, cli_args, extract_src  # noqa: E402

HERE = Path(__file__).resolve().parent

CODE = """
import sys
sys.path.insert(0, {bench!r})
import bench_overhead as b
import loopwright as lw
tool = b.SYNC_TOOL if {sync!r} else b.TOOL
r = lw.run("go", lw.AgentOptions(model=b.model_for({turns}, {marks!r}), tools=[tool]))
assert r.subtype == "success" and r.num_turns == {turns}, r.subtype
"""

# (--paths) the same run through build_run/run_query, with a RunControl or a subagent inbox
PATH_CODE = """
import asyncio, sys
from dataclasses import replace
sys.path.insert(0, {bench!r})
import bench_overhead as b
import loopwright as lw
from loopwright.assemble import build_run
from loopwright.loop import RunControl, run_query

async def go():
    control = RunControl() if {path!r} == "control" else None
    run = build_run(lw.AgentOptions(model=b.model_for({turns}, {marks!r}), tools=[b.TOOL]), "go", control=control)
    if {path!r} == "relay":
        run.deps = replace(run.deps, inbox=asyncio.Queue())
    async for m in run_query(run, "go"):
        last = m
    assert last.subtype == "success" and last.num_turns == {turns}, last

asyncio.run(go())
"""


def instructions(turns: int, sync: bool, pythonpath: str | None, path: str = "",
                 marks: tuple[int, int] | None = None) -> int:
    """The instructions of a whole run of `turns` turns; with `marks` (a, b), those of its turns a
    to b only (callgrind dumps its counts at the model's calls a and b: --dump-before=getppid)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"  # the same dict and set layouts each run: counts repeat to ~0.1%, not ±2%
    env["PYTHONPATH"] = pythonpath or SRC  # None: this checkout's src, not the venv's install
    code = (PATH_CODE.format(bench=str(HERE), path=path, turns=turns, marks=marks or ()) if path
            else CODE.format(bench=str(HERE), sync=sync, turns=turns, marks=marks or ()))
    out = Path(tempfile.mkdtemp(prefix="lw-cg-"))
    dump = ["--dump-before=getppid"] if marks else []
    p = subprocess.run(["valgrind", "--tool=callgrind", *dump, f"--callgrind-out-file={out}/cg", sys.executable,
                        "-c", code], env=env, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    window = out / "cg.2"  # (cg.1: the start to call a; cg.2: calls a to b; cg: the rest)
    if p.returncode != 0 or not m or (marks and not window.exists()):
        raise SystemExit(p.stderr[-3000:])
    if marks:
        [count] = [int(line.split()[1]) for line in window.read_text().splitlines() if line.startswith("summary:")]
    shutil.rmtree(out)
    return count if marks else int(m.group(1))


def start_instructions(pythonpath: str | None, home: Path, entry: list[str] | None = None) -> tuple[int, int]:
    """A whole one-call `loopwright -p` process under callgrind (the server outside it): its
    instructions, and those before its first `send()` (the first request's bytes; callgrind dumps
    its counts there, and at the exit the rest)."""
    from loopwright.testing import ScriptedServer

    out = Path(tempfile.mkdtemp(prefix="lw-cg-"))
    with ScriptedServer([[{"type": "text", "text": "hi"}]], model=MODEL) as srv:
        env = child_env(Series("", pythonpath), srv, home)
        env["PYTHONHASHSEED"] = "0"
        p = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=send", f"--callgrind-out-file={out}/cg",
                            sys.executable, *(entry or ["-c", ENTRY]), *cli_args(False)], cwd=home, env=env,
                           capture_output=True, text=True, timeout=900)
    m = re.search(r"Collected : (\d+)", p.stderr)
    first = out / "cg.1"  # (the part dumped at the first send; `cg` holds the last part)
    if p.returncode != 0 or not m or not srv.loop_requests or not first.exists():
        raise SystemExit(p.stderr[-3000:])
    [before] = [int(line.split()[1]) for line in first.read_text().splitlines() if line.startswith("totals:")]
    shutil.rmtree(out)
    return int(m.group(1)), before


def gap_instructions(pythonpath: str | None, repo: Path, home: Path, turns: int) -> int:
    """A whole `loopwright -p` process through `turns` turns of one Read (bench_turn_gap.py's
    run) under callgrind: the difference of two turn counts is the CLI's per-turn cost (the
    server, outside it, excluded)."""
    from bench_turn_gap import turns_for

    from loopwright.testing import ScriptedServer

    with ScriptedServer(turns_for(repo, turns), model=MODEL) as srv:
        env = child_env(Series("", pythonpath), srv, home)
        env["PYTHONHASHSEED"] = "0"
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", ENTRY,
                            "-p", "go", "--model", MODEL, "--output-format", "json", "--permission-mode", "acceptEdits",
                            "--allowedTools", "Read"], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m or len(srv.loop_requests) != turns + 1:
        raise SystemExit(p.stderr[-3000:])
    return int(m.group(1))


def reference_instructions() -> int:
    """Issue 29's reference, `python -c 'import asyncio, json, socket'`, a whole process."""
    code = "import asyncio, json, socket"
    subprocess.run([sys.executable, "-c", code], check=True)  # (its bytecode is the interpreter's own)
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONHASHSEED": "0"})
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        raise SystemExit(p.stderr[-3000:])
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, nargs=2, default=[200, 1200])
    ap.add_argument("--before", help="a git revision to count side by side")
    ap.add_argument("--start", action="store_true", help="also a whole one-call `loopwright -p` process")
    ap.add_argument("--gap", action="store_true", help="also the CLI's per-turn cost: `loopwright -p` through "
                                                         "20 and 60 turns of Read")
    ap.add_argument("--paths", action="store_true", help="also the async case under a RunControl and through a Relay")
    ap.add_argument("--window", action="store_true", help="count turns TURNS[0] to TURNS[1] of one run (callgrind "
                                                           "dumps at those model calls), not two runs' difference")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    lo, hi = args.turns
    tmp = Path(tempfile.mkdtemp(prefix="lw-instr-"))
    # (this tree's src/ by path: the venv's editable install may be another worktree's)
    trees: dict[str, str | None] = {"this tree": str(HERE.parent / "src")}
    if args.before:
        trees = {f"before {args.before}": str(extract_src(args.before, tmp / "before")), **trees}
    rows: dict[str, dict[str, float]] = {}
    cases = [(False, "", "async no-op tool"), (True, "", "sync no-op tool")]
    if args.paths:
        cases += [(False, "control", "async no-op tool, under a RunControl"),
                  (False, "relay", "async no-op tool, through a Relay (a subagent inbox)")]
    for sync, second, case in cases:
        for label, path in trees.items():
            instructions(10, sync, path, second)  # writes the bytecode
            if args.window:
                count = instructions(hi, sync, path, second, (lo, hi))
            else:
                count = instructions(hi, sync, path, second) - instructions(lo, sync, path, second)
            rows.setdefault(case, {})[label] = count / (hi - lo)
    scale = ""
    if args.start:
        home = tmp / "home"
        home.mkdir()
        for label, path in trees.items():
            start_instructions(path, home)  # writes the bytecode and the records' cache
            whole, before = start_instructions(path, home)
            rows.setdefault("`-p`: a whole one-call process", {})[label] = whole
            rows.setdefault("`-p`: start → first request", {})[label] = before
        floor = [str(HERE / "sdk_floor_cli.py")]
        start_instructions(None, home, floor)
        scale = (f"For scale: issue 29's reference `python -c 'import asyncio, json, socket'` (a whole process) "
                 f"{reference_instructions():,}; the floor (bench/sdk_floor_cli.py `-p`) to its first request "
                 f"{start_instructions(None, home, floor)[1]:,}.\n")
    if args.gap:
        repo = tmp / "repo"
        shutil.copytree(HERE.parent / "src" / "loopwright" / "demo_project", repo)
        (tmp / "gap-home").mkdir()
        for label, path in trees.items():
            gap_instructions(path, repo, tmp / "gap-home", 2)  # writes the bytecode
            counts = [gap_instructions(path, repo, tmp / "gap-home", n) for n in (20, 60)]
            rows.setdefault("`-p`: a turn of Read (the CLI's per-turn gap; (I(60) - I(20)) / 40)", {})[label] = (
                (counts[1] - counts[0]) / 40)
    how = (f"model calls {lo} to {hi} of one run, / {hi - lo}" if args.window
           else f"(I({hi} turns) - I({lo} turns)) / {hi - lo}")
    lines = [f"Instructions per turn (callgrind, all threads; {how})"
             + ("; for `-p`, the whole process's and its part to the first request." if args.start else "."), "",
             "| case | " + " | ".join(trees) + (" | after / before |" if args.before else " |"),
             "|---|" + "---:|" * (len(trees) + (1 if args.before else 0))]
    for case, by in rows.items():
        cells = [f"{by[k]:,.0f}" for k in trees]
        if args.before:
            first, last = list(trees)
            cells.append(f"{by[last] / by[first]:.2f}×")
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n" + ("\n" + scale if scale else "")
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "instructions.md").write_text(text)


if __name__ == "__main__":
    main()
