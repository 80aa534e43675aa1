"""Room: skills and memory. Owns skills and the Skill tool; may import memory, the gate, tools.base and below.

Skills (the Agent Skills format) and the `Skill` tool: progressive disclosure, as Claude Code.

Owns: finding skill folders (`<name>/SKILL.md` with front matter `name`, `description`, optional
`allowed-tools`) under `.loopwright/skills/` and `.claude/skills/` of the project and
`~/.loopwright/skills/` and `~/.claude/skills/` of the user, and the tool that loads one. Only each skill's name and
description reach the model up front (in the Skill tool's description, built once: byte-stable,
so caching keeps working); the body, and the skill's other files on demand through Read, only
when the model calls `Skill`. Also the small front-matter reader the custom commands share.
Imports tools.base (and the gate, to check allowed-tools rules) only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .configdirs import config_dirs, is_users
from .gate.rules import skill_name
from .tools.base import Tool, ToolContext, ToolError
from .trust import Ignored

NAME = r"^[a-z0-9][a-z0-9-]{0,63}$"  # (compiled at first use, by re's cache)
MAX_DESCRIPTION = 1024
# Claude Code's "skillOverrides" values (settings.py reads them), from least to most hidden: listed;
# listed to the model without its description; not offered to the model (`/name` still runs it);
# hidden from both (`/name` is refused: loop/prompt.py; not in the lists of commands).
OVERRIDES = ("on", "name-only", "user-invocable-only", "off")
NOT_FOR_MODEL = ("user-invocable-only", "off")


def split_front_matter(text: str) -> tuple[dict[str, Any] | None, str]:
    """`---` front matter (simple YAML: `key: value`, quoted values, `[a, b]` and `- item` lists)
    and the body. None when the text has no front matter."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None, text
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return None, text
    meta: dict[str, Any] = {}
    key: str | None = None
    for ln in lines[1:end]:
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        item = re.match(r"^\s+-\s+(.*)$", ln)
        if item and key is not None:
            prev = meta.get(key)
            meta[key] = [*(prev if isinstance(prev, list) else []), _scalar(item.group(1))]
            continue
        m = re.match(r"^([A-Za-z0-9_-]+)\s*:\s*(.*)$", ln)
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key] = [_scalar(v) for v in value[1:-1].split(",") if v.strip()]
        else:
            meta[key] = _scalar(value) if value else []
    return meta, "".join(text.splitlines(keepends=True)[end + 1:]).lstrip("\n")


