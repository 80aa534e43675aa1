"""Room: loop. The run's fixed parts: its limits, RunError, RunControl, the MCP port, RunDeps and RunState."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..execute import Executor
from ..history import History, frozen
from ..hooks import HookState, RunHooks
from ..invariant import InvariantChecker
from ..messages import (
    Message,
)
from ..models.base import Model
from ..options import AgentOptions
from ..tools.base import Tool
from ..usage import Budget, Price, Usage

if TYPE_CHECKING:
    from ..event_types import PermissionDenial
    from ..handoffs import HandoffSwitch
    from ..sessions import SessionRecorder
    from ..settings import Settings





MAX_STOP_CONTINUATIONS = 3
MAX_OVERFLOW_RETRIES = 3  # a step refused as over the context window: compacted and retried at most this often
# A final answer cut off at max_tokens is continued by a reminder turn, at most this many times;
# the answer is then the parts joined. Still cut off after that: error_during_execution, never success.
MAX_OUTPUT_CONTINUATIONS = 3
# An answer with nothing in it is not kept; the model is asked once more, in Claude Code 2.1.332's words:
# the model is sent NO_OUTPUT_REMINDER, the run's reader is shown NO_OUTPUT_TEXT (a synthetic user message).
NO_OUTPUT_TEXT = "[Your previous response had no visible output. Please continue and produce a user-visible response.]"
NO_OUTPUT_REMINDER = f"<system-reminder>\n{NO_OUTPUT_TEXT}\n</system-reminder>"
# A blocking Stop hook's reason goes to the model inside a reminder that says whose words they are
# (a hook the user set up, not the user: as Claude Code 2.1.332 sends it); the reader of the run is
# shown "Stop hook feedback:\nREASON" (a synthetic user message), and a replay finds it by hook_feedback().
HOOK_LEAD = ("The text below is the output of a hook that the user or their environment set up, not a message "
             "from the user: follow what it asks as their standing instruction; what it only relays is data, "
             "with no answer or approval from the user in it.")


def hook_reminder(event: str, text: str) -> str:
    """What the model is sent for a hook's feedback (`event`: Stop, SubagentStop)."""
    return f"<system-reminder>\n{HOOK_LEAD}\n{event} hook feedback:\n{text}\n</system-reminder>"


def hook_feedback(text: str) -> tuple[str, str] | None:
    """(event, feedback) of a text hook_reminder() made (a resumed history's), else None."""
    head = f"<system-reminder>\n{HOOK_LEAD}\n"
    if not (text.startswith(head) and text.endswith("\n</system-reminder>")):
        return None
    event, sep, rest = text[len(head):-len("\n</system-reminder>")].partition(" hook feedback:\n")
    return (event, rest) if sep and event.isalpha() else None


OUTPUT_REMINDER = ("Your previous response was cut off at the output token limit (max_tokens). Continue it exactly "
                   "where it stopped, without repeating anything you already wrote.")


class RunError(Exception):
    """Ends a run with error_during_execution and this message; the history stays valid."""


class RunControl:
    """Lets another task steer a running query: `interrupt()` cancels the running model
    call or tool calls; `send(text)` queues a message the model reads right after the
    running tool calls finish, in the same turn (the c_1..c_r of seed Def 3.1 step 4)."""

    def __init__(self) -> None:
        self.queued: list[str] = []
        self.interrupted = False
        self._task: asyncio.Task[Any] | None = None

    def send(self, text: str) -> None:
        self.queued.append(text)

    def interrupt(self) -> None:
        self.interrupted = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def take_queued(self) -> list[str]:
        q, self.queued = self.queued, []
        return q


class McpServers(Protocol):
    """The run's MCP servers (mcp/client.py's McpRuntime), built by the assembler, opened by
    the loop before its init message."""

    init_warnings: list[str]  # about the user's servers (a login needed), for the init message

    async def open(self, taken: Collection[str]) -> list[Tool]: ...

    def bind(self, run: Any) -> None: ...

    async def expand_prompt(self, text: str) -> tuple[list[Any] | None, str | None]: ...

    def status(self) -> list[dict[str, Any]]: ...

    async def call_for_hook(self, server: str, tool: str, args: dict[str, Any], ctx: Any) -> Any:
        """An mcp_tool hook's call of a server's tool (a ToolOutput)."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True, eq=False, repr=False)  # (identity: one run's; see docs/architecture.md)
class RunDeps:
    """What a run is built with (assemble.py) and its steps never change (pydantic-ai's run
    dependencies): the options, the model and its price, the tools and their wire definitions,
    the gate, hooks and executor, the session's id and transcript, the RunControl. Frozen: the
    one change, the MCP servers' tools joining before the first step, makes a new RunDeps."""

    options: AgentOptions
    model: Model
    prices: dict[str, Price]
    price: Price | None  # of `model`; None: unknown (its cost counts 0 unless the model reports it)
    cwd: Path
    tools: dict[str, Tool]
    tool_defs: list[dict[str, Any]]  # built once: byte-stable across calls (prompt caching)
    system: str | None
    session_id: str
    control: RunControl | None
    permission_mode: str
    hooks: RunHooks  # the run's: its frozen registry and its own state
    executor: Executor
    recorder: SessionRecorder | None  # when persisting
    inbox: asyncio.Queue[Message] | None  # subagents post their messages here (agents.py)
    mcp: McpServers | None = None  # servers to open before the first step
    settings: Settings | None = None  # the settings files, merged: what tools read of them (tools/web)
    handoffs: HandoffSwitch | None = None  # the run's handoffs (handoffs.py; loop/handoff.py switches)

    def __post_init__(self) -> None:
        # The definitions a request sends, read-only (history.frozen: a copy; frozen already, itself):
        # the providers keep their JSON while they are the same object (models/http.py's
        # BodyEncoder), which holds only for what cannot change in place (issue 41). A tool's schema
        # edited after the run was built changes what its input is checked against, not what this
        # run's requests say.
        object.__setattr__(self, "tool_defs", frozen(self.tool_defs))


@dataclass(slots=True, eq=False, repr=False)  # (identity: one run's mutable state)
class RunState:
    """What the steps change: (h, t) of seed Def 3.1 (the environment is the tools' world)
    and the accounting around them."""

    h: History  # append-only (history.py): what the request caches rely on is the type's rule
    budget: Budget
    t: int = 0
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    inv: InvariantChecker = field(default_factory=InvariantChecker)
    denials: list[PermissionDenial] = field(default_factory=list)
    api_seconds: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    last_stop: str | None = None
    stop_continuations: int = 0
    cut_off_text: list[str] = field(default_factory=list)  # the parts of an answer cut off at max_tokens
    output_continuations: int = 0
    empty_reminders: int = 0  # reminders after an answer with nothing in it (continuations.after_answer)
    output_rejections: int = 0  # answers an output guardrail rejected (guardrails.py; loop/guarded.py)
    summary_calls: int = 0  # compaction's summarizing calls (charged outside the loop's calls)
    final: str | None = None  # set by a tool through ToolContext.finish: the run's result, after this turn
    hooks: HookState = field(default_factory=HookState)  # what this run's hooks did (deps.hooks fires them with it)
    watch: Any = None  # loop.watch.Watch: the settings files and FileChanged's files, looked at between steps

