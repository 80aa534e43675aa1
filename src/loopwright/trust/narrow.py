"""Room: trust. What an untrusted workspace may configure: `Ignored` (one thing of the project's left out,
with its line for the user) and the filters that keep only what narrows."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

# What an ignored item would have done: the classes (1 run commands, 2 grant or widen,
# 3 change the environment, 4 read outside the project, 5 take over the user's names).
IgnoredKind = Literal["command", "grant", "environment", "outside-read", "name"]


@dataclass(slots=True)  # (not frozen: never changed nor hashed, and frozen doubles what declaring it costs every start, issue 41)
class Ignored:
    """One thing of the project's that this run does not use, and where it was written."""

    kind: IgnoredKind
    source: str  # the file that says it
    item: str  # what it says, e.g. "hooks.SessionStart", "permissions.allow Bash(*)", "env PATH"
    reason: str = "the workspace is not trusted"

    def line(self, advice: str = "") -> str:
        """One line for the user: what, from where, why, and how to trust (`advice`)."""
        tail = f" ({advice})" if advice and self.reason == "the workspace is not trusted" else ""
        return f"ignored {self.item} from {self.source}: {self.reason}{tail}"

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "source": self.source, "item": self.item, "reason": self.reason}


@dataclass(eq=False)  # (identity: one run's decision, noted into)
class Trust:
    """One run's trust: the decision, the workspace, how to trust it (`hint`), and every item of
    the project the run left out (the init message carries them: `to_json`)."""

    trusted: bool
    workspace: str = ""
    hint: str = ""
    ignored: list[Ignored] = field(default_factory=list)

    def note(self, items: Iterable[Ignored]) -> list[str]:
        """Keep `items`; their lines for the user."""
        items = list(items)
        self.ignored += items
        return [i.line(self.hint) for i in items]

    def to_json(self) -> dict[str, object]:
        return {"workspace": self.workspace, "trusted": self.trusted, "ignored": [i.to_json() for i in self.ignored]}


def advice(workspace: str | Path, style: str = "cli") -> str:
    """How to trust `workspace`, in the words of the front end ("cli", "python", or "command": a
    subcommand such as `mcp list`, which has no --trust)."""
    if style == "python":
        return f"trust it with AgentOptions(trust_workspace=True) or `loopwright trust {workspace}`"
    if style == "command":
        return f"trust it with `loopwright trust {workspace}`"
    return f"trust it with `loopwright trust {workspace}`, or --trust for this run"


NARROW_MODES = ("default", "plan")


def narrow_settings(data: Any, where: str) -> tuple[Any, list[Ignored]]:
    """One project settings file's object as an untrusted workspace may have it: only what
    narrows, and the rest as Ignored items. Keys loopwright does not act on are dropped quietly
    (they do nothing either way); a `permissions` of the wrong type is kept so the reader names it."""
    if not isinstance(data, dict):
        return data, []
    out: dict[str, Any] = {}
    ign: list[Ignored] = []

    def drop(kind: IgnoredKind, item: str) -> None:
        ign.append(Ignored(kind, where, item))

    perms = data.get("permissions")
    if isinstance(perms, dict):
        out["permissions"] = _narrow_permissions(perms, drop)
    elif perms is not None:
        out["permissions"] = perms
    _drop_commands_and_grants(data, drop)
    for key in ("disabledMcpjsonServers",  # (turning a server off narrows)
                "disableSkillShellExecution",  # (only true is read: commands' inline shell is not run)
                "outputStyle",  # a style is text for the model, as the project's memory files are
                "skillOverrides",  # merged so that it only hides skills (settings.py)
                "smallFastModel"):  # tools/web/config.py: only a model of the run's own provider
        if key in data:
            out[key] = data[key]
    if "agent" in data:  # it could pick one of the user's own agents, with what that agent may do
        drop("grant", f"agent {data['agent']}")
    plugins = data.get("enabledPlugins")
    if isinstance(plugins, dict):  # turning a plugin off narrows; turning one on runs its code
        out["enabledPlugins"] = {k: v for k, v in plugins.items() if v is not True}
        for k, v in plugins.items():
            if v is True:
                drop("command", f"enabledPlugins {k}")
    _narrow_web(data, out, drop)
    if "sandbox" in data:
        sb, sb_ign = _narrow_sandbox(data["sandbox"], where)
        ign += sb_ign
        if sb is not None:
            out["sandbox"] = sb
    return out, ign


