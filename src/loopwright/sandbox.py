"""Room: bases (the gate). Owns the OS sandbox for Bash; may import bashparse and permissions.

Bash in an OS sandbox: what the gate cannot see, the kernel stops.

Settings (Claude Code's names), in any settings file or `AgentOptions(sandbox=...)`:

    "sandbox": {"enabled": true, "failIfUnavailable": true, "autoAllowBashIfSandboxed": true,
                "excludedCommands": ["docker *"], "allowUnsandboxedCommands": false,
                "network": {"allowedDomains": ["pypi.org", "*.github.com"], "allowLocalBinding": false,
                            "allowUnixSockets": [], "allowAllUnixSockets": false},
                "filesystem": {"allowWrite": [...], "denyWrite": [...], "denyRead": [...]},
                "env": {"deny": ["GITHUB_TOKEN"]}}

On Linux each Bash command (and background shell, and Grep's rg) runs under bubblewrap:

- file system: the root read-only; the working directories (cwd, --add-dir,
  filesystem.allowWrite) read-write; a private /tmp. Paths denied by Read(...) rules or
  filesystem.denyRead are masked (an empty tmpfs or /dev/null), so `grep -r`, `tar`, `cp`
  or `git` cannot read them either; paths denied by Edit(...) rules, filesystem.denyWrite
  and the protected paths (.git/hooks, .git/config, shell rc files, credential and settings
  directories) are bound read-only over the writable directories.
- processes: new PID and IPC namespaces, --die-with-parent: nothing a command starts
  (setsid, nohup, a double fork) outlives it. As root, a new user namespace with every
  capability dropped, so root inside cannot remount, write /proc/sys or signal outside.
- network: a new network namespace (only its own loopback). With allowedDomains, a
  filtering HTTP proxy runs in loopwright; the sandbox reaches it through a socket pair
  handed in (no unix socket can be opened inside), a small bridge serves it on
  127.0.0.1:3128 inside, and HTTP(S)_PROXY point there. Only allowed hosts pass.
- unix sockets: a seccomp filter refuses socket(AF_UNIX) (and io_uring, ptrace), so no
  daemon's socket (docker, ssh-agent, dbus) can be reached; allowAllUnixSockets lifts it.
  As in Claude Code on Linux, allowUnixSockets (paths) cannot be filtered and is refused.
- environment: passed through, except sandbox.env.deny and ANTHROPIC_API_KEY /
  OPENAI_API_KEY (never passed).
- loopback (allowLocalBinding, as Claude Code's on macOS): false (the default), no server can
  listen inside (a seccomp filter refuses listen(), and io_uring) and the host's loopback is
  out of reach (the network namespace has its own). true: servers may listen on the sandbox's
  loopback, and the TCP servers listening on the host's loopback when a command starts are
  reachable from it at the same 127.0.0.1 ports, through the same bridge (only those ports,
  only loopback). A server a sandboxed command starts is in that command's namespace: another
  command does not reach it (Claude Code's Linux sandbox ignores the key altogether).
- the escape hatch (allowUnsandboxedCommands, default true as in Claude Code): a Bash call
  with dangerouslyDisableSandbox: true runs outside the sandbox under the normal permission
  gate (it asks; autoAllowBashIfSandboxed does not cover it, nor, unlike Claude Code, does
  bypassPermissions); false: the flag is ignored (the result says so) and every command runs
  sandboxed.
"""

from __future__ import annotations

import contextlib
import copy
import os
import platform
import re
import select
import shutil
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NEVER_PASSED_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
PROXY_PORT = 3128  # inside the sandbox's own network namespace
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"

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


# --- availability ----------------------------------------------------------------------------

_PROBE: dict[str, str | None] = {}


