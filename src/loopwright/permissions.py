"""Room: bases. Owns the gate (rules, modes, verdicts); may import data types and bashparse only.

The gate g of seed Def 3.1: decides, per tool call, run or refuse.

Rules follow Claude Code: `Tool` or `Tool(specifier)` in three lists. Evaluation order
(written once, in `Permissions._order`):

    deny rules -> ask rules -> mode -> allow rules (and built-in safe cases) -> can_use_tool

The first list with a match decides. "Ask" means: the `can_use_tool` callback decides;
with no callback (a headless run), or in `dontAsk` mode, the call is refused with a
message that says how to allow it. A refusal becomes an is_error tool_result carrying
its message (seed Prop 3.5) and is listed in the result's `permission_denials`.

`mode=None` (the library default) keeps the gate out of the way: deny/ask/allow rules
still apply when given, anything else goes to `can_use_tool`, and with no callback runs.

This module owns rule matching and the order. What a path really names, the working
directories and protected paths live in `workspace`; what a shell command reads, writes
and runs lives in `bashcheck` (on top of `bashparse`). When either cannot be sure, the
verdict is "ask" (headless: refused with a hint), never "allow".
"""

from __future__ import annotations

import copy
import inspect
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, TypeAlias

from .workspace import HARMLESS_READS, HARMLESS_WRITES, ToolState, Workspace, kernel_path, protected

if TYPE_CHECKING:  # imported by the methods that judge a shell command: most runs start without one
    from . import bashcheck, bashparse

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
PERMISSION_MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
# Read-only, but what they send leaves the machine (a URL or a query can carry data out): they
# run side by side like read-only tools, and need a rule or approval like tools that act.
NETWORK_TOOLS = frozenset({"WebFetch", "WebSearch"})
PATH_KEYS = ("file_path", "notebook_path", "path")


@dataclass(slots=True)
class Allow:
    updated_input: dict[str, Any] | None = None
    behavior: ClassVar[Literal["allow"]] = "allow"


@dataclass(slots=True)
class Deny:
    message: str = "Permission to use this tool was denied."
    interrupt: bool = False
    behavior: ClassVar[Literal["deny"]] = "deny"


Decision: TypeAlias = Allow | Deny
PermissionResultAllow = Allow  # the Agent SDK's names for the same decisions
PermissionResultDeny = Deny
CanUseTool: TypeAlias = Callable[[str, dict[str, Any]], Any]


def to_decision(value: Any) -> Decision:
    """Accept True/False, Allow/Deny, or the Agent SDK's dict form {"behavior": "allow"|"deny"}."""
    if isinstance(value, (Allow, Deny)):
        return value
    if isinstance(value, dict) and value.get("behavior") in ("allow", "deny"):
        if value["behavior"] == "allow":
            return Allow(value.get("updatedInput") or value.get("updated_input"))
        return Deny(str(value.get("message") or Deny().message), bool(value.get("interrupt", False)))
    if value is True:
        return Allow()
    if value is False:
        return Deny()
    raise TypeError(f"can_use_tool must return bool, Allow or Deny, not {type(value).__name__}")


# --- rules -----------------------------------------------------------------------------------

_RULE = re.compile(r"^\s*([A-Za-z0-9_*-]+)\s*(?:\((.*)\))?\s*$", re.S)


@dataclass(frozen=True, slots=True)
class Rule:
    """`Tool` or `Tool(specifier)`. `base` anchors `/path` specifiers: the project directory
    of the settings file the rule came from (None: the run's working directory)."""

    tool: str
    specifier: str | None = None
    base: str | None = None
    source: str = ""

    @classmethod
    def parse(cls, text: str, base: str | Path | None = None, source: str = "") -> Rule:
        if not isinstance(text, str):
            raise ValueError(f"a permission rule must be a string, not {type(text).__name__}")
        m = _RULE.match(text)
        if m is None:
            raise ValueError(f"malformed permission rule {text!r}: use Tool or Tool(specifier)")
        spec = m.group(2)
        if spec is not None:
            spec = spec.strip()
            if spec in ("", "*"):
                spec = None  # Bash() and Bash(*) mean every Bash call
        rule = cls(m.group(1), spec, str(base) if base is not None else None, source)
        if spec is not None and (rule.tool in EDIT_TOOLS or rule.tool in READ_TOOLS):
            try:
                _gitignore(_anchor(spec)[1])
            except Exception as e:
                raise ValueError(f"invalid path pattern in permission rule {text!r}: {e}") from None
        return rule

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def covers_tool(self, name: str) -> bool:
        t = self.tool
        if t == name:
            return True
        if t == "Edit" and name in EDIT_TOOLS:
            return True
        if t == "Read" and name in READ_TOOLS:
            return True
        if t.startswith("mcp__") and t.count("__") == 1 and name.startswith(t + "__"):
            return True  # mcp__server covers all of that server's tools
        return "*" in t and re.fullmatch(re.escape(t).replace(r"\*", ".*"), name) is not None


def _rules(items: Iterable[str | Rule], source: str) -> list[Rule]:
    return [r if isinstance(r, Rule) else Rule.parse(r, source=source) for r in items]


