"""Room: client / workflows (above assemble). Owns workflow graphs and their runs; may import
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
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import string
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .blocks import text_of
from .models.base import Model, ModelRequest, complete
from .models.catalog import call_cost, price_for
from .telemetry import annotate, annotate_call, span
from .usage import CallUsage, Price, Usage

if TYPE_CHECKING:
    from .messages import ResultMessage
    from .options import AgentOptions

__all__ = [
    "Agent", "Context", "Gate", "Node", "NodeCall", "Step", "WorkflowError", "WorkflowResult",
    "chain", "evaluator_optimizer", "orchestrator_workers", "parallel", "parse_subtasks", "program",
    "route", "vote",
]


class WorkflowError(Exception):
    """A bug in the workflow program: a node passed twice in one run, a node outside the
    workflow's node set, an unknown template field, or a structure that could pass a node twice."""


class _NodeFailed(Exception):
    """A node could not produce an output (model error, agent error, unroutable answer)."""


class _GateStopped(Exception):
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


def _render(prompt: Prompt, ctx: Context) -> str:
    if callable(prompt):
        return str(prompt(ctx))
    return string.Formatter().vformat(prompt, (), _Fields(ctx.fields()))


# --- results ------------------------------------------------------------------------------------


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


# --- the run ------------------------------------------------------------------------------------


class _Runtime:
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
        return CallUsage(u.total_input_tokens, u.output_tokens, u.cache_creation_input_tokens,
                         u.cache_read_input_tokens, cost, model_name)

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


def _resolve(model: Model | str | None) -> Model | None:
    if model is None or not isinstance(model, str):
        return model
    from .models import check_model_spec, resolve_model  # lazy: provider SDKs load only when used

    check_model_spec(model)
    return resolve_model(model)


# --- steps --------------------------------------------------------------------------------------


class Step(ABC):
    """A workflow (or part of one) with a static node set V."""

    @abstractmethod
    def nodes(self) -> dict[str, BaseNode]:
        """V: every model-call node this step may pass, by name."""

    @abstractmethod
    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str: ...

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
        rt = _Runtime(self, input, _resolve(model), prices, on_call)
        try:
            out = await self._run(rt, input, {})
        except _GateStopped as g:
            return rt.result("gate_failed", g.text, started, f"gate {g.gate!r}: {g}")
        except _NodeFailed as e:
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


