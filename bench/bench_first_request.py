"""Start → first request: a one-call `loopwright -p` against the loopback server.

    .venv/bin/python bench/bench_first_request.py [--runs N] [--before REF] [--json]

Each run starts a fresh `loopwright -p hi --model claude-sonnet-4-5` process (the default
tools, the default system prompt, an Anthropic model pointed at a loopback
`loopwright.testing.ScriptedServer` that answers with one text turn) and measures:

- start → first request: from just before the process is spawned to the server's receipt
  of the request (its `received` stamp, taken when the request's headers and body have
  arrived; the same monotonic clock, loopback, so it is the first request byte to within
  well under a millisecond);
- wall: the whole process, until it exits;
- peak RSS: ru_maxrss from wait4() on the process;
- CPU time: user + system time of the whole process (wait4()), which a busy machine
  inflates much less than wall time (the load average is printed with the table);
- .pyc files are written and used (PYTHONDONTWRITEBYTECODE is unset for the runs, and
  one warm-up run per column is not counted), as for an installed package;
- import time: the sum of `python -X importtime` self times over one extra run, and the
  number of modules imported (both for the whole process).

`--mcp python|node` adds one stdio MCP server (the tests' server written with the official Python
SDK, or the official node filesystem server), which the run opens before its first request.

`--before REF` runs the same measurement on the `src/` of git revision REF (extracted with
`git archive` and put first on PYTHONPATH), interleaved run by run with the working tree's,
so the two columns are measured side by side in one run. Writes
bench/results/first_request.md (and prints it); `--json` prints the figures as JSON instead,
for bench/report.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

from loopwright.testing import ScriptedServer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = str(ROOT / "src")  # this checkout's package, not the venv's install (which may be another tree)
MODEL = "claude-sonnet-4-5"
ENTRY = "import sys; from loopwright.cli import main; sys.exit(main())"
# --stream-json: loopwright as the Agent SDKs start it (a process per session), one user message on stdin
SDK_ARGS = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
SDK_MESSAGE = json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": None,
                          "session_id": ""}) + "\n"


@dataclass
class Series:
    label: str
    pythonpath: str | None  # None: this checkout's src (SRC)
    entry: list[str] = field(default_factory=lambda: ["-c", ENTRY])  # what python runs: loopwright's CLI, or the floor
    first: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    import_ms: float = 0.0
    modules: int = 0


def extract_src(ref: str, into: Path) -> Path:
    """The src/ directory of git revision `ref`, extracted under `into`."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def child_env(s: Series, srv: ScriptedServer, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "LOOPWRIGHT_"))}
    env.update(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", HOME=str(home),
               LOOPWRIGHT_HOME=str(home / ".loopwright"), NO_PROXY="127.0.0.1,localhost")
    for k in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy",
              "PYTHONDONTWRITEBYTECODE"):  # .pyc files are used, as in any installed package
        env.pop(k, None)
    env["PYTHONPATH"] = s.pythonpath or SRC
    return env


PERSIST = False  # --persist: the transcript is written, as a run's default is (else --no-session-persistence)
MCP: str | None = None  # --mcp KIND: one stdio MCP server the run opens before its first request
MCP_SERVERS = {
    # the tests' server, written with the official `mcp` SDK (it imports the SDK too: ~0.5 s of CPU)
    "python": lambda home: {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "mcp_test_server.py")]},
    # the official filesystem server (node), where the tests installed it
    "node": lambda home: {"command": str(ROOT / "tests" / "node" / "node_modules" / ".bin" / "mcp-server-filesystem"),
                          "args": [str(home)]},
}


def cli_args(sdk: bool, home: Path | None = None) -> list[str]:
    mcp = (["--mcp-config", json.dumps({"mcpServers": {MCP: MCP_SERVERS[MCP](home)}})]
           if MCP is not None and home is not None else [])
    return [*(SDK_ARGS if sdk else ["-p", "hi"]), "--model", MODEL, *([] if PERSIST else ["--no-session-persistence"]),
            *mcp]


