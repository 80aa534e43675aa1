"""Room: assemble. The parts build_run (assemble.py) takes from the user's files and options:
the Skill tool and the agent files, the plugins' leftovers, the output style, project memory,
the MCP servers, a subagent's transcript and the user's can_use_tool callback. Each one's
warnings go to the run's init message; none of them sees the Run.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agents import SubagentHooks
from .blocks import WireMessage
from .configdirs import any_folder
from .gate import CanUseTool, Decision, Deny, to_decision
from .loop import McpServers
from .options import AgentOptions
from .tools.base import Tool

if TYPE_CHECKING:
    from .memory import Memory
    from .plugins import Plugin
    from .sessions import SessionRecorder
    from .settings import Settings
    from .trust import Trust

log = logging.getLogger("loopwright.assemble")

def mcp_servers(options: AgentOptions, cwd: Path, settings: Settings | None, env: dict[str, str],
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


def skill_tool(options: AgentOptions, cwd: Path, warnings: list[str], trust: Trust,
                plugins: list[Plugin], settings: Settings | None) -> list[Tool]:
    """The Skill tool (skills.py) when the setting sources or the plugins hold skills or custom
    commands (offered after the skills, as Claude Code 2.1.332 offers them) and none is given,
    with the settings' skillOverrides."""
    sources = options.setting_sources or []
    extra = [(d, p.name) for p in plugins for d in p.skills_dirs]
    more = [(d, p.name) for p in plugins for d in p.commands_dirs]
    if not (sources or extra or more) or any(t.name == "Skill" for t in options.tools):
        return []
    if not (extra or more) and not any_folder(cwd, sources, "skills") and not any_folder(cwd, sources, "commands"):
        return []  # (skills.py not loaded: issue 41)
    from .commands import for_the_skill_tool
    from .skills import make_skill_tool, unmatched_overrides

    skills, found = for_the_skill_tool(cwd, sources, trust.trusted, more, extra)
    warnings += found
    warnings += trust.note(i for sk in skills for i in sk.ignored)  # untrusted: their allowed-tools
    over = settings.skill_overrides if settings is not None else {}
    warnings += unmatched_overrides(over, [sk.name for sk in skills])
    return [make_skill_tool(skills, over)] if skills else []


def has_installed_plugins() -> bool:
    from .home import loopwright_home

    return (loopwright_home() / "plugins" / "installed_plugins.json").is_file()


def unloaded_plugins(settings: Settings | None, plugins: list[Plugin], warnings: list[str]) -> None:
    """enabledPlugins naming a plugin that is not installed (with nothing installed, run_plugins
    did not look): one line each, never silence."""
    if settings is None or plugins or has_installed_plugins():
        return
    warnings += [f"enabledPlugins names {k}, which is not installed (loopwright plugin install {k})"
                 for k, on in settings.enabled_plugins.items() if on]


