"""Room: bases (the gate). Owns SessionRules, the rules a person sets while a session runs; may import the gate's lower modules.

A question's "don't ask again" (the REPL's dialog, an editor's "allow always"), an SDK answer's
updatedPermissions and an editor's "always reject" add rules for the rest of the session: a
later call they cover is not asked about again. Every asker holds them the same way: one gate of
those rules, made again only when a rule is added (not one per call).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from .decide import Permissions
from .rules import Rule


class SessionRules:
    """The `behavior` rules ("allow": approve, "deny": refuse) set in this session, for a gate at
    `cwd` with `add_dirs`; and the allow rules a question would offer to remember."""

    def __init__(self, cwd: str | Path, add_dirs: Sequence[str | Path] = (),
                 behavior: Literal["allow", "deny"] = "allow") -> None:
        # (tuples, changed by add and add_dir only: the gate built from them is then made again; a
        # working directory appended to a list in place was missed by it, issue 41)
        self.cwd, self.add_dirs, self.behavior = cwd, tuple(add_dirs), behavior
        self.rules: tuple[str, ...] = ()
        self._gate: Permissions | None = None

    def add(self, rules: Iterable[str]) -> list[str]:
        """Add `rules` (each once); returns the problem of each that is no permission rule, which is
        not kept (kept, it made every later ask of the session fail on it, an answer's own typo)."""
        new, bad = [], []
        for r in dict.fromkeys(rules):
            try:
                Rule.parse(r)
            except ValueError as e:
                bad.append(str(e))
                continue
            if r not in self.rules:
                new.append(r)
        if new:
            self.rules += tuple(new)
            self._gate = None
        return bad

    def add_dir(self, path: str | Path) -> None:
        """Another working directory (/add-dir): the rules are judged with it from now on."""
        self.add_dirs += (path,)
        self._gate = None

    def covers(self, name: str, tool_input: dict[str, Any]) -> bool:
        """Does a rule set in this session approve (allow) or refuse (deny) this call?"""
        if not self.rules:
            return False
        if self._gate is None:
            allow, deny = (self.rules, []) if self.behavior == "allow" else ([], self.rules)
            self._gate = Permissions("default", allow, deny, cwd=self.cwd, add_dirs=self.add_dirs)
        v = self._gate.evaluate(name, tool_input)
        return v.allowed if self.behavior == "allow" else v.kind == "deny"

    def suggest(self, name: str, tool_input: dict[str, Any]) -> list[str]:
        """The allow rules that would approve calls like this one (what "don't ask again" offers;
        empty when none is narrow enough)."""
        return Permissions("default", cwd=self.cwd, add_dirs=self.add_dirs).suggest_rules(name, tool_input)
