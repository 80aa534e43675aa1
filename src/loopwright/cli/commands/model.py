"""Room: cli. Owns /model: the model in force, and switching it for the following calls; may import
the rooms below cli and cli.commands' host and panel.

`/model NAME` takes what `--model` takes (a catalog name or alias, a provider spec such as
`openai:gpt-4o`, `scripted:FILE`); the client resolves it at once (a bad name is said here and
nothing changes), the fallback models of --fallback-model follow it, and the cost of the next
calls is counted at the new model's price.
"""

from __future__ import annotations

from typing import Any

from .host import Command, Host
from .panel import Panel


def model_name(model: Any) -> str:
    """What a model option or object is called."""
    if model is None or isinstance(model, str):
        return model or "(default)"
    return str(getattr(model, "name", type(model).__name__))


async def model(host: Host, arg: str) -> None:
    from ...models.catalog import ALIASES, context_window, price_for

    client = host.client
    if not arg:
        now = model_name(client.model if client.model is not None else client.options.model)
        lines: list[Any] = [f"in force: {now}"]
        if client.options.fallback_model:
            lines.append(f"fallback: {', '.join(client.options.fallback_model)}")
        lines.append("aliases:")
        for alias, full in ALIASES.items():
            p, w = price_for(full), context_window(full)
            price = f"${p.input:g}/${p.output:g} per Mtok in/out" if p else "no price known"
            lines.append(f"  {alias:<8} {full}  ({price}, window {w:,} tokens)" if w else f"  {alias:<8} {full}")
        host.open_panel(Panel("Model", lines, "/model NAME switches (a name, alias or provider:model)"))
        return
    try:
        await client.set_model(arg, source="command")  # PreModelSwitch hooks may refuse (PermissionError)
    except (ValueError, TypeError, OSError) as e:
        host.say(f"  ✗ model not changed: {e}")
        return
    fallback = f" (fallback: {', '.join(client.options.fallback_model)})" if client.options.fallback_model else ""
    host.say(f"  ● model: {model_name(client.model)}{fallback}; the next calls use it")


COMMANDS = [Command("model", "show the model, or switch it for the following calls", model, usage="/model [NAME]")]