def _scalar(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v


def argument_hint(meta: dict[str, Any]) -> str:
    """The front matter's `argument-hint` as written: `[file] [mode]` is text, not a list (the
    reader takes `[...]` for one: its brackets come back)."""
    v = meta.get("argument-hint")
    return f"[{', '.join(map(str, v))}]" if isinstance(v, list) and v else str(v) if isinstance(v, str) else ""


def as_list(v: Any) -> list[str]:
    """`allowed-tools` as written: a list, or one string of comma/space separated names."""
    if isinstance(v, list):
        return [str(x) for x in v if str(x).strip()]
    if isinstance(v, str):  # "Read, Grep, Bash(git diff:*)": a rule's parentheses stay whole
        return re.findall(r"[^\s,(]+(?:\([^)]*\))?", v)
    return []


def inert(args: str) -> str:
    """Arguments as they go into a command's or skill's text, as Claude Code 2.1.332 puts them (seen on
    the same prompts): a `!` beside a backtick is spaced from it and one at a word's start is
    escaped (`\\!`), so no inline shell (`` !`cmd` ``, ```` ```! ```` blocks) is in them when the text's own
    runs. The arguments are what was typed, or what a program passed on (`-p "/review $TITLE"`
    in CI): before, their `` !`curl ... | sh` `` ran, under the command's allowed-tools."""
    return re.sub(r"(^|\s)!", r"\1\\!", args.replace("`!", "` !").replace("!`", "! `"))


def place_arguments(body: str, args: str) -> str:
    """A command's or skill's text with its arguments placed as Claude Code 2.1.332 places them:
    `$ARGUMENTS` is the whole string, `$1`…`$9` its words (shell-quoted words kept whole), each
    made inert; arguments the text has no place for follow it after "ARGUMENTS:"."""
    try:
        import shlex  # (a command given arguments: start-up)

        words = [inert(w) for w in shlex.split(args)]
    except ValueError:  # an unbalanced quote: plain words
        words = [inert(w) for w in args.split()]
    placed_args = inert(args)
    text = body.replace("$ARGUMENTS", placed_args)
    text = re.sub(r"\$([1-9])", lambda g: words[int(g.group(1)) - 1] if int(g.group(1)) <= len(words) else "", text)
    if args and not ("$ARGUMENTS" in body or re.search(r"\$[1-9]", body)):
        text = f"{text.strip()}\n\n\nARGUMENTS: {placed_args}"
    return text.strip()


@dataclass
class Skill:
    """One skill folder: its SKILL.md, name, description and allowed tools."""

    name: str
    description: str
    path: Path  # its SKILL.md
    allowed_tools: list[str] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)  # its allowed-tools, in an untrusted workspace
    source: str = "projectSettings"  # Claude Code's command_source: userSettings | projectSettings | plugin
    user_invocable: bool = True  # `user-invocable: false`: not listed as a command the user may type
    model_invocable: bool = True  # `disable-model-invocation: true`: not offered to the model (the Skill tool)
    argument_hint: str = ""  # `argument-hint`, shown beside its name in a list of commands
    command: bool = False  # a custom command (commands.py) the Skill tool offers too: no folder of its own
    note: str = ""  # a line the Skill tool's result adds (what of a command's front matter it does not apply)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def body(self) -> str:
        text = read_text_capped(self.path)
        if not isinstance(text, tuple):
            raise OSError(text)
        return split_front_matter(text[0])[1]


@dataclass(slots=True)  # (not frozen: never changed nor hashed)
class PreloadedSkill:
    """A skill an agent's `skills` preloads (agentfiles.py; AgentDefinition.preloaded): its block
    of the subagent's first message (`text`, its inline shell not yet run: that runs in the
    subagent, agents.py) and what that needs."""

    text: str
    name: str
    source: str  # Claude Code's command_source (projectSettings | userSettings | plugin)
    allowed_tools: tuple[str, ...] = ()  # granted in the subagent (none from an untrusted workspace)


def read_text_capped(path: Path) -> tuple[str] | str:
    """(the text,) of a skill's or command's Markdown file, or why it is not read: a FIFO, a
    device or a file over the memory cap is never read (a repository's file must not hang or
    flood the run)."""
    from .memory import read_capped

    data = read_capped(path.resolve())
    return (data.decode("utf-8", "replace"),) if isinstance(data, bytes) else data.replace("memory file", "skill or command")


