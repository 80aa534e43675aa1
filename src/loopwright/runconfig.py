"""Room: settings (above options). Owns what a run is given from its options on top of the
settings files (settings.py reads and merges those): the run's settings, its gate's rules and
mode, its hooks, env, extra directories and sandbox (RunConfig), and the questions front ends
ask of them (skills turned off, a bypassPermissions the settings disable, whether there are hooks
on an event, the Claude Code settings files it leaves unread); may import options, the sandbox
and below, never mcp, agents, loop or above.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .gate import Permissions, Rule
from .hooks import HookRegistry, Hooks
from .managed import RULES_ONLY, files_hooks, managed_folder, rules_only_drops
from .settings import Settings, load_settings
from .settingsfiles import SETTING_SOURCES, SettingsError, read_json_file, settings_files
from .trust import trusted_for

if TYPE_CHECKING:
    from .options import AgentOptions

BYPASS_DISABLED = "Bypass permissions mode was disabled by settings (permissions.disableBypassPermissionsMode): default mode"


@dataclass(eq=False, repr=False)  # (identity: built once for one run, holding its gate and hooks)
class RunConfig:
    """What a run's gate and hooks are built from: options on top of settings files."""

    permissions: Permissions
    hooks: HookRegistry  # frozen: each run fires it with its own HookState (hooks.RunHooks)
    add_dirs: list[Path]
    env: dict[str, str]
    settings: Settings | None
    sandbox: Any = None  # sandbox.Sandbox when Bash runs in the OS sandbox


def uses_settings(options: AgentOptions) -> bool:
    return options.setting_sources is not None or options.settings is not None or options.claude_settings


def skills_off(options: AgentOptions, cwd: Path) -> list[str]:
    """The commands and skills the settings' skillOverrides turn `off`, for the lists of commands a
    front end shows (a settings file that cannot be read: none; the run names it)."""
    try:
        s = run_settings(options, cwd)
    except SettingsError:
        return []
    return [n for n, v in s.skill_overrides.items() if v == "off"] if s is not None else []


def refuse_bypass(options: AgentOptions, mode: str) -> None:
    """Refuse (ValueError, Claude Code's words) a change to bypassPermissions the settings disable."""
    try:
        off = mode == "bypassPermissions" and allowed_mode(run_settings(options, Path(options.cwd or ".")), mode) != mode
    except SettingsError:
        return  # (the next run names the file)
    if off:
        raise ValueError("Cannot set permission mode to bypassPermissions because it is disabled by settings "
                         "or configuration")


def allowed_mode(settings: Settings | None, mode: str | None) -> str | None:
    """`mode`, but default for a bypassPermissions the settings disable (said once, as Claude Code)."""
    if mode != "bypassPermissions" or settings is None or not settings.disable_bypass:
        return mode
    if BYPASS_DISABLED not in settings.warnings:
        settings.warnings.append(BYPASS_DISABLED)
    return "default"


def run_settings(options: AgentOptions, cwd: Path, accepted: dict[Path, Any] | None = None) -> Settings | None:
    """The settings files a run of `options` reads, merged (None: it reads none: the library reads
    none by default, like the Agent SDK; `setting_sources`, `settings` or `claude_settings` ask).
    `accepted`: the files' contents its session applied so far (load_settings)."""
    host = options.managed_settings
    if not uses_settings(options):  # (managed settings apply all the same, as Claude Code's SDK reads them)
        return load_settings(cwd, [], trusted=True, host=host) if host or managed_folder()[0] is not None else None
    sources = options.setting_sources
    return load_settings(cwd, SETTING_SOURCES if sources is None else sources, claude=options.claude_settings,
                         extra=options.settings, trusted=trusted_for(options, cwd), accepted=accepted or None, host=host)


def unread_claude_files(options: AgentOptions, cwd: Path, settings: Settings | None) -> list[str]:
    """One line per Claude Code settings file a run that reads settings files leaves unread (no
    claude_settings), saying what of it is not applied (its deny rules, hooks, ...) and how to read it,
    so a Claude Code user's rules are not dropped in silence. Only the sources the run asked for (none:
    nothing; the SDK's CLI always reads them), not a file --settings read, not one holding nothing
    loopwright would use; a file that cannot be read is named as such."""
    if options.claude_settings or settings is None or not uses_settings(options):
        return []
    sources = SETTING_SOURCES if options.setting_sources is None else options.setting_sources
    read = {p.resolve() for p in settings.files}
    how = "--claude-settings" if options.refusal_advice == "cli" else "AgentOptions(claude_settings=True)"
    lines: list[str] = []
    for path, _ in settings_files(cwd, sources, claude=True):
        if path.parent.name != ".claude" or path.resolve() in read or not path.is_file():
            continue
        read.add(path.resolve())  # (cwd = the home directory: ~/.claude/settings.json is both levels' file)
        try:
            data = read_json_file(path)
            held = _held(data) if isinstance(data, dict) else "malformed: not a JSON object"
        except SettingsError as e:
            held = f"malformed: {e}"
        if held.startswith("malformed: "):
            lines.append(f"{path}: not read ({held}; Claude Code's settings files are read with {how})")
        elif held:
            lines.append(f"{path}: not read, so its {held} are not applied (Claude Code's settings files are read "
                         f"with {how})")
    return lines


