"""Room: data types. Owns the message classes query() yields; may import blocks and usage only.

What `query()` yields: the Claude Agent SDK's message classes (seed §8)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias

from .blocks import Block, ToolResultBlock, WireMessage, blocks_to_wire
from .typevars import OutputT as OutputT  # (re-exported: ResultMessage[T]'s T)
from .usage import CallUsage, Usage

if TYPE_CHECKING:

    from .event_types import ApiRetryData as ApiRetryData
    from .event_types import CompactBoundaryData as CompactBoundaryData
    from .event_types import CompactErrorData as CompactErrorData
    from .event_types import ContextWindowData as ContextWindowData
    from .event_types import HookReportData as HookReportData
    from .event_types import InitData as InitData
    from .event_types import ModelFallbackData as ModelFallbackData
    from .event_types import PermissionDenial as PermissionDenial
    from .event_types import SystemData as SystemData


class TranscriptWriteError(Exception):
    """The transcript could not be written (disk full, quota, file size limit). The run ends
    with an error result; the lines already on disk stay whole, so the session stays loadable.
    (Raised by sessions; defined here so a caller can catch it without loading the store.)"""

    def __init__(self, message: str, session_id: str = "") -> None:
        super().__init__(message)
        self.session_id = session_id


ResultSubtype = Literal[
    "success",
    "error_max_turns",
    "error_max_budget_usd",
    "error_during_execution",
    "error_max_structured_output_retries",
    # usage limits (limits.py): each cap stops with its own subtype
    "error_max_requests",
    "error_max_input_tokens",
    "error_max_output_tokens",
    "error_max_total_tokens",
    # an output guardrail rejected the answer more often than the retries allow (guardrails.py)
    "error_output_rejected",
]


# SystemMessage.data per subtype (InitData, ...) and PermissionDenial: TypedDicts in event_types.py,
# named here for annotations and handed out on first access (they are not built at start-up).
_EVENT_TYPES = frozenset({"InitData", "ApiRetryData", "CompactBoundaryData", "ContextWindowData",
    "CompactErrorData", "HookReportData", "PermissionDenial", "ModelFallbackData", "SystemData"})


def __getattr__(name: str) -> Any:
    if name in _EVENT_TYPES:
        from . import event_types

        return getattr(event_types, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(slots=True)
class SystemMessage:
    """A session event: `init`, `api_retry`, `compact_boundary`, `compact_error`, `hook_error`,
    `hook_message`, `model_fallback`, `context_window` (W as a server told it: {context_window,
    source: "server" | "error", ...}), `config_change` (a settings file changed mid-run: {file_path,
    source, applied, message}), `file_watch` (FileChanged's watch list capped: {message}). `data` has the shape of the subtype's TypedDict (InitData, ...: event_types.py)."""

    subtype: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class AssistantMessage:
    """One model response as the run yields it: its blocks, the model, the stop reason and the
    call's usage."""

    content: list[Block]
    model: str
    stop_reason: str | None = None
    usage: CallUsage | None = None
    parent_tool_use_id: str | None = None

    def to_wire(self) -> WireMessage:
        """This message in the Messages API\'s wire format (a dict with role and content)."""
        return {"role": "assistant", "content": blocks_to_wire(self.content)}


@dataclass(slots=True)
class UserMessage:
    """The user message b of seed Def 3.1 step 4 (tool results first, then queued text), or one the
    loop wrote itself (`is_synthetic`: the reminder after an empty answer)."""

    content: list[Block]
    parent_tool_use_id: str | None = None
    uuid: str | None = None  # its line in the session transcript (when the session is saved)
    # Written by the loop, not by the user or a tool (the reminder after an empty answer): Claude
    # Code's `isSynthetic` user message in stream-json.
    is_synthetic: bool = False
    # The hook whose feedback it is (a blocking Stop hook's reason: "Stop"): the transcript marks its
    # line as Claude Code does (isMeta, hookText), and no replay shows it as the user's words.
    hook_event: str | None = None

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        """The tool_result blocks of this message (a turn's results come first, in emission order)."""
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    def to_wire(self) -> WireMessage:
        """This message in the Messages API\'s wire format (a dict with role and content)."""
        return {"role": "user", "content": blocks_to_wire(self.content)}


@dataclass(slots=True)
class StreamEvent:
    """A raw partial event of a streaming model call (include_partial_messages)."""

    event: dict[str, Any]
    session_id: str = ""
    parent_tool_use_id: str | None = None


def _clip(text: str | None, limit: int = 200) -> str | None:
    return text if text is None or len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True, repr=False)  # (repr=False: its own __repr__ below; the generated one was built and dropped)
