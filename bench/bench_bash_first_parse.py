"""The first Bash verdict of a process: what bashlex's import costs it, side by side for source
trees (e.g. with and without bashparse's grammar-table cache, issue 41).

    .venv/bin/python bench/bench_bash_first_parse.py [--runs 9] [--before REF] [--src DIR ...] [--thinking 1.0]

Two measurements, each a fresh process per run (bytecode compiled: the trees ran once before
timing), the trees' runs interleaved, medians:

- the gate alone: import the gate, time its first `Permissions.evaluate("Bash", "ls -la")`
  (which imports bashlex and parses) and a second one;
- `loopwright -p` whose model thinks `--thinking` seconds before it answers with
  `Bash("ls -la")`, then ends with text: the harness time of that Bash turn (from the answer
  written to the next request read, bench/measure.py `Served.gaps`): the verdict, running
  `ls`, the next request. A tree that loads bashlex while the model thinks
  (gate/shell/bashlexload.py) has it ready here; the first measurement still pays for it.

Each tree gets its own LOOPWRIGHT_HOME (and HOME), warmed by a first untimed run (a cache, if
the tree keeps one, is warm). Writes bench/results/bash_first_parse.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_request import extract_src  # noqa: E402
from measure import serve_and_run  # noqa: E402

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "src" / "loopwright" / "demo_project"
ENTRY = "import sys; from loopwright.cli import main; sys.exit(main())"
CODE = """
import json, time
from loopwright.gate import Permissions
p = Permissions("default", cwd=".")
t0 = time.perf_counter()
p.evaluate("Bash", {"command": "ls -la"})
t1 = time.perf_counter()
p.evaluate("Bash", {"command": "git status && ls"})
t2 = time.perf_counter()
print(json.dumps({"first_ms": (t1 - t0) * 1000, "next_ms": (t2 - t1) * 1000}))
"""


def one(src: str, home: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": src, "LOOPWRIGHT_HOME": home}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True,
                         cwd=tempfile.gettempdir())
    return dict(json.loads(out.stdout))


def bash_turn(src: str, home: str, repo: Path, thinking: float) -> float:
    """ms of harness time in the Bash turn of a `loopwright -p` whose model thinks `thinking` s first."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "LOOPWRIGHT_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(ANTHROPIC_API_KEY="test", HOME=home, LOOPWRIGHT_HOME=home, NO_PROXY="127.0.0.1,localhost",
               PYTHONPATH=src)
    bash = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls -la"}}
    turns = [{"content": [bash], "delay": thinking}, [{"type": "text", "text": "done"}]]
    proc, served = serve_and_run(
        turns, lambda url: ["env", f"ANTHROPIC_BASE_URL={url}", sys.executable, "-c", ENTRY, "-p", "go", "--model",
                            "claude-sonnet-4-5", "--output-format", "json", "--permission-mode", "acceptEdits",
                            "--allowedTools", "Bash"], cwd=repo, env=env)
    assert proc.returncode == 0 and len(served.loop) == 2, proc.stderr[-2000:]
    return served.gaps()[0] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--before", help="a git revision to measure beside this tree")
    ap.add_argument("--src", action="append", help="a source tree (its src/ directory); default: this tree's")
    ap.add_argument("--thinking", type=float, default=1.0, help="seconds the model thinks before its Bash call")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lw-bench-bash-"))
    srcs = a.src or [str(HERE.parent / "src")]
    if a.before:
        srcs = [str(extract_src(a.before, tmp / "before")), *srcs]
    own = str(HERE.parent / "src")
    label = {s: (f"before {a.before}" if a.before and i == 0 else "this tree" if s == own else s)
             for i, s in enumerate(srcs)}
    homes = {s: tempfile.mkdtemp(prefix="lw-bench-home-", dir=tmp) for s in srcs}
    repo = tmp / "repo"
    shutil.copytree(DEMO, repo)
    for s in srcs:
        one(s, homes[s])  # warm: bytecode, and a tree's cache if it keeps one
        bash_turn(s, homes[s], repo, 0.0)
    runs: dict[str, list[dict[str, float]]] = {s: [] for s in srcs}
    turn: dict[str, list[float]] = {s: [] for s in srcs}
    for _ in range(a.runs):
        for s in srcs:
            runs[s].append(one(s, homes[s]))
            turn[s].append(bash_turn(s, homes[s], repo, a.thinking))
    lines = ["# The first Bash verdict of a process", "",
             f"`bench/bench_bash_first_parse.py --runs {a.runs} --thinking {a.thinking:g}`, median of {a.runs} fresh "
             f"processes per column, interleaved, Python {sys.version.split()[0]}; load average "
             f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.", "",
             "| source tree | gate alone: first verdict (imports bashlex) | gate alone: next verdict | "
             f"-p run: harness time of the first Bash turn, model thinking {a.thinking:g} s |", "|---|---:|---:|---:|"]
    for s in srcs:
        first = statistics.median(r["first_ms"] for r in runs[s])
        nxt = statistics.median(r["next_ms"] for r in runs[s])
        lines.append(f"| `{label[s]}` | {first:.1f} ms | {nxt:.2f} ms | {statistics.median(turn[s]):.1f} ms |")
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results" / "bash_first_parse.md").write_text(text)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
