"""Room: bases (the gate). Owns the rule syntax and matching (tools, Bash commands, paths); may import gate.verdict and ignore.

A rule is `Tool` or `Tool(specifier)`, as in Claude Code: a Bash specifier matches a command
(`npm run test:*`, `git diff *`), a path specifier a file with gitignore matching and Claude
Code's anchors, any other specifier a value of the call's input (`WebFetch(domain:...)`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from .verdict import RuleSource

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
# ("auto": the rules as in default, and a classifier instead of the question: gate/auto.py)
PERMISSION_MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
# Read-only, but what they send leaves the machine (a URL or a query can carry data out): they
# run side by side like read-only tools, and need a rule or approval like tools that act.
NETWORK_TOOLS = frozenset({"WebFetch", "WebSearch"})
PATH_KEYS = ("file_path", "notebook_path", "path")
# Claude Code's own tool names: a rule naming one in another case (`bash`, `WEBFETCH`) is refused
# as Claude Code refuses it; any other lowercase name may be a program's own tool (`@lw.tool def
# noop`), which Claude Code cannot have and loopwright must accept.
_CLAUDE_TOOLS = {t.lower(): t for t in (*EDIT_TOOLS, *READ_TOOLS, *NETWORK_TOOLS, "Bash", "BashOutput", "KillShell",
                                         "Agent", "Task", "TodoWrite", "TaskCreate", "TaskGet", "TaskList",
                                         "TaskUpdate", "Skill", "SlashCommand", "ExitPlanMode", "AskUserQuestion")}
CLAUDE_TOOL_NAMES = frozenset(_CLAUDE_TOOLS.values())  # (a rule naming one is not a typo, whatever loopwright has)


def mistyped_tool(tool: str) -> str | None:
    """Why a rule's tool looks like a typo of one of Claude Code's tools (`Bsh`, `Wirte`), else None:
    for rules of a settings file, which cannot know the run's tools. A name like none of them may be
    a program's own tool or an MCP one: not judged."""
    return _no_tool(tool, CLAUDE_TOOL_NAMES, typo_only=True)


def rules_naming_no_tool(label: str, rules: Iterable[str], names: set[str]) -> list[str]:
    """One line per rule of `label` (a flag, an option) whose tool is neither one of `names` (the
    run's) nor one of Claude Code's, with the tool it looks like: a typo (`Bsh(git:*)`) would match
    nothing, without a word (Claude Code says none). MCP tools (`mcp__...`), known once their
    servers answer, and wildcard names are not judged."""
    said = []
    for rule in rules:
        why = _no_tool(rule.partition("(")[0].strip(), names, typo_only=False)
        if why is not None:
            said.append(f"{label} {rule}: {why}; the rule matches nothing")
    return said


def _no_tool(tool: str, names: set[str] | frozenset[str], typo_only: bool) -> str | None:
    if not tool or tool in names or tool in CLAUDE_TOOL_NAMES or tool.startswith("mcp__") or "*" in tool:
        return None
    import difflib  # (only on a mistake's way)

    close = difflib.get_close_matches(tool, sorted(names | CLAUDE_TOOL_NAMES), n=1, cutoff=0.7)
    if close:
        return f"no tool is named {tool} (did you mean {close[0]}?)"
    return None if typo_only else f"no tool is named {tool}"


_RULE = r"^\s*([A-Za-z0-9_*-]+)\s*(?:\((.*)\))?\s*$"  # re.S; compiled at first use, by re's cache


@dataclass(frozen=True, slots=True)
class Rule:
    """`Tool` or `Tool(specifier)`. `base` anchors `/path` specifiers: the project directory
    of the settings file the rule came from (None: the run's working directory)."""

    tool: str
    specifier: str | None = None
    base: str | None = None
    source: RuleSource = "cli"  # where it came from (gate.verdict.RuleSource)

    @classmethod
    def parse(cls, text: str, base: str | Path | None = None, source: RuleSource = "cli",
              kind: str | None = None) -> Rule:
        """`text` as a rule; raises ValueError (naming it) for one Claude Code refuses. `kind`
        "allow": an allow rule, which may not have a wildcard tool name (Claude Code's check)."""
        if not isinstance(text, str):
            raise ValueError(f"a permission rule must be a string, not {type(text).__name__}")
        m = re.match(_RULE, text, re.S)
        if m is None:
            raise ValueError(f"malformed permission rule {text!r}: use Tool or Tool(specifier)")
        _check_tool(m.group(1), m.group(2), text, kind)
        spec = m.group(2)
        if spec is not None:
            spec = spec.strip()
            if spec == "*":
                spec = None  # Bash(*) means every Bash call
        rule = cls(m.group(1), spec, str(base) if base is not None else None, source)
        if spec is not None:
            _check_specifier(rule.tool, spec, text)
        if spec is not None and (rule.tool in EDIT_TOOLS or rule.tool in READ_TOOLS):
            try:
                _gitignore(anchor(spec)[1])
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
        return "*" in t and Glob.of(t).fullmatch(name)  # no backslash in a rule's tool: `*` is a wildcard


