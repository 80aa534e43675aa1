"""Room: bases (hooks). Owns the events the loop, the executor and agents fire, and what each
event's hooks decide (Claude Code's stdin fields and stdout decisions per event); may import
hooks.config, hooks.envfile, hooks.kinds, hooks.output, hooks.prompt_events, hooks.results, hooks.runner, hooks.work,
event_types (types only), ids and telemetry.

A run fires its frozen HookRegistry through `RunHooks` with a `HookState` of its own (context,
reports, `continue: false`), so per-run state never crosses runs.

What runs hooks and what they decide (hooks.kinds, hooks.results, hooks.runner, hooks.envfile) is
imported where an event has hooks to run: a run without hooks (most `-p` runs) never loads them
(~25 M instructions of its start, issue 41)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..ids import new_uuid
from ..telemetry import NULL
from .config import HookContext, HookRegistry
from .output import (
    bounded,
    cap,
    contexts,
    join,
    jsonable,
    plain,
    specific,
    tool_output,
    unsupported,
)
from .prompt_events import PromptEvents, prompt_block
from .work import WorkEvents

if TYPE_CHECKING:
    from ..event_types import HookReportData
    from .kinds import CommandHook
    from .results import Outcome, PermissionResult, PostToolResult, PreToolResult, PromptResult

log = logging.getLogger("loopwright.hooks")


@dataclass(slots=True, eq=False, repr=False)  # (identity: one run's mutable state)
class HookState:
    """One run's hook state: its context (session, transcript, cwd, mode), the reports not yet
    passed on to the stream, and the first `continue: false` (then the run ends)."""

    context: HookContext = field(default_factory=HookContext)
    reports: list[HookReportData] = field(default_factory=list)
    halted: str | None = None
    once_done: set[str] = field(default_factory=set)  # the `once` hooks that ran
    trace: bool = False  # --include-hook-events: a "started" and a "response" report for each hook run
    late: list[str] = field(default_factory=list)  # what `async` hooks that exited said, for the model
    background: set[asyncio.Task[None]] = field(default_factory=set)  # the `async` hooks still running
    # FileChanged's dynamic watch list: the `watchPaths` SessionStart hooks add to, and CwdChanged
    # and FileChanged hooks replace (loop/watch.py watches them, with the matchers' file names)
    watch_paths: list[str] = field(default_factory=list)

    def take_reports(self) -> list[HookReportData]:
        out, self.reports = self.reports, []
        return out


class RunHooks(WorkEvents, PromptEvents):
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

    def take_late(self) -> str | None:
        """What the `async: true` hooks that exited since the last call said for the model (their
        `systemMessage` and `additionalContext`, as Claude Code sends both), or None: it goes
        with the next request."""
        return join(self.take_late_texts())

    def take_late_texts(self) -> list[str]:
        """take_late's texts one by one (the list is emptied in place: a conversation's runs share
        it, loop/watch.py, so what a hook says after its run ended goes with the next prompt)."""
        texts = [cap(t) for t in self.state.late]  # (each capped as take_late's whole is: a hook's output can be huge)
        self.state.late.clear()
        return texts

    # -- the events the loop calls ------------------------------------------------------------

    async def session_start(self, source: str) -> str | None:
        """Return additional context for the model, or None."""
        outs = await self._fire("SessionStart", source, {"source": source})
        self._notes("SessionStart", outs, blocking_to_user=True)
        self.state.watch_paths += self._watch_paths("SessionStart", outs)
        return join(contexts(outs, plain_stdout=True))

    async def user_prompt_submit(self, prompt: str) -> PromptResult:
        from .results import PromptResult

        if self.state.halted:  # an earlier hook's `continue: false` (Setup's at --init)
            return PromptResult(halted=self.state.halted)
        outs = await self._fire("UserPromptSubmit", None, {"prompt": prompt})
        self._notes("UserPromptSubmit", outs)
        block = prompt_block("UserPromptSubmit", outs, prompt)  # (its own `continue: false` too)
        if block is not None:
            return PromptResult(block=block)
        return PromptResult(context=join(contexts(outs, plain_stdout=True)))

    async def pre_tool_use(self, name: str, tool_input: dict[str, Any], tool_use_id: str) -> PreToolResult:
        from .results import PreToolResult

        outs = await self._fire("PreToolUse", name, {"tool_name": name, "tool_input": tool_input,
                                                     "tool_use_id": tool_use_id}, tool_use_id, tool_input)
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
                if isinstance(updated, dict) and (problem := rewrite_problem(updated)) is not None:
                    self._report("PreToolUse", o.label, "error", problem)  # (fails closed, as a crashed hook)
                    decisions["deny"].append(f"PreToolUse hook {o.label}: {problem}, so the call was not run")
                elif isinstance(updated, dict):
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
        self, name: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool,
        details: Any = None,
    ) -> PostToolResult:
        """PostToolUse (or PostToolUseFailure when is_error): additional context, and PostToolUse's
        `updatedToolOutput` (`updatedMCPToolOutput` for an MCP tool), the last hook's winning.
        `tool_response` is the tool's structured output when it has one (`details`: Bash's
        {stdout, ...}, Write's {type, filePath, ...}), as Claude Code gives it, else its result."""
        from .results import PostToolResult

        event = "PostToolUseFailure" if is_error else "PostToolUse"
        data: dict[str, Any] = {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_use_id}
        if is_error:
            data.update(error=plain(response), is_interrupt=False)
        else:
            data["tool_response"] = details if details is not None else jsonable(response)
        outs = await self._fire(event, name, data, tool_use_id, tool_input)
        self._notes(event, outs)
        feedback = [o.stderr.strip() for o in outs if o.exit_code == 2 and o.stderr.strip()]
        feedback += [str(o.out["reason"]) for o in outs if o.out.get("decision") == "block" and o.out.get("reason")]
        result = PostToolResult(join(feedback + contexts(outs, plain_stdout=False)))
        if not is_error:
            for o in outs:
                spec = specific(o)
                for key in ("updatedToolOutput", *(("updatedMCPToolOutput",) if name.startswith("mcp__") else ())):
                    if spec.get(key) is not None:
                        result.updated_output = bounded(tool_output(spec[key]), len(plain(response)))
        return result

    async def post_tool_batch(self, calls: list[dict[str, Any]]) -> str | None:
        """After a turn's tool calls all ran, before the next model call: additional context
        (and a block's reason) for the model, or None."""
        outs = await self._fire("PostToolBatch", None, {"tool_calls": calls})
        self._notes("PostToolBatch", outs)
        feedback = [o.stderr.strip() for o in outs if o.exit_code == 2 and o.stderr.strip()]
        feedback += [str(o.out["reason"]) for o in outs if o.out.get("decision") == "block" and o.out.get("reason")]
        return join(feedback + contexts(outs, plain_stdout=False))

    async def permission_request(self, name: str, tool_input: dict[str, Any],
                                 suggestions: list[dict[str, Any]] | None = None) -> PermissionResult:
        """An ask about to go to the user (or be refused: no one to ask): a hook may answer it,
        `hookSpecificOutput.decision` {behavior: allow, updatedInput?} or {behavior: deny, message?,
        interrupt?}. A deny from any hook wins over an allow."""
        from .results import PermissionResult

        data: dict[str, Any] = {"tool_name": name, "tool_input": tool_input}
        if suggestions:
            data["permission_suggestions"] = suggestions
        outs = await self._fire("PermissionRequest", name, data, None, tool_input)
        self._notes("PermissionRequest", outs)
        result = PermissionResult()
        for o in outs:
            if o.exit_code == 2:
                result = PermissionResult("deny", message=cap(o.stderr.strip()) or f"denied by PermissionRequest hook {o.label}")
                break
            decision = specific(o).get("decision")
            if not isinstance(decision, dict):
                continue
            behavior = decision.get("behavior")
            if behavior == "deny":
                result = PermissionResult("deny", message=cap(str(decision.get("message") or
                                                                  f"denied by PermissionRequest hook {o.label}")),
                                          interrupt=decision.get("interrupt") is True)
                break
            if behavior == "allow":
                updated = decision.get("updatedInput")
                if isinstance(updated, dict) and (problem := rewrite_problem(updated)) is not None:
                    self._report("PermissionRequest", o.label, "error", problem)
                    result = PermissionResult("deny", message=f"PermissionRequest hook {o.label}: {problem}")
                    break
                if updated is not None and not isinstance(updated, dict):  # (passed over, the input ran unrewritten)
                    problem = f"decision.updatedInput is a {type(updated).__name__}, not an object"
                    self._report("PermissionRequest", o.label, "error", problem)
                    result = PermissionResult("deny", message=f"PermissionRequest hook {o.label}: {problem}")
                    break
                result = PermissionResult("allow", updated)
                if decision.get("updatedPermissions"):
                    self._report("PermissionRequest", o.label, "error",
                                 "decision.updatedPermissions is not supported by loopwright; ignored")
            elif behavior is not None:
                self._report("PermissionRequest", o.label, "error", f"unknown decision.behavior {behavior!r}")
        if self.state.halted and result.behavior != "deny":
            result = PermissionResult("deny", message=self.state.halted, interrupt=True)
        return result

    async def permission_denied(self, name: str, tool_input: dict[str, Any], tool_use_id: str, reason: str) -> bool:
        """Auto mode's classifier refused a call (matchers match the tool name): the refusal stands;
        True when a hook answered `hookSpecificOutput.retry: true` (the model is told it may retry)."""
        outs = await self._fire("PermissionDenied", name, {"tool_name": name, "tool_input": tool_input,
                                                           "tool_use_id": tool_use_id, "reason": reason},
                                tool_use_id, tool_input)
        self._notes("PermissionDenied", outs, blocking_to_user=True)
        return any(specific(o).get("retry") is True for o in outs if not o.error)

    async def pre_model_switch(self, data: dict[str, Any]) -> str | None:
        """Before the model changes (matchers match `source`): the refusal's reason, or None. A
        `permissionDecision` deny refuses; ask refuses too (loopwright has no confirmation there,
        as Claude Code's headless sessions); exit 2 refuses."""
        outs = await self._fire("PreModelSwitch", str(data.get("source")), data)
        self._notes("PreModelSwitch", outs)
        refusals = [o.stderr.strip() or f"refused by PreModelSwitch hook {o.label}" for o in outs if o.exit_code == 2]
        for o in outs:
            spec = specific(o)
            decision, reason = spec.get("permissionDecision"), spec.get("permissionDecisionReason")
            if decision == "deny":
                refusals.append(str(reason or f"refused by PreModelSwitch hook {o.label}"))
            elif decision == "ask":
                refusals.append(f"PreModelSwitch hook {o.label} asks to confirm the switch, and loopwright does "
                                f"not ask here, so it is refused{': ' + str(reason) if reason else ''}")
            elif decision not in (None, "allow"):
                self._report("PreModelSwitch", o.label, "error", f"unknown permissionDecision {decision!r}")
        if self.state.halted:
            refusals.append(self.state.halted)
        return cap("; ".join(refusals)) if refusals else None

    async def post_model_switch(self, data: dict[str, Any]) -> str | None:
        """After the model changed: additionalContext for the model's next request, or None."""
        outs = await self._fire("PostModelSwitch", str(data.get("source")), data)
        self._notes("PostModelSwitch", outs, blocking_to_user=True)
        return join(contexts(outs, plain_stdout=False))

    async def directory_added(self, directory: str, source: str) -> None:
        """A working directory was added (matchers match `source`: slash_command for /add-dir);
        observational, as in Claude Code."""
        outs = await self._fire("DirectoryAdded", source, {"directory": directory, "source": source})
        self._notes("DirectoryAdded", outs, blocking_to_user=True)

    async def cwd_changed(self, old_cwd: str, new_cwd: str) -> None:
        """The Bash tool's shell moved to another directory (its next commands start there);
        observational, but its hooks' `watchPaths` replace FileChanged's watch list (as in Claude Code)."""
        if self.registry.matchers.get("CwdChanged") or self.registry.matchers.get("FileChanged"):
            from .envfile import clear_cwd_files

            clear_cwd_files(self.state.context.session_id)  # what they set was the old directory's
        outs = await self._fire("CwdChanged", None, {"old_cwd": old_cwd, "new_cwd": new_cwd})
        self._notes("CwdChanged", outs, blocking_to_user=True)
        self.state.watch_paths = self._watch_paths("CwdChanged", outs)

    async def config_change(self, source: str, file_path: str) -> str | None:
        """A settings file changed during the run (matchers match `source`: user_settings,
        project_settings, local_settings): the reason a hook blocks the change (exit 2, or
        `decision: "block"`), or None to apply it."""
        outs = await self._fire("ConfigChange", source, {"source": source, "file_path": file_path})
        self._notes("ConfigChange", outs)
        blocks = [o.stderr.strip() or f"blocked by ConfigChange hook {o.label}" for o in outs if o.exit_code == 2]
        blocks += [str(o.out.get("reason") or f"blocked by ConfigChange hook {o.label}")
                   for o in outs if o.out.get("decision") == "block"]
        return cap("; ".join(blocks)) if blocks else None

    async def file_changed(self, file_path: str, event: str) -> None:
        """A watched file changed (`event` change, add or unlink; matchers match its base name);
        observational: its hooks' `watchPaths`, when they give some, replace the watch list."""
        outs = await self._fire("FileChanged", os.path.basename(file_path), {"file_path": file_path, "event": event})
        self._notes("FileChanged", outs, blocking_to_user=True)
        if paths := self._watch_paths("FileChanged", outs):
            self.state.watch_paths = paths

    def _watch_paths(self, event: str, outs: list[Outcome]) -> list[str]:
        paths: list[str] = []
        for o in outs:
            given = specific(o).get("watchPaths")
            if isinstance(given, list) and all(isinstance(p, str) for p in given):
                paths += given
            elif given is not None:
                self._report(event, o.label, "error", "watchPaths is not a list of paths; ignored")
        return paths

    async def elicitation(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """An MCP server asks the user (matchers match `mcp_server_name`): a hook's answer
        ({action, content?}: accept, decline or cancel) instead of the dialog, or None; exit 2 declines."""
        outs = await self._fire("Elicitation", str(data.get("mcp_server_name")), data)
        self._notes("Elicitation", outs)
        return self._elicit_answer("Elicitation", outs)

    async def elicitation_result(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """The answer about to go back to an MCP server: a hook's override ({action, content?}) or
        None; exit 2 turns it into a decline."""
        outs = await self._fire("ElicitationResult", str(data.get("mcp_server_name")), data)
        self._notes("ElicitationResult", outs)
        return self._elicit_answer("ElicitationResult", outs)

    def _elicit_answer(self, event: str, outs: list[Outcome]) -> dict[str, Any] | None:
        answer: dict[str, Any] | None = None
        for o in outs:
            if o.exit_code == 2:
                return {"action": "decline"}
            spec = specific(o)
            action = spec.get("action")
            if action in ("accept", "decline", "cancel"):
                content = spec.get("content")
                answer = {"action": action, **({"content": content} if isinstance(content, dict) else {})}
            elif action is not None:
                self._report(event, o.label, "error", f"unknown action {action!r}; ignored")
        return answer

    async def notification(self, message: str, notification_type: str, title: str | None = None) -> None:
        """Something the user is told (matchers match `notification_type`: permission_prompt,
        idle_prompt, ...)."""
        data: dict[str, Any] = {"message": message, "notification_type": notification_type}
        if title is not None:
            data["title"] = title
        outs = await self._fire("Notification", notification_type, data)
        self._notes("Notification", outs, blocking_to_user=True)

    async def instructions_loaded(self, file_path: str, memory_type: str, load_reason: str) -> None:
        """A memory file went into the conversation (matchers match `load_reason`: session_start,
        include, ...); observational, as in Claude Code."""
        outs = await self._fire("InstructionsLoaded", load_reason, {"file_path": file_path, "memory_type": memory_type,
                                                                    "load_reason": load_reason})
        self._notes("InstructionsLoaded", outs, blocking_to_user=True)

    async def post_compact(self, trigger: str, summary: str) -> None:
        """After compaction (`trigger` manual | auto) with its summary."""
        outs = await self._fire("PostCompact", trigger, {"trigger": trigger, "compact_summary": summary})
        self._notes("PostCompact", outs, blocking_to_user=True)

    async def stop_failure(self, error: str, details: str | None = None,
                           last_assistant_message: str | None = None) -> None:
        """The turn ended on a model error (matchers match `error`: rate_limit, server_error, ...);
        its hooks' output and exit codes are ignored, as in Claude Code."""
        data: dict[str, Any] = {"error": error}
        if details is not None:
            data["error_details"] = details
        if last_assistant_message is not None:
            data["last_assistant_message"] = last_assistant_message
        await self._fire("StopFailure", error, data)

    async def stop(self, stop_hook_active: bool, last_assistant_message: str | None = None) -> str | None:
        """Return a reason to make the agent continue (a blocking Stop hook), or None."""
        extra = {} if last_assistant_message is None else {"last_assistant_message": last_assistant_message}
        return await self._stop("Stop", stop_hook_active, None, extra)

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
        reasons += contexts(outs, plain_stdout=False)  # additionalContext: feedback, and the agent goes on
        return cap("; ".join(reasons)) if reasons else None

    # -- running hooks ---------------------------------------------------------------------------

    def _input(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        c = self.state.context
        return {"session_id": c.session_id, "transcript_path": c.transcript_path, "cwd": c.cwd,
                "permission_mode": c.permission_mode, "hook_event_name": event, **data}

    async def _fire(self, event: str, target: str | None, data: dict[str, Any],
                    tool_use_id: str | None = None, tool_input: dict[str, Any] | None = None) -> list[Outcome]:
        jobs = self.registry.jobs(event, target, tool_input, self.state.once_done, self.state.context.cwd)
        if not jobs:
            return []
        from .kinds import CommandHook

        payload = self._input(event, data)
        later = [(h, t) for h, t in jobs if isinstance(h, CommandHook) and h.background]
        if later:  # `async: true`: started, not waited for; they decide nothing
            jobs = [j for j in jobs if j not in later]
            for h, t in later:
                self._start_background(event, h, t, payload)
            if not jobs:
                return []
        envs = [self._env(event, i, h) for i, (h, _) in enumerate(jobs)]
        with self.obs.span(f"hook {event}", {"loopwright.hook.event": event, "loopwright.hook.count": len(jobs)}):
            return list(await asyncio.gather(*(self._traced(event, target, h, t, payload, tool_use_id, env)
                                               for (h, t), env in zip(jobs, envs, strict=True))))

    def _env(self, event: str, index: int, hook: Any) -> Mapping[str, str]:
        """A command hook's extra environment: with CLAUDE_ENV_FILE for Setup, SessionStart,
        CwdChanged and FileChanged (hooks/envfile.py), as Claude Code sets it."""
        from .envfile import ENV_EVENTS, env_file
        from .kinds import CommandHook

        if event not in ENV_EVENTS or not isinstance(hook, CommandHook):
            return self.registry.env
        path = env_file(self.state.context.session_id, event, index)
        return {**self.registry.env, "CLAUDE_ENV_FILE": path} if path else self.registry.env

    async def _traced(self, event: str, target: str | None, hook: Any, timeout: float, payload: dict[str, Any],
                      tool_use_id: str | None, env: Mapping[str, str]) -> Outcome:
        """One hook's run; with `trace` (--include-hook-events), Claude Code's hook_started and
        hook_response records around a configured hook's (command, http, prompt, agent, mcp_tool:
        Claude Code 2.1.332 reports no callback's, neither the SDK's nor a Python one)."""
        from .kinds import CONFIGURED_HOOKS
        from .runner import run_one

        if not self.state.trace or not isinstance(hook, CONFIGURED_HOOKS):
            return await run_one(event, hook, timeout, payload, tool_use_id, self.state.context, env, self._report)
        head: HookReportData = {"kind": "started", "hook_id": new_uuid(), "hook_event": event,
                                "hook_name": f"{event}:{target}" if target else event}
        self.state.reports.append(head)
        o = await run_one(event, hook, timeout, payload, tool_use_id, self.state.context, env, self._report)
        stdout = o.stdout if o.output is None else json.dumps(o.output)
        self.state.reports.append({**head, "kind": "response", "output": cap(stdout + o.stderr), "stdout": cap(stdout),
                                   "stderr": cap(o.stderr), "exit_code": o.exit_code,  # (a front end's, the transcript's)
                                   "outcome": "error" if o.failed else "success"})
        return o

    def _start_background(self, event: str, hook: CommandHook, timeout: float, payload: dict[str, Any]) -> None:
        from .runner import run_background

        async def watch() -> None:
            o = await run_background(event, hook, timeout, payload, self.state.context, self.registry.env,
                                     self._report)
            out = o.output or {}
            if o.exit_code == 2:
                self._report(event, o.label, "error", "an async hook's exit 2 blocks nothing (it ran in the "
                             f"background): {o.stderr.strip() or '(no output)'}")
            spec = out.get("hookSpecificOutput")
            decided = [k for k in ("decision", "continue") if k in out] + [
                k for k in ("permissionDecision", "updatedInput", "decision") if isinstance(spec, dict) and k in spec]
            if decided:  # (named, never applied: the event did not wait for it)
                self._report(event, o.label, "error", f"an async hook decides nothing (it ran in the background): "
                             f"its {', '.join(decided)} was not applied")
            if out.get("systemMessage"):
                self.state.late.append(str(out["systemMessage"]))
            self.state.late.extend(contexts([o], plain_stdout=False))

        task = asyncio.ensure_future(watch())
        self.state.background.add(task)  # (a task nothing holds may be collected while it runs)
        task.add_done_callback(self.state.background.discard)

    # -- results shared by all events ------------------------------------------------------------

    def _notes(self, event: str, outs: list[Outcome], blocking_to_user: bool = False) -> None:
        """`continue: false` and `systemMessage` (all events); exit 2 where it blocks nothing.
        `suppressOutput: true` keeps the hook's output from the user (no hook_message): what it
        gives the model (additionalContext, reasons) still goes to the model."""
        for o in outs:
            out = o.output or {}
            for line in unsupported(event, out):
                self._report(event, o.label, "error", line)
            if out.get("continue") is False and self.state.halted is None:
                self.state.halted = cap(str(out.get("stopReason") or f"stopped by {event} hook {o.label}"))
            if out.get("suppressOutput") is True:
                continue
            if out.get("systemMessage"):
                self._report(event, o.label, "message", str(out["systemMessage"]))
            if blocking_to_user and o.exit_code == 2:
                self._report(event, o.label, "blocked", o.stderr.strip() or "exit status 2")

    def _report(self, event: str, label: str, kind: str, message: str) -> None:
        message = cap(message)  # (a systemMessage, an error's words: to the user, a front end and the log)
        entry: HookReportData = {"hook_event_name": event, "hook": label, "kind": kind, "message": message}
        self.state.reports.append(entry)
        if kind == "message":
            log.info("%s hook %s: %s", event, label, message)
        else:
            log.warning("%s hook %s %s: %s", event, label, kind, message)


def rewrite_problem(updated: dict[str, Any]) -> str | None:
    """Why a hook's updatedInput cannot be used (not JSON data: a Python hook's object), or None."""
    from ..gate.verdict import json_problem

    return json_problem(updated)
