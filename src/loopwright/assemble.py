"""Room: assemble (above loop). Owns build_run, the run's ports, query(), arun() and run(); may
import loop and every room below it, never client, workflows or cli.

The one assembler: `build_run(options, prompt)` reads AgentOptions and builds a Run from it,
parts arriving built (mini-swe-agent): the model and its prices, the tools (the Skill,
StructuredOutput and Agent tools among them), the session (resume, fork, persist), the
settings files' gate, hooks, sandbox and env, project memory, the MCP servers (opened by the
loop before its first step) and the compactor. Every front end calls it (the CLI through
query(), LoopwrightClient, batch, workflows); a subagent's Run is built by it too, with
`parent` (through the ports the Agent tool gets: `RunPorts.spawn`).

Tools never see the Run: their ToolContext carries `ports` (tools/base.py's RunPorts), which
this module implements on top of the Run.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agents import SubagentHooks, make_agent_tool
from .blocks import Prompt, WireMessage, prompt_content
from .context import AutoCompactor
from .execute import Executor
from .gate import CanUseTool, Decision, Deny, Permissions, to_decision
from .home import private_dir, write_private
from .hooks import HookContext, RunHooks, run_hooks
from .ids import new_uuid
from .loop import McpServers, Run, RunControl, RunDeps, RunState, run_query
from .messages import Message, OutputT, ResultMessage, diagnostics
from .models.base import Model, ModelResponse, has_own_cost, model_names
from .models.catalog import price_for
from .options import AgentOptions, ToolPermissionContext, model_for
from .prompts import system_prompt_text
from .settings import build_run_config, run_settings, with_settings_model
from .telemetry import observer_for
from .tools.base import BudgetView, Subagent, SubagentSpec, Tool, ToolContext
from .usage import Budget, Price, SharedSpend

if TYPE_CHECKING:
    from .gate.auto import AutoClassifier
    from .handoffs import HandoffSwitch
    from .memory import Memory
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
              agent_hooks: dict[str, Any] | None = None) -> Run:
    """A Run of `prompt` built from `options`, not started (drive it with `run.messages(prompt)`,
    or call query()). `control` steers it from another task; `history` continues a conversation
    held in memory (LoopwrightClient); `shared_spend` ties its budget to a batch's. With
    `parent`: a subagent of that run (of type `agent_type`), with the parent's gate and hooks (as
    SubagentHooks), its own shell cwd and transcript, and the parent's share of a batch's spend;
    `agent_mode`: its agent type's permissionMode; `agent_hooks`: its agent file's own hooks.
    Bad options raise TypeError / ValueError before anything runs."""
    if not isinstance(prompt, (str, list)):
        raise TypeError(f"prompt must be a str (or a list of content blocks), not {type(prompt).__name__}")
    content = prompt_content(prompt)  # raises TypeError for a bad block
    cwd = Path(options.cwd or ".").resolve()
    if not cwd.is_dir():
        raise ValueError(f"cwd {str(options.cwd)!r} is not an existing directory: create it first or "
                         "pass another cwd")
    settings = run_settings(options, cwd)  # the settings files, read once (settings.py)
    options = with_settings_model(options, settings)  # their model, fallbackModel, effortLevel
    model = model_for(options)
    if settings is not None and settings.api_key_helper and parent is None:
        _key_helper(model, options, settings.api_key_helper, cwd)
    prices = {**(options.prices or {})}
    price = price_for(model.name, prices or None) or price_for(model.name)
    if options.max_budget_usd is not None and not has_own_cost(model):
        _check_budget_prices(model, prices)
    warnings: list[str] = []  # about the user's own files (memory, skills), for the init message
    from .trust import Trust, advice, trusted_for

    # workspace trust (trust/): one decision per run; what of the project it leaves out is named
    trust = Trust(trusted_for(options, cwd), str(cwd), advice(cwd, options.refusal_advice))
    plugins: list[Plugin] = []
    if parent is None and (options.plugins or _has_installed_plugins()):  # plugins/: hooks and MCP servers join
        from .plugins import run_plugins, with_plugins

        plugins = run_plugins(options, cwd, warnings)
        options = with_plugins(options, plugins, warnings, not (settings is not None and settings.disable_all_hooks))
    structured: StructuredOutput | None = None
    if options.output_format is not None or options.output_type is not None:  # (else structured.py is not imported)
        from .structured import StructuredOutput

        structured = StructuredOutput.from_options(options.output_format, options.output_type)
        if structured is not None:  # (guardrails.py) checked on a valid answer; one retry bound for both
            structured.guardrails = list(options.output_guardrails)
            if options.output_retries is not None:
                structured.max_failures = options.output_retries + 1
    handoffs: HandoffSwitch | None = None
    if options.handoffs:  # (handoffs.py: a transfer tool each; loop/handoff.py switches agents)
        from .handoffs import HandoffSwitch

        handoffs = HandoffSwitch()
    tools = [*options.tools, *_skill_tool(options, cwd, warnings, trust, plugins),
             *([structured.tool] if structured else []), *(handoffs.tools_for(options.handoffs) if handoffs else [])]
    if options.agents and not any(t.spawns_agents for t in tools):  # the Agent tool for `agents`
        tools.append(make_agent_tool(options.agents))
    if parent is None and any(t.spawns_agents for t in tools):
        tools = _with_agent_files(options, cwd, tools, warnings, trust, plugins)
    system = system_prompt_text(options.system_prompt, options.append_system_prompt, cwd, tools)
    session_id, recorder, history = _session(options, cwd, history)
    config = build_run_config(options, cwd, settings)  # settings files + options (settings.py)
    warnings[:0] = trust.note(config.settings.ignored if config.settings is not None else [])
    if parent is None:  # hooks and settings loopwright does not use: one line each (hooks.py, settings.py)
        warnings += [*(config.settings.warnings if config.settings is not None else []), *config.hooks.unfired()]
    if parent is None:
        system = _styled(options, cwd, tools, system, config.settings, warnings, plugins)
        _unloaded_plugins(config.settings, plugins, warnings)
    permission_mode = config.permissions.mode or "default"
    hooks: RunHooks
    ctx = ToolContext(cwd, session_id, add_dirs=config.add_dirs, env=config.env, sandbox=config.sandbox,
                      ask_user=options.ask_user, review_plan=options.review_plan, deps=options.deps)
    sub_hooks: SubagentHooks | None = None
    if parent is None:
        permissions = config.permissions
        permissions.advice = options.refusal_advice  # refusals name the caller's settings
        permissions.can_use_tool = _permission_callback(
            options.can_use_tool, ToolPermissionContext(session_id, str(cwd), permission_mode, deps=options.deps))
        if recorder is not None:
            # file checkpoints, keyed to this turn's prompt
            from .sessions.checkpoints import snapshot_hooks

            ctx.before_file_change, ctx.after_file_change = snapshot_hooks(recorder)
        transcript = str(recorder.path or "") if recorder is not None else ""
        context = HookContext(session_id, transcript, str(cwd), permission_mode, options.deps)
        hooks = run_hooks(config.hooks, context, options.hooks)  # the registry fixed, the state this run's
    else:  # a subagent: the parent's gate and hooks, its own shell cwd and transcript
        hooks = sub_hooks = SubagentHooks(parent.deps.hooks, session_id, agent_type, agent_hooks)
        permissions = parent.deps.executor.permissions
        ctx.before_file_change = parent.deps.executor.ctx.before_file_change  # its edits are checkpointed too
        ctx.after_file_change = parent.deps.executor.ctx.after_file_change
        recorder = _sidechain(parent.deps.recorder, session_id, cwd, sub_hooks)
    permissions = permissions.for_state(ctx.state)  # the gate resolves Bash paths from this run's shell cwd
    if agent_mode is not None and permissions.mode not in WINNING_MODES:
        permissions.mode = agent_mode  # type: ignore[assignment]  # checked when the agent was read; a copy
    h = list(history or [])
    h.append({"role": "user", "content": content})
    if permission_mode == "plan" and parent is None and any(t.name == "ExitPlanMode" for t in tools):
        from .tools.ask import PLAN_REMINDER  # the model is told how plan mode ends

        h[-1]["content"].append({"type": "text", "text": PLAN_REMINDER})
    memory = _load_memory(options, cwd, h, warnings, trust)
    mcp = _mcp_servers(options, cwd, config.settings, dict(ctx.env), warnings) if parent is None else None
    by_name = {t.name: t for t in tools}
    obs = observer_for(config.env, session_id, agent_type or "loopwright", model=model)  # telemetry/
    hooks.obs = obs
    deps = RunDeps(
        options=options, model=model, prices=prices, price=price, cwd=cwd, tools=by_name,
        tool_defs=[t.definition() for t in tools], system=system, session_id=session_id, control=control,
        permission_mode=permission_mode, hooks=hooks, executor=Executor(by_name, permissions, hooks, ctx, obs),
        recorder=recorder, inbox=asyncio.Queue() if any(t.spawns_agents for t in tools) else None, mcp=mcp,
        settings=config.settings, handoffs=handoffs)
    shared = parent.state.budget.shared if parent is not None else shared_spend  # a batch's spend counts
    state = RunState(h, Budget(options.max_budget_usd, shared=shared), hooks=hooks.state)  # the subagent's calls as they happen
    compactor = AutoCompactor(options.context_window, options.compact_threshold, options.auto_compact,
                              model.name)  # context.py
    run = Run(deps, state, compactor, structured=structured, memory=memory, warnings=warnings, obs=obs,
              is_top=parent is None, trust=trust)
    ctx.ports = RunPortsOf(run)
    if parent is None and options.include_hook_events:  # hook_started / hook_response messages
        hooks.state.trace = True
    if parent is None and hooks.active:  # prompt/agent hooks' model, PermissionRequest before the gate's asks
        from .hookjudge import wire_hooks

        wire_hooks(hooks, permissions, ctx.ports)
    if parent is None:  # auto mode's classifier (gate/auto.py): the run's model, charged to the run
        permissions.auto = _auto_classifier(run)
    ctx.permission_mode, ctx.set_permission_mode = run.mode_port(permissions)
    ctx.finish = lambda text: setattr(run.state, "final", text)
    if sub_hooks is not None:
        sub_hooks.history = lambda: run.state.h
    return run


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


def _mcp_servers(options: AgentOptions, cwd: Path, settings: Settings | None, env: dict[str, str],
                 warnings: list[str]) -> McpServers | None:
    """The top run's MCP servers (mcp/), opened by the loop before its first step; None without any."""
    from .mcp import may_have_servers

    if not may_have_servers(options, cwd, settings):
        return None
    from .mcp.config import for_run

    configs = for_run(options, cwd, settings, warnings)  # (a project's server under the user's name: named)
    if not configs:
        return None
    from .mcp.naming import clash_lines

    warnings += clash_lines([c.name for c in configs])  # (mcp__github__ from github and _github)
    from .mcp.asks import user_elicit
    from .mcp.client import McpRuntime

    rt = McpRuntime(configs, cwd, env)
    if options.elicit is not None:  # a front end with a user answers the servers' questions (mcp/asks.py)
        rt.asks.elicit = user_elicit(options.elicit)
    return rt


