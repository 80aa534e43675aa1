"""Room: trust. The trust store: $LOOPWRIGHT_HOME/trust.json, the trusted workspaces by real path (a directory
is trusted when it or one above it is), plus LOOPWRIGHT_TRUSTED_DIRS for this process; and the
run's decision (`trusted_for`)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..home import locked, loopwright_home, write_private

STORE_NAME = "trust.json"
TRUSTED_DIRS_ENV = "LOOPWRIGHT_TRUSTED_DIRS"


def store_path() -> Path:
    return loopwright_home() / STORE_NAME


def _real(path: str | Path) -> str:
    return os.path.realpath(os.path.expanduser(str(path)))


def _read_store() -> dict[str, Any]:
    path = store_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:  # a broken store trusts nothing, and says so when written
        raise TrustError(f"cannot read the trust store {path}: {e}") from None
    ws = data.get("workspaces") if isinstance(data, dict) else None
    return {k: v for k, v in ws.items() if isinstance(k, str)} if isinstance(ws, dict) else {}


def _write_store(ws: Mapping[str, Any]) -> None:
    path = store_path()
    write_private(path, json.dumps({"version": 1, "workspaces": dict(ws)}, indent=2) + "\n")  # 0600, never half


class TrustError(ValueError):
    """The trust store cannot be read or written."""


def trusted_workspaces() -> dict[str, dict[str, Any]]:
    """The stored workspaces (real path -> {"since": ISO time}), sorted by path."""
    try:
        ws = _read_store()
    except TrustError:
        return {}
    return {k: (v if isinstance(v, dict) else {}) for k, v in sorted(ws.items())}


def trust_dir(path: str | Path) -> str:
    """Trust the workspace at `path` (kept by its real path); returns that path."""
    real = _real(path)
    if not os.path.isdir(real):
        raise TrustError(f"{path}: not a directory")
    with locked(store_path()):
        ws = _read_store()
        ws[real] = {"since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _write_store(ws)
    return real


def revoke_dir(path: str | Path) -> bool:
    """Forget the trust of `path` (by its real path, or as it was stored); False if not stored."""
    with locked(store_path()):
        ws = _read_store()
        keys = {k for k in (_real(path), str(path), os.path.abspath(str(path))) if k in ws}
        for k in keys:
            del ws[k]
        if keys:
            _write_store(ws)
    return bool(keys)


def _env_dirs() -> list[str]:
    return [_real(d) for d in os.environ.get(TRUSTED_DIRS_ENV, "").split(os.pathsep) if d.strip()]


def is_trusted(path: str | Path) -> bool:
    """Is `path` (after symlinks) a trusted workspace or inside one?"""
    real = _real(path)
    try:
        roots = [*_read_store(), *_env_dirs()]
    except TrustError:
        roots = _env_dirs()
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


def trusted_for(options: Any, cwd: str | Path) -> bool:
    """The run's decision: AgentOptions.trust_workspace when set, else the store for `cwd`."""
    explicit = getattr(options, "trust_workspace", None)
    return bool(explicit) if explicit is not None else is_trusted(cwd)
