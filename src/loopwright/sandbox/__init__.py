"""Room: bases (the gate). Owns the OS sandbox for Bash (Linux bubblewrap); may import bashparse and the gate.

Its parts: `config` (the `sandbox` settings), `bwrap` (the sandbox of one run: the command
line, the probe, failure notes; its docstring says what the box allows), `seccomp` (the
filters), `proxy` (the filtering HTTP proxy and loopback forwards outside the box) and `bridge`
(the program inside the box that serves them)."""

from __future__ import annotations

from .bwrap import (
    _PROBE,
    INSTALL_HINT,
    NEVER_PASSED_ENV,
    PROTECTED_NAMES,
    PROXY_PORT,
    Sandbox,
    SandboxInactiveWarning,
    Wrapped,
    _ns_flags,
    make_sandbox,
    unavailable_reason,
)
from .config import SandboxConfig, SandboxError, config_from, domain_allowed, json_type
from .proxy import loopback_servers
from .seccomp import seccomp_program

__all__ = ["INSTALL_HINT", "NEVER_PASSED_ENV", "PROTECTED_NAMES", "PROXY_PORT", "Sandbox", "SandboxConfig",
           "SandboxError", "SandboxInactiveWarning", "Wrapped", "_PROBE", "_ns_flags", "config_from",
           "domain_allowed", "json_type", "loopback_servers", "make_sandbox", "seccomp_program",
           "unavailable_reason"]
