"""One benchmark command, one report: loopwright against every peer, side by side in one run.

    .venv/bin/pip install -e ".[bench]"         # the Python peers, matplotlib, psutil
    (cd tests/node && npm install)               # Claude Code (pinned)
    .venv/bin/python bench/report.py             # the full report: ~10 min on 2 cores
    .venv/bin/python bench/report.py --quick     # a quick pass: 1 run each, short loops

Writes bench/results/report.md and bench/results/report.png, and replaces the benchmarks
page's block (docs/benchmarks.md, between `<!-- bench-report:begin -->` and
`<!-- bench-report:end -->`; the chart copied to docs/img/bench-report.png) unless --no-docs. Two parts, every harness in fresh processes against the same loopback
server (loopwright.testing.ScriptedServer, offline):

1. loopwright vs Claude Code (bench_vs_claude_code.py): the fix-the-test task, wall time,
   start → first model request and peak RSS; then a loop of N Read calls (per-turn cost).
2. loopwright vs the OpenAI Agents SDK and pydantic-ai (bench_peers.py): harness time per
   turn at 10, 100 and 1000 turns of one trivial tool, import time, start → first request,
   peak RSS. Peers that are not installed are left out, with a note.

Runs are interleaved harness by harness, so a busy moment of the machine hits all alike:
compare ratios within one report, not figures across machines.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bench_peers as peers
import bench_vs_claude_code as vscc
from measure import Stat, have_psutil

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEGIN, END = "<!-- bench-report:begin -->", "<!-- bench-report:end -->"
PAGE = ROOT / "docs" / "benchmarks.md"  # the documentation site's benchmarks page holds the block
PAGE_CHART = ROOT / "docs" / "img" / "bench-report.png"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- part 1: loopwright vs Claude Code ------------------------------------------------------

@dataclass
class CCResults:
    claude: str | None  # Claude Code's version, or None when it did not run
    why_not: str = ""
    runs: dict[tuple[str, str], list[vscc.Sample]] = field(default_factory=dict)  # (task, harness) -> samples

    def ok(self, task: str, harness: str) -> list[vscc.Sample]:
        ss = self.runs.get((task, harness), [])
        return [s for s in ss if s.ok]


def run_claude_part(runs: int, loop_calls: int, warm: bool, reference: bool) -> CCResults:
    version = vscc.claude_version()
    res = CCResults(version.split()[0] if version and "(Claude Code)" in version else None)
    if res.claude is None:
        res.why_not = version or f"not installed ({vscc.CLAUDE} is missing: `cd tests/node && npm install`)"
    work = Path(tempfile.mkdtemp(prefix="lw-report-"))
    repo, home = work / "repo", work / "home"
    home.mkdir()
    harnesses = ["loopwright", *(["claude"] if res.claude else [])]
    tasks = [(vscc.FIX, [*harnesses, *(["loopwright-scripted"] if reference else [])]),
             (vscc.loop_task(loop_calls), harnesses)]
    try:
        for task, hs in tasks:
            if warm:  # page cache, .pyc files, Claude Code's first-run config
                for h in hs:
                    vscc.run_one(h, repo, home, task)
            for i in range(runs):
                for h in hs:
                    s = vscc.run_one(h, repo, home, task)
                    res.runs.setdefault((task.name, h), []).append(s)
                    log(f"{task.name} {h} run {i + 1}: {'ok' if s.ok else 'FAILED: ' + s.why}  "
                        f"{s.wall_s * 1000:.0f} ms  {s.per_turn_s * 1000:.1f} ms/turn")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


# --- rendering --------------------------------------------------------------------------------

def ms(x: float) -> str:
    return "—" if x != x else peers.fmt_ms(x)


def mib(kib: float) -> str:
    return "—" if kib != kib else f"{kib / 1024:.0f}"


def ratio(a: float, b: float) -> str:
    return "—" if not (a == a and b == b and b) else f"{a / b:.2f}×"


def stat_of(samples: list[vscc.Sample], get: Callable[[vscc.Sample], float | int | None]) -> Stat:
    return Stat.of(v for s in samples if (v := get(s)) is not None and v == v)


def rss_of(s: vscc.Sample) -> float:
    """The whole process tree's sampled peak where psutil is there, else ru_maxrss."""
    return float(s.tree_peak_kib if s.tree_peak_kib is not None else s.maxrss_kib)


