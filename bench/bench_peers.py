"""loopwright vs other agent harnesses: per-turn overhead, import time, peak RSS.

    .venv/bin/pip install -e ".[bench]"        # the peers: openai-agents, pydantic-ai (slim)
    .venv/bin/python bench/bench_peers.py [--turns 10,100,1000] [--runs N]

Every harness runs in a fresh process (`bench_peers.py --worker HARNESS URL TURNS`)
against the same loopback server (loopwright.testing.ScriptedServer, in this process),
through its own model class: loopwright's Anthropic and OpenAI-compatible providers,
the OpenAI Agents SDK's OpenAIChatCompletionsModel, pydantic-ai's OpenAIChatModel. The
server answers N turns that each call one trivial tool (`noop`, no arguments, returns
"ok"), then a final text; every turn carries its usage, so the server does no cache
simulation.

Per-turn overhead = the harness's time between two model calls, taken from the
server's clock: from the moment the server finished writing answer k to the moment it
had read and parsed request k+1, averaged over the N gaps. It holds everything the
harness does per turn (parse the answer, run the tool, build, serialize and send the
whole next request) and none of the server's own answering time, for every harness
alike. Import time is measured inside the worker around the harness's imports, peak
RSS is ru_maxrss of the worker from wait4().
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from measure import Stat, serve_and_run

HERE = Path(__file__).resolve().parent
USAGE = {"input_tokens": 1, "output_tokens": 1}
FINAL = "done"


@dataclass(frozen=True)
class Harness:
    key: str
    label: str
    dist: str  # the PyPI distribution that has to be installed
    how: str  # which model class talks to the server


HARNESSES = [
    Harness("loopwright", "loopwright", "loopwright", "AnthropicModel → /v1/messages, streamed"),
    Harness("loopwright-openai", "loopwright (OpenAI-compatible)", "loopwright",
            "OpenAICompatModel → /v1/chat/completions, streamed"),
    Harness("openai-agents", "OpenAI Agents SDK", "openai-agents",
            "OpenAIChatCompletionsModel(AsyncOpenAI) → /v1/chat/completions, Runner.run"),
    Harness("pydantic-ai", "pydantic-ai", "pydantic-ai-slim",
            "OpenAIChatModel(OpenAIProvider) → /v1/chat/completions, Agent.run"),
]


def version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def available() -> list[Harness]:
    return [h for h in HARNESSES if version(h.dist)]


# --- the worker: one harness, one run, in a fresh process ---------------------------------

def _loopwright(url: str, turns: int, openai: bool) -> tuple[float, str]:
    t0 = time.perf_counter()
    import loopwright as lw

    tool = lw.Tool("noop", "Does nothing.", {"type": "object", "properties": {}}, lambda x: "ok")
    opts = lw.AgentOptions(model="openai:gpt-4o-mini" if openai else "claude-sonnet-4-5",
                           base_url=url + "/v1" if openai else url, api_key="test", tools=[tool],
                           max_turns=turns + 1)
    imported = time.perf_counter() - t0
    r = lw.run("go", opts)
    return imported, str(r.result)


def _openai_agents(url: str, turns: int) -> tuple[float, str]:
    t0 = time.perf_counter()
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    imported = time.perf_counter() - t0
    set_tracing_disabled(True)  # no trace export to the network

    @function_tool
    def noop() -> str:
        """Does nothing."""
        return "ok"

    model = OpenAIChatCompletionsModel("gpt-4o-mini", openai_client=AsyncOpenAI(base_url=url + "/v1", api_key="test"))
    agent = Agent(name="bench", instructions="You are a benchmark.", model=model, tools=[noop])
    r = Runner.run_sync(agent, "go", max_turns=turns + 1)
    return imported, str(r.final_output)


def _pydantic_ai(url: str, turns: int) -> tuple[float, str]:
    t0 = time.perf_counter()
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    imported = time.perf_counter() - t0
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=url + "/v1", api_key="test"))
    agent = Agent(model, instructions="You are a benchmark.")

    @agent.tool_plain
    def noop() -> str:
        """Does nothing."""
        return "ok"

    r = agent.run_sync("go", usage_limits=UsageLimits(request_limit=None))
    return imported, str(r.output)


WORKERS: dict[str, Callable[[str, int], tuple[float, str]]] = {
    "loopwright": lambda url, n: _loopwright(url, n, openai=False),
    "loopwright-openai": lambda url, n: _loopwright(url, n, openai=True),
    "openai-agents": _openai_agents,
    "pydantic-ai": _pydantic_ai,
}


def worker(key: str, url: str, turns: int) -> None:
    t0 = time.perf_counter()
    imported, out = WORKERS[key](url, turns)
    print(json.dumps({"import_s": imported, "total_s": time.perf_counter() - t0, "output": out}))


# --- the orchestration: server here, harness in a child ------------------------------------

def script(turns: int) -> list[Any]:
    calls = [{"content": [{"type": "tool_use", "id": f"call_{k:05d}", "name": "noop", "input": {}}],
              "stop_reason": "tool_use", "usage": USAGE} for k in range(1, turns + 1)]
    return [*calls, {"content": [{"type": "text", "text": FINAL}], "usage": USAGE}]


@dataclass
class PeerSample:
    harness: str
    turns: int
    ok: bool
    why: str
    import_s: float  # the harness's imports, timed inside the fresh worker process
    first_request_s: float  # process start → first model request at the server (imports, setup, lazy imports)
    wall_s: float  # the whole worker process
    maxrss_kib: int
    per_turn_s: float  # mean harness time between model calls (see the module docstring)
    server_s: float  # mean server time per model call: reported, not counted
    turns_done: int  # tool turns completed (fewer than `turns` when the run was cut at its timeout)


def run_peer(key: str, turns: int, timeout: float = 600.0) -> PeerSample:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "LOOPWRIGHT_"))}
    env["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    proc, served = serve_and_run(script(turns), lambda url: [sys.executable, str(Path(__file__)), "--worker", key,
                                                               url, str(turns)], env=env, timeout=timeout)
    gaps, srv = served.gaps(), served.server_times()
    s = PeerSample(key, turns, False, "", float("nan"), served.first_request_s, proc.wall_s, proc.maxrss_kib,
                   statistics.fmean(gaps) if gaps else float("nan"), statistics.fmean(srv) if srv else float("nan"),
                   len(gaps))
    if proc.timed_out:
        s.why = f"cut at the {timeout:.0f} s timeout after {len(gaps)} of {turns} turns"
        return s
    try:
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        s.import_s = res["import_s"]
    except (ValueError, IndexError, KeyError):
        s.why = f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
        return s
    if proc.returncode != 0:
        s.why = f"exit {proc.returncode}"
    elif res["output"] != FINAL:
        s.why = f"unexpected output {res['output'][:80]!r}"
    elif len(served.loop) != turns + 1 or len(gaps) != turns:
        s.why = f"{len(served.loop)} model calls at the server, {turns + 1} expected"
    else:
        s.ok = True
    return s


def runs_for(turns: int, runs: int) -> int:
    """Fewer runs for the long loops (a 1000-turn run of a slow harness takes a minute)."""
    return runs if turns <= 100 else max(1, runs // 3)


def measure(turn_counts: list[int], runs: int, harnesses: list[Harness], timeout: float,
            progress: Callable[[str], None] = lambda s: None, warm: bool = True) -> list[PeerSample]:
    """All harnesses at each turn count, interleaved run by run (a busy moment hits all alike)."""
    out: list[PeerSample] = []
    for h in harnesses if warm else []:  # warm-up: page cache, .pyc files
        run_peer(h.key, 1, timeout)
    for n in turn_counts:
        for i in range(runs_for(n, runs)):
            for h in harnesses:
                s = run_peer(h.key, n, timeout)
                out.append(s)
                progress(f"{h.key} {n} turns run {i + 1}: {'ok' if s.ok else 'FAILED: ' + s.why}  "
                         f"{s.per_turn_s * 1e3:.2f} ms/turn  {s.wall_s:.1f} s")
    return out


def fmt_ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def measured(samples: list[PeerSample], key: str, n: int) -> list[PeerSample]:
    """The complete runs of `key` at `n` turns, else those cut at their timeout (which still
    measured the turns they reached: `turns_done`)."""
    ss = [s for s in samples if s.harness == key and s.turns == n]
    return [s for s in ss if s.ok] or [s for s in ss if s.turns_done]


def cut_note(ss: list[PeerSample]) -> str:
    """'' for complete runs, else how far the cut runs got."""
    cut = [s for s in ss if not s.ok]
    return f" (cut at {cut[0].turns_done} of {cut[0].turns} turns)" if cut else ""


def rss_turns(samples: list[PeerSample]) -> int:
    """The largest turn count every harness completed (peak RSS of a killed run means nothing)."""
    keys = {s.harness for s in samples}
    full = [n for n in sorted({s.turns for s in samples})
            if all(any(s.ok for s in samples if s.harness == k and s.turns == n) for k in keys)]
    return full[-1] if full else min((s.turns for s in samples), default=0)


def tables(samples: list[PeerSample], harnesses: list[Harness]) -> tuple[str, str]:
    """(per-turn table, import/RSS table), each row with its runs, median and min."""
    turn_counts = sorted({s.turns for s in samples})
    base = {n: Stat.of(s.per_turn_s for s in measured(samples, "loopwright", n)).median for n in turn_counts}
    per = ["| harness | turns | runs ok | median ms/turn | min ms/turn | × loopwright | "
           "server ms/call (not counted) | how |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for h in harnesses:
        for n in turn_counts:
            ss = [s for s in samples if s.harness == h.key and s.turns == n]
            if not ss:
                continue
            ok = [s for s in ss if s.ok]
            use = measured(samples, h.key, n)
            st = Stat.of(s.per_turn_s for s in use)
            note = "" if ok else cut_note(use) if use else f" ({ss[0].why})"
            ratio = st.median / base[n] if base.get(n) and base[n] == base[n] else float("nan")
            per.append(f"| {h.label} | {n:,} | {len(ok)}/{len(ss)} | {fmt_ms(st.median)}{note} | {fmt_ms(st.min)} | "
                       f"{ratio:.1f}× | {fmt_ms(Stat.of(s.server_s for s in use).median)} | {h.how} |")
    top = rss_turns(samples)
    imp = ["| harness | version | runs | median import ms | min import ms | median start → 1st request ms | "
           f"min start → 1st request ms | median peak RSS MiB ({top:,} turns) | min peak RSS MiB | × loopwright RSS |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lw_rss = Stat.of(s.maxrss_kib for s in samples if s.harness == "loopwright" and s.turns == top and s.ok).median
    for h in harnesses:
        ss = [s for s in samples if s.harness == h.key and s.import_s == s.import_s]
        big = [s for s in samples if s.harness == h.key and s.turns == top and s.ok]
        imp_st, rss = Stat.of(s.import_s for s in ss), Stat.of(s.maxrss_kib for s in big)
        first = Stat.of(s.first_request_s for s in ss)
        imp.append(f"| {h.label} | {version(h.dist)} | {imp_st.n} | {imp_st.median * 1000:.0f} | {imp_st.min * 1000:.0f} | "
                   f"{first.median * 1000:.0f} | {first.min * 1000:.0f} | "
                   f"{rss.median / 1024:.1f} | {rss.min / 1024:.1f} | {rss.median / lw_rss:.2f}× |")
    return "\n".join(per), "\n".join(imp)


METHOD = (
    "Each harness runs in a fresh Python process against the same loopback server "
    "(`loopwright.testing.ScriptedServer`, in the bench process), which answers N turns that each "
    "call one trivial tool (`noop`: no arguments, returns \"ok\"), then a final text. "
    "**ms/turn** = the harness's own time between two model calls on the server's clock: from the "
    "server's last byte of answer k to its having read request k+1, less the server's JSON parse of "
    "that request (re-timed), averaged over the N turns. It holds everything the harness does per "
    "turn (parse the answer, run the tool, build, serialize and send the whole next request), for "
    "every harness alike; the server's own time per call is shown beside it and not counted. "
    "**Import** = the harness's imports (as its docs write them) timed inside the fresh worker process; "
    "**start → 1st request** = worker process spawned → its first model request read by the server "
    "(interpreter start, imports, setup, anything imported lazily before the first call). **Peak RSS** = "
    "ru_maxrss of the worker from wait4() (one process; no children)."
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", default="10,100,1000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a run is cut")
    args = ap.parse_args()
    hs = available()
    samples = measure([int(x) for x in args.turns.split(",")], args.runs, hs, args.timeout,
                      lambda s: print(s, file=sys.stderr))
    per, imp = tables(samples, hs)
    text = (f"# loopwright vs other agent harnesses\n\nPython {platform.python_version()}, {os.cpu_count()} CPUs.\n\n"
            f"{METHOD}\n\n{per}\n\n{imp}\n")
    print(text)
    out = HERE / "results" / "peers.md"
    out.write_text(text)
    print(f"written: {out}")
    return 0 if all(s.ok for s in samples) else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(main())
