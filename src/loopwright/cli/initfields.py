"""Room: cli. Owns the fields of Claude Code's stream-json lines that a run does not report itself:
the `system`/`init` line's names of what a session may call (`slash_commands`, `skills`, `agents`,
`plugins`, `output_style`) and the result's `modelUsage` limits (`contextWindow`,
`maxOutputTokens`), the same in `-p --output-format stream-json --verbose` / `json` (cli.headless)
and the Agent SDK protocol (sdkproto); may import the rooms below cli.

The run itself does not list them (a run reads a command or a skill only when its prompt names
one): they are read here from the same places the run reads them (commands.command_listing,
agentfiles, plugins/, outputstyles), with the options the run starts from, and only for the front
ends that write an init line, so a text-mode `-p` does not pay for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..commands import Command
    from ..options import AgentOptions

# The Claude Code version whose stream-json protocol loopwright speaks (the SDKs read it from the
# init line to know which features the CLI has); loopwright's own is loopwright_version.
PROTOCOL_VERSION = "2.1.332"


def init_fields(options: AgentOptions, agent_names: list[str] | None = None) -> dict[str, Any]:
    """The init line's `slash_commands`, `skills`, `agents`, `plugins` and `output_style` for a run
    of `options` (`agent_names`: the subagent types when the front end knows them already), with
    `claude_code_version` and `loopwright_version`."""
    from .. import __version__

    listed = slash_commands(options)
    return {"claude_code_version": PROTOCOL_VERSION, "loopwright_version": __version__, "slash_commands": [c.name for c in listed], "skills": [c.name for c in listed if c.skill],
            "agents": agent_names if agent_names is not None else subagent_types(options),
            "plugins": plugins(options), "output_style": style_name(options)}


def subagent_types(options: AgentOptions) -> list[str]:
    """The subagent types a run of `options` offers: the built-in one, the options' `agents`, the
    agent files' and the plugins' (in Claude Code's order: by name, whatever the case)."""
    from ..agents import DEFAULT_AGENT

    names = [DEFAULT_AGENT, *options.agents, *file_agents(options)]
    return sorted(dict.fromkeys(names), key=str.lower)


def style_name(options: AgentOptions) -> str:
    """The run's output style, as the init line names it (outputstyles.py)."""
    if options.output_style:
        return options.output_style
    from ..runconfig import uses_settings
    from ..settings import SettingsError, load_settings

    if not uses_settings(options) or not options.setting_sources:
        return "default"
    from ..trust import trusted_for

    cwd = Path(options.cwd or ".").resolve()
    try:
        return load_settings(cwd, options.setting_sources, claude=options.claude_settings, extra=options.settings,
                             trusted=trusted_for(options, cwd)).output_style or "default"
    except SettingsError:
        return "default"  # the run itself names the problem


def file_agents(options: AgentOptions) -> list[str]:
    """The subagent types of the plugins and the agent files (agentfiles.py, plugins/) of these options."""
    from ..agentfiles import find_agent_files
    from ..plugins import run_plugins
    from ..trust import trusted_for

    cwd = Path(options.cwd or ".").resolve()
    said: list[str] = []
    names = [n for p in run_plugins(options, cwd, said) for n in p.agents(said)]
    sources = [x for x in options.setting_sources or [] if x in ("user", "project")]
    return [*names, *find_agent_files(cwd, sources, trusted_for(options, cwd)).agents]


def plugins(options: AgentOptions) -> list[dict[str, str]]:
    """The run's plugins as Claude Code's init line lists them: name, path, `source` (NAME@inline for
    a --plugin-dir one, NAME@MARKETPLACE for an installed one) and the manifest's `version` when it
    gives one."""
    from ..plugins import run_plugins

    out = []
    for p in run_plugins(options, Path(options.cwd or ".").resolve(), []):
        row = {"name": p.name, "path": str(p.root),
               "source": f"{p.name}@inline" if p.source == "--plugin-dir" or not p.source else p.source}
        if isinstance(version := p.manifest.get("version"), str):
            row["version"] = version
        out.append(row)
    return out


def slash_commands(options: AgentOptions) -> list[Command]:
    """The custom commands and skills (plugins' `/plugin:name` too) a prompt may name, in Claude
    Code's order (commands.command_listing): the init line's `slash_commands` and `skills`, the
    SDK's initialize answer's `commands`."""
    from ..commands import command_listing
    from ..plugins import plugin_command_dirs
    from ..runconfig import skills_off
    from ..trust import trusted_for

    cwd = Path(options.cwd or ".").resolve()
    extra, plugin_skills = plugin_command_dirs(options, cwd, [])
    if not options.setting_sources and not extra and not plugin_skills:
        return []
    return command_listing(cwd, options.setting_sources or [], trusted_for(options, cwd), extra, plugin_skills,
                           skills_off(options, cwd))


def model_limits(line: dict[str, Any], options: AgentOptions) -> None:
    """Each `modelUsage` entry of a result line with Claude Code's `contextWindow` (the run's W: the
    options', else the model catalog's, 0 where unknown) and `maxOutputTokens` (the output limit a call
    of that model asks for), which the TypeScript SDK's ModelUsage type requires."""
    from ..models.catalog import context_window, output_limit

    for name, used in (line.get("modelUsage") or {}).items():
        if isinstance(used, dict):
            used.setdefault("contextWindow", options.context_window or context_window(name) or 0)
            used.setdefault("maxOutputTokens", options.max_tokens or output_limit(name))
