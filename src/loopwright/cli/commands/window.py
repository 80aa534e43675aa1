"""Room: cli. Owns /context: the context window W and what fills it, in tokens (the seed's n_k
made visible), with a bar; may import the rooms below cli and cli.commands' host, panel and mcp.

The parts are estimated as the compactor estimates them (tokens.estimate_tokens, ~4 characters
a token): the system prompt, the built-in tools' definitions, the memory files, the MCP
servers' tool definitions (connected for the count), the conversation's messages (less the
memory they carry), and what is free. The last call's measured prompt size (n_k from the API's
usage) is the status line's while a turn works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..preview import Line
from .host import Command, Host
from .panel import Panel

BAR = 50  # cells
MARKS = {"system prompt": ("⛁", "ansicyan"), "tools": ("⛁", "ansimagenta"), "memory": ("⛁", "ansiyellow"),
         "MCP tools": ("⛁", "ansiblue"), "messages": ("⛁", "ansigreen"), "free": ("⛶", "ansibrightblack")}


async def parts(host: Host) -> tuple[int | None, list[tuple[str, int]]]:
    """(W or None when unknown, [(part, tokens)] without "free")."""
    from ...models.catalog import context_window
    from ...prompts import system_prompt_text
    from ...tokens import estimate_tokens
    from .memory import loaded_memory
    from .model import model_name

    client = host.client
    o = client.options
    cwd = Path(host.cwd()).resolve()
    name = model_name(client.model if client.model is not None else o.model)
    window = o.context_window or context_window(name)
    system = system_prompt_text(o.system_prompt, o.append_system_prompt, cwd, list(o.tools))
    tools = [t.definition() for t in o.tools]
    mem = loaded_memory(host)
    memory = sum(estimate_tokens(f.text) for f in mem.files) if mem is not None else 0
    mcp_tokens = 0
    from .mcp import configured, probe

    configs = configured(host)
    if configs:
        _, by_server = await probe(host, configs)
        mcp_tokens = sum(estimate_tokens(t.definition()) for ts in by_server.values() for t in ts)
    history = client.history or []
    messages = max(0, estimate_tokens(history) - (memory if history else 0))
    return window, [("system prompt", estimate_tokens(system or "")), ("tools", estimate_tokens(tools)),
                    ("memory", memory), ("MCP tools", mcp_tokens), ("messages", messages)]


def bar(window: int, used: list[tuple[str, int]]) -> Line:
    """One row of BAR cells: each part's share of W in its colour, then the free cells."""
    out: Line = []
    taken = 0
    for part, n in used:
        cells = min(BAR - taken, round(BAR * n / window)) if n else 0
        if n and not cells and taken < BAR:
            cells = 1  # a part that is there shows
        mark, style = MARKS[part]
        out.append((style, mark * cells))
        taken += cells
    out.append((MARKS["free"][1], MARKS["free"][0] * max(0, BAR - taken)))
    return [("", "  "), *out]


async def context(host: Host, arg: str) -> None:
    window, used = await parts(host)
    total = sum(n for _, n in used)
    lines: list[Any] = []
    if window:
        lines.append(bar(window, used))
        lines.append(f"{total:,} of {window:,} tokens ({100 * total / window:.1f}%) · W = {window:,}")
    else:
        lines.append(f"{total:,} tokens; the window of this model is unknown (--context-window N sets it)")
    for part, n in [*used, *([("free", max(0, window - total))] if window else [])]:
        mark, style = MARKS[part]
        share = f"{100 * n / window:5.1f}%" if window else ""
        lines.append([("", "  "), (style, mark), ("", f" {part:<14} {n:>9,} tokens {share}")])
    host.open_panel(Panel("Context", lines, "estimates (~4 characters a token); /compact frees messages"))


COMMANDS = [Command("context", "the context window and what fills it, in tokens", context, busy_ok=True)]