def _held(data: dict[str, Any]) -> str:
    """What of a settings object loopwright would use: "3 deny rules, 2 hooks, model" ("": nothing)."""
    from .settingskeys import HONOURED

    def sized(value: Any) -> int:
        return len(value) if isinstance(value, (list, dict)) else 0

    def count(n: int, what: str) -> list[str]:
        return [f"{n} {what}{'' if n == 1 else 's'}"] if n else []

    perms = data.get("permissions")
    perms = perms if isinstance(perms, dict) else {}
    out = [c for key in ("deny", "ask", "allow") for c in count(sized(perms.get(key)), f"{key} rule")]
    out += [k for k in ("defaultMode", "additionalDirectories") if perms.get(k)]
    hooks = data.get("hooks")
    matchers = [m for entries in (hooks.values() if isinstance(hooks, dict) else []) if isinstance(entries, list)
                for m in entries]
    out += count(sum(sized(m.get("hooks")) if isinstance(m, dict) else 1 for m in matchers), "hook")
    out += count(sized(data.get("env")), "env variable") + count(sized(data.get("mcpServers")), "MCP server")
    out += [k for k in HONOURED if k not in ("$schema", "permissions", "hooks", "env", "mcpServers")
            and data.get(k) not in (None, {}, [], "")]
    return ", ".join(out)


def with_settings_model(options: AgentOptions, settings: Settings | None) -> AgentOptions:
    """`options` with the settings' `model` (when neither the options, nor LOOPWRIGHT_MODEL or
    ANTHROPIC_MODEL in the options' env or the environment, name one), `fallbackModel` and
    `effortLevel` (when the options have none), as Claude Code ranks them."""
    from dataclasses import replace

    if settings is None:
        return options
    changes: dict[str, Any] = {}
    env_names = ("LOOPWRIGHT_MODEL", "ANTHROPIC_MODEL")
    if settings.model and options.model is None and not any((options.env or {}).get(n) or os.environ.get(n)
                                                             for n in env_names):
        from .models.catalog import resolve_alias

        changes["model"] = resolve_alias(settings.model)
    if settings.fallback_model and not options.fallback_model:
        from .models.catalog import resolve_alias

        changes["fallback_model"] = [resolve_alias(m) for m in settings.fallback_model]
    if settings.effort_level and options.effort is None:
        changes["effort"] = settings.effort_level
    if not changes:
        return options
    try:
        return replace(options, **changes)
    except (TypeError, ValueError) as e:
        raise SettingsError(f"settings: {e}") from None


