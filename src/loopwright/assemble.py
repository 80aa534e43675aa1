"""Room: assemble (above loop). Owns build_run, query(), arun() and run(); may
import loop and every room below it, never client, workflows or cli.

The one assembler: `build_run(options, prompt)` reads AgentOptions and builds a Run from it,
parts arriving built (mini-swe-agent): the model and its prices, the tools (the Skill,
StructuredOutput and Agent tools among them), the session (resume, fork, persist), the
settings files' gate, hooks, sandbox and env, project memory, the MCP servers (opened by the
loop before its first step) and the compactor. Every front end calls it (the CLI through
query(), LoopwrightClient, batch, workflows); a subagent's Run is built by it too, with
`parent` (through the ports the Agent tool gets: `RunPorts.spawn`).

Tools never see the Run: their ToolContext carries `ports` (tools/base.py's RunPorts), which
assemble_ports.py implements on top of the Run and this module wires in.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .agents import SubagentHooks, make_agent_tool
from .assemble_parts import (
    has_installed_plugins,
    load_memory,
    mcp_servers,
    permission_callback,
    run_trust,
    sidechain,
    skill_tool,
    styled,
    typed_command,
    unloaded_plugins,
    with_agent_files,
)
from .assemble_ports import RunPortsOf
from .autocompact import AutoCompactor
from .blocks import Prompt, WireBlock, WireMessage, local_command_tail, prompt_content, wire_blocks
from .ccenv import env_lines
from .execute import Executor
from .gate import Permissions
from .history import History
from .hooks import HookContext, RunHooks, run_hooks
from .ids import new_uuid
from .loop import Run, RunControl, RunDeps, RunState, run_query
from .loop.watch import Watch
from .messages import Message, OutputT, ResultMessage, diagnostics
from .models.base import Model, ModelResponse, has_own_cost, model_names
from .models.catalog import price_for
from .options import AgentOptions, model_for
from .prompts import system_prompt_text
from .runconfig import (
    RunConfig,
    allowed_mode,
    build_run_config,
    run_settings,
    unread_claude_files,
    with_env_knobs,
    with_settings_model,
)
from .telemetry import observer_for
from .tools.base import Tool, ToolContext
from .usage import Budget, Price, SharedSpend

if TYPE_CHECKING:
    from .gate.auto import AutoClassifier
    from .handoffs import HandoffSwitch
    from .plugins import Plugin
    from .sessions import SessionRecorder
    from .settings import Settings
    from .structured import StructuredOutput
    from .trust import Trust

log = logging.getLogger("loopwright.assemble")
# A parent in these modes keeps them for its subagents, whatever their permissionMode (Claude Code).
WINNING_MODES = ("bypassPermissions", "acceptEdits")


def build_run(options: AgentOptions, prompt: Prompt, parent: Run | None = None, *,
              control: RunControl | None = None, history: list[WireMessage] | None = None,
              agent_type: str = "", shared_spend: SharedSpend | None = None, agent_mode: str | None = None,
              agent_hooks: dict[str, Any] | None = None, watch: Watch | None = None) -> Run:
    """A Run of `prompt` built from `options`, not started (drive it with `run.messages(prompt)`,
    or call query()). `control` steers it from another task; `history` continues a conversation
    held in memory (LoopwrightClient); `shared_spend` ties its budget to a batch's. With
    `parent`: a subagent of that run (of type `agent_type`), with the parent's gate and hooks (as
    SubagentHooks), its own shell cwd and transcript, and the parent's share of a batch's spend;
    `agent_mode`: its agent type's permissionMode; `agent_hooks`: its agent file's own hooks;
    `watch`: its conversation's settings and FileChanged watch (loop/watch.py).
    Bad options raise TypeError / ValueError before anything runs.

    The phases, in order: the prompt and cwd; the settings and the model; trust and plugins;
    the tools; the session; the gate and hooks; the first history; the Run and its wiring."""
    content, cwd = _checked(options, prompt)
    settings = run_settings(options, cwd, watch.applied if watch else None)  # the settings files (settings.py)
    options = with_settings_model(options, settings)  # their model, fallbackModel, effortLevel
    options = with_env_knobs(options, settings)  # CLAUDE_CODE_MAX_OUTPUT_TOKENS, MAX_THINKING_TOKENS
    warnings: list[str] = []  # about the user's own files (memory, skills), for the init message
    trust = run_trust(options, cwd)
    options = typed_command(prompt, options, cwd, trust, warnings) if parent is None else options  # `/name args`
    model, prices, price = _model_and_prices(options, settings, cwd, parent)
    options, plugins = _plugins(options, cwd, settings, parent, warnings)
    structured, handoffs = _output_parts(options)
    tools = _tools(options, cwd, parent, warnings, trust, plugins, structured, handoffs, settings)
    system = system_prompt_text(options.system_prompt, options.append_system_prompt, cwd, tools)
    session_id, recorder, history = _session(options, cwd, history)
    config = build_run_config(options, cwd, settings)  # settings files + options (settings.py)
    system = _said(options, cwd, parent, tools, system, config, trust, warnings, plugins)
    ctx = ToolContext(cwd, session_id, add_dirs=config.add_dirs, env=config.env, sandbox=config.sandbox,
                      ask_user=options.ask_user, review_plan=options.review_plan, deps=options.deps)
    gate = _gate(options, parent, config, ctx, recorder, session_id, agent_type, agent_mode, agent_hooks)
    h = _first_history(history, content, gate.mode, parent, tools)
    memory = load_memory(options, cwd, h, warnings, trust)
    mcp = mcp_servers(options, cwd, config.settings, dict(ctx.env), warnings) if parent is None else None
    by_name = {t.name: t for t in tools}
    obs = observer_for(config.env, session_id, agent_type or "loopwright", model=model)  # telemetry/
    gate.hooks.obs = obs
    deps = RunDeps(
        options=options, model=model, prices=prices, price=price, cwd=cwd, tools=by_name,
        tool_defs=[t.definition() for t in tools], system=system, session_id=session_id, control=control,
        permission_mode=gate.mode, hooks=gate.hooks, executor=Executor(by_name, gate.permissions, gate.hooks, ctx, obs),
        recorder=gate.recorder, inbox=asyncio.Queue() if _spawns(tools) else None, mcp=mcp,
        settings=config.settings, handoffs=handoffs)
    shared = parent.state.budget.shared if parent is not None else shared_spend  # a batch's spend counts
    state = RunState(_history(history, h), Budget(options.max_budget_usd, shared=shared), hooks=gate.hooks.state)  # the subagent's calls as they happen
    compactor = AutoCompactor(options.context_window, options.compact_threshold, options.auto_compact,
                              model.name)  # context.py
    run = Run(deps, state, compactor, structured=structured, memory=memory, warnings=warnings, obs=obs,
              is_top=parent is None, trust=trust)
    _wire(run, ctx, gate, options, parent, prompt)
    if watch is not None:
        watch.adopt(run)
    return run


def _checked(options: AgentOptions, prompt: Prompt) -> tuple[list[WireBlock], Path]:
    """The prompt's content blocks and the run's cwd, or TypeError / ValueError saying what is wrong."""
    if not isinstance(prompt, (str, list)):
        raise TypeError(f"prompt must be a str (or a list of content blocks), not {type(prompt).__name__}")
    content = prompt_content(prompt)  # raises TypeError for a bad block
    if any(b["type"] == "image" for b in content):  # (Pillow only for a prompt with an image)
        from .tools.media import sendable_prompt

        # an image the Messages API cannot process, kept in the history, made it refuse every
        # later request of the session (and its resume): a notice instead, the type it is, scaled down
        content = sendable_prompt(content)
    cwd = Path(options.cwd or ".").resolve()
    if not cwd.is_dir():
        raise ValueError(f"cwd {str(options.cwd)!r} is not an existing directory: create it first or "
                         "pass another cwd")
    return content, cwd


def _model_and_prices(options: AgentOptions, settings: Settings | None, cwd: Path, parent: Run | None
                      ) -> tuple[Model, dict[str, Price], Price | None]:
    """The run's model (with the settings' apiKeyHelper for a top run), its prices and its own price;
    a budget with a model of unknown price is refused here."""
    model = model_for(options)
    if settings is not None and settings.api_key_helper and parent is None:
        _key_helper(model, options, settings.api_key_helper, cwd)
    prices = {**(options.prices or {})}
    price = price_for(model.name, prices or None) or price_for(model.name)
    if options.max_budget_usd is not None and not has_own_cost(model):
        _check_budget_prices(model, prices)
    return model, prices, price


def _plugins(options: AgentOptions, cwd: Path, settings: Settings | None, parent: Run | None,
             warnings: list[str]) -> tuple[AgentOptions, list[Plugin]]:
    """A top run's plugins (plugins/): their hooks and MCP servers join the options."""
    if parent is not None or not (options.plugins or has_installed_plugins()):
        return options, []
    from .plugins import run_plugins, with_plugins

    plugins = run_plugins(options, cwd, warnings)
    hooks_on = not (settings is not None and (settings.disable_all_hooks or settings.managed_hooks_only))
    return with_plugins(options, plugins, warnings, hooks_on), plugins


