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
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .blocks import Block, ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, blocks_from_wire
from .gate import Allow, Deny, Permissions
from .gate.decide import ReadOnly
from .hooks import RunHooks
from .models.base import invalid_input_error
from .telemetry import NULL, Observer
from .threads import INLINE_WAIT_S, run_in_worker
from .tools.base import Tool, ToolContext, ToolOutput

if TYPE_CHECKING:
    from pathlib import Path

    from .event_types import PermissionDenial

INTERRUPTED = "Interrupted by user: the tool call was cancelled before it finished."
NOT_RUN_AFTER_STOP = "Not run: an earlier call in this turn stopped the run."


@dataclass(slots=True, eq=False)  # (identity: one turn's, handed on once)
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
                j = self._group_end(uses, i)
                await self._group(uses[i:j], results, i, out)
                i = j
        except asyncio.CancelledError:
            # An interrupt: whatever did not finish gets an is_error result, so Inv holds.
            out.interrupted = True
        if not out.interrupted and out.stop_message is None:  # every call ran: a result each
            out.results = results  # type: ignore[assignment]
            return out
        out.results = _filled(results, uses, INTERRUPTED if out.interrupted else NOT_RUN_AFTER_STOP)
        return out

    def _group_end(self, uses: list[ToolUseBlock], i: int) -> int:
        """Where the group of calls starting at i ends: a run of adjacent read-only calls, or the one call."""
        j = i + 1
        if j < len(uses) and self._read_only(uses[i]):  # (the last call is alone either way)
            while j < len(uses) and self._read_only(uses[j]):
                j += 1
        return j

    async def _group(self, group: list[ToolUseBlock], results: list[ToolResultBlock | None], at: int,
                     out: TurnOutcome) -> None:
        """One call, or adjacent read-only calls (seed Prop 6.2): gate each in order, then run the
        allowed ones side by side; each call's result into results[at + its index]."""
        runnable: list[tuple[int, ToolUseBlock, dict[str, Any]]] = []
        for k, use in enumerate(group, at):
            tool_input, refused = await self._gated(use, out)
            if refused is None:
                runnable.append((k, use, tool_input))
                continue
            results[k] = refused
            if out.stop_message is not None:
                return
        if len(runnable) == 1:  # alone: it may hold the loop for INLINE_WAIT_S waiting for a fast result
            k, use, tool_input = runnable[0]
            results[k] = await self._ran(use, tool_input, INLINE_WAIT_S, 1)
        elif runnable:
            await self._side_by_side(runnable, results)
        self._halt(out)

    async def _side_by_side(self, calls: list[tuple[int, ToolUseBlock, dict[str, Any]]],
                            results: list[ToolResultBlock | None]) -> None:
        """Allowed read-only calls run concurrently (no waiting in turn for a fast result), each
        one's result into results[its index]; a tool's calls learn how many of them run together."""
        siblings = Counter(use.name for _, use, _ in calls)

        async def run_into(k: int, use: ToolUseBlock, tool_input: dict[str, Any]) -> None:
            results[k] = await self._ran(use, tool_input, 0.0, siblings[use.name])

        await asyncio.gather(*(run_into(k, use, x) for k, use, x in calls))

    async def _gated(self, use: ToolUseBlock, out: TurnOutcome) -> tuple[dict[str, Any], ToolResultBlock | None]:
        """The call's telemetry span starts, and the gate decides it (a refusal ends the span)."""
        self.obs.tool_start(use, self.ctx)
        try:
            tool_input, refused = await self.obs.within(use.id, self._gate(use, out))  # (a hook: the span's child)
        except asyncio.CancelledError:
            self.obs.tool_end(use.id, ToolResultBlock(use.id, INTERRUPTED, True))
            raise
        if refused is not None:
            self.obs.tool_end(use.id, refused)
        return tool_input, refused

    async def _ran(self, use: ToolUseBlock, tool_input: dict[str, Any], wait: float, siblings: int) -> ToolResultBlock:
        """The allowed call run, inside its span (a subagent, Bash or a hook is its child), which it ends."""
        tool = self.tools[use.name]
        # Per call (concurrent calls must not share it), for a handler that takes one (~3,000
        # instructions a call): Tool.call passes the context to its handler only.
        ctx = self.ctx.for_call(use.id, siblings, use.name) if tool.takes_context else self.ctx
        try:
            before = self.ctx.state.bash.cwd if self.hooked else None  # CwdChanged: where the shell was
            output: ToolOutput = await self.obs.within(use.id, tool.call(tool_input, ctx, True, wait))
            content = output.content
            if not isinstance(content, str) and any(isinstance(b, ImageBlock) for b in content):
                from .tools.media import sendable_blocks  # (Pillow only for a result with an image)

                # a Python tool's image the Messages API cannot process (not base64, no image, another
                # type, over 8000 px), kept in the history, made it refuse every later request; decoded
                # in a worker thread (seconds for a big one: the loop serves the UI, other sessions)
                content = await run_in_worker(sendable_blocks, content)
            result = ToolResultBlock(use.id, content, output.is_error, details=output.details)
            if self.hooked:
                result = await self.obs.within(use.id, self._post_hooks(use, tool_input, output, before, result))
        except asyncio.CancelledError:
            self.obs.tool_end(use.id, ToolResultBlock(use.id, INTERRUPTED, True))
            raise
        self.obs.tool_end(use.id, result)
        return result

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
        tool_input, refusal, hook_decision = await self._pre_hook(use) if self.hooked else (use.input, None, None)
        decision: Allow | Deny
        if refusal is None:
            decision = await self._decide(use, tool_input, self._passes(tool), hook_decision)
        else:
            self.obs.tool_gated(use.id, False, "hook")
            decision = refusal
        if isinstance(decision, Deny):
            return tool_input, self._refuse(use, tool_input, decision.message, out, stop=decision.interrupt)
        # An answer's rewrite: Permissions.decide judged it again (and asked again where the rules
        # ask) before returning it; a hook's rewrite was judged by _decide as the input.
        return (tool_input if decision.updated_input is None else decision.updated_input), None

    def _passes(self, tool: Tool) -> ReadOnly:
        """What permission modes pass without asking: a read-only tool, or a call a tool says is
        read-only (a Skill call that grants nothing), judged on the input that would run (a hook's
        or an answer's rewrite: the model's call passing said nothing of the rewrite's)."""
        if tool.read_only or not tool.needs_approval:
            return True
        check = tool.read_only_call
        return False if check is None else lambda x: check(x, self.tools)

    async def _pre_hook(self, use: ToolUseBlock) -> tuple[dict[str, Any], Deny | None, str | None]:
        """PreToolUse: the input to go on with, a hook's refusal, and its allow/ask (which still
        goes through the deny and ask rules)."""
        pre = await self.hooks.pre_tool_use(use.name, use.input, use.id)
        if pre.context:
            self.pre_context[use.id] = pre.context
        tool_input = pre.updated_input if pre.updated_input is not None else use.input
        if pre.stop is not None:  # a hook said `continue: false`
            return tool_input, Deny(pre.stop, interrupt=True), pre.decision
        if pre.decision == "deny":
            return tool_input, Deny(pre.reason or f"{use.name} was blocked by a PreToolUse hook."), pre.decision
        return tool_input, None, pre.decision

    async def _decide(self, use: ToolUseBlock, tool_input: dict[str, Any], passes: ReadOnly,
                      hook_decision: str | None) -> Allow | Deny:
        """The permission gate's decision (rules, mode, can_use_tool), told to telemetry."""
        try:
            decision = await self.permissions.decide(use.name, tool_input, passes, hook_decision)
        except Exception as e:  # odd input (a NUL in a path) or a can_use_tool bug: fail closed
            self.obs.tool_gated(use.id, False, "error")
            return Deny(f"Permission check failed, so the call was not run: {type(e).__name__}: {e}")
        if isinstance(decision, Deny) and decision.by_classifier and self.hooked:
            # PermissionDenied (Claude Code: auto mode's denials only); `retry: true` tells the model
            # it may try the call again (the refusal itself stands).
            if await self.hooks.permission_denied(use.name, tool_input, use.id, decision.message):
                decision = Deny(decision.message + " A PermissionDenied hook says you may retry this tool call.",
                                decision.interrupt, by_classifier=True)
        verdict = self.permissions.last_verdict
        self.obs.tool_gated(use.id, isinstance(decision, Allow),
                            "ask" if verdict is not None and verdict.kind == "ask" else "rules", verdict)
        return decision

    def _refuse(self, use: ToolUseBlock, tool_input: dict[str, Any], message: str, out: TurnOutcome,
                stop: bool = False) -> ToolResultBlock:
        """A refused call's is_error result (with a PreToolUse hook's context), noted as a denial."""
        out.denials.append({"tool_name": use.name, "tool_use_id": use.id, "tool_input": tool_input})
        if stop:
            out.stop_message = message
        return ToolResultBlock(use.id, _with(message, self.pre_context.pop(use.id, None)), True)

    async def _post_hooks(self, use: ToolUseBlock, tool_input: dict[str, Any], output: ToolOutput,
                          before: Path | None, result: ToolResultBlock) -> ToolResultBlock:
        """CwdChanged when the call moved the shell, then PostToolUse: the result the model sees."""
        after = self.ctx.state.bash.cwd
        if after is not None and after != (before or self.ctx.cwd):  # the shell moved (a `cd` in Bash)
            await self.hooks.cwd_changed(str(before or self.ctx.cwd), str(after))
        post = await self.hooks.post_tool_use(use.name, tool_input, use.id, output.content, output.is_error,
                                              output.details)
        if post.updated_output is not None:  # updatedToolOutput: what the model sees instead (and no
            new = post.updated_output  # details: the tool's own would contradict it)
            shown: str | list[Block] = new if isinstance(new, str) else (  # (images decoded in a worker, as above)
                await run_in_worker(_result_blocks, new) if any(b.get("type") == "image" for b in new)
                else _result_blocks(new))
            result = ToolResultBlock(use.id, shown, output.is_error)
        # PreToolUse's additionalContext, then PostToolUse's: appended as text (a list result,
        # an image, keeps its blocks)
        for extra in (self.pre_context.pop(use.id, None), post.context):
            if extra:
                content = result.content
                result = ToolResultBlock(use.id, _with(content, extra) if isinstance(content, str)
                                         else [*content, TextBlock(extra)], output.is_error, details=result.details)
        return result

    def _halt(self, out: TurnOutcome) -> None:
        """A PostToolUse hook said `continue: false`: end the run after this call."""
        if self.hooked and self.hooks.halted and out.stop_message is None:
            out.stop_message = self.hooks.halted