@lru_cache(maxsize=1024)
def command_pattern(spec: str) -> re.Pattern[str]:
    """A Bash specifier as a regex over one (whitespace-normalized) command.

    `npm run test:*` is the legacy prefix form: `npm run test` alone or followed by a space.
    Otherwise `*` matches anything, anywhere; a pattern ending in ` *` with no other
    wildcard also matches the bare command (`ls *` matches `ls` and `ls -la`, not `lsof`)."""
    spec = " ".join(spec.split())
    if spec.endswith(":*") and "*" not in spec[:-2]:
        return re.compile(re.escape(spec[:-2]) + r"(?: .*)?", re.S)
    stars = spec.count("*") - spec.count(r"\*")
    if spec.endswith(" *") and stars == 1:
        head = spec[:-2]
        return re.compile(_glob_to_regex(head) + r"(?: .*)?", re.S)
    return re.compile(_glob_to_regex(spec), re.S)


def _glob_to_regex(s: str) -> str:
    out = []
    i = 0
    while i < len(s):
        if s.startswith(r"\*", i):
            out.append(re.escape("*"))
            i += 2
            continue
        out.append(".*" if s[i] == "*" else re.escape(s[i]))
        i += 1
    return "".join(out)


def command_matches(spec: str, command: str) -> bool:
    return command_pattern(spec).fullmatch(" ".join(command.split())) is not None


def _gitignore(pattern: str) -> Any:
    from .ignore import path_spec  # the one matcher of Grep, Glob and the gate

    return path_spec(pattern)


def _anchor(spec: str) -> tuple[str, str]:
    """(what the pattern is relative to, the gitignore pattern)."""
    if spec.startswith("//"):
        return "/", spec[1:]
    if spec == "~" or spec.startswith("~/"):
        return "~", "/" + (spec[2:] or "**")
    if spec.startswith("/"):
        return "base", spec
    if spec.startswith("./"):
        return "cwd", "/" + spec[2:]
    return "cwd", spec


def path_rule_matches(spec: str, path: str, cwd: str, base: str | None, home: str) -> bool:
    """Claude Code's path anchors with gitignore matching: `//abs`, `~/home-relative`,
    `/relative-to-settings-project`, `./cwd-relative` or bare `pattern` (any depth under cwd)."""
    anchor, pattern = _anchor(spec)
    root = {"/": "/", "~": home, "base": base or cwd}.get(anchor, cwd)
    rel = os.path.relpath(path, root)
    if rel == ".":
        rel = ""
    if rel.startswith(".."):
        return False
    spec_obj = _gitignore(pattern)
    if spec_obj.match_file(rel) or (rel and spec_obj.match_file(rel + "/")):
        return True
    # A path inside a matched directory is matched too (git ignores a directory's contents).
    parts = rel.split("/")
    return any(spec_obj.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts)))


# --- verdicts ----------------------------------------------------------------------------------

# Why a verdict is what it is: the hint a refusal carries is chosen by this code.
Code = Literal["ok", "deny_rule", "ask_rule", "hook", "plan", "protected", "outside", "unknown_path",
               "denied_below", "unparsed", "no_file", "not_approved", "unsandboxed"]


@dataclass(slots=True)
class Verdict:
    """What the rules say about one call: allow, deny, or ask (with why)."""

    kind: Literal["allow", "deny", "ask"]
    reason: str = ""
    soft: bool = False  # an ask that only exists because nothing approved the call (mode None: run)
    subject: str | None = None  # the program that needs approval, for the hint
    code: Code = "not_approved"

    @property
    def allowed(self) -> bool:
        return self.kind == "allow"


ALLOW = Verdict("allow", code="ok")

# acceptEdits also approves these filesystem commands, when every path is in the working dirs.
FS_COMMANDS = {"mkdir": set("pv") | {"--parents", "--verbose"}, "touch": set("cam"),
               "mv": set("finvuT") | {"--verbose", "--force", "--no-clobber"},
               "cp": set("rRafinvpuTLP") | {"--recursive", "--verbose", "--force", "--preserve", "--archive"}}


# --- the gate ----------------------------------------------------------------------------------

class Wording(NamedTuple):
    """How refusal advice names the settings that would allow a call, on one surface: the CLI's
    flags and settings files, or the Python API's AgentOptions fields."""

    rule: Callable[[str], str]  # an allow rule to add (quoted for a shell on the CLI)
    bare_rule: Callable[[str], str]  # the same for a bare tool name
    mode: Callable[[str], str]  # a permission mode
    add_dir: str
    in_settings_allow: str  # where else allow rules go
    in_settings_dirs: str  # where else extra directories go
    asks: str  # who may approve a call that needs approval
    approve: str
    cannot_ask: str


WORDING: dict[str, Wording] = {
    "cli": Wording(
        rule=lambda r: f"--allowedTools '{r}'", bare_rule=lambda r: f"--allowedTools {r}",
        mode=lambda m: f"--permission-mode {m}", add_dir="--add-dir",
        in_settings_allow=" (or permissions.allow in .loopwright/settings.json)",
        in_settings_dirs=" (or permissions.additionalDirectories)",
        asks="an interactive run asks", approve="approve the call in an interactive run",
        cannot_ask="this run cannot ask"),
    "python": Wording(
        rule=lambda r: f"allowed_tools=['{r}']", bare_rule=lambda r: f"allowed_tools=['{r}']",
        mode=lambda m: f"permission_mode='{m}'", add_dir="add_dirs=[...]",
        in_settings_allow=" in AgentOptions", in_settings_dirs=" in AgentOptions",
        asks="a can_use_tool callback may approve them", approve="approve it in a can_use_tool callback",
        cannot_ask="this run cannot ask (it has no can_use_tool callback)"),
}


