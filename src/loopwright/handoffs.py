"""Room: built-in tools (on tools.base). Owns Handoff and HandoffSwitch; may import tools.base and
models only.

Handoffs (the OpenAI Agents SDK's): one agent passes the conversation to another, which
continues it. On the seed's loop a handoff is a tool, `transfer_to_<name>`, whose call is a
tool-use turn like any other (counted in T, gated, hooked, its result appended with the call so
Inv holds); its effect is on the next model call: the run's system prompt, tools and model
become the target's (loop/handoff.py switches them after the turn), and the history is kept
whole. Each target may hand on in turn (`handoffs`), back to the first agent too: the Handoff
objects form a graph, built with plain lists (append to `handoffs` to close a cycle).

One handoff per turn: a second transfer call in the same turn gets an error result (the first
wins, as in the Agents SDK). Subagents get no handoffs.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .tools.base import NAME_CHARS, Tool, ToolContext, ToolError

if TYPE_CHECKING:
    from .models.base import Model

EMPTY = {"type": "object", "properties": {}, "additionalProperties": False}


def default_tool_name(name: str) -> str:
    """`transfer_to_<name>`, the name lower-cased with anything outside [a-z0-9_-] as `_`."""
    return "transfer_to_" + "".join(c if c in NAME_CHARS else "_" for c in name.lower().replace(" ", "_"))


@dataclass(eq=False)
class Handoff:
    """An agent the conversation can be handed to: its `system_prompt` (the Agents SDK's
    instructions), `tools` and `model` (None: the model in use goes on) become the run's for
    the calls after the handoff; `handoffs` are the agents it may hand on to. `description`
    tells the model when to hand off (the tool's description)."""

    name: str
    description: str = ""
    system_prompt: str | None = None
    tools: list[Tool] = field(default_factory=list)
    model: str | Model | None = None
    handoffs: list[Handoff] = field(default_factory=list)
    tool_name: str = ""  # default: transfer_to_<name>
    # The Agents SDK's on_handoff: called with the transfer call's RunContext (its deps, usage,
    # messages) when the handoff is asked for, awaited when async; if it raises, the handoff is
    # not taken and the model reads the error as the transfer call's result.
    on_handoff: Callable[[ToolContext[Any]], Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a Handoff needs a name, got {self.name!r}")
        self.tool_name = self.tool_name or default_tool_name(self.name)
        if not (0 < len(self.tool_name) <= 64 and NAME_CHARS.issuperset(self.tool_name)):
            raise ValueError(f"Handoff {self.name!r}: tool_name {self.tool_name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")
        if not isinstance(self.tools, list) or not all(isinstance(t, Tool) for t in self.tools):
            raise TypeError(f"Handoff {self.name!r}: tools must be a list of Tool objects")
        if self.on_handoff is not None and not callable(self.on_handoff):
            raise TypeError(f"Handoff {self.name!r}: on_handoff must be a function of the RunContext")
        if isinstance(self.model, str):
            from .models import check_model_spec  # (a bad model string is refused now, not mid-run)

            check_model_spec(self.model, f"Handoff {self.name!r}: model")


def check_handoffs(value: Any) -> list[Handoff]:
    """AgentOptions.handoffs as a list of Handoffs; anything else is a TypeError."""
    if isinstance(value, Handoff):
        raise TypeError(f"handoffs must be a list of Handoff objects; write handoffs=[{value.name!r} agent]")
    if not isinstance(value, Sequence) or not all(isinstance(h, Handoff) for h in value):
        raise TypeError("handoffs must be a list of loopwright.Handoff objects")
    return list(value)


class HandoffSwitch:
    """One run's handoffs: the transfer tools it makes, the handoff asked for in the running turn
    (`pending`, taken by loop/handoff.py after the turn), and the agent now answering."""

    def __init__(self) -> None:
        self.pending: Handoff | None = None
        self.active: str | None = None  # None: the run's own options
        # Models made from a handoff's model string, by that string (reused when it comes back);
        # the run closes them when it ends (aclose).
        self.made: dict[str, Model] = {}

    async def aclose(self) -> None:
        """Close the models the handoffs made (their connections), whatever the run's ending."""
        from .models.base import close_model

        for model in self.made.values():
            with contextlib.suppress(Exception):
                await close_model(model)
        self.made.clear()

    def tools_for(self, handoffs: Sequence[Handoff]) -> list[Tool]:
        """A transfer tool for each handoff (read-only: it changes nothing outside the run)."""
        return [self._tool(h) for h in handoffs]

    def _tool(self, h: Handoff) -> Tool:
        async def transfer(_: dict[str, Any], ctx: ToolContext[Any]) -> str:  # (async: on the loop, so "the first wins" has no race)
            if self.pending is not None and self.pending is not h:
                raise ToolError(f"already handing off to {self.pending.name} in this turn; {h.name} was not asked")
            if h.on_handoff is not None:
                await _called(h, ctx)
            self.pending = h
            return f"Transferred to {h.name}: it continues the conversation from here."

        description = f"Hand off the conversation to {h.name}." + (f" {h.description}" if h.description else "")
        return Tool(h.tool_name, description, EMPTY, transfer, read_only=True, needs_approval=False)

    def take(self) -> Handoff | None:
        """The handoff the last turn asked for (cleared)."""
        h, self.pending = self.pending, None
        return h


async def _called(h: Handoff, ctx: ToolContext[Any]) -> None:
    """h.on_handoff(ctx), awaited when it returns an awaitable; what it raises is the call's error."""
    assert h.on_handoff is not None
    try:
        value = h.on_handoff(ctx)
        if inspect.isawaitable(value):
            await value
    except Exception as e:  # noqa: BLE001 - the model reads it; the handoff is not taken
        raise ToolError(f"on_handoff of {h.name} raised {type(e).__name__}: {e}; the handoff was not taken") from e


__all__ = ["Handoff", "HandoffSwitch", "check_handoffs", "default_tool_name"]