def parse_rules(items: Iterable[str | Rule], source: RuleSource, kind: str | None = None) -> list[Rule]:
    return [r if isinstance(r, Rule) else Rule.parse(r, source=source, kind=kind) for r in items]


def _check_tool(tool: str, spec: str | None, text: str, kind: str | None) -> None:
    """Claude Code 2.1.332's checks of a rule's tool (its messages, in loopwright's one line):
    empty parentheses, one of its tool names misspelt in case, a wildcard tool name in an allow rule."""
    why = None
    if spec is not None and not spec.strip():
        why = f'empty parentheses: either specify a pattern or use just "{tool}" without parentheses'
    elif _CLAUDE_TOOLS.get(tool.lower(), tool) != tool:
        why = f'tool names must start with uppercase: use "{_CLAUDE_TOOLS[tool.lower()]}"'
    elif kind == "allow" and "*" in tool and not _mcp_tool_glob(tool):
        why = (f'wildcard tool name "{tool}" is not supported in allow rules: an allow rule must name the scope it '
               "widens (a glob only in the tool position after a literal mcp__<server>__ prefix, e.g. "
               "mcp__github__get_*); deny and ask rules accept wildcards anywhere")
    if why is not None:
        raise ValueError(f"invalid permission rule {text!r}: {why}")


def _mcp_tool_glob(tool: str) -> bool:
    """`mcp__<server>__<glob>` with a literal server name: the one wildcard an allow rule may have."""
    server, sep, _ = tool[len("mcp__"):].partition("__") if tool.startswith("mcp__") else ("", "", "")
    return bool(sep) and bool(server) and "*" not in server


@dataclass(frozen=True, slots=True)
class Glob:
    """A `*` pattern (`\\*`: a literal star) as its literal runs, matched left to right without
    backtracking: a regex of many `.*` takes exponential time on a text it does not match, and a
    rule planted in a project's settings must not hang the gate. `or_more`: one literal that also
    matches when followed by a space and anything (`git diff:*`, `ls *`)."""

    parts: tuple[str, ...]
    or_more: bool = False

    @classmethod
    def of(cls, pattern: str) -> Glob:
        parts: list[str] = []
        run: list[str] = []
        i = 0
        while i < len(pattern):
            if pattern.startswith("\\*", i):
                run.append("*")
                i += 2
                continue
            if pattern[i] == "*":
                parts.append("".join(run))
                run = []
            else:
                run.append(pattern[i])
            i += 1
        return cls((*parts, "".join(run)))

    def fullmatch(self, s: str) -> bool:
        first, last = self.parts[0], self.parts[-1]
        if self.or_more:
            return s == first or s.startswith(first + " ")
        if len(self.parts) == 1:
            return s == first
        if len(s) < len(first) + len(last) or not s.startswith(first) or not s.endswith(last):
            return False
        pos, end = len(first), len(s) - len(last)
        for lit in self.parts[1:-1]:  # the leftmost place of each run leaves the most room for the rest
            found = s.find(lit, pos, end)
            if found < 0:
                return False
            pos = found + len(lit)
        return True


@lru_cache(maxsize=1024)
def command_pattern(spec: str) -> Glob:
    """A Bash specifier as a pattern over one (whitespace-normalized) command.

    `npm run test:*` is the legacy prefix form: `npm run test` alone or followed by a space.
    Otherwise `*` matches anything, anywhere; a pattern ending in ` *` with no other
    wildcard also matches the bare command (`ls *` matches `ls` and `ls -la`, not `lsof`)."""
    spec = " ".join(spec.split())
    if spec.endswith(":*") and "*" not in spec[:-2]:
        return Glob((spec[:-2],), or_more=True)
    stars = spec.count("*") - spec.count("\\*")
    if spec.endswith(" *") and stars == 1:
        return Glob((Glob.of(spec[:-2]).parts[0],), or_more=True)
    return Glob.of(spec)


