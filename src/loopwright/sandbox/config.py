"""Room: bases (the gate). Owns the `sandbox` settings: their parsing and checks (SandboxConfig),
the allowed-domain match, and AgentOptions(sandbox=...) on top of the files; imports nothing of loopwright."""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_TOP_KEYS: dict[str, type] = {"enabled": bool, "failIfUnavailable": bool, "autoAllowBashIfSandboxed": bool,
             "excludedCommands": list, "allowUnsandboxedCommands": bool, "network": dict,
             "filesystem": dict, "env": dict}
# Claude Code keys loopwright accepts and does not act on (so a shared settings file still loads).
_IGNORED_KEYS = {"ignoreViolations", "enableWeakerNestedSandbox", "enableWeakerNetworkIsolation", "ripgrep"}
_NETWORK_KEYS: dict[str, type] = {"allowedDomains": list, "allowLocalBinding": bool, "allowUnixSockets": list,
                 "allowAllUnixSockets": bool}
_NETWORK_IGNORED = {"allowManagedDomainsOnly", "httpProxyPort", "socksProxyPort"}
_FS_KEYS: dict[str, type] = {"allowWrite": list, "denyWrite": list, "denyRead": list}
_ENV_KEYS: dict[str, type] = {"deny": list}
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


class SandboxError(ValueError):
    """An invalid `sandbox` setting, or a sandbox that cannot start."""


@dataclass
class SandboxConfig:
    """The settings' `sandbox` block (Claude Code's keys), with its defaults."""

    enabled: bool = False
    fail_if_unavailable: bool = True
    auto_allow: bool = True  # autoAllowBashIfSandboxed (Claude Code's default: true)
    excluded_commands: list[str] = field(default_factory=list)
    allow_unsandboxed: bool = True  # allowUnsandboxedCommands (Claude Code's default: true)
    allowed_domains: list[str] = field(default_factory=list)
    allow_local_binding: bool = False
    allow_all_unix_sockets: bool = False
    allow_write: list[Path] = field(default_factory=list)
    deny_write: list[Path] = field(default_factory=list)
    deny_read: list[Path] = field(default_factory=list)
    env_deny: list[str] = field(default_factory=list)

    def add(self, data: Any, where: str, base: Path) -> None:
        """Merge one settings object (later files win for scalars, lists concatenate)."""
        if isinstance(data, bool):  # `"sandbox": true` is the shorthand of {"enabled": true}
            data = {"enabled": data}
        obj = _check_obj(data, "sandbox", _TOP_KEYS, _IGNORED_KEYS, where)
        for key, attr in (("enabled", "enabled"), ("failIfUnavailable", "fail_if_unavailable"),
                          ("autoAllowBashIfSandboxed", "auto_allow"),
                          ("allowUnsandboxedCommands", "allow_unsandboxed")):
            if key in obj:
                setattr(self, attr, obj[key])
        self.excluded_commands += _strings(obj.get("excludedCommands", []), "sandbox.excludedCommands", where)
        net = _check_obj(obj.get("network", {}), "sandbox.network", _NETWORK_KEYS, _NETWORK_IGNORED, where)
        for d in _strings(net.get("allowedDomains", []), "sandbox.network.allowedDomains", where):
            self.allowed_domains.append(_domain(d, where))
        if "allowLocalBinding" in net:
            self.allow_local_binding = net["allowLocalBinding"]
        if "allowAllUnixSockets" in net:
            self.allow_all_unix_sockets = net["allowAllUnixSockets"]
        if _strings(net.get("allowUnixSockets", []), "sandbox.network.allowUnixSockets", where):
            raise SandboxError(f"{where}: sandbox.network.allowUnixSockets: on Linux unix sockets cannot be "
                               "allowed by path (seccomp sees no paths); use allowAllUnixSockets: true, or "
                               "excludedCommands for the command that needs the socket")
        fs = _check_obj(obj.get("filesystem", {}), "sandbox.filesystem", _FS_KEYS, set(), where)
        for key, target in (("allowWrite", self.allow_write), ("denyWrite", self.deny_write),
                            ("denyRead", self.deny_read)):
            for p in _strings(fs.get(key, []), f"sandbox.filesystem.{key}", where):
                target.append(_fs_path(p, base))
        env = _check_obj(obj.get("env", {}), "sandbox.env", _ENV_KEYS, set(), where)
        self.env_deny += _strings(env.get("deny", []), "sandbox.env.deny", where)


def _check_obj(data: Any, name: str, keys: dict[str, type], ignored: set[str], where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise SandboxError(f"{where}: {name} must be an object, not {type(data).__name__}")
    for k, v in data.items():
        if k in ignored:
            continue
        if k not in keys:
            raise SandboxError(f"{where}: unknown setting {name}.{k}; known: {', '.join(sorted(keys))}")
        want = keys[k]
        if not isinstance(v, want) or (want is not bool and isinstance(v, bool)):
            raise SandboxError(f"{where}: {name}.{k} must be a {'boolean' if want is bool else want.__name__}"
                               f", not {json_type(v)}")
    return data


def json_type(v: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "list", dict: "object",
            type(None): "null"}.get(type(v), type(v).__name__)


def _strings(v: list[Any], name: str, where: str) -> list[str]:
    bad = [x for x in v if not isinstance(x, str) or not x.strip()]
    if bad:
        raise SandboxError(f"{where}: {name} must be a list of non-empty strings, got {bad[0]!r}")
    return [x.strip() for x in v]


def _domain(d: str, where: str) -> str:
    """A hostname, `*.example.com`, or an IP address; lower-cased."""
    import ipaddress  # only when a settings file lists domains

    host = d.lower().rstrip(".")
    with contextlib.suppress(ValueError):
        return str(ipaddress.ip_address(host.strip("[]")))
    labels = host[2:].split(".") if host.startswith("*.") else host.split(".")
    if not labels or not all(_HOST_LABEL.fullmatch(lab) for lab in labels) or "*" in host[2:]:
        raise SandboxError(f"{where}: sandbox.network.allowedDomains: {d!r} is not a hostname "
                           "(use example.com or *.example.com, no scheme, port or path)")
    return host


def _fs_path(p: str, base: Path) -> Path:
    """Claude Code's anchors: `//abs`, `~/home`, `/relative-to-settings-project`, `./x` or `x`."""
    if p.startswith("//"):
        return Path(p[1:])
    if p == "~" or p.startswith("~/"):
        return Path(p).expanduser()
    return (base / p.lstrip("/")).resolve()


def domain_allowed(host: str, allowed: Sequence[str]) -> bool:
    host = host.lower().rstrip(".").strip("[]")
    for pat in allowed:
        if pat.startswith("*."):
            if host.endswith(pat[1:]) and len(host) > len(pat) - 1:
                return True
        elif host == pat:
            return True
    return False


def config_from(value: SandboxConfig | dict[str, Any] | bool | None, where: str = "sandbox",
                base: Path | None = None, start: SandboxConfig | None = None) -> SandboxConfig | None:
    """AgentOptions(sandbox=...) (a SandboxConfig, a settings dict, True/False or None) on top
    of the settings files' config `start`. A dict without "enabled" turns the sandbox on."""
    if isinstance(value, SandboxConfig):
        return value
    if value is None:
        return start
    cfg = copy.deepcopy(start) if start is not None else SandboxConfig()
    if isinstance(value, dict) and "enabled" not in value:
        value = {**value, "enabled": True}
    cfg.add(value, where, base or Path.cwd())
    return cfg
