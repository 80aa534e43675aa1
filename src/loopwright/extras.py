"""Room: data types (imports nothing of loopwright). Owns the optional extras: which feature needs
which `pip install "loopwright[...]"`, and the one clear error when it is missing.

A plain `pip install loopwright` runs every provider and the CLI; MCP, Ray, the provider SDK
clients and telemetry are extras. A feature checks for its extra before it imports it, so that a
missing one ends in one line naming the extra, never in a library's traceback.
"""

from __future__ import annotations


class MissingExtra(ImportError):
    """A feature's optional dependency is not installed; the message names the extra to install."""


def missing_extra(feature: str, extra: str) -> MissingExtra:
    """The error for `feature` used without `extra`."""
    return MissingExtra(f'{feature} needs the {extra} extra: pip install "loopwright[{extra}]"')


def require(feature: str, extra: str, *modules: str) -> None:
    """Raise MissingExtra when any of `modules` (top-level names the extra installs) is not
    importable; imports nothing itself (find_spec reads only the import path)."""
    import importlib.util  # (here: the CLI imports this module for MissingExtra on every start)

    if any(importlib.util.find_spec(m) is None for m in modules):
        raise missing_extra(feature, extra)