def _output_parts(options: AgentOptions) -> tuple[StructuredOutput | None, HandoffSwitch | None]:
    """The structured answer (structured.py, with guardrails.py's checks; one retry bound for both)
    and the handoffs' switch (handoffs.py); neither module is imported by a run without them."""
    structured: StructuredOutput | None = None
    if options.output_format is not None or options.output_type is not None:
        from .structured import StructuredOutput

        structured = StructuredOutput.from_options(options.output_format, options.output_type)
        if structured is not None:  # checked on a valid answer
            structured.guardrails = list(options.output_guardrails)
            if options.output_retries is not None:
                structured.max_failures = options.output_retries + 1
    handoffs: HandoffSwitch | None = None
    if options.handoffs:  # a transfer tool each; loop/handoff.py switches agents
        from .handoffs import HandoffSwitch

        handoffs = HandoffSwitch()
    return structured, handoffs


def _spawns(tools: list[Tool]) -> bool:
    return any(t.spawns_agents for t in tools)


def _tools(options: AgentOptions, cwd: Path, parent: Run | None, warnings: list[str], trust: Trust, plugins: list[Plugin],
           structured: StructuredOutput | None, handoffs: HandoffSwitch | None, settings: Settings | None) -> list[Tool]:
    """The run's tools: the options', the Skill tool, StructuredOutput, the transfer tools, and the
    Agent tool for `agents` (a top run's with the agent files' types)."""
    tools = [*options.tools, *skill_tool(options, cwd, warnings, trust, plugins, settings),
             *([structured.tool] if structured else []), *(handoffs.tools_for(options.handoffs) if handoffs else [])]
    if options.agents and not _spawns(tools):  # the Agent tool for `agents`
        tools.append(make_agent_tool(options.agents))
    if parent is None and _spawns(tools):
        tools = with_agent_files(options, cwd, tools, warnings, trust, plugins, settings)
    return tools


