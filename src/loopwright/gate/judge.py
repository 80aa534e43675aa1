"""Room: bases (the gate). Owns the order every verdict follows and what the rules say about a path; may import gate.rules, gate.verdict and workspace.

The order, for every tool (written once, in `Judge.order`):

    deny rules -> ask rules -> mode -> allow rules (and built-in safe cases)

The first with a match decides. Path judging resolves a path as the kernel opens it
(workspace) and matches it against the rules, the working directories and the protected
paths; Bash (gate.bash) and the file tools (gate.decide) build their verdicts on it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..workspace import Workspace, protected
from .rules import EDIT_TOOLS, PermissionMode, Rule, anchor, input_matches, path_rule_matches
from .verdict import ALLOW, UNAPPROVED, RuleSource, Verdict


class Judge:
    """The rule lists and the mode, and the checks every kind of call shares. `Permissions`
    (gate.decide) declares these as its fields and builds them."""

    __slots__ = ()  # (Permissions' are slots: see there)

    mode: PermissionMode | None
    allow: list[Rule]
    ask: list[Rule]
    deny: list[Rule]
    ws: Workspace
    sandbox_auto_allow: Callable[[str, bool], bool] | None
    sandbox_escape: bool
    advice: Literal["cli", "python"]
    block_reads: bool
    block_writes: bool

    def read_denied(self, path: str) -> bool:
        """Does a Read deny rule cover this (absolute) path?"""
        lexical, real = self.ws.resolve(path)
        return self.path_match(self.deny, "Read", lexical, real) is not None

    def order(self, deny: Callable[[], Verdict | None] | None, ask: Callable[[], Verdict | None] | None,
              hook: str | None, read_only: bool, what: str,
              rules_allow: Callable[[], Sequence[Rule] | None] | None, auto: Callable[[], Verdict]) -> Verdict:
        """The order, for every tool: deny -> ask -> mode -> allow.

        `rules_allow`: the allow rules that approve it, [] when it needs none, None when nothing
        approves it (what decides when mode is None); `auto`: the mode's own checks and the allow
        rules (default, acceptEdits, plan, dontAsk). None for `deny`, `ask` or `rules_allow`: no
        rule names the tool (nothing to match)."""
        v = deny() if deny is not None else None
        if v is not None:
            return v
        v = ask() if ask is not None else None
        if v is not None:
            return v
        if hook is not None:  # (comparing None with a str is never specialized in Python 3.11)
            if hook == "ask":
                return Verdict("ask", "a PreToolUse hook asked", code="hook", source="hook")
            if hook == "allow":
                return self.allowed(source="hook")
        if self.mode is None:
            approving = rules_allow() if rules_allow is not None else None
            if approving is not None:
                return self.allowed(approving)
            return UNAPPROVED
        if self.mode == "bypassPermissions":
            return self.allowed(source="mode")
        if self.mode == "plan" and not read_only:
            return Verdict("deny", f"Permission denied: plan mode allows read-only tools only, and {what} "
                                   "can change things. Present the plan instead.", code="plan",
                           rule="plan", source="mode")
        return auto()

    def allowed(self, rules: Sequence[Rule] = (), source: RuleSource = "default") -> Verdict:
        """An allow verdict naming what approved the call: `rules` (their texts, the first one's
        source), else `source` (for "mode", the mode's name as its rule)."""
        if rules:
            return Verdict("allow", code="ok", rule=", ".join(dict.fromkeys(str(r) for r in rules)),
                           source=rules[0].source)
        if source == "default":
            return ALLOW
        return Verdict("allow", code="ok", rule=self.mode if source == "mode" else None, source=source)

    def named(self, rules: list[Rule], name: str) -> Rule | None:
        return next((r for r in rules if r.specifier is None and r.covers_tool(name)), None)

    @staticmethod
    def rule_verdict(kind: Literal["deny", "ask"], r: Rule | None, what: str) -> Verdict | None:
        if r is None:
            return None
        if kind == "deny":
            return _denied(r, f"Permission denied: {what} matches the deny rule {r}.")
        return Verdict("ask", f"ask rule {r}", code="ask_rule", rule=str(r), source=r.source)

    def first(self, rules: list[Rule], name: str, x: dict[str, Any]) -> Rule | None:
        for r in rules:
            if not r.covers_tool(name):
                continue
            if r.specifier is None or input_matches(r.specifier, name, x):
                return r
        return None

    # -- paths ---------------------------------------------------------------------------------

    def resolve(self, p: str, base: str | None = None) -> tuple[str, str]:
        """(lexical absolute path, the path the kernel opens)."""
        return self.ws.resolve(p, base)

    def inside(self, real: str) -> bool:
        return self.ws.inside(real)

    def path_match(self, rules: list[Rule], tool: str, lexical: str, real: str, *, real_only: bool = False
                   ) -> Rule | None:
        """The first of `rules` for `tool` whose path pattern matches the path the kernel opens (or
        the path as named, unless `real_only`); an isolated subagent's path in its worktree is
        matched as the project's too (Workspace.as_project: the project's rules hold in its copy)."""
        ws = self.ws
        pairs = [(lexical, real)]
        if ws.start != ws.root:
            pairs.append((ws.as_project(lexical), ws.as_project(real)))
        for lx, rl in pairs:
            for r in rules:
                if r.tool != tool and not (tool == "Edit" and r.tool in EDIT_TOOLS) or r.specifier is None:
                    continue
                if path_rule_matches(r.specifier, rl, ws.real_root, r.base and os.path.realpath(r.base), ws.home_dir):
                    return r
                if not real_only and path_rule_matches(r.specifier, lx, ws.root, r.base, ws.home_dir):
                    return r
        return None

    def write_deny(self, p: str, lexical: str, real: str) -> Verdict | None:
        r = self.path_match(self.deny, "Edit", lexical, real)
        if r is not None:
            return _denied(r, f"Permission denied: writing {p} matches the deny rule {r}.")
        r = self.path_match(self.deny, "Read", lexical, real)
        if r is not None:
            return _denied(r, f"Permission denied: {p} matches the deny rule {r} (a Read deny also blocks writing).")
        return None

    def blocked(self, p: str, real: str, kind: Literal["reads", "writes"]) -> Verdict | None:
        """permissions.blockReadsOutsideWorkingDirectories / blockWritesOutsideWorkingDirectories: a
        file tool's path outside the working directories is refused in every mode, whatever the
        rules say; with writes blocked, so is writing a settings file, which could lift the block
        (Claude Code 2.1.332's words)."""
        if not (self.block_reads if kind == "reads" else self.block_writes):
            return None
        key = f"permissions.block{kind.title()}OutsideWorkingDirectories"
        if not self.inside(real):
            return Verdict("deny", f"{p} is outside {self.ws.root}; the {key} setting blocks {kind} outside the "
                           "working directories. Ask the user to add the directory with /add-dir, or to remove that "
                           "setting.", code="outside")
        name, parent = os.path.basename(real), os.path.basename(os.path.dirname(real))
        if kind == "writes" and (name in ("settings.json", "settings.local.json") and parent in (".claude", ".loopwright")
                                 or name == "managed-settings.json" or parent == "managed-settings.d"):
            return Verdict("deny", f"{real}: Writes to Claude Code settings files are blocked while {key} is on, "
                           "because a settings file can lift that block.", code="protected")
        return None

    def read_deny(self, p: str, lexical: str, real: str) -> Verdict | None:
        r = self.path_match(self.deny, "Read", lexical, real)
        if r is not None:
            return _denied(r, f"Permission denied: reading {p} matches the deny rule {r}.")
        return None

    def auto_write(self, p: str, lexical: str, real: str, *, approved: bool = False) -> Verdict | None:
        """None if writing `p` may be approved without asking (after deny/ask/mode), else an ask.
        `approved`: an allow rule approved the command that writes it (a bare `Bash` rule
        approves redirections too); inside the working directories that is enough."""
        v = self.write_verdict(p, lexical, real, approved=approved)
        return None if v.allowed else v

    def write_verdict(self, p: str, lexical: str, real: str, *, approved: bool = False,
                      tool: str = "Edit") -> Verdict:
        """`auto_write`'s answer as a verdict: an allow names the rule or the mode that approved it.
        `tool`: the file tool that writes (a bare rule naming it approves, as a bare `Edit` does)."""
        ws = self.ws  # (in an isolated subagent's worktree: the path in it, as the project's, says what is protected)
        why = protected(lexical) or protected(real) if ws.start == ws.root else (
            protected(ws.as_project(lexical)) or protected(ws.as_project(real)))
        if why:
            return Verdict("ask", f"{why} and is never written without approval", code="protected")
        if self.ws.on_exec_path(real):
            return Verdict("ask", f"{p} is (in) a directory on PATH, where a file changes what a command name "
                                  "runs, and is never written without approval", code="protected")
        if (r := self.path_match(self.allow, "Edit", lexical, real, real_only=True)) is not None:
            return self.allowed([r])
        if not self.inside(real):
            target = f"{p} (really {real})" if real != lexical else p
            return Verdict("ask", f"{target} is outside the working directories", code="outside")
        if approved:
            return ALLOW  # the caller names the rule that approved the command
        if (r := self.named(self.allow, tool)) is not None:  # (a bare `Edit` covers every file tool)
            return self.allowed([r])
        if self.mode == "acceptEdits":
            return self.allowed(source="mode")
        return Verdict("ask", f"writing {p} needs approval")

    def deny_below(self, real_dir: str) -> Rule | None:
        """A Read deny rule that may cover a file under `real_dir`, or None."""
        for r in self.deny:
            if not r.covers_tool("Read") or r.specifier is None:
                continue
            kind, pattern = anchor(r.specifier)
            cwd = self.ws.root
            root = os.path.realpath({"/": "/", "~": self.ws.home_dir, "base": r.base or cwd}.get(kind, cwd))
            segs = pattern.strip("/").split("/")
            literal: list[str] = []
            for seg in segs:
                if re.search(r"[*?\[\]!]", seg):
                    break
                literal.append(seg)
            anywhere = "/" not in pattern.rstrip("/")  # gitignore: a bare name matches at any depth
            top = root if anywhere else os.path.join(root, *literal) if literal else root
            if top == real_dir or top.startswith(real_dir.rstrip("/") + "/") or (
                    real_dir.startswith(top.rstrip("/") + "/")):
                return r
        return None

    def unresolvable(self, p: str) -> Verdict | None:
        why = self.ws.unresolvable(p)
        return Verdict("ask", why, code="unknown_path") if why else None


def _denied(r: Rule, message: str) -> Verdict:
    """A deny rule's refusal, naming the rule."""
    return Verdict("deny", message, code="deny_rule", rule=str(r), source=r.source)