def _skill_tool(options: AgentOptions, cwd: Path, warnings: list[str], trust: Trust,
                plugins: list[Plugin]) -> list[Tool]:
    """The Skill tool (skills.py) when the setting sources or the plugins hold skills and none is given."""
    sources = options.setting_sources or []
    extra = [d for p in plugins for d in p.skills_dirs]
    if not (sources or extra) or any(t.name == "Skill" for t in options.tools):
        return []
    from .skills import find_skills, make_skill_tool

    skills, found = find_skills(cwd, sources, trusted=trust.trusted, extra=extra)
    warnings += found
    warnings += trust.note(i for sk in skills for i in sk.ignored)  # untrusted: their allowed-tools
    return [make_skill_tool(skills)] if skills else []


def _has_installed_plugins() -> bool:
    from .home import loopwright_home

    return (loopwright_home() / "plugins" / "installed_plugins.json").is_file()


def _unloaded_plugins(settings: Settings | None, plugins: list[Plugin], warnings: list[str]) -> None:
    """enabledPlugins naming a plugin that is not installed (with nothing installed, run_plugins
    did not look): one line each, never silence."""
    if settings is None or plugins or _has_installed_plugins():
        return
    warnings += [f"enabledPlugins names {k}, which is not installed (loopwright plugin install {k})"
                 for k, on in settings.enabled_plugins.items() if on]