def _filled(results: list[ToolResultBlock | None], uses: list[ToolUseBlock], filler: str) -> list[ToolResultBlock]:
    """The turn's results, an is_error result saying `filler` for each call that has none."""
    return [r if r is not None else ToolResultBlock(u.id, filler, True) for r, u in zip(results, uses, strict=True)]


def _with(text: str, extra: str | None) -> str:
    return f"{text}\n\n{extra}" if extra else text


def _result_blocks(given: list[dict[str, Any]]) -> list[Block]:
    """A PostToolUse hook's updatedToolOutput blocks as a tool result's: a block a tool result cannot
    hold (a text with no text, a tool_use, a type nobody knows) is named in a text block instead, and
    an image is decoded (tools.media.sendable_image): sent, either made every later request of the
    session one the Messages API refuses."""
    out: list[Block] = []
    for b in given:
        kind = b.get("type")
        if kind == "text" and isinstance(b.get("text"), str):
            out.append(TextBlock(b["text"]))
        elif kind == "image" and isinstance(src := b.get("source"), dict) and src.get("type") == "base64" \
                and isinstance(src.get("data"), str) and isinstance(src.get("media_type"), str):
            from .tools.media import sendable_image

            out.extend(sendable_image(src["data"], src["media_type"]))
        elif kind == "document":
            out.extend(blocks_from_wire([b]))
        else:
            out.append(TextBlock(f"[a {str(kind)[:40]!r} block of a PostToolUse hook's output left out: a tool "
                                 "result holds text, images and documents]"))
    return out