class ResultMessage(Generic[OutputT]):
    """The last message of every run: how it ended (subtype), the final history, turns, calls, cost
    and usage; `output` is its answer as the run's output_type (a T of ResultMessage[T])."""

    subtype: ResultSubtype
    """How the run ended: `success`, `error_max_turns`, `error_max_budget_usd`, `error_during_execution`,
    `error_max_structured_output_retries`, or a usage limit's or a guardrail's own subtype."""
    is_error: bool
    """The run did not end in `success` (the CLI exits 1)."""
    num_turns: int
    """Tool-use turns t (seed Def 3.1): a run answered without tools has 0."""
    model_calls: int
    """Model calls made by the run's loop (at most `max_turns` + 1, Thm 4.1)."""
    messages: list[WireMessage]
    """The final history h in the Messages API's wire format (Inv holds on it)."""
    result: str | None
    """The final answer's text; on an error, the error's message."""
    stop_reason: str | None
    """The last response's stop reason (`end_turn`, `tool_use`, `max_tokens`, ...)."""
    total_cost_usd: float
    """What the run cost: its calls, its subagents' and its compactions' (Prop 5.4's S)."""
    usage: Usage
    """Tokens of all the run's calls in the Messages API's convention (`input_tokens` without the cached)."""
    call_usage: list[CallUsage]
    """One record per model call k: n_k (all its input tokens), output, cache writes and reads, cost."""
    duration_ms: int
    """Wall time of the run."""
    duration_api_ms: int
    """Time spent waiting for the model."""
    session_id: str
    """The session's id (`resume=` continues it; a UUID or a safe name, never a path)."""
    permission_denials: list[PermissionDenial]
    """The calls the gate refused: tool name, tool_use id and input."""
    errors: list[str] = field(default_factory=list)
    """Why a failed run failed, one message each (the repr shows them first)."""
    subagent_call_usage: list[CallUsage] = field(default_factory=list)
    """Subagents' model calls. `total_cost_usd` and `usage` include them; `call_usage` and
    `model_calls` are the run's own calls only."""
    user_message_uuid: str | None = None
    """The uuid of this run's prompt in the saved session (None when not persisted): what
    `rewind_files(session_id, user_message_uuid)` takes to undo this run's file changes."""
    structured_output: Any = None
    """The answer of a run with an output schema: the JSON value, or the pydantic model instance when
    `AgentOptions.output_type` is set."""
    has_structured_output: bool = False
    """The run had an output type or schema: `output` is `structured_output`."""
    local_command: str | None = None
    """Claude Code's `local_command`: "custom" when a custom command's expansion ended the prompt
    without a model call (a UserPromptExpansion hook stopped it, or its inline shell failed): a
    `success` whose `result` says why, as in Claude Code."""
    api_error_status: int | None = None
    """The HTTP status of the model API error that ended the run (Claude Code's `api_error_status`)."""
    api_error: bool = False
    """The run ended on a model API error (after its retries): `terminal_reason` "api_error"."""

    def __repr__(self) -> str:
        """How the run ended, first the reason when it failed; the history and per-call figures are
        left out (they can be megabytes: read `messages` and `call_usage`)."""
        said = (f"errors={self.errors!r}" if self.is_error and self.errors
                else f"result={_clip(self.result)!r}")
        return (f"ResultMessage(subtype={self.subtype!r}, {said}, num_turns={self.num_turns}, "
                f"model_calls={self.model_calls}, total_cost_usd={self.total_cost_usd}, "
                f"session_id={self.session_id!r})")

    @property
    def output(self) -> OutputT:
        """The answer as the run's output type (pydantic-ai's `result.output`): the validated value
        of AgentOptions.output_type (or output_format's JSON), else the result text. On an error
        result there is no answer: None."""
        if self.is_error:
            return None  # type: ignore[return-value]
        return self.structured_output if self.has_structured_output else self.result  # type: ignore[return-value]

    @property
    def model_usage(self) -> dict[str, dict[str, Any]]:
        """Tokens and cost per model (Claude Code's `modelUsage`): the run's and its subagents'
        calls, each priced at the model that answered it (fallback models too)."""
        out: dict[str, dict[str, Any]] = {}
        for c in [*self.call_usage, *self.subagent_call_usage]:
            m = out.setdefault(c.model, {"inputTokens": 0, "outputTokens": 0, "cacheReadInputTokens": 0,
                                         "cacheCreationInputTokens": 0, "webSearchRequests": 0, "costUSD": 0.0,
                                         "calls": 0})
            m["inputTokens"] += c.input_tokens - c.cache_read_input_tokens - c.cache_creation_input_tokens
            m["outputTokens"] += c.output_tokens
            m["cacheReadInputTokens"] += c.cache_read_input_tokens
            m["cacheCreationInputTokens"] += c.cache_creation_input_tokens
            m["webSearchRequests"] += c.web_search_requests
            m["costUSD"] += c.cost_usd
            m["calls"] += 1
            if not c.price_known:
                m["priceUnknown"] = True  # costUSD is 0 for want of a price, not because it was free
        return out

    @property
    def unpriced_models(self) -> list[str]:
        """Models whose calls were counted at 0 USD because their price is unknown (give --price)."""
        return sorted({c.model for c in [*self.call_usage, *self.subagent_call_usage] if not c.price_known})

    def to_json(self) -> dict[str, Any]:
        """The JSON result object of `--output-format json` (Claude Code's field names)."""
        sub = {"subagent_model_calls": len(self.subagent_call_usage)} if self.subagent_call_usage else {}
        return {
            "type": "result",
            "subtype": self.subtype,
            "is_error": self.is_error,
            "duration_ms": self.duration_ms,
            "duration_api_ms": self.duration_api_ms,
            "num_turns": self.num_turns,
            "model_calls": self.model_calls,
            **sub,
            "result": self.result,
            "stop_reason": self.stop_reason,
            "session_id": self.session_id,
            "total_cost_usd": self.total_cost_usd,
            "usage": self.usage.to_json(),
            "modelUsage": self.model_usage,
            **({"price_unknown": self.unpriced_models} if self.unpriced_models else {}),
            "permission_denials": self.permission_denials,
            "errors": self.errors,
            **({"structured_output": _jsonable(self.structured_output)} if self.structured_output is not None else {}),
            **({"local_command": self.local_command} if self.local_command is not None else {}),
            **({"terminal_reason": reason} if (reason := self.terminal_reason) is not None else {}),
            **({"api_error_status": self.api_error_status} if self.api_error else {}),
        }

    @property
    def terminal_reason(self) -> str | None:
        """Why the run ended, in Claude Code 2.1.332's words (its result's `terminal_reason`, which the
        SDKs read): a model's final answer is "completed", a limit its name, a model API error
        "api_error"; None where that is not known (another error during execution: an interrupt, a hook)."""
        if self.api_error:
            return "api_error"
        if self.subtype == "success":
            # (a prompt a hook or its expansion stopped made no call: Claude Code gives no reason)
            return "completed" if not self.is_error and self.model_calls else None
        return _TERMINAL_REASONS.get(self.subtype)