def unavailable_reason() -> str | None:
    """None if bubblewrap runs here (checked once per process), else why not."""
    if "r" in _PROBE:
        return _PROBE["r"]
    reason: str | None = None
    if platform.system() != "Linux":
        reason = (f"the OS sandbox is not supported on {platform.system()} yet (Linux bubblewrap only; "
                  "macOS sandbox-exec is not implemented)")
    elif (bwrap := shutil.which("bwrap")) is None:
        reason = f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    else:
        try:
            p = subprocess.run([bwrap, *_ns_flags(True), "--ro-bind", "/", "/", "--", "true"],
                               capture_output=True, timeout=10)
            if p.returncode != 0:
                err = p.stderr.decode(errors="replace").strip()
                reason = (f"bubblewrap cannot create namespaces here ({err or 'exit ' + str(p.returncode)}); "
                          "unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone"
                          "=1, or kernel.apparmor_restrict_unprivileged_userns=0), or a container forbids them")
        except (OSError, subprocess.TimeoutExpired) as e:
            reason = f"bubblewrap could not run: {e}"
    _PROBE["r"] = reason
    return reason


def _ns_flags(unshare_net: bool) -> list[str]:
    # (no UTS or cgroup namespace: without capabilities neither the host name nor cgroupfs,
    # mounted read-only, can be changed, and each namespace costs start-up time)
    flags = ["--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    if unshare_net:
        flags.append("--unshare-net")
    if os.geteuid() == 0:
        # bwrap run by root keeps every capability: root inside could remount / read-write. A
        # user namespace with no capabilities leaves it only what the mounts allow.
        flags += ["--unshare-user", "--cap-drop", "ALL"]
    return flags


# --- seccomp -----------------------------------------------------------------------------------

# arch: (AUDIT_ARCH, socket, ptrace, process_vm_readv, process_vm_writev, listen)
_ARCH = {"x86_64": (0xC000003E, 41, 101, 310, 311, 50), "aarch64": (0xC00000B7, 198, 117, 270, 271, 201)}
_IO_URING_SETUP = 425  # the same number on x86_64 and aarch64


def seccomp_program(*, unix: bool = True, listen: bool = False, base: bool = True) -> bytes | None:
    """A classic-BPF seccomp filter whose refusals fail with EPERM. `base`: io_uring_setup
    (which can open and bind sockets past the filter), ptrace and process_vm_*; `unix`:
    socket(AF_UNIX, ...); `listen`: listen() (no server can be bound: allowLocalBinding false).
    Other architectures' system calls (i386, x32) always. None on an architecture it does not know."""
    arch = _ARCH.get(platform.machine())
    if arch is None:
        return None
    audit, nr_socket, nr_ptrace, nr_vm_read, nr_vm_write, nr_listen = arch
    ld_w_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    blocked = [*((_IO_URING_SETUP, nr_ptrace, nr_vm_read, nr_vm_write) if base else ()),
               *((nr_listen,) if listen else ())]
    # (code, jump if true, jump if false, k); a jump target is "deny", "allow" or 0 (the next)
    prog: list[tuple[int, int | str, int | str, int]] = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, "deny", audit),
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
        (jge, "deny", 0, 0x40000000),  # the x32 ABI
        *((jeq, "deny", 0, nr) for nr in blocked),
    ]
    if unix:
        prog += [(jeq, 0, "allow", nr_socket),
                 (ld_w_abs, 0, 0, 16),  # args[0] (low word): the domain
                 (jeq, "deny", 0, socket.AF_UNIX)]
    prog += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    at = {"allow": len(prog) - 2, "deny": len(prog) - 1}
    out = b""
    for n, (code, jt, jf, k) in enumerate(prog):
        jt_n, jf_n = ((at[x] - n - 1) if isinstance(x, str) else x for x in (jt, jf))
        out += struct.pack("<HBBI", code, jt_n, jf_n, k)
    return out


# --- the sandbox of one run ------------------------------------------------------------------

# Never writable inside, where they exist at the top of a writable directory: what changes
# how git, the harness, editors or the user's shell behave, and credentials.
PROTECTED_NAMES = (".git/hooks", ".git/config", ".gitmodules", ".loopwright", ".claude", ".vscode", ".idea",
                   ".ssh", ".aws", ".gnupg", ".kube", ".docker", ".bashrc", ".bash_profile", ".bash_login",
                   ".bash_logout", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".profile",
                   ".gitconfig", ".envrc", ".mcp.json", ".netrc", ".pypirc", ".npmrc")


