"""Room: bases. Owns the hooks package's public names (its modules: config, kinds, matching, runner,
output, results, events, registry); may import its modules and data types only.

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

from typing import TYPE_CHECKING, Any

from .config import DEFAULT_TIMEOUT, HOOK_EVENTS, HookContext, HookRegistry
from .events import HookState, RunHooks
from .matching import matcher_matches
from .registry import Hooks, run_hooks

if TYPE_CHECKING:
    from ..event_types import HOOK_INPUTS as HOOK_INPUTS
    from ..event_types import BaseHookInput as BaseHookInput
    from ..event_types import ContextHookSpecificOutput as ContextHookSpecificOutput
    from ..event_types import HookInput as HookInput
    from ..event_types import HookJSONOutput as HookJSONOutput
    from ..event_types import HookReportData as HookReportData
    from ..event_types import PostToolUseFailureHookInput as PostToolUseFailureHookInput
    from ..event_types import PostToolUseHookInput as PostToolUseHookInput
    from ..event_types import PreCompactHookInput as PreCompactHookInput
    from ..event_types import PreToolUseHookInput as PreToolUseHookInput
    from ..event_types import PreToolUseHookSpecificOutput as PreToolUseHookSpecificOutput
    from ..event_types import SessionEndHookInput as SessionEndHookInput
    from ..event_types import SessionStartHookInput as SessionStartHookInput
    from ..event_types import StopHookInput as StopHookInput
    from ..event_types import SubagentStartHookInput as SubagentStartHookInput
    from ..event_types import SubagentStopHookInput as SubagentStopHookInput
    from ..event_types import UserPromptSubmitHookInput as UserPromptSubmitHookInput
    from .kinds import CLAUDE_HOOK_EVENTS as CLAUDE_HOOK_EVENTS
    from .kinds import CommandHook as CommandHook
    from .kinds import HookCallback as HookCallback
    from .kinds import HookMatcher as HookMatcher
    from .kinds import RegisteredMatcher as RegisteredMatcher
    from .kinds import parse_matchers as parse_matchers
    from .results import PreToolResult as PreToolResult
    from .results import PromptResult as PromptResult

# The typed events, what hooks get and may return (PreToolUseHookInput, ..., HookJSONOutput, as in the
# Agent SDK): TypedDicts in event_types.py, named here and handed out on first access.
_EVENT_TYPES = frozenset({"BaseHookInput", "PreToolUseHookInput", "PostToolUseHookInput",
    "PostToolUseFailureHookInput", "UserPromptSubmitHookInput", "SessionStartHookInput",
    "SessionEndHookInput", "StopHookInput", "SubagentStartHookInput", "SubagentStopHookInput",
    "PreCompactHookInput", "HookInput", "HOOK_INPUTS", "PreToolUseHookSpecificOutput",
    "ContextHookSpecificOutput", "HookJSONOutput"})


# The kinds of hook and what hooks decide: a run without hooks never needs them, so they are
# loaded on first access (hooks.kinds, hooks.results: ~27 M instructions of a plain `-p` start, issue 41).
_KINDS = frozenset({"CLAUDE_HOOK_EVENTS", "CommandHook", "HookCallback", "HookMatcher", "RegisteredMatcher",
                    "parse_matchers"})
_RESULTS = frozenset({"PreToolResult", "PromptResult"})


def __getattr__(name: str) -> Any:
    if name in _EVENT_TYPES:
        from .. import event_types

        return getattr(event_types, name)
    if name in _KINDS:
        from . import kinds

        return getattr(kinds, name)
    if name in _RESULTS:
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CLAUDE_HOOK_EVENTS", "DEFAULT_TIMEOUT", "HOOK_EVENTS", "CommandHook", "HookCallback", "HookContext",
           "HookMatcher", "HookRegistry", "HookState", "Hooks", "PreToolResult", "PromptResult", "RegisteredMatcher",
           "RunHooks", "matcher_matches", "parse_matchers", "run_hooks"]