def _said(options: AgentOptions, cwd: Path, parent: Run | None, tools: list[Tool], system: str | None,
          config: RunConfig, trust: Trust, warnings: list[str], plugins: list[Plugin]) -> str | None:
    """What trust left out, first; for a top run, the settings' and hooks' unused parts (one line
    each), and the system text in the run's output style."""
    warnings[:0] = trust.note(config.settings.ignored if config.settings is not None else [])
    if parent is not None:
        return system
    warnings += [*(config.settings.warnings if config.settings is not None else []), *config.hooks.unfired(),
                 *unread_claude_files(options, cwd, config.settings),  # Claude Code's files, without claude_settings
                 *env_lines({**os.environ, **config.env}, os.environ)]  # Claude Code's variables loopwright does not use
    if options.refusal_advice != "cli":  # (the CLI names its flags' own, with their names, before the run)
        warnings += _rules_naming_no_tool(options, tools)
    system = styled(options, cwd, tools, system, config.settings, warnings, plugins)
    unloaded_plugins(config.settings, plugins, warnings)
    return system


def _rules_naming_no_tool(options: AgentOptions, tools: list[Tool]) -> list[str]:
    """The caller's allowed_tools / disallowed_tools rules that name no tool of the run (nor Claude
    Code's): a typo (`Bsh`) matches nothing (a command's own allowed-tools are not the caller's)."""
    if not options.allowed_tools and not options.disallowed_tools:
        return []
    from .gate.rules import rules_naming_no_tool

    names = {t.name for t in tools}
    command = options.slash_command.allowed_tools if options.slash_command is not None else ()
    return [*rules_naming_no_tool("allowed_tools", [r for r in options.allowed_tools if r not in command], names),
            *rules_naming_no_tool("disallowed_tools", options.disallowed_tools, names)]


