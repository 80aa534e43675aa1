"""Room: client / workflows (above assemble). Owns a workflow's step graph and its run: V and the
bound read off the structure, the runtime that enforces seed Def 7.1 (each node at most once, only
nodes of V), what a run returns; may import assemble and below, never cli."""

from __future__ import annotations

import asyncio
import math
import string
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ..models.base import Model
from ..models.catalog import call_cost, price_for
from ..telemetry import annotate, span
from ..usage import CallUsage, Price, Usage

if TYPE_CHECKING:
    from ..messages import ResultMessage


class WorkflowError(Exception):
    """A bug in the workflow program: a node passed twice in one run, a node outside the
    workflow's node set, an unknown template field, or a structure that could pass a node twice."""


class NodeFailed(Exception):
    """A node could not produce an output (model error, agent error, unroutable answer)."""


class GateStopped(Exception):
    def __init__(self, gate: str, message: str, text: str) -> None:
        super().__init__(message)
        self.gate, self.text = gate, text


@dataclass(frozen=True, slots=True)
class Context:
    """What a node's prompt is built from.

    `input`: this node's input (the previous step's output in a chain, the subtask for a worker,
    the draft for an evaluator); `task`: the whole run's input; `outputs`: outputs of the nodes
    passed so far, by name; `vars`: extras a combinator passes (`branches` to a router,
    `max_workers` to an orchestrator, `request` and `subtask_index` to workers, `request`,
    `draft`, `feedback` and `round` in evaluator_optimizer)."""

    input: str
    task: str
    outputs: Mapping[str, str]
    vars: Mapping[str, Any]

    def fields(self) -> dict[str, Any]:
        return {**self.outputs, **self.vars, "input": self.input, "task": self.task}


Prompt: TypeAlias = str | Callable[[Context], str]