def claude_tables(cc: CCResults, loop_name: str) -> tuple[list[str], str]:
    """(headline rows, detail table)."""
    fix_lw, fix_cc = cc.ok("fix-the-test", "loopwright"), cc.ok("fix-the-test", "claude")
    loop_lw, loop_cc = cc.ok(loop_name, "loopwright"), cc.ok(loop_name, "claude")
    rss_how = "whole process tree, sampled" if have_psutil() else "ru_maxrss"
    metrics: list[tuple[str, list[vscc.Sample], list[vscc.Sample], Callable[[vscc.Sample], float], str, str]] = [
        ("fix-the-test wall", fix_lw, fix_cc, lambda s: s.wall_s, "ms", "≤ 0.5×"),
        ("fix-the-test start → 1st model request", fix_lw, fix_cc, lambda s: s.first_request_s, "ms", "< 300 ms"),
        (f"fix-the-test peak RSS ({rss_how})", fix_lw, fix_cc, rss_of, "MiB", "≤ 0.25×"),
        (f"{loop_name}: harness time per turn", loop_lw, loop_cc, lambda s: s.per_turn_s, "ms", ""),
        (f"{loop_name}: wall", loop_lw, loop_cc, lambda s: s.wall_s, "ms", ""),
    ]
    head: list[str] = []
    for name, a, b, get, unit, goal in metrics:
        sa, sb = stat_of(a, get), stat_of(b, get)
        f = mib if unit == "MiB" else ms
        head.append(f"| {name} | {f(sa.median)} {unit} | {f(sb.median)} {unit} | **{ratio(sa.median, sb.median)}** | "
                    f"{goal} | {sa.n} / {sb.n} |")
    rows = ["| task | harness | runs ok | median wall ms | min wall ms | median start → 1st request ms | "
            "min start → 1st request ms | median ms/turn | min ms/turn | median peak RSS MiB (tree) | "
            "median ru_maxrss MiB | model calls | other requests |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    labels = {"loopwright": "loopwright -p (AnthropicModel)",
              "claude": f"Claude Code {cc.claude} (npm)",
              "loopwright-scripted": "reference: loopwright -p --model scripted: (no HTTP)"}
    for (task, h), ss in cc.runs.items():
        ok = [s for s in ss if s.ok] or ss
        served = h != "loopwright-scripted"
        wall, first = stat_of(ok, lambda s: s.wall_s), stat_of(ok, lambda s: s.first_request_s)
        turn, tree = stat_of(ok, lambda s: s.per_turn_s), stat_of(ok, lambda s: s.tree_peak_kib)
        side = sorted({x for s in ok for x in s.side})
        rows.append(f"| {task} | {labels[h]} | {sum(s.ok for s in ss)}/{len(ss)} | {wall.median * 1000:.0f} | "
                    f"{wall.min * 1000:.0f} | {ms(first.median) if served else '—'} | "
                    f"{ms(first.min) if served else '—'} | {ms(turn.median)} | {ms(turn.min)} | {mib(tree.median)} | "
                    f"{mib(stat_of(ok, lambda s: s.maxrss_kib).median)} | "
                    f"{statistics.median(s.loop_calls for s in ok):g} | {', '.join(side) or 'none'} |")
    return head, "\n".join(rows)