class _Gate(NamedTuple):
    """The run's gate and hooks, its transcript's recorder and its permission mode."""

    permissions: Permissions
    hooks: RunHooks
    sub_hooks: SubagentHooks | None
    recorder: SessionRecorder | None
    mode: str


def _gate(options: AgentOptions, parent: Run | None, config: RunConfig, ctx: ToolContext,
          recorder: SessionRecorder | None, session_id: str, agent_type: str, agent_mode: str | None,
          agent_hooks: dict[str, Any] | None) -> _Gate:
    """A top run's gate and hooks from its config; a subagent's are its parent's (hooks as
    SubagentHooks), with its own shell cwd and transcript. An agent type's permissionMode yields
    to a parent's winning mode."""
    mode = config.permissions.mode or "default"
    sub_hooks: SubagentHooks | None = None
    hooks: RunHooks
    if parent is None:
        permissions, hooks = _top_gate(options, config, ctx, recorder, session_id, mode)
    else:
        hooks = sub_hooks = SubagentHooks(parent.deps.hooks, session_id, agent_type, agent_hooks)
        if ctx.cwd != parent.deps.cwd:  # an isolated subagent's hooks run in its worktree, as in Claude Code
            sub_hooks.state.context.cwd = str(ctx.cwd)
        permissions = parent.deps.executor.permissions
        ctx.before_file_change = parent.deps.executor.ctx.before_file_change  # its edits are checkpointed too
        ctx.after_file_change = parent.deps.executor.ctx.after_file_change
        recorder = sidechain(parent.deps.recorder, session_id, ctx.cwd, sub_hooks)
    # the gate resolves Bash paths from this run's shell cwd, and an isolated subagent's paths from its worktree
    permissions = permissions.for_state(ctx.state, str(ctx.cwd) if parent is not None and ctx.cwd != parent.deps.cwd
                                        else None)
    if agent_mode is not None and permissions.mode not in WINNING_MODES:  # (bypass: unless settings disable it)
        permissions.mode = allowed_mode(config.settings, agent_mode)  # type: ignore[assignment]  # checked; a copy
    return _Gate(permissions, hooks, sub_hooks, recorder, mode)


def _top_gate(options: AgentOptions, config: RunConfig, ctx: ToolContext, recorder: SessionRecorder | None,
              session_id: str, mode: str) -> tuple[Permissions, RunHooks]:
    """A top run's permissions (with the caller's can_use_tool), file checkpoints, task list and hooks."""
    permissions = config.permissions
    permissions.advice = options.refusal_advice  # refusals name the caller's settings
    permissions.can_use_tool = permission_callback(options.can_use_tool, session_id, str(ctx.cwd), mode, options.deps)
    transcript = ""
    if recorder is not None:  # file checkpoints, keyed to this turn's prompt
        from .sessions.checkpoints import snapshot_hooks

        ctx.before_file_change, ctx.after_file_change = snapshot_hooks(recorder)
        transcript = str(recorder.path or "")
        ctx.state.tasks.path = recorder.path.with_suffix(".tasks.json") if recorder.path else None  # (kept for the session)
    context = HookContext(session_id, transcript, str(ctx.cwd), mode, options.deps)
    return permissions, run_hooks(config.hooks, context, options.hooks)  # the registry fixed, the state this run's


def _first_history(history: list[WireMessage] | None, content: list[WireBlock], mode: str,
                   parent: Run | None, tools: list[Tool]) -> list[WireMessage]:
    """The conversation so far plus the prompt (joining the `!` commands' records at its end, which
    no model has seen: client.record_local_command); in plan mode the model is told how plan mode ends."""
    h = list(history or [])
    cut = len(h) - local_command_tail(h)
    h[cut:] = [{"role": "user", "content": [*(b for m in h[cut:] for b in wire_blocks(m)), *content]}]
    if mode == "plan" and parent is None and any(t.name == "ExitPlanMode" for t in tools):
        from .tools.ask import PLAN_REMINDER

        h[-1]["content"].append({"type": "text", "text": PLAN_REMINDER})
    return h


