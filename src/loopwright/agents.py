"""Room: agents / client / workflows (above loop). Owns the Agent tool and AgentDefinition; may
import loop and below, never client, workflows or cli.

Subagents: the `Agent` tool (Claude Code's Task/Agent tool, SPEC §8) and `AgentDefinition`.

A call `Agent{description, prompt, subagent_type?}` runs a nested agent loop: a fresh history
(just `prompt`), the definition's system prompt, the parent's tools filtered by the
definition's tool names (never the Agent tool itself: no recursion), the parent's gate,
hooks and cwd, and its own turn limit. Its final text is the tool result (is_error, with the
subtype, when it ends in an error).

* The tool is named "Agent", as in Claude Code 2.1+ (older versions call it "Task");
  `make_agent_tool(name="Task")` builds it under the old name.
* Not read-only: it may edit, so it runs alone, in emission order (SPEC §6).
* Its messages reach the caller of `query()` live, with `parent_tool_use_id` set to the
  Agent call's id; they never enter the parent's history (nor its session transcript: a
  saved session keeps the subagent's own transcript in `<session>/subagents/agent-<id>.jsonl`).
* Cost: the subagent's cost and usage add to the parent's `total_cost_usd` and `usage`;
  its calls are listed in `ResultMessage.subagent_call_usage` (`call_usage` and
  `model_calls` stay the parent's own calls, so n_k there is the parent's context).
* Budget: a subagent gets what is left of the parent's B. Every model call, the parent's
  or a subagent's, then starts with the total S < B (the parent also checks the budget
  right after its tools), so any final total is < B + c_max, as in seed Prop 5.4.
* Turn limit: the definition's `max_turns`, else the parent's (so a finite T still bounds
  the whole run).
* Hooks: PreToolUse/PostToolUse fire for the subagent's tools (their input carries
  `agent_id` and `agent_type`); SubagentStop fires where Stop would, matched on the agent
  type, and may make the subagent continue; SessionStart/UserPromptSubmit/SessionEnd do not.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .hooks import Hooks, PromptResult
from .messages import (
    Message,
    ResultMessage,
    SystemMessage,
)
from .models.base import Model
from .models.catalog import ALIASES
from .tools.base import Tool, ToolContext, ToolError, ToolOutput

if TYPE_CHECKING:
    from .loop import Run

log = logging.getLogger("loopwright.agents")

DEFAULT_AGENT = "general-purpose"
RELAYED_SYSTEM = frozenset({"api_retry", "hook_error", "hook_message"})
MODEL_ALIASES = ALIASES  # the model catalog's (models/catalog.py)


@dataclass
class AgentDefinition:
    """A subagent type (the Agent SDK's AgentDefinition). `tools`: names of the parent's
    tools it may use (None: all of them); `model`: None or "inherit" for the parent's model,
    "sonnet" | "opus" | "haiku", any model string `AgentOptions.model` takes, or a Model."""

    description: str
    prompt: str
    tools: list[str] | None = None
    model: str | Model | None = None
    max_turns: int | None = None


GENERAL_PURPOSE = AgentDefinition(
    description=("General-purpose agent for researching complex questions, searching code and carrying out "
                 "multi-step tasks. Use it when a task takes many steps and only its outcome matters to you."),
    prompt=("You are a subagent: another agent handed you the task below. Use the tools to complete it "
            "fully: do what was asked, nothing more and nothing less. You cannot ask questions back; when "
            "something is unclear, make a reasonable choice and say so. When you are done, reply with a "
            "concise report of what you found or changed (file paths, key facts, open problems): your "
            "final message is all the other agent will see."),
)


def agents_from_json(value: str | dict[str, Any]) -> dict[str, AgentDefinition]:
    """Claude Code's `--agents` JSON: `{"name": {"description", "prompt", "tools"?, "model"?,
    "maxTurns"?}}`, as a dict, a JSON string or the path of a JSON file. Raises ValueError."""
    data: Any = value
    if isinstance(value, str):
        text = value if value.lstrip().startswith("{") else Path(value).expanduser().read_text()
        data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("--agents must be a JSON object of agent definitions")
    out: dict[str, AgentDefinition] = {}
    for kind, d in data.items():
        if not isinstance(d, dict) or not isinstance(d.get("description"), str) or not isinstance(d.get("prompt"), str):
            raise ValueError(f"agent {kind!r} needs a \"description\" and a \"prompt\" (strings)")
        tools = d.get("tools")
        if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
            raise ValueError(f"agent {kind!r}: \"tools\" must be a list of tool names")
        turns = d.get("maxTurns", d.get("max_turns"))
        if turns is not None and not (isinstance(turns, int) and turns >= 0):
            raise ValueError(f"agent {kind!r}: \"maxTurns\" must be a non-negative integer")
        model = d.get("model")
        out[kind] = AgentDefinition(d["description"], d["prompt"], tools, model if isinstance(model, str) else None,
                                    turns)
    return out


def from_subagent(msg: Message) -> bool:
    """A message a subagent posted (it belongs to no session transcript of the parent)."""
    if isinstance(msg, SystemMessage):
        return "parent_tool_use_id" in msg.data
    return getattr(msg, "parent_tool_use_id", None) is not None


def is_agent_tool(t: Tool) -> bool:
    """Made by make_agent_tool (by its handler, not its name: a user's own "Task" tool is not one)."""
    return getattr(t.handler, "_loopwright_agent_tool", False) is True


def has_agent_tool(tools: list[Tool]) -> bool:
    return any(is_agent_tool(t) for t in tools)


def make_agent_tool(agents: Mapping[str, AgentDefinition | dict[str, Any]] | None = None,
                    name: str = "Agent") -> Tool:
    """The Agent tool with these subagent types (AgentDefinitions, or dicts as in `--agents`),
    plus "general-purpose" unless overridden."""
    catalogue = {DEFAULT_AGENT: GENERAL_PURPOSE}
    for kind, d in (agents or {}).items():
        if isinstance(d, dict):
            d = agents_from_json({kind: d})[kind]
        if not isinstance(d, AgentDefinition):
            raise TypeError(f"agents[{kind!r}] must be an AgentDefinition, not {type(d).__name__}")
        catalogue[kind] = d
    lines = [f"- {kind}: {d.description} (Tools: {', '.join(d.tools) if d.tools is not None else 'all'})"
             for kind, d in catalogue.items()]
    description = (
        "Launch a subagent: a fresh agent that carries out a task on its own, with its own context, and "
        "returns its final report as this tool's result. It does not see this conversation, so the prompt "
        "must say everything it needs: the goal, the files or facts you know, constraints, and what to "
        "report back. Use it for multi-step searches or self-contained tasks whose intermediate steps "
        "would clutter your context. Subagents run one at a time; the user does not see their report "
        "unless you pass it on.\n\nAvailable agent types (subagent_type):\n" + "\n".join(lines)
    )
    schema = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
            "prompt": {"type": "string", "description": "The task for the agent to perform"},
            "subagent_type": {"type": "string",
                              "description": f"The type of agent to use (default {DEFAULT_AGENT})"},
        },
        "required": ["description", "prompt"],
    }

    async def handler(x: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        kind = x.get("subagent_type") or DEFAULT_AGENT
        definition = catalogue.get(kind)
        if definition is None:
            raise ToolError(f"Unknown subagent_type {kind!r}. Available agent types: {', '.join(catalogue)}.")
        if ctx.run is None:
            raise ToolError(f"The {name} tool works only inside a loopwright run.")
        return await run_subagent(ctx.run, definition, kind, x["prompt"], ctx.tool_use_id)

    handler._loopwright_agent_tool = True  # type: ignore[attr-defined]
    return Tool(name, description, schema, handler, needs_approval=False)  # its own calls are gated


class SubagentHooks(Hooks):
    """The parent's hooks as seen from inside a subagent: tool hooks fire as usual with the
    parent's session in their input plus `agent_id`/`agent_type`; Stop becomes SubagentStop;
    the session-level events belong to the parent and do not fire."""

    def __init__(self, parent: Hooks, agent_id: str, agent_type: str) -> None:
        super().__init__(parent.callbacks, copy.copy(parent.context), dict(parent.env))
        self.agent_id, self.agent_type = agent_id, agent_type
        self.sub: Run | None = None  # set once the subagent's Run exists (its last message)
        self.transcript_path: str | None = None  # the subagent's own transcript, when sessions are saved

    def bind(self, context: Any) -> None:
        self.reports, self.halted = [], None  # keep the parent's context (session, transcript)

    def _input(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        extra = {"agent_transcript_path": self.transcript_path} if self.transcript_path else {}
        return {**super()._input(event, data), "agent_id": self.agent_id, "agent_type": self.agent_type, **extra}

    async def session_start(self, source: str) -> str | None:
        return None

    async def user_prompt_submit(self, prompt: str) -> PromptResult:
        return PromptResult()

    async def session_end(self, reason: str) -> None:
        return None

    async def stop(self, stop_hook_active: bool) -> str | None:
        last = self.sub.h[-1] if self.sub is not None and self.sub.h else None
        text = "".join(b.get("text", "") for b in last["content"] if b.get("type") == "text") \
            if last is not None and last.get("role") == "assistant" else None
        return await self.subagent_stop(stop_hook_active, self.agent_type, text)


async def run_subagent(parent: Run, d: AgentDefinition, kind: str, prompt: str, tool_use_id: str) -> ToolOutput:
    """One Agent call: a nested loop whose messages go to the parent's inbox and whose
    cost goes to the parent's totals. Returns the tool result."""
    from .loop import Run, run_query  # loop imports this module

    left: float | None = None
    if parent.budget.limit_usd is not None:
        left = parent.budget.limit_usd - parent.budget.spent_usd
        if left <= 0:
            return ToolOutput(f"Not run: the budget (${parent.budget.limit_usd}) is spent.", is_error=True)
    names = set(d.tools) if d.tools is not None else None
    tools = [t for t in parent.options.tools
             if not is_agent_tool(t) and (names is None or t.name in names)]
    model: str | Model = parent.model if d.model in (None, "inherit") else d.model
    if isinstance(model, str):
        model = MODEL_ALIASES.get(model, model)
    system = f"{d.prompt}\n\nWorking directory: {parent.cwd}"
    try:
        options = replace(
            parent.options, model=model, tools=tools, agents={}, system_prompt=system, append_system_prompt=None,
            max_turns=d.max_turns if d.max_turns is not None else parent.options.max_turns, max_budget_usd=left,
            hooks=None, session_id=None, resume=None, fork_session=False, continue_conversation=False,
            persist_session=False)
        sub = Run(prompt, options)
    except Exception as e:  # bad definition (unknown model, price, settings): the parent goes on
        return ToolOutput(f"Could not start subagent {kind!r}: {type(e).__name__}: {e}", is_error=True)
    sub.budget.shared = parent.budget.shared  # a batch's spend counts the subagent's calls as they happen
    hooks = SubagentHooks(parent.hooks, sub.session_id, kind)
    hooks.sub = sub
    sub.hooks = sub.executor.hooks = hooks
    permissions = copy.copy(parent.executor.permissions)  # the parent's gate, the subagent's own shell cwd
    permissions.tool_state = sub.executor.ctx.state
    sub.executor.permissions = permissions
    sub.executor.ctx.before_file_change = parent.executor.ctx.before_file_change  # its edits are checkpointed too
    transcript = getattr(getattr(parent.recorder, "writer", None), "path", None)
    if isinstance(transcript, Path):  # a sidechain transcript beside the parent's, as Claude Code keeps
        from .sessions import JsonlWriter, SessionRecorder

        path = transcript.with_suffix("") / "subagents" / f"agent-{sub.session_id}.jsonl"
        try:
            sub.recorder = SessionRecorder(JsonlWriter(path, sub.session_id), sub.session_id, sub.cwd)
            hooks.transcript_path = str(path)
        except OSError as e:  # the run goes on without it
            log.warning("cannot write the subagent transcript %s: %s", path, e)

    result: ResultMessage | None = None
    try:
        async with contextlib.aclosing(run_query(sub, prompt)) as stream:
            async for msg in stream:
                if isinstance(msg, ResultMessage):
                    result = msg
                elif isinstance(msg, SystemMessage):  # not init, nor a compaction of its own history
                    if msg.subtype in RELAYED_SYSTEM:
                        _post(parent, SystemMessage(msg.subtype, {**msg.data, "parent_tool_use_id": tool_use_id}))
                else:
                    msg.parent_tool_use_id = tool_use_id
                    _post(parent, msg)
    finally:  # also when interrupted: what the subagent spent is spent
        parent.denials.extend(sub.denials)
        parent.budget.absorb(sub.budget)
        parent.usage.add(sub.usage)
        parent.api_seconds += sub.api_seconds
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError  # the parent was interrupted: its executor fills in the result
    if result is None:
        return ToolOutput(f"Subagent {kind!r} ended without a result.", is_error=True)
    if result.subtype == "success":
        return ToolOutput(result.result or "(the subagent gave no final text)")
    return ToolOutput(f"Subagent {kind!r} ended with {result.subtype}: {result.result or ''}", is_error=True)


def _post(parent: Run, msg: Message) -> None:
    if parent.inbox is not None:  # None: the tool was added to a run by hand after it started
        parent.inbox.put_nowait(msg)


T = TypeVar("T")


class Relay(Generic[T]):
    """Runs `work` (one turn's tool calls) and passes on, live, the messages subagents post
    to `inbox` meanwhile; `value` is then work's result. With no inbox, work is awaited in
    place (no extra task), so runs without subagents behave exactly as before."""

    def __init__(self, work: Awaitable[T], inbox: asyncio.Queue[Message] | None) -> None:
        self.work = work
        self.inbox = inbox
        self.value: T

    async def __aiter__(self) -> AsyncIterator[Message]:
        if self.inbox is None:
            self.value = await self.work
            return
        inbox, done = self.inbox, SystemMessage("_relay_done")

        async def step() -> T:
            try:
                return await self.work
            finally:
                inbox.put_nowait(done)

        task = asyncio.ensure_future(step())
        try:
            while (m := await inbox.get()) is not done:
                yield m
            self.value = await task
        except asyncio.CancelledError:
            # The consumer was cancelled: cancel the tool calls too and wait for their is_error
            # results, so the history stays paired (the loop then goes on cancelling).
            task.cancel()
            self.value = await task
            while not inbox.empty():
                inbox.get_nowait()
        finally:
            if not task.done():
                task.cancel()


__all__ = ["GENERAL_PURPOSE", "AgentDefinition", "Relay", "SubagentHooks", "agents_from_json",
           "make_agent_tool", "run_subagent"]
