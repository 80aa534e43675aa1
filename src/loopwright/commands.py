"""Room: skills and memory. Owns custom slash commands; may import skills and below.

Custom slash commands: Markdown files that become prompts, as Claude Code's.

Owns: finding `<name>.md` under `.loopwright/commands/` and `.claude/commands/` (project) and
`~/.loopwright/commands/` (user), and expanding `/name args` into the prompt: `$ARGUMENTS` is
the whole argument string, `$1`…`$9` its words (shell-quoted words kept whole). Front matter:
`description`, `allowed-tools` (allowed for that run), `model` (that run's model). A file in a
subfolder is `/folder:name`. Used by the interactive mode and as the `-p` prompt. Imports skills
(front matter) and memory (the repository root) only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .skills import as_list, config_dirs, is_users, read_text_capped, split_front_matter
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


@dataclass
class Expanded:
    """A command turned into a run's prompt and its per-run settings."""

    prompt: str
    allowed_tools: list[str]
    model: str | None
    command: Command


def find_commands(cwd: str | Path, sources: Iterable[str], home: Path | None = None,
                  trusted: bool | None = None, warnings: list[str] | None = None,
                  extra: Iterable[tuple[Path, str]] = ()) -> dict[str, Command]:
    """Commands by name; the first of a name wins (the user's before the project's: a project's
    command of the same name is named in `warnings`). `trusted` (None: the trust store's word for
    cwd): untrusted, a project command's allowed-tools are ignored (Command.ignored). `extra`:
    (folder, prefix) of more commands, named `prefix:name` (plugins' `/plugin:command`)."""
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
            if name in out:
                if not users and out[name].users and warnings is not None:
                    warnings.append(Ignored("name", str(md), f"command /{name}",
                                            f"the user's own /{name} ({out[name].path}) keeps the name").line())
                continue
            text = read_text_capped(md)
            if not isinstance(text, tuple):
                if warnings is not None:
                    warnings.append(f"{md}: {text}; command skipped")
                continue
            meta, _ = split_front_matter(text[0])
            meta = meta or {}
            model = meta.get("model")
            allowed = as_list(meta.get("allowed-tools"))
            ignored = narrow_tools(allowed, str(md), f"command /{name}") if not (users or trusted) else []
            out[name] = Command(name, md, str(meta.get("description") or ""), [] if ignored else allowed,
                                model if isinstance(model, str) and model else None, ignored, users)
    return out


def expand(line: str, commands: dict[str, Command]) -> Expanded | None:
    """`/name args` → the command's prompt; None when `line` names no custom command."""
    m = re.match(r"^/([\w:.-]+)(?:\s+(.*))?$", line.strip(), re.S)
    if not m or m.group(1) not in commands:
        return None
    cmd = commands[m.group(1)]
    args = (m.group(2) or "").strip()
    try:
        import shlex  # (a command given arguments: start-up)

        words = shlex.split(args)
    except ValueError:  # an unbalanced quote: plain words
        words = args.split()
    text = read_text_capped(cmd.path)
    if not isinstance(text, tuple):
        raise OSError(f"{cmd.path}: {text}")
    _, body = split_front_matter(text[0])
    text = body.replace("$ARGUMENTS", args)
    text = re.sub(r"\$([1-9])", lambda g: words[int(g.group(1)) - 1] if int(g.group(1)) <= len(words) else "", text)
    if "$ARGUMENTS" not in body and not re.search(r"\$[1-9]", body) and args:
        text = f"{text.rstrip()}\n\n{args}"  # as Claude Code: arguments are appended when not placed
    return Expanded(text.strip(), cmd.allowed_tools, cmd.model, cmd)
