"""Room: settings. Owns Claude Code's managed (policy) settings files: where they are, the order they
are read in, what a file that others can write may keep, and the switches only they may set;
may import settingsfiles and trust. settings.py merges them on top of every other file (it imports this module).

As Claude Code 2.1.332 reads them (its bundle: the managed path is `/etc/claude-code` on Linux,
`/Library/Application Support/ClaudeCode` on macOS, `C:\\Program Files\\ClaudeCode` on Windows):

    <folder>/managed-settings.json           first
    <folder>/managed-settings.d/*.json       then, sorted by name; names starting with "." and
                                             names not ending in ".json" are skipped

A document that is not a JSON object stops the run (Claude Code: "Managed settings document could
not be parsed as a JSON object; none of its settings are in effect. Fix or remove it.", exit 1):
going on without it would drop the organization's restrictions.

`LOOPWRIGHT_MANAGED_SETTINGS_DIR` names another folder, for tests and for a deployment that cannot
write the system folder. It is honoured only where the system folder has no managed settings:
an environment variable can never replace or hide an administrator's policy. (Claude Code names
`CLAUDE_CODE_MANAGED_SETTINGS_PATH` in its code, but its published binary ignores it.)

A file or folder that a user other than root and the user running loopwright can write (group- or
world-writable, or owned by another user) is not the organization's word: its content is read as
an untrusted project's (trust/: only what narrows, its deny and ask rules), and each item left out
is named. Claude Code applies such a file as it is."""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .settingsfiles import SettingsError
from .trust import Ignored, narrow_settings

ENV = "LOOPWRIGHT_MANAGED_SETTINGS_DIR"
SYSTEM_DIRS = {"darwin": Path("/Library/Application Support/ClaudeCode"),
               "win32": Path("C:\\Program Files\\ClaudeCode")}
SYSTEM_DIR = SYSTEM_DIRS.get(sys.platform, Path("/etc/claude-code"))
FILE = "managed-settings.json"
DROP_INS = "managed-settings.d"
# Keys Claude Code honours only from managed settings (anywhere else they are named and ignored).
MANAGED_ONLY = frozenset({"allowManagedPermissionRulesOnly", "allowManagedHooksOnly", "parentSettingsBehavior"})
BAD_DOCUMENT = ("Managed settings document could not be parsed as a JSON object; none of its settings are in effect. "
                "Fix or remove it.")
SUSPECT = "the managed settings file is writable by users other than root and you"
RULES_ONLY = ("your organization restricts permission rules to managed settings (allowManagedPermissionRulesOnly). "
              "Ask an admin to add the rules it needs to managed settings.")


@dataclass(eq=False)  # (handed on once: docs/architecture.md)
class ManagedFile:
    """One managed settings document as it is applied: its object (narrowed when `suspect`)."""

    path: Path
    data: dict[str, Any]
    suspect: str | None = None  # why others could have written it (None: root's or the user's own)
    ignored: list[Ignored] = field(default_factory=list)  # what narrowing left out of a suspect file


def managed_folder(system: Path | None = None) -> tuple[Path | None, str | None]:
    """The folder the managed settings are read from (None: there are none) and a line to say
    about it (the environment variable ignored because the system folder has a policy)."""
    system = SYSTEM_DIR if system is None else system
    own = _has_policy(system)
    named = os.environ.get(ENV)
    if not named:
        return (system if own else None), None
    if own:
        return system, f"{ENV} is ignored: {system} holds managed settings, which nothing may replace"
    folder = Path(named).expanduser()
    return (folder if _has_policy(folder) else None), None