def with_env_knobs(options: AgentOptions, settings: Settings | None) -> AgentOptions:
    """`options` with Claude Code's CLAUDE_CODE_MAX_OUTPUT_TOKENS (max_tokens) and MAX_THINKING_TOKENS
    (thinking's budget; 0: none) where the options set none, DISABLE_PROMPT_CACHING (no cache marks),
    CLAUDE_CODE_EFFORT_LEVEL (effort), CLAUDE_CODE_MAX_CONTEXT_TOKENS (context_window), DISABLE_COMPACT
    (auto_compact off), CLAUDE_CODE_MAX_RETRIES (max_retries, when left at its default), a settings file's provider
    variables (SETTINGS_MODEL_VARS: into the options' env, where the model is made from): the options' env over the settings' env
    over the environment, as the processes tools start see them (ccenv.py holds the table)."""
    from dataclasses import replace

    from .ccenv import SETTINGS_MODEL_VARS, TRUTHY_OFF, number
    from .models.reasoning import EFFORT_LEVELS

    env = {**os.environ, **(settings.env if settings else {}), **(options.env or {})}
    changes: dict[str, Any] = {}
    if options.max_tokens is None and (n := number(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS", 0)) > 0:
        changes["max_tokens"] = n
    if options.thinking is None and (n := number(env, "MAX_THINKING_TOKENS", -1)) >= 0:  # (0: off, as --max-thinking-tokens 0)
        changes["thinking"] = {"type": "enabled", "budget_tokens": n} if n else {"type": "disabled"}
    if env.get("DISABLE_PROMPT_CACHING", "").strip().lower() not in TRUTHY_OFF:
        changes["prompt_caching"] = False
    if options.effort is None and (level := env.get("CLAUDE_CODE_EFFORT_LEVEL", "").strip().lower()) in EFFORT_LEVELS:
        changes["effort"] = level  # (auto, unset: the model's own; another word is named by env_lines)
    if options.context_window is None and (n := number(env, "CLAUDE_CODE_MAX_CONTEXT_TOKENS", 0)) > 0:
        changes["context_window"] = n
    if env.get("DISABLE_COMPACT", "").strip().lower() not in TRUTHY_OFF:
        changes["auto_compact"] = False
    if options.max_retries == type(options).max_retries and (n := number(env, "CLAUDE_CODE_MAX_RETRIES", -1)) >= 0:
        changes["max_retries"] = n
    carried = {k: settings.env[k] for k in SETTINGS_MODEL_VARS
               if settings is not None and settings.env.get(k) and k not in (options.env or {})}
    if carried:  # the model is made from the options' env over the process's (Claude Code sets a settings
        # file's env on its own process); tools and hooks get the settings' env all the same
        changes["env"] = {**(options.env or {}), **carried}
    return replace(options, **changes) if changes else options


def has_hooks(options: AgentOptions, event: str) -> bool:
    """Whether a run of `options` has hooks on `event` (its settings files' or the options'): a
    front end that streams text shows whole messages when MessageDisplay hooks rewrite them."""
    try:
        return bool(build_run_config(options, Path(options.cwd or ".").resolve()).hooks.matchers.get(event))
    except Exception:  # noqa: BLE001 - bad settings are said when the first run reads them
        return False


def build_run_config(options: AgentOptions, cwd: Path, settings: Settings | None = None) -> RunConfig:
    """Settings files (`settings`: already read by run_settings, else read here) merged with the
    options. When settings are used and no mode is set anywhere, the mode is `default`."""
    if settings is None:
        settings = run_settings(options, cwd)
    mode = options.permission_mode
    if mode is None and settings is not None:
        mode = settings.default_mode or "default"  # type: ignore[assignment]
    mode = allowed_mode(settings, mode)  # type: ignore[assignment]
    add_dirs = [Path(cwd, Path(d).expanduser()).resolve() for d in (options.add_dirs or [])]
    if settings is not None:
        add_dirs = [*settings.additional_directories, *add_dirs]
    allow, ask, deny = permission_rules(options, settings)
    # The processes tools and hooks start get the settings' env, then the options' own (AgentOptions.env).
    env = {**(settings.env if settings else {}), **(options.env or {})}
    permissions = Permissions(mode, allow, deny, options.can_use_tool, ask_tools=ask, cwd=cwd, add_dirs=add_dirs,
                              exec_path=env.get("PATH"))
    if settings is not None:
        permissions.closed_grants = RULES_ONLY if settings.managed_rules_only else None
        permissions.block_reads, permissions.block_writes = settings.block_reads, settings.block_writes
    hooks = options.hooks if isinstance(options.hooks, Hooks) else Hooks(options.hooks or {})
    if settings is not None and (settings.hooks or settings.managed_hooks or settings.env):  # (the caller's is kept)
        hooks = hooks.merged(Hooks(files_hooks(settings, options.bare), env=dict(settings.env)))
    registry = hooks.freeze()  # what the run's hooks are, fixed now (a later registration does not reach it)
    if options.env:
        registry = registry.with_env(options.env)
    sandbox = None
    if options.sandbox is not None or (settings is not None and settings.sandbox is not None):
        from .sandbox import SandboxError, config_from, make_sandbox

        try:  # the options' sandbox (--sandbox, AgentOptions(sandbox=...)) on top of the files'
            sb_config = config_from(options.sandbox, "AgentOptions.sandbox", cwd,
                                    start=settings.sandbox if settings is not None else None)
            sandbox = make_sandbox(sb_config, cwd, add_dirs, permissions, env)
        except SandboxError as e:
            raise SettingsError(str(e)) from None
    if sandbox is not None:
        permissions.sandbox_auto_allow = sandbox.auto_allows
        permissions.sandbox_escape = sandbox.config.allow_unsandboxed
    return RunConfig(permissions, registry, add_dirs, env, settings, sandbox)


def permission_rules(options: AgentOptions, settings: Settings | None) -> tuple[list[Rule], list[Rule], list[Rule]]:
    """The run's allow, ask and deny rules: the settings files' first, then the options' flags
    (allowManagedPermissionRulesOnly: the managed ones and --disallowedTools', as Claude Code)."""
    allow, ask, deny = (settings.allow, settings.ask, settings.deny) if settings else ([], [], [])
    try:
        allowed = _cli_rules(options.allowed_tools, "--allowedTools", "allow")
        denied = _cli_rules(options.disallowed_tools, "--disallowedTools", "deny")
    except ValueError as e:
        raise SettingsError(str(e)) from None
    if settings is not None and settings.managed_rules_only:
        allow, ask, deny = ([r for r in rules if r.source == "managed"] for rules in (allow, ask, deny))
        allowed = rules_only_drops(settings.warnings, allowed)
    return [*allow, *allowed], list(ask), [*deny, *denied]


def _cli_rules(items: list[str], flag: str, kind: str) -> list[Rule]:
    out = []
    for item in items:
        try:
            out.append(Rule.parse(item, source="cli", kind=kind))
        except ValueError as e:
            raise ValueError(f"{flag}: {e}") from None
    return out