def find_skills(cwd: str | Path, sources: Iterable[str], home: Path | None = None,
                trusted: bool | None = None, extra: Iterable[Path] = ()) -> tuple[list[Skill], list[str]]:
    """The skills of these setting sources (the first of a name wins: the user's before the
    project's), and a warning for each SKILL.md that cannot be used, naming the file and the
    field. `trusted` (None: the trust store's word for cwd): untrusted, a project skill's
    allowed-tools are ignored (Skill.ignored). `extra`: more folders of skills (plugins': the
    user installed them, so they count as the user's), after the setting sources'."""
    from .trust import narrow_tools, trusted_for

    cwd = Path(cwd).resolve()
    trusted = trusted_for(None, cwd) if trusted is None else trusted
    skills: dict[str, Skill] = {}
    warnings: list[str] = []
    extra = list(extra)
    for d in [*config_dirs(cwd, sources, "skills", home), *extra]:
        if not d.is_dir():
            continue
        users = is_users(d, "skills", home) or d in extra
        for md in sorted(d.glob("*/SKILL.md")):
            text = read_text_capped(md)
            if not isinstance(text, tuple):
                warnings.append(f"{md}: {text}; skill skipped")
                continue
            meta, _ = split_front_matter(text[0])
            if meta is None:
                warnings.append(f"{md}: no front matter (--- name: ... description: ... ---); skill skipped")
                continue
            name = str(meta.get("name") or md.parent.name)
            desc = meta.get("description")
            if not re.match(NAME, name):
                warnings.append(f"{md}: name {name!r} must be lowercase letters, digits and hyphens; skill skipped")
            elif not isinstance(desc, str) or not desc.strip():
                warnings.append(f"{md}: the front matter has no description; skill skipped")
            elif name in skills:
                if not users and is_users(skills[name].folder.parent, "skills", home):
                    warnings.append(Ignored("name", str(md), f"skill {name!r}",
                                            f"the user's own skill {name!r} ({skills[name].path}) keeps the name").line())
            else:
                allowed = as_list(meta.get("allowed-tools"))
                ignored = narrow_tools(allowed, str(md), f"skill {name!r}") if not (users or trusted) else []
                source = "plugin" if d in extra else "userSettings" if users else "projectSettings"
                skills[name] = Skill(name, desc.strip()[:MAX_DESCRIPTION], md, [] if ignored else allowed, ignored,
                                     source, str(meta.get("user-invocable")).lower() != "false",
                                     str(meta.get("disable-model-invocation")).lower() != "true", argument_hint(meta))
    return list(skills.values()), warnings


def valid_rules(items: list[str]) -> tuple[list[str], list[str]]:
    """(the entries that are permission rules, the ones that are not)."""
    from .gate import Rule

    good: list[str] = []
    bad: list[str] = []
    for item in items:
        try:
            Rule.parse(item)
            good.append(item)
        except ValueError:
            bad.append(item)
    return good, bad


def unmatched_overrides(overrides: Mapping[str, str], names: list[str]) -> list[str]:
    """A line for each skillOverrides entry that names a plugin's skill or command (or a command in
    a subfolder) by its bare name: it changes nothing (those are `plugin:name`, as typed; a bare
    name is the user's or the project's own), so it is said rather than silently passed over."""
    out = []
    for key in overrides:
        if key not in names and (full := [n for n in names if n.partition(":")[2] == key]):
            out.append(f"skillOverrides names {key!r}, which no skill or command is (did you mean "
                       f"{' or '.join(repr(n) for n in full)}?); it changes nothing")
    return out


def make_skill_tool(skills: list[Skill], overrides: Mapping[str, str] | None = None) -> Tool:
    """`Skill{skill, args}`: loads a skill's instructions, `args` placed in them as a typed
    `/name args` places them. Read-only (it only reads its SKILL.md). The custom commands come
    after the skills (`command`: as Claude Code 2.1.332 lists and loads them too). A skill
    with `disable-model-invocation: true`, or `user-invocable-only` / `off` in the settings'
    skillOverrides, is not listed, and a call of it is refused with Claude Code 2.1.332's words
    (the user may still type `/name`, unless it is `off`); a `name-only` one is listed without
    its description."""
    over = overrides or {}
    by_name: dict[str, Skill] = {}
    for sk in skills:  # (a skill before a command of its name, as a typed `/name` finds it)
        by_name.setdefault(sk.name, sk)
    offered = [n for n, s in by_name.items() if s.model_invocable and over.get(n) not in NOT_FOR_MODEL]
    listing = "\n".join(f"- {n}" if over.get(n) == "name-only" else f"- {n}: {by_name[n].description}" for n in offered)

    def grants_nothing(x: dict[str, Any], _tools: Any) -> bool:
        """A call that passes the permission modes unasked, as a read-only one: its skill widens no
        rule. One with allowed-tools is asked about first (as Claude Code asks "Execute skill: x"
        of a skill with more than its safe properties): loaded, it lets the model run them unasked."""
        s = by_name.get(skill_name(x))
        return s is None or not s.allowed_tools

    async def run(x: dict[str, Any], ctx: ToolContext) -> str:
        name = skill_name(x)
        s = _callable(by_name.get(name), name, offered, over)
        try:
            body = place_arguments(s.body(), str(x.get("args") or "").strip())
        except OSError as e:
            raise ToolError(f"Cannot read skill {name!r} ({s.path}): {e.strerror or e}") from None
        files, notes = _files(s), _granted(s, ctx)
        if "!`" in body or "```!" in body:  # its inline shell, run as Claude Code runs it
            if ctx.ports is None:
                raise ToolError(f"Skill {name!r} has inline shell commands, which run only inside a run")
            body, _, error = await ctx.ports.inline_shell(body, s.name, s.source, "claude", ctx.tool_use_id or None)
            if error is not None:
                raise ToolError(f"Skill {name!r} was not loaded: {error}")
        return _loaded(s, body, files, notes)

    return Tool(
        "Skill",
        "Load a skill: specialised instructions (and files) for a kind of task. When a task matches a "
        "skill's description, call this first with the skill's name, then follow what it returns.\n\n"
        "Available skills:\n" + listing,
        {"type": "object", "properties": {"skill": {"type": "string", "description": "the skill's name"},
                                          "args": {"type": "string", "description": "optional arguments for it"}},
         "required": ["skill"], "additionalProperties": False},
        run, read_only_call=grants_nothing)


