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
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .skills import as_list, config_dirs, split_front_matter


@dataclass
class Command:
    """One custom slash command: its Markdown file and front matter."""

    name: str
    path: Path
    description: str = ""
    allowed_tools: list[str] = field(default_factory=list)
    model: str | None = None


@dataclass
class Expanded:
    """A command turned into a run's prompt and its per-run settings."""

    prompt: str
    allowed_tools: list[str]
    model: str | None
    command: Command


def find_commands(cwd: str | Path, sources: Iterable[str], home: Path | None = None) -> dict[str, Command]:
    """Commands by name; the first of a name wins (project before user)."""
    out: dict[str, Command] = {}
    for d in config_dirs(Path(cwd).resolve(), sources, "commands", home):
        if not d.is_dir():
            continue
        for md in sorted(d.rglob("*.md")):
            rel = md.relative_to(d).with_suffix("")
            name = ":".join(rel.parts)
            if name in out:
                continue
            try:
                meta, _ = split_front_matter(md.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            meta = meta or {}
            model = meta.get("model")
            out[name] = Command(name, md, str(meta.get("description") or ""), as_list(meta.get("allowed-tools")),
                                model if isinstance(model, str) and model else None)
    return out


def expand(line: str, commands: dict[str, Command]) -> Expanded | None:
    """`/name args` → the command's prompt; None when `line` names no custom command."""
    m = re.match(r"^/([\w:.-]+)(?:\s+(.*))?$", line.strip(), re.S)
    if not m or m.group(1) not in commands:
        return None
    cmd = commands[m.group(1)]
    args = (m.group(2) or "").strip()
    try:
        words = shlex.split(args)
    except ValueError:  # an unbalanced quote: plain words
        words = args.split()
    _, body = split_front_matter(cmd.path.read_text(encoding="utf-8", errors="replace"))
    text = body.replace("$ARGUMENTS", args)
    text = re.sub(r"\$([1-9])", lambda g: words[int(g.group(1)) - 1] if int(g.group(1)) <= len(words) else "", text)
    if "$ARGUMENTS" not in body and not re.search(r"\$[1-9]", body) and args:
        text = f"{text.rstrip()}\n\n{args}"  # as Claude Code: arguments are appended when not placed
    return Expanded(text.strip(), cmd.allowed_tools, cmd.model, cmd)
