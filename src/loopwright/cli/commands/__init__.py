"""Room: cli. Owns the REPL's built-in command table (BUILTINS, find) and `/help`; may import the
rooms below cli and the cli.commands modules.

One module per concern: session (/clear /compact /resume /rewind /expand /cost /export), model
(/model), window (/context), permissions (/permissions), mcp (/mcp), agents (/agents),
settings_view (/status /config /output-style /hooks), memory (/memory /init), workspace
(/add-dir /doctor /todos), shell (`!`). Each module lists its commands in
COMMANDS; this table is their union, in /help's order. A command shows what is in force in a
panel under the input box (panel.py: Esc closes it) or says one line in the trace.
"""

from __future__ import annotations

from .host import Command, Host
from .panel import Panel


def _table() -> dict[str, Command]:
    from . import agents, mcp, memory, model, permissions, session, settings_view, window, workspace

    out: dict[str, Command] = {}
    for module in (session, model, window, permissions, mcp, agents, settings_view, memory, workspace):
        for c in module.COMMANDS:
            out[c.name] = c
    return out


async def _help(host: Host, arg: str) -> None:
    from ...commands import find_commands

    lines: list[str] = [f"{c.usage:<22} {c.summary}" for c in BUILTINS.values()]
    lines += [f"{'/exit':<22} quit (also Ctrl-D, or Ctrl-C twice)",
              f"{'!COMMAND':<22} run a shell command; it and its output go with your next prompt"]
    custom = find_commands(host.cwd(), host.base_options.setting_sources or [])
    if custom:
        lines.append("custom commands:")
        lines += [f"/{c.name:<21} {c.description or c.path}" for c in custom.values()]
    lines += ["keys: Enter sends · \\ at the end of a line or Ctrl-J adds a newline · Esc or Ctrl-C interrupts a turn ·",
              "  Ctrl-O expands the tool output · Tab completes a /command · Ctrl-Z suspends (fg resumes) ·",
              "  what you type while the agent works is delivered after the running tool calls finish"]
    host.open_panel(Panel("Commands", lines))


BUILTINS: dict[str, Command] = {"help": Command("help", "the commands and keys", _help, busy_ok=True), **_table()}


def find(name: str) -> Command | None:
    """The built-in command `name` (without its slash), or None."""
    return BUILTINS.get(name)


__all__ = ["BUILTINS", "Command", "Host", "Panel", "find"]
