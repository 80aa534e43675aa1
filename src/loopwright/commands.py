"""Room: skills and memory. Owns custom slash commands; may import skills and below.

Custom slash commands: Markdown files that become prompts, as Claude Code's.

Owns: finding `<name>.md` under `.loopwright/commands/` and `.claude/commands/` (project) and
`~/.loopwright/commands/` and `~/.claude/commands/` (user), listing them with the skills in Claude
Code's order (command_listing), and expanding `/name args` into the prompt: `$ARGUMENTS` is
the whole argument string, `$1`…`$9` its words (shell-quoted words kept whole). Front matter:
`description`, `allowed-tools` (allowed for that run), `model` (that run's model). A file in a
subfolder is `/folder:name`. Used by the interactive mode and as the `-p` prompt. Imports skills
(front matter) and memory (the repository root) only.

Inline shell (`` !`cmd` `` and ```` ```! ```` blocks) in a command's text is found here
(`inline_shell`); the run executes it, gated as Bash (skillshell.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .configdirs import config_dirs, is_users
from .skills import (
    Skill,
    argument_hint,
    as_list,
    place_arguments,
    read_text_capped,
    split_front_matter,
)
from .trust import Ignored


@dataclass
class Command:
    """One custom slash command: its Markdown file and front matter."""

    name: str
    path: Path
    description: str = ""
    allowed_tools: list[str] = field(default_factory=list)
    model: str | None = None
    ignored: list[Ignored] = field(default_factory=list)  # its allowed-tools, in an untrusted workspace
    users: bool = False  # the user's own (not a project's)
    source: str = "projectSettings"  # Claude Code's command_source: userSettings | projectSettings | plugin
    skill: bool = False  # a skill typed as `/name` (its SKILL.md expands as Claude Code expands it)
    argument_hint: str = ""  # front matter `argument-hint`, shown beside its name in a list of commands
    user_invocable: bool = True  # a skill's `user-invocable: false`: typed as `/name`, it is refused (for Claude only)
    model_invocable: bool = True  # `disable-model-invocation: true`: not offered to the model (the Skill tool)
    first_line: str = ""  # its text's first line (a heading's `#` off): the Skill tool's listing when it has no description


@dataclass
class Expanded:
    """A command turned into a run's prompt and its per-run settings."""

    prompt: str
    allowed_tools: list[str]
    model: str | None
    command: Command
    args: str = ""  # the arguments as typed
    line: str = ""  # the whole `/name args` as typed (what UserPromptSubmit and UserPromptExpansion see)


def find_commands(cwd: str | Path, sources: Iterable[str], home: Path | None = None,
                  trusted: bool | None = None, warnings: list[str] | None = None,
                  extra: Iterable[tuple[Path, str]] = (), skills: bool = False,
                  plugin_skills: Iterable[tuple[Path, str]] = ()) -> dict[str, Command]:
    """Commands by name; the first of a name wins (the user's before the project's: a project's
    command of the same name is named in `warnings`). `trusted` (None: the trust store's word for
    cwd): untrusted, a project command's allowed-tools are ignored (Command.ignored). `extra`:
    (folder, prefix) of more commands, named `prefix:name` (plugins' `/plugin:command`). `skills`:
    the skills too, as commands (`/skill-name args`, as Claude Code expands them), after the
    commands of the same name; `plugin_skills`: (folder, prefix) of more skills (`/plugin:skill`)."""
    from .trust import narrow_tools, trusted_for

    cwd = Path(cwd).resolve()
    trusted = trusted_for(None, cwd) if trusted is None else trusted
    out: dict[str, Command] = {}
    prefixes = {d: prefix for d, prefix in extra}
    for d in [*config_dirs(cwd, sources, "commands", home), *prefixes]:
        if not d.is_dir():
            continue
        users = is_users(d, "commands", home) or d in prefixes
        for md in sorted(d.rglob("*.md")):
            rel = md.relative_to(d).with_suffix("")
            name = ":".join([*([prefixes[d]] if d in prefixes else []), *rel.parts])
            if name in out and not _takes_back(out[name], users, warnings):
                if not users and out[name].users and warnings is not None:
                    warnings.append(Ignored("name", str(md), f"command /{name}",
                                            f"the user's own /{name} ({out[name].path}) keeps the name").line())
                continue
            text = read_text_capped(md)
            if not isinstance(text, tuple):
                if warnings is not None:
                    warnings.append(f"{md}: {text}; command skipped")
                continue
            meta, body = split_front_matter(text[0])
            meta = meta or {}
            model = meta.get("model")
            allowed = as_list(meta.get("allowed-tools"))
            ignored = narrow_tools(allowed, str(md), f"command /{name}") if not (users or trusted) else []
            out[name] = Command(name, md, str(meta.get("description") or ""), [] if ignored else allowed,
                                model if isinstance(model, str) and model else None, ignored, users,
                                "plugin" if d in prefixes else "userSettings" if users else "projectSettings",
                                argument_hint=argument_hint(meta),
                                model_invocable=str(meta.get("disable-model-invocation")).lower() != "true",
                                first_line=next((ln.strip().lstrip("#").strip() for ln in body.splitlines() if ln.strip()), ""))
    if skills:
        from .skills import find_skills

        found = [(sk.name, sk, sk.source == "userSettings") for sk in find_skills(cwd, sources, home, trusted)[0]]
        found += [(f"{prefix}:{sk.name}", sk, True)  # a plugin's: the user installed it (its allowed-tools count)
                  for folder, prefix in plugin_skills for sk in find_skills(cwd, (), home, trusted, [folder])[0]]
        for name, sk, users in found:  # (an unusable SKILL.md is named by the Skill tool)
            if name not in out or _takes_back(out[name], users, warnings):
                out[name] = Command(name, sk.path, sk.description, sk.allowed_tools, None, sk.ignored, users, sk.source,
                                    skill=True, user_invocable=sk.user_invocable)
    return out