def one_run(s: Series, home: Path, sdk: bool = False) -> None:
    with ScriptedServer([[{"type": "text", "text": "hi"}]], model=MODEL) as srv:
        cmd = [sys.executable, *s.entry, *cli_args(sdk, home)]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, cwd=home, env=child_env(s, srv, home),
                             stdin=subprocess.PIPE if sdk else subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if sdk and p.stdin:
            p.stdin.write(SDK_MESSAGE.encode())
            p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        err = p.stderr.read().decode(errors="replace") if p.stderr else ""
        if p.stderr:
            p.stderr.close()
        code = os.waitstatus_to_exitcode(status)
        loop = srv.loop_requests
        if code != 0 or not loop:
            raise SystemExit(f"{s.label}: exit {code}, {len(loop)} model requests\n{err[-2000:]}")
        s.first.append(loop[0].received - t0)
        s.wall.append(wall)
        s.rss_kib.append(ru.ru_maxrss)
        s.cpu.append(ru.ru_utime + ru.ru_stime)


def import_profile(s: Series, home: Path, sdk: bool = False) -> None:
    """Sum of -X importtime self times (µs) and the number of modules, over one run."""
    with ScriptedServer([[{"type": "text", "text": "hi"}]], model=MODEL) as srv:
        cmd = [sys.executable, "-X", "importtime", *s.entry, *cli_args(sdk, home)]
        p = subprocess.run(cmd, cwd=home, env=child_env(s, srv, home), capture_output=True, text=True, timeout=120,
                           input=SDK_MESSAGE if sdk else None)
    rows = [m for m in (re.match(r"import time:\s+(\d+) \|\s+\d+ \|", line) for line in p.stderr.splitlines()) if m]
    s.import_ms = sum(int(m.group(1)) for m in rows) / 1000
    s.modules = len(rows)


def bare_python_ms(runs: int, code: str = "pass") -> float:
    """Median wall of `python -c CODE`: how slow this machine is right now, for scale."""
    return 1000 * statistics.median(python_c_seconds(code) for _ in range(runs))


# Issue 29 set the ≤ 100 ms goal where this took ~75 ms (a whole process, to its exit): timed in each
# round beside the runs, it scales the figure to that machine (this VM's speed drifts by ~20 %).
REFERENCE = "import asyncio, json, socket"
REFERENCE_MS = 75.0


def python_c_seconds(code: str) -> float:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.monotonic() - t0