class _Fields(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        raise WorkflowError(
            f"prompt template field {{{key}}} is unknown here; known fields: {', '.join(sorted(self))} "
            "(node outputs become fields once their node has run; write {{ and }} for literal braces)"
        )


def render(prompt: Prompt, ctx: Context) -> str:
    if callable(prompt):
        return str(prompt(ctx))
    return string.Formatter().vformat(prompt, (), _Fields(ctx.fields()))


@dataclass(slots=True)
class NodeCall:
    """One node passed: its prompt, output and the model calls it made (one for a `Node`,
    up to T + 1 for an `Agent`)."""

    node: str
    prompt: str
    output: str
    calls: list[CallUsage]
    stop_reason: str | None
    result: ResultMessage | None = None  # the agent run's result, for Agent nodes
    # calls made inside an Agent node that are not steps of its loop: its subagents' calls
    nested_calls: list[CallUsage] = field(default_factory=list)

    @property
    def cost_usd(self) -> float:
        """The node's whole cost: for an Agent node the loop's own total, which also covers
        its subagents' and context-compaction calls."""
        if self.result is not None:
            return self.result.total_cost_usd
        return math.fsum(c.cost_usd for c in self.calls)


WorkflowSubtype: TypeAlias = Literal["success", "gate_failed", "error_during_execution"]


@dataclass(slots=True)
class WorkflowResult:
    """How a workflow run ended, each node's output and calls, and the path it took."""

    subtype: WorkflowSubtype
    output: str | None  # the last step's output (on gate_failed: the text the gate stopped)
    outputs: dict[str, str]  # node name -> output, for every node passed that produced one
    nodes: list[NodeCall]  # in the order the nodes finished
    path: list[str]  # the nodes passed, in the order they started (each at most once)
    choices: dict[str, str]  # router node -> branch taken
    notes: list[str]
    model_calls: int
    max_calls: int  # the static bound: |V| (agent nodes weighted T + 1)
    total_cost_usd: float  # every node's cost_usd (Agent nodes: including subagent/compaction calls)
    usage: Usage
    call_usage: list[CallUsage]  # the bounded calls: one per Node, an Agent loop's own calls
    duration_ms: int
    error: str | None = None
    nested_call_usage: list[CallUsage] = field(default_factory=list)  # Agent nodes' subagent calls

    @property
    def is_error(self) -> bool:
        return self.subtype == "error_during_execution"

    def __repr__(self) -> str:
        """How it ended, first the error when it failed; the per-node detail is in the fields."""
        said = f"error={self.error!r}" if self.error else f"output={self.output!r}"
        return (f"WorkflowResult(subtype={self.subtype!r}, {said}, path={self.path!r}, "
                f"model_calls={self.model_calls}, max_calls={self.max_calls}, total_cost_usd={self.total_cost_usd})")


class Runtime:
    """One run's bookkeeping and the enforcement of Def 7.1 (each node at most once, only nodes of V)."""

    def __init__(self, step: Step, task: str, model: Model | None, prices: dict[str, Price] | None,
                 on_call: Callable[[NodeCall], None] | None) -> None:
        self.V = step.nodes()
        self.bound = step.max_calls()
        self.task = task
        self.model = model
        self.prices = prices
        self.on_call = on_call
        self.passed: set[str] = set()
        self.path: list[str] = []
        self.outputs: dict[str, str] = {}
        self.nodes: list[NodeCall] = []
        self.choices: dict[str, str] = {}
        self.notes: list[str] = []
        self.calls: list[CallUsage] = []
        self.usage = Usage()
        self._unpriced: set[str] = set()
        # keep request histories alive for the run: models may key caches on id(messages)
        self._histories: list[Any] = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    def enter(self, node: BaseNode) -> None:
        if self.V.get(node.name) is not node:
            raise WorkflowError(f"node {node.name!r} is not in this workflow's node set V "
                                f"({', '.join(sorted(self.V))}); declare it in the structure or program(nodes=...)")
        if node.name in self.passed:
            raise WorkflowError(f"node {node.name!r} passed twice in one run: a workflow passes each node at most "
                                "once (seed Def 7.1); give each pass its own node, e.g. unroll the loop with "
                                "node.renamed(...)")
        self.passed.add(node.name)
        self.path.append(node.name)

    def charge(self, model_name: str, cost_usd: float | None, u: Usage) -> CallUsage:
        price = price_for(model_name, self.prices) or price_for(model_name)
        if cost_usd is None and price is None and model_name not in self._unpriced:
            self._unpriced.add(model_name)
            self.note(f"price of model {model_name!r} is unknown: its calls count as $0 (pass prices={{...}})")
        cost = call_cost(u, model_name, cost_usd, self.prices)
        return CallUsage.of(u, cost, model_name)

    def record(self, call: NodeCall, usage: Usage, *, finished: bool = True) -> None:
        """`finished=False`: a node cancelled mid-run (a parallel sibling failed); its calls were
        made and paid for, so they count, but it has no output."""
        self.nodes.append(call)
        self.calls.extend(call.calls)
        self.usage.add(usage)
        if finished:
            self.outputs[call.node] = call.output
        if self.on_call is not None:
            self.on_call(call)
        if len(self.calls) > self.bound:  # cannot happen while enter() holds; checked so it never goes unnoticed
            raise WorkflowError(f"{len(self.calls)} model calls exceed the workflow's bound {self.bound}")

    def context(self, text: str, vars: Mapping[str, Any]) -> Context:
        return Context(text, self.task, dict(self.outputs), dict(vars))

    def result(self, subtype: WorkflowSubtype, output: str | None, started: float,
               error: str | None = None) -> WorkflowResult:
        return WorkflowResult(
            subtype=subtype, output=output, outputs=dict(self.outputs), nodes=list(self.nodes),
            path=list(self.path), choices=dict(self.choices), notes=list(self.notes),
            model_calls=len(self.calls), max_calls=self.bound,
            # fsum: exact-as-possible and independent of the order parallel nodes finished in
            total_cost_usd=math.fsum(n.cost_usd for n in self.nodes), usage=self.usage,
            call_usage=list(self.calls), duration_ms=int((time.perf_counter() - started) * 1000), error=error,
            nested_call_usage=[c for n in self.nodes for c in n.nested_calls],
        )


def resolve(model: Model | str | None) -> Model | None:
    if model is None or not isinstance(model, str):
        return model
    from ..models import check_model_spec, resolve_model  # lazy: provider SDKs load only when used

    check_model_spec(model)
    return resolve_model(model)


class Step(ABC):
    """A workflow (or part of one) with a static node set V."""

    @abstractmethod
    def nodes(self) -> dict[str, BaseNode]:
        """V: every model-call node this step may pass, by name."""

    @abstractmethod
    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str: ...

    @abstractmethod
    def max_path_calls(self) -> int:
        """A tighter bound for one run: the most calls any single path through the structure makes."""

    def max_calls(self) -> int:
        """The seed's bound |V| (seed Prop 7.2 (1)), with each Agent node counted as its T + 1 calls."""
        return sum(n.weight for n in self.nodes().values())

    async def arun(self, input: str, *, model: Model | str | None = None,
                   prices: dict[str, Price] | None = None,
                   on_call: Callable[[NodeCall], None] | None = None) -> WorkflowResult:
        """Run once on `input`. `model` serves every node without its own; `prices` extends the
        price table for models without their own cost."""
        kind = type(self).__name__.strip("_").lower()
        with span(f"invoke_workflow {kind}", {"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": kind}):
            result = await self._arun(input, model, prices, on_call)
            annotate({"loopwright.result.subtype": result.subtype, "loopwright.model_calls": result.model_calls,
                      "loopwright.cost_usd": result.total_cost_usd})
        return result

    async def _arun(self, input: str, model: Model | str | None, prices: dict[str, Price] | None,
                    on_call: Callable[[NodeCall], None] | None) -> WorkflowResult:
        started = time.perf_counter()
        rt = Runtime(self, input, resolve(model), prices, on_call)
        try:
            out = await self._run(rt, input, {})
        except GateStopped as g:
            return rt.result("gate_failed", g.text, started, f"gate {g.gate!r}: {g}")
        except NodeFailed as e:
            return rt.result("error_during_execution", None, started, str(e))
        return rt.result("success", out, started)

    def run(self, input: str, *, model: Model | str | None = None,
            prices: dict[str, Price] | None = None) -> WorkflowResult:
        """Synchronous `arun()`."""
        return asyncio.run(self.arun(input, model=model, prices=prices))

    async def query(self, input: str, *, model: Model | str | None = None,
                    prices: dict[str, Price] | None = None) -> AsyncIterator[NodeCall | WorkflowResult]:
        """Like `lw.query`: yields each NodeCall as its node finishes, and last the WorkflowResult."""
        queue: asyncio.Queue[NodeCall] = asyncio.Queue()
        task = asyncio.ensure_future(self.arun(input, model=model, prices=prices, on_call=queue.put_nowait))
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                    continue
                getter.cancel()
                while not queue.empty():
                    yield queue.get_nowait()
                yield task.result()  # re-raises a WorkflowError from the run
                return
        finally:
            if not task.done():
                task.cancel()


def merge(parts: Sequence[Mapping[str, BaseNode]], *, disjoint: bool, where: str) -> dict[str, BaseNode]:
    """Union of node sets. `disjoint`: the parts all run in one pass (chain, parallel), so a shared
    node would be passed twice. Route branches are exclusive and may share nodes."""
    merged: dict[str, BaseNode] = {}
    for part in parts:
        for name, node in part.items():
            if name in merged:
                if merged[name] is not node:
                    raise WorkflowError(f"two different nodes are named {name!r}; node names must be unique")
                if disjoint:
                    raise WorkflowError(f"node {name!r} appears twice in {where}, so one run would pass it twice "
                                        "(seed Def 7.1); use node.renamed(...) for the second place")
            merged[name] = node
    return merged


class BaseNode(Step):
    """A named step that calls a model: the unit of a workflow graph (seed Def 7.1)."""

    name: str
    prompt: Prompt

    @property
    @abstractmethod
    def weight(self) -> int:
        """The most model calls one pass of this node makes."""

    @abstractmethod
    def renamed(self, name: str) -> BaseNode:
        """The same node under another name: a separate element of V (for unrolling)."""

    @abstractmethod
    async def _call(self, rt: Runtime, prompt: str) -> None: ...

    def nodes(self) -> dict[str, BaseNode]:
        return {self.name: self}

    def max_path_calls(self) -> int:
        return self.weight

    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str:
        rt.enter(self)
        prompt = render(self.prompt, rt.context(text, {k: v for k, v in vars.items() if k != "_suffix"}))
        prompt += str(vars.get("_suffix", ""))
        with span(f"node {self.name}", {"loopwright.workflow.node": self.name,
                                        "loopwright.workflow.node_type": type(self).__name__}):
            await self._call(rt, prompt)  # an Agent node's invoke_agent span is its child
        return rt.outputs[self.name]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