@dataclass
class Wrapped:
    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    close_after_spawn: list[int]  # our copies of the fds handed to the child


class Sandbox:
    """The sandbox of one run: its config, working directories and deny rules."""

    def __init__(self, config: SandboxConfig, cwd: Path, add_dirs: Sequence[Path], permissions: Any = None,
                 env: dict[str, str] | None = None) -> None:
        self.config = config
        self.cwd = Path(cwd).resolve()
        self.writable = _unique([self.cwd, *(Path(d).resolve() for d in add_dirs),
                                 *(p.resolve() for p in config.allow_write)])
        self.permissions = permissions
        self.extra_env = dict(env or {})
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self._proxy: _Proxy | None = None
        self._lock = threading.Lock()

    # -- decisions ----------------------------------------------------------------------------

    def excluded(self, command: str) -> bool:
        """Does `command` match excludedCommands (so it runs outside, under the normal gate)?"""
        if not self.config.excluded_commands:
            return False
        from . import bashparse
        from .permissions import command_matches

        # One plain command only: `docker ps && cat ~/.ssh/id_rsa` must not leave the box.
        parsed = bashparse.parse(command)
        if not parsed.ok or len(parsed.commands) != 1 or parsed.commands[0].opaque:
            return False
        return any(command_matches(spec, command) or command_matches(spec + " *", command)
                   for spec in self.config.excluded_commands)

    def runs_outside(self, command: str, unsandboxed: bool = False) -> bool:
        """Does this Bash call run outside the sandbox? An excluded command does; so does one
        that asks to (dangerouslyDisableSandbox: true) when allowUnsandboxedCommands lets it.
        Otherwise the request is ignored, as in Claude Code."""
        return (unsandboxed and self.config.allow_unsandboxed) or self.excluded(command)

    def auto_allows(self, command: str, unsandboxed: bool = False) -> bool:
        """The gate's hook: a Bash call that will run sandboxed needs no approval; one that runs
        outside goes through the normal gate."""
        return self.config.auto_allow and not self.runs_outside(command, unsandboxed)

    # -- the bwrap command line -----------------------------------------------------------------

    def _mask_lists(self) -> tuple[list[Path], list[Path]]:
        """(paths to hide, paths to make read-only), real paths that exist."""
        hide: list[Path] = list(self.config.deny_read)
        ro: list[Path] = list(self.config.deny_write)
        perms = self.permissions
        if perms is not None:
            for rule in getattr(perms, "deny", []):
                if rule.specifier is None:
                    continue
                if rule.covers_tool("Read"):
                    hide += self._rule_paths(rule)
                elif rule.covers_tool("Edit"):
                    ro += self._rule_paths(rule)
        protected: list[Path] = []
        for w in self.writable:  # one directory listing each, not a stat per protected name
            try:
                present = {e.name: e.is_symlink() for e in os.scandir(w)}
            except OSError:
                continue
            for name in PROTECTED_NAMES:
                top, _, rest = name.partition("/")
                if top in present and not present[top]:
                    protected.append(w / name)
        ro = [p for p in _existing(ro) if any(_under(p, w) for w in self.writable)]
        ro += [p for p in protected if p not in ro and (p.exists() and not p.is_symlink())]
        return _existing(hide), ro

    def _rule_paths(self, rule: Any) -> list[Path]:
        """The files and directories a Read/Edit path rule covers (globs expanded now)."""
        from .permissions import _anchor, path_rule_matches

        anchor, pattern = _anchor(rule.specifier)
        root = {"/": Path("/"), "~": Path.home(), "base": Path(rule.base or self.cwd)}.get(anchor, self.cwd)
        concrete = re.sub(r"/\*\*?$|/$", "", pattern)
        if not any(c in concrete for c in "*?[") and (pattern.startswith("/") or "/" in concrete.strip("/")):
            return [root / concrete.lstrip("/")]
        # A glob (or a bare name, which matches at any depth): walk the directory it anchors to,
        # bounded, when that directory is one the sandbox may write to or the home directory.
        out: list[Path] = []
        seen = 0
        home = str(Path.home())
        for dirpath, dirnames, filenames in os.walk(root):
            for name in (*dirnames, *filenames):
                seen += 1
                p = os.path.join(dirpath, name)
                if path_rule_matches(rule.specifier, p, str(self.cwd), rule.base, home):
                    out.append(Path(p))
            dirnames[:] = [d for d in dirnames if Path(dirpath, d) not in out]
            if seen > 50_000:
                break
        return out

    def wrap(self, argv: Sequence[str], cwd: Path, env: dict[str, str] | None, *,
             bind_files: Iterable[str] = (), network: bool = True) -> Wrapped:
        """The command line that runs `argv` in the sandbox, with its environment and the fds
        to hand over (the seccomp program, the proxy's socket). `network=False`: a program
        that needs none (Grep's rg) gets no bridge, so it starts as fast as it can."""
        hide, ro = self._mask_lists()
        args = [self.bwrap, *_ns_flags(True),
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for proc_dir in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"):
            args += ["--ro-bind-try", proc_dir, proc_dir]  # root would otherwise write sysctls from inside
        args += ["--tmpfs", "/tmp"]
        # The private /tmp must not hide the programs a command runs: a Python environment or a
        # PATH directory that lives under /tmp (a checkout there, a CI runner's) stays, read-only.
        path_dirs = (env if env is not None else os.environ).get("PATH", "").split(os.pathsep)
        for pd in dict.fromkeys([sys.prefix, sys.base_prefix, *path_dirs]):
            if pd and _under(Path(pd), Path("/tmp")) and Path(pd).exists():
                args += ["--ro-bind-try", pd, pd]
        for d in self.writable:
            args += ["--bind-try", str(d), str(d)]
        for f in bind_files:
            args += ["--bind", f, f]
        # A protected path's parents inside a writable directory become mount points too (bound
        # onto themselves): a mount point cannot be renamed, so `mv .git x && mkdir .git` fails.
        parents: list[Path] = []
        for p in ro:
            top = next((d for d in self.writable if _under(p, d)), None)
            parents += [a for a in reversed(p.parents) if top is not None and top in a.parents and a not in parents]
        for p in parents:
            args += ["--bind", str(p), str(p)]
        for p in ro:
            args += ["--ro-bind", str(p), str(p)]
        for p in hide:
            args += (["--tmpfs", str(p), "--remount-ro", str(p)] if p.is_dir()
                     else ["--ro-bind", "/dev/null", str(p)])
        run_env = {k: v for k, v in (env if env is not None else os.environ).items()
                   if k not in NEVER_PASSED_ENV and k not in self.config.env_deny}
        run_env["TMPDIR"] = "/tmp"
        pass_fds: list[int] = []
        ours: list[int] = []

        def program_fd(prog: bytes) -> int:
            r, wfd = os.pipe()
            os.write(wfd, prog)  # a hundred bytes: fits the pipe buffer
            os.close(wfd)
            pass_fds.append(r)
            ours.append(r)
            return r

        cfg = self.config
        # allowLocalBinding: the host's loopback servers are reached through the bridge; without
        # it no server can listen inside (the bridge itself refuses listen() before the command).
        domains = cfg.allowed_domains if network else []
        forwards = loopback_servers() if cfg.allow_local_binding and network else {}
        if domains:
            forwards.pop(PROXY_PORT, None)
        bridge = bool(domains or forwards)
        no_listen = not cfg.allow_local_binding
        if not cfg.allow_all_unix_sockets or no_listen:
            prog = seccomp_program(unix=not cfg.allow_all_unix_sockets, listen=no_listen and not bridge)
            if prog is not None:
                args += ["--seccomp", str(program_fd(prog))]
        cmd = list(argv)
        if bridge:
            mine, theirs = self.proxy().channel(forwards)
            pass_fds.append(theirs)
            ours.append(theirs)
            if domains:
                url = f"http://127.0.0.1:{PROXY_PORT}"
                for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
                    run_env[k] = url
                run_env["NO_PROXY"] = run_env["no_proxy"] = "localhost,127.0.0.1,::1"
            late = seccomp_program(unix=False, listen=True, base=False) if no_listen else None
            cmd = [sys.executable, "-I", "-S", "-c", _BRIDGE, str(theirs),
                   str(PROXY_PORT if domains else 0), ",".join(map(str, sorted(forwards))),
                   str(program_fd(late) if late is not None else -1), *cmd]
        args += ["--chdir", str(cwd), "--", *cmd]
        return Wrapped(args, run_env, tuple(pass_fds), ours)

    def proxy(self) -> _Proxy:
        with self._lock:
            if self._proxy is None:
                self._proxy = _Proxy(self.config.allowed_domains)
            return self._proxy

    # -- explaining failures --------------------------------------------------------------------

    def explain(self, output: str, command: str) -> str | None:
        """A note for a failed command whose output shows the sandbox stopped it, naming the
        setting that would allow it; None if nothing points at the sandbox."""
        notes = []
        if output.startswith("bwrap:"):
            notes.append(f"the sandbox could not be set up ({output.splitlines()[0]})")
        if re.search(r"Read-only file system|EROFS", output):
            notes.append("writes outside the working directories (and to protected paths) are blocked; "
                         "sandbox.filesystem.allowWrite or --add-dir allows a directory")
        if re.search(r"Permission denied|Operation not permitted|EPERM|EACCES", output):
            notes.append("unix sockets, ptrace and io_uring are blocked (sandbox.network.allowAllUnixSockets "
                         "allows unix sockets), "
                         + ("" if self.config.allow_local_binding else
                            "no server may listen (sandbox.network.allowLocalBinding allows it), ")
                         + "and no process has capabilities inside, root included")
        if re.search(r"[Nn]etwork is unreachable|Could not resolve|Temporary failure in name resolution|"
                     r"Name or service not known|Connection refused|ENETUNREACH|getaddrinfo|"
                     r"not in sandbox\.network\.allowedDomains|403 Forbidden", output) or _NET_TOOLS.search(command):
            notes.append("the network is off except for hosts in sandbox.network.allowedDomains (HTTP(S) "
                         "through the proxy at $HTTPS_PROXY)"
                         + ("" if self.config.allow_local_binding else
                            ", and the host's loopback servers are reachable only with "
                            "sandbox.network.allowLocalBinding"))
        if not notes:
            return None
        escape = (" If it must run outside, call Bash again with dangerouslyDisableSandbox: true (the user is "
                  "asked to approve it; sandbox.allowUnsandboxedCommands: false turns this off)."
                  if self.config.allow_unsandboxed else "")
        return ("[sandbox] This command ran in the OS sandbox (sandbox.enabled), which may have caused the "
                "failure: " + "; ".join(notes) + ". A command listed in sandbox.excludedCommands runs outside "
                "the sandbox, under the normal permission rules." + escape)



# Commands that use the network: their failure (curl -s prints nothing) may be the sandbox's doing.
_NET_TOOLS = re.compile(r"(^|[\s;&|(])(curl|wget|nc|ncat|ssh|scp|sftp|rsync|telnet|ping|dig|nslookup|host|"
                        r"pip3?|npm|npx|yarn|pnpm|cargo|gem|apt-get|go get|git (clone|fetch|pull|push|ls-remote)|"
                        r"/dev/(tcp|udp)/)")


def _unique(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p not in out:
            out.append(p)
    return out


def _existing(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        for q in (Path(os.path.abspath(p)), Path(os.path.realpath(p))):
            if (q.exists() or q.is_symlink()) and q not in out:
                out.append(q)
    return [p for p in out if not p.is_symlink()]  # a symlink is covered by masking its target


def _under(p: Path, d: Path) -> bool:
    return p == d or d in p.parents


# --- the network: a filtering proxy outside, a bridge inside -----------------------------------

def loopback_servers() -> dict[int, str]:
    """TCP servers listening on the host's loopback (or on every address) now: port -> the
    address to reach it at. (/proc/net/tcp*: the network namespace of loopwright itself.)"""
    out: dict[int, str] = {}
    for name, loop, anyaddr, host in (("tcp6", "00000000000000000000000001000000", "0" * 32, "::1"),
                                      ("tcp", "", "00000000", "127.0.0.1")):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) < 4 or f[3] != "0A":  # TCP_LISTEN
                continue
            addr, _, port = f[1].partition(":")
            if name == "tcp" and addr.endswith("7F"):  # 127.x.y.z (little-endian hex)
                out[int(port, 16)] = socket.inet_ntoa(bytes.fromhex(addr)[::-1])
            elif addr in (loop, anyaddr):
                out[int(port, 16)] = host  # an IPv4 listener wins: tcp is read last
    return out


# Runs inside the sandbox (python -I -S): listens on 127.0.0.1:PORT of the sandbox's own network
# namespace; for each client it asks loopwright for a fresh socket pair over the inherited
# channel (SCM_RIGHTS: no unix socket is opened inside) and copies bytes both ways. It forks:
# the parent returns once the port listens, then execs the command.
_BRIDGE = r"""
import os, socket, sys, threading
ch = socket.socket(fileno=int(sys.argv[1])); proxy = int(sys.argv[2])
fwd = [int(p) for p in sys.argv[3].split(",") if p]; late = int(sys.argv[4]); cmd = sys.argv[5:]
srvs = []
for port, tag in ([(proxy, b"n\0\0")] if proxy else []) + [(p, b"p" + p.to_bytes(2, "big")) for p in fwd]:
    srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind(("127.0.0.1", port)); srv.listen(64); srvs.append((srv, tag))
    except OSError:
        srv.close()
lock = threading.Lock()
def pump(a, b):
    try:
        while d := a.recv(65536): b.sendall(d)
    except OSError: pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_WR)
            except OSError: pass
def serve(c, tag):
    with lock:
        ch.sendall(tag); _, fds, _, _ = socket.recv_fds(ch, 1, 1)
    up = socket.socket(fileno=fds[0])
    threading.Thread(target=pump, args=(up, c), daemon=True).start(); pump(c, up)
def accept(srv, tag):
    while True:
        c, _ = srv.accept(); threading.Thread(target=serve, args=(c, tag), daemon=True).start()
if os.fork() == 0:
    os.setsid()
    for srv, tag in srvs[1:]:
        threading.Thread(target=accept, args=(srv, tag), daemon=True).start()
    accept(*srvs[0]) if srvs else os._exit(0)
ch.close()
for srv, _ in srvs: srv.close()
if late >= 0:  # no server may listen in the command (allowLocalBinding false): a second filter
    import ctypes
    prog = ctypes.create_string_buffer(os.read(late, 4096)); os.close(late)
    class Fprog(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    libc = ctypes.CDLL(None, use_errno=True)
    fp = Fprog((len(prog) - 1) // 8, ctypes.addressof(prog))
    if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fp), 0, 0):  # NO_NEW_PRIVS, SECCOMP
        sys.exit(f"loopwright sandbox bridge: seccomp failed (errno {ctypes.get_errno()})")
os.execvp(cmd[0], cmd)
"""


class _Proxy:
    """An HTTP proxy (CONNECT and absolute-URI requests) that lets only allowed hosts pass.
    Each sandboxed command gets a channel; each connection through it a fresh socket pair."""

    def __init__(self, allowed: Sequence[str]) -> None:
        self.allowed = list(allowed)

    def channel(self, forwards: dict[int, str] | None = None) -> tuple[socket.socket, int]:
        """A channel for one sandboxed command; `forwards`: the host's loopback ports it may
        reach (allowLocalBinding), port -> address."""
        mine, theirs = socket.socketpair()
        fd = os.dup(theirs.fileno())
        theirs.close()
        threading.Thread(target=self._serve_channel, args=(mine, dict(forwards or {})), daemon=True,
                         name="loopwright-sandbox-proxy").start()
        return mine, fd

    def _serve_channel(self, ch: socket.socket, forwards: dict[int, str]) -> None:
        with ch:
            while True:
                tag = b""
                try:
                    while len(tag) < 3 and (d := ch.recv(3 - len(tag))):
                        tag += d
                except OSError:
                    return
                if len(tag) < 3:
                    return
                port = int.from_bytes(tag[1:], "big")
                if tag[:1] == b"p" and port not in forwards:
                    return  # not a port it was given: the bridge does not ask for others
                a, b = socket.socketpair()
                try:
                    socket.send_fds(ch, [b"x"], [b.fileno()])
                except OSError:
                    a.close()
                    return
                finally:
                    b.close()
                target = ((self._serve_client, (a,)) if tag[:1] == b"n"
                          else (_forward, (a, forwards[port], port)))
                threading.Thread(target=target[0], args=target[1], daemon=True).start()

    def _serve_client(self, c: socket.socket) -> None:
        with c:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                try:
                    d = c.recv(65536)
                except OSError:
                    return
                if not d:
                    return
                head += d
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split()
            if len(parts) != 3:
                return self._refuse(c, 400, "Bad Request", "malformed request line")
            method, target, _ = parts
            if method == "CONNECT":
                host, _, port_s = target.rpartition(":")
                rest = head.split(b"\r\n\r\n", 1)[1]
            else:
                m = re.match(r"http://(\[[^\]]+\]|[^/:]+)(?::(\d+))?(/.*)?$", target)
                if m is None:
                    return self._refuse(c, 400, "Bad Request", "only http:// URLs and CONNECT are proxied")
                host, port_s = m.group(1), m.group(2) or "80"
                rest = head
            host = host.strip("[]")
            if not domain_allowed(host, self.allowed):
                return self._refuse(c, 403, "Forbidden", f"host {host} is not in sandbox.network.allowedDomains")
            try:
                up = socket.create_connection((host, int(port_s)), timeout=30)
            except (OSError, ValueError) as e:
                return self._refuse(c, 502, "Bad Gateway", f"cannot connect to {host}:{port_s}: {e}")
            with up:
                up.settimeout(None)
                if method == "CONNECT":
                    c.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                if rest:
                    up.sendall(rest)
                _relay(c, up)

    @staticmethod
    def _refuse(c: socket.socket, code: int, reason: str, msg: str) -> None:
        body = f"loopwright sandbox: {msg}\n".encode()
        with contextlib.suppress(OSError):
            c.sendall(f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                      f"Connection: close\r\n\r\n".encode() + body)



def _forward(c: socket.socket, host: str, port: int) -> None:
    """One connection of a sandboxed command to a loopback server of the host (allowLocalBinding)."""
    with c:
        try:
            up = socket.create_connection((host, port), timeout=30)
        except OSError:
            return  # the command sees the connection closed, as a refused one
        with up:
            up.settimeout(None)
            _relay(c, up)


def _relay(a: socket.socket, b: socket.socket) -> None:
    socks = [a, b]
    while socks:
        ready, _, _ = select.select(socks, [], [], 300)
        if not ready:
            return
        for s in ready:
            other = b if s is a else a
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            if not d:
                with contextlib.suppress(OSError):
                    other.shutdown(socket.SHUT_WR)
                socks.remove(s)
                continue
            try:
                other.sendall(d)
            except OSError:
                return


# --- start-up -------------------------------------------------------------------------------

def make_sandbox(config: SandboxConfig | None, cwd: Path, add_dirs: Sequence[Path], permissions: Any,
                 env: dict[str, str] | None = None) -> Sandbox | None:
    """The run's sandbox, or None when it is off. Refuses to start (SandboxError) when it is on
    but cannot run, unless failIfUnavailable is false: then says so loudly on stderr."""
    if config is None or not config.enabled:
        return None
    why = unavailable_reason()
    if why is not None:
        if config.fail_if_unavailable:
            raise SandboxError(f"sandbox.enabled is set but the sandbox cannot run: {why}. Or set "
                               "\"sandbox\": {\"failIfUnavailable\": false} to run with the permission gate alone.")
        print(f"loopwright: WARNING: the OS sandbox is NOT active ({why}); sandbox.failIfUnavailable is false, "
              "so Bash commands run unsandboxed, under the permission gate alone.", file=sys.stderr, flush=True)
        return None
    return Sandbox(config, cwd, add_dirs, permissions, env)


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