def _styled(options: AgentOptions, cwd: Path, tools: list[Tool], system: str | None, settings: Settings | None,
            warnings: list[str], plugins: list[Plugin]) -> str | None:
    """The system text in the run's output style (outputstyles.py): AgentOptions.output_style,
    else the settings' "outputStyle"."""
    name = options.output_style or (settings.output_style if settings is not None else None)
    if not name or name == "default":
        return system
    from .outputstyles import find_styles, pick_style, styled_system
    from .prompts import default_system_prompt

    more = [(d, f"plugin:{p.name}") for p in plugins for d in p.styles_dirs]
    styles, said = find_styles(cwd, [s for s in options.setting_sources or [] if s in ("user", "project")], more)
    style, unknown = pick_style(name, styles)
    warnings += [*said, *([unknown] if unknown else [])]
    own = isinstance(options.system_prompt, dict) or (
        isinstance(options.system_prompt, str) and options.system_prompt == default_system_prompt(cwd, options.tools))
    return styled_system(system, style, own)


def _with_agent_files(options: AgentOptions, cwd: Path, tools: list[Tool], warnings: list[str],
                      trust: Trust, plugins: list[Plugin]) -> list[Tool]:
    """The Agent tool with the plugins' agents and the agent files of the setting sources as more
    types (agentfiles.py; a file's agent shadows a plugin's of the same name)."""
    from .agents import with_agents

    agents: dict[str, Any] = {}
    for p in plugins:
        agents.update(p.agents(warnings))
    sources = [s for s in options.setting_sources or [] if s in ("user", "project")]
    if sources:
        from .agentfiles import find_agent_files

        found = find_agent_files(cwd, sources, trust.trusted)
        warnings += found.warnings
        warnings += trust.note(found.ignored)
        agents.update(found.agents)
    return with_agents(tools, agents)


