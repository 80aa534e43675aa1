"""Subagent overhead: zero-latency scripted model, trivial tool.

1. Per tool-use turn, with and without the Agent tool among the tools (with it, each turn's
   tools run in a task whose subagent messages are relayed live: the cost of that relay).
2. Per Agent call: building the subagent's Run and running a one-call subagent.

    .venv/bin/python bench/bench_agents.py [--quick]
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any

import loopwright as lw
from loopwright.agents import make_agent_tool

TOOL = lw.Tool("noop", "does nothing", {"type": "object", "properties": {}}, lambda x: "ok")
USAGE = {"input_tokens": 1, "output_tokens": 1}


def noop_model(turns: int, tool: str) -> lw.ScriptedModel:
    state = {"k": 0}

    def fn(h: list[dict[str, Any]]) -> dict[str, Any]:
        if h[0]["content"][0]["text"] != "go":  # a subagent: answer at once
            return {"content": [{"type": "text", "text": "sub done"}], "usage": USAGE}
        state["k"] += 1
        if state["k"] > turns:
            return {"content": [{"type": "text", "text": "done"}], "usage": USAGE}
        x = {"description": "d", "prompt": "p"} if tool == "Agent" else {}
        return {"content": [{"type": "tool_use", "id": f"t{state['k']}", "name": tool, "input": x}], "usage": USAGE}

    return lw.ScriptedModel(fn)


def seconds(turns: int, tools: list[lw.Tool], call: str) -> float:
    opts = lw.AgentOptions(model=noop_model(turns, call), tools=tools)
    gc.collect()
    t0 = time.perf_counter()
    r = lw.run("go", opts)
    dt = time.perf_counter() - t0
    assert r.subtype == "success" and r.num_turns == turns, (r.subtype, r.result)
    return dt


def per_turn(turns: int, tools: list[lw.Tool], call: str, reps: int) -> float:
    """Median seconds per turn, without the fixed cost of starting a run."""
    base = statistics.median(seconds(0, tools, call) for _ in range(reps))
    return statistics.median((seconds(turns, tools, call) - base) / turns for _ in range(reps))


def main() -> None:
    quick = "--quick" in sys.argv
    turns, reps = (300, 3) if quick else (2000, 5)
    plain = per_turn(turns, [TOOL], "noop", reps)
    relayed = per_turn(turns, [TOOL, make_agent_tool()], "noop", reps)
    agent = per_turn(turns // 4, [TOOL, make_agent_tool()], "Agent", reps)
    print(f"| measure ({turns} turns, median of {reps}) | µs |")
    print("|---|---:|")
    print(f"| tool-use turn, no Agent tool | {plain * 1e6:.0f} |")
    print(f"| tool-use turn, Agent tool present (relay task) | {relayed * 1e6:.0f} |")
    print(f"| turn with one Agent call (subagent: 1 model call) | {agent * 1e6:.0f} |")


if __name__ == "__main__":
    main()
