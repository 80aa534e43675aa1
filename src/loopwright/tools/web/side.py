"""Room: web tools (on tools.base). Owns the web tools' own model calls; may import models (lazily).

WebFetch answers its prompt with a model, WebSearch searches through one (the Anthropic
server tool): each such call is made here and charged to the run (`RunPorts.charge`: the
one cost formula, the run's budget, Prop 5.4). No call starts once the budget is spent.
The run reaches a tool as the ports `ctx.ports` (None: a tool called outside a run, which has
no model); all the web tools use of them goes through this module.
"""

from __future__ import annotations

from typing import Any

from ...models.base import Model, ModelRequest, ModelResponse, close_model
from ..base import RunPorts, ToolError


class BudgetSpent(Exception):
    """The run's budget is spent: no side call starts."""


def run_settings(run: RunPorts | None) -> Any:
    """The run's settings files, merged (None: none read, or no run)."""
    return run.settings if run is not None else None


def run_model(run: RunPorts | None) -> Model | None:
    """The run's model (None outside a run)."""
    return run.model if run is not None else None


def is_anthropic(model: Any) -> bool:
    """An Anthropic Messages model (the first of a fallback list): one that has server tools."""
    model = (getattr(model, "models", None) or [model])[0]
    return getattr(model, "provider", None) == "Anthropic"


def side_model(run: RunPorts | None, spec: str | None, trusted: bool = True) -> tuple[Model | None, bool]:
    """(the model for a tool's own call, whether it was made here and must be closed).
    `spec` None: the run's model, unless that is a scripted one (its turns play the loop's
    calls only); "": none. An untrusted `spec` (a workspace's setting) is used only when it is
    a model of the run's own provider; else the run's model is."""
    main = run_model(run)
    if run is None or main is None or spec == "":
        return None, False
    if spec is not None and spec != main.name and (trusted or ":" not in spec):  # no "scripted:FILE" from a repo
        try:
            model = run.new_model(spec)
        except ValueError as e:
            raise ToolError(f"smallFastModel {spec!r} cannot be used: {e}") from None
        first = (getattr(main, "models", None) or [main])[0]
        if trusted or type(model) is type(first):
            return model, True
    from ...models.scripted import ScriptedModel

    scripted = isinstance(main, ScriptedModel) or any(isinstance(m, ScriptedModel) for m in getattr(main, "models", []))
    return (None, False) if scripted else (main, False)


async def side_call(run: RunPorts, model: Model, request: ModelRequest) -> ModelResponse:
    """One call of `model`, charged to the run; BudgetSpent when the budget allows no call."""
    from ...models.base import complete

    if run.budget().exhausted:
        raise BudgetSpent
    response = await complete(model, request)
    run.charge(response)
    return response


async def close(model: Model) -> None:
    await close_model(model)