def _callable(s: Skill | None, name: str, offered: list[str], over: Mapping[str, str]) -> Skill:
    """The skill a Skill call names, unless the model may not call it (a ToolError in Claude Code
    2.1.332's words: unknown, disable-model-invocation, or off for the model in skillOverrides)."""
    if s is None:
        raise ToolError(f"Unknown skill {name!r}. Available skills: {', '.join(offered) or 'none'}.")
    if not s.model_invocable:
        raise ToolError(f"Skill {name} cannot be used with Skill tool due to disable-model-invocation. Ask the "
                        f"user to run /{name} themselves — it cannot be invoked via the Skill tool. Do not "
                        "replicate this skill's workflow by other means — it is reserved for explicit user "
                        "invocation.")
    if over.get(name) in NOT_FOR_MODEL:
        raise ToolError(f"Skill {name} is disabled for model invocation in skillOverrides settings")
    return s


def _granted(s: Skill, ctx: ToolContext) -> list[str]:
    """The skill's allowed-tools granted for the rest of the run (unless the run's grants are
    closed), and the lines that say what was granted or ignored."""
    if not s.allowed_tools:
        return []
    if ctx.state.grants.closed is not None:
        return [f"allowed-tools of {s.path} ignored: {ctx.state.grants.closed}"]
    rules, bad = valid_rules(s.allowed_tools)
    ctx.state.grants.add(rules)  # allowed without asking while the skill is active (the run)
    notes = [f"Tools this skill uses (allowed without asking from now on): {', '.join(rules)}"]
    if bad:
        notes.append(f"Ignored allowed-tools entries of {s.path} (not permission rules): {', '.join(bad)}")
    return notes


def _files(s: Skill) -> list[str]:
    """A skill's other files, relative to its folder (a command has none)."""
    return [] if s.command else sorted(str(p.relative_to(s.folder)) for p in s.folder.rglob("*")
                                       if p.is_file() and p != s.path)


def _loaded(s: Skill, body: str, files: list[str], notes: list[str]) -> str:
    """What the model reads of a loaded skill: where it is, its instructions, its other files and
    the notes."""
    head = f"Command {s.name} loaded ({s.path})." if s.command else f"Skill {s.name} loaded. Base directory: {s.folder}"
    parts = [head, "", body.rstrip()]
    if files:
        parts += ["", "Files of this skill (read them with Read when the instructions call for them):",
                  *(f"- {s.folder / f}" for f in files[:200])]
    for note in [*notes, *([s.note] if s.note else [])]:
        parts += ["", note]
    return "\n".join(parts)
