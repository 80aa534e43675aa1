"""Room: mcp. Owns the mcp__<server>__<tool> names; imports nothing of loopwright.

Tool names for MCP tools: `mcp__<server>__<tool>`, valid for the API and never colliding.

The API takes tool names matching `^[a-zA-Z0-9_-]{1,64}$`. Other characters become `_`
(as Claude Code does); a server name also loses runs of `_` (so `mcp__a__b` always means
server `a`, tool `b`, for gate rules). Two servers whose names sanitise to the same part are
an error naming both, never a rename. A name that is too long, or a tool name that would
collide with one already given, is cut and gets a short hash of the original name:
deterministic, so the same servers give the same names (and byte-identical tool lists) on
every run.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
PREFIX = "mcp__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:6]


def server_part(name: str) -> str | None:
    """The `<server>` part, or None when nothing valid is left (the server is then reported)."""
    s = re.sub(r"_{2,}", "_", _BAD.sub("_", name)).strip("_")
    if not s:
        return None
    room = MAX_NAME - len(PREFIX) - 2 - 8  # leave room for `__` and a tool name of 8
    if room < 1:
        return None
    return s if len(s) <= room else f"{s[:room - 7]}_{_hash(name)}"


def unique_server_parts(names: list[str]) -> tuple[dict[str, str | None], dict[str, str]]:
    """(server name -> its `<server>` part (None: invalid), server name -> why it is not used).

    Two servers whose names give the same part are both refused, naming each other: renaming
    one would silently move the user's `mcp__<server>` rules onto the other server."""
    out: dict[str, str | None] = {}
    by_part: dict[str, list[str]] = {}
    for name in sorted(names):
        part = out[name] = server_part(name)
        if part is not None:
            by_part.setdefault(part, []).append(name)
    clashes: dict[str, str] = {}
    for part, group in by_part.items():
        if len(group) > 1:
            for name in group:
                clashes[name] = (f"the servers {' and '.join(repr(n) for n in group)} both become mcp__{part}: "
                                 "rename one (neither is started, so no rule meant for one reaches the other)")
                out[name] = None
    return out, clashes


def clash_lines(names: list[str]) -> list[str]:
    """One line per group of servers whose names sanitise to the same `mcp__<server>__` prefix,
    naming them all: every front end shows it (stderr in -p, the init message's warnings)."""
    groups: dict[str, list[str]] = {}
    for name in sorted(names):
        part = server_part(name)
        if part is not None:
            groups.setdefault(part, []).append(name)
    return [f"MCP servers {' and '.join(repr(n) for n in g)} both become mcp__{part}__: neither is started "
            "(rename one; the other servers still load)" for part, g in groups.items() if len(g) > 1]


def tool_names(server: str, tools: list[str]) -> dict[str, str]:
    """Each MCP tool name -> its full `mcp__<server>__<tool>` name, all distinct."""
    head = f"{PREFIX}{server}__"
    room = MAX_NAME - len(head)
    out: dict[str, str] = {}
    taken: set[str] = set()
    for tool in tools:  # in the server's order: the first keeps the plain name
        t = _BAD.sub("_", tool) or "_"
        full = head + t
        if len(full) > MAX_NAME or full in taken:
            full = head + f"{t[:max(room - 7, 0)]}_{_hash(tool)}"[-room:]
        n = 0
        while full in taken:  # a hash clash: vanishingly rare, still never a duplicate
            n += 1
            full = head + f"{_hash(f'{tool}#{n}')}"
        taken.add(full)
        out[tool] = full
    return out