def _history(given: list[WireMessage] | None, h: list[WireMessage]) -> History:
    """The run's History of `h` (_first_history: `given` but its last messages, the prompt's
    message after them). A History given (a conversation's last run's: LoopwrightClient) is
    continued (History.continuing): its messages are not walked again, and what its run verified
    and counted of them holds (Inv is checked from there on; the first call is forecast from its
    last call's count)."""
    if isinstance(given, History) and h and len(h) - 1 <= len(given):
        return History.continuing(given, len(h) - 1, h[-1:])
    return History(h)


def _wire(run: Run, ctx: ToolContext, gate: _Gate, options: AgentOptions, parent: Run | None, prompt: Prompt) -> None:
    """The tools' ports to the built run; for a top run the hook events' trace, the prompt/agent
    hooks' model and auto mode's classifier (the run's model, charged to the run)."""
    ctx.ports = RunPortsOf(run, prompt, build_run)
    hooks, permissions = gate.hooks, gate.permissions
    if parent is None:
        if options.include_hook_events:  # hook_started / hook_response messages
            hooks.state.trace = True
        if hooks.active:  # prompt/agent hooks' model, PermissionRequest before the gate's asks
            from .hookjudge import wire_hooks

            wire_hooks(hooks, permissions, ctx.ports, run.deps.mcp, ctx)
        permissions.auto = functools.cache(lambda: _auto_classifier(run))  # (made at auto mode's first call)
    ctx.permission_mode, ctx.set_permission_mode = run.mode_port(permissions)
    ctx.finish = lambda text: setattr(run.state, "final", text)
    if gate.sub_hooks is not None:
        sub = gate.sub_hooks
        sub.history = lambda: run.state.h


def _key_helper(model: Model, options: AgentOptions, command: str, cwd: Path) -> None:
    """Settings' apiKeyHelper: the key of the run's Anthropic models that have none (an API key or
    token given in the options or the environment wins, as in Claude Code)."""
    env = {**os.environ, **(options.env or {})}
    if options.api_key or env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"):
        return
    from .apikeyhelper import ApiKeyHelper

    helper = ApiKeyHelper(command, str(cwd), options.env)
    for m in [model, *getattr(model, "models", [])]:
        if hasattr(m, "key_helper") and not getattr(m, "api_key", None):
            m.key_helper = helper


def _auto_classifier(run: Run) -> AutoClassifier:
    """Auto mode's classifier for a top run: its model, its transcript, its usage and cost."""
    from .gate.auto import AutoClassifier

    def charge(response: ModelResponse) -> None:  # (as a compaction's call: usage and cost, not a loop call)
        run.state.usage.add(response.usage)
        run.state.budget.charge_outside(run.cost(response))

    return AutoClassifier(run.deps.model, lambda: run.state.h, charge)


def _check_budget_prices(model: Model, prices: dict[str, Price]) -> None:
    """A budget needs every model's price (with fallback models, each one's)."""
    for name in model_names(model):
        if (price_for(name, prices or None) or price_for(name)) is None:
            raise ValueError(
                f"max_budget_usd is set but the price of model {name!r} is unknown, so the "
                "budget could not be kept: give its price (--price MODEL=IN,OUT, or AgentOptions(prices={...}) in Python) "
                "or run without a budget (no --max-budget-usd)"
            )


def _session(options: AgentOptions, cwd: Path, history: list[WireMessage] | None
             ) -> tuple[str, SessionRecorder | None, list[WireMessage] | None]:
    """The run's session: its id, its transcript's recorder (persisted runs) and its history
    (resume/fork/continue load it, unless the caller holds it in memory)."""
    if options.persist_session or (history is None and (options.resume or options.continue_conversation)):
        from .sessions import (
            start_session,  # resume/fork/continue: load h; persist: open the transcript
        )

        started = start_session(options, cwd, history is not None)
        return started.session_id, started.recorder, history if history is not None else started.history
    if options.session_id:  # not persisted, yet an id all the same (hooks and events carry it)
        from .sessions.store import check_session_id

        return check_session_id(options.session_id), None, history
    return new_uuid(), None, history




