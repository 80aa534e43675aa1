"""Room: loop. A handoff taking effect (handoffs.py owns Handoff and the transfer tools): after the
turn whose transfer call asked for it, the run's system prompt, tools and model become the
target's for the next call (a new RunDeps, as the MCP servers' tools joining); h is untouched."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..execute import Executor
from ..messages import SystemMessage
from ..models.base import Model, has_own_cost
from ..models.catalog import price_for
from ..options import model_for
from ..prompts import system_prompt_text
from .state import RunError

if TYPE_CHECKING:
    from ..handoffs import Handoff, HandoffSwitch
    from .run import Run


def apply_handoff(run: Run, switch: HandoffSwitch) -> SystemMessage | None:
    """Switch to the handoff the last turn asked for; a SystemMessage("handoff") saying so, or None."""
    h = switch.take()
    if h is None:
        return None
    d = run.deps
    model = _model(run, h, switch)
    tools = [*h.tools, *switch.tools_for(h.handoffs), *([run.structured.tool] if run.structured is not None else [])]
    by_name = {t.name: t for t in tools}
    if len(by_name) != len(tools):
        names = [t.name for t in tools]
        raise RunError(f"handoff to {h.name}: duplicate tool names {sorted({n for n in names if names.count(n) > 1})}")
    price = price_for(model.name, d.prices or None) or price_for(model.name)
    if d.options.max_budget_usd is not None and price is None and not has_own_cost(model):
        raise RunError(f"handoff to {h.name}: the price of model {model.name!r} is unknown, so the budget could not "
                       "be kept (give it in AgentOptions.prices)")
    ex = d.executor
    run.deps = replace(d, model=model, price=price, tools=by_name, tool_defs=[t.definition() for t in tools],
                       system=system_prompt_text(h.system_prompt, None, d.cwd, tools),
                       executor=Executor(by_name, ex.permissions, ex.hooks, ex.ctx, ex.obs))
    switch.active = h.name
    return SystemMessage("handoff", {"agent": h.name, "model": model.name, "tools": list(by_name)})


def _model(run: Run, h: Handoff, switch: HandoffSwitch) -> Model:
    """The target's model: the one in use (None), the given Model, or one the run's options make
    (once per model string, kept by the string: a Handoff's `model` may be changed in place
    mid-run, and a model kept by the Handoff's id was then made of the old string; the switch
    closes them when the run ends)."""
    if h.model is None:
        return run.deps.model
    if isinstance(h.model, Model):
        return h.model
    made = switch.made.get(h.model)
    if made is None:
        made = switch.made[h.model] = model_for(replace(run.deps.options, model=h.model, fallback_model=None))
    return made
