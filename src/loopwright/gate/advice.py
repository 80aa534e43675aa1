"""Room: bases (the gate). Owns refusal advice: how to allow a call next time, worded for the caller's surface; may import bashcheck, bashparse and the gate's lower modules.

A refusal says what would allow the call: an allow rule (`Bash(git commit:*)`, `Edit(./src/**)`,
`WebFetch(domain:...)`, as "don't ask again" offers them), a mode or another directory, named
as the CLI's flags and settings files or as the Python API's AgentOptions fields.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from .judge import Judge
from .rules import EDIT_TOOLS, PATH_KEYS, READ_TOOLS, skill_name
from .verdict import Verdict

if TYPE_CHECKING:
    from .shell import bashparse


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



def hint(g: Judge, name: str, tool_input: dict[str, Any], v: Verdict | None = None) -> str:
    """How to allow a call like this one next time."""
    code = v.code if v is not None else "not_approved"
    w = WORDING[g.advice]
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
        rules = suggest_rules(g, name, tool_input)
        cmd = tool_input.get("command")
        first = v.subject if v is not None and v.subject else (
            cmd.split()[0] if isinstance(cmd, str) and cmd.split() else "")
        fallback = rules[0] if rules else f"Bash({first}:*)" if first else "Bash"
        rule = next((r for r in rules if first and r.startswith(f"Bash({first}")), fallback)
        return (f"To allow it, add a rule such as {w.rule(rule)}{w.in_settings_allow}, "
                f"or run with {w.mode('bypassPermissions')}.")
    if name in ("WebFetch", "Skill") and (rules := suggest_rules(g, name, tool_input)):
        return f"To allow it, add a rule such as {w.rule(rules[0])}{w.in_settings_allow}."
    if name in EDIT_TOOLS:
        return (f"To allow it, use {w.mode('acceptEdits')} (edits inside the working directories), "
                f"add a rule such as {w.rule('Edit(./src/**)')}, or {w.add_dir} for another directory.")
    return f"To allow it, add {w.bare_rule(name)}{w.in_settings_allow}."


def suggest_rules(g: Judge, name: str, tool_input: dict[str, Any]) -> list[str]:
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
        lexical, _ = g.resolve(path)
        folder = lexical if name in ("Glob", "Grep") and os.path.isdir(lexical) else os.path.dirname(lexical)
        root = g.ws.root.rstrip("/")
        if folder == root:
            return [f"{kind}(./**)"]
        if folder.startswith(root + "/"):
            return [f"{kind}(./{folder[len(root) + 1:]}/**)"]
        return [f"{kind}(/{folder.rstrip('/')}/**)"]  # //abs: an absolute path
    if name == "WebFetch" and isinstance(tool_input.get("url"), str):
        from urllib.parse import urlparse

        host = urlparse(tool_input["url"]).hostname
        return [f"WebFetch(domain:{host})"] if host else []
    if name == "Skill" and skill_name(tool_input):
        return [f"Skill({skill_name(tool_input)})"]  # (Claude Code's suggestion: that skill, not every one)
    return [name]


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
# (patterns as strings: compiled at first use, by re's cache, not at every start)
_INTERPRETER = r"^(python[0-9.]*|pypy[0-9.]*|node|ruby|perl|php|Rscript|lua|tsx|ts-node)$"
# A prefix rule for these (and for the shells, bashparse.SHELLS) would approve any command at all.
_NO_PREFIX = {"sudo", "doas", "su", "env", "xargs", "eval", "exec", "command", "builtin",
                                 "nohup", "time", "timeout", "nice", "ionice", "setsid", "stdbuf", "watch",
                                 "source", ".", "ssh", "find", "parallel", "script", "unbuffer", "chroot"}
_PLAIN_WORD = r"^[A-Za-z0-9_@%+=,./:-]+$"


def command_prefix(c: bashparse.SimpleCommand) -> str | None:
    """The prefix a `Bash(prefix:*)` rule for this command names, or None (none is safe)."""
    from .shell import bashparse

    if (c.name is None or c.opaque or not re.match(_PLAIN_WORD, c.name) or c.name in _NO_PREFIX
            or c.name in bashparse.SHELLS or c.unsafe_env):
        return None
    words = [c.name]
    args = [w.value if w.literal and not w.pattern and re.match(_PLAIN_WORD, w.value) else None for w in c.args]
    if re.match(_INTERPRETER, c.name.rsplit("/", 1)[-1]):
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
    from .shell import bashcheck, bashparse

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


def describe(name: str, tool_input: dict[str, Any]) -> str:
    """`Bash(ls -la)`, `Write(src/a.py)` or `Name`: the call, short."""
    for key in ("command", "file_path", "notebook_path", "path", "url", "pattern", "query", "skill"):
        v = tool_input.get(key) if isinstance(tool_input, dict) else None
        if isinstance(v, str) and v:
            v = " ".join(v.split())
            return f"{name}({v[:117] + '...' if len(v) > 120 else v})"
    return name
