"""Room: client / workflows (above assemble). Owns the workflow steps that are nodes or checks:
`Node` (one tool-less model call), `Agent` (a whole agent run bounded by T), `Gate`; may import
assemble and below, never cli."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..blocks import text_of
from ..models.base import Model, ModelRequest, complete
from ..telemetry import annotate_call
from ..usage import CallUsage, Usage

if TYPE_CHECKING:
    from ..messages import ResultMessage
    from ..options import AgentOptions
from .graph import (
    BaseNode,
    GateStopped,
    NodeCall,
    NodeFailed,
    Prompt,
    Runtime,
    Step,
    WorkflowError,
    resolve,
)


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

    async def _call(self, rt: Runtime, prompt: str) -> None:
        if self.model is not None and self._model is None:
            self._model = resolve(self.model)
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
            raise NodeFailed(f"node {self.name!r}: model call failed: {type(e).__name__}: {e}") from e
        call = rt.charge(resp.model, resp.cost_usd, resp.usage)
        annotate_call(call, resp.model)
        rt.record(NodeCall(self.name, prompt, text_of(resp.content), [call], resp.stop_reason), resp.usage)


class Agent(BaseNode):
    """A node that is a whole agent run (`loopwright.query`) bounded by `options.max_turns = T`:
    it counts as T + 1 calls in the bound (seed Thm 4.1 / Prop 7.2 (3)).

    Three loop features would add calls beyond T + 1 and are accounted for: continuing a paused
    turn (the node runs with `max_pause_continuations=0`, so a pause ends it with an error),
    asking again after an empty answer (`max_empty_answer_reminders=0`: it ends the node's run), and
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
        self.options = replace(options, max_pause_continuations=0, max_empty_answer_reminders=0)

    @property
    def weight(self) -> int:
        o = self.options
        assert o.max_turns is not None
        hooked = bool(o.hooks or o.settings or o.setting_sources or o.claude_settings)
        if hooked:
            from ..loop import MAX_STOP_CONTINUATIONS

            return o.max_turns + 1 + MAX_STOP_CONTINUATIONS
        return o.max_turns + 1

    def renamed(self, name: str) -> Agent:
        return Agent(name, self.options, self.prompt)

    async def _call(self, rt: Runtime, prompt: str) -> None:
        from ..assemble import query  # lazy: the loop pulls in tools, permissions, sessions
        from ..messages import AssistantMessage, ResultMessage

        if not prompt.strip():  # (query refuses a blank prompt: the Messages API would)
            raise NodeFailed(f"agent node {self.name!r}: its prompt is empty (the input it was given is blank)")
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
            raise NodeFailed(f"agent node {self.name!r} ended with {result.subtype}: {'; '.join(result.errors)}")


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

    async def _run(self, rt: Runtime, text: str, vars: Mapping[str, Any]) -> str:
        if not self.check(text):
            raise GateStopped(self.name, self.message or "the check failed", text)
        return text
