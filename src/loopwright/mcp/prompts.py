"""Room: mcp. Owns MCP servers' prompts as slash commands (`/mcp__<server>__<prompt> args`); may import blocks, threads, mcp.naming, mcp.results.

A server's prompts (listed when it connects) are offered as `/mcp__<server>__<prompt>`, named as
its tools are (naming.py). A run whose prompt is such a command gets the prompt's messages in its
place: the arguments are the words after the command, given to the prompt's arguments in order
(a prompt with one argument takes the whole rest). A command naming no prompt, or missing a
required argument, or a prompt that gives nothing but blank text, leaves the text as it is, with a
warning that says why (blank text blocks are dropped: the Messages API refuses them).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Any

from ..blocks import TextBlock
from ..threads import run_in_worker
from . import naming
from .connection import Connection
from .results import content_blocks


def _named(connections: Sequence[Connection]) -> dict[str, tuple[Connection, Any]]:
    out: dict[str, tuple[Connection, Any]] = {}
    for c in connections:
        if c.status != "connected" or c.part is None or not c.prompts:
            continue
        names = naming.tool_names(c.part, [p.name for p in c.prompts])
        for p in c.prompts:
            out[names[p.name]] = (c, p)
    return out


def commands(connections: Sequence[Connection]) -> list[tuple[str, str]]:
    """(command name without the slash, description) of every connected server's prompts."""
    out = []
    for name, (c, p) in _named(connections).items():
        args = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in p.arguments or [])
        desc = p.description or p.title or f"prompt {p.name} of MCP server {c.name}"
        out.append((name, f"{desc}{f' (arguments: {args})' if args else ''} (MCP)"))
    return out


async def expand(connections: Sequence[Connection], text: str) -> tuple[list[Any] | None, str | None]:
    """The prompt's messages as wire blocks for `/mcp__...` text (see the module docstring)."""
    m = re.match(r"/(mcp__\S+)(?:\s+(.*))?\Z", text.strip(), re.S)
    if m is None:
        return None, None
    command, rest = m.group(1), (m.group(2) or "").strip()
    found = _named(connections).get(command)
    if found is None:
        known = ", ".join(f"/{n}" for n in _named(connections)) or "none"
        return None, f"/{command} is no MCP prompt of a connected server (MCP prompts: {known})"
    conn, prompt = found
    params = list(prompt.arguments or [])
    if len(params) == 1:
        values = [rest] if rest else []
    else:
        try:
            values = shlex.split(rest)
        except ValueError:
            values = rest.split()
    args = {p.name: v for p, v in zip(params, values, strict=False)}
    missing = [p.name for p in params if p.required and p.name not in args]
    if missing:
        return None, f"/{command} needs its argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
    client = conn._usable()

    async def go(timeout: float) -> Any:
        import anyio

        with anyio.fail_after(timeout):
            return await client.get_prompt(prompt.name, args or None)

    result = await conn.request(f"the prompt {prompt.name!r}", go)
    # (a blank text block would make the request one the Messages API refuses: "must contain
    # non-whitespace text")
    # (in a worker thread: an image is decoded, seconds for a big one, mcp.results.checked_output)
    made = await run_in_worker(content_blocks, [msg.content for msg in result.messages])
    blocks = [b for b in made if not isinstance(b, TextBlock) or (b.text and not b.text.isspace())]
    if not blocks:
        return None, f"/{command}: the MCP prompt gave no text; the line is sent as it is"
    return [b.to_wire() for b in blocks], None