@dataclass
class Permissions:
    """Rules and a mode in front of the user's `can_use_tool` callback.

    `allowed_tools`, `ask_tools`, `disallowed_tools`: rules (`Bash`, `Bash(git diff *)`,
    `Edit(./src/**)`, ...) as strings or `Rule`s. `cwd` and `add_dirs` are the working
    directories writes are confined to."""

    mode: PermissionMode | None = None
    allowed_tools: Sequence[str | Rule] = field(default_factory=list)
    disallowed_tools: Sequence[str | Rule] = field(default_factory=list)
    can_use_tool: CanUseTool | None = None
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
    ws: Workspace = field(init=False, repr=False, compare=False)  # built from the fields above
    # What the rules said about the last call decided (telemetry's execute_tool span reads it).
    last_verdict: Verdict | None = field(default=None, init=False, repr=False, compare=False)
    _granted_n: int = field(default=0, init=False, repr=False, compare=False)  # tool_state.granted taken so far

    def for_state(self, state: ToolState | None) -> Permissions:
        """This gate for the run whose tools share `state` (a copy: a subagent's gate is its
        parent's and must not move the parent's shell)."""
        gate = copy.copy(self)
        gate.tool_state = state
        gate._bind_state()
        return gate

    def _bind_state(self) -> None:
        # The gate resolves Bash paths from the shell's cwd in the state; searching tools (Grep,
        # Glob) find there which files Read deny rules hide, and leave them out of what they list.
        self.ws = copy.copy(self.ws)
        self.ws.state = self.tool_state
        if self.tool_state is not None and any(r.specifier is not None and r.covers_tool("Read") for r in self.deny):
            self.tool_state.read_denied = self.read_denied

    def read_denied(self, path: str) -> bool:
        """Does a Read deny rule cover this (absolute) path?"""
        lexical, real = self.ws.resolve(path)
        return self._path_match(self.deny, "Read", lexical, real) is not None

    def __post_init__(self) -> None:
        if self.mode is not None and self.mode not in PERMISSION_MODES:
            raise ValueError(f"unknown permission mode {self.mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        self.allow = _rules(self.allowed_tools, "allow")
        self.ask = _rules(self.ask_tools, "ask")
        self.deny = _rules(self.disallowed_tools, "deny")
        self.ws = Workspace(self.cwd, self.add_dirs, self.home, self.exec_path)
        self._cwd = self.ws.root
        self._home = self.ws.home_dir
        self._bind_state()

    # -- entry point used by the executor ----------------------------------------------------

    async def decide(self, name: str, tool_input: dict[str, Any], read_only: bool,
                     *, hook_decision: str | None = None) -> Decision:
        v = self.evaluate(name, tool_input, read_only, hook_decision=hook_decision)
        self.last_verdict = v  # what the rules said (telemetry's execute_tool span)
        if v.kind == "allow":
            return Allow()
        if v.kind == "deny":
            return Deny(v.reason)
        return await self._ask(name, tool_input, v)

    async def _ask(self, name: str, tool_input: dict[str, Any], v: Verdict) -> Decision:
        if self.mode == "dontAsk":
            return Deny(f"Permission denied: {describe(name, tool_input)} is not pre-approved and "
                        f"dontAsk mode refuses everything else ({v.reason}). {self.hint(name, tool_input, v)}")
        if self.can_use_tool is not None:
            value = self.can_use_tool(name, tool_input)
            if inspect.isawaitable(value):
                value = await value
            return to_decision(value)
        if v.soft and self.mode is None:
            return Allow()
        return Deny(f"Permission denied: {describe(name, tool_input)} needs approval ({v.reason}), and "
                    f"{WORDING[self.advice].cannot_ask}. {self.hint(name, tool_input, v)}")

    def hint(self, name: str, tool_input: dict[str, Any], v: Verdict | None = None) -> str:
        """How to allow a call like this one next time."""
        code = v.code if v is not None else "not_approved"
        w = WORDING[self.advice]
        if code == "protected":
            return ("Protected paths (and directories on PATH) are written only with approval "
                    f"({w.asks}) or in {w.mode('bypassPermissions')}.")
        if code == "outside":
            kind = "Edit" if name in EDIT_TOOLS else "Read"
            return (f"To allow it, add the directory with {w.add_dir}{w.in_settings_dirs}, "
                    f"or a rule such as {w.rule(f'{kind}(//abs/dir/**)')}.")
        if code == "unsandboxed":
            return ("Approve it in an interactive run, list the command in sandbox.excludedCommands, or set "
                    "sandbox.allowUnsandboxedCommands to false so that every command runs in the sandbox.")
        if code == "denied_below":
            return ("Grep and Glob leave out the files Read deny rules cover; use them, or name the files to "
                    "read.")
        if code == "unknown_path":
            return ("Name the files literally (no variables, command substitutions or directory changes the "
                    f"gate cannot follow), or {w.approve}.")
        if name == "Bash":
            rules = self.suggest_rules(name, tool_input)
            cmd = tool_input.get("command")
            first = v.subject if v is not None and v.subject else (
                cmd.split()[0] if isinstance(cmd, str) and cmd.split() else "")
            fallback = rules[0] if rules else f"Bash({first}:*)" if first else "Bash"
            rule = next((r for r in rules if first and r.startswith(f"Bash({first}")), fallback)
            return (f"To allow it, add a rule such as {w.rule(rule)}{w.in_settings_allow}, "
                    f"or run with {w.mode('bypassPermissions')}.")
        if name == "WebFetch" and (rules := self.suggest_rules(name, tool_input)):
            return f"To allow it, add a rule such as {w.rule(rules[0])}{w.in_settings_allow}."
        if name in EDIT_TOOLS:
            return (f"To allow it, use {w.mode('acceptEdits')} (edits inside the working directories), "
                    f"add a rule such as {w.rule('Edit(./src/**)')}, or {w.add_dir} for another directory.")
        return f"To allow it, add {w.bare_rule(name)}{w.in_settings_allow}."

    def suggest_rules(self, name: str, tool_input: dict[str, Any]) -> list[str]:
        """The allow rules that would approve calls like this one next time (what "don't ask
        again" offers), as Claude Code words them: a prefix per command that needs approval
        (`Bash(python3 -m pytest:*)`, `Bash(git commit:*)`), the file's directory for an edit
        (`Edit(./src/**)`). Empty when no rule is narrow enough (`python3 -c ...`, `sudo ...`):
        then only this exact call can be remembered."""
        if not isinstance(tool_input, dict):
            return []
        if name == "Bash":
            return bash_rules(tool_input.get("command"))
        path = next((tool_input[k] for k in PATH_KEYS if isinstance(tool_input.get(k), str) and tool_input[k]), None)
        if name in EDIT_TOOLS or name in READ_TOOLS:
            if path is None:
                return [name] if name in EDIT_TOOLS else []
            kind = "Edit" if name in EDIT_TOOLS else "Read"
            lexical, _ = self.resolve(path)
            folder = lexical if name in ("Glob", "Grep") and os.path.isdir(lexical) else os.path.dirname(lexical)
            root = self._cwd.rstrip("/")
            if folder == root:
                return [f"{kind}(./**)"]
            if folder.startswith(root + "/"):
                return [f"{kind}(./{folder[len(root) + 1:]}/**)"]
            return [f"{kind}(/{folder.rstrip('/')}/**)"]  # //abs: an absolute path
        if name == "WebFetch" and isinstance(tool_input.get("url"), str):
            from urllib.parse import urlparse

            host = urlparse(tool_input["url"]).hostname
            return [f"WebFetch(domain:{host})"] if host else []
        return [name]

    # -- the rules, without the callback (pure; what tests and `loopwright` explain use) ------

    def evaluate(self, name: str, tool_input: dict[str, Any], read_only: bool = False,
                 *, hook_decision: str | None = None) -> Verdict:
        if not isinstance(tool_input, dict):
            tool_input = {}
        self._take_grants()
        if name == "Bash":
            return self._bash(tool_input.get("command"), hook_decision,
                              tool_input.get("dangerouslyDisableSandbox") is True)
        if name in EDIT_TOOLS:
            return self._edit(name, tool_input, read_only, hook_decision)
        if name in READ_TOOLS:
            return self._read(name, tool_input, read_only, hook_decision)
        return self._generic(name, tool_input, read_only, hook_decision)

    def _take_grants(self) -> None:
        """Allow rules the run's tools granted since the last call (an active skill's allowed-tools).
        A new list, not an append: a subagent's gate is a copy of its parent's and shares the old one."""
        granted = self.tool_state.granted if self.tool_state is not None else []
        n = self._granted_n
        if len(granted) > n:
            self.allow = [*self.allow, *_rules(granted[n:], "skill")]
            self._granted_n = len(granted)

    def _order(self, deny: Callable[[], Verdict | None], ask: Callable[[], Verdict | None], hook: str | None,
               read_only: bool, what: str, rules_allow: Callable[[], bool], auto: Callable[[], Verdict]) -> Verdict:
        """The order, for every tool: deny -> ask -> mode -> allow.

        `rules_allow`: do allow rules approve it (what decides when mode is None);
        `auto`: the mode's own checks and the allow rules (default, acceptEdits, plan, dontAsk)."""
        v = deny()
        if v is not None:
            return v
        v = ask()
        if v is not None:
            return v
        if hook == "ask":
            return Verdict("ask", "a PreToolUse hook asked", code="hook")
        if self.mode is None:
            if hook == "allow" or rules_allow():
                return ALLOW
            return Verdict("ask", "no rule approves it", soft=True)
        if hook == "allow" or self.mode == "bypassPermissions":
            return ALLOW
        if self.mode == "plan" and not read_only:
            return Verdict("deny", f"Permission denied: plan mode allows read-only tools only, and {what} "
                                   "can change things. Present the plan instead.", code="plan")
        return auto()

    def _named(self, rules: list[Rule], name: str) -> Rule | None:
        return next((r for r in rules if r.specifier is None and r.covers_tool(name)), None)

    @staticmethod
    def _rule_verdict(kind: Literal["deny", "ask"], r: Rule | None, what: str) -> Verdict | None:
        if r is None:
            return None
        if kind == "deny":
            return Verdict("deny", f"Permission denied: {what} matches the deny rule {r}.", code="deny_rule")
        return Verdict("ask", f"ask rule {r}", code="ask_rule")

    # generic tools: names, and a specifier matched against the input
    def _generic(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        return self._order(
            lambda: self._rule_verdict("deny", self._first(self.deny, name, x), name),
            lambda: self._rule_verdict("ask", self._first(self.ask, name, x), name),
            hook, read_only, name,
            lambda: self._first(self.allow, name, x) is not None,
            # An MCP tool's readOnlyHint is the server's claim: it makes the tool concurrent, but
            # the tool still needs a rule to run without approval (as in Claude Code).
            lambda: ALLOW if (read_only and not name.startswith("mcp__") and name not in NETWORK_TOOLS)
            or self._first(self.allow, name, x)
            else Verdict("ask", "no allow rule matches it"))

    def _first(self, rules: list[Rule], name: str, x: dict[str, Any]) -> Rule | None:
        for r in rules:
            if not r.covers_tool(name):
                continue
            if r.specifier is None or _generic_spec_matches(r.specifier, name, x):
                return r
        return None

    # -- paths ---------------------------------------------------------------------------------

    def resolve(self, p: str, base: str | None = None) -> tuple[str, str]:
        """(lexical absolute path, the path the kernel opens)."""
        return self.ws.resolve(p, base)

    def inside(self, real: str) -> bool:
        return self.ws.inside(real)

    def _path_match(self, rules: list[Rule], tool: str, lexical: str, real: str, *, real_only: bool = False
                    ) -> Rule | None:
        real_cwd = os.path.realpath(self._cwd)
        for r in rules:
            if r.tool != tool and not (tool == "Edit" and r.tool in EDIT_TOOLS) or r.specifier is None:
                continue
            if path_rule_matches(r.specifier, real, real_cwd, r.base and os.path.realpath(r.base), self._home):
                return r
            if not real_only and path_rule_matches(r.specifier, lexical, self._cwd, r.base, self._home):
                return r
        return None

    def _write_deny(self, p: str, lexical: str, real: str) -> Verdict | None:
        r = self._path_match(self.deny, "Edit", lexical, real)
        if r is not None:
            return Verdict("deny", f"Permission denied: writing {p} matches the deny rule {r}.", code="deny_rule")
        r = self._path_match(self.deny, "Read", lexical, real)
        if r is not None:
            return Verdict("deny", f"Permission denied: {p} matches the deny rule {r} (a Read deny also "
                                   "blocks writing).", code="deny_rule")
        return None

    def _read_deny(self, p: str, lexical: str, real: str) -> Verdict | None:
        r = self._path_match(self.deny, "Read", lexical, real)
        if r is not None:
            return Verdict("deny", f"Permission denied: reading {p} matches the deny rule {r}.", code="deny_rule")
        return None

    def auto_write(self, p: str, lexical: str, real: str, *, approved: bool = False) -> Verdict | None:
        """None if writing `p` may be approved without asking (after deny/ask/mode), else an ask.
        `approved`: an allow rule approved the command that writes it (a bare `Bash` rule
        approves redirections too); inside the working directories that is enough."""
        why = protected(lexical) or protected(real)
        if why:
            return Verdict("ask", f"{why} and is never written without approval", code="protected")
        if self.ws.on_exec_path(real):
            return Verdict("ask", f"{p} is (in) a directory on PATH, where a file changes what a command name "
                                  "runs, and is never written without approval", code="protected")
        if self._path_match(self.allow, "Edit", lexical, real, real_only=True) is not None:
            return None
        if not self.inside(real):
            target = f"{p} (really {real})" if real != lexical else p
            return Verdict("ask", f"{target} is outside the working directories", code="outside")
        if approved or self._named(self.allow, "Edit") is not None or self.mode == "acceptEdits":
            return None
        return Verdict("ask", f"writing {p} needs approval")

    def _deny_below(self, real_dir: str) -> Rule | None:
        """A Read deny rule that may cover a file under `real_dir`, or None."""
        for r in self.deny:
            if not r.covers_tool("Read") or r.specifier is None:
                continue
            anchor, pattern = _anchor(r.specifier)
            root = os.path.realpath({"/": "/", "~": self._home, "base": r.base or self._cwd}.get(anchor, self._cwd))
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

    def _unresolvable(self, p: str) -> Verdict | None:
        why = self.ws.unresolvable(p)
        return Verdict("ask", why, code="unknown_path") if why else None

    # Edit, Write, MultiEdit, NotebookEdit
    def _edit(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        path = next((x[k] for k in PATH_KEYS if isinstance(x.get(k), str) and x[k]), None)
        lexical, real = self.resolve(path or ".")

        def deny() -> Verdict | None:
            named = self._rule_verdict("deny", self._named(self.deny, name), name)
            return named or (self._write_deny(path, lexical, real) if path is not None else None)

        def ask() -> Verdict | None:
            r = self._path_match(self.ask, "Edit", lexical, real) if path is not None else None
            return self._rule_verdict("ask", r or self._named(self.ask, name), name)

        def rules_allow() -> bool:
            return self._named(self.allow, name) is not None or (
                path is not None and self._path_match(self.allow, "Edit", lexical, real, real_only=True) is not None)

        def auto() -> Verdict:
            if path is None:
                return ALLOW if self._named(self.allow, name) else Verdict("ask", "the call names no file",
                                                                            code="no_file")
            return self._unresolvable(path) or self.auto_write(path, lexical, real) or ALLOW

        return self._order(deny, ask, hook, read_only, name, rules_allow, auto)

    # Read, Glob, Grep, LS
    def _read(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        path = next((x[k] for k in PATH_KEYS if isinstance(x.get(k), str) and x[k]), None) or "."
        targets = [path]
        climbs = False
        pattern = x.get("pattern")
        if name == "Glob" and isinstance(pattern, str):
            # The pattern is a path too: `/etc/*`, `../outside/*` or `**/../../x` search elsewhere.
            prefix, rest = _glob_prefix(pattern)
            targets = [os.path.join(path, prefix) if prefix else path]
            climbs = ".." in rest.split("/")
        resolved = [(t, *self.resolve(t)) for t in targets]

        def deny() -> Verdict | None:
            named = self._rule_verdict("deny", self._named(self.deny, name), name)
            return named or next((v for t, lx, rl in resolved if (v := self._read_deny(t, lx, rl))), None)

        def ask() -> Verdict | None:
            r = next((r for _, lx, rl in resolved if (r := self._path_match(self.ask, "Read", lx, rl))), None)
            return self._rule_verdict("ask", r or self._named(self.ask, name), name)

        def auto() -> Verdict:
            if climbs:
                return Verdict("ask", f"the pattern {pattern} climbs out of its directory with ..",
                               code="unknown_path")
            for t, lexical, real in resolved:
                v = self._unresolvable(t)
                if v is not None:
                    return v
                if self._path_match(self.allow, "Read", lexical, real) is None and not self.inside(real):
                    return Verdict("ask", f"reading {t} is outside the working directories", code="outside")
            if read_only or self._named(self.allow, name):
                return ALLOW
            if all(self._path_match(self.allow, "Read", lx, rl) for _, lx, rl in resolved):
                return ALLOW
            return Verdict("ask", "no allow rule matches it")

        return self._order(deny, ask, hook, True, name,
                           lambda: read_only or self._named(self.allow, name) is not None, auto)

    # -- Bash ----------------------------------------------------------------------------------

    def _bash(self, command: Any, hook: str | None, unsandboxed: bool = False) -> Verdict:
        from . import bashcheck, bashparse

        if not isinstance(command, str):
            command = ""
        parsed = bashparse.parse(command)
        uses = bashcheck.analyze(parsed, self.ws)
        bare = self._named(self.allow, "Bash") is not None

        def deny() -> Verdict | None:
            v = self._rule_verdict("deny", self._named(self.deny, "Bash"), "Bash")
            if v is not None:
                return v
            for c in parsed.commands:
                r = self._bash_rule(self.deny, c)
                if r is not None:
                    return self._rule_verdict("deny", r, f"`{c.text or c.original}`")
            for u in uses:
                for lexical, real in u.paths:
                    v = self._write_deny(u.shown, lexical, real) if u.kind == "write" else self._read_deny(
                        u.shown, lexical, real)
                    if v is not None:
                        return v
            return None

        def ask() -> Verdict | None:
            r = self._named(self.ask, "Bash") or next(
                (rr for c in parsed.commands if (rr := self._bash_rule(self.ask, c)) is not None), None)
            if r is None:
                r = next((rr for u in uses for lx, rl in u.paths
                          if (rr := self._path_match(self.ask, "Edit" if u.kind == "write" else "Read", lx, rl))),
                         None)
            return self._rule_verdict("ask", r, "Bash")

        def rules_allow() -> bool:
            return parsed.ok and (bare or all(not c.opaque and self._bash_rule(self.allow, c, allow=True)
                                              for c in parsed.commands if c.argv))

        if (self.sandbox_auto_allow is not None and self.mode != "plan" and hook != "ask" and deny() is None
                and ask() is None and self.sandbox_auto_allow(command, unsandboxed)):
            return ALLOW
        if unsandboxed and self.sandbox_escape and self.mode == "bypassPermissions" and hook != "allow":
            # With the sandbox on, bypassPermissions lets the agent run freely inside the box:
            # leaving it is not part of that, so it is asked (or refused where nobody can answer).
            return deny() or Verdict("ask", "it asks to run outside the OS sandbox (dangerouslyDisableSandbox), "
                                            "which bypassPermissions does not approve by itself", code="unsandboxed")
        return self._order(deny, ask, hook, True, "Bash", rules_allow, lambda: self._bash_auto(parsed, uses, bare))

    def _bash_auto(self, parsed: bashparse.ParsedCommand, uses: list[bashcheck.PathUse], bare: bool) -> Verdict:
        """default, acceptEdits, plan and dontAsk: what runs without asking."""
        from . import bashcheck

        if not parsed.ok:
            if self.mode == "plan":
                return Verdict("deny", f"Permission denied: plan mode runs read-only commands only, and this "
                                       f"command could not be checked: {parsed.error}.", code="plan")
            return Verdict("ask", f"{parsed.error}; only commands that can be checked run without approval",
                           subject=next((c.name for c in parsed.commands if c.name), None), code="unparsed")
        if self.mode == "plan":
            for c in parsed.commands:
                why = c.opaque or (bashcheck.read_only_problem(c) if c.argv else None) or self._env_problem(c)
                if why is None and c.name == "git":
                    why = self._git_repo_problem(c, parsed)
                if why is None and any(rd.writes and not _harmless(rd) for rd in c.redirects):
                    why = "it redirects output into a file"
                if why:
                    return Verdict("deny", f"Permission denied: plan mode runs read-only commands only, and "
                                           f"`{c.text or c.original}`: {why}.", code="plan")
        read_denies = any(r.specifier and r.covers_tool("Read") for r in self.deny)
        approved = {id(c) for c in parsed.commands if c.argv and self._bash_rule(self.allow, c, allow=True)}
        for u in uses:
            if u.why is not None:
                # A path known only at run time: fine under a bare Bash rule unless it may write a
                # protected path or read a denied one; otherwise ask.
                if bare and u.kind == "read" and not read_denies:
                    continue
                return Verdict("ask", f"`{u.command.text or u.command.original}`: {u.why}", code="unknown_path",
                               subject=u.command.name)
            for lexical, real in u.paths:
                if u.kind == "write":
                    if u.redirect and _harmless_path(u.shown):
                        continue
                    v = self.auto_write(u.shown, lexical, real,
                                        approved=bare or (id(u.command) in approved and not u.redirect))
                    if v is not None:
                        v.subject = u.command.name
                        return v
                elif real in HARMLESS_READS:
                    continue
                elif not bare and self._path_match(self.allow, "Read", lexical, real) is None and not self.inside(real):
                    return Verdict("ask", f"it reads {u.shown}, outside the working directories", code="outside",
                                   subject=u.command.name)
                elif u.recursive and os.path.isdir(real) and (r := self._deny_below(real)) is not None:
                    return Verdict("ask", f"it reads everything under {u.shown}, where the deny rule {r} hides files",
                                   code="denied_below", subject=u.command.name)
        if self.mode == "plan" or bare:
            return ALLOW
        for c in parsed.commands:
            why = self._part_problem(c, parsed)
            if why is not None:
                return Verdict("ask", why, subject=c.name)
        return ALLOW

    def _bash_rule(self, rules: list[Rule], c: bashparse.SimpleCommand, allow: bool = False) -> Rule | None:
        texts = [t for t in (c.text, c.plain) if t]
        if not allow:
            if c.original and c.original not in texts:
                texts.append(c.original)
            if c.name and "/" in c.name:  # /bin/rm is rm, for deny and ask rules
                texts.append(" ".join([c.name.rsplit("/", 1)[1], *(w.value for w in c.args)]))
        if not texts:
            return None
        for r in rules:
            if r.specifier is None or not r.covers_tool("Bash"):
                continue
            if any(command_matches(r.specifier, t) for t in texts):
                return r
        return None

    def _env_problem(self, c: bashparse.SimpleCommand) -> str | None:
        bad = c.unsafe_env
        return f"it sets {', '.join(bad)}, which changes what runs" if bad else None

    def _part_problem(self, c: bashparse.SimpleCommand, parsed: bashparse.ParsedCommand) -> str | None:
        from . import bashcheck

        label = f"`{c.text or c.original}`"
        if c.opaque:
            return f"{label}: {c.opaque}"
        env = self._env_problem(c)
        if env:
            return f"{label}: {env}"
        if not c.argv:
            return None  # only assignments or redirections (their targets were judged as writes)
        if c.name is None:
            return f"{label}: its command name is computed at run time"
        if self._bash_rule(self.allow, c, allow=True):
            return None
        ro = bashcheck.read_only_problem(c)
        if ro is None and c.name == "git":
            ro = self._git_repo_problem(c, parsed)
            if ro is not None:
                return f"{label}: {ro}"
        if ro is None:
            return None
        if self.mode == "acceptEdits" and c.name in FS_COMMANDS:
            why = _fs_option_problem(c)
            return None if why is None else f"{label}: {why}"
        return f"{label}: no allow rule matches it"

    def _git_repo_problem(self, c: bashparse.SimpleCommand, parsed: bashparse.ParsedCommand) -> str | None:
        """Why a read-only git command still needs approval, or None.

        git obeys the config of the repository it finds, and a config can run programs
        (core.fsmonitor on `git status`, diff.external, ...). The project's own `.git` is
        protected from writes, but a directory that merely looks like a bare repository
        (HEAD, objects/, refs/) is one too: planted by an earlier edit, by this very command,
        or shipped in a cloned project. So git is auto-approved only where the repository it
        will find is known now and is not such a directory (the bare repository attack)."""
        from . import bashcheck

        starts: list[str] | None = [self.ws.shell_cwd()]
        for x in parsed.commands:
            if x is c:
                break
            if x.name in ("cd", "pushd", "popd"):
                targets = [w for w in x.args if not w.value.startswith("-")]
                if x.name == "popd" or len(targets) != 1:
                    return "it runs after a directory change that cannot be followed, maybe into a planted repository"
                new = bashcheck.cd(starts, targets[0], self.ws)
                if new is None:
                    return "it runs after a directory change that cannot be followed, maybe into a planted repository"
                starts = [*(starts or []), *new]
        a = bashcheck.command_args(c)
        if any("--git-dir" in p or "git -c" in p for p in a.problems):
            return next(p for p in a.problems if "--git-dir" in p or "git -c" in p)
        for w in a.chdir:
            starts = bashcheck.cd(starts, w, self.ws)
            if starts is None:
                return "its -C directory is computed at run time"
        others = [x for x in parsed.commands if x is not c]
        if any(any(rd.writes and not _harmless(rd) for rd in x.redirects) for x in parsed.commands) or any(
                x.argv and (x.name is None or bashcheck.read_only_problem(x) is not None) for x in others):
            return "other parts of the command can create files, maybe a repository whose config git would obey"
        for start in starts or []:
            bare = bashcheck.bare_repository_at_or_above(kernel_path(os.path.abspath(start))[0])
            if bare is not None:
                return (f"{bare} looks like a bare git repository; git would obey its config, which can "
                        "run programs (bare repository attack)")
        return None


# Programs whose first argument names what they do: a rule for `git commit` must not approve
# `git push`. The runners among them take the name of what they run next (`npm run test`).
_SUBCOMMANDS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "npx", "cargo", "go", "docker", "podman", "kubectl", "pip", "pip3",
    "uv", "poetry", "pdm", "hatch", "gh", "make", "just", "dotnet", "mvn", "gradle", "terraform", "helm", "brew",
    "apt", "apt-get", "systemctl", "conda", "rustup", "composer", "bundle", "rake", "mix", "swift", "tox", "nox",
    "deno", "yarnpkg", "corepack", "rails", "ansible-galaxy", "flutter", "dart", "stack", "cabal", "opam", "sbt"})
_RUNNERS = {("npm", "run"), ("npm", "exec"), ("npm", "run-script"), ("pnpm", "run"), ("pnpm", "exec"),
            ("pnpm", "dlx"), ("yarn", "run"), ("yarn", "dlx"), ("bun", "run"), ("bun", "x"), ("uv", "run"),
            ("uv", "tool"), ("poetry", "run"), ("pdm", "run"), ("hatch", "run"), ("bundle", "exec"),
            ("go", "run"), ("cargo", "run"), ("deno", "run"), ("docker", "compose"), ("docker", "run")}
# Interpreters: the rule names the module or script they run; `-c CODE` gets no rule.
_INTERPRETER = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|ruby|perl|php|Rscript|lua|tsx|ts-node)$")
# A prefix rule for these (and for the shells, bashparse.SHELLS) would approve any command at all.
_NO_PREFIX = {"sudo", "doas", "su", "env", "xargs", "eval", "exec", "command", "builtin",
                                 "nohup", "time", "timeout", "nice", "ionice", "setsid", "stdbuf", "watch",
                                 "source", ".", "ssh", "find", "parallel", "script", "unbuffer", "chroot"}
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_@%+=,./:-]+$")