def command_matches(spec: str, command: str) -> bool:
    return command_pattern(spec).fullmatch(" ".join(command.split()))


def _gitignore(pattern: str) -> Any:
    from ..ignore import path_spec  # the one matcher of Grep, Glob and the gate

    return path_spec(pattern)


def anchor(spec: str) -> tuple[str, str]:
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
    kind, pattern = anchor(spec)
    root = {"/": "/", "~": home, "base": base or cwd}.get(kind, cwd)
    rel = os.path.relpath(path, root)
    if rel == ".":
        rel = ""
    if rel.startswith(".."):
        return False
    rule = _gitignore(pattern)  # a path inside a matched directory is matched too (as git ignores it)
    return rule is not None and rule.covers(rel)


def _check_specifier(tool: str, spec: str, text: str) -> None:
    """Claude Code's checks of a rule's specifier (its messages): a rule it refuses is refused here."""
    why = None
    if tool.startswith("mcp__"):
        why = "MCP rules take no pattern in parentheses: use mcp__server, mcp__server__tool or mcp__server__*"
    elif tool == "WebFetch" and ("://" in spec or spec.startswith("http")):
        why = 'WebFetch rules name a domain, not a URL: use WebFetch(domain:example.com)'
    elif tool == "WebFetch" and not spec.startswith("domain:"):
        why = 'WebFetch rules need the "domain:" prefix: WebFetch(domain:example.com)'
    elif tool == "WebSearch" and ("*" in spec or "?" in spec):
        why = "WebSearch rules take no wildcards: use exact search terms"
    elif tool == "Bash" and spec.strip() == ":*":
        why = "the prefix before :* is empty: Bash(npm *) or Bash(git:*)"
    elif (tool in EDIT_TOOLS or tool in READ_TOOLS) and ":*" in spec:
        why = 'the ":*" form is for Bash prefix rules: use a glob like Read(src/**)'
    if why is not None:
        raise ValueError(f"invalid permission rule {text!r}: {why}")


_PARAM = r"([A-Za-z_][A-Za-z0-9_]*):(.*)"  # Tool(param:value), re.S


def skill_name(x: dict[str, Any]) -> str:
    """The skill a Skill call names, as the Skill tool finds it (`/x` and ` x ` are x): the one
    spelling its rules are matched against."""
    return str(x.get("skill", "")).strip().lstrip("/")


def input_matches(spec: str, name: str, x: dict[str, Any]) -> bool:
    """A specifier of a tool that is neither Bash nor a file tool: `param:value` (Claude Code's
    parameter rule: the call's `param`, as text, matches the `*` pattern `value`, e.g.
    `Agent(model:opus)`), `WebFetch(domain:host)`, or a pattern any of the call's text values match.
    `Skill(name)` / `Skill(plugin:*)` is about the skill's name only (skill_name), as in Claude Code:
    matched against any text value, `Skill(/x)` missed {"skill": "/x"} (a deny rule passed over) and
    `Skill(safe)` approved {"skill": "x", "args": "safe"}."""
    if name == "Skill":
        skill, want = skill_name(x), spec.strip().lstrip("/")
        if want.endswith(":*"):
            return skill.startswith(want[:-2])
        return skill == want or "*" in want and Glob.of(want).fullmatch(skill)
    m = re.fullmatch(_PARAM, spec, re.S)
    if m is not None and not (name == "WebFetch" and m.group(1) == "domain"):
        if m.group(1) not in x:  # a call without the parameter: the rule is not about it
            return False
        value = x[m.group(1)]
        text = value if isinstance(value, str) else json.dumps(value)
        return Glob.of(m.group(2).strip()).fullmatch(text.strip())
    if name == "WebFetch" and spec.startswith("domain:"):
        from urllib.parse import urlparse

        host = urlparse(str(x.get("url", ""))).hostname or ""
        want = spec[len("domain:"):]
        return host == want or Glob.of(want).fullmatch(host)
    values = [v for v in x.values() if isinstance(v, str)]
    glob = Glob.of(spec)
    return any(glob.fullmatch(v) for v in values)
