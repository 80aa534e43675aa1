"""Room: execute / invariant / context. Owns running one turn's tool calls; may import
data types and bases (tools.base, hooks, permissions), never options or above.

One turn's tool calls: step 4 of seed Def 3.1, with the parallelism of seed Prop 6.2.

Calls are taken in emission order. A run of adjacent read-only calls is gated one
by one, then run concurrently; any other call runs alone. Results always come back
in emission order, one per tool_use (so (P2) holds), whatever happens: refusals,
unknown tools, bad input, exceptions and interrupts all become is_error results.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .blocks import TextBlock, ToolResultBlock, ToolUseBlock
from .gate import Allow, Deny, Permissions
from .hooks import RunHooks
from .models.base import invalid_input_error
from .telemetry import NULL, Observer
from .threads import INLINE_WAIT_S
from .tools.base import Tool, ToolContext, ToolOutput

if TYPE_CHECKING:
    from .event_types import PermissionDenial

INTERRUPTED = "Interrupted by user: the tool call was cancelled before it finished."
NOT_RUN_AFTER_STOP = "Not run: an earlier call in this turn stopped the run."


@dataclass(slots=True)
class TurnOutcome:
    """One tool-use turn's outcome: a result for every call (in order), the refused calls, and
    whether the turn was cut short."""

    results: list[ToolResultBlock]
    denials: list[PermissionDenial] = field(default_factory=list)
    interrupted: bool = False  # the user cancelled the running calls
    stop_message: str | None = None  # a Deny(interrupt=True) ended the run


class Executor:
    """Runs one turn's tool calls: the gate, the hooks, then the tools (read-only calls
    concurrently), one result per call."""

    def __init__(self, tools: dict[str, Tool], permissions: Permissions, hooks: RunHooks, ctx: ToolContext,
                 obs: Observer = NULL) -> None:
        self.obs = obs  # telemetry: the run's observer (execute_tool spans)
        self.tools = tools
        self.permissions = permissions
        self.hooks = hooks
        self.hooked = hooks.active  # (its registry is frozen: known once, not asked per call)
        self.ctx = ctx
        self.pre_context: dict[str, str] = {}  # tool_use id -> a PreToolUse hook's additionalContext

    async def run(self, uses: list[ToolUseBlock]) -> TurnOutcome:
        results: list[ToolResultBlock | None] = [None] * len(uses)
        out = TurnOutcome([])
        try:
            i = 0
            while i < len(uses) and out.stop_message is None:
                j = i + 1
                if j < len(uses) and self._read_only(uses[i]):  # (a lone call runs alone either way)
                    while j < len(uses) and self._read_only(uses[j]):
                        j += 1
                if j - i == 1:
                    results[i] = await self._one(uses[i], out)
                else:
                    await self._batch(uses, i, j, results, out)
                i = j
        except asyncio.CancelledError:
            # An interrupt: whatever did not finish gets an is_error result, so Inv holds.
            out.interrupted = True
        if not out.interrupted and out.stop_message is None:  # every call ran: a result each
            out.results = results  # type: ignore[assignment]
            return out
        filler = INTERRUPTED if out.interrupted else NOT_RUN_AFTER_STOP
        out.results = [r if r is not None else ToolResultBlock(u.id, filler, True) for r, u in zip(results, uses, strict=True)]
        return out

    def _read_only(self, use: ToolUseBlock) -> bool:
        tool = self.tools.get(use.name)
        if tool is None:
            return False
        return tool.read_only or (tool.read_only_call is not None and tool.read_only_call(use.input, self.tools))

    async def _gate(self, use: ToolUseBlock, out: TurnOutcome) -> tuple[dict[str, Any], ToolResultBlock | None]:
        """Decide one call. Returns the input to run with, or the refusal's result."""
        tool = self.tools.get(use.name)
        if tool is None:
            names = ", ".join(sorted(self.tools)) or "none"
            return use.input, ToolResultBlock(use.id, f"Error: no such tool: {use.name}. Available tools: {names}.", True)
        bad_input = invalid_input_error(use) if use.invalid is not None else None  # not a JSON object
        if bad_input is not None:
            return use.input, ToolResultBlock(use.id, bad_input, True)
        tool_input = use.input
        decision: Allow | Deny | None = None
        hook_decision: str | None = None  # a hook's allow/ask still goes through deny and ask rules
        if self.hooked:
            pre = await self.hooks.pre_tool_use(use.name, tool_input, use.id)
            if pre.context:
                self.pre_context[use.id] = pre.context
            if pre.updated_input is not None:
                tool_input = pre.updated_input
            if pre.stop is not None:  # a hook said `continue: false`
                decision = Deny(pre.stop, interrupt=True)
            elif pre.decision == "deny":
                decision = Deny(pre.reason or f"{use.name} was blocked by a PreToolUse hook.")
            hook_decision = pre.decision
        if decision is None:
            try:
                decision = await self.permissions.decide(use.name, tool_input,
                                                         tool.read_only or not tool.needs_approval, hook_decision)
            except Exception as e:  # odd input (a NUL in a path) or a can_use_tool bug: fail closed
                decision = Deny(f"Permission check failed, so the call was not run: {type(e).__name__}: {e}")
                self.obs.tool_gated(use.id, False, "error")
            else:
                if self.obs.enabled:
                    verdict = self.permissions.last_verdict
                    self.obs.tool_gated(use.id, isinstance(decision, Allow),
                                        "ask" if verdict is not None and verdict.kind == "ask" else "rules", verdict)
        else:
            self.obs.tool_gated(use.id, False, "hook")
        if isinstance(decision, Deny):
            out.denials.append({"tool_name": use.name, "tool_use_id": use.id, "tool_input": tool_input})
            if decision.interrupt:
                out.stop_message = decision.message
            return tool_input, ToolResultBlock(use.id, _with(decision.message, self.pre_context.pop(use.id, None)), True)
        if decision.updated_input is not None and decision.updated_input != tool_input:
            # The one place a rewrite after the decision is judged again (a hook's rewrite was
            # judged above): the rules, not the callback a second time, see the input that runs.
            try:
                refused = self.permissions.rejudge(use.name, decision.updated_input,
                                                   tool.read_only or not tool.needs_approval)
            except Exception as e:  # fail closed, as above
                refused = Deny(f"Permission check failed, so the call was not run: {type(e).__name__}: {e}")
            tool_input = decision.updated_input
            if refused is not None:
                out.denials.append({"tool_name": use.name, "tool_use_id": use.id, "tool_input": tool_input})
                return tool_input, ToolResultBlock(use.id, _with(refused.message, self.pre_context.pop(use.id, None)), True)
        return tool_input, None

    async def _run(self, use: ToolUseBlock, tool_input: dict[str, Any], wait: float,
                   siblings: int = 1) -> ToolResultBlock:
        tool = self.tools[use.name]
        # Per call (concurrent calls must not share it), for a handler that takes one (~3,000
        # instructions a call): Tool.call passes the context to its handler only.
        ctx = self.ctx.for_call(use.id, siblings) if tool.takes_context else self.ctx
        output: ToolOutput = await tool.call(tool_input, ctx, True, wait)
        result = ToolResultBlock(use.id, output.content, output.is_error)
        if self.hooked:
            post = await self.hooks.post_tool_use(use.name, tool_input, use.id, output.content, output.is_error)
            # PreToolUse's additionalContext, then PostToolUse's: appended as text (a list result,
            # an image, keeps its blocks)
            for extra in (self.pre_context.pop(use.id, None), post):
                if extra:
                    content = result.content
                    result = ToolResultBlock(use.id, _with(content, extra) if isinstance(content, str)
                                             else [*content, TextBlock(extra)], output.is_error)
        return result

    def _one(self, use: ToolUseBlock, out: TurnOutcome) -> Awaitable[ToolResultBlock]:
        if not self.obs.enabled:  # telemetry off: no span to start, make current or end
            return self._one_call(use, out)
        return self._spanned(use, out)

    async def _spanned(self, use: ToolUseBlock, out: TurnOutcome) -> ToolResultBlock:
        obs = self.obs
        obs.tool_start(use, self.ctx)
        try:
            with obs.active(use.id):  # its span current: a subagent, Bash or a hook is its child
                result = await self._one_call(use, out)
        except asyncio.CancelledError:
            obs.tool_end(use.id, ToolResultBlock(use.id, INTERRUPTED, True))
            raise
        obs.tool_end(use.id, result)
        return result

    async def _one_call(self, use: ToolUseBlock, out: TurnOutcome) -> ToolResultBlock:
        tool_input, refused = await self._gate(use, out)
        if refused is not None:
            return refused
        # A sync handler runs in a worker thread (as in batches), so a slow one cannot block the
        # event loop for more than INLINE_WAIT_S and an interrupt is answered; the thread finishes
        # on its own (threads.run_in_worker; costs: bench/bench_thread_handoff.py).
        result = await self._run(use, tool_input, INLINE_WAIT_S)
        self._halt(out)
        return result

    def _halt(self, out: TurnOutcome) -> None:
        """A PostToolUse hook said `continue: false`: end the run after this call."""
        if self.hooked and self.hooks.halted and out.stop_message is None:
            out.stop_message = self.hooks.halted

    async def _batch(
        self, uses: list[ToolUseBlock], i: int, j: int, results: list[ToolResultBlock | None], out: TurnOutcome
    ) -> None:
        """Read-only calls i..j-1: gate each in order, then run the allowed ones concurrently."""
        runnable: list[tuple[int, dict[str, Any]]] = []
        for k in range(i, j):
            self.obs.tool_start(uses[k], self.ctx)
            with self.obs.active(uses[k].id):
                tool_input, refused = await self._gate(uses[k], out)
            if refused is not None:
                results[k] = refused
                self.obs.tool_end(uses[k].id, refused)
                if out.stop_message is not None:
                    return
            else:
                runnable.append((k, tool_input))

        siblings = {n: sum(1 for k, _ in runnable if uses[k].name == n) for n in {uses[k].name for k, _ in runnable}}

        async def run_into(k: int, tool_input: dict[str, Any]) -> None:
            # side by side: no waiting in turn for a fast result
            try:
                with self.obs.active(uses[k].id):
                    results[k] = r = await self._run(uses[k], tool_input, wait=0.0, siblings=siblings[uses[k].name])
            except asyncio.CancelledError:
                self.obs.tool_end(uses[k].id, ToolResultBlock(uses[k].id, INTERRUPTED, True))
                raise
            self.obs.tool_end(uses[k].id, r)

        await asyncio.gather(*(run_into(k, x) for k, x in runnable))
        self._halt(out)


def _with(text: str, extra: str | None) -> str:
    return f"{text}\n\n{extra}" if extra else text