def add_managed(s: Any, host: dict[str, Any] | None = None, cwd: Path | None = None) -> None:
    """Merge the managed settings documents into settings.Settings `s`, last (SettingsError: one
    cannot be used, or has a wrong value: the run stops), under them what restricts of a host's
    (`host`: AgentOptions.managed_settings, --managed-settings; its paths are from `cwd`)."""
    folder, said = managed_folder()
    s.warnings += [said] if said else []
    docs = read_managed(folder) if folder is not None else []
    if host:
        if not _host_counts(docs):
            s.warnings.append("--managed-settings left out of the policy tier: an administrator's managed settings "
                              "apply and do not set parentSettingsBehavior to 'merge'")
        else:
            rules_only = any(d.data.get("allowManagedPermissionRulesOnly") is True for d in docs)
            kept, dropped = host_tier(host, rules_only)
            if dropped:
                s.warnings.append("--managed-settings: only what restricts is taken from a host's managed settings; "
                                  f"not taken: {', '.join(dropped)}")
            s.add(kept, "--managed-settings", cwd or Path.cwd(), managed=True)
    for doc in docs:
        s.add(doc.data, str(doc.path), doc.path.parent, managed=True)
        s.ignored += doc.ignored
        s.files.append(doc.path)
    for d in docs:
        if d.data.get("parentSettingsBehavior", "first-wins") not in ("first-wins", "merge"):
            s.warnings.append(f"{d.path}: parentSettingsBehavior {d.data['parentSettingsBehavior']!r} is ignored: "
                              "use \"first-wins\" or \"merge\"")


# What Claude Code 2.1.332 keeps of a host's managed settings besides the permissions and the hook
# switches (host_tier): restrictions of features loopwright lacks, kept so that the line of keys it
# does not honour names them.
_HOST_KEPT = frozenset({
    "disableRemoteControl", "disableAgentView", "disableWorkflows", "disableArtifact", "enableWorkflows",
    "enableArtifact", "allowedHttpHookUrls", "httpHookAllowedEnvVars", "disableCommandPluginSources",
    "disableSideloadFlags", "pluginConfigs", "disableWindowsBashCommandSplit", "allowManagedMcpServersOnly",
    "disableClaudeAiConnectors", "disableDirectMcpSkills", "syncClaudeAiSkills", "syncClaudeAiPlugins",
    "remoteTools", "disablePluginDirectory", "disableAutoMode", "remoteControl", "attribution",
    "strictPluginOnlyCustomization", "deniedMcpServers", "blockedMarketplaces", "deniedModels", "forceLoginOrgUUID",
    "allowedMcpServers", "availableModels", "strictKnownMarketplaces", "allowedProviders", "enforceAvailableModels",
    "availableModelsMatch"})


def host_tier(data: dict[str, Any], rules_only: bool) -> tuple[dict[str, Any], list[str]]:
    """What a host's managed settings keep, as Claude Code filters them ("restrictive-only"), and
    the keys left out. `disableAllHooks` binds as `allowManagedHooksOnly` (a host cannot stop the
    administrator's hooks); allow rules and additionalDirectories only where the administrator's
    settings do not set allowManagedPermissionRulesOnly (`rules_only`); hooks, env, models,
    modes are left out."""
    out: dict[str, Any] = {}
    dropped = []
    for key, value in data.items():
        if key in ("allowManagedHooksOnly", "allowManagedPermissionRulesOnly", "disableSkillShellExecution"):
            out[key] = value is True or out.get(key, False)
        elif key == "disableAllHooks":
            out["allowManagedHooksOnly"] = value not in (None, False, "false") or out.get("allowManagedHooksOnly", False)
        elif key == "permissions" and isinstance(value, dict):
            keep = ["deny", "ask", "disableBypassPermissionsMode", "blockReadsOutsideWorkingDirectories",
                    "blockWritesOutsideWorkingDirectories", *([] if rules_only else ["allow", "additionalDirectories"])]
            out[key] = {k: v for k, v in value.items() if k in keep}
            dropped += [f"permissions.{k}" for k in value if k not in keep]
        elif key == "sandbox" and isinstance(value, dict):
            out[key], lost = _host_sandbox(value)
            dropped += [f"sandbox.{k}" for k in lost]
        elif key in _HOST_KEPT or key == "permissions":
            out[key] = value
        else:
            dropped.append(key)
    return out, dropped