def _load_memory(options: AgentOptions, cwd: Path, h: list[WireMessage], warnings: list[str],
                 trust: Trust) -> Memory | None:
    """Project memory (memory.py), sent once: in the first user message of a conversation."""
    sources = options.setting_sources or []
    if not options.memory or not sources:
        return None
    from .memory import load_memory

    mem = load_memory(cwd, sources, trusted=trust.trusted)
    warnings += mem.warnings
    warnings += trust.note(mem.ignored)  # imports from outside the workspace, before trust
    text = mem.block_text() if not h[:-1] else None
    if text:
        h[-1]["content"].insert(0, {"type": "text", "text": text})
    return mem


def _sidechain(parent: SessionRecorder | None, session_id: str, cwd: Path,
               hooks: SubagentHooks) -> SessionRecorder | None:
    """A subagent's transcript beside the parent's, as Claude Code keeps it (None: not saved)."""
    transcript = parent.path if parent is not None else None
    if transcript is None:
        return None
    from .sessions import JsonlWriter, SessionRecorder

    path = transcript.with_suffix("") / "subagents" / f"agent-{session_id}.jsonl"
    try:
        recorder = SessionRecorder(JsonlWriter(path, session_id), session_id, cwd)
    except OSError as e:  # the run goes on without it
        log.warning("cannot write the subagent transcript %s: %s", path, e)
        return None
    hooks.transcript_path = str(path)
    return recorder


