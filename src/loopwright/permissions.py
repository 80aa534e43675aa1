"""Room: bases. Owns the gate (rules, modes, verdicts); may import data types and bashparse only.

The gate g of seed Def 3.1: decides, per tool call, run or refuse.

Rules follow Claude Code: `Tool` or `Tool(specifier)` in three lists. Evaluation order:

    deny rules -> ask rules -> mode -> allow rules (and built-in safe cases) -> can_use_tool

The first list with a match decides. "Ask" means: the `can_use_tool` callback decides;
with no callback (a headless run), or in `dontAsk` mode, the call is refused with a
message that says how to allow it. A refusal becomes an is_error tool_result carrying
its message (seed Prop 3.5) and is listed in the result's `permission_denials`.

`mode=None` (the library default) keeps the gate out of the way: deny/ask/allow rules
still apply when given, anything else goes to `can_use_tool`, and with no callback runs.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeAlias

from . import bashparse

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
PERMISSION_MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
PATH_KEYS = ("file_path", "notebook_path", "path")
READ_DENIED_KEY = "read_denied"  # ToolContext.state: path -> bool, set when Read deny rules exist
# Never auto-approved outside bypassPermissions: writing them changes how git, the
# harness, editors or the user's shell behave, or who may log in and with which credentials
# (these matter when the working directory is the home directory).
PROTECTED_DIRS = frozenset({".git", ".loopwright", ".claude", ".vscode", ".idea",
                            ".ssh", ".aws", ".gnupg", ".kube", ".docker"})
PROTECTED_FILES = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zprofile", ".zshenv",
    ".zlogin", ".zlogout", ".profile", ".gitconfig", ".gitmodules", ".envrc", ".mcp.json",
    ".netrc", ".pypirc", ".npmrc",
})


@dataclass(slots=True)
class Allow:
    updated_input: dict[str, Any] | None = None


@dataclass(slots=True)
class Deny:
    message: str = "Permission to use this tool was denied."
    interrupt: bool = False


Decision: TypeAlias = Allow | Deny
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


@lru_cache(maxsize=1024)
def _gitignore(pattern: str) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


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

@dataclass(slots=True)
class Verdict:
    """What the rules say about one call: allow, deny, or ask (with why)."""

    kind: Literal["allow", "deny", "ask"]
    reason: str = ""
    soft: bool = False  # an ask that only exists because nothing approved the call (mode None: run)
    subject: str | None = None  # the program that needs approval, for the hint

    @property
    def allowed(self) -> bool:
        return self.kind == "allow"


ALLOW = Verdict("allow")


# --- read-only shell commands ------------------------------------------------------------------

# Commands that only read (with the options below excluded). A compound command made only of
# these, with no writing redirections, runs without asking.
READ_ONLY_COMMANDS = frozenset({
    "ls", "cat", "pwd", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "echo", "printf",
    "which", "whoami", "du", "df", "stat", "basename", "dirname", "realpath", "readlink", "true",
    "false", "printenv", "id", "uname", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "nl", "cut",
    "tr", "uniq", "sort", "tree", "type", "cd", "test", "[", "find", "git", "file", "date", "env",
    "command", "jq", "od", "hexdump", "strings", "comm", "paste", "tac", "rev", "seq", "sleep",
    "column", "pushd", "popd", "dirs", "whereis", "ps", "pgrep", "fold", "expand", "sha512sum",
})
_FIND_WRITES = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls")
_GIT_READ_ONLY = frozenset({"status", "diff", "log", "show", "blame", "rev-parse", "ls-files", "ls-tree",
                            "shortlog", "describe", "grep", "cat-file", "reflog", "branch", "tag", "remote",
                            "merge-base", "rev-list", "whatchanged", "show-ref", "var", "version"})
_GIT_LISTING_ONLY = {"branch": {"-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes",
                                "--no-color", "--color", "--merged", "--no-merged", "--contains"},
                     "tag": {"-l", "--list", "-n"}, "remote": {"-v", "--verbose", "show", "get-url"},
                     "reflog": {"show"}}


def read_only_problem(cmd: bashparse.SimpleCommand) -> str | None:
    """None if this command only reads, else why not."""
    name = cmd.name
    if name is None:
        return "its command name is computed at run time"
    if name not in READ_ONLY_COMMANDS:
        return f"{name} is not a read-only command"
    vals = [w.value for w in cmd.args]
    if name == "find":
        bad = [v for v in vals if v in _FIND_WRITES]
        return f"find {bad[0]} runs or writes" if bad else None
    if name == "sort" and any(v in ("-o", "--output") or v.startswith(("--output=", "--compress-program")) or
                              (v.startswith("-o") and not v.startswith("--")) for v in vals):
        return "sort -o writes a file"
    if name == "uniq" and len([v for v in vals if not v.startswith("-")]) > 1:
        return "uniq with two file names writes the second"
    if name == "tree" and any(v == "-o" or v.startswith("-o") for v in vals):
        return "tree -o writes a file"
    if name == "file" and any(v == "-C" or v.startswith("--compile") for v in vals):
        return "file -C writes a file"
    if name == "date" and any(v in ("-s", "--set") or v.startswith("--set=") for v in vals):
        return "date -s sets the clock"
    if name == "rg" and any(v.startswith("--pre") for v in vals):
        return "rg --pre runs a command"
    if name in ("env", "command") and vals and not vals[0].startswith("-"):
        return f"{name} runs a command"
    if name == "git":
        return _git_problem(vals)
    return None


def _git_problem(vals: list[str]) -> str | None:
    i = 0
    while i < len(vals) and vals[i].startswith("-"):
        v = vals[i]
        if v in ("-c", "--config-env") or v.startswith(("--config-env=", "--exec-path=")):
            return "git -c can run configured programs"
        i += 2 if v in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= len(vals):
        return None
    sub, rest = vals[i], vals[i + 1:]
    if sub not in _GIT_READ_ONLY:
        return f"git {sub} is not read-only"
    if any(v.startswith(("--output", "-O", "--open-files-in-pager", "--ext-diff", "--textconv")) for v in rest):
        return f"git {sub} with these options writes or runs programs"
    listing = _GIT_LISTING_ONLY.get(sub)
    if listing is not None and any(v not in listing for v in rest):
        return f"git {sub} with arguments can change the repository"
    return None


# acceptEdits also approves these filesystem commands, when every path is in the working dirs.
FS_COMMANDS = {"mkdir": set("pv") | {"--parents", "--verbose"}, "touch": set("cam"),
               "mv": set("finvuT") | {"--verbose", "--force", "--no-clobber"},
               "cp": set("rRafinvpuTLP") | {"--recursive", "--verbose", "--force", "--preserve", "--archive"}}


# --- the gate ----------------------------------------------------------------------------------

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
    headless: bool = True
    ask_tools: Sequence[str | Rule] = field(default_factory=list)
    cwd: str | Path | None = None
    add_dirs: Sequence[str | Path] = field(default_factory=list)
    home: str | Path | None = None
    # The run's tool state: Bash keeps its working directory there (key "bash_cwd"), and
    # relative paths in a command are resolved from it, not from `cwd`.
    shell_state: dict[str, Any] | None = None
    # The PATH commands are looked up in (None: this process's). Its directories are never
    # written without approval: a file there changes what a command name runs.
    exec_path: str | None = None
    # sandbox.py: True for a Bash command that will run in the OS sandbox with
    # autoAllowBashIfSandboxed; it then needs no approval (deny and ask rules still apply).
    sandbox_auto_allow: Callable[[str], bool] | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        # The run's tools share shell_state: searching tools (Grep, Glob) find there which
        # files Read deny rules hide, and leave them out of what they list.
        if name == "shell_state" and isinstance(value, dict) and getattr(self, "deny", None):
            if any(r.specifier is not None and r.covers_tool("Read") for r in self.deny):
                value[READ_DENIED_KEY] = self.read_denied

    def read_denied(self, path: str) -> bool:
        """Does a Read deny rule cover this (absolute) path?"""
        lexical, real = self.resolve(path)
        return self._path_match(self.deny, "Read", lexical, real) is not None

    def __post_init__(self) -> None:
        if self.mode is not None and self.mode not in PERMISSION_MODES:
            raise ValueError(f"unknown permission mode {self.mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        self.allow = _rules(self.allowed_tools, "allow")
        self.ask = _rules(self.ask_tools, "ask")
        self.deny = _rules(self.disallowed_tools, "deny")
        self._cwd = os.path.abspath(self.cwd or ".")
        self._home = os.path.abspath(os.path.expanduser(str(self.home)) if self.home else os.path.expanduser("~"))
        dirs = [self._cwd, *(os.path.abspath(os.path.join(self._cwd, os.path.expanduser(str(d))))
                             for d in self.add_dirs)]
        self._dirs = [os.path.realpath(d) for d in dirs]
        path = os.environ.get("PATH", "") if self.exec_path is None else self.exec_path
        self._path_dirs = {os.path.realpath(os.path.join(self._cwd, d or ".")) for d in path.split(os.pathsep)}
        self.shell_state = self.shell_state  # registers read_denied (see __setattr__)

    # -- entry point used by the executor ----------------------------------------------------

    async def decide(self, name: str, tool_input: dict[str, Any], read_only: bool,
                     *, hook_decision: str | None = None) -> Decision:
        v = self.evaluate(name, tool_input, read_only, hook_decision=hook_decision)
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
        return Deny(f"Permission denied: {describe(name, tool_input)} needs approval ({v.reason}), and this "
                    f"run cannot ask. {self.hint(name, tool_input, v)}")

    def hint(self, name: str, tool_input: dict[str, Any], v: Verdict | None = None) -> str:
        """How to allow a call like this one next time."""
        reason = v.reason if v is not None else ""
        if "protected" in reason or "directory on PATH" in reason:
            return ("Protected paths (and directories on PATH) are written only with approval (an "
                    "interactive run asks) or in --permission-mode bypassPermissions.")
        if "outside the working directories" in reason:
            kind = "Edit" if name in EDIT_TOOLS else "Read"
            return ("To allow it, add the directory with --add-dir (or permissions.additionalDirectories), "
                    f"or a rule such as --allowedTools '{kind}(//abs/dir/**)'.")
        if name == "Bash":
            cmd = tool_input.get("command")
            first = v.subject if v is not None and v.subject else (
                cmd.split()[0] if isinstance(cmd, str) and cmd.split() else "")
            rule = f"Bash({first} *)" if first else "Bash"
            return (f"To allow it, add a rule such as --allowedTools '{rule}' (or permissions.allow in "
                    ".loopwright/settings.json), or run with --permission-mode bypassPermissions.")
        if name in EDIT_TOOLS:
            return ("To allow it, use --permission-mode acceptEdits (edits inside the working directories), "
                    "add a rule such as --allowedTools 'Edit(./src/**)', or --add-dir for another directory.")
        return f"To allow it, add --allowedTools {name} (or permissions.allow in .loopwright/settings.json)."

    # -- the rules, without the callback (pure; what tests and `loopwright` explain use) ------

    def evaluate(self, name: str, tool_input: dict[str, Any], read_only: bool = False,
                 *, hook_decision: str | None = None) -> Verdict:
        if not isinstance(tool_input, dict):
            tool_input = {}
        if name == "Bash":
            return self._bash(tool_input.get("command"), hook_decision)
        if name in EDIT_TOOLS:
            return self._edit(name, tool_input, read_only, hook_decision)
        if name in READ_TOOLS:
            return self._read(name, tool_input, read_only, hook_decision)
        return self._generic(name, tool_input, read_only, hook_decision)

    def _mode_step(self, hook_decision: str | None, read_only: bool, what: str) -> Verdict | None:
        """Steps after deny and ask: hook approval, bypass, plan."""
        if hook_decision == "allow" or self.mode == "bypassPermissions":
            return ALLOW
        if self.mode == "plan" and not read_only:
            return Verdict("deny", f"Permission denied: plan mode allows read-only tools only, and {what} "
                                   "can change things. Present the plan instead.")
        return None

    def _named(self, rules: list[Rule], name: str) -> Rule | None:
        return next((r for r in rules if r.specifier is None and r.covers_tool(name)), None)

    # generic tools: names, and a specifier matched against the input
    def _generic(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        r = self._first(self.deny, name, x)
        if r is not None:
            return Verdict("deny", f"Permission denied: {name} matches the deny rule {r}.")
        r = self._first(self.ask, name, x)
        if r is not None or hook == "ask":
            return Verdict("ask", f"ask rule {r}" if r else "a PreToolUse hook asked")
        if self.mode is None:
            if hook == "allow" or self._first(self.allow, name, x):
                return ALLOW
            return Verdict("ask", "no rule approves it", soft=True)
        step = self._mode_step(hook, read_only, name)
        if step is not None:
            return step
        # An MCP tool's readOnlyHint is the server's claim: it makes the tool concurrent, but
        # the tool still needs a rule to run without approval (as in Claude Code).
        if (read_only and not name.startswith("mcp__")) or self._first(self.allow, name, x):
            return ALLOW
        return Verdict("ask", "no allow rule matches it")

    def _first(self, rules: list[Rule], name: str, x: dict[str, Any]) -> Rule | None:
        for r in rules:
            if not r.covers_tool(name):
                continue
            if r.specifier is None or _generic_spec_matches(r.specifier, name, x):
                return r
        return None

    # -- paths ---------------------------------------------------------------------------------

    def resolve(self, p: str, base: str | None = None) -> tuple[str, str]:
        """(lexical absolute path, real path with every symlink followed)."""
        if p == "~" or p.startswith("~/"):
            p = self._home + p[1:]
        elif p.startswith("~"):
            p = os.path.expanduser(p)
        lexical = os.path.normpath(os.path.join(base or self._cwd, p))
        return lexical, os.path.realpath(lexical)

    def shell_cwd(self) -> str:
        """Where the next Bash command starts: Bash keeps its directory between calls."""
        cwd = (self.shell_state or {}).get("bash_cwd")
        # As the Bash tool does: a directory that is gone means the command starts in cwd.
        return str(cwd) if cwd and os.path.isdir(cwd) else self._cwd

    def inside(self, real: str) -> bool:
        return any(real == d or real.startswith(d.rstrip("/") + "/") for d in self._dirs)

    def protected(self, path: str) -> str | None:
        parts = path.split("/")
        for part in parts[:-1]:
            if part in PROTECTED_DIRS:
                return f"{part} is a protected directory"
        if parts[-1] in PROTECTED_DIRS or parts[-1] in PROTECTED_FILES:
            return f"{parts[-1]} is a protected path"
        return None

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

    def write_problem(self, p: str, base: str | None = None) -> Verdict | None:
        """Deny/ask checks every write goes through (Edit tools, redirections, fs commands).
        None: nothing blocks it (auto-approval is decided by the caller)."""
        lexical, real = self.resolve(p, base)
        r = self._path_match(self.deny, "Edit", lexical, real)
        if r is not None:
            return Verdict("deny", f"Permission denied: writing {p} matches the deny rule {r}.")
        r = self._path_match(self.deny, "Read", lexical, real)
        if r is not None:
            return Verdict("deny", f"Permission denied: {p} matches the deny rule {r} (a Read deny also "
                                   "blocks writing).")
        r = self._path_match(self.ask, "Edit", lexical, real)
        if r is not None:
            return Verdict("ask", f"ask rule {r}")
        return None

    def auto_write(self, p: str, base: str | None = None, *, by_bash: bool = False) -> str | None:
        """None if writing `p` may be approved without asking (after deny/ask/mode), else why not.
        `by_bash`: a shell redirection, which a bare `Bash` allow rule approves inside the
        working directories."""
        lexical, real = self.resolve(p, base)
        why = self.protected(lexical) or self.protected(real)
        if why:
            return f"{why} and is never written without approval"
        if os.path.dirname(real) in self._path_dirs or real in self._path_dirs:
            return (f"{p} is (in) a directory on PATH, where a file changes what a command name runs, "
                    "and is never written without approval")
        if self._path_match(self.allow, "Edit", lexical, real, real_only=True) is not None:
            return None
        if not self.inside(real):
            target = f"{p} (really {real})" if real != lexical else p
            return f"{target} is outside the working directories"
        if self._named(self.allow, "Edit") is not None or self.mode == "acceptEdits":
            return None
        if by_bash and self._named(self.allow, "Bash") is not None:
            return None
        return f"writing {p} needs approval"

    # Edit, Write, MultiEdit, NotebookEdit
    def _edit(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        r = self._named(self.deny, name)
        if r is not None:
            return Verdict("deny", f"Permission denied: {name} matches the deny rule {r}.")
        path = next((x[k] for k in PATH_KEYS if isinstance(x.get(k), str) and x[k]), None)
        if path is not None:
            v = self.write_problem(path)
            if v is not None:
                return v
        r = self._named(self.ask, name)
        if r is not None or hook == "ask":
            return Verdict("ask", f"ask rule {r}" if r else "a PreToolUse hook asked")
        if self.mode is None:
            if hook == "allow" or self._named(self.allow, name):
                return ALLOW
            if path is not None:
                lexical, real = self.resolve(path)
                if self._path_match(self.allow, "Edit", lexical, real, real_only=True):
                    return ALLOW
            return Verdict("ask", "no rule approves it", soft=True)
        step = self._mode_step(hook, read_only, name)
        if step is not None:
            return step
        if path is None:
            if self._named(self.allow, name) is not None:
                return ALLOW
            return Verdict("ask", "the call names no file")
        why = self.auto_write(path)
        if why is None:
            return ALLOW
        return Verdict("ask", why)

    # Read, Glob, Grep, LS
    def _read(self, name: str, x: dict[str, Any], read_only: bool, hook: str | None) -> Verdict:
        r = self._named(self.deny, name)
        if r is not None:
            return Verdict("deny", f"Permission denied: {name} matches the deny rule {r}.")
        path = next((x[k] for k in PATH_KEYS if isinstance(x.get(k), str) and x[k]), None)
        lexical, real = self.resolve(path or ".")
        r = self._path_match(self.deny, "Read", lexical, real)
        if r is not None:
            return Verdict("deny", f"Permission denied: reading {path or '.'} matches the deny rule {r}.")
        r = self._path_match(self.ask, "Read", lexical, real) or self._named(self.ask, name)
        if r is not None or hook == "ask":
            return Verdict("ask", f"ask rule {r}" if r else "a PreToolUse hook asked")
        if self.mode is None:
            if hook == "allow" or read_only or self._named(self.allow, name):
                return ALLOW
            return Verdict("ask", "no rule approves it", soft=True)
        step = self._mode_step(hook, read_only, name)
        if step is not None:
            return step
        path_allowed = self._path_match(self.allow, "Read", lexical, real) is not None
        if not path_allowed and not self.inside(real):  # as Claude Code: reads stay in the working dirs
            return Verdict("ask", f"reading {path} is outside the working directories")
        if read_only or path_allowed or self._named(self.allow, name):
            return ALLOW
        return Verdict("ask", "no allow rule matches it")

    # -- Bash ----------------------------------------------------------------------------------

    def _bash(self, command: Any, hook: str | None) -> Verdict:
        r = self._named(self.deny, "Bash")
        if r is not None:
            return Verdict("deny", f"Permission denied: Bash matches the deny rule {r}.")
        if not isinstance(command, str):
            command = ""
        parsed = bashparse.parse(command)
        # 1. deny: any part, any write, any read of a denied path
        for c in parsed.commands:
            r = self._bash_rule(self.deny, c)
            if r is not None:
                return Verdict("deny", f"Permission denied: `{c.text or c.original}` matches the deny rule {r}.")
        paths = self._bash_paths(parsed)
        for kind, p in paths:
            if kind == "write":
                v = self.write_problem(p, self.shell_cwd())
                if v is not None and v.kind == "deny":
                    return v
            else:
                lexical, real = self.resolve(p, self.shell_cwd())
                r = self._path_match(self.deny, "Read", lexical, real)
                if r is not None:
                    return Verdict("deny", f"Permission denied: reading {p} matches the deny rule {r}.")
        # 2. ask
        r = self._named(self.ask, "Bash")
        if r is None:
            r = next((rr for c in parsed.commands if (rr := self._bash_rule(self.ask, c)) is not None), None)
        if r is not None or hook == "ask":
            return Verdict("ask", f"ask rule {r}" if r else "a PreToolUse hook asked")
        for kind, p in paths:
            if kind == "write":
                v = self.write_problem(p, self.shell_cwd())
                if v is not None:
                    return v
        if self.sandbox_auto_allow is not None and self.mode != "plan" and self.sandbox_auto_allow(command):
            return ALLOW
        # 3. mode
        if self.mode is None:
            if hook == "allow" or (parsed.ok and self._named(self.allow, "Bash")):
                return ALLOW
            if parsed.ok and all(not c.opaque and self._bash_rule(self.allow, c, allow=True) for c in parsed.commands
                                 if c.argv):
                return ALLOW
            return Verdict("ask", "no rule approves it", soft=True)
        if hook == "allow" or self.mode == "bypassPermissions":
            return ALLOW
        if not parsed.ok:
            if self.mode == "plan":
                return Verdict("deny", f"Permission denied: plan mode runs read-only commands only, and this "
                                       f"command could not be checked: {parsed.error}.")
            return Verdict("ask", f"{parsed.error}; only commands that can be checked run without approval",
                           subject=next((c.name for c in parsed.commands if c.name), None))
        for kind, p in paths:  # reads outside the working directories need approval, as for Read
            if kind == "read":
                lexical, real = self.resolve(p, self.shell_cwd())
                if not self.inside(real) and self._path_match(self.allow, "Read", lexical, real) is None:
                    return Verdict("ask", f"it reads {p}, outside the working directories")
        if self.mode == "plan":
            for c in parsed.commands:
                why = c.opaque or (read_only_problem(c) if c.argv else None) or self._env_problem(c)
                if why is None and c.name == "git":
                    why = self._git_repo_problem(c, parsed)
                if why is None and any(rd.writes and not _harmless(rd) for rd in c.redirects):
                    why = "it redirects output into a file"
                if why:
                    return Verdict("deny", f"Permission denied: plan mode runs read-only commands only, and "
                                           f"`{c.text or c.original}`: {why}.")
            return ALLOW
        # 4. allow: every part, every write
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
        label = f"`{c.text or c.original}`"
        if c.opaque:
            return f"{label}: {c.opaque}"
        env = self._env_problem(c)
        if env:
            return f"{label}: {env}"
        for rd in c.redirects:
            if rd.writes and not _harmless(rd):
                why = self._write_target_problem(rd.target, parsed)
                if why:
                    return f"{label} writes to {rd.target.text if rd.target else '?'}: {why}"
        if not c.argv:
            return None  # only assignments or redirections
        if c.name is None:
            return f"{label}: its command name is computed at run time"
        if self._named(self.allow, "Bash") or self._bash_rule(self.allow, c, allow=True):
            return None
        ro = read_only_problem(c)
        if ro is None and c.name == "git":
            ro = self._git_repo_problem(c, parsed)
            if ro is not None:
                return f"{label}: {ro}"
        if ro is None:
            if any(r.tool in READ_TOOLS and r.specifier for r in self.deny) and not all(
                    w.literal and not w.pattern for w in c.args):  # `cat sec*/key` is secrets/key
                return f"{label}: its arguments are computed at run time (expansions, globs) and Read deny rules exist"
            return None
        if self.mode == "acceptEdits" and c.name in FS_COMMANDS:
            why = self._fs_problem(c, parsed)
            if why is None:
                return None
            return f"{label}: {why}"
        return f"{label}: no allow rule matches it"

    def _git_repo_problem(self, c: bashparse.SimpleCommand, parsed: bashparse.ParsedCommand) -> str | None:
        """Why a read-only git command still needs approval, or None.

        git obeys the config of the repository it finds, and a config can run programs
        (core.fsmonitor on `git status`, diff.external, ...). The project's own `.git` is
        protected from writes, but a directory that merely looks like a bare repository
        (HEAD, objects/, refs/) is one too: planted by an earlier edit, by this very command,
        or shipped in a cloned project. So git is auto-approved only where the repository it
        will find is known now and is not such a directory (the bare repository attack)."""
        starts = [self.shell_cwd()]
        if parsed.changes_directory:
            for cd in (x for x in parsed.commands if x.name in ("cd", "pushd", "popd")):
                targets = [w for w in cd.args if not w.value.startswith("-")]
                if cd.name == "popd" or len(targets) != 1 or not targets[0].literal or targets[0].pattern:
                    return "it runs after a directory change that cannot be followed, maybe into a planted repository"
                t = os.path.expanduser(targets[0].value) if targets[0].tilde else word_path(targets[0])
                starts += [os.path.join(d, t) for d in starts]
        args = c.args
        i = 0
        while i < len(args) and args[i].value.startswith("-"):
            v = args[i].value
            if v in ("--git-dir", "--work-tree", "--bare") or v.startswith(("--git-dir=", "--work-tree=")):
                return "it names its repository (--git-dir/--work-tree/--bare), whose config can run programs"
            if v == "-C":
                if i + 1 >= len(args) or not args[i + 1].literal or args[i + 1].pattern:
                    return "its -C directory is computed at run time"
                w = args[i + 1]
                t = os.path.expanduser(w.value) if w.tilde else word_path(w)
                starts = [os.path.join(d, t) for d in starts]
            i += 2 if v in ("-C", "--namespace") else 1
        others = [x for x in parsed.commands if x is not c]
        if any(any(rd.writes and not _harmless(rd) for rd in x.redirects) for x in parsed.commands) or any(
                x.argv and (x.name is None or read_only_problem(x) is not None) for x in others):
            return "other parts of the command can create files, maybe a repository whose config git would obey"
        for d in starts:
            bare = _bare_repository_at_or_above(os.path.normpath(os.path.join(self._cwd, d)))
            if bare is not None:
                return (f"{bare} looks like a bare git repository; git would obey its config, which can "
                        "run programs (bare repository attack)")
        return None

    def _write_target_problem(self, target: bashparse.Word | None, parsed: bashparse.ParsedCommand) -> str | None:
        if target is None or not target.literal or target.pattern:
            return "the target is computed at run time"
        p = word_path(target)
        if parsed.changes_directory and not (p.startswith("/") or target.tilde):
            return "the command changes directory first, so the target cannot be known"
        return self.auto_write(p, self.shell_cwd(), by_bash=True)

    def _fs_problem(self, c: bashparse.SimpleCommand, parsed: bashparse.ParsedCommand) -> str | None:
        allowed = FS_COMMANDS[c.name or ""]
        targets: list[bashparse.Word] = []
        options_done = False
        for w in c.args:
            v = w.value
            if not options_done and v == "--":
                options_done = True
                continue
            if not options_done and v.startswith("--"):
                if v not in allowed:
                    return f"option {v} is not known to be safe"
                continue
            if not options_done and v.startswith("-") and len(v) > 1:
                if any(ch not in allowed for ch in v[1:]):
                    return f"option {v} is not known to be safe"
                continue
            targets.append(w)
        if not targets:
            return "no paths"
        for w in targets:
            why = self._write_target_problem(w, parsed)
            if why:
                return f"{w.value}: {why}"
        return None

    def _bash_paths(self, parsed: bashparse.ParsedCommand) -> list[tuple[str, str]]:
        """Literal paths the command writes (redirections, fs commands) or reads (arguments of
        commands that read files, input redirections), for deny rules."""
        out: list[tuple[str, str]] = []
        for c in parsed.commands:
            for rd in c.redirects:
                if rd.target is not None and rd.target.literal and not rd.target.pattern and not _harmless(rd):
                    if rd.writes:
                        out.append(("write", word_path(rd.target)))
                    elif rd.reads:
                        out.append(("read", word_path(rd.target)))
            name = c.name
            if name is None:
                continue
            kind = "write" if name in WRITING_COMMANDS else "read" if name in READING_COMMANDS else None
            if kind is None:
                continue
            for w in c.args:
                if w.literal and not w.pattern and not w.value.startswith("-"):
                    v = w.value.split("=", 1)[1] if name == "dd" and "=" in w.value else w.value
                    out.append((kind, word_path(bashparse.Word(v, v, True, w.tilde))))
        return out


# Commands whose plain arguments are paths they write or read (for deny rules on paths).
WRITING_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp", "rm", "rmdir", "tee", "ln", "chmod", "chown",
                              "truncate", "dd", "install", "rsync", "unlink", "shred"})
READING_COMMANDS = (READ_ONLY_COMMANDS - {"echo", "printf", "cd", "pushd", "popd", "test", "[", "true", "false",
                                          "sleep", "seq", "date", "id", "whoami", "uname", "type", "which",
                                          "command", "env", "printenv", "git", "ps", "pgrep", "whereis"}
                    ) | {"less", "more", "base64", "xxd", "tar", "zip", "gzip", "bzip2", "sed", "awk", "scp",
                         "source", "."}


def _bare_repository_at_or_above(start: str) -> str | None:
    """The directory git would take as a bare repository when run in `start` (found before
    any `.git`, as git's own discovery does), or None."""
    d = os.path.realpath(start)
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return None
        if all(os.path.exists(os.path.join(d, x)) for x in ("HEAD", "objects", "refs")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def word_path(w: bashparse.Word) -> str:
    """The path a literal shell word names: a quoted `~` is a directory called `~`."""
    if w.value.startswith("~") and not w.tilde:
        return "./" + w.value
    return w.value


def _harmless(rd: bashparse.Redirect) -> bool:
    return rd.target is not None and rd.target.literal and (
        rd.target.value in bashparse.HARMLESS_TARGETS or rd.target.value.startswith("/dev/fd/"))


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
    for key in ("command", "file_path", "notebook_path", "path", "url", "pattern"):
        v = tool_input.get(key) if isinstance(tool_input, dict) else None
        if isinstance(v, str) and v:
            v = " ".join(v.split())
            return f"{name}({v[:117] + '...' if len(v) > 120 else v})"
    return name


GateFunction: TypeAlias = Callable[[str, dict[str, Any], bool], Awaitable[Decision]]
