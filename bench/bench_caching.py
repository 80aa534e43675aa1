"""Billed cost of a 30-turn agent session with and without prompt caching.

The session runs through AnthropicModel (the real `anthropic` SDK) against the
loopback scripted server, whose prefix-cache simulation reports cache reads and
writes from the request's own cache_control breakpoints (minimum cacheable prefix
1024 tokens, 20-block lookback, ~4 characters a token). The cost is the loop's own
accounting (ResultMessage.total_cost_usd) at the named model's list price.

    .venv/bin/python bench/bench_caching.py [--turns 30] [--model claude-sonnet-4-6]

Prints a markdown table and writes it to bench/results/caching.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import loopwright as lw
from loopwright.models.anthropic import AnthropicModel
from loopwright.models.catalog import price_for
from loopwright.testing import ScriptedServer

ROOT = Path(__file__).resolve().parent


def system_prompt() -> str:
    """A coding-agent system prompt of about 3k tokens (fixed text: byte-stable)."""
    rules = [f"Rule {i}: when working on a repository, read the relevant files before editing, keep changes "
             f"minimal, run the tests after each change, and explain what you did in one short paragraph."
             for i in range(60)]
    return "You are a careful software engineer working in a terminal.\n" + "\n".join(rules)


def tools() -> list[lw.Tool]:
    """Eight tools with realistic schemas and descriptions (~3k tokens together)."""
    rng = random.Random(7)
    out: list[lw.Tool] = []
    for name in ("Read", "Write", "Edit", "Bash", "Glob", "Grep", "TodoWrite", "WebFetch"):
        desc = f"{name}: " + " ".join(rng.choice(["file", "path", "content", "pattern", "the", "tool", "returns",
                                                   "lines", "output", "must", "absolute", "use", "when"])
                                      for _ in range(220))
        schema = {"type": "object", "properties": {
            "file_path": {"type": "string", "description": "absolute path"},
            "content": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
            "required": ["file_path"]}
        out.append(lw.Tool(name, desc, schema, lambda x: file_body(x["file_path"]), read_only=True))
    return out


def file_body(path: str) -> str:
    """About 1,000 tokens of deterministic file content per read."""
    rng = random.Random(path)
    return "\n".join(f"{i:4d}  def f_{rng.randrange(10**6)}(x): return x * {rng.randrange(100)}  # {path}"
                     for i in range(80))


def script(turns: int) -> Any:
    def turn(h: list[dict[str, Any]]) -> list[dict[str, Any]]:
        k = sum(1 for m in h if m["role"] == "assistant")
        if k >= turns:
            return [{"type": "text", "text": "Done: all files reviewed."}]
        return [{"type": "text", "text": f"Reading file {k}."},
                {"type": "tool_use", "id": f"toolu_{k:03d}", "name": "Read", "input": {"file_path": f"/src/m{k}.py"}}]
    return turn


def run_session(turns: int, model: str, caching: bool, ttl: str | None = None) -> lw.ResultMessage:
    with ScriptedServer(script(turns), model=model, min_cache_tokens=1024) as srv:
        m = AnthropicModel(model, base_url=srv.url, api_key="bench", prompt_caching=caching, cache_ttl=ttl)
        r = lw.run("Review every module in /src.", lw.AgentOptions(model=m, tools=tools(),
                                                                    system_prompt=system_prompt()))
    if r.subtype != "success":
        raise SystemExit(f"session failed: {r.errors}")
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--model", default="claude-sonnet-4-6")
    ap.add_argument("--out", default=str(ROOT / "results" / "caching.md"))
    args = ap.parse_args(argv)
    price = price_for(args.model)
    if price is None:
        raise SystemExit(f"no price for {args.model}")
    rows = []
    for label, caching, ttl in (("off", False, None), ("on (5m)", True, None), ("on (1h)", True, "1h")):
        t0 = time.perf_counter()
        r = run_session(args.turns, args.model, caching, ttl)
        rows.append((label, r, time.perf_counter() - t0))
    base_cost = rows[0][1].total_cost_usd
    lines = [
        f"# Prompt caching: {args.turns}-turn session, {args.model}",
        "",
        f"Price ($/MTok): input {price.input:g}, output {price.output:g}, cache write (5m) "
        f"{price.cache_write_5m:g}, cache write (1h) {price.cache_write_1h:g}, cache read {price.cache_read:g}. Loopback server with a prefix-cache "
        f"simulation (min 1024 tokens, 20-block lookback, ~4 chars/token); cost = loopwright's own accounting.",
        "",
        "| caching | model calls | tool turns | total input tokens (sum n_k) | uncached input | cache reads "
        "| cache writes | output tokens | cost USD | cost ratio | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r, secs in rows:
        u = r.usage
        lines.append(
            f"| {label} | {r.model_calls} | {r.num_turns} | {u.total_input_tokens:,} "
            f"| {u.input_tokens:,} | {u.cache_read_input_tokens:,} | {u.cache_creation_input_tokens:,} "
            f"| {u.output_tokens:,} | {r.total_cost_usd:.4f} | {r.total_cost_usd / base_cost:.3f} | {secs:.2f} |")
    on = rows[1][1]
    hit = on.usage.cache_read_input_tokens / max(1, on.usage.total_input_tokens)
    lines += ["", f"With caching (5-minute entries), {hit:.1%} of all input tokens were cache reads; "
                  f"the session cost {on.total_cost_usd / base_cost:.1%} of the uncached price."]
    table = "\n".join(lines) + "\n"
    print(table)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
