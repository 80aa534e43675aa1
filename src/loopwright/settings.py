"""Room: settings (above options). Owns reading and merging the settings files;
may import options, the sandbox and below, never mcp, agents, loop or above.

Settings files: permission rules, default mode, extra directories, hooks and env.

Read in this order, later files adding to earlier ones (lists concatenate, scalars: the
later value wins), then the run's own options (CLI flags or AgentOptions) on top (runconfig.py):

    user     $LOOPWRIGHT_HOME/settings.json (default ~/.loopwright/settings.json)
    project  <cwd>/.loopwright/settings.json
    local    <cwd>/.loopwright/settings.local.json
    --settings FILE_OR_JSON
    managed  /etc/claude-code/managed-settings.json, then managed-settings.d/*.json (managed.py)

With `claude_settings=True`, Claude Code's files are read too, each just before the
loopwright file of the same level: ~/.claude/settings.json, .claude/settings.json,
.claude/settings.local.json. The schema is Claude Code's:

    {"permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "acceptEdits",
                     "additionalDirectories": [...]},
     "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...",
                                                              "timeout": 30}]}]},
     "env": {"NAME": "value"},
     "sandbox": {"enabled": true, ...}}   (sandbox.py: Bash in an OS sandbox)

A `/path` rule in a settings file is anchored at that file's project directory (the
directory holding `.loopwright/` or `.claude/`); rules given as flags or options are
anchored at the working directory.

The project and local files of a workspace the user has not trusted are narrowed first
(trust/): only what narrows is kept, and each ignored item is kept in `Settings.ignored`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .gate import PERMISSION_MODES, Rule
from .gate.rules import mistyped_tool
from .gate.verdict import RuleSource
from .home import locked, write_private
from .home import loopwright_home as loopwright_home
from .managed import add_managed, only_line
from .mtime import Stamp, stamp
from .settingsfiles import SETTING_SOURCES as SETTING_SOURCES
from .settingsfiles import SettingsError as SettingsError
from .settingsfiles import read_json_file as read_json_file
from .settingsfiles import settings_files
from .settingskeys import refused_line
from .trust import Ignored, narrow_settings, trusted_for

if TYPE_CHECKING:  # sandbox: imported where a sandbox is configured (most runs have none)
    from .hooks.kinds import HookMatcher
    from .sandbox import SandboxConfig

# The stamps of the settings files loopwright itself wrote ("don't ask again"): not a change a
# ConfigChange hook is asked about (Claude Code does not fire for its own writes).
OWN_WRITES: dict[Path, Stamp] = {}


@dataclass(eq=False, repr=False)  # (identity: the files read for one run, merged into it; docs/architecture.md)
class Settings:
    """The permission rules and mode, extra directories, hooks and env read from the settings
    files, merged."""

    allow: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    default_mode: str | None = None
    disable_bypass: bool = False  # "permissions.disableBypassPermissionsMode" in any file (untrusted too: it narrows)
    block_reads: bool = False  # permissions.blockReadsOutsideWorkingDirectories: true in any file (gate/judge.py)
    block_writes: bool = False  # permissions.blockWritesOutsideWorkingDirectories: the same
    additional_directories: list[Path] = field(default_factory=list)
    hooks: dict[str, list[HookMatcher]] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)  # the files that were read, in order
    sandbox: SandboxConfig | None = None  # "sandbox" (sandbox.py); None: no file sets it
    # MCP servers (mcp/config.py): (name, raw config, file, scope) in reading order, and which
    # of the project's .mcp.json servers are approved (Claude Code's keys).
    mcp_servers: list[tuple[str, Any, str, str]] = field(default_factory=list)
    enable_all_project_mcp_servers: bool = False
    enabled_mcpjson_servers: list[str] = field(default_factory=list)
    disabled_mcpjson_servers: list[str] = field(default_factory=list)
    # Workspace trust (trust/): whether the project's files were read in full, and what of
    # theirs was ignored (each with one line for the user).
    trusted: bool = True
    ignored: list[Ignored] = field(default_factory=list)
    # The web tools' keys (tools/web/config.py reads them): "smallFastModel", and "webFetch" /
    # "webSearch" objects merged key by key, each value with the scope of the file that set it.
    small_fast_model: str | None = None
    small_fast_model_scope: str = "user"
    web: dict[str, dict[str, tuple[Any, str]]] = field(default_factory=dict)
    # Claude Code's "outputStyle" (outputstyles.py) and "statusLine" {"type": "command", "command",
    # "padding"?} (cli/statusline.py: the interactive mode runs it)
    output_style: str | None = None
    status_line: dict[str, Any] | None = None
    enabled_plugins: dict[str, bool] = field(default_factory=dict)  # "enabledPlugins" (plugins/store.py)
    worktree_base_ref: str = "fresh"  # "worktree.baseRef": where --worktree starts (worktrees.py)
    agent: str | None = None  # "agent": the main conversation's agent when --agent is not given (cli/config.py)
    # What of the files is not used, one line each naming it (an unknown hook event, an unsupported
    # hook type): shown as the run starts, never an abort.
    warnings: list[str] = field(default_factory=list)
    # Claude Code's model keys (assemble.py uses them when the options name none), its apiKeyHelper
    # (apikeyhelper.py) and disableAllHooks (no hooks of the files or plugins, no statusLine).
    model: str | None = None
    fallback_model: list[str] | None = None
    effort_level: str | None = None
    api_key_helper: str | None = None
    disable_all_hooks: bool = False
    disable_skill_shell: bool = False  # "disableSkillShellExecution": inline shell of commands is not run (skillshell.py)
    skill_overrides: dict[str, str] = field(default_factory=dict)  # "skillOverrides": name -> skills.OVERRIDES
    # Managed settings (managed.py): their hooks apart (allowManagedHooksOnly runs only them, another
    # file's disableAllHooks leaves them on), their disableAllHooks, and the managed-only switches.
    managed_hooks: dict[str, list[HookMatcher]] = field(default_factory=dict)
    managed_no_hooks: bool = False
    managed_rules_only: bool = False  # allowManagedPermissionRulesOnly: the other files' and --allowedTools' rules go
    managed_hooks_only: bool = False
    # Each settings file looked for (present or not): its stat stamp and its object as read (None:
    # absent). loop/watch.py compares the stamps between steps: Claude Code's ConfigChange.
    seen: dict[Path, tuple[Stamp, Any]] = field(default_factory=dict)

    def add(self, data: dict[str, Any], where: str, base: Path, *, flag: bool = False, narrowed: bool = False,
            managed: bool = False) -> None:
        """Merge one file's (or one JSON string's) settings into this one (`flag`: given by --settings;
        `narrowed`: an untrusted project's, trust/ kept only what narrows; `managed`: a managed
        settings document). The parts are read in this order, so a file with two errors names the
        same one first."""
        if not isinstance(data, dict):
            raise SettingsError(f"{where}: settings must be a JSON object, not {type(data).__name__}")
        self.warnings += [x for x in (refused_line(data, where), None if managed else only_line(data, where)) if x]
        if managed:
            self.managed_rules_only |= data.get("allowManagedPermissionRulesOnly") is True
            self.managed_hooks_only |= data.get("allowManagedHooksOnly") is True
        self._add_model(data, where, managed)
        perms = data.get("permissions", {})
        if not isinstance(perms, dict):
            raise SettingsError(f"{where}: \"permissions\" must be an object")
        if "autoMode" in data:  # Claude Code's classifier settings: loopwright's prompt is fixed (gate/auto.py)
            self.warnings.append(f"{where}: autoMode is not used (loopwright's auto-mode classifier prompt is "
                                 "fixed: docs/auto-mode.md)")
        self._add_rules(perms, where, base, "managed" if managed else _rule_source(where, flag))
        self._add_mode_and_dirs(perms, where, base)
        env = data.get("env", {})
        if not isinstance(env, dict):
            raise SettingsError(f"{where}: \"env\" must be an object of strings")
        self.env.update({str(k): str(v) for k, v in env.items()})
        self._add_hooks(data, where, self.managed_hooks if managed else self.hooks)
        self._add_sandbox(data, where, base)
        self._add_mcp(data, where)
        self._add_web(data, where)
        self._add_display(data, where)
        self._add_skill_overrides(data, where, narrowed)

    def _add_rules(self, perms: dict[str, Any], where: str, base: Path, source: RuleSource) -> None:
        """permissions.allow/ask/deny. An allow rule that cannot be read is left out with one line
        (it only narrows); a deny or ask rule left out would widen what runs, so it stops the run."""
        for key, target in (("allow", self.allow), ("ask", self.ask), ("deny", self.deny)):
            items = perms.get(key, [])
            if not isinstance(items, list):
                raise SettingsError(f"{where}: permissions.{key} must be a list of rules")
            for item in items:
                try:
                    target.append(Rule.parse(item, base=base, source=source, kind=key))
                    typo = mistyped_tool(target[-1].tool)
                    if typo:
                        self.warnings.append(f"{where}: permissions.{key} {item}: {typo}; the rule matches nothing")
                except ValueError as e:
                    if key == "allow":
                        self.warnings.append(f"{where}: permissions.allow: {e}; the rule is ignored")
                        continue
                    raise SettingsError(f"{where}: permissions.{key}: {e} (a {key} rule that cannot be read "
                                        "stops the run: leaving it out would allow more)") from None

    def _add_mode_and_dirs(self, perms: dict[str, Any], where: str, base: Path) -> None:
        """permissions.defaultMode and permissions.additionalDirectories (resolved from the file's base)."""
        mode = perms.get("defaultMode")
        if mode is not None:
            if mode not in PERMISSION_MODES:
                raise SettingsError(f"{where}: permissions.defaultMode {mode!r} is not one of "
                                    f"{', '.join(PERMISSION_MODES)}")
            self.default_mode = mode
        for key, attr in (("blockReadsOutsideWorkingDirectories", "block_reads"),
                          ("blockWritesOutsideWorkingDirectories", "block_writes")):
            if perms.get(key, False) not in (True, False):
                raise SettingsError(f"{where}: permissions.{key} must be true or false")
            setattr(self, attr, getattr(self, attr) or perms.get(key) is True)  # (true anywhere wins)
        off = perms.get("disableBypassPermissionsMode")
        self.disable_bypass |= off == "disable"
        if off not in (None, "disable"):
            self.warnings.append(f"{where}: permissions.disableBypassPermissionsMode {off!r} is ignored: "
                                 "its one value is \"disable\"")
        dirs = perms.get("additionalDirectories", [])
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            raise SettingsError(f"{where}: permissions.additionalDirectories must be a list of paths")
        for d in dirs:
            self.additional_directories.append((base / Path(d).expanduser()).resolve())

    def _add_hooks(self, data: dict[str, Any], where: str, into: dict[str, list[HookMatcher]]) -> None:
        hooks = data.get("hooks", {})
        if not isinstance(hooks, dict):
            raise SettingsError(f"{where}: \"hooks\" must be an object keyed by event name")
        if not hooks:  # (the kinds of hook load only for a file that has some: start-up, issue 41)
            return
        from .hooks.kinds import parse_matchers

        for event, entries in hooks.items():
            try:
                matchers = parse_matchers(event, entries, where, self.warnings)
            except ValueError as e:
                raise SettingsError(str(e)) from None
            if matchers is not None:
                into.setdefault(event, []).extend(matchers)

    def _add_sandbox(self, data: dict[str, Any], where: str, base: Path) -> None:
        if "sandbox" not in data:
            return
        from .sandbox import SandboxConfig, SandboxError

        self.sandbox = self.sandbox or SandboxConfig()
        try:
            self.sandbox.add(data["sandbox"], where, base)
        except SandboxError as e:
            raise SettingsError(str(e)) from None

    def _add_model(self, data: dict[str, Any], where: str, managed: bool) -> None:
        for key, attr in (("model", "model"), ("effortLevel", "effort_level"), ("apiKeyHelper", "api_key_helper")):
            value = data.get(key)
            if value is None:
                continue
            if not isinstance(value, str) or not value.strip():
                raise SettingsError(f"{where}: \"{key}\" must be a non-empty string")
            setattr(self, attr, value.strip())
        fallback = data.get("fallbackModel")
        if fallback is not None:
            names = [fallback] if isinstance(fallback, str) else fallback
            if not (isinstance(names, list) and names and all(isinstance(n, str) and n.strip() for n in names)):
                raise SettingsError(f"{where}: \"fallbackModel\" must be a model name or a list of them")
            self.fallback_model = [n.strip() for n in names]
        if "disableAllHooks" in data:  # (a managed file's is read last: it has the last word)
            self.disable_all_hooks = data["disableAllHooks"] is True
            self.managed_no_hooks = self.disable_all_hooks if managed else self.managed_no_hooks
        if data.get("disableSkillShellExecution") is True:  # restrictive: any file may set it, none unsets it
            self.disable_skill_shell = True

    def _add_display(self, data: dict[str, Any], where: str) -> None:
        style = data.get("outputStyle")
        if style is not None:
            if not isinstance(style, str):
                raise SettingsError(f"{where}: \"outputStyle\" must be the name of an output style")
            self.output_style = style
        line = data.get("statusLine")
        if line is not None:
            if not (isinstance(line, dict) and line.get("type", "command") == "command"
                    and isinstance(line.get("command"), str) and line["command"].strip()):
                raise SettingsError(f"{where}: \"statusLine\" must be {{\"type\": \"command\", \"command\": \"...\"}}")
            self.status_line = line
        wt = data.get("worktree")
        if isinstance(wt, dict) and wt.get("baseRef") is not None:
            if wt["baseRef"] not in ("fresh", "head"):
                raise SettingsError(f"{where}: \"worktree.baseRef\" must be \"fresh\" or \"head\"")
            self.worktree_base_ref = wt["baseRef"]
        agent = data.get("agent")
        if agent is not None:
            if not isinstance(agent, str) or not agent.strip():
                raise SettingsError(f"{where}: \"agent\" must be the name of an agent")
            self.agent = agent
        plugins = data.get("enabledPlugins")
        if plugins is not None:
            if not (isinstance(plugins, dict) and all(isinstance(v, bool) for v in plugins.values())):
                raise SettingsError(f"{where}: \"enabledPlugins\" must be an object of \"name@marketplace\": true|false")
            self.enabled_plugins.update(plugins)

    def _add_skill_overrides(self, data: dict[str, Any], where: str, narrowed: bool) -> None:
        """"skillOverrides" {skill name: on | name-only | user-invocable-only | off} (skills.py), merged
        name by name: a later file's entry wins, as Claude Code merges it; an untrusted project's
        only hides more (the more hidden of the two stays)."""
        over = data.get("skillOverrides")
        if over is None:
            return
        from .skills import OVERRIDES

        if not (isinstance(over, dict) and all(v in OVERRIDES for v in over.values())):
            raise SettingsError(f"{where}: \"skillOverrides\" must be an object of \"skill-name\": "
                                + " | ".join(f'"{v}"' for v in OVERRIDES))
        for name, value in over.items():
            now = self.skill_overrides.get(name, "on")
            self.skill_overrides[name] = max(now, value, key=OVERRIDES.index) if narrowed else value

    def _add_web(self, data: dict[str, Any], where: str) -> None:
        # "user": the user's own file, --settings or a file passed with it; "project": a workspace's
        # .loopwright/ or .claude/ file, which may only narrow what the user allows
        in_workspace = Path(where).parent.name in (".loopwright", ".claude") and settings_scope(where) != "user"
        scope = "project" if in_workspace else "user"
        model = data.get("smallFastModel")
        if model is not None:
            if not isinstance(model, str):
                raise SettingsError(f"{where}: \"smallFastModel\" must be a model name (\"\" for none)")
            self.small_fast_model, self.small_fast_model_scope = model, scope
        for key in ("webFetch", "webSearch"):
            obj = data.get(key)
            if obj is None:
                continue
            if not isinstance(obj, dict):
                raise SettingsError(f"{where}: \"{key}\" must be an object")
            self.web.setdefault(key, {}).update({k: (v, scope) for k, v in obj.items()})

    def _add_mcp(self, data: dict[str, Any], where: str) -> None:
        servers = data.get("mcpServers", {})
        if not isinstance(servers, dict):
            raise SettingsError(f"{where}: \"mcpServers\" must be an object of servers by name")
        if servers:
            scope = "local" if where == "--settings" else settings_scope(where)
            self.mcp_servers.extend((str(k), v, where, scope) for k, v in servers.items())
        if "enableAllProjectMcpServers" in data:
            self.enable_all_project_mcp_servers = data["enableAllProjectMcpServers"] is True
        for key, target in (("enabledMcpjsonServers", self.enabled_mcpjson_servers),
                            ("disabledMcpjsonServers", self.disabled_mcpjson_servers)):
            names = data.get(key, [])
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise SettingsError(f"{where}: {key} must be a list of server names")
            target.extend(names)


def load_settings(cwd: str | Path, sources: Sequence[str] = SETTING_SOURCES, *, claude: bool = False,
                  extra: str | Path | dict[str, Any] | None = None, trusted: bool | None = None,
                  accepted: dict[Path, Any] | None = None, host: dict[str, Any] | None = None) -> Settings:
    """Read and merge the settings files (see the module docstring). `host`: a host's managed
    settings (AgentOptions.managed_settings: managed.py keeps what restricts). `extra` is --settings:
    a file path, a JSON string, or a dict. `trusted`: whether the project's files count in full
    (None: as the trust store says for cwd); untrusted, they only narrow (trust.py). `accepted`:
    the objects to use for these files instead of reading them (None: absent), the versions a
    run applied (loop/watch.py: a change a ConfigChange hook blocked is not in them)."""
    cwd = Path(cwd).resolve()
    s = Settings(trusted=trusted_for(None, cwd) if trusted is None else trusted)
    # The user's own files stay the user's when cwd is the home directory (read once).
    user_files = {(loopwright_home() / "settings.json").resolve(), (Path.home() / ".claude" / "settings.json").resolve()}
    for path, base in settings_files(cwd, sources, claude):
        if path in s.seen:
            continue
        if accepted is not None and path in accepted:  # (the watcher keeps the stamps)
            data = accepted[path]
        else:
            mark = stamp(path)
            data = read_json_file(path) if mark is not None else None
            s.seen[path] = (mark, data)
        if data is None or path.resolve() in {p.resolve() for p in s.files}:
            continue
        narrowed = path.resolve() not in user_files and not s.trusted
        if narrowed:
            data, ignored = narrow_settings(data, str(path))
            s.ignored += ignored
        s.add(data, str(path), base, narrowed=narrowed)
        s.files.append(path)
    if not s.trusted and "project" in sources and (cwd / ".mcp.json").is_file():
        s.ignored.append(Ignored("command", str(cwd / ".mcp.json"), "its MCP servers"))
    if extra is not None:
        _add_extra(s, extra, cwd)
    add_managed(s, host, cwd)  # on top of everything, never narrowed by trust (managed.py)
    return s


def _add_extra(s: Settings, extra: str | Path | dict[str, Any], cwd: Path) -> None:
    """--settings on top of the files: a dict, a JSON string or a file (relative to cwd)."""
    if isinstance(extra, dict):
        s.add(extra, "--settings", cwd)
    elif isinstance(extra, str) and extra.lstrip().startswith("{"):
        try:
            data = json.loads(extra)
        except json.JSONDecodeError as e:
            raise SettingsError(f"invalid JSON in --settings: line {e.lineno} column {e.colno}: {e.msg}") from None
        s.add(data, "--settings", cwd)
    else:
        path = Path(extra).expanduser()
        if not path.is_absolute():
            path = cwd / path
        if not path.is_file():
            raise SettingsError(f"settings file {path} does not exist")
        s.add(read_json_file(path), str(path), path.parent, flag=True)
        s.files.append(path)


def _rule_source(where: str, flag: bool) -> RuleSource:
    """Where a settings file's permission rules came from, for the gate's verdicts (telemetry)."""
    if flag or where == "--settings":
        return "cli"
    scope = settings_scope(where)
    return "user" if scope == "user" else "local" if scope == "local" else "project"


def settings_scope(where: str) -> str:
    """user | project | local for a settings file path (for `mcp list` and priorities)."""
    p = Path(where)
    if p.name == "settings.local.json":
        return "local"
    home_files = {(loopwright_home() / "settings.json").resolve(), (Path.home() / ".claude" / "settings.json").resolve()}
    try:
        if p.resolve() in home_files:
            return "user"
    except OSError:
        pass
    return "project" if p.name == "settings.json" else "local"


def add_local_allow_rules(cwd: str | Path, rules: Sequence[str]) -> Path:
    """Add `rules` to permissions.allow in <cwd>/.loopwright/settings.local.json (what "don't
    ask again" saves); returns the file. The rest of the file is kept as it was; a file that is
    not valid JSON is not touched (SettingsError)."""
    for r in rules:
        Rule.parse(r)  # never write a rule the reader would reject
    path = Path(cwd) / ".loopwright" / "settings.local.json"
    with locked(path):  # another session saving its rules at the same time keeps them too
        data: Any = read_json_file(path) if path.exists() else {}
        if not isinstance(data, dict) or not isinstance(data.get("permissions", {}), dict) or not isinstance(
                data.get("permissions", {}).get("allow", []), list):
            raise SettingsError(f"{path}: permissions.allow is not a list in an object; not changed")
        allow = data.setdefault("permissions", {}).setdefault("allow", [])
        allow += [r for r in rules if r not in allow]
        try:
            write_private(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")  # 0600, never half a file
        except OSError as e:
            raise SettingsError(f"cannot write {path}: {e.strerror or e}") from None
        OWN_WRITES[path] = stamp(path)
    return path