def _permission_callback(fn: CanUseTool | None, context: ToolPermissionContext) -> CanUseTool | None:
    """The user's can_use_tool, called as (tool_name, input) or as the Agent SDK's
    (tool_name, input, context). A callback that raises or returns something that is no
    decision ends the run (error_during_execution saying so): it is never a silent deny."""
    if fn is None:
        return None
    call: Callable[..., Any] = fn
    try:
        params = list(inspect.signature(fn).parameters.values())
        takes_context = any(p.kind == p.VAR_POSITIONAL for p in params) or len(
            [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= 3
    except (TypeError, ValueError):
        takes_context = False

    async def gate(name: str, tool_input: dict[str, Any]) -> Decision:
        try:
            value = call(name, tool_input, context) if takes_context else call(name, tool_input)
            if inspect.isawaitable(value):
                value = await value
        except Exception as e:  # noqa: BLE001 - reported as the run's error, not as a denial
            return Deny(f"can_use_tool raised {type(e).__name__}: {e} (while deciding on {name}); the run was "
                        "stopped", interrupt=True)
        try:
            return to_decision(value)
        except TypeError:
            return Deny(f"can_use_tool returned {type(value).__name__} {value!r:.200} for {name}: return True/False, "
                        "Allow(...)/Deny(...) or {'behavior': 'allow'|'deny', ...}; the run was stopped",
                        interrupt=True)

    return gate


# --- the ports a running tool gets (tools/base.py's RunPorts) ----------------------------------

class RunPortsOf:
    """RunPorts on top of one Run: what its tools may ask of it, and nothing else."""

    __slots__ = ("_run",)

    def __init__(self, run: Run) -> None:
        self._run = run

    @property
    def tools(self) -> Mapping[str, Tool]:
        return self._run.deps.tools

    @property
    def model(self) -> Model:
        return self._run.deps.model

    @property
    def cwd(self) -> Path:
        return self._run.deps.cwd

    @property
    def settings(self) -> Settings | None:
        return self._run.deps.settings

    @property
    def max_pause_continuations(self) -> int:
        return self._run.deps.options.max_pause_continuations

    def budget(self) -> BudgetView:
        b = self._run.state.budget
        return BudgetView(b.limit_usd, b.spent_usd, b.exhausted())

    def new_model(self, spec: str) -> Model:
        from .models import resolve_model

        o = self._run.deps.options
        return resolve_model(spec, base_url=o.base_url, api_key=o.api_key, max_retries=o.max_retries,
                             prompt_caching=False)

    def charge(self, response: ModelResponse) -> None:
        self._run.charge_aside(response)

    def emit(self, msg: Message) -> None:
        self._run.post(msg)

    def save_artifact(self, name: str, text: str) -> Path | None:
        recorder = self._run.deps.recorder
        path = recorder.path if recorder is not None else None
        if path is None:
            return None
        target = path.with_suffix("") / "tool-results" / name
        try:
            private_dir(target.parent, path.parent)  # beside the transcript, as private as it
            write_private(target, text)
        except OSError as e:
            log.warning("cannot save %s: %s", target, e)
            return None
        return target

    def spawn(self, spec: SubagentSpec) -> Subagent:
        p = self._run.deps
        fallbacks = p.options.fallback_model  # the parent's, less the subagent's own model
        model = spec.model if spec.model is not None else p.model
        if isinstance(fallbacks, list):
            fallbacks = [m for m in fallbacks if m != model] or None
        options = replace(
            p.options, model=model, tools=spec.tools, agents={}, system_prompt=spec.system_prompt,
            append_system_prompt=None, fallback_model=fallbacks,
            max_turns=spec.max_turns if spec.max_turns is not None else p.options.max_turns,
            max_budget_usd=spec.max_budget_usd, hooks=None, session_id=None, resume=None, fork_session=False,
            continue_conversation=False, persist_session=False, handoffs=[],
            output_format=None, output_type=None, output_guardrails=[],  # the parent's answer, not the subagent's
            effort=spec.effort or p.options.effort)  # an agent's own effort, else the parent's
        return _SubagentRun(build_run(options, spec.prompt, self._run, agent_type=spec.agent_type,
                                      agent_mode=spec.permission_mode, agent_hooks=spec.hooks), spec.prompt)

    def absorb(self, sub: Subagent) -> None:
        assert isinstance(sub, _SubagentRun)
        self._run.absorb(sub.run)


class _SubagentRun:
    """Subagent (tools/base.py) on top of the subagent's Run."""

    __slots__ = ("run", "prompt")

    def __init__(self, run: Run, prompt: str) -> None:
        self.run, self.prompt = run, prompt

    @property
    def hooks(self) -> RunHooks:
        return self.run.deps.hooks

    def add_context(self, text: str) -> None:
        self.run.state.h[-1]["content"].append({"type": "text", "text": text})

    def messages(self) -> AsyncGenerator[Message, None]:
        return run_query(self.run, self.prompt)


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

async def query(prompt: Prompt, options: AgentOptions | None = None, *, control: RunControl | None = None,
                history: list[WireMessage] | None = None) -> AsyncIterator[Message]:
    """Run the agent loop on `prompt`, yielding SystemMessage("init"), AssistantMessage,
    UserMessage (tool results), optional partial events, and last a ResultMessage.
    Bad arguments raise TypeError / ValueError before anything runs."""
    run = _query_run(prompt, options, control, history)
    async with contextlib.aclosing(_messages(run, prompt)) as stream:
        async for msg in stream:
            yield msg


def _query_run(prompt: Prompt, options: AgentOptions | None, control: RunControl | None = None,
               history: list[WireMessage] | None = None) -> Run:
    if options is not None and not isinstance(options, AgentOptions):
        raise TypeError(f"options must be an AgentOptions, not {type(options).__name__}")
    return build_run(options or AgentOptions(), prompt, control=control, history=history)


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


__all__ = ["RunPortsOf", "arun", "build_gate", "build_run", "query", "run"]