CC_METHOD = (
    "Both harnesses run headless (`-p --output-format json --model claude-sonnet-4-5 --permission-mode "
    "acceptEdits --allowedTools \"Bash Read Edit\"`; Claude Code refuses bypassPermissions as root) in a "
    "fresh git repo, with ANTHROPIC_BASE_URL at the loopback server, ANTHROPIC_API_KEY=test, "
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 and a bench-local HOME. **fix-the-test** = seed Example "
    "4.3's four model turns (Bash runs the tests → two Reads → Edit + Bash → final text); a run counts "
    "only if the harness reports success with the scripted final text, the tests pass afterwards and the "
    "server saw exactly the scripted model calls. **loop** = N turns that each Read one small file, then "
    "the final text. **Wall** = spawn to exit. **start → 1st request** = spawn to the first model request "
    "read by the server. **ms/turn** = the harness's time between two model calls on the server's clock "
    "(the server's own answering time and JSON parse excluded), averaged over the run's turns. **Peak RSS "
    "(tree)** = the largest sum of resident sets of the harness and all its child processes, sampled every "
    "10 ms with psutil; **ru_maxrss** = wait4()'s exact peak of the largest single process."
)


def headline_peers(samples: list[peers.PeerSample], hs: list[peers.Harness]) -> list[str]:
    """loopwright (its default provider) against each other library: per turn at each turn
    count (runs cut at their timeout say how far they got), start → first request, peak RSS
    at the largest turn count every harness completed."""
    rows = []
    top = peers.rss_turns(samples)

    def st(key: str, get: Callable[[peers.PeerSample], float], n: int | None = None) -> Stat:
        return Stat.of(v for s in samples if s.harness == key and (n is None or s.turns == n) and s.ok
                       and (v := get(s)) == v)

    for h in hs:
        if h.key.startswith("loopwright"):
            continue
        for n in sorted({s.turns for s in samples}):
            la, lb = peers.measured(samples, "loopwright", n), peers.measured(samples, h.key, n)
            a, b = Stat.of(s.per_turn_s for s in la), Stat.of(s.per_turn_s for s in lb)
            rows.append(f"| vs {h.label}: harness time per turn, {n:,} turns | {ms(a.median)} ms{peers.cut_note(la)} | "
                        f"{ms(b.median)} ms{peers.cut_note(lb)} | **{ratio(a.median, b.median)}** | | {a.n} / {b.n} |")
        a, b = st("loopwright", lambda s: s.first_request_s), st(h.key, lambda s: s.first_request_s)
        rows.append(f"| vs {h.label}: start → 1st request | {ms(a.median)} ms | {ms(b.median)} ms | "
                    f"**{ratio(a.median, b.median)}** | | {a.n} / {b.n} |")
        a, b = st("loopwright", lambda s: s.maxrss_kib, top), st(h.key, lambda s: s.maxrss_kib, top)
        rows.append(f"| vs {h.label}: peak RSS ({top:,} turns) | {mib(a.median)} MiB | {mib(b.median)} MiB | "
                    f"**{ratio(a.median, b.median)}** | | {a.n} / {b.n} |")
    return rows


