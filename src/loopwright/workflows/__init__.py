"""Room: client / workflows (above assemble). Owns the workflows' public names; may import
assemble and below, never cli.

Workflows (seed §7, Def 7.1): programs with a finite set V of model-call nodes, each
passed at most once per run, so one run makes at most |V| model calls whatever the input
and the model (Prop 7.2 (1)) — unlike the agent loop, which is unbounded without T (Prop 7.2 (2)).

    from loopwright.workflows import Node, chain, route, parallel, evaluator_optimizer

    outline = Node("outline", "Outline an essay on {input}.")
    write = Node("write", "Write the essay from this outline:\\n{input}")
    wf = chain(outline, write)
    wf.max_calls()                      # 2 == |V|, read off the structure
    r = wf.run("tides", model=my_model)  # r.output, r.outputs["outline"], r.total_cost_usd

Building blocks (the patterns of Anthropic's "Building effective agents"):
- `Node`: one tool-less model call (system prompt + a `str.format` template or a function of
  a `Context`). `Agent`: a node that is a whole agent run (`loopwright.query`) with a finite
  `max_turns=T`; it counts as T + 1 calls in the bound (seed Prop 7.2 (3)).
- `chain(...)` (prompt chaining, with `Gate`s between steps), `route(...)` (a router node picks
  one branch), `parallel(...)` / `vote(...)` (sectioning / voting, run concurrently),
  `orchestrator_workers(...)` (at most K subtasks, K fixed in code), `evaluator_optimizer(...)`
  (R rounds unrolled into 2R nodes), and `program(...)` for any other code path over declared nodes.

Every step knows V statically (`nodes()`, `max_calls()`); a run enforces it: a node passed
twice, or a node outside V, raises `WorkflowError` (a bug in the workflow program). Model
failures end the run with a result of subtype `error_during_execution`, keeping the calls made.

The parts: workflows/graph.py (steps, the run, results), workflows/nodes.py (Node, Agent,
Gate), workflows/patterns.py (the patterns and program).
"""

from __future__ import annotations

from .graph import BaseNode, Context, NodeCall, Step, WorkflowError, WorkflowResult
from .nodes import Agent, Gate, Node
from .patterns import (
    ProgramContext,
    approved,
    chain,
    evaluator_optimizer,
    majority,
    orchestrator_workers,
    parallel,
    parse_subtasks,
    program,
    route,
    vote,
)

__all__ = [
    "Agent", "BaseNode", "Context", "Gate", "Node", "NodeCall", "ProgramContext", "Step", "WorkflowError",
    "WorkflowResult", "approved", "chain", "evaluator_optimizer", "majority", "orchestrator_workers", "parallel", "parse_subtasks", "program",
    "route", "vote",
]
