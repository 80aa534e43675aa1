"""Room: bases (hooks). Owns the events the loop, the executor and agents fire, and what each
event's hooks decide (Claude Code's stdin fields and stdout decisions per event); may import
hooks.config, hooks.output, hooks.runner, event_types (types only) and telemetry.

A run fires its frozen HookRegistry through `RunHooks` with a `HookState` of its own (context,
reports, `continue: false`), so per-run state never crosses runs."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..telemetry import NULL
from .config import HookContext, HookRegistry
from .output import Outcome, cap, contexts, join, jsonable, plain
from .runner import run_one

if TYPE_CHECKING:
    from ..event_types import HookReportData

log = logging.getLogger("loopwright.hooks")


@dataclass(slots=True)
class PreToolResult:
    """What PreToolUse hooks decided: a permission decision, a rewritten input, or nothing.
    `stop` is set when a hook said `continue: false`: the run ends before the tool runs."""

    decision: str | None = None  # "allow" | "deny" | "ask"
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    stop: str | None = None
    context: str | None = None  # additionalContext: goes to the model with the call's result


@dataclass(slots=True)
class PromptResult:
    """UserPromptSubmit: `block` stops the run before any model call; `context` is added text."""

    block: str | None = None
    context: str | None = None


@dataclass(slots=True)
class HookState:
    """One run's hook state: its context (session, transcript, cwd, mode), the reports not yet
    passed on to the stream, and the first `continue: false` (then the run ends)."""

    context: HookContext = field(default_factory=HookContext)
    reports: list[HookReportData] = field(default_factory=list)
    halted: str | None = None

    def take_reports(self) -> list[HookReportData]:
        out, self.reports = self.reports, []
        return out


class RunHooks:
    """The events the loop, the executor and agents fire: a run's frozen HookRegistry run with
    the run's own HookState (and its telemetry observer). Made by `run_hooks` (or `Hooks.for_run`)."""

    obs = NULL  # telemetry: the run's observer (a span per event that runs hooks)

    def __init__(self, registry: HookRegistry, state: HookState | None = None) -> None:
        self.registry = registry
        self.state = state if state is not None else HookState()

    @property
    def active(self) -> bool:
        return self.registry.active

    @property
    def halted(self) -> str | None:
        """The stop reason of the first hook that said `continue: false` in this run, or None."""
        return self.state.halted

    @property
    def reports(self) -> list[HookReportData]:
        return self.state.reports

    def take_reports(self) -> list[HookReportData]:
        return self.state.take_reports()

    # -- the events the loop calls ------------------------------------------------------------

    async def session_start(self, source: str) -> str | None:
        """Return additional context for the model, or None."""
        outs = await self._fire("SessionStart", source, {"source": source})
        self._notes("SessionStart", outs, blocking_to_user=True)
        return join(contexts(outs, plain_stdout=True))

    async def user_prompt_submit(self, prompt: str) -> PromptResult:
        if self.state.halted:
            return PromptResult(block=self.state.halted)
        outs = await self._fire("UserPromptSubmit", None, {"prompt": prompt})
        self._notes("UserPromptSubmit", outs)
        if self.state.halted:
            return PromptResult(block=self.state.halted)
        blocks = [o.stderr.strip() or "blocked" for o in outs if o.exit_code == 2]
        blocks += [str(o.out.get("reason") or "blocked") for o in outs if o.out.get("decision") == "block"]
        if blocks:
            return PromptResult(block=cap("; ".join(blocks)))
        return PromptResult(context=join(contexts(outs, plain_stdout=True)))

    async def pre_tool_use(self, name: str, tool_input: dict[str, Any], tool_use_id: str) -> PreToolResult:
        outs = await self._fire("PreToolUse", name, {"tool_name": name, "tool_input": tool_input,
                                                     "tool_use_id": tool_use_id}, tool_use_id)
        self._notes("PreToolUse", outs)
        result = PreToolResult(stop=self.state.halted)
        decisions: dict[str, list[str]] = {"deny": [], "ask": [], "allow": []}
        for o in outs:
            if o.error:  # a gate that crashed or timed out did not approve: fail closed
                decisions["deny"].append(f"PreToolUse hook {o.label} failed ({o.error}), "
                                         "so the call was not run")
                continue
            if o.exit_code == 2:
                decisions["deny"].append(o.stderr.strip() or f"blocked by PreToolUse hook {o.label}")
                continue
            out = o.out
            raw = out.get("hookSpecificOutput")
            spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
            decision = spec.get("permissionDecision")
            reason = spec.get("permissionDecisionReason") or out.get("reason") or ""
            if decision is None and out.get("decision") in ("approve", "block"):  # the older fields
                decision = "allow" if out["decision"] == "approve" else "deny"
            if decision in decisions:
                decisions[decision].append(str(reason or f"{decision} by PreToolUse hook {o.label}"))
            elif decision is not None:
                self._report("PreToolUse", o.label, "error", f"unknown permissionDecision {decision!r}")
            updated = spec.get("updatedInput")
            if updated is not None:
                if isinstance(updated, dict):
                    result.updated_input = updated
                else:
                    self._report("PreToolUse", o.label, "error", "updatedInput is not an object; ignored")
        for kind in ("deny", "ask", "allow"):  # the strictest decision wins
            if decisions[kind]:
                result.decision, result.reason = kind, cap("; ".join(decisions[kind]))
                break
        result.context = join(contexts([o for o in outs if not o.error], plain_stdout=False))
        return result

    async def post_tool_use(
        self, name: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> str | None:
        """PostToolUse (or PostToolUseFailure when is_error). Return additional context, or None."""
        event = "PostToolUseFailure" if is_error else "PostToolUse"
        data: dict[str, Any] = {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_use_id}
        if is_error:
            data.update(error=plain(response), is_interrupt=False)
        else:
            data["tool_response"] = jsonable(response)
        outs = await self._fire(event, name, data, tool_use_id)
        self._notes(event, outs)
        feedback = [o.stderr.strip() for o in outs if o.exit_code == 2 and o.stderr.strip()]
        feedback += [str(o.out["reason"]) for o in outs if o.out.get("decision") == "block" and o.out.get("reason")]
        return join(feedback + contexts(outs, plain_stdout=False))

    async def stop(self, stop_hook_active: bool) -> str | None:
        """Return a reason to make the agent continue (a blocking Stop hook), or None."""
        return await self._stop("Stop", stop_hook_active)

    async def subagent_start(self, agent_type: str) -> str | None:
        """A subagent is starting (matchers match `agent_type`). Returns additional context for
        the subagent's first message, or None. Called by agents.SubagentHooks."""
        outs = await self._fire("SubagentStart", agent_type, {})
        self._notes("SubagentStart", outs)
        return join(contexts(outs, plain_stdout=False))

    async def subagent_stop(self, stop_hook_active: bool, agent_type: str | None = None,
                            last_assistant_message: str | None = None, error: str | None = None) -> str | None:
        """A subagent is about to finish (matchers match `agent_type`). Like Stop: a returned
        reason makes it continue (not after an `error`: it has ended). Called by agents.SubagentHooks."""
        extra = {} if last_assistant_message is None else {"last_assistant_message": last_assistant_message}
        if error is not None:
            extra["error"] = error
        return await self._stop("SubagentStop", stop_hook_active, agent_type, extra)

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> str | None:
        """Before compaction (`trigger` manual | auto). Returns a reason if a hook blocks it."""
        outs = await self._fire("PreCompact", trigger, {"trigger": trigger,
                                                        "custom_instructions": custom_instructions})
        self._notes("PreCompact", outs)
        blocks = [o.stderr.strip() or "blocked" for o in outs if o.exit_code == 2]
        blocks += [str(o.out.get("reason") or "blocked") for o in outs if o.out.get("decision") == "block"]
        return cap("; ".join(blocks)) if blocks else None

    async def session_end(self, reason: str) -> None:
        outs = await self._fire("SessionEnd", reason, {"reason": reason})
        self._notes("SessionEnd", outs, blocking_to_user=True)

    async def _stop(self, event: str, stop_hook_active: bool, target: str | None = None,
                    extra: dict[str, Any] | None = None) -> str | None:
        outs = await self._fire(event, target, {"stop_hook_active": stop_hook_active, **(extra or {})})
        self._notes(event, outs)
        if self.state.halted:
            return None  # continue: false wins over decision: block
        reasons = [o.stderr.strip() or f"{event} hook {o.label} asked to continue" for o in outs if o.exit_code == 2]
        reasons += [str(o.out.get("reason") or "continue") for o in outs if o.out.get("decision") == "block"]
        return cap("; ".join(reasons)) if reasons else None

    # -- running hooks ---------------------------------------------------------------------------

    def _input(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        c = self.state.context
        return {"session_id": c.session_id, "transcript_path": c.transcript_path, "cwd": c.cwd,
                "permission_mode": c.permission_mode, "hook_event_name": event, **data}

    async def _fire(self, event: str, target: str | None, data: dict[str, Any],
                    tool_use_id: str | None = None) -> list[Outcome]:
        jobs = self.registry.jobs(event, target)
        if not jobs:
            return []
        payload = self._input(event, data)
        with self.obs.span(f"hook {event}", {"loopwright.hook.event": event, "loopwright.hook.count": len(jobs)}):
            return list(await asyncio.gather(*(
                run_one(event, h, t, payload, tool_use_id, self.state.context, self.registry.env, self._report)
                for h, t in jobs)))

    # -- results shared by all events ------------------------------------------------------------

    def _notes(self, event: str, outs: list[Outcome], blocking_to_user: bool = False) -> None:
        """`continue: false` and `systemMessage` (all events); exit 2 where it blocks nothing.
        `suppressOutput: true` keeps the hook's output from the user (no hook_message): what it
        gives the model (additionalContext, reasons) still goes to the model."""
        for o in outs:
            out = o.output or {}
            if out.get("continue") is False and self.state.halted is None:
                self.state.halted = str(out.get("stopReason") or f"stopped by {event} hook {o.label}")
            if out.get("suppressOutput") is True:
                continue
            if out.get("systemMessage"):
                self._report(event, o.label, "message", str(out["systemMessage"]))
            if blocking_to_user and o.exit_code == 2:
                self._report(event, o.label, "blocked", o.stderr.strip() or "exit status 2")

    def _report(self, event: str, label: str, kind: str, message: str) -> None:
        entry: HookReportData = {"hook_event_name": event, "hook": label, "kind": kind, "message": message}
        self.state.reports.append(entry)
        if kind == "message":
            log.info("%s hook %s: %s", event, label, message)
        else:
            log.warning("%s hook %s %s: %s", event, label, kind, message)