def _merge(parts: Sequence[Mapping[str, BaseNode]], *, disjoint: bool, where: str) -> dict[str, BaseNode]:
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
    async def _call(self, rt: _Runtime, prompt: str) -> None: ...

    def nodes(self) -> dict[str, BaseNode]:
        return {self.name: self}

    def max_path_calls(self) -> int:
        return self.weight

    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str:
        rt.enter(self)
        prompt = _render(self.prompt, rt.context(text, {k: v for k, v in vars.items() if k != "_suffix"}))
        prompt += str(vars.get("_suffix", ""))
        with span(f"node {self.name}", {"loopwright.workflow.node": self.name,
                                        "loopwright.workflow.node_type": type(self).__name__}):
            await self._call(rt, prompt)  # an Agent node's invoke_agent span is its child
        return rt.outputs[self.name]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class Node(BaseNode):
    """One tool-less model call: `system` plus the rendered `prompt` as a single user message.

    `prompt` is a `str.format` template over `{input}`, `{task}`, earlier node outputs by name
    and the combinator's vars, or a function of the `Context`. `model` overrides the run's model
    (e.g. a small model for a router)."""

    def __init__(self, name: str, prompt: Prompt = "{input}", *, system: str | None = None,
                 model: Model | str | None = None, max_tokens: int | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a node needs a non-empty name, got {name!r}")
        self.name, self.prompt, self.system, self.model, self.max_tokens = name, prompt, system, model, max_tokens
        self._model: Model | None = None

    @property
    def weight(self) -> int:
        return 1

    def renamed(self, name: str) -> Node:
        return Node(name, self.prompt, system=self.system, model=self.model, max_tokens=self.max_tokens)

    async def _call(self, rt: _Runtime, prompt: str) -> None:
        if self.model is not None and self._model is None:
            self._model = _resolve(self.model)
        model = self._model or rt.model
        if model is None:
            raise WorkflowError(f"node {self.name!r} has no model: pass model= to run() or to the Node")
        messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
        rt._histories.append(messages)
        try:
            resp = await complete(model, ModelRequest(self.system, [], messages, self.max_tokens))
        except (asyncio.CancelledError, WorkflowError):
            raise
        except Exception as e:  # a failing model ends the run cleanly, as in the agent loop
            raise _NodeFailed(f"node {self.name!r}: model call failed: {type(e).__name__}: {e}") from e
        call = rt.charge(resp.model, resp.cost_usd, resp.usage)
        annotate_call(call, resp.model)
        rt.record(NodeCall(self.name, prompt, text_of(resp.content), [call], resp.stop_reason), resp.usage)


class Agent(BaseNode):
    """A node that is a whole agent run (`loopwright.query`) bounded by `options.max_turns = T`:
    it counts as T + 1 calls in the bound (seed Thm 4.1 / Prop 7.2 (3)).

    Two loop features would add calls beyond T + 1 and are accounted for: continuing a paused
    turn (the node runs with `max_pause_continuations=0`, so a pause ends it with an error), and
    Stop hooks asking the agent to go on (with hooks or settings configured the node's weight
    adds the loop's MAX_STOP_CONTINUATIONS). The agent's model defaults to the run's model.

    The bound counts the agent loop's own calls, as its `model_calls` does (seed Thm 4.1).
    Calls that are not steps of the loop are outside it: a context-compaction summary, and the
    calls of subagents if its tools include the Agent tool (each subagent has its own T, but how
    many it starts is the model's choice). Their cost is in the node's `cost_usd` and the run's
    `total_cost_usd`; subagent calls are listed in `WorkflowResult.nested_call_usage`."""

    def __init__(self, name: str, options: AgentOptions, prompt: Prompt = "{input}") -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a node needs a non-empty name, got {name!r}")
        if options.max_turns is None:
            raise ValueError(f"agent node {name!r} needs options.max_turns: without T an agent's calls are "
                             "unbounded (seed Prop 7.2 (2)), so it cannot be a workflow node")
        self.name, self.prompt = name, prompt
        self.options = replace(options, max_pause_continuations=0)

    @property
    def weight(self) -> int:
        o = self.options
        assert o.max_turns is not None
        hooked = bool(o.hooks or o.settings or o.setting_sources or o.claude_settings)
        if hooked:
            from .loop import MAX_STOP_CONTINUATIONS

            return o.max_turns + 1 + MAX_STOP_CONTINUATIONS
        return o.max_turns + 1

    def renamed(self, name: str) -> Agent:
        return Agent(name, self.options, self.prompt)

    async def _call(self, rt: _Runtime, prompt: str) -> None:
        from .assemble import query  # lazy: the loop pulls in tools, permissions, sessions
        from .messages import AssistantMessage, ResultMessage

        opts = self.options
        if opts.model is None:
            if rt.model is None:
                raise WorkflowError(f"agent node {self.name!r} has no model: pass model= to run() or in its options")
            opts = replace(opts, model=rt.model)
        if opts.prices is None and rt.prices:
            opts = replace(opts, prices=rt.prices)
        result: ResultMessage | None = None
        made: list[CallUsage] = []  # the loop's own calls so far (subagents' carry a parent id)
        try:
            async for msg in query(prompt, opts):
                if isinstance(msg, AssistantMessage) and msg.parent_tool_use_id is None and msg.usage is not None:
                    made.append(msg.usage)
                elif isinstance(msg, ResultMessage):
                    result = msg
        except asyncio.CancelledError:
            # Cancelled mid-run (a parallel sibling failed): the calls it made count all the same.
            if made:
                rt.record(NodeCall(self.name, prompt, "", made, "cancelled"), _usage_of(made), finished=False)
            raise
        assert result is not None  # query always ends with a ResultMessage
        if result.model_calls > self.weight:
            raise WorkflowError(f"agent node {self.name!r} made {result.model_calls} calls, over its weight {self.weight}")
        nested = list(getattr(result, "subagent_call_usage", None) or [])
        rt.record(NodeCall(self.name, prompt, result.result or "", list(result.call_usage), result.stop_reason,
                           result, nested), result.usage)
        if result.is_error:
            raise _NodeFailed(f"agent node {self.name!r} ended with {result.subtype}: {'; '.join(result.errors)}")


def _usage_of(calls: Sequence[CallUsage]) -> Usage:
    u = Usage()
    for c in calls:
        u.add(Usage(input_tokens=c.input_tokens - c.cache_creation_input_tokens - c.cache_read_input_tokens,
                    output_tokens=c.output_tokens, cache_creation_input_tokens=c.cache_creation_input_tokens,
                    cache_read_input_tokens=c.cache_read_input_tokens))
    return u


class Gate(Step):
    """A programmatic check between chain steps (no model call): `check(text)` returns True to go
    on; False stops the run with subtype `gate_failed`."""

    def __init__(self, check: Callable[[str], bool], name: str = "gate", message: str | None = None) -> None:
        self.check, self.name, self.message = check, name, message

    def nodes(self) -> dict[str, BaseNode]:
        return {}

    def max_path_calls(self) -> int:
        return 0

    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str:
        if not self.check(text):
            raise _GateStopped(self.name, self.message or "the check failed", text)
        return text


class _Chain(Step):
    def __init__(self, steps: Sequence[Step]) -> None:
        if not steps:
            raise ValueError("chain() needs at least one step")
        self.steps = list(steps)
        self._V = _merge([s.nodes() for s in self.steps], disjoint=True, where="a chain")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return sum(s.max_path_calls() for s in self.steps)

    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str:
        for s in self.steps:
            text = await s._run(rt, text, {})
        return text


def chain(*steps: Step) -> Step:
    """Prompt chaining: each step's output is the next step's input; `Gate`s may sit between steps."""
    return _Chain(steps)


def _word_in(key: str, text: str) -> int:
    m = re.search(rf"(?<![\w-]){re.escape(key.lower())}(?![\w-])", text)
    return m.start() if m else -1


class _Route(Step):
    def __init__(self, router: BaseNode, branches: Mapping[str, Step], choose: Callable[[str], str] | None,
                 default: str | None) -> None:
        if not branches:
            raise ValueError("route() needs at least one branch")
        if default is not None and default not in branches:
            raise ValueError(f"default branch {default!r} is not one of {list(branches)}")
        self.router, self.branches, self.choose, self.default = router, dict(branches), choose, default
        exclusive = _merge([b.nodes() for b in self.branches.values()], disjoint=False, where="route branches")
        self._V = _merge([router.nodes(), exclusive], disjoint=True, where="a route")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return self.router.weight + max(b.max_path_calls() for b in self.branches.values())

    def pick(self, answer: str) -> str | None:
        if self.choose is not None:
            return self.choose(answer)
        a = answer.strip().strip(".").lower()
        for key in self.branches:
            if a == key.lower():
                return key
        hits = [(pos, -len(k), k) for k in self.branches if (pos := _word_in(k, a)) >= 0]
        return min(hits)[2] if hits else self.default  # the branch named first in the answer

    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str:
        answer = await self.router._run(rt, text, {"branches": ", ".join(self.branches)})
        key = self.pick(answer)
        if key not in self.branches:
            raise _NodeFailed(f"router {self.router.name!r} answered {answer[:200]!r}, which names none of the "
                              f"branches {list(self.branches)}" + (f" (choose() gave {key!r})" if key else ""))
        rt.choices[self.router.name] = key
        return await self.branches[key]._run(rt, text, {})


def route(router: BaseNode, branches: Mapping[str, Step], *, choose: Callable[[str], str] | None = None,
          default: str | None = None) -> Step:
    """Routing: `router` classifies the input; the branch it names runs on the same input.

    By default the branch is the key the answer equals, else the key named first in it (whole
    word, case-insensitive), else `default`; an answer naming no branch ends the run with an error.
    `choose(answer) -> key` replaces that rule. The router's template may use `{branches}`."""
    return _Route(router, branches, choose, default)


async def _gather(coros: Sequence[Awaitable[str]]) -> list[str]:
    """Run concurrently; on the first failure cancel the rest (no orphaned model calls)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for t in tasks:
            if not t.done():
                t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


Aggregate: TypeAlias = Callable[[list[str]], str] | BaseNode


class _Parallel(Step):
    def __init__(self, steps: Sequence[Step], aggregate: Aggregate | None) -> None:
        if not steps:
            raise ValueError("parallel() needs at least one step")
        self.steps, self.aggregate = list(steps), aggregate
        agg = [aggregate.nodes()] if isinstance(aggregate, BaseNode) else []
        self._V = _merge([*(s.nodes() for s in self.steps), *agg], disjoint=True, where="a parallel step")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        agg = self.aggregate.weight if isinstance(self.aggregate, BaseNode) else 0
        return sum(s.max_path_calls() for s in self.steps) + agg

    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str:
        outs = await _gather([s._run(rt, text, {}) for s in self.steps])
        if isinstance(self.aggregate, BaseNode):
            return await self.aggregate._run(rt, "\n\n".join(outs), {})
        return (self.aggregate or "\n\n".join)(outs)


def parallel(*steps: Step, aggregate: Aggregate | None = None) -> Step:
    """Parallelization (sectioning): every step runs on the same input, concurrently
    (asyncio.gather). `aggregate` combines the outputs (in step order): a function of the list,
    or a node that gets them joined by blank lines; by default they are joined."""
    return _Parallel(steps, aggregate)


def majority(outputs: list[str]) -> str:
    """The most common answer (stripped); ties go to the one given first."""
    counts = Counter(o.strip() for o in outputs)
    return max(counts, key=lambda o: (counts[o], -[x.strip() for x in outputs].index(o)))


def vote(node: BaseNode, n: int, aggregate: Aggregate = majority) -> Step:
    """Parallelization (voting): n copies `name[1]..name[n]` of `node` on the same input,
    combined by `aggregate` (default: majority)."""
    if n < 1:
        raise ValueError(f"vote() needs n >= 1, got {n}")
    return _Parallel([node.renamed(f"{node.name}[{i}]") for i in range(1, n + 1)], aggregate)


_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\(\d+\))\s+")


def parse_subtasks(plan: str) -> list[str]:
    """An orchestrator's plan as subtasks: a JSON array of strings (optionally in a ``` fence),
    else one subtask per non-empty line with list markers ("-", "*", "1.", "1)") removed."""
    body = plan.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", body, re.S)
    candidate = fenced.group(1).strip() if fenced else body
    if candidate.startswith("["):
        try:
            data = json.loads(candidate)
        except ValueError:
            data = None
        if isinstance(data, list):
            return [str(x).strip() for x in data if str(x).strip()]
    return [s for line in body.splitlines() if (s := _LIST_MARK.sub("", line).strip())]


class _OrchestratorWorkers(Step):
    def __init__(self, orchestrator: BaseNode, worker: BaseNode, max_workers: int,
                 parse: Callable[[str], list[str]], synthesizer: BaseNode | None) -> None:
        if not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"orchestrator_workers() needs max_workers (K) >= 1, got {max_workers!r}")
        self.orchestrator, self.K, self.parse, self.synthesizer = orchestrator, max_workers, parse, synthesizer
        self.workers = [worker.renamed(f"{worker.name}[{i}]") for i in range(1, max_workers + 1)]
        parts = [orchestrator.nodes(), *(w.nodes() for w in self.workers)]
        self._V = _merge([*parts, *([synthesizer.nodes()] if synthesizer else [])], disjoint=True,
                         where="orchestrator_workers")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return sum(n.weight for n in self._V.values())

    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str:
        plan = await self.orchestrator._run(rt, text, {"max_workers": self.K})
        subtasks = self.parse(plan)
        if len(subtasks) > self.K:
            rt.note(f"orchestrator {self.orchestrator.name!r} proposed {len(subtasks)} subtasks; ran the first "
                    f"{self.K} (K = {self.K} is fixed in code so the workflow stays bounded) and dropped: "
                    + "; ".join(repr(s[:60]) for s in subtasks[self.K:]))
            subtasks = subtasks[: self.K]
        if not subtasks:
            rt.note(f"orchestrator {self.orchestrator.name!r} proposed no subtasks")
        outs = await _gather([w._run(rt, s, {"request": text, "subtask_index": i + 1})
                              for i, (w, s) in enumerate(zip(self.workers, subtasks, strict=False))])
        joined = "\n\n".join(f"## {s}\n{o}" for s, o in zip(subtasks, outs, strict=True))
        if self.synthesizer is not None:
            return await self.synthesizer._run(rt, joined, {"request": text})
        return joined


def orchestrator_workers(orchestrator: BaseNode, worker: BaseNode, max_workers: int, *,
                         parse: Callable[[str], list[str]] = parse_subtasks,
                         synthesizer: BaseNode | None = None) -> Step:
    """Orchestrator-workers: the orchestrator's output is split (`parse`) into at most K =
    `max_workers` subtasks, each done concurrently by its own copy `worker[i]` of `worker`
    (input: the subtask; vars `request`, `subtask_index`); extra subtasks are dropped with a
    note. An optional synthesizer combines the results. V: orchestrator, K workers, synthesizer."""
    return _OrchestratorWorkers(orchestrator, worker, max_workers, parse, synthesizer)


def approved(verdict: str) -> bool:
    """The default acceptance test: the evaluator's answer starts with PASS, APPROVED or ACCEPT."""
    return verdict.strip().upper().startswith(("PASS", "APPROVED", "ACCEPT"))


_RETRY = "\n\nYour previous attempt:\n{draft}\n\nFeedback on it:\n{feedback}\n\nWrite an improved version."


class _EvaluatorOptimizer(Step):
    def __init__(self, generator: BaseNode, evaluator: BaseNode, rounds: int, accept: Callable[[str], bool]) -> None:
        if not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"evaluator_optimizer() needs rounds (R) >= 1 fixed in code, got {rounds!r}")
        self.R, self.accept = rounds, accept
        self.generators = [generator.renamed(f"{generator.name}[{r}]") for r in range(1, rounds + 1)]
        self.evaluators = [evaluator.renamed(f"{evaluator.name}[{r}]") for r in range(1, rounds + 1)]
        self._V = _merge([n.nodes() for n in (*self.generators, *self.evaluators)], disjoint=True,
                         where="evaluator_optimizer")
        # a template that does not mention the feedback gets it appended from round 2 on
        self._append = isinstance(generator.prompt, str) and "{feedback}" not in generator.prompt

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return sum(n.weight for n in self._V.values())

    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str:
        draft, feedback = "", ""
        for r, (gen, ev) in enumerate(zip(self.generators, self.evaluators, strict=True), start=1):
            gv: dict[str, Any] = {"request": text, "draft": draft, "feedback": feedback, "round": r}
            if r > 1 and self._append:
                gv["_suffix"] = _RETRY.format(draft=draft, feedback=feedback)
            draft = await gen._run(rt, text, gv)
            feedback = await ev._run(rt, draft, {"request": text, "draft": draft, "round": r})
            if self.accept(feedback):
                rt.note(f"{ev.name!r} approved round {r} of {self.R}")
                return draft
        rt.note(f"not approved after {self.R} rounds (R is fixed in code); the output is the last draft")
        return draft


