"""Room: data types. Owns the TypedDicts that type event payloads: SystemMessage.data per subtype
and the hooks' inputs and outputs (the Agent SDK's names); may import nothing of loopwright.

Annotations only: nothing on a run's way imports this module (messages.py and hooks.py name these
under TYPE_CHECKING and hand them out on first access, PEP 562), because building ~30 TypedDicts is
~2 ms of every process start (a CLI per SDK session)."""

from __future__ import annotations

from typing import Any, Literal, Required, TypeAlias, TypedDict

# --- SystemMessage.data, per subtype (the Agent SDK types these the same way) ------------------

class _InitRequired(TypedDict):

    session_id: str
    model: str
    cwd: str
    tools: list[str]
    permission_mode: str
    max_turns: int | None
    max_budget_usd: float | None
    apiKeySource: str  # where the Anthropic credential comes from, in Claude Code's words (models.base)


class InitData(_InitRequired, total=False):
    """`init`: the run's setup, first message of every run."""

    memory_files: list[dict[str, Any]]  # memory.py, when project memory was loaded
    warnings: list[str]  # about the user's own files (memory, skills)


class ApiRetryData(TypedDict, total=False):
    """`api_retry`: a model call failed and is retried after `delay_ms`."""

    attempt: int
    max_retries: int
    delay_ms: int
    error_status: int | None
    error: str


class CompactBoundaryData(TypedDict, total=False):
    """`compact_boundary`: h was replaced by a summary and the kept turns (context.py)."""

    trigger: str  # "auto" | "manual" | "overflow" (the server refused the request as over its window)
    pre_tokens: int
    post_tokens: int
    summarized_messages: int
    kept_messages: int
    cost_usd: float
    usage: dict[str, Any]
    calls: int  # summarizing calls: more than one when h was larger than a window a server told
    forecast_tokens: int  # auto only
    context_window: int  # auto and overflow
    prompt_tokens: int | None  # overflow: the refused request's size, as the server counted it


class ContextWindowData(TypedDict, total=False):
    """`context_window`: W as a server told it, before the first call or in its overflow error
    (models/window.py)."""

    context_window: int
    source: str  # "server" (asked before the first call) | "error" (its overflow error)
    prompt_tokens: int | None  # error only
    error: str  # error only


class CompactErrorData(TypedDict):
    """`compact_error`: compaction failed or was blocked; h is unchanged."""

    trigger: str
    error: str


class HookReportData(TypedDict, total=False):
    """`hook_error` / `hook_message`: a hook failed, or said `systemMessage`."""

    hook_event_name: str
    hook: str
    kind: str  # "error" | "timeout" | "message" | "blocked"; "started" | "response" (--include-hook-events)
    hook_id: str  # started / response: Claude Code's hook_started / hook_response lines
    hook_name: str
    hook_event: str
    output: str
    stdout: str
    stderr: str
    exit_code: int
    outcome: str
    message: str
    parent_tool_use_id: str  # relayed from a subagent


class PermissionDenial(TypedDict):
    """One refused tool call in ResultMessage.permission_denials (the Agent SDK's shape)."""

    tool_name: str
    tool_use_id: str
    tool_input: dict[str, Any]


class ModelFallbackData(TypedDict):
    """`model_fallback`: the model was overloaded or unavailable after its retries; this request
    and the rest of the run go to `to_model` (models/fallback.py)."""

    from_model: str
    to_model: str
    error: str
    status: int | None


SystemData: TypeAlias = (InitData | ApiRetryData | CompactBoundaryData | CompactErrorData | HookReportData
                         | ModelFallbackData | ContextWindowData)


# --- typed events: what hooks get and may return (the Agent SDK's hook types) -------------------

class _SubagentFields(TypedDict, total=False):
    """Present when the hook fires inside a subagent (agents.py)."""

    agent_id: str
    agent_type: str
    agent_transcript_path: str


