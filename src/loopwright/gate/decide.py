"""Room: bases (the gate). Owns the gate itself: `Permissions`, its fields, the verdict per kind of call and the ask; may import workspace and the gate's lower modules.

`evaluate` says what the rules say (pure: what tests and the dialogs use); `decide` turns an
ask into the `can_use_tool` callback's answer, or into a refusal that says how to allow the call.
"""

from __future__ import annotations

import copy
import inspect
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..workspace import ToolState, Workspace
from .judge import Judge
from .rules import (
    EDIT_TOOLS,
    NETWORK_TOOLS,
    PATH_KEYS,
    PERMISSION_MODES,
    READ_TOOLS,
    PermissionMode,
    Rule,
    parse_rules,
)
from .verdict import (
    ALLOW,
    ALLOWED,
    NO_ALLOW_RULE,
    Allow,
    CanUseTool,
    Decision,
    Deny,
    Verdict,
    json_problem,
    to_decision,
)

# How many times an answer may rewrite a call's input into one the rules ask about (each is asked again).
MAX_REWRITES = 3
# Whether the permission modes pass a call unasked (a read-only one), or what says it of an input.
ReadOnly = bool | Callable[[dict[str, Any]], bool]

if TYPE_CHECKING:
    from .auto import AutoClassifier  # (imported at auto mode's first judged call only)