def evaluator_optimizer(generator: BaseNode, evaluator: BaseNode, rounds: int, *,
                        accept: Callable[[str], bool] = approved) -> Step:
    """Evaluator-optimizer with R = `rounds` fixed in code, unrolled into 2R nodes
    `gen[1], eval[1], ..., gen[R], eval[R]`. The generator gets the request as `{input}` (and,
    from round 2, `{draft}` and `{feedback}`, appended automatically if its template does not use
    them); the evaluator gets the draft as `{input}` and the request as `{request}`. Stops at the
    first round whose verdict `accept()`s (default: starts with PASS/APPROVED/ACCEPT)."""
    return _EvaluatorOptimizer(generator, evaluator, rounds, accept)


class ProgramContext:
    """What a `program` body sees: `call(node, input, **vars)` passes one declared node."""

    def __init__(self, rt: _Runtime, declared: Mapping[str, BaseNode]) -> None:
        self._rt, self._declared = rt, declared

    @property
    def task(self) -> str:
        return self._rt.task

    @property
    def outputs(self) -> Mapping[str, str]:
        return dict(self._rt.outputs)

    def note(self, text: str) -> None:
        self._rt.note(text)

    async def call(self, node: BaseNode, input: str, **vars: Any) -> str:
        if self._declared.get(node.name) is not node:
            raise WorkflowError(f"program called node {node.name!r}, which it did not declare in nodes=[...]")
        return await node._run(self._rt, input, vars)


class _Program(Step):
    def __init__(self, nodes: Sequence[BaseNode], body: Callable[[ProgramContext, str], Awaitable[str]]) -> None:
        self.body = body
        self._V = _merge([n.nodes() for n in nodes], disjoint=True, where="program(nodes=...)")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return self.max_calls()

    async def _run(self, rt: _Runtime, text: str, vars: Mapping[str, Any]) -> str:
        return await self.body(ProgramContext(rt, self._V), text)


def program(nodes: Sequence[BaseNode]) -> Callable[[Callable[[ProgramContext, str], Awaitable[str]]], Step]:
    """Any other code path over a declared node set V:

        @program(nodes=[draft, check])
        async def flow(ctx, text):
            d = await ctx.call(draft, text)
            return d if "ok" in d else await ctx.call(check, d)

    A node passed twice, or one not declared, raises WorkflowError at run time."""

    def wrap(body: Callable[[ProgramContext, str], Awaitable[str]]) -> Step:
        return _Program(nodes, body)

    return wrap

