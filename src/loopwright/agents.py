"""Room: agents (below loop). Owns the Agent tool and SubagentHooks; may import options and below,
never loop, assemble, client, workflows or cli.

Subagents: the `Agent` tool (Claude Code's Task/Agent tool, SPEC §8) and `AgentDefinition`.

A call `Agent{description, prompt, subagent_type?}` runs a nested agent loop: a fresh history
(just `prompt`), the definition's system prompt, the parent's tools filtered by the
definition's tool names (never the Agent tool itself: no recursion), the parent's gate,
hooks and cwd, and its own turn limit. Its final text is the tool result (is_error, with the
subtype, when it ends in an error).

* The tool is named "Agent", as in Claude Code 2.1+ (older versions call it "Task");
  `make_agent_tool(name="Task")` builds it under the old name.
* A call whose subagent type lists only read-only tools (an Explore type with Read, Grep and
  Glob) is read-only: such calls in one response run concurrently (seed Prop 6.2), each with
  its share of what is left of the budget; results still come back in emission order. Any
  other call may edit, so it runs alone, in emission order (SPEC §6).
* Its messages reach the caller of `query()` live, with `parent_tool_use_id` set to the
  Agent call's id; they never enter the parent's history (nor its session transcript: a
  saved session keeps the subagent's own transcript in `<session>/subagents/agent-<id>.jsonl`).
* Cost: the subagent's cost and usage add to the parent's `total_cost_usd` and `usage`;
  its calls are listed in `ResultMessage.subagent_call_usage` (`call_usage` and
  `model_calls` stay the parent's own calls, so n_k there is the parent's context).
* Budget: a subagent gets what is left of the parent's B (k concurrent ones: a k-th of it
  each). Every model call, the parent's or a subagent's, then starts with its spend below its
  share (the parent also checks the budget right after its tools), so any final total is
  < B + c_max, as in seed Prop 5.4 (< B + k * c_max with k subagents running at once).
* Turn limit: the definition's `max_turns`, else the parent's (so a finite T still bounds
  the whole run).
* Hooks: PreToolUse/PostToolUse fire for the subagent's tools (their input carries
  `agent_id` and `agent_type`); SubagentStop fires where Stop would, matched on the agent
  type, and may make the subagent continue; it fires too when the subagent ends in an error
  (with `error` in its input; it cannot make it continue then). SubagentStart fires before its
  first call, matched on the agent type; its additionalContext joins the subagent's prompt.
  SessionStart/UserPromptSubmit/SessionEnd do not fire.

Rooms: this module sits below loop.py; the assembler (assemble.py) adds the Agent tool to a run
and builds a subagent's Run. The tool never sees the Run: it uses the ports of its ToolContext
(`ctx.ports`: the run's tools, model, cwd and budget; `spawn`, `emit`, `absorb`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .blocks import ToolUseBlock, WireMessage
from .hooks import HookRegistry, HookState, RunHooks
from .messages import AssistantMessage, ResultMessage, SystemMessage
from .models.base import Model
from .models.catalog import ALIASES, resolve_alias
from .options import AgentDefinition, agent_definitions, agents_from_json
from .tools.base import RunPorts, SubagentSpec, Tool, ToolContext, ToolError, ToolOutput
from .usage import CallUsage

if TYPE_CHECKING:
    from .hooks.results import PromptResult

DEFAULT_AGENT = "general-purpose"
RELAYED_SYSTEM = frozenset({"api_retry", "hook_error", "hook_message"})
MODEL_ALIASES = ALIASES  # the model catalog's (models/catalog.py)


GENERAL_PURPOSE = AgentDefinition(
    description=("General-purpose agent for researching complex questions, searching code and carrying out "
                 "multi-step tasks. Use it when a task takes many steps and only its outcome matters to you."),
    prompt=("You are a subagent: another agent handed you the task below. Use the tools to complete it "
            "fully: do what was asked, nothing more and nothing less. You cannot ask questions back; when "
            "something is unclear, make a reasonable choice and say so. When you are done, reply with a "
            "concise report of what you found or changed (file paths, key facts, open problems): your "
            "final message is all the other agent will see."),
)


def is_agent_tool(t: Tool) -> bool:
    """Made by make_agent_tool (by its flag, not its name: a user's own "Task" tool is not one)."""
    return t.spawns_agents


def make_agent_tool(agents: Mapping[str, AgentDefinition | dict[str, Any]] | None = None,
                    name: str = "Agent") -> Tool:
    """The Agent tool with these subagent types (AgentDefinitions, or dicts as in `--agents`),
    plus "general-purpose" unless overridden."""
    catalogue = {DEFAULT_AGENT: GENERAL_PURPOSE, **agent_definitions(agents or {})}
    lines = [f"- {kind}: {d.description} (Tools: {', '.join(d.tools) if d.tools is not None else 'all'})"
             for kind, d in catalogue.items()]
    description = (
        "Launch a subagent: a fresh agent that carries out a task on its own, with its own context, and "
        "returns its final report as this tool's result. It does not see this conversation, so the prompt "
        "must say everything it needs: the goal, the files or facts you know, constraints, and what to "
        "report back. Use it for multi-step searches or self-contained tasks whose intermediate steps "
        "would clutter your context. Subagents of a type with only read-only tools run concurrently when "
        "you call several in one response; others run one at a time. The user does not see their report "
        "unless you pass it on.\n\nAvailable agent types (subagent_type):\n" + "\n".join(lines)
    )
    schema = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
            "prompt": {"type": "string", "description": "The task for the agent to perform"},
            "subagent_type": {"type": "string",
                              "description": f"The type of agent to use (default {DEFAULT_AGENT})"},
            "isolation": {"type": "string", "enum": ["worktree"],
                          "description": ("\"worktree\" runs the agent in a temporary git worktree, an isolated "
                                          "copy of the repository (removed when it changed nothing; else its "
                                          "path and branch come back with the result)")},
        },
        "required": ["description", "prompt"],
    }

    async def handler(x: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        kind = x.get("subagent_type") or DEFAULT_AGENT
        definition = catalogue.get(kind)
        if definition is None:
            raise ToolError(f"Unknown subagent_type {kind!r}. Available agent types: {', '.join(catalogue)}.")
        if ctx.ports is None:
            raise ToolError(f"The {name} tool works only inside a loopwright run.")
        isolation = x.get("isolation") or definition.isolation
        if isolation not in (None, "worktree"):
            raise ToolError(f"isolation {isolation!r} is not supported: loopwright has \"worktree\" only.")
        if isolation is None:
            return await run_subagent(ctx.ports, definition, kind, x["prompt"], ctx.tool_use_id, ctx.siblings)
        return await run_isolated(ctx.ports, definition, kind, x["prompt"], ctx.tool_use_id, ctx.siblings)

    def read_only_call(x: dict[str, Any], tools: dict[str, Tool]) -> bool:
        """A subagent type whose tools are all read-only ones of this run: it cannot change anything."""
        d = catalogue.get(x.get("subagent_type") or DEFAULT_AGENT)
        return d is not None and d.tools is not None and all(
            n in tools and tools[n].read_only and not tools[n].spawns_agents for n in d.tools)

    handler.__dict__["agent_catalogue"] = catalogue  # (with_agents rebuilds the tool with more types)
    return Tool(name, description, schema, handler, needs_approval=False,  # its own calls are gated
                spawns_agents=True, read_only_call=read_only_call)


def agent_catalogue(tool: Tool) -> dict[str, AgentDefinition]:
    """The subagent types of an Agent tool made by make_agent_tool ({} for any other tool)."""
    found = getattr(tool.handler, "agent_catalogue", None)
    return dict(found) if isinstance(found, dict) else {}


def with_agents(tools: list[Tool], more: Mapping[str, AgentDefinition]) -> list[Tool]:
    """`tools` with their Agent tool rebuilt to offer `more` types too (agent files, plugins); a type
    the tool already has keeps its definition (--agents and AgentOptions.agents come first)."""
    if not more:
        return tools
    out = []
    for t in tools:
        if is_agent_tool(t) and hasattr(t.handler, "agent_catalogue"):
            have = {k: v for k, v in agent_catalogue(t).items() if v is not GENERAL_PURPOSE}
            t = make_agent_tool({**more, **have}, name=t.name)
        out.append(t)
    return out


class SubagentHooks(RunHooks):
    """The parent's hooks as seen from inside a subagent: tool hooks fire as usual with the
    parent's session in their input plus `agent_id`/`agent_type`; Stop becomes SubagentStop;
    the session-level events belong to the parent and do not fire."""

    def __init__(self, parent: RunHooks, agent_id: str, agent_type: str, own: dict[str, Any] | None = None) -> None:
        # the parent's hooks, and the agent file's own (`own`: its Stop hooks are SubagentStop, as in Claude Code)
        registry = parent.registry if not own else with_agent_hooks(parent.registry, own)
        super().__init__(registry, HookState(copy.copy(parent.state.context)))  # the parent's session
        self.agent_id, self.agent_type = agent_id, agent_type
        self.history: Callable[[], list[WireMessage]] = list  # the subagent's h, once its run exists
        self.transcript_path: str | None = None  # the subagent's own transcript, when sessions are saved

    def _input(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        extra = {"agent_transcript_path": self.transcript_path} if self.transcript_path else {}
        return {**super()._input(event, data), "agent_id": self.agent_id, "agent_type": self.agent_type, **extra}

    async def session_start(self, source: str) -> str | None:
        return None

    async def user_prompt_submit(self, prompt: str) -> PromptResult:
        from .hooks.results import PromptResult

        return PromptResult()

    async def session_end(self, reason: str) -> None:
        return None

    def _last_text(self) -> str | None:
        h = self.history()
        last = h[-1] if h else None
        return "".join(b.get("text", "") for b in last["content"] if b.get("type") == "text") \
            if last is not None and last.get("role") == "assistant" else None

    async def stop(self, stop_hook_active: bool, last_assistant_message: str | None = None) -> str | None:
        return await self.subagent_stop(stop_hook_active, self.agent_type, last_assistant_message or self._last_text())

    async def started(self) -> str | None:
        """SubagentStart: additional context for the subagent, or None."""
        return await self.subagent_start(self.agent_type) if self.active else None

    async def ended_in_error(self, error: str) -> None:
        """SubagentStop for a subagent that ended in an error (nothing can make it continue)."""
        if self.active:
            await self.subagent_stop(False, self.agent_type, self._last_text(), error=error)


def with_agent_hooks(registry: HookRegistry, own: dict[str, Any]) -> HookRegistry:
    """`registry` with an agent file's hooks after the parent's; its Stop hooks fire as SubagentStop."""
    from types import MappingProxyType

    from .hooks import Hooks

    renamed: dict[str, list[Any]] = {}
    for e, ms in own.items():
        renamed.setdefault("SubagentStop" if e == "Stop" else e, []).extend(ms)
    mine = Hooks(renamed).freeze()
    events = {*registry.matchers, *mine.matchers}
    merged = {e: (*registry.matchers.get(e, ()), *mine.matchers.get(e, ())) for e in events}
    return HookRegistry(MappingProxyType(merged), registry.env)


async def run_isolated(ports: RunPorts, d: AgentDefinition, kind: str, prompt: str, tool_use_id: str,
                       siblings: int = 1) -> ToolOutput:
    """An Agent call with `isolation: worktree`, as Claude Code runs one: the subagent works in a
    worktree of its own, `agent-<id>` (a WorktreeCreate hook's, else git's); one it left unchanged
    is removed with its branch, one it changed is kept and named in the result (`worktreePath`,
    `worktreeBranch`). A hook's worktree is kept (loopwright cannot tell what changed in it)."""
    import secrets  # (with hmac and hashlib: ~9 M instructions a run without worktrees never needs)

    from .worktrees import WorktreeError, changed, describe, make_worktree, remove_git_worktree

    try:
        wt = await make_worktree(ports.cwd, f"agent-a{secrets.token_hex(8)}", ports.hooks)
    except (WorktreeError, RuntimeError) as e:  # (hooks.work.WorktreeHookError too)
        return ToolOutput(str(e), is_error=True)
    try:
        out = await run_subagent(ports, d, kind, prompt, tool_use_id, siblings, cwd=wt.path)
    finally:
        keep = await asyncio.to_thread(changed, wt)
        if not keep and wt.root is not None:  # (a hook's counts as changed: kept)
            await asyncio.to_thread(remove_git_worktree, wt.root, wt.path, wt.branch)
    if keep:
        text = out.content if isinstance(out.content, str) else ""
        details = {**out.details, "worktreePath": str(wt.path)} if isinstance(out.details, dict) else None
        if details is not None and wt.branch:
            details["worktreeBranch"] = wt.branch
        return ToolOutput(f"{text}\n{describe(wt)}" if text else describe(wt), is_error=out.is_error, details=details)
    return out


async def run_subagent(ports: RunPorts, d: AgentDefinition, kind: str, prompt: str, tool_use_id: str,
                       siblings: int = 1, cwd: Path | None = None) -> ToolOutput:
    """One Agent call: a nested loop whose messages go to the parent's caller (`ports.emit`)
    and whose cost goes to the parent's totals (`ports.absorb`). Returns the tool result.
    `siblings`: Agent calls running at once (this one included), which share what is left of
    the budget."""
    budget = ports.budget()
    left: float | None = None
    if budget.left_usd is not None:
        left = budget.left_usd / max(1, siblings)
        if left <= 0:
            return ToolOutput(f"Not run: the budget (${budget.limit_usd}) is spent.", is_error=True)
    names = set(d.tools) if d.tools is not None else None
    denied = set(d.disallowed_tools or ())
    servers = tuple(f"mcp__{_part(x)}__" for x in d.mcp_servers or () if isinstance(x, str))  # the run's, named
    tools = [t for t in ports.tools.values()
             if not is_agent_tool(t) and (names is None or t.name in names or t.name.startswith(servers))
             and t.name not in denied]
    own = [x for x in d.mcp_servers or () if isinstance(x, dict)]
    if not own:
        return await _run_subagent(ports, d, kind, prompt, tool_use_id, tools, left, cwd)
    from .mcp.client import McpRuntime
    from .mcp.config import parse_server

    configs = [parse_server(str(k), v, source=d.source or f"agent {kind}") for x in own for k, v in x.items()]
    bad = [c.error for c in configs if c.error]
    if bad:
        return ToolOutput(f"Could not start subagent {kind!r}: {'; '.join(bad)}", is_error=True)
    rt = McpRuntime(configs, cwd or ports.cwd)  # its own servers: started for it, stopped when it ends
    try:
        added = await rt.open({t.name for t in tools})
        failed = [f"{c.name} ({c.error or c.status})" for c in rt.connections if c.status != "connected"]
        if failed:
            return ToolOutput(f"Could not start subagent {kind!r}: its MCP servers did not start: {', '.join(failed)}",
                              is_error=True)
        return await _run_subagent(ports, d, kind, prompt, tool_use_id, [*tools, *added], left, cwd)
    finally:
        await rt.aclose()


MEMORY_LINES = 200  # of MEMORY.md, as Claude Code loads it


def agent_memory(scope: str, kind: str, cwd: Path) -> str:
    """An agent's memory (`memory: user | project | local`): its directory (made, private to the
    user, when missing) and the system prompt's section saying how to keep it, with the first
    200 lines of its MEMORY.md (capped, never through a link out of the workspace: _memory_index).
    The directory is named as Claude Code names it: each character of the agent's name but
    letters, digits, `-` and `_` made `-` (a plugin's `plugin:agent` is `plugin-agent`; no
    separator, no `..`: an id is never a path), `unknown` for an empty name.
    Raises ValueError for a project's directory that is a link out of the workspace, OSError when
    it cannot be made."""
    from .memory import in_workspace

    root = {"user": Path.home() / ".claude" / "agent-memory", "project": cwd / ".claude" / "agent-memory",
            "local": cwd / ".claude" / "agent-memory-local"}[scope]
    folder = root / (re.sub(r"[^A-Za-z0-9_-]", "-", kind) or "unknown")
    real = Path(os.path.realpath(folder))  # (a link in .claude: where mkdir and the model's writes would go)
    if scope != "user" and not in_workspace(real, cwd):
        raise ValueError(f"{folder} is a link to {real}, outside the workspace")
    if scope == "user":  # (~/.claude and agent-memory too, when missing: the user's alone, whatever the umask)
        from .home import private_dir

        private_dir(folder)
    else:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    lines, refused = _memory_index(folder / "MEMORY.md", None if scope == "user" else cwd)
    shared = {"user": "it is yours across every project", "project": "it is this project's, and may be shared with "
              "the team through version control", "local": "it is this project's, on this machine only"}[scope]
    return (f"\n\n# Persistent Agent Memory\n\nYou have a persistent, file-based memory at `{folder}/` ({shared}). "
            "It exists: write to it directly with the Write and Edit tools. Keep one memory per file (a short "
            "name, what it is and why it matters), and an index of them in `MEMORY.md`, one line per memory: "
            f"`MEMORY.md` is given to you at the start of every conversation (its first {MEMORY_LINES} lines). "
            "Save what will help in future conversations (who the user is, feedback on how to work, facts about "
            "the project), update or remove what turns out wrong, and check a remembered fact against the "
            "current files before relying on it.\n\n## MEMORY.md\n\n"
            + (f"(not read: {refused})" if refused else "\n".join(lines) if lines else
               "(empty: nothing is remembered yet)"))


def _memory_index(index: Path, workspace: Path | None) -> tuple[list[str], str | None]:
    """The first MEMORY_LINES lines of an agent's MEMORY.md, or why it is not read: as other memory
    files (memory.read_capped: a regular file of at most MAX_FILE_BYTES, a FIFO never hangs), and
    a project's (`workspace`) never through a link out of the workspace, trusted or not: a
    repository's MEMORY.md linked to ~/.ssh/id_rsa would be sent to the model."""
    from .memory import in_workspace, read_capped

    if not os.path.lexists(index):
        return [], None
    real = Path(os.path.realpath(index))
    if workspace is not None and not in_workspace(real, workspace):
        return [], f"{index} is a link to {real}, outside the workspace; not read"
    data = read_capped(real)
    if isinstance(data, str):
        return [], f"{index}: {data}"
    return data.decode("utf-8", "replace").splitlines()[:MEMORY_LINES], None


def _part(server: str) -> str:
    from .mcp.naming import server_part

    return server_part(server) or server


async def _run_subagent(ports: RunPorts, d: AgentDefinition, kind: str, prompt: str, tool_use_id: str,
                        tools: list[Tool], left: float | None, cwd: Path | None = None) -> ToolOutput:
    model: str | Model | None = None if d.model in (None, "inherit") else d.model
    settings_env = getattr(ports.settings, "env", None) or {}
    if chosen := {**os.environ, **settings_env}.get("CLAUDE_CODE_SUBAGENT_MODEL", "").strip():
        model = chosen  # Claude Code's: every subagent's model, over its agent file's (ccenv.py)
    if isinstance(model, str):
        model = resolve_alias(model)  # (as the run's own: the ANTHROPIC_DEFAULT_*_MODEL variables too)
    where = cwd or ports.cwd
    system = f"{d.prompt}\n\nWorking directory: {where}"
    if d.memory:  # (the project's memory, also for an agent in a worktree of its own)
        try:
            system += agent_memory(d.memory, kind, ports.cwd)
        except (OSError, ValueError) as e:
            return ToolOutput(f"Could not start subagent {kind!r}: its memory directory: {e}", is_error=True)
        have = {t.name for t in tools}  # Read, Write and Edit come with a memory, as in Claude Code
        tools = [*tools, *(t for n, t in ports.tools.items() if n in ("Read", "Write", "Edit") and n not in have)]
    spec = SubagentSpec(prompt, kind, system, tools, model, d.max_turns, left, d.permission_mode, d.effort, d.hooks,
                        cwd)
    try:
        sub = ports.spawn(spec)
    except Exception as e:  # bad definition (unknown model, price, settings): the parent goes on
        return ToolOutput(f"Could not start subagent {kind!r}: {type(e).__name__}: {e}", is_error=True)

    hooks = sub.hooks
    assert isinstance(hooks, SubagentHooks)
    result: ResultMessage | None = None
    tally = AgentTally(hooks.agent_id, kind, prompt)
    try:
        for block in d.preloaded:  # its agent file's `skills`, after the task (as Claude Code sends them)
            if not isinstance(block, str):  # a PreloadedSkill: its inline shell runs in the subagent, as Claude Code's
                text, error = await sub.skill_shell(block.text, block.name, block.source, block.allowed_tools)
                if error is not None:
                    return ToolOutput(f"Could not start subagent {kind!r}: skill {block.name!r}: {error}",
                                      is_error=True)
                block = text
            sub.add_context(block)
        context = await hooks.started()
        if context:  # SubagentStart's additionalContext: part of the subagent's first message
            sub.add_context(context)
        _relay_reports(ports, hooks, tool_use_id)
        async with contextlib.aclosing(sub.messages()) as stream:
            async for msg in stream:
                if isinstance(msg, ResultMessage):
                    result = msg
                elif isinstance(msg, SystemMessage):  # not init, nor a compaction of its own history
                    if msg.subtype in RELAYED_SYSTEM:
                        ports.emit(SystemMessage(msg.subtype, {**msg.data, "parent_tool_use_id": tool_use_id}))
                else:
                    msg.parent_tool_use_id = tool_use_id
                    tally.see(msg)
                    ports.emit(msg)
    finally:  # also when interrupted: what the subagent spent is spent
        ports.absorb(sub)
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError  # the parent was interrupted: its executor fills in the result
    if result is not None and result.subtype == "success":
        text = result.result or "(the subagent gave no final text)"
        return ToolOutput(text, details=tally.details(text))
    error = (f"Subagent {kind!r} ended with {result.subtype}: {result.result or ''}" if result is not None
             else f"Subagent {kind!r} ended without a result.")
    await hooks.ended_in_error(error)
    _relay_reports(ports, hooks, tool_use_id)
    return ToolOutput(error, is_error=True)


# Claude Code's toolStats groups (an Agent call's tool_use_result); every other tool is "other"
_STAT_OF = {"Read": "readCount", "Glob": "searchCount", "Grep": "searchCount", "Bash": "bashCount",
            "Edit": "editFileCount", "MultiEdit": "editFileCount", "Write": "editFileCount",
            "NotebookEdit": "editFileCount"}


class AgentTally:
    """What a subagent did, counted from its messages as they pass (AgentTally.see): the Agent
    call's structured output (`tool_use_result`), Claude Code's AgentOutput of a completed agent
    (status, prompt, agentId, agentType, content, resolvedModel, totalDurationMs, totalTokens,
    totalToolUseCount, usage: its last call's, toolsUsed, toolStats)."""

    def __init__(self, agent_id: str, kind: str, prompt: str) -> None:
        import time

        self.agent_id, self.kind, self.prompt, self.started = agent_id, kind, prompt, time.monotonic()
        self.names: dict[str, str] = {}  # tool_use id -> tool name
        self.stats = dict.fromkeys(("readCount", "searchCount", "bashCount", "editFileCount", "linesAdded",
                                    "linesRemoved", "otherToolCount"), 0)
        self.last: AssistantMessage | None = None

    def see(self, msg: object) -> None:
        """Count an assistant message's tool calls, and the lines its edits add and remove as
        Claude Code counts them, from the calls' inputs (a call that then fails counts too):
        Write's content lines all added; Edit's (and each of MultiEdit's edits') old_string lines
        removed, new_string lines added."""
        if not isinstance(msg, AssistantMessage):
            return
        self.last = msg
        for b in msg.content:
            if isinstance(b, ToolUseBlock):
                self.names[b.id] = b.name
                self.stats[_STAT_OF.get(b.name, "otherToolCount")] += 1
                edits = b.input.get("edits") if b.name == "MultiEdit" else [b.input] if b.name == "Edit" else ()
                for e in edits if isinstance(edits, list) else ():
                    self._count(e, "old_string", "linesRemoved")
                    self._count(e, "new_string", "linesAdded")
                if b.name == "Write":
                    self._count(b.input, "content", "linesAdded")

    def _count(self, x: object, key: str, stat: str) -> None:
        text = x.get(key) if isinstance(x, dict) else None
        if isinstance(text, str):
            self.stats[stat] += len(text.split("\n"))

    def details(self, text: str) -> dict[str, Any]:
        """The AgentOutput of the subagent that ended with `text`."""
        import time

        usage = self.last.usage if self.last is not None else None
        out: dict[str, Any] = {
            "status": "completed", "prompt": self.prompt, "agentId": self.agent_id, "agentType": self.kind,
            "toolsUsed": sorted(set(self.names.values())), "content": [{"type": "text", "text": text}],
            "totalDurationMs": int((time.monotonic() - self.started) * 1000),
            "totalTokens": usage.input_tokens + usage.output_tokens if usage is not None else 0,
            "totalToolUseCount": len(self.names), "usage": _api_usage(usage), "toolStats": dict(self.stats)}
        if self.last is not None:
            out["resolvedModel"] = self.last.model
        return out


def _api_usage(u: CallUsage | None) -> dict[str, Any]:
    """A call's usage as the Messages API reports it (AgentOutput.usage): what loopwright does not
    keep of it (service tier, the cache writes' split) is null, as the type allows."""
    if u is None:
        u = CallUsage(0, 0, 0, 0, 0.0)
    return {"input_tokens": u.input_tokens - u.cache_creation_input_tokens - u.cache_read_input_tokens,
            "output_tokens": u.output_tokens, "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
            "server_tool_use": {"web_search_requests": u.web_search_requests, "web_fetch_requests": 0},
            "service_tier": None, "cache_creation": None}


def _relay_reports(ports: RunPorts, hooks: RunHooks, tool_use_id: str) -> None:
    """Hook reports made outside the subagent's loop (SubagentStart, SubagentStop after an error)."""
    for m in hooks.take_reports():
        ports.emit(SystemMessage("hook_error" if m["kind"] in ("error", "timeout") else "hook_message",
                                  {**m, "parent_tool_use_id": tool_use_id}))


__all__ = ["GENERAL_PURPOSE", "AgentDefinition", "SubagentHooks", "agent_catalogue", "agents_from_json",
           "is_agent_tool", "make_agent_tool", "run_subagent", "with_agents"]
