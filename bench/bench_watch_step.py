"""What the look between steps costs (loop/watch.py: ConfigChange and FileChanged), per step.

    .venv/bin/python bench/bench_watch_step.py [--steps N]

Side by side in one run, on one Run each (built by assemble.build_run, never started): a run that
reads no settings file (the library's default: one attribute read a step), a run reading Claude
Code's and loopwright's user, project and local files (6 stat() calls a step, none changed), and a
run with a FileChanged hook whose SessionStart watchPaths name a directory of 100 files (a stat
each, plus the walk). Time per step is the median of 5 rounds of N steps (time.perf_counter);
the load average is printed with it: on a busy machine a stat() costs more."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def runs(tmp: Path) -> dict[str, Any]:
    import loopwright as lw
    from loopwright.assemble import build_run
    from loopwright.hooks import Hooks

    proj = tmp / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(ls *)"]}}))
    data = tmp / "data"
    data.mkdir()
    for i in range(100):
        (data / f"f{i}.txt").write_text("x")
    hooks = Hooks()
    hooks.on("FileChanged", lambda d: None)
    model = lw.ScriptedModel([[{"type": "text", "text": "x"}]])
    out = {
        "no settings": build_run(lw.AgentOptions(model=model, cwd=proj, tools=[]), "hi"),
        "6 settings files": build_run(lw.AgentOptions(model=model, cwd=proj, tools=[], claude_settings=True,
                                                      setting_sources=["user", "project", "local"]), "hi"),
        "FileChanged, 100 files": build_run(lw.AgentOptions(model=model, cwd=proj, tools=[], hooks=hooks), "hi"),
    }
    out["FileChanged, 100 files"].deps.hooks.state.watch_paths.append(str(data))
    return out


async def per_step(run: Any, steps: int) -> float:
    from loopwright.loop.watch import between_steps, watching

    rounds = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(steps):
            if watching(run):
                async for _m in between_steps(run):
                    pass
        rounds.append((time.perf_counter() - t) / steps)
    return statistics.median(rounds)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        os.environ["HOME"], os.environ["LOOPWRIGHT_HOME"] = d, str(Path(d) / ".loopwright")
        built = runs(Path(d))
        print(f"load average {os.getloadavg()[0]:.1f}; {args.steps} steps x 5 rounds, median\n")
        print("| run | per step |\n|---|---|")
        for name, run in built.items():
            print(f"| {name} | {asyncio.run(per_step(run, args.steps)) * 1e6:.2f} µs |")


if __name__ == "__main__":
    main()