class BaseHookInput(_SubagentFields):
    """Fields every hook input carries (Claude Code's stdin JSON)."""

    session_id: str
    transcript_path: str
    cwd: str
    permission_mode: str
    hook_event_name: str


class PreToolUseHookInput(BaseHookInput):
    """Before a tool call runs (after the model asked for it, before the gate's rules): the hook may
    deny it, ask, allow it, or rewrite its input (the rewritten input is judged again)."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseHookInput(BaseHookInput):
    """After a tool call succeeded: `tool_response` is the tool's structured output when it has one
    (Claude Code's: Bash's {stdout, stderr, ...}, Write's {type, filePath, ...}; docs/tool-results.md),
    else its result for the model."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    tool_response: Any


class PostToolUseFailureHookInput(BaseHookInput):
    """After a tool call failed: `error` is its message; `is_interrupt` when it was interrupted."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    error: str
    is_interrupt: bool


class UserPromptSubmitHookInput(BaseHookInput):
    """A prompt is about to start a run: the hook may block it or add context for the model."""

    prompt: str


class SessionStartHookInput(BaseHookInput):
    """A session starts or resumes (`source`: startup, resume, clear or compact); its output's
    `additionalContext` joins the first prompt."""

    source: str  # "startup" | "resume" | "clear" | "compact"


class SessionEndHookInput(BaseHookInput):
    """A session ends (`reason`: why, e.g. clear, logout, prompt_input_exit, other)."""

    reason: str


class StopHookInput(BaseHookInput, total=False):
    """The model answered without a tool call and the run would end: the hook may make it go on
    (`decision: "block"` with a reason for the model); `stop_hook_active` when it already did."""

    stop_hook_active: Required[bool]
    last_assistant_message: str  # the text of that answer


class SubagentStartHookInput(BaseHookInput):
    """A subagent is starting (its `agent_id` and `agent_type` are set)."""


class SubagentStopHookInput(BaseHookInput, total=False):
    """A subagent would end (also when it ended in an error: `error`): the hook may make it go on."""

    stop_hook_active: Required[bool]
    last_assistant_message: str
    error: str  # set when the subagent ended in an error (its result subtype and message)


class PreCompactHookInput(BaseHookInput):
    """Before the history is compacted (`trigger`: manual or auto); the hook may block it."""

    trigger: str  # "manual" | "auto"
    custom_instructions: str


class InstructionsLoadedHookInput(BaseHookInput):
    file_path: str
    memory_type: str  # "User" | "Project" | "Local"
    load_reason: str  # "session_start" | "include"


class PostCompactHookInput(BaseHookInput):
    trigger: str  # "manual" | "auto"
    compact_summary: str


class PermissionRequestHookInput(BaseHookInput, total=False):
    """An ask about to reach the user (or be refused: no one to ask)."""

    tool_name: Required[str]
    tool_input: Required[dict[str, Any]]
    permission_suggestions: list[dict[str, Any]]


class NotificationHookInput(BaseHookInput, total=False):
    message: Required[str]
    notification_type: Required[str]  # "permission_prompt", ...
    title: str


class PostToolBatchHookInput(BaseHookInput):
    """A turn's tool calls all ran: each {tool_name, tool_input, tool_use_id, tool_response}."""

    tool_calls: list[dict[str, Any]]


class StopFailureHookInput(BaseHookInput, total=False):
    """The turn ended on a model error (`error`: rate_limit, server_error, authentication_failed, ...)."""

    error: Required[str]
    error_details: str
    last_assistant_message: str


class PermissionDeniedHookInput(BaseHookInput):
    """Auto mode's classifier refused a call (`reason`: its refusal); `retry: true` lets the model retry."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    reason: str


class ModelSwitchHookInput(BaseHookInput):
    """Pre/PostModelSwitch (/model: `source` "command"; LoopwrightClient.set_model: "sdk"): the models,
    what the next request re-sends, and what re-caching it on the new model costs."""

    from_model: str
    to_model: str
    requested_model: str | None
    source: str
    context_tokens: int
    prompt_cache_warm: bool
    cache_ttl: str
    estimated_cache_write_usd: float
    pricing: str  # "configured" | "catalog" | "default"


class DirectoryAddedHookInput(BaseHookInput):
    """A working directory was added (`source`: "slash_command" for /add-dir)."""

    directory: str
    source: str


class CwdChangedHookInput(BaseHookInput):
    """The Bash tool's shell moved (a `cd`): where it was and where its next commands start."""

    old_cwd: str
    new_cwd: str


class ConfigChangeHookInput(BaseHookInput):
    """A settings file changed during the run (`source` user_settings, project_settings or
    local_settings); a hook may block the change (exit 2, `decision: "block"`)."""

    source: str
    file_path: str


class FileChangedHookInput(BaseHookInput):
    """A watched file changed (`event` change, add or unlink)."""

    file_path: str
    event: str


class ElicitationHookInput(BaseHookInput, total=False):
    """An MCP server asks the user (`mode` form or url); a hook may answer instead of the dialog."""

    mcp_server_name: Required[str]
    message: Required[str]
    mode: str
    url: str
    elicitation_id: str
    requested_schema: dict[str, Any]


class ElicitationResultHookInput(BaseHookInput, total=False):
    """The answer about to go back to an MCP server; a hook may override it."""

    mcp_server_name: Required[str]
    action: Required[str]  # "accept" | "decline" | "cancel"
    elicitation_id: str
    mode: str
    content: dict[str, Any]


class TaskHookInput(BaseHookInput, total=False):
    """TaskCreated (TaskCreate makes a task) and TaskCompleted (TaskUpdate marks one completed)."""

    task_id: Required[str]
    task_subject: Required[str]
    task_description: str


class WorktreeCreateHookInput(BaseHookInput):
    """A worktree is wanted (`--worktree NAME`, a subagent's `isolation: worktree`): a hook makes it
    and prints its path."""

    name: str


class WorktreeRemoveHookInput(BaseHookInput):
    """A worktree a WorktreeCreate hook made is being removed."""

    worktree_path: str


class UserPromptExpansionHookInput(BaseHookInput, total=False):
    """A `/name args` prompt expands: a custom command (slash_command) or an MCP prompt (mcp_prompt)."""

    expansion_type: Required[str]  # "slash_command" | "mcp_prompt"
    command_name: Required[str]
    command_args: Required[str]
    command_source: str  # userSettings | projectSettings | plugin (a custom command's)
    prompt: Required[str]  # as typed


class SetupHookInput(BaseHookInput):
    """`--init`/`--init-only` (trigger "init") or `--maintenance` ("maintenance"), before SessionStart."""

    trigger: str


class MessageDisplayHookInput(BaseHookInput):
    """An assistant message about to be shown (in -p and SDK sessions: once, whole, `final`)."""

    turn_id: str
    message_id: str
    index: int
    final: bool
    delta: str


class PreSkillShellCommandHookInput(BaseHookInput, total=False):
    """A command's inline shell command (`` !`cmd` ``) is about to run; a hook may refuse it."""

    tool_name: Required[str]  # "Bash"
    tool_input: Required[dict[str, Any]]  # {"command": ...}
    tool_use_id: Required[str]  # names no tool call in the transcript
    command_name: Required[str]
    command_source: str
    invoked_by: Required[str]  # "user" | "claude" | "other"


HookInput: TypeAlias = (
    PreToolUseHookInput | PostToolUseHookInput | PostToolUseFailureHookInput | UserPromptSubmitHookInput
    | SessionStartHookInput | SessionEndHookInput | StopHookInput | SubagentStartHookInput | SubagentStopHookInput
    | PreCompactHookInput | PostCompactHookInput | PermissionRequestHookInput | NotificationHookInput
    | PostToolBatchHookInput | StopFailureHookInput | InstructionsLoadedHookInput | PermissionDeniedHookInput
    | ModelSwitchHookInput | DirectoryAddedHookInput | CwdChangedHookInput
    | ElicitationHookInput | ElicitationResultHookInput | TaskHookInput | WorktreeCreateHookInput
    | WorktreeRemoveHookInput
    | UserPromptExpansionHookInput | PreSkillShellCommandHookInput | ConfigChangeHookInput | FileChangedHookInput
    | SetupHookInput | MessageDisplayHookInput
)
HOOK_INPUTS: dict[str, type] = {
    "PreToolUse": PreToolUseHookInput, "PostToolUse": PostToolUseHookInput,
    "PostToolUseFailure": PostToolUseFailureHookInput, "UserPromptSubmit": UserPromptSubmitHookInput,
    "SessionStart": SessionStartHookInput, "SessionEnd": SessionEndHookInput, "Stop": StopHookInput,
    "SubagentStart": SubagentStartHookInput, "SubagentStop": SubagentStopHookInput,
    "PreCompact": PreCompactHookInput, "PostCompact": PostCompactHookInput,
    "PermissionRequest": PermissionRequestHookInput, "Notification": NotificationHookInput,
    "PostToolBatch": PostToolBatchHookInput, "StopFailure": StopFailureHookInput,
    "InstructionsLoaded": InstructionsLoadedHookInput, "PermissionDenied": PermissionDeniedHookInput,
    "PreModelSwitch": ModelSwitchHookInput, "PostModelSwitch": ModelSwitchHookInput,
    "DirectoryAdded": DirectoryAddedHookInput, "CwdChanged": CwdChangedHookInput,
    "Elicitation": ElicitationHookInput, "ElicitationResult": ElicitationResultHookInput,
    "TaskCreated": TaskHookInput, "TaskCompleted": TaskHookInput,
    "WorktreeCreate": WorktreeCreateHookInput, "WorktreeRemove": WorktreeRemoveHookInput,
    "UserPromptExpansion": UserPromptExpansionHookInput, "PreSkillShellCommand": PreSkillShellCommandHookInput,
    "ConfigChange": ConfigChangeHookInput, "FileChanged": FileChangedHookInput,
    "Setup": SetupHookInput, "MessageDisplay": MessageDisplayHookInput,
}


class PreToolUseHookSpecificOutput(TypedDict, total=False):
    hookEventName: Required[Literal["PreToolUse"]]
    permissionDecision: Literal["allow", "deny", "ask"]
    permissionDecisionReason: str
    updatedInput: dict[str, Any]
    additionalContext: str  # for the model, with the call's result (or its refusal)


class ContextHookSpecificOutput(TypedDict, total=False):
    """UserPromptSubmit, SessionStart, SubagentStart, PostToolUse(Failure): text added for the model."""

    hookEventName: Required[str]
    additionalContext: str


# `continue` is a Python keyword, hence the functional form.
HookJSONOutput = TypedDict("HookJSONOutput", {
    "continue": bool,
    "continue_": bool,  # the Agent SDK's Python spelling of "continue" (and "async_" of "async")
    "async_": bool,
    "stopReason": str,
    "suppressOutput": bool,
    "systemMessage": str,
    "decision": Literal["approve", "block"],
    "reason": str,
    "hookSpecificOutput": PreToolUseHookSpecificOutput | ContextHookSpecificOutput,
}, total=False)
HookJSONOutput.__doc__ = """What a hook may return (Claude Code's hook JSON; a Python hook returns it as a dict):
`continue: False` (or `continue_`) ends the run with `stopReason`; `decision: "block"` with a
`reason` blocks a prompt or makes a Stop go on; `systemMessage` is shown to the user
(`suppressOutput` keeps it out of the stream); `hookSpecificOutput` carries a PreToolUse
decision (`permissionDecision`, `updatedInput`) or `additionalContext` for the model."""
