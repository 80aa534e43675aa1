"""Room: skills and memory. Owns where the user's and the project's folders of a kind live (skills,
commands, agents, output styles); may import memory and home.

The user's come first (`~/.loopwright/<kind>`, then Claude Code's `~/.claude/<kind>`), then the
project's `.loopwright/<kind>` and `.claude/<kind>` (cwd, then the repository root). A run asks
`any_folder` before it loads the module that reads a kind's files: one without skill or agent
folders never declares their classes (issue 41).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def config_dirs(cwd: Path, sources: Iterable[str], kind: str, home: Path | None = None) -> list[Path]:
    """Where `kind` ("skills", "commands", ...) folders live for these setting sources: the user's
    (`~/.loopwright/<kind>`, then Claude Code's `~/.claude/<kind>`), then the project's `.loopwright/<kind>` and `.claude/<kind>` (cwd, then the repository root).
    The first of a name wins, so a project never shadows the user's own (the user's dir is first)."""
    from .home import loopwright_home
    from .memory import repo_root

    want = set(sources)
    out: list[Path] = []
    if "user" in want:  # loopwright's own, then Claude Code's (~/.claude/<kind>): a user's setup works unchanged
        out += dict.fromkeys([(home or loopwright_home()) / kind, Path.home() / ".claude" / kind])
    if "project" in want:
        for base in dict.fromkeys([cwd, repo_root(cwd)]):
            out += [base / ".loopwright" / kind, base / ".claude" / kind]
    return out


def is_users(d: Path, kind: str, home: Path | None = None) -> bool:
    """Is `d` the user's own `kind` folder (not a project's)?"""
    from .home import loopwright_home

    return d in ((home or loopwright_home()) / kind, Path.home() / ".claude" / kind)


def any_folder(cwd: Path, sources: Iterable[str], kind: str) -> bool:
    """Is there a `kind` folder for these setting sources at all?"""
    return any(d.is_dir() for d in config_dirs(cwd, sources, kind))