def styled(options: AgentOptions, cwd: Path, tools: list[Tool], system: str | None, settings: Settings | None,
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


def with_agent_files(options: AgentOptions, cwd: Path, tools: list[Tool], warnings: list[str],
                      trust: Trust, plugins: list[Plugin], settings: Settings | None = None) -> list[Tool]:
    """The Agent tool with the plugins' agents and the agent files of the setting sources as more
    types (agentfiles.py; a file's agent shadows a plugin's of the same name). The `--agents` /
    SDK agents' `skills` are read, and the keys loopwright does not apply named. Under the
    settings' allowManagedHooksOnly or disableAllHooks (`settings`), those agents' own `hooks`
    are left out, named in one line each: they are another file's hooks (they ran in the
    subagent, past the managed switch, where Claude Code 2.1.332 runs none)."""
    from .agents import (
        GENERAL_PURPOSE,
        agent_catalogue,
        is_agent_tool,
        make_agent_tool,
        with_agents,
    )

    sources = [s for s in options.setting_sources or [] if s in ("user", "project")]
    checked_tools = []
    for t in tools:
        have = {k: v for k, v in agent_catalogue(t).items() if v is not GENERAL_PURPOSE} if is_agent_tool(t) else {}
        if have:
            from .agentfiles import check_defined

            checked = check_defined(have, cwd, sources, trust.trusted, warnings)
        else:
            checked = have
        if any(checked[k] is not have[k] for k in have):
            t = make_agent_tool(checked, name=t.name)
        checked_tools.append(t)
    tools = checked_tools
    agents: dict[str, Any] = {}
    for p in plugins:
        agents.update(p.agents(warnings))
    if sources and any_folder(cwd, sources, "agents"):  # (agentfiles.py not loaded without: issue 41)
        from .agentfiles import find_agent_files

        found = find_agent_files(cwd, sources, trust.trusted)
        warnings += found.warnings
        warnings += trust.note(found.ignored)
        agents.update(found.agents)
    off = hooks_off(settings)
    if off is not None:
        for name, d in agents.items():
            if d.hooks:
                warnings.append(f"hooks of agent {name!r} ({d.source or 'a plugin'}) not run: {off}")
                agents[name] = replace(d, hooks=None)
    return with_agents(tools, agents)


def hooks_off(settings: Settings | None) -> str | None:
    """Why the settings let no file's hooks but the managed ones run (None: they do)."""
    if settings is None:
        return None
    if settings.managed_hooks_only:
        return "managed settings set allowManagedHooksOnly"
    return "disableAllHooks is set" if settings.disable_all_hooks else None


def load_memory(options: AgentOptions, cwd: Path, h: list[WireMessage], warnings: list[str],
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


def sidechain(parent: SessionRecorder | None, session_id: str, cwd: Path,
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


def permission_callback(fn: CanUseTool | None, session_id: str, cwd: str, mode: str, deps: Any) -> CanUseTool | None:
    """The user's can_use_tool, called as (tool_name, input) or as the Agent SDK's
    (tool_name, input, context: a ToolPermissionContext of the run's session, cwd, permission
    mode and deps). A callback that raises or returns something that is no decision ends the run
    (error_during_execution saying so): it is never a silent deny."""
    if fn is None:
        return None
    # (only a run with a callback makes a context: its module is imported here, issue 41)
    from .permission_context import ToolPermissionContext

    context = ToolPermissionContext(session_id, cwd, mode, deps=deps)
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


def run_trust(options: AgentOptions, cwd: Path) -> Trust:
    """Workspace trust (trust/): one decision per run; what of the project it leaves out is named."""
    from .trust import Trust, advice, trusted_for

    return Trust(trusted_for(options, cwd), str(cwd), advice(cwd, options.refusal_advice))


def typed_command(prompt: Any, options: AgentOptions, cwd: Path, trust: Trust | None,
                  warnings: list[str]) -> AgentOptions:
    """A prompt typed as `/name args` that names a custom command or a skill (commands.py) of the
    options' setting sources or plugins: the options of its run, as Claude Code runs it in `-p` and
    an Agent SDK session (the command's `allowed-tools` added, its `model`, and `slash_command`,
    which the run expands in the prompt's place after UserPromptSubmit). The rule, so that literal
    text is never taken for a command: only a `str` prompt whose first character is `/`, only when
    the options read setting sources (`setting_sources` is not None: the library's default reads
    none) or name plugins, and only when its first word names a command found there; anything else
    is sent as it is (`/etc/hosts is broken`, content blocks, a leading space). A front end that
    found the command already (`slash_command` given) is not searched again. What the lookup or
    trust left out is named in `warnings`."""
    ex = options.slash_command
    if ex is None and isinstance(prompt, str) and prompt.startswith("/") and (
            options.setting_sources is not None or options.plugins):
        from .commands import expand, find_commands
        from .plugins import plugin_command_dirs

        extra, plugin_skills = plugin_command_dirs(options, cwd, warnings)
        ex = expand(prompt, find_commands(cwd, options.setting_sources or [], trusted=trust.trusted if trust else None,
                                          warnings=warnings, extra=extra, skills=True, plugin_skills=plugin_skills))
        if ex is not None:
            options = replace(options, allowed_tools=[*options.allowed_tools, *ex.allowed_tools],
                              model=ex.model or options.model, slash_command=ex)
    if ex is not None and trust is not None:
        warnings += trust.note(ex.command.ignored)  # (an untrusted project's command grants nothing)
    return options