_TERMINAL_REASONS = {"error_max_turns": "max_turns", "error_max_budget_usd": "budget_exhausted",
                     "error_max_structured_output_retries": "structured_output_retry_exhausted"}


def _jsonable(v: Any) -> Any:
    return v.model_dump(mode="json") if hasattr(v, "model_dump") else v


# Generic in the answer's type (OutputT, default Any): query(options=AgentOptions(output_type=T))
# yields Message[T], so its ResultMessage's `.output` is a T for mypy; a bare Message is Message[Any].
Message: TypeAlias = SystemMessage | AssistantMessage | UserMessage | StreamEvent | ResultMessage[OutputT]


def diagnostics(msg: Message) -> list[str]:
    """The diagnostic lines a message carries (AgentOptions.stderr gets them): the init's warnings
    and MCP servers that did not connect, API retries, hook errors, compaction errors, fallbacks."""
    if not isinstance(msg, SystemMessage):
        return []
    d: dict[str, Any] = dict(msg.data)
    if msg.subtype == "init":
        lines = [f"warning: {w}" for w in d.get("warnings") or []]
        return lines + [f"MCP server {s.get('name')}: {s.get('status')}: {s.get('error', '')}"
                        for s in d.get("mcp_servers") or [] if s.get("status") != "connected"]
    if msg.subtype == "api_retry":
        return [f"API retry {d.get('attempt')}/{d.get('max_retries')} in {d.get('delay_ms')} ms: {d.get('error')}"]
    if msg.subtype == "hook_error":
        return [f"hook {d.get('hook_event_name')} {d.get('hook', '')}: {d.get('kind')}: {d.get('message')}"]
    if msg.subtype in ("config_change", "file_watch"):  # loop/watch.py: a settings file or a watched file
        return [f"{d.get('file_path') or 'settings'}: {d.get('message')}" if msg.subtype == "config_change"
                else f"FileChanged: {d.get('message')}"]
    if msg.subtype == "compact_error":
        return [f"compaction ({d.get('trigger')}) failed: {d.get('error')}"]
    if msg.subtype == "model_fallback":
        return [f"model {d.get('from_model')} unavailable ({d.get('error')}): switching to {d.get('to_model')}"]
    return []