def chart(path: Path, cc: CCResults | None, loop_name: str, samples: list[peers.PeerSample],
          hs: list[peers.Harness]) -> str | None:
    """Write the PNG; returns why not when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install -e '.[bench]'): no chart"
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    for h in hs:
        pts = sorted({s.turns for s in samples if s.harness == h.key})
        ys = [Stat.of(s.per_turn_s for s in peers.measured(samples, h.key, n)).median * 1000 for n in pts]
        ax.plot(pts, ys, marker="o", label=h.label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    turn_counts = sorted({s.turns for s in samples})
    ax.set_xticks(turn_counts, [f"{n:,}" for n in turn_counts])
    ax.set_xlabel("tool turns in the run")
    ax.set_ylabel("harness ms per turn (median)")
    ax.set_title("Per-turn overhead, same loopback server")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax = axes[1]
    if cc is not None and cc.claude:
        names = ["fix-the-test wall", "start → 1st request", "peak RSS (tree)", f"{loop_name}\nms/turn"]
        gets: list[Callable[[vscc.Sample], float]] = [lambda s: s.wall_s, lambda s: s.first_request_s, rss_of,
                                                      lambda s: s.per_turn_s]
        tasks = ["fix-the-test", "fix-the-test", "fix-the-test", loop_name]
        vals = []
        for get, task in zip(gets, tasks, strict=True):
            a = stat_of(cc.ok(task, "loopwright"), get).median
            b = stat_of(cc.ok(task, "claude"), get).median
            vals.append(a / b if a == a and b == b and b else float("nan"))
        ax.bar(names, vals, color=["#4c72b0" if v <= 1 else "#c44e52" for v in vals])
        ax.axhline(1.0, color="black", linewidth=1)
        for i, goal in ((0, 0.5), (2, 0.25)):  # issue 12's targets: wall ≤ 0.5×, peak RSS ≤ 0.25×
            ax.hlines(goal, i - 0.4, i + 0.4, colors="black", linestyles="dashed")
            ax.text(i + 0.42, goal, "goal", va="center", fontsize=7)
        for i, v in enumerate(vals):
            ax.text(i, v, f"{v:.2f}×", ha="center", va="bottom")
        ax.set_ylabel("loopwright ÷ Claude Code (median; < 1 is better)")
        ax.set_title(f"loopwright vs Claude Code {cc.claude}")
        ax.tick_params(axis="x", labelsize=8)
    else:
        ax.text(0.5, 0.5, "Claude Code did not run", ha="center", va="center")
        ax.set_axis_off()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def loop_alone(turn_counts: list[int], runs: int) -> str:
    """Reference: loopwright's loop alone (bench_overhead.py: in-process ScriptedModel, no HTTP,
    no provider), per turn after the fixed start of a run, to show what the transport adds."""
    import bench_overhead

    bench_overhead.run_seconds(50)  # warm up imports and caches
    startup = statistics.median(bench_overhead.run_seconds(0) for _ in range(10))
    rows = ["| turns | runs | median µs/turn | min µs/turn |", "|---:|---:|---:|---:|"]
    for n in turn_counts:
        st = Stat.of(bench_overhead.loopwright_run(n, startup) for _ in range(max(runs, 5)))  # cheap; noisy at 10
        rows.append(f"| {n:,} | {st.n} | {st.median * 1e6:.0f} | {st.min * 1e6:.0f} |")
    return ("Reference, the loop alone: loopwright with its in-process ScriptedModel and the same trivial tool, "
            "async (a sync handler adds its worker-thread hand-off: see `bench/bench_overhead.py`; no HTTP, no "
            "provider), per turn after the fixed start of a run. The "
            "difference to the rows above is the provider path (request building, HTTP, SSE parsing).\n\n"
            + "\n".join(rows))


def replace_block(text: str, block: str) -> str:
    """Put `block` between the page's markers (the markers stay, so a rerun replaces it)."""
    pat = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if len(pat.findall(text)) != 1:
        raise ValueError(f"the page must hold exactly one {BEGIN} ... {END} block")
    return pat.sub(lambda _: f"{BEGIN}\n{block.strip()}\n{END}", text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 run each, no warm-up, 3-call loop, 3 and 30 turns")
    ap.add_argument("--runs", type=int, help="measured runs per harness for Claude Code's tasks (default 5)")
    ap.add_argument("--loop-calls", type=int, help="tool calls in the loop task (default 50)")
    ap.add_argument("--turns", help="turn counts for the peers, comma-separated (default 10,100,1000)")
    ap.add_argument("--peer-runs", type=int, help="runs per peer and turn count (default 3; a third of it past "
                    "100 turns)")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds before a peer run is cut (default 90)")
    ap.add_argument("--only", choices=["claude", "peers"], help="run one part only")
    ap.add_argument("--out", type=Path, default=HERE / "results", help="where report.md and report.png go")
    ap.add_argument("--no-docs", "--no-readme", dest="no_docs", action="store_true",
                    help="leave docs/benchmarks.md alone")
    args = ap.parse_args(argv)
    q = args.quick
    runs = args.runs or (1 if q else 5)
    loop_calls = args.loop_calls or (3 if q else 50)
    turns = [int(x) for x in (args.turns or ("3,30" if q else "10,100,1000")).split(",")]
    peer_runs = args.peer_runs or (1 if q else 3)
    t_start = time.perf_counter()
    load0 = os.getloadavg()[0]
    from loopwright import __version__

    cc = run_claude_part(runs, loop_calls, warm=not q, reference=not q) if args.only != "peers" else None
    hs = peers.available() if args.only != "claude" else []
    missing = [h for h in peers.HARNESSES if h not in hs] if args.only != "claude" else []
    samples: list[peers.PeerSample] = []
    if hs:
        samples = peers.measure(turns, peer_runs, hs, args.timeout, log, warm=not q)
    elapsed = time.perf_counter() - t_start
    loop_name = vscc.loop_task(loop_calls).name

    args.out.mkdir(parents=True, exist_ok=True)
    png = args.out / "report.png"
    no_chart = chart(png, cc, loop_name, samples, hs) if (cc or samples) else "nothing ran"
    md: list[str] = ["# loopwright benchmark report", ""]
    md.append(f"`python bench/report.py{' --quick' if q else ''}`: loopwright {__version__}, Python "
              f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; load average "
              f"{load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {elapsed:.0f} s in all. Every "
              "figure comes from this one run, harnesses interleaved run by run: compare ratios within it.")
    md.append("")
    head = ["| measurement | loopwright | peer | loopwright ÷ peer | goal | runs (lw / peer) |",
            "|---|---:|---:|---:|---|---|"]
    cc_detail = ""
    if cc is not None:
        if cc.claude:
            rows, cc_detail = claude_tables(cc, loop_name)
            head += [r.replace("| ", f"| vs Claude Code {cc.claude}: ", 1) for r in rows]
        else:
            _, cc_detail = claude_tables(cc, loop_name)
    head += headline_peers(samples, hs)
    md += ["## Headline: ratios", "", *head, ""]
    if no_chart is None:
        md += [f"![per-turn overhead and loopwright ÷ Claude Code]({png.name})", ""]
    else:
        md += [f"(No chart: {no_chart}.)", ""]
    if cc is not None:
        md += ["## loopwright vs Claude Code", "", CC_METHOD, "", cc_detail, ""]
        if not cc.claude:
            md += [f"Claude Code did not run: {cc.why_not}.", ""]
    if args.only != "claude":
        md += ["## loopwright vs the OpenAI Agents SDK and pydantic-ai", "", peers.METHOD, ""]
        if samples:
            per, imp = peers.tables(samples, hs)
            md += [per, "", imp, ""]
        md += [loop_alone(turns, peer_runs), ""]
        if missing:
            md += ["Not installed, so not measured: " + ", ".join(f"{h.label} (`{h.dist}`)" for h in missing)
                   + " — `pip install -e '.[bench]'`.", ""]
    text = "\n".join(md)
    (args.out / "report.md").write_text(text)
    log(f"written: {args.out / 'report.md'}" + ("" if no_chart else f", {png}"))
    if not args.no_docs:
        chart_here = no_chart is None and args.out == HERE / "results"
        if chart_here:
            PAGE_CHART.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(png, PAGE_CHART)
        block = "\n".join([
            f"From `python bench/report.py` (full report with methods and every row: "
            f"`bench/results/report.md`); {os.cpu_count()} CPUs, load average "
            f"{load0:.1f}, one run, harnesses interleaved.", "", *head, "",
            *([f"![benchmark chart](img/{PAGE_CHART.name})"] if chart_here else [])])
        PAGE.write_text(replace_block(PAGE.read_text(), block))
        log(f"refreshed: {PAGE}")
    failed = [k for k, ss in (cc.runs.items() if cc else []) if not any(s.ok for s in ss)]
    failed += sorted({s.harness for s in samples if not s.ok and not s.turns_done})
    if failed:
        log(f"runs failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