def for_the_skill_tool(cwd: str | Path, sources: Iterable[str], trusted: bool | None,
                       extra: Iterable[tuple[Path, str]] = (),
                       plugin_skills: Iterable[tuple[Path, str]] = ()) -> tuple[list[Skill], list[str]]:
    """What the Skill tool offers the model, in Claude Code 2.1.332's order (seen on the same
    files): the skills of the setting sources, the user's and the project's commands together by
    name, the plugins' commands, then the plugins' skills (`plugin:skill`, by name); and a warning
    for each SKILL.md that cannot be used. A command is listed with its description, else its text's
    first line; one with `disable-model-invocation: true` is not listed, and a call of it refused
    (the user may still type it). `extra`/`plugin_skills` as find_commands takes them."""
    from dataclasses import replace

    from .skills import find_skills

    skills, warnings = find_skills(cwd, sources, trusted=trusted)
    plugins: list[Skill] = []
    for folder, prefix in plugin_skills:
        found, said = find_skills(cwd, (), trusted=trusted, extra=[folder])
        plugins += [replace(sk, name=f"{prefix}:{sk.name}") for sk in found]
        warnings += said
    own = _as_skills(find_commands(cwd, sources, trusted=trusted).values())
    theirs = _as_skills(find_commands(cwd, (), trusted=trusted, extra=extra).values())
    return [*skills, *own, *theirs, *sorted(plugins, key=lambda sk: sk.name)], warnings


def _as_skills(commands: Iterable[Command]) -> list[Skill]:
    """Commands as the Skill tool offers them, by name."""
    return [Skill(c.name, c.description or c.first_line, c.path, c.allowed_tools, c.ignored, c.source,
                  model_invocable=c.model_invocable, argument_hint=c.argument_hint, command=True,
                  note=f"(Its model, {c.model}, is the run's when the user types /{c.name}; here the run's model "
                       "goes on.)" if c.model else "")
            for c in sorted(commands, key=lambda c: c.name) if not c.skill]


def _takes_back(found: Command, users: bool, warnings: list[str] | None) -> bool:
    """Does the user's own (or an installed plugin's) command take its name back from a project's
    that came first? A project's `.claude/commands/plug/deploy.md` is `/plug:deploy`, the name of
    plugin plug's deploy command: a repository must not answer for a command the user installed."""
    if not users or found.users:
        return False
    if warnings is not None:
        warnings.append(Ignored("name", str(found.path), f"command /{found.name}",
                                f"the user's own /{found.name} keeps the name").line())
    return True