def table(series: list[Series], runs: int, bare_ms: float, sdk: bool = False, reference_ms: float = 0.0) -> str:
    before = next((s for s in series if s.label.startswith("before ")), None)
    floor = next((s for s in series if s.label.startswith("floor")), None)
    what = (f"loopwright {' '.join(SDK_ARGS)} --model {MODEL}` (as the Agent SDKs start it), one user message on "
            "stdin," if sdk else f"loopwright -p hi --model {MODEL}`")
    what = what.replace("`", "" if PERSIST else " --no-session-persistence`", 1)
    if MCP is not None:
        what = what.replace("`", f" --mcp-config <one {MCP} stdio server>`", 1)
    lines = [
        f"One-call `{what} against the loopback server, {runs} interleaved runs "
        f"per column; medians (min in brackets); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, "
        f"where a bare `python -c pass` took {bare_ms:.0f} ms and issue 29's reference `python -c '{REFERENCE}'` "
        f"{reference_ms:.0f} ms ({REFERENCE_MS:.0f} ms where its goal was set). "
        f"`python bench/bench_first_request.py --runs {runs}" + (" --stream-json" if sdk else "")
        + (" --persist" if PERSIST else "")
        + (" --floor" if floor is not None else "")
        + (f" --mcp {MCP}" if MCP is not None else "")
        + (f" --before {before.label.split()[-1]}`" if before is not None else "`"),
        "",
        "| measurement | " + " | ".join(s.label for s in series) + (" | after / before |" if before else " |"),
        "|---|" + "---:|" * len(series) + ("---:|" if before else ""),
    ]

    def row(name: str, vals: list[float], fmt: str, mins: list[float] | None = None) -> str:
        cells = [fmt.format(v) + (f" ({fmt.format(m)})" if mins else "") for v, m in zip(vals, mins or vals, strict=True)]
        ratio = f" | {vals[1] / vals[0]:.2f}×" if before is not None and vals[0] else ""  # [before, this tree, ...]
        return f"| {name} | " + " | ".join(cells) + ratio + " |"

    lines.append(row("start → first request, ms", [1000 * statistics.median(s.first) for s in series], "{:.0f}",
                     [1000 * min(s.first) for s in series]))
    lines.append(row("wall, ms", [1000 * statistics.median(s.wall) for s in series], "{:.0f}",
                     [1000 * min(s.wall) for s in series]))
    lines.append(row("CPU time (user + sys), ms", [1000 * statistics.median(s.cpu) for s in series], "{:.0f}",
                     [1000 * min(s.cpu) for s in series]))
    lines.append(row("peak RSS, MiB", [statistics.median(s.rss_kib) / 1024 for s in series], "{:.1f}"))
    lines.append(row("import time (-X importtime, sum of self), ms", [s.import_ms for s in series], "{:.0f}"))
    lines.append(row("modules imported", [float(s.modules) for s in series], "{:.0f}"))
    tree = next(s for s in series if s.label == "this tree")
    if reference_ms:
        scaled = 1000 * statistics.median(tree.first) * REFERENCE_MS / reference_ms
        lines += ["", f"this tree's start → first request scaled to the machine issue 29's goal was set on "
                      f"(its reference {reference_ms:.0f} → {REFERENCE_MS:.0f} ms): {scaled:.0f} ms"]
    if floor is not None:
        first = 1000 * (statistics.median(tree.first) - statistics.median(floor.first))
        cpu = 1000 * (statistics.median(tree.cpu) - statistics.median(floor.cpu))
        lines += ["", f"this tree − floor: start → first request {first:.0f} ms, CPU {cpu:.0f} ms (the floor: Python, "
                      "asyncio, argparse and h11 making the same request, bench/sdk_floor_cli.py)"]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--before", metavar="REF", help="also measure git revision REF's src/, side by side")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON (for bench/report.py)")
    ap.add_argument("--stream-json", action="store_true", help="start as the Agent SDKs do (stream-json on stdin)")
    ap.add_argument("--persist", action="store_true", help="write the session's transcript (a run's default)")
    ap.add_argument("--floor", action="store_true", help="also the floor: bench/sdk_floor_cli.py making the same request")
    ap.add_argument("--mcp", choices=sorted(MCP_SERVERS), help="with one stdio MCP server (the Python SDK's or node's)")
    args = ap.parse_args()
    global PERSIST, MCP
    PERSIST, MCP = args.persist, args.mcp
    if MCP is not None and args.floor:
        ap.error("--floor has no MCP client: use one of --mcp and --floor")
    tmp = Path(tempfile.mkdtemp(prefix="lw-first-request-"))
    series: list[Series] = []
    if args.before:
        series.append(Series(f"before {args.before}", str(extract_src(args.before, tmp / "before"))))
    series.append(Series("this tree", str(Path(__file__).resolve().parent.parent / "src")))  # (not the venv's install)
    if args.floor:
        series.append(Series("floor (sdk_floor_cli.py)", None, [str(HERE / "sdk_floor_cli.py")]))
    home = tmp / "home"
    home.mkdir()
    for s in series:  # warm the page cache and .pyc files, not counted
        one_run(s, home, args.stream_json)
        s.first.clear(), s.wall.clear(), s.rss_kib.clear(), s.cpu.clear()
    reference: list[float] = []
    for _ in range(args.runs):
        for s in series:
            one_run(s, home, args.stream_json)
        reference.append(python_c_seconds(REFERENCE))  # (in the same rounds: the same machine speed)
    for s in series:
        import_profile(s, home, args.stream_json)
    bare_ms = bare_python_ms(args.runs)
    if args.json:
        out: dict[str, Any] = {s.label: {
            "first_request_ms_median": 1000 * statistics.median(s.first), "first_request_ms_min": 1000 * min(s.first),
            "wall_ms_median": 1000 * statistics.median(s.wall), "cpu_ms_median": 1000 * statistics.median(s.cpu),
            "peak_rss_mib_median": statistics.median(s.rss_kib) / 1024,
            "import_ms": s.import_ms, "modules": s.modules, "runs": args.runs,
            "bare_python_ms_median": bare_ms, "reference_ms_median": 1000 * statistics.median(reference)}
            for s in series}
        print(json.dumps(out, indent=2))
        return 0
    md = table(series, args.runs, bare_ms, args.stream_json, 1000 * statistics.median(reference))
    (HERE / "results").mkdir(exist_ok=True)
    name = ("first_request" + ("_sdk" if args.stream_json else "") + ("_persist" if args.persist else "")
            + (f"_mcp_{MCP}" if MCP is not None else ""))
    (HERE / "results" / f"{name}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
