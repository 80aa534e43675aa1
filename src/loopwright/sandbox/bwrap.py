"""Room: bases (the gate). Owns the sandbox of a run: the bubblewrap command line, its probe and the
failure notes; may import bashparse, the gate and the sandbox's own modules.

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

import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import SandboxConfig, SandboxError
from .proxy import _Proxy, loopback_servers
from .seccomp import seccomp_program

NEVER_PASSED_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
PROXY_PORT = 3128  # inside the sandbox's own network namespace
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
BRIDGE = Path(__file__).with_name("bridge.py")  # run by path inside the box (python -I -S)


class SandboxInactiveWarning(UserWarning):
    """The sandbox is configured on but cannot run here, and failIfUnavailable is false: Bash
    commands run unsandboxed, under the permission gate alone. Front ends show it (a library
    does not print); Python shows an unhandled one on stderr."""


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


# --- the sandbox of one run ------------------------------------------------------------------

# Never writable inside, where they exist at the top of a writable directory: what changes
# how git, the harness, editors or the user's shell behave, and credentials.
PROTECTED_NAMES = (".git/hooks", ".git/config", ".gitmodules", ".loopwright", ".claude", ".vscode", ".idea",
                   ".ssh", ".aws", ".gnupg", ".kube", ".docker", ".bashrc", ".bash_profile", ".bash_login",
                   ".bash_logout", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".profile",
                   ".gitconfig", ".envrc", ".mcp.json", ".netrc", ".pypirc", ".npmrc")


@dataclass
class Wrapped:
    """A command wrapped in the sandbox: the argv and environment to run, and the fds handed to it."""

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
        from ..gate import command_matches
        from ..gate.shell import bashparse

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
        from ..gate.rules import anchor

        kind, pattern = anchor(rule.specifier)
        root = {"/": Path("/"), "~": Path.home(), "base": Path(rule.base or self.cwd)}.get(kind, self.cwd)
        concrete = re.sub(r"/\*\*?$|/$", "", pattern)
        if not any(c in concrete for c in "*?[") and (pattern.startswith("/") or "/" in concrete.strip("/")):
            return [root / concrete.lstrip("/")]
        # A glob (or a bare name, which matches at any depth): walk the directory it anchors to,
        # bounded. Links are followed (a command in the box follows them too: `rg -L`, `grep -R`
        # over a committed `keys -> ~/.ssh`), and a link counts where it leads: a path matches by
        # its name through the link or by its real path (_existing masks the real one).
        out: list[Path] = []
        seen = 0
        home = str(Path.home())
        visited: set[str] = set()
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            real_dir = os.path.realpath(dirpath)
            if real_dir in visited:  # a link cycle, or a directory reached twice
                dirnames[:] = []
                continue
            visited.add(real_dir)
            for name in (*dirnames, *filenames):
                seen += 1
                p = os.path.join(dirpath, name)
                if self._matches(rule, p, home):
                    out.append(Path(p))
            dirnames[:] = [d for d in dirnames if Path(dirpath, d) not in out]
            if seen > 50_000:
                break
        return out

    def _matches(self, rule: Any, p: str, home: str) -> bool:
        from ..gate.rules import path_rule_matches

        if path_rule_matches(rule.specifier, p, str(self.cwd), rule.base, home):
            return True
        real = os.path.realpath(p)
        return real != p and path_rule_matches(rule.specifier, real, str(self.cwd), rule.base, home)

    def _mounts(self, env: dict[str, str] | None, bind_files: Iterable[str]) -> list[str]:
        """bwrap's namespaces and mounts: the root read-only, a private /tmp, the writable
        directories, the protected paths read-only inside them, the hidden ones masked."""
        hide, ro = self._mask_lists()
        args = [self.bwrap, *_ns_flags(True),
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for proc_dir in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"):
            args += ["--ro-bind-try", proc_dir, proc_dir]  # root would otherwise write sysctls from inside
        args += ["--tmpfs", "/tmp"]
        # The private /tmp must not hide the programs a command runs: a Python environment or a
        # PATH directory that lives under /tmp (a checkout there, a CI runner's) stays, read-only.
        path_dirs = (env if env is not None else os.environ).get("PATH", "").split(os.pathsep)
        # So does the bridge's own file (a checkout under /tmp).
        for pd in dict.fromkeys([sys.prefix, sys.base_prefix, *path_dirs, str(BRIDGE)]):
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
        return args

    def wrap(self, argv: Sequence[str], cwd: Path, env: dict[str, str] | None, *,
             bind_files: Iterable[str] = (), network: bool = True) -> Wrapped:
        """The command line that runs `argv` in the sandbox, with its environment and the fds
        to hand over (the seccomp program, the proxy's socket). `network=False`: a program
        that needs none (Grep's rg) gets no bridge, so it starts as fast as it can."""
        args = self._mounts(env, bind_files)
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
            cmd = [sys.executable, "-I", "-S", str(BRIDGE), str(theirs),
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


# --- start-up -------------------------------------------------------------------------------

def make_sandbox(config: SandboxConfig | None, cwd: Path, add_dirs: Sequence[Path], permissions: Any,
                 env: dict[str, str] | None = None) -> Sandbox | None:
    """The run's sandbox, or None when it is off. Refuses to start (SandboxError) when it is on
    but cannot run, unless failIfUnavailable is false: then warns (SandboxInactiveWarning)."""
    if config is None or not config.enabled:
        return None
    why = unavailable_reason()
    if why is not None:
        if config.fail_if_unavailable:
            raise SandboxError(f"sandbox.enabled is set but the sandbox cannot run: {why}. Or set "
                               "\"sandbox\": {\"failIfUnavailable\": false} to run with the permission gate alone.")
        # Every time (no once-per-place registry): each run that goes unsandboxed says so.
        warnings.warn_explicit(SandboxInactiveWarning(
            f"loopwright: WARNING: the OS sandbox is NOT active ({why}); sandbox.failIfUnavailable is false, "
            "so Bash commands run unsandboxed, under the permission gate alone."),
            SandboxInactiveWarning, "loopwright.sandbox", 0, registry=None)
        return None
    return Sandbox(config, cwd, add_dirs, permissions, env)