def build_gate(options: AgentOptions) -> tuple[list[Tool], Executor]:
    """The tools of `options` behind the gate and hooks a run of them would have, without a
    run (`loopwright mcp serve`: each call goes through the Executor; nobody can be asked)."""
    cwd = Path(options.cwd or ".").resolve()
    if not cwd.is_dir():
        raise ValueError(f"cwd {str(options.cwd)!r} is not an existing directory")
    config = build_run_config(options, cwd)
    ctx = ToolContext(cwd, new_uuid(), add_dirs=config.add_dirs, env=config.env, sandbox=config.sandbox,
                      deps=options.deps)
    config.permissions.advice = options.refusal_advice
    permissions: Permissions = config.permissions.for_state(ctx.state)
    tools = list(options.tools)
    hooks = run_hooks(config.hooks, HookContext(cwd=str(cwd), permission_mode=permissions.mode or "default",
                                                deps=options.deps),
                      options.hooks)
    return tools, Executor({t.name: t for t in tools}, permissions, hooks, ctx)


# --- the entry points ----------------------------------------------------------------------

async def query(prompt: Prompt, options: AgentOptions[Any, OutputT] | None = None, *,
                control: RunControl | None = None, history: list[WireMessage] | None = None,
                watch: Watch | None = None) -> AsyncIterator[Message[OutputT]]:
    """Run the agent loop on `prompt`, yielding SystemMessage("init"), AssistantMessage,
    UserMessage (tool results), optional partial events, and last a ResultMessage (typed by
    the options' output_type: a ResultMessage[T] for mypy). A `str` prompt `/name args` naming a
    custom command or skill runs it when the options read setting sources or name plugins
    (assemble_parts.typed_command; else it is sent as it is).
    Bad arguments raise TypeError / ValueError before anything runs."""
    run = _query_run(prompt, options, control, history, watch)
    async with contextlib.aclosing(_messages(run, prompt)) as stream:
        async for msg in stream:
            yield msg


def _query_run(prompt: Prompt, options: AgentOptions | None, control: RunControl | None = None,
               history: list[WireMessage] | None = None, watch: Watch | None = None) -> Run:
    if options is not None and not isinstance(options, AgentOptions):
        raise TypeError(f"options must be an AgentOptions, not {type(options).__name__}")
    return build_run(options or AgentOptions(), prompt, control=control, history=history, watch=watch)


def _messages(run: Run, prompt: Prompt) -> AsyncGenerator[Message, None]:
    """The run's messages, each one's diagnostic lines told to the Agent SDK's stderr callback
    when there is one (without one: the run's own stream, no generator around it)."""
    stderr = run.deps.options.stderr
    if stderr is None:
        return run_query(run, prompt)
    return _told(run_query(run, prompt), stderr)


async def _told(stream: AsyncGenerator[Message, None], stderr: Callable[[str], None]) -> AsyncGenerator[Message, None]:
    async with contextlib.aclosing(stream):
        async for msg in stream:
            for line in diagnostics(msg):
                stderr(line)
            yield msg


async def arun(prompt: Prompt, options: AgentOptions[Any, OutputT] | None = None) -> ResultMessage[OutputT]:
    """`await lw.arun(...)`: run to the end and return the ResultMessage (for async code:
    Jupyter, FastAPI, ...)."""
    last: Message | None = None
    async with contextlib.aclosing(_messages(_query_run(prompt, options), prompt)) as stream:
        async for msg in stream:
            last = msg
    assert isinstance(last, ResultMessage)
    return last


def run(prompt: Prompt, options: AgentOptions[Any, OutputT] | None = None) -> ResultMessage[OutputT]:
    """Synchronous `query()`: run to the end and return the ResultMessage. Inside a running
    event loop (Jupyter, FastAPI, async code) use `await lw.arun(...)` instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("lw.run() cannot be called from a running event loop (Jupyter, FastAPI, async code): "
                           "use `await lw.arun(prompt, options)` there, or iterate `lw.query(...)`")
    box: list[ResultMessage[OutputT]] = []

    async def main() -> None:
        # The result comes out through `box`, not as the task's result: at its end asyncio.run
        # formats the SIGINT handler, the main task with it and so the task's result (Python
        # 3.11's signal.getsignal): the whole history's repr, ~15 µs a turn.
        box.append(await arun(prompt, options))

    asyncio.run(main())
    return box[0]


__all__ = ["arun", "build_gate", "build_run", "query", "run"]
