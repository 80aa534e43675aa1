"""Room: bases. Owns the hook events, matchers, the registry of configured hooks apart from a run's
hook state, and the command-hook protocol; may import data types only.

Hooks around the loop: Claude Code's events, its stdin JSON and its exit-code protocol.

Two kinds of hook, configured per event with a matcher:

* Python callables (sync or async), registered in code (their input and output are typed
  per event in event_types.py: `PreToolUseHookInput`, ..., `HookJSONOutput`, as in the Agent SDK)::

      hooks = Hooks()
      @hooks.on("PreToolUse", matcher="Bash")
      def no_rm(data):                       # or (data, tool_use_id, context)
          if "rm " in data["tool_input"]["command"]:
              return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                      "permissionDecision": "deny", "permissionDecisionReason": "no rm"}}

  or as the Agent SDK's dict: ``Hooks({"PreToolUse": [HookMatcher("Bash", [no_rm])]})``.
  A callable gets the same input dict a command hook reads on stdin and returns the
  same output dict a command hook prints (or None).

* Shell commands, from settings files (``{"hooks": {"PreToolUse": [{"matcher": "Bash",
  "hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}}``) or
  ``hooks.command(event, "script.sh")``. They get the input as JSON on stdin. Exit 0: stdout
  is parsed as JSON output if it is a JSON object (for SessionStart and UserPromptSubmit,
  plain stdout is context for the model). Exit 2: blocking, stderr is the reason. Any other
  exit code: a non-blocking error, reported.

Output fields: ``continue: false`` (+ ``stopReason``) ends the run; ``decision: "block"`` +
``reason``; ``systemMessage``; ``suppressOutput: true`` (the hook's output is not shown: no
``hook_message``); ``hookSpecificOutput.permissionDecision`` (allow | deny | ask),
``permissionDecisionReason``, ``updatedInput``, ``additionalContext`` (PreToolUse: appended to the
call's result, or to its refusal; SubagentStart: added to the subagent's first message).

Matching hooks of one event run concurrently. Each has a timeout (default 60 s); a hook that
times out or crashes is reported (a SystemMessage "hook_error" in the stream and a log
warning) and never hangs the run; a timed-out command's process group is killed. A PreToolUse
hook that crashes, times out or cannot start fails closed: the call is refused, as a gate's
should be (a command's other exit codes stay non-blocking errors, as in Claude Code).

What is configured apart from what happened: `Hooks` is where hooks are registered; the
assembler freezes what a run has (the options' hooks, the settings files', the SDK's callbacks)
into a `HookRegistry` once, and the run fires it through `RunHooks` with a `HookState` of its
own (context, reports, `continue: false`). So one Hooks object may serve many runs at once, and
per-run state never crosses runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import json
import logging
import os
import re
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

from .telemetry import NULL, trace_env

if TYPE_CHECKING:
    from .event_types import HOOK_INPUTS as HOOK_INPUTS
    from .event_types import BaseHookInput as BaseHookInput
    from .event_types import ContextHookSpecificOutput as ContextHookSpecificOutput
    from .event_types import HookInput as HookInput
    from .event_types import HookJSONOutput as HookJSONOutput
    from .event_types import HookReportData as HookReportData
    from .event_types import PostToolUseFailureHookInput as PostToolUseFailureHookInput
    from .event_types import PostToolUseHookInput as PostToolUseHookInput
    from .event_types import PreCompactHookInput as PreCompactHookInput
    from .event_types import PreToolUseHookInput as PreToolUseHookInput
    from .event_types import PreToolUseHookSpecificOutput as PreToolUseHookSpecificOutput
    from .event_types import SessionEndHookInput as SessionEndHookInput
    from .event_types import SessionStartHookInput as SessionStartHookInput
    from .event_types import StopHookInput as StopHookInput
    from .event_types import SubagentStartHookInput as SubagentStartHookInput
    from .event_types import SubagentStopHookInput as SubagentStopHookInput
    from .event_types import UserPromptSubmitHookInput as UserPromptSubmitHookInput

log = logging.getLogger("loopwright.hooks")

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)
# Every hook event of Claude Code 2.1.332 (the Agent SDK's HOOK_EVENTS): a hook on one of these is
# accepted; one on an event loopwright does not fire is named once (HookRegistry.unfired), never an error.
CLAUDE_HOOK_EVENTS = (
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "UserPromptSubmit",
    "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
    "PreCompact", "PostCompact", "PreModelSwitch", "PostModelSwitch", "PermissionRequest", "PermissionDenied",
    "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange",
    "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged", "DirectoryAdded",
    "MessageDisplay", "PreSkillShellCommand",
)
DEFAULT_TIMEOUT = 60.0
_MAX_REASON = 10_000


# The typed events, what hooks get and may return (PreToolUseHookInput, ..., HookJSONOutput, as in the
# Agent SDK): TypedDicts in event_types.py, named here and handed out on first access.
_EVENT_TYPES = frozenset({"BaseHookInput", "PreToolUseHookInput", "PostToolUseHookInput",
    "PostToolUseFailureHookInput", "UserPromptSubmitHookInput", "SessionStartHookInput",
    "SessionEndHookInput", "StopHookInput", "SubagentStartHookInput", "SubagentStopHookInput",
    "PreCompactHookInput", "HookInput", "HOOK_INPUTS", "PreToolUseHookSpecificOutput",
    "ContextHookSpecificOutput", "HookJSONOutput"})


def __getattr__(name: str) -> Any:
    if name in _EVENT_TYPES:
        from . import event_types

        return getattr(event_types, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(slots=True)
class HookContext:
    """Fields every hook input carries (Claude Code's stdin JSON)."""

    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    permission_mode: str = "default"
    deps: Any = None  # AgentOptions.deps: a Python hook's third argument carries them (never sent to a command hook)


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


HookCallback: TypeAlias = Callable[..., Any]


@dataclass(slots=True)
class CommandHook:
    """A shell command hook (Claude Code's `{"type": "command", "command": ..., "timeout": s}`)."""

    command: str
    timeout: float | None = None


@dataclass
class HookMatcher:
    """Hooks for the calls whose tool name (or source/trigger/reason) the matcher matches:
    None, "" or "*" = all; `Bash`, `Edit|Write` = exact names; anything else a regex."""

    matcher: str | None = None
    hooks: list[HookCallback | CommandHook] = field(default_factory=list)
    timeout: float | None = None  # default for the hooks in this matcher


@dataclass(slots=True)
class _Outcome:
    """One hook's run, in command-hook terms."""

    label: str
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    output: dict[str, Any] | None = None  # parsed JSON output
    failed: bool = False  # crashed or timed out (already reported)
    error: str = ""  # why it crashed, timed out or could not start (PreToolUse then fails closed)

    @property
    def out(self) -> dict[str, Any]:
        return self.output or {}


def matcher_matches(matcher: str | None, value: str | None) -> bool:
    if matcher in (None, "", "*"):
        return True
    if value is None:
        return False
    assert matcher is not None
    if re.fullmatch(r"[A-Za-z0-9_|\s-]+", matcher):
        return value in (m.strip() for m in matcher.split("|"))
    try:
        return re.search(matcher, value) is not None
    except re.error:
        return matcher == value


@dataclass(frozen=True, slots=True)
class RegisteredMatcher:
    """One matcher of a HookRegistry: like HookMatcher, but frozen."""

    matcher: str | None
    hooks: tuple[HookCallback | CommandHook, ...]
    timeout: float | None = None


_NO_MATCHERS: Mapping[str, tuple[RegisteredMatcher, ...]] = MappingProxyType({})
_NO_ENV: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class HookRegistry:
    """What hooks are configured for a run (settings files, SDK callbacks, code), per event, and
    the extra environment of command hooks. Built once by the assembler (`Hooks.freeze()`, merged
    with the settings by settings.build_run_config) and never changed: the run's state is apart,
    in HookState."""

    matchers: Mapping[str, tuple[RegisteredMatcher, ...]] = field(default_factory=lambda: _NO_MATCHERS)
    env: Mapping[str, str] = field(default_factory=lambda: _NO_ENV)
    # Any hook at all: known once (the registry never changes), asked several times a turn.
    active: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "active", any(self.matchers.values()))

    def unfired(self) -> list[str]:
        """One line per event that has hooks but that loopwright never fires (a Claude Code event
        it does not have): they are kept, never run, and named."""
        out = []
        for event, ms in self.matchers.items():
            n = sum(len(m.hooks) for m in ms)
            if n and event not in HOOK_EVENTS:
                out.append(f"hook event {event}: loopwright never fires it; its {n} hook{'s' * (n != 1)} "
                           "will not run")
        return out

    def with_env(self, env: Mapping[str, str]) -> HookRegistry:
        """The same hooks, their environment updated with `env`."""
        return HookRegistry(self.matchers, MappingProxyType({**self.env, **env}))

    def jobs(self, event: str, target: str | None) -> list[tuple[HookCallback | CommandHook, float]]:
        """The hooks an event runs, each with its timeout: the matchers that match `target`
        (events without a target, UserPromptSubmit and Stop, ignore matchers); identical commands
        run once (as Claude Code does)."""
        jobs: list[tuple[HookCallback | CommandHook, float]] = []
        seen: set[str] = set()
        for m in self.matchers.get(event) or ():
            if target is not None and not matcher_matches(m.matcher, target):
                continue
            for h in m.hooks:
                if isinstance(h, CommandHook):
                    if h.command in seen:
                        continue
                    seen.add(h.command)
                    timeout = h.timeout or m.timeout or DEFAULT_TIMEOUT
                else:
                    timeout = m.timeout or DEFAULT_TIMEOUT
                jobs.append((h, float(timeout)))
        return jobs


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
        return _join(_contexts(outs, plain_stdout=True))

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
            return PromptResult(block=_cap("; ".join(blocks)))
        return PromptResult(context=_join(_contexts(outs, plain_stdout=True)))

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
                result.decision, result.reason = kind, _cap("; ".join(decisions[kind]))
                break
        result.context = _join(_contexts([o for o in outs if not o.error], plain_stdout=False))
        return result

    async def post_tool_use(
        self, name: str, tool_input: dict[str, Any], tool_use_id: str, response: Any, is_error: bool
    ) -> str | None:
        """PostToolUse (or PostToolUseFailure when is_error). Return additional context, or None."""
        event = "PostToolUseFailure" if is_error else "PostToolUse"
        data: dict[str, Any] = {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_use_id}
        if is_error:
            data.update(error=_plain(response), is_interrupt=False)
        else:
            data["tool_response"] = _jsonable(response)
        outs = await self._fire(event, name, data, tool_use_id)
        self._notes(event, outs)
        feedback = [o.stderr.strip() for o in outs if o.exit_code == 2 and o.stderr.strip()]
        feedback += [str(o.out["reason"]) for o in outs if o.out.get("decision") == "block" and o.out.get("reason")]
        return _join(feedback + _contexts(outs, plain_stdout=False))

    async def stop(self, stop_hook_active: bool) -> str | None:
        """Return a reason to make the agent continue (a blocking Stop hook), or None."""
        return await self._stop("Stop", stop_hook_active)

    async def subagent_start(self, agent_type: str) -> str | None:
        """A subagent is starting (matchers match `agent_type`). Returns additional context for
        the subagent's first message, or None. Called by agents.SubagentHooks."""
        outs = await self._fire("SubagentStart", agent_type, {})
        self._notes("SubagentStart", outs)
        return _join(_contexts(outs, plain_stdout=False))

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
        return _cap("; ".join(blocks)) if blocks else None

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
        return _cap("; ".join(reasons)) if reasons else None

    # -- running hooks ---------------------------------------------------------------------------

    def _input(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        c = self.state.context
        return {"session_id": c.session_id, "transcript_path": c.transcript_path, "cwd": c.cwd,
                "permission_mode": c.permission_mode, "hook_event_name": event, **data}

    async def _fire(self, event: str, target: str | None, data: dict[str, Any],
                    tool_use_id: str | None = None) -> list[_Outcome]:
        jobs = self.registry.jobs(event, target)
        if not jobs:
            return []
        payload = self._input(event, data)
        with self.obs.span(f"hook {event}", {"loopwright.hook.event": event, "loopwright.hook.count": len(jobs)}):
            return list(await asyncio.gather(*(self._run_one(event, h, t, payload, tool_use_id) for h, t in jobs)))

    async def _run_one(self, event: str, hook: HookCallback | CommandHook, timeout: float,
                       payload: dict[str, Any], tool_use_id: str | None) -> _Outcome:
        if isinstance(hook, CommandHook):
            return await self._run_command(event, hook, timeout, payload)
        label = getattr(hook, "__qualname__", None) or repr(hook)
        try:
            value = await asyncio.wait_for(self._call(hook, payload, tool_use_id), timeout)
        except TimeoutError:
            self._report(event, label, "timeout", f"timed out after {timeout:g} s")
            return _Outcome(label, failed=True, error=f"timed out after {timeout:g} s")
        except Exception as e:
            self._report(event, label, "error", f"raised {type(e).__name__}: {e}")
            return _Outcome(label, failed=True, error=f"raised {type(e).__name__}: {e}")
        if value is None:
            return _Outcome(label)
        if isinstance(value, dict):
            return _Outcome(label, output=_python_names(value))
        if isinstance(value, str):
            return _Outcome(label, stdout=value)
        self._report(event, label, "error", f"returned {type(value).__name__}, not a dict; ignored")
        return _Outcome(label, failed=True, error=f"returned {type(value).__name__}, not a dict")

    async def _call(self, fn: HookCallback, payload: dict[str, Any], tool_use_id: str | None) -> Any:
        try:
            n = len([p for p in inspect.signature(fn).parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
        except (TypeError, ValueError):
            n = 1
        args = (payload, tool_use_id, self.state.context)[:max(1, min(n, 3))]
        if inspect.iscoroutinefunction(fn):
            return await fn(*args)
        value = await _in_daemon_thread(fn, *args)  # a slow sync hook must not block the loop
        if inspect.isawaitable(value):
            value = await value
        return value

    async def _run_command(self, event: str, hook: CommandHook, timeout: float,
                           payload: dict[str, Any]) -> _Outcome:
        label = hook.command if len(hook.command) <= 80 else hook.command[:77] + "..."
        cwd = self.state.context.cwd or None
        env = {**os.environ, **self.registry.env, **trace_env()}  # TRACEPARENT: the hook's span (telemetry on)
        if cwd:
            env.setdefault("LOOPWRIGHT_PROJECT_DIR", cwd)
            env.setdefault("CLAUDE_PROJECT_DIR", cwd)
        try:
            proc = await asyncio.create_subprocess_shell(
                hook.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=cwd, env=env, start_new_session=True)
        except OSError as e:
            self._report(event, label, "error", f"could not start: {e}")
            return _Outcome(label, failed=True, error=f"could not start: {e}")
        data = json.dumps(payload, default=str).encode()
        try:
            out, err = await asyncio.wait_for(proc.communicate(data), timeout)
        except TimeoutError:
            _kill_group(proc.pid)
            with contextlib.suppress(TimeoutError, ProcessLookupError):
                await asyncio.wait_for(proc.wait(), 5)
            self._report(event, label, "timeout", f"timed out after {timeout:g} s; its processes were killed")
            return _Outcome(label, failed=True, error=f"timed out after {timeout:g} s")
        except asyncio.CancelledError:
            _kill_group(proc.pid)  # the run was interrupted: leave nothing behind
            raise
        stdout = out.decode(errors="replace")
        stderr = err.decode(errors="replace")
        code = proc.returncode if proc.returncode is not None else -1
        outcome = _Outcome(label, code, stdout, stderr)
        if code == 0:
            text = stdout.strip()
            if text.startswith("{"):
                try:
                    parsed = json.loads(text)
                except json.JSONDecodeError as e:
                    self._report(event, label, "error", f"printed invalid JSON ({e}); treated as text")
                else:
                    if isinstance(parsed, dict):
                        outcome.output, outcome.stdout = parsed, ""
        elif code != 2:
            msg = stderr.strip() or stdout.strip() or "(no output)"
            self._report(event, label, "error", f"exited with status {code}: {_cap(msg, 2000)}")
            outcome.failed = True  # a non-blocking error, as in Claude Code (no `error`: not fail-closed)
        return outcome

    # -- results shared by all events ------------------------------------------------------------

    def _notes(self, event: str, outs: list[_Outcome], blocking_to_user: bool = False) -> None:
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


@dataclass
class Hooks(RunHooks):
    """Hooks as the user registers them (`on`, `command`, or the Agent SDK's dict). A run never
    uses this object: the assembler freezes it into the run's HookRegistry and gives the run its
    own HookState (`for_run`), so one Hooks may serve many runs at once and per-run state such as
    `continue: false` never crosses runs. Fired directly (after `bind`), it runs with its own state."""

    callbacks: dict[str, list[Any]] = field(default_factory=dict)
    context: HookContext = field(default_factory=HookContext)
    env: dict[str, str] = field(default_factory=dict)  # extra environment for command hooks

    def __post_init__(self) -> None:
        normalized: dict[str, list[HookMatcher]] = {}
        for event, entries in (self.callbacks or {}).items():
            _check_event(event)
            if entries is not None and not isinstance(entries, (list, tuple)):
                raise TypeError(f"hooks[{event!r}] must be a list of HookMatcher, not {type(entries).__name__}; "
                                f"write hooks={{{event!r}: [HookMatcher(matcher=None, hooks=[...])]}} or use "
                                f"Hooks().on({event!r}, fn)")
            normalized[event] = [_as_matcher(e) for e in (entries or [])]
        self.callbacks = normalized
        self.state = HookState(self.context)
        self._frozen: HookRegistry | None = None  # set on a run's copy (for_run)

    # -- registration ----------------------------------------------------------------------------

    def on(self, event: str, callback: HookCallback | None = None, *, matcher: str | None = None,
           timeout: float | None = None) -> Any:
        """Register a callable; usable as `hooks.on("Stop", fn)` or as a decorator."""
        _check_event(event)

        def register(fn: HookCallback) -> HookCallback:
            self.callbacks.setdefault(event, []).append(HookMatcher(matcher, [fn], timeout))
            return fn

        return register(callback) if callback is not None else register

    def command(self, event: str, command: str, *, matcher: str | None = None,
                timeout: float | None = None) -> Hooks:
        """Register a shell command hook."""
        _check_event(event)
        self.callbacks.setdefault(event, []).append(HookMatcher(matcher, [CommandHook(command, timeout)]))
        return self

    def merged(self, other: Hooks | dict[str, Any] | None) -> Hooks:
        """A new Hooks with this one's hooks, then `other`'s (neither is changed)."""
        out = Hooks({e: list(ms) for e, ms in self.callbacks.items()}, env=dict(self.env))
        extra = other if isinstance(other, Hooks) else Hooks(other or {})
        for e, ms in extra.callbacks.items():
            out.callbacks.setdefault(e, []).extend(ms)
        out.env.update(extra.env)
        return out

    def freeze(self) -> HookRegistry:
        """The hooks registered so far, frozen (later registrations do not reach it)."""
        matchers = {e: tuple(RegisteredMatcher(m.matcher, tuple(m.hooks), m.timeout) for m in ms)
                    for e, ms in self.callbacks.items()}
        return HookRegistry(MappingProxyType(matchers), MappingProxyType(dict(self.env)))

    @property
    def registry(self) -> HookRegistry:
        """What fires: a run's frozen registry, or (fired directly) the hooks registered so far."""
        return self._frozen if self._frozen is not None else self.freeze()

    @registry.setter
    def registry(self, value: HookRegistry) -> None:
        self._frozen = value

    @property
    def active(self) -> bool:
        return self._frozen.active if self._frozen is not None else any(self.callbacks.values())

    def for_run(self, context: HookContext, registry: HookRegistry | None = None) -> RunHooks:
        """One run's hooks: `registry` (this object's hooks, frozen, when not given) with a fresh
        HookState. A subclass keeps its behaviour: a copy of it runs (the caller's object is
        not changed)."""
        frozen = registry if registry is not None else self.freeze()
        if type(self) is Hooks:
            return RunHooks(frozen, HookState(context))
        mine = copy.copy(self)
        mine.registry, mine.state, mine.context = frozen, HookState(context), context
        return mine

    def bind(self, context: HookContext) -> None:
        """Fire this object's hooks directly (not in a run): its context, and fresh state."""
        self.context = context
        self.state = HookState(context)


def run_hooks(registry: HookRegistry, context: HookContext, given: object = None) -> RunHooks:
    """One run's hooks: `registry` (built once, by settings.build_run_config) fired with a fresh
    HookState. `given`: the caller's `AgentOptions.hooks`; a Hooks subclass keeps its behaviour."""
    if isinstance(given, Hooks):
        return given.for_run(context, registry)
    return RunHooks(registry, HookState(context))


def _check_event(event: str) -> None:
    """A name that is no Claude Code event is a mistake in the caller's code (a settings file's is
    a warning instead: settings.py). A Claude Code event loopwright does not fire is accepted and
    named when a run starts (HookRegistry.unfired)."""
    if event not in CLAUDE_HOOK_EVENTS:
        raise ValueError(f"unknown hook event {event!r}; use one of {', '.join(CLAUDE_HOOK_EVENTS)}")


def _as_matcher(entry: Any) -> HookMatcher:
    if isinstance(entry, HookMatcher):
        entry.hooks = [CommandHook(h) if isinstance(h, str) else h for h in entry.hooks]
        return entry
    if isinstance(entry, (CommandHook, str)) or callable(entry):
        return HookMatcher(None, [CommandHook(entry) if isinstance(entry, str) else entry])
    raise TypeError(f"a hook must be a HookMatcher, a callable or a command string, not {type(entry).__name__}")


async def _in_daemon_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run a sync hook in a daemon thread: unlike the default executor, a hook still running
    after its timeout does not hold up the end of asyncio.run()."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            future.set_result(value) if ok else future.set_exception(value)

    def work() -> None:
        try:
            value, ok = fn(*args), True
        except BaseException as e:  # delivered to the awaiting task
            value, ok = e, False
        with contextlib.suppress(RuntimeError):  # the loop may be closed by now
            loop.call_soon_threadsafe(settle, ok, value)

    threading.Thread(target=work, name="loopwright-hook", daemon=True).start()
    return await future


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pid, signal.SIGKILL)


def _contexts(outs: list[_Outcome], plain_stdout: bool) -> list[str]:
    texts: list[str] = []
    for o in outs:
        spec = (o.output or {}).get("hookSpecificOutput")
        if isinstance(spec, dict) and spec.get("additionalContext"):
            texts.append(str(spec["additionalContext"]))
        elif plain_stdout and o.exit_code == 0 and o.output is None and o.stdout.strip():
            texts.append(o.stdout.strip())
    return texts


def _join(texts: list[str]) -> str | None:
    texts = [t for t in texts if t]
    return _cap("\n\n".join(texts)) if texts else None


def _cap(text: str, limit: int = _MAX_REASON) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(getattr(b, "text", "") or "" for b in value)
    return str(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, list):
        return [b.to_wire() if hasattr(b, "to_wire") else b for b in value]
    return value


def _python_names(out: dict[str, Any]) -> dict[str, Any]:
    """A Python hook's output with the Agent SDK's keyword-safe names, `continue_` and `async_`,
    as the wire's `continue` and `async` (the wire name wins when both are given)."""
    if "continue_" not in out and "async_" not in out:
        return out
    renamed = {k.rstrip("_") if k in ("continue_", "async_") else k: v for k, v in out.items()}
    return {**renamed, **{k: out[k] for k in ("continue", "async") if k in out}}