def command_prefix(c: bashparse.SimpleCommand) -> str | None:
    """The prefix a `Bash(prefix:*)` rule for this command names, or None (none is safe)."""
    from . import bashparse

    if (c.name is None or c.opaque or not _PLAIN_WORD.match(c.name) or c.name in _NO_PREFIX
            or c.name in bashparse.SHELLS or c.unsafe_env):
        return None
    words = [c.name]
    args = [w.value if w.literal and not w.pattern and _PLAIN_WORD.match(w.value) else None for w in c.args]
    if _INTERPRETER.match(c.name.rsplit("/", 1)[-1]):
        if args[:1] == ["-m"] and len(args) > 1 and args[1] is not None:
            return f"{c.name} -m {args[1]}"
        if args and args[0] is not None and not args[0].startswith("-"):
            return f"{c.name} {args[0]}"  # a script
        return None
    if c.name in _SUBCOMMANDS and args:
        if args[0] is None or args[0].startswith("-"):
            return None  # `git -C dir push`: the prefix would approve every git command
        words.append(args[0])
        if (c.name, args[0]) in _RUNNERS and len(args) > 1 and args[1] is not None and not args[1].startswith("-"):
            words.append(args[1])
    return " ".join(words)


def bash_rules(command: Any) -> list[str]:
    """`Bash(prefix:*)` rules approving the parts of `command` that need approval (see
    Permissions.suggest_rules); [] when one part has no safe prefix or the command cannot be parsed."""
    if not isinstance(command, str) or not command.strip():
        return []
    from . import bashcheck, bashparse

    parsed = bashparse.parse(command)
    if not parsed.ok:
        return []
    parts = [c for c in parsed.commands if c.argv]
    needing = [c for c in parts if bashcheck.read_only_problem(c) is not None] or parts
    out: list[str] = []
    for c in needing:
        prefix = command_prefix(c)
        if prefix is None:
            return []
        rule = f"Bash({prefix}:*)"
        if rule not in out:
            out.append(rule)
    return out


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