def _narrow_web(data: dict[str, Any], out: dict[str, Any], drop: Callable[[IgnoredKind, str], None]) -> None:
    """webFetch / webSearch: the caps may only be lowered (tools/web/config.py); where they send, not before trust."""
    for key, widening in (("webFetch", ("allowPrivateNetwork",)), ("webSearch", ("url", "backend"))):
        web = data.get(key)
        if isinstance(web, dict):
            out[key] = {k: v for k, v in web.items() if k not in widening}
            for k in widening:
                if k in web:
                    drop("grant" if k == "allowPrivateNetwork" else "environment", f"{key}.{k} {json.dumps(web[k])}")
        elif web is not None:
            out[key] = web


def _narrow_permissions(perms: dict[str, Any], drop: Callable[[IgnoredKind, str], None]) -> dict[str, Any]:
    """`permissions` as an untrusted workspace may have it: its ask and deny rules, a narrowing mode,
    and the sub-keys loopwright does not apply (kept so that the reader names them)."""
    kept: dict[str, Any] = {k: v for k, v in perms.items() if k not in ("allow", "defaultMode", "additionalDirectories")}
    for rule in _list(perms.get("allow")):
        drop("grant", f"permissions.allow {rule}")
    mode = perms.get("defaultMode")
    if mode is not None:
        if mode in NARROW_MODES:
            kept["defaultMode"] = mode
        else:
            drop("grant", f"permissions.defaultMode {mode}")
    for d in _list(perms.get("additionalDirectories")):
        drop("grant", f"permissions.additionalDirectories {d}")
    return kept


def _drop_commands_and_grants(data: dict[str, Any], drop: Callable[[IgnoredKind, str], None]) -> None:
    """What would run a command, change the environment or grant a server: all named, none kept."""
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event, entries in hooks.items():
            n = len(entries) if isinstance(entries, list) else 1
            drop("command", f"hooks.{event} ({n} {'entry' if n == 1 else 'entries'})")
    env = data.get("env")
    if isinstance(env, dict):
        for name in env:
            drop("environment", f"env {name}")
    servers = data.get("mcpServers")
    if isinstance(servers, dict):
        for name in servers:
            drop("command", f"mcpServers.{name}")
    if data.get("enableAllProjectMcpServers") is True:
        drop("grant", "enableAllProjectMcpServers")
    for name in _list(data.get("enabledMcpjsonServers")):
        drop("grant", f"enabledMcpjsonServers {name}")
    for key in ("apiKeyHelper", "statusLine", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper"):
        if key in data:  # command-valued settings loopwright never runs; named so nobody wonders
            drop("command", key)


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _narrow_sandbox(value: Any, where: str) -> tuple[Any, list[Ignored]]:
    """The project's sandbox may switch the sandbox on and add deny lists; it may not switch it
    off, allow writes, domains, sockets or unsandboxed commands, nor auto-allow Bash."""
    if isinstance(value, bool):
        value = {"enabled": value}
    if not isinstance(value, dict):
        return value, []
    ign: list[Ignored] = []
    out: dict[str, Any] = {}
    for key, narrow in (("enabled", True), ("failIfUnavailable", True), ("autoAllowBashIfSandboxed", False),
                        ("allowUnsandboxedCommands", False)):
        if key in value:
            if value[key] is narrow:
                out[key] = narrow
            else:
                ign.append(Ignored("grant", where, f"sandbox.{key} {json.dumps(value[key])}"))
    if out.get("enabled") is True:  # on, for this project: Bash is still asked, never auto-allowed
        out.setdefault("autoAllowBashIfSandboxed", False)
    for cmd in _list(value.get("excludedCommands")):
        ign.append(Ignored("grant", where, f"sandbox.excludedCommands {cmd}"))
    net = value.get("network")
    if isinstance(net, dict):
        for key, v in net.items():
            ign.append(Ignored("grant", where, f"sandbox.network.{key} {json.dumps(v)}"))
    fs = value.get("filesystem")
    if isinstance(fs, dict):
        kept = {k: fs[k] for k in ("denyWrite", "denyRead") if k in fs}
        for p in _list(fs.get("allowWrite")):
            ign.append(Ignored("grant", where, f"sandbox.filesystem.allowWrite {p}"))
        if kept:
            out["filesystem"] = kept
    if isinstance(value.get("env"), dict):
        out["env"] = value["env"]  # only `deny`: narrows
    return (out or None), ign


def narrow_tools(allowed: Iterable[str], where: str, what: str) -> list[Ignored]:
    """A project skill's or command's allowed-tools, all ignored before trust."""
    return [Ignored("grant", where, f"{what} allowed-tools {t}") for t in allowed]