def _host_sandbox(sb: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A host's sandbox: its deny lists and the domains and read paths it lets through (as Claude Code)."""
    keep = {"network": ("deniedDomains", "allowedDomains"), "filesystem": ("denyRead", "denyWrite", "allowRead")}
    out: dict[str, Any] = {}
    lost = []
    for part, value in sb.items():
        if part in keep and isinstance(value, dict):
            out[part] = {k: v for k, v in value.items() if k in keep[part]}
            lost += [f"{part}.{k}" for k in value if k not in keep[part]]
        else:
            lost.append(part)
    return out, lost


def _host_counts(docs: list[ManagedFile]) -> bool:
    """Whether a host's managed settings count beside these documents (none, or "merge")."""
    said = [d.data["parentSettingsBehavior"] for d in docs if "parentSettingsBehavior" in d.data]
    return not docs or (said[-1:] or ["first-wins"])[0] == "merge"


def rules_only(host: dict[str, Any] | None = None) -> bool:
    """Whether allowManagedPermissionRulesOnly is in force (in the managed documents, or a host's
    managed settings where they count): a front end then keeps no rule an answer adds (Claude
    Code: "Rule not saved: managed rules only"). Documents that cannot be read: False (the run
    itself stops on them)."""
    try:
        folder = managed_folder()[0]
        docs = read_managed(folder) if folder is not None else []
    except SettingsError:
        return False
    if any(d.data.get("allowManagedPermissionRulesOnly") is True for d in docs):
        return True
    return host is not None and host.get("allowManagedPermissionRulesOnly") is True and _host_counts(docs)


def _has_policy(folder: Path) -> bool:
    return (folder / FILE).exists() or (folder / DROP_INS).exists()


def read_managed(folder: Path) -> list[ManagedFile]:
    """The managed documents of `folder` in Claude Code's order (SettingsError: one cannot be used)."""
    out = []
    base = folder / FILE
    if base.exists():
        out.append(_read(base, folder))
    drop = folder / DROP_INS
    if drop.exists():
        try:
            names = sorted(p.name for p in drop.iterdir() if p.name.endswith(".json") and not p.name.startswith("."))
        except OSError as e:
            raise SettingsError(f"{drop}: the managed settings folder cannot be read: {e.strerror or e}") from None
        out += [_read(drop / n, drop, folder) for n in names if (drop / n).is_file()]
    return out


def _read(path: Path, *folders: Path) -> ManagedFile:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"{path}: the managed settings file cannot be read: "
                           f"{getattr(e, 'strerror', None) or e}") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):  # (RecursionError: nesting past the parser's depth)
        data = None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: {BAD_DOCUMENT}")
    suspect = _writable_by_others(path, *folders)
    if suspect is None:
        return ManagedFile(path, data)
    narrowed, ignored = narrow_settings(data, str(path))
    for i in ignored:
        i.reason = f"{SUSPECT} ({suspect})"
    return ManagedFile(path, narrowed, suspect, ignored)


def _writable_by_others(*paths: Path) -> str | None:
    """Why a user other than root and this one could have written a file (the first of `paths`) or
    replaced it in its folders (the others), or None. (Windows has no such owners and modes: None.)"""
    if sys.platform == "win32":
        return None
    me = os.geteuid()
    for p in paths:
        st = p.stat()  # (a link: its target, what is read)
        if st.st_uid not in (0, me):
            return f"{p} is owned by uid {st.st_uid}"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"{p} has mode {stat.S_IMODE(st.st_mode):04o}"
    return None


def only_line(data: dict[str, Any], where: str) -> str | None:
    """One line naming the managed-only keys of a settings file that is not managed (ignored there)."""
    keys = sorted(MANAGED_ONLY.intersection(data))
    if not keys:
        return None
    return f"{where}: {', '.join(keys)} is honoured only in managed settings ({SYSTEM_DIR / FILE}); ignored here"


def files_hooks(s: Any, bare: bool) -> dict[str, list[Any]]:
    """The hooks of settings.Settings `s` a run fires, as Claude Code picks them: none under a managed
    disableAllHooks; else the managed ones, then the other files' unless allowManagedHooksOnly,
    --bare (`bare`), or their disableAllHooks (a managed `false`, read last, overrides it)."""
    if s.managed_no_hooks:
        return {}
    out = {e: list(ms) for e, ms in s.managed_hooks.items()}
    for event, matchers in ({} if bare or s.managed_hooks_only or s.disable_all_hooks else s.hooks).items():
        out.setdefault(event, []).extend(matchers)
    return out


def rules_only_drops(warnings: list[str], allowed: list[Any]) -> list[Any]:
    """allowManagedPermissionRulesOnly: the --allowedTools rules `allowed` are not used (none are
    returned), named in `warnings` once in Claude Code's words."""
    if allowed:
        line = (f"Ignoring --allowedTools {', '.join(map(str, allowed))}: permission rules are restricted to "
                "managed settings (allowManagedPermissionRulesOnly)")
        if line not in warnings:
            warnings.append(line)
    return []
