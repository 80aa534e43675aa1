"""Room: cli. Owns what `loopwright mcp serve` offers as MCP prompts: the project's and the user's
custom commands and skills; may import commands, skills and below.

Each command (`.loopwright/commands/NAME.md`, `.claude/commands/…`, the user's) is a prompt of its
name with one optional argument, `arguments`, expanded as `/NAME ARGUMENTS` is in a run ($ARGUMENTS,
$1…; appended when the command does not place them). Each skill is a prompt `skill:NAME` whose
message is its SKILL.md's instructions (and its folder, as a run's Skill tool gives them), with the
arguments appended. A command's name wins over a skill's. The setting sources of `mcp serve` choose
which folders are read (`--setting-sources`), as in a run; they are read again on each request,
so a command added while serving is offered at once. A command or skill the settings'
skillOverrides turn `off` is not offered (runconfig.skills_off).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..options import AgentOptions

ARGUMENT = {"name": "arguments", "description": "what to put for $ARGUMENTS (optional)", "required": False}


class Refused(Exception):
    """A prompt that is not served, and why (answered as JSON-RPC's invalid params)."""


class Prompts:
    """The commands and skills of a working directory, as MCP prompts."""

    def __init__(self, cwd: Path, sources: list[str], options: AgentOptions | None = None) -> None:
        self.cwd = cwd
        self.sources = sources
        self.options = options  # whose settings' skillOverrides hide what is `off`

    def _found(self) -> tuple[dict[str, Any], dict[str, Any]]:
        from ..commands import find_commands
        from ..runconfig import skills_off
        from ..skills import find_skills

        off = set(skills_off(self.options, self.cwd)) if self.options is not None else set()
        commands = {n: c for n, c in find_commands(self.cwd, self.sources).items() if n not in off}
        skills, _ = find_skills(self.cwd, self.sources)
        return commands, {f"skill:{s.name}": s for s in skills
                          if f"skill:{s.name}" not in commands and s.name not in off}

    def listed(self) -> list[dict[str, Any]]:
        """Each prompt as the wire's dict (name, description, its one argument)."""
        commands, skills = self._found()
        out = [{"name": name, "description": c.description or f"the custom command /{name}",
                "arguments": [ARGUMENT]} for name, c in commands.items()]
        out += [{"name": name, "description": s.description, "arguments": [ARGUMENT]} for name, s in skills.items()]
        return out

    def get(self, name: str, arguments: dict[str, str] | None) -> dict[str, Any]:
        """The prompt's messages with the arguments in place (Refused for an unknown name)."""
        from ..commands import expand

        args = str((arguments or {}).get("arguments") or "").strip()
        commands, skills = self._found()
        if name in commands:
            expanded = expand(f"/{name} {args}".rstrip(), commands)
            assert expanded is not None  # (the name is one of the commands)
            return {"description": commands[name].description or f"the custom command /{name}",
                    "messages": [{"role": "user", "content": {"type": "text", "text": expanded.prompt}}]}
        if name in skills:
            skill = skills[name]
            text = f"Base directory for this skill: {skill.folder}\n\n{skill.body().strip()}"
            if args:
                text += f"\n\nARGUMENTS: {args}"
            return {"description": skill.description,
                    "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
        raise Refused(f"Unknown prompt: {name}")
