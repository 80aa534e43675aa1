"""Room: plugins (below assemble). Owns Claude Code plugins: reading a plugin directory and what it
brings (commands, agents, skills, hooks, MCP servers, output styles), and which plugins a run
has; may import agentfiles, settings, mcp.config's types, skills and below, never loop or above.

A plugin is a directory with `.claude-plugin/plugin.json` (`name`, `version`, `description`, and
optional paths for its parts) and, by convention, `commands/*.md`, `agents/*.md`,
`skills/<name>/SKILL.md`, `hooks/hooks.json`, `.mcp.json` and `output-styles/*.md`. A run's
plugins are its `--plugin-dir` directories (AgentOptions.plugins, the Agent SDK's `plugins=`) and
the installed ones that are enabled (plugins/store.py; `enabledPlugins` in settings). A plugin
is code from elsewhere: installing it (or naming its directory) is the consent, and what it may
run (its hook commands and MCP server commands) is listed before it runs (`Plugin.runs`).
`${CLAUDE_PLUGIN_ROOT}` in its hooks and MCP configs is its directory, as in Claude Code.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .manifest import MANIFEST_KEYS, Plugin, PluginError, load_plugin, plugin_dirs_of

if TYPE_CHECKING:
    from ..options import AgentOptions

def option_dirs(options: AgentOptions) -> list[str]:
    """AgentOptions.plugins as directories (the Agent SDK's [{"type": "local", "path": ...}] or paths)."""
    out: list[str] = []
    for p in options.plugins or []:
        if isinstance(p, dict):
            if p.get("type", "local") != "local" or not isinstance(p.get("path"), str):
                raise PluginError(f"plugins: {p!r}: only {{\"type\": \"local\", \"path\": ...}} plugins are supported")
            out.append(p["path"])
        else:
            out.append(str(p))
    return out


def plugins_for(options: AgentOptions, cwd: Path, enabled: dict[str, Any] | None = None,
                warnings: list[str] | None = None, installed: bool = True) -> list[Plugin]:
    """The run's plugins: its --plugin-dir ones, then the installed ones that are enabled (the
    store's state, with the settings' `enabledPlugins` over it). A plugin that cannot be read is
    one warning line; the others still load. `installed` False: the --plugin-dir ones only."""
    said = warnings if warnings is not None else []
    out: list[Plugin] = []
    for d in option_dirs(options):
        for root in plugin_dirs_of(Path(d).expanduser()):
            try:
                out.append(load_plugin(root))
            except PluginError as e:
                said.append(str(e))
    from .store import enabled_plugins

    if installed:
        out += enabled_plugins(enabled or {}, said)
    seen: set[str] = set()
    unique = []
    for p in out:  # the first of a name wins (--plugin-dir before the installed)
        if p.name in seen:
            said.append(f"plugin {p.name!r} of {p.root} is not loaded: another plugin of that name is")
            continue
        seen.add(p.name)
        unique.append(p)
        unused = [k for k in p.manifest if k not in MANIFEST_KEYS]
        if unused:  # (lspServers, userConfig, ...): named, never dropped quietly
            said.append(f"plugin {p.name!r}: loopwright does not use {', '.join(unused)} of its plugin.json")
    return unique


def plugin_command_dirs(options: AgentOptions, cwd: Path,
                        warnings: list[str]) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """A run's plugins' command folders and skill folders, each with its plugin's name: what
    commands.find_commands takes as `extra` (`/plugin:command`) and `plugin_skills` (`/plugin:skill`),
    the same in every front end."""
    plugins = run_plugins(options, cwd, warnings)
    return ([(d, p.name) for p in plugins for d in p.commands_dirs],
            [(d, p.name) for p in plugins for d in p.skills_dirs])


def run_plugins(options: AgentOptions, cwd: Path, warnings: list[str]) -> list[Plugin]:
    """The plugins of a run of these options (nothing is read when it names no plugin directory
    and none is installed): the settings' `enabledPlugins` are read for the installed ones. The
    installed plugins are the user's setup: they join runs that read the "user" setting source
    (the CLI's default; not --setting-sources without user, nor the library's default of none)."""
    from .store import INSTALLED, store_dir

    installed = (not options.bare and "user" in (options.setting_sources or [])
                 and (store_dir() / INSTALLED).is_file())  # --bare: no installed plugins
    if not options.plugins and not installed:
        return []
    enabled: dict[str, Any] = {}
    from ..runconfig import uses_settings
    from ..settings import SETTING_SOURCES, SettingsError, load_settings

    if uses_settings(options):
        from ..trust import trusted_for

        sources = SETTING_SOURCES if options.setting_sources is None else options.setting_sources
        try:
            enabled = load_settings(cwd, sources, claude=options.claude_settings, extra=options.settings,
                                    trusted=trusted_for(options, cwd)).enabled_plugins
        except SettingsError:
            pass  # the run's own reading of the settings reports it
    return plugins_for(options, cwd, enabled, warnings, installed)


def with_plugins(options: AgentOptions, plugins: list[Plugin], warnings: list[str],
                 hooks_allowed: bool = True) -> AgentOptions:
    """`options` with the plugins' hooks and MCP servers added (the run reads them from there).
    What a --plugin-dir plugin may run is listed first (an installed one's was, at install).
    `hooks_allowed` False (settings' disableAllHooks): no plugin's hooks."""
    from dataclasses import replace

    from ..hooks import Hooks

    for p in plugins:
        if p.source == "--plugin-dir":
            warnings += [f"plugin {p.name} ({p.root}) may run: {line}" for line in p.runs()]
    hooks = hooks_of(plugins, warnings) if hooks_allowed else {}
    servers: dict[str, Any] = {}
    for p in plugins:
        try:
            servers.update(p.mcp_servers())
        except PluginError as e:
            warnings.append(f"{e}; its MCP servers are not used")
    changes: dict[str, Any] = {}
    if hooks:
        given = options.hooks if isinstance(options.hooks, Hooks) else Hooks(options.hooks or {})
        changes["hooks"] = given.merged(Hooks(hooks))
    if servers:
        configured = options.mcp_servers
        if configured is None or isinstance(configured, dict):
            inner = dict((configured or {}).get("mcpServers", configured or {}))
            changes["mcp_servers"] = {"mcpServers": {**servers, **inner}}
        else:
            warnings.append(f"the plugins' MCP servers ({', '.join(servers)}) are not added to mcp_servers given as a "
                            "file path: give them as a dict")
    return replace(options, **changes) if changes else options


def hooks_of(plugins: Iterable[Plugin], warnings: list[str]) -> dict[str, Any]:
    """Every plugin's hooks merged, in the settings' parsed form ({event: [HookMatcher]})."""
    from ..settings import Settings, SettingsError

    merged = Settings()
    for p in plugins:
        try:
            merged.add({"hooks": p.hooks()}, f"plugin {p.name!r} ({p.root})", p.root)
        except (SettingsError, PluginError) as e:
            warnings.append(f"{e}; its hooks are not used")
    warnings += merged.warnings
    return merged.hooks


__all__ = ["Plugin", "PluginError", "hooks_of", "load_plugin", "option_dirs", "plugin_dirs_of", "plugins_for",
           "run_plugins", "with_plugins"]