def _fs_option_problem(c: bashparse.SimpleCommand) -> str | None:
    """acceptEdits approves mkdir/touch/mv/cp with these options only (their paths are judged as writes)."""
    allowed = FS_COMMANDS[c.name or ""]
    targets = 0
    for w in c.args:
        v = w.value
        if v == "--":
            break
        if v.startswith("--"):
            if v not in allowed:
                return f"option {v} is not known to be safe"
        elif v.startswith("-") and len(v) > 1:
            if any(ch not in allowed for ch in v[1:]):
                return f"option {v} is not known to be safe"
        else:
            targets += 1
    return None if targets or "--" in [w.value for w in c.args] else "no paths"


def _harmless_path(p: str) -> bool:
    return p in HARMLESS_WRITES


def _harmless(rd: bashparse.Redirect) -> bool:
    return rd.target is not None and rd.target.literal and _harmless_path(rd.target.value)


def _generic_spec_matches(spec: str, name: str, x: dict[str, Any]) -> bool:
    if name == "WebFetch" and spec.startswith("domain:"):
        from urllib.parse import urlparse

        host = urlparse(str(x.get("url", ""))).hostname or ""
        want = spec[len("domain:"):]
        return host == want or re.fullmatch(_glob_to_regex(want), host) is not None
    values = [v for v in x.values() if isinstance(v, str)]
    rx = re.compile(_glob_to_regex(spec), re.S)
    return any(rx.fullmatch(v) for v in values)


def describe(name: str, tool_input: dict[str, Any]) -> str:
    """`Bash(ls -la)`, `Write(src/a.py)` or `Name`: the call, short."""
    for key in ("command", "file_path", "notebook_path", "path", "url", "pattern", "query"):
        v = tool_input.get(key) if isinstance(tool_input, dict) else None
        if isinstance(v, str) and v:
            v = " ".join(v.split())
            return f"{name}({v[:117] + '...' if len(v) > 120 else v})"
    return name

