"""Room: trust review (beside settings; above memory, skills and commands). What trusting a workspace
would change, for the trust dialog and the other front ends (the SDK protocol, ACP)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .narrow import Ignored, advice
from .store import trusted_for


@dataclass
class TrustReview:
    """What trusting a workspace would change: for the trust dialog and other front ends
    (the SDK protocol, ACP). `ignored` is empty when trusting changes nothing."""

    workspace: Path
    trusted: bool
    ignored: list[Ignored]

    def lines(self, style: str = "cli") -> list[str]:
        hint = advice(self.workspace, style)
        return [i.line(hint) for i in self.ignored]


def review(options: Any) -> TrustReview:
    """The run's workspace, whether it is trusted, and what of the project an untrusted run
    ignores. Reads the project's files; runs, starts and sends nothing."""
    from ..memory import load_memory
    from ..runconfig import uses_settings
    from ..settings import SETTING_SOURCES, load_settings
    from ..skills import find_skills

    cwd = Path(str(getattr(options, "cwd", None) or ".")).resolve()
    trusted = trusted_for(options, cwd)
    ignored: list[Ignored] = []
    if uses_settings(options):
        sources = getattr(options, "setting_sources", None)
        sources = SETTING_SOURCES if sources is None else sources
        s = load_settings(cwd, sources, claude=bool(getattr(options, "claude_settings", False)), trusted=False)
        ignored += s.ignored
        ignored += [i for sk in find_skills(cwd, sources, trusted=False)[0] for i in sk.ignored]
        from ..commands import find_commands

        for c in find_commands(cwd, sources, trusted=False).values():
            ignored += c.ignored
        if getattr(options, "memory", True):
            ignored += load_memory(cwd, sources, trusted=False).ignored
    return TrustReview(cwd, trusted, [] if trusted else ignored)