# (slots: a copy's attributes are read as fast as the original's, see for_state; eq/repr: identity,
# a gate holding callables)
@dataclass(slots=True, eq=False, repr=False)
class Permissions(Judge):
    """Rules and a mode in front of the user's `can_use_tool` callback.

    `allowed_tools`, `ask_tools`, `disallowed_tools`: rules (`Bash`, `Bash(git diff *)`,
    `Edit(./src/**)`, ...) as strings or `Rule`s. `cwd` and `add_dirs` are the working
    directories writes are confined to."""

    mode: PermissionMode | None = None
    allowed_tools: Sequence[str | Rule] = field(default_factory=list)
    disallowed_tools: Sequence[str | Rule] = field(default_factory=list)
    can_use_tool: CanUseTool | None = None
    # The run's PermissionRequest hooks (hooks.RunHooks, set by the assembler): an ask goes to them
    # first; an answer of theirs (Allow/Deny) is the decision, None leaves the ask as it was.
    ask_hook: Callable[[str, dict[str, Any]], Awaitable[Decision | None]] | None = None
    # Auto mode's classifier (gate/auto.py): what it says of a call the rules would ask about, in
    # mode "auto". The assembler sets, for a top run, the function that gives it (made at the first
    # call it judges: a run never in auto mode does not import gate/auto.py).
    auto: Callable[[], AutoClassifier] | None = None
    ask_tools: Sequence[str | Rule] = field(default_factory=list)
    cwd: str | Path | None = None
    add_dirs: Sequence[str | Path] = field(default_factory=list)
    home: str | Path | None = None
    # The run's tool state: Bash keeps its working directory there, and relative paths in a
    # command are resolved from it, not from `cwd`.
    tool_state: ToolState | None = None
    # The PATH commands are looked up in (None: this process's). Its directories are never
    # written without approval: a file there changes what a command name runs.
    exec_path: str | None = None
    # sandbox.py: True for a Bash command (and its dangerouslyDisableSandbox flag) that will run
    # in the OS sandbox with autoAllowBashIfSandboxed; it then needs no approval (deny and ask
    # rules still apply).
    sandbox_auto_allow: Callable[[str, bool], bool] | None = None
    # sandbox.allowUnsandboxedCommands with the sandbox on: a Bash call with
    # dangerouslyDisableSandbox runs outside it, so it is asked even in bypassPermissions.
    sandbox_escape: bool = False
    # How refusals name the settings that allow a call: the caller's surface (CLI flags, or
    # AgentOptions fields for the Python API).
    advice: Literal["cli", "python"] = "cli"
    # built from the fields above: the rules parsed, and the working directories
    allow: list[Rule] = field(init=False, repr=False, compare=False)
    ask: list[Rule] = field(init=False, repr=False, compare=False)
    deny: list[Rule] = field(init=False, repr=False, compare=False)
    ws: Workspace = field(init=False, repr=False, compare=False)
    # What the rules said about the last call decided (telemetry's execute_tool span reads it).
    last_verdict: Verdict | None = field(default=None, init=False, repr=False, compare=False)
    # What the last evaluate judged a file tool's path to name ((tool, input path), (lexical,
    # real)), or None: decide keeps it in tool_state.judged only for the input that will run.
    judgment: tuple[tuple[str, str], tuple[str, str]] | None = field(default=None, init=False, repr=False,
                                                                      compare=False)
    _granted: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)  # tool_state.grants taken
    # Why the run's tools may grant no rules (a skill's allowed-tools): managed settings'
    # allowManagedPermissionRulesOnly (settings.py); for_state closes the tools' GrantState.
    closed_grants: str | None = None
    # permissions.blockReadsOutsideWorkingDirectories / blockWritesOutsideWorkingDirectories (judge.blocked)
    block_reads: bool = False
    block_writes: bool = False

    def for_state(self, state: ToolState | None, cwd: str | None = None) -> Permissions:
        """This gate for the run whose tools share `state` (a copy: a subagent's gate is its
        parent's and must not move the parent's shell). `cwd`: that run's own directory when it is
        not where the gate's run is (an isolated subagent's worktree): its relative paths and its
        shell are judged from there, where its tools open them (the same working directories and
        rules). (The class has slots: a copy of an object with a __dict__ has it materialized, and
        Python 3.11 then never specializes an attribute read on it: ~300 instructions each, ~20 a
        call.)"""
        gate = copy.copy(self)
        if state is not self.tool_state:  # (the parent's grants stay in its rules; the new state's are taken anew)
            gate._granted = ()
        gate.tool_state = state
        if state is not None and self.closed_grants is not None:
            state.grants.closed = self.closed_grants
        gate._bind_state()
        if cwd is not None:
            gate.ws.begin_at(cwd)
        return gate

    def _bind_state(self) -> None:
        # The gate resolves Bash paths from the shell's cwd in the state; searching tools (Grep,
        # Glob) find there which files Read deny rules hide, and leave them out of what they list.
        self.ws = copy.copy(self.ws)
        self.ws.state = self.tool_state
        if self.tool_state is not None and any(r.specifier is not None and r.covers_tool("Read") for r in self.deny):
            self.tool_state.search.denied = self.read_denied

    def __post_init__(self) -> None:
        if self.mode is not None and self.mode not in PERMISSION_MODES:
            raise ValueError(f"unknown permission mode {self.mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        self.allow = parse_rules(self.allowed_tools, "cli", "allow")
        self.ask = parse_rules(self.ask_tools, "cli", "ask")
        self.deny = parse_rules(self.disallowed_tools, "cli", "deny")
        self.ws = Workspace(self.cwd, self.add_dirs, self.home, self.exec_path)
        self._bind_state()

    # -- entry point used by the executor ----------------------------------------------------

    async def decide(self, name: str, tool_input: dict[str, Any], read_only: ReadOnly,
                     hook_decision: str | None = None) -> Decision:
        """The call's decision. `read_only`: whether the permission modes pass it unasked, or the
        function that says so of an input (a rewritten input is judged by what it does)."""
        v = self.evaluate(name, tool_input, read_only(tool_input) if callable(read_only) else read_only,
                          hook_decision)
        self.last_verdict = v  # what the rules said (telemetry's execute_tool span)
        # The rules' yes; or, in mode None with no callback to ask, a soft ask (only nothing
        # approved the call): it runs. (Here, not in _unasked: most calls, one call fewer.)
        if v.kind == "allow" or v.soft and self.mode is None and self.can_use_tool is None:
            if self.judgment is not None:
                self._keep(self.judgment)
            return ALLOWED
        if v.kind == "deny":
            return Deny(v.reason)  # (its judgment is not kept: no run would take it)
        # The judgment of the input that will run (an answer's rewrite has its own), taken as each
        # is made: other calls' decisions may be made while this one is asked about.
        made = [self.judgment]
        decision: Decision | None = None
        if self.mode == "auto" and self.auto is not None and v.code not in ("ask_rule", "hook"):
            decision = await self._auto(name, tool_input, v)  # gate/auto.py; an explicit ask still asks
        if decision is None:
            decision = await self._answer(name, tool_input, read_only, v, made)
        if isinstance(decision, Allow):
            self._keep(made[0])
        return decision

    def _keep(self, judgment: tuple[tuple[str, str], tuple[str, str]] | None) -> None:
        """A call that will run: its file tool's judged path, which its run checks and takes
        (workspace.ToolState.judged). A refused call's is never kept: nothing would take it, and
        a later call of the path would be held to it (refused once the path changed)."""
        if judgment is not None and self.tool_state is not None:
            self.tool_state.judged.setdefault(judgment[0], []).append(judgment[1])

    async def _answer(self, name: str, tool_input: dict[str, Any], read_only: ReadOnly, v: Verdict,
                      made: list[tuple[tuple[str, str], tuple[str, str]] | None]) -> Decision:
        """An ask's answer (a PermissionRequest hook's, else the can_use_tool callback's, else a
        refusal). An answer that rewrites the input (an `updatedInput`: the SDK's, a Python
        callback's, a hook's) has the new input judged again before it runs (issue 40): a deny
        rule or a path the rules forbid refuses it; one the rules would ask about for a new reason
        (outside the working directories, a protected path, an ask rule, another program) is asked
        about again (the answer approved the input it saw, not this one), at most MAX_REWRITES
        times; where nobody can be asked (dontAsk, no callback) it is refused. A rewrite asked
        about for the same plain reason as the input the answer saw (nothing approves either, the
        same program) runs on that answer, as Claude Code runs a `can_use_tool` callback's
        rewrite: the answerer wrote it (the Claude Agent SDK's tool_permission_callback.py
        redirects a Write into ./safe_output/ and would be asked about its own redirection). The
        one place every caller (the executor, @-mentions) gets this from. `made`: the judgment
        of the input asked about, replaced by each rewrite's."""
        asked = tool_input
        for _ in range(MAX_REWRITES + 1):
            decision = await self._one_answer(name, asked, v)
            new = decision.updated_input if isinstance(decision, Allow) else None
            if new is not None and (problem := json_problem(new)) is not None:  # (before it is compared)
                return Deny(f"Permission denied: {problem}; the call was not run.")
            if new is not None and not isinstance(new, dict):  # (passed over, the model's input ran unrewritten)
                return Deny(f"Permission denied: the answer's updatedInput is a {type(new).__name__}, not an object "
                            "(a tool's input); the call was not run.")
            if new is None or new == asked:  # (a yes to a rewrite asked about again is a yes to the rewrite)
                return Allow(asked) if isinstance(decision, Allow) and asked is not tool_input else decision
            seen, v = v, self.evaluate(name, new, read_only(new) if callable(read_only) else read_only)
            self.last_verdict, made[0] = v, self.judgment  # (the rewrite's path is the one that would run)
            if v.kind == "deny":
                return Deny(f"Permission denied: the answer's rewritten input is refused by the rules ({v.reason}).")
            if v.kind == "allow" or v.soft and self.mode is None and self.can_use_tool is None:
                return decision
            if v.code == seen.code == "not_approved" and v.subject == seen.subject:
                return decision  # nothing new to ask about: the answerer's own rewrite of what it approved
            asked = new  # asked again, about the input that would run
        return Deny(f"Permission denied: the answer rewrote {name}'s input each time it was asked about "
                    f"({MAX_REWRITES + 1} times); the call was not run.")

    async def _one_answer(self, name: str, tool_input: dict[str, Any], v: Verdict) -> Decision:
        """One answer, given a copy of the input: an answerer that edits the input in place
        instead of returning updatedInput rewrites it all the same, and the edit is judged again
        like one (_answer). Given the input itself, the edit ran unjudged (a deny rule missed it)."""
        mine = copy.deepcopy(tool_input)
        decision = await self._answer_of(name, mine, v)
        if isinstance(decision, Allow) and decision.updated_input is None and (
                json_problem(mine) is not None or mine != tool_input):  # (an edit that holds itself: not compared)
            return Allow(mine)
        return decision

    async def _answer_of(self, name: str, tool_input: dict[str, Any], v: Verdict) -> Decision:
        if self.ask_hook is not None and self.mode != "dontAsk":  # a PermissionRequest hook may answer
            answered = await self.ask_hook(name, tool_input)
            if answered is not None:
                return answered
        unasked = self._unasked(name, tool_input, v)
        if unasked is not None:
            return unasked
        assert self.can_use_tool is not None
        value = self.can_use_tool(name, tool_input)
        if inspect.isawaitable(value):
            value = await value
        return to_decision(value)

    async def _auto(self, name: str, tool_input: dict[str, Any], v: Verdict) -> Decision | None:
        """Auto mode: the classifier's allow or deny, or None (ask: the user, or headless a refusal)."""
        assert self.auto is not None
        verdict = await self.auto().judge(name, tool_input, v.reason)
        if verdict.decision == "allow":
            return ALLOWED
        if verdict.decision == "deny":
            return Deny(f"Permission denied by auto mode's classifier: {verdict.reason} If the user wants "
                        "this action, they can approve it outside auto mode.", by_classifier=True)
        return None

    def _unasked(self, name: str, tool_input: dict[str, Any], v: Verdict) -> Decision | None:
        """An ask's answer without the can_use_tool callback (mode None's soft asks are answered in
        decide): None when the callback decides. (A function, not a coroutine.)"""
        if self.mode == "dontAsk":
            from .advice import describe, hint  # (a refusal's wording: at the first refusal)

            return Deny(f"Permission denied: {describe(name, tool_input)} is not pre-approved and "
                        f"dontAsk mode refuses everything else ({v.reason}). {hint(self, name, tool_input, v)}")
        if self.can_use_tool is not None:
            return None
        from .advice import WORDING, describe, hint

        return Deny(f"Permission denied: {describe(name, tool_input)} needs approval ({v.reason}), and "
                    f"{WORDING[self.advice].cannot_ask}. {hint(self, name, tool_input, v)}")


    def hint(self, name: str, tool_input: dict[str, Any], v: Verdict | None = None) -> str:
        """How to allow a call like this one next time."""
        from .advice import hint

        return hint(self, name, tool_input, v)

    def suggest_rules(self, name: str, tool_input: dict[str, Any]) -> list[str]:
        """The allow rules that would approve calls like this one next time (gate.advice)."""
        from .advice import suggest_rules

        return suggest_rules(self, name, tool_input)

    # -- the rules, without the callback (pure; what tests and `loopwright` explain use) ------

    def evaluate(self, name: str, tool_input: dict[str, Any], read_only: bool = False,
                 hook_decision: str | None = None) -> Verdict:
        if not isinstance(tool_input, dict):
            tool_input = {}
        self.judgment = None  # (set by a file tool's path judgment below)
        if self.tool_state is not None and self.tool_state.grants.rules is not self._granted:
            self._take_grants()  # (a call, only when the grants changed: most calls have none)
        if name == "Bash":
            from .bash import bash_verdict  # (at the first Bash call: ~0.3 ms of every run's start)

            return bash_verdict(self, tool_input.get("command"), hook_decision,
                                tool_input.get("dangerouslyDisableSandbox") is True)
        if name in EDIT_TOOLS:
            return self._edit(name, tool_input, read_only, hook_decision)
        if name in READ_TOOLS:
            return self._read(name, tool_input, read_only, hook_decision)
        return self._generic(name, tool_input, read_only, hook_decision)

    def set_rules(self, allow: Sequence[Rule], ask: Sequence[Rule], deny: Sequence[Rule]) -> None:
        """New rules for the rest of the run (a settings file changed: loop/watch.py); the rules
        granted during the run (source "session") are kept. New lists, as _take_grants."""
        self.allow = [*allow, *(r for r in self.allow if r.source == "session")]
        self.ask, self.deny = list(ask), list(deny)
        if self.tool_state is not None and any(r.specifier is not None and r.covers_tool("Read") for r in self.deny):
            self.tool_state.search.denied = self.read_denied

    def _take_grants(self) -> None:
        """Allow rules the run's tools granted since the last call (an active skill's allowed-tools):
        added to (GrantState.add), the new ones join; replaced, the ones taken before go. A new list,
        not an append: a subagent's gate is a copy of its parent's and shares the old one."""
        granted = self.tool_state.grants.rules if self.tool_state is not None else ()
        taken, self._granted = self._granted, granted
        if granted[:len(taken)] == taken:
            self.allow = [*self.allow, *parse_rules(granted[len(taken):], "session")]
        else:
            gone = parse_rules(taken, "session")
            self.allow = [*(r for r in self.allow if r not in gone), *parse_rules(granted, "session")]

    def _named(self, name: str) -> bool:
        """Does any rule name this tool? Looked at on every call, never remembered: a cache keyed on
        the lists (their identity, their lengths) gave a stale answer when a caller replaced a rule
        in place, and a rule the cache missed is a deny rule not applied (issue 40)."""
        for rules in (self.deny, self.ask, self.allow):
            for r in rules:
                if r.covers_tool(name):
                    return True
        return False

    # generic tools: names, and a specifier matched against the input
    def _generic(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        # An MCP tool's readOnlyHint is the server's claim: it makes the tool concurrent, but
        # the tool still needs a rule to run without approval (as in Claude Code).
        safe = read_only and not name.startswith("mcp__") and name not in NETWORK_TOOLS
        if not self._named(name):  # the same order with nothing to match: no closures, no calls
            return self.order(None, None, hook, read_only, name, None, _safe if safe else _unmatched)
        return self.order(
            lambda: self.rule_verdict("deny", self.first(self.deny, name, x), name),
            lambda: self.rule_verdict("ask", self.first(self.ask, name, x), name),
            hook, read_only, name,
            lambda: _one(self.first(self.allow, name, x)),
            lambda: self.allowed(r) if (r := _one(self.first(self.allow, name, x)))
            else ALLOW if safe else NO_ALLOW_RULE)

    # Edit, Write, MultiEdit, NotebookEdit
    def _edit(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        path = next((x[k] for k in PATH_KEYS if isinstance(x.get(k), str) and x[k]), None)
        lexical, real = self.resolve(path or ".")
        self._judged(name, path, lexical, real)

        def deny() -> Verdict | None:
            named = self.rule_verdict("deny", self.named(self.deny, name), name)
            return named or (self.write_deny(path, lexical, real) or self.blocked(path, real, "writes")
                             if path is not None else None)

        def ask() -> Verdict | None:
            r = self.path_match(self.ask, "Edit", lexical, real) if path is not None else None
            return self.rule_verdict("ask", r or self.named(self.ask, name), name)

        def rules_allow() -> list[Rule] | None:
            return _one(self.named(self.allow, name) or (
                self.path_match(self.allow, "Edit", lexical, real, real_only=True) if path is not None else None))

        def auto() -> Verdict:
            if path is None:
                r = self.named(self.allow, name)
                return self.allowed([r]) if r else Verdict("ask", "the call names no file", code="no_file")
            return self.unresolvable(path) or self.write_verdict(path, lexical, real, tool=name)

        return self.order(deny, ask, hook, read_only, name, rules_allow, auto)

    def _judged(self, name: str, path: Any, lexical: str, real: str) -> None:
        """What a file tool's path was judged to name: the tool refuses it if it resolves elsewhere
        when it runs (workspace.ToolState.judged). Kept per tool: one tool's run checks (and takes)
        only its own judgments, never those of another tool's call of the same path."""
        if self.tool_state is not None and (path is None or isinstance(path, str)):
            self.judgment = ((name, path or ""), (lexical, real))  # (kept by decide for a call that runs)

    # Read, Glob, Grep, LS
    def _read(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        path = next((x[k] for k in PATH_KEYS if isinstance(x.get(k), str) and x[k]), None) or "."
        targets, climbs = [path], None
        pattern = x.get("pattern")
        if name == "Glob" and isinstance(pattern, str):
            # The pattern is a path too: `/etc/*`, `../outside/*` or `**/../../x` search elsewhere.
            prefix, rest = _glob_prefix(pattern)
            targets = [os.path.join(path, prefix) if prefix else path]
            if ".." in rest.split("/"):
                climbs = f"the pattern {pattern} climbs out of its directory with .."
        resolved = [(t, *self.resolve(t)) for t in targets]
        # What the tool will check when it runs: Read's path, Grep's when it names one, Glob's
        # pattern's literal directory under its path (or the working directory)
        if name == "Read" or name == "Glob" or name == "Grep" and isinstance(x.get("path"), str) and x["path"]:
            self._judged(name, x.get("path") if name == "Glob" else path, *resolved[0][1:])

        def deny() -> Verdict | None:
            named = self.rule_verdict("deny", self.named(self.deny, name), name)
            return named or next((v for t, lx, rl in resolved
                                  if (v := self.read_deny(t, lx, rl) or self.blocked(t, rl, "reads"))), None)

        def ask() -> Verdict | None:
            r = next((r for _, lx, rl in resolved if (r := self.path_match(self.ask, "Read", lx, rl))), None)
            return self.rule_verdict("ask", r or self.named(self.ask, name), name)

        def rules_allow() -> list[Rule] | None:
            r = self.named(self.allow, name)
            return [r] if r is not None else [] if read_only else None

        return self.order(deny, ask, hook, True, name, rules_allow,
                          lambda: self._read_auto(resolved, climbs, rules_allow))

    def _read_auto(self, resolved: list[tuple[str, str, str]], climbs: str | None,
                   rules_allow: Callable[[], list[Rule] | None]) -> Verdict:
        """A read in the modes that check paths: asked outside the working directories (unless a
        Read rule allows the path), approved by a rule or as a read-only tool."""
        if climbs is not None:
            return Verdict("ask", climbs, code="unknown_path")
        for t, lexical, real in resolved:
            v = self.unresolvable(t)
            if v is not None:
                return v
            if self.path_match(self.allow, "Read", lexical, real) is None and not self.inside(real):
                return Verdict("ask", f"reading {t} is outside the working directories", code="outside")
        approving = rules_allow()
        if approving is not None:
            return self.allowed(approving)
        by_path = [self.path_match(self.allow, "Read", lx, rl) for _, lx, rl in resolved]
        if all(by_path):
            return self.allowed([r for r in by_path if r is not None])
        return NO_ALLOW_RULE


def _safe() -> Verdict:
    return ALLOW


def _unmatched() -> Verdict:
    return NO_ALLOW_RULE


def _one(rule: Rule | None) -> list[Rule] | None:
    return None if rule is None else [rule]


def _glob_prefix(pattern: str) -> tuple[str, str]:
    """`../src/**/*.py` -> (`../src`, `**/*.py`): the literal directory a Glob pattern starts in."""
    segs = pattern.split("/")
    k = 0
    while k < len(segs) - 1 and not re.search(r"[*?\[{\\]", segs[k]):
        k += 1
    prefix = "/".join(segs[:k])
    if pattern.startswith("/") and not prefix:
        prefix = "/"
    return prefix, "/".join(segs[k:])

