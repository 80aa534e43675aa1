"""Room: client / workflows (above assemble). Owns the workflow patterns of Anthropic's "Building
effective agents" (chain, route, parallel, vote, orchestrator_workers, evaluator_optimizer) and
`program` for any other code path over declared nodes; may import assemble and below, never cli."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    pass
from .graph import BaseNode, NodeFailed, Runtime, Step, WorkflowError, merge


class _Chain(Step):
    def __init__(self, steps: Sequence[Step]) -> None:
        if not steps:
            raise ValueError("chain() needs at least one step")
        self.steps = list(steps)
        self._V = merge([s.nodes() for s in self.steps], disjoint=True, where="a chain")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return sum(s.max_path_calls() for s in self.steps)

    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str:
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
        exclusive = merge([b.nodes() for b in self.branches.values()], disjoint=False, where="route branches")
        self._V = merge([router.nodes(), exclusive], disjoint=True, where="a route")

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

    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str:
        answer = await self.router._run(rt, text, {"branches": ", ".join(self.branches)})
        key = self.pick(answer)
        if key not in self.branches:
            raise NodeFailed(f"router {self.router.name!r} answered {answer[:200]!r}, which names none of the "
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
        self._V = merge([*(s.nodes() for s in self.steps), *agg], disjoint=True, where="a parallel step")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        agg = self.aggregate.weight if isinstance(self.aggregate, BaseNode) else 0
        return sum(s.max_path_calls() for s in self.steps) + agg

    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str:
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
        self._V = merge([*parts, *([synthesizer.nodes()] if synthesizer else [])], disjoint=True,
                         where="orchestrator_workers")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return sum(n.weight for n in self._V.values())

    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str:
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
        self._V = merge([n.nodes() for n in (*self.generators, *self.evaluators)], disjoint=True,
                         where="evaluator_optimizer")
        # a template that does not mention the feedback gets it appended from round 2 on
        self._append = isinstance(generator.prompt, str) and "{feedback}" not in generator.prompt

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return sum(n.weight for n in self._V.values())

    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str:
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

    def __init__(self, rt: Runtime, declared: Mapping[str, BaseNode]) -> None:
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
        self._V = merge([n.nodes() for n in nodes], disjoint=True, where="program(nodes=...)")

    def nodes(self) -> dict[str, BaseNode]:
        return dict(self._V)

    def max_path_calls(self) -> int:
        return self.max_calls()

    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str:
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