def command_listing(cwd: str | Path, sources: Iterable[str], trusted: bool | None = None,
                    extra: Iterable[tuple[Path, str]] = (),
                    plugin_skills: Iterable[tuple[Path, str]] = (), off: Iterable[str] = ()) -> list[Command]:
    """The commands and skills a user may type, in Claude Code 2.1.332's order (its SDK init
    message's `slash_commands` and `skills`, its initialize answer's `commands`; seen on the same
    files): the user's skills, the project's skills (each group by name), the user's and the
    project's commands together by name, the plugins' commands (`plugin:name`), then the plugins'
    skills. A command of a skill's name is listed once, as the skill; a skill with
    `user-invocable: false` is not listed, nor one named in `off` (the settings' skillOverrides
    turn it off: runconfig.skills_off). `extra`/`plugin_skills` as find_commands takes them."""
    from .skills import find_skills

    def as_command(sk: Skill, name: str) -> Command:
        return Command(name, sk.path, sk.description, sk.allowed_tools, None, sk.ignored, sk.source != "projectSettings",
                       sk.source, skill=True, argument_hint=sk.argument_hint)

    skills = [sk for sk in find_skills(cwd, sources, None, trusted)[0] if sk.user_invocable]
    out = [as_command(sk, sk.name) for source in ("userSettings", "projectSettings")
           for sk in sorted(skills, key=lambda sk: sk.name) if sk.source == source]
    taken = {c.name for c in out}
    plugins = [c for _, c in sorted(find_commands(cwd, (), trusted=trusted, extra=extra).items())]
    plugins += sorted((as_command(sk, f"{prefix}:{sk.name}") for folder, prefix in plugin_skills
                       for sk in find_skills(cwd, (), None, trusted, [folder])[0] if sk.user_invocable),
                      key=lambda c: c.name)
    theirs = {c.name for c in plugins}  # (a project's command of a plugin's name is not it: find_commands)
    out += [c for _, c in sorted(find_commands(cwd, sources, trusted=trusted).items())
            if c.name not in taken and not (c.name in theirs and not c.users)]
    hidden = set(off)
    return [c for c in [*out, *plugins] if c.name not in hidden]


def described(commands: list[Command]) -> list[dict[str, str]]:
    """A listing as the Agent SDK's initialize answer gives it (`get_server_info()["commands"]`),
    each described as Claude Code describes it: `DESCRIPTION (user)` / `(project)`, `(PLUGIN)
    DESCRIPTION` for a plugin's."""
    def said(c: Command) -> str:
        if c.source == "plugin":
            return f"({c.name.partition(':')[0]}) {c.description}"
        return f"{c.description} ({'user' if c.source == 'userSettings' else 'project'})"

    return [{"name": c.name, "description": said(c), "argumentHint": c.argument_hint} for c in commands]


def expand(line: str, commands: dict[str, Command]) -> Expanded | None:
    """`/name args` → the command's prompt; None when `line` names no custom command."""
    m = re.match(r"^/([\w:.-]+)(?:\s+(.*))?$", line.strip(), re.S)
    if not m or m.group(1) not in commands:
        return None
    cmd = commands[m.group(1)]
    args = (m.group(2) or "").strip()
    text = read_text_capped(cmd.path)
    if not isinstance(text, tuple):
        raise OSError(f"{cmd.path}: {text}")
    _, body = split_front_matter(text[0])
    # (as Claude Code: a skill's folder first)
    prefix = f"Base directory for this skill: {cmd.path.parent}\n\n" if cmd.skill else ""
    return Expanded((prefix + place_arguments(body, args)).strip(), cmd.allowed_tools, cmd.model, cmd, args, line.strip())


_BLOCK = r"```!\s*\n?([\s\S]*?)\n?```"
_INLINE = r"(?<=\s)!`([^`]+)`|^!`([^`]+)`"


def inline_shell(text: str) -> list[tuple[str, str]]:
    """(the text as written, the command) of each inline shell command in a command's or skill's
    text, as Claude Code finds them: ```` ```! ```` blocks, then `` !`cmd` `` at a line's start
    or after a space (not inside another code span)."""
    found = [(m.start(), m.group(0), m.group(1)) for m in re.finditer(_BLOCK, text)]
    if "!`" in text:
        # other `code` spans blanked (same length), so a `!` inside one is not a command
        masked = re.sub(r"`[^`\n]+`", lambda m: m.group(0) if m.start() > 0 and text[m.start() - 1] in "!`"
                        else "`" + " " * (len(m.group(0)) - 2) + "`", text)
        for m in re.finditer(_INLINE, masked, re.M):
            found.append((m.start(), text[m.start():m.end()], text[m.start() + 2:m.end() - 1]))
    return [(raw, cmd.strip().replace("\r\n", "\n")) for _, raw, cmd in found if cmd.strip()]
