"""Room: agents. Owns subagents defined as files (Claude Code's `.claude/agents/*.md`); may import
options, skills, trust and below.

An agent file is Markdown with front matter: `name` and `description` (required), `tools`,
`disallowedTools`, `model`, `permissionMode`, `maxTurns`, `effort`, `hooks` (honoured: the settings'
shape in YAML, fired while that agent runs, its Stop hooks as SubagentStop), `mcpServers` (the
names of the run's servers, whose tools it gets, and {name: config} servers started for it alone
and stopped when it ends), `memory` (a memory directory of its own: its MEMORY.md in its system
prompt, Read/Write/Edit offered), `skills` (each named
skill's SKILL.md preloaded after the task in the subagent's first message, in Claude Code's
blocks), `isolation: worktree` (each run in a git worktree of its own: agents.py), `color`
(display only);
the body is the agent's system prompt. They are read from the user's `~/.loopwright/agents/`
and `~/.claude/agents/` ("user" setting source) and the project's `.loopwright/agents/` and
`.claude/agents/` ("project"). A project's agent shadows the user's of the same name (Claude
Code's order: --agents, project, user; plugins last).

Every front-matter key is either honoured, refused in one line that names it (what Claude Code
does with it that loopwright does not), or named as unknown: never silently dropped. A project
agent is workspace content: in an untrusted workspace a permissionMode that widens what the
user allows is ignored (named, as every item trust leaves out); `tools` only narrows anyway.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .configdirs import config_dirs
from .gate import PERMISSION_MODES
from .models.reasoning import EFFORT_LEVELS
from .options import MEMORY_SCOPES, AgentDefinition, agent_servers
from .skills import PreloadedSkill, as_list, read_text_capped, split_front_matter, valid_rules
from .trust import Ignored

HONOURED = ("name", "description", "tools", "disallowedTools", "model", "permissionMode", "maxTurns", "effort", "color",
            "hooks", "skills", "mcpServers", "isolation", "memory")
# Claude Code's other keys (its agent front-matter schema, 2.1.332): what it does that loopwright does not.
REFUSED = {
    "initialPrompt": "an auto-submitted first message",
    "background": "background agents",
    "omitClaudeMd": "leaving out memory files (a subagent never gets them in loopwright)",
    "autoCompactWindow": "a per-agent compaction window",
    "observer": "observer agents",
    "observerMessage": "observer agents",
    "observeToolResults": "observer agents",
    "observeSubagents": "observer agents",
}
NARROW_MODES = ("default", "plan", "dontAsk")  # what an untrusted project's agent may ask for


@dataclass
class AgentFiles:
    """The agents found, a warning line per problem, and what trust left out."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)


def agent_dirs(cwd: Path, sources: Iterable[str], home: Path | None = None) -> list[tuple[Path, bool]]:
    """(folder, is the user's) where agent files live, lowest precedence first."""
    sources = list(sources)
    out: list[tuple[Path, bool]] = []
    if "user" in sources:
        out += [(d, True) for d in config_dirs(cwd, ["user"], "agents", home)]  # (~/.claude/agents last)
    if "project" in sources:
        out += [(d, False) for d in reversed(config_dirs(cwd, ["project"], "agents", home))]
    return out


def parse_agent_file(path: Path, text: str, users: bool = True) -> tuple[str, AgentDefinition, list[str],
                                                                         list[Ignored]]:
    """One agent file: (its name, its definition, warning lines, what trust leaves out when it is a
    project's in an untrusted workspace (`users` False: the caller decides to apply them)).
    Raises ValueError naming the file and the field when it cannot be used."""
    meta, body = split_front_matter(text)
    if meta is None:
        raise ValueError(f"{path}: no front matter (--- name: ... description: ... ---); agent skipped")
    name, desc = _name_and_description(path, meta)
    warnings = _key_warnings(path, meta)
    model = meta.get("model")
    mode = meta.get("permissionMode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise ValueError(f"{path}: permissionMode {mode!r} is not one of {', '.join(PERMISSION_MODES)}; agent skipped")
    ignored: list[Ignored] = []
    if mode is not None and mode not in NARROW_MODES and not users:
        ignored.append(Ignored("grant", str(path), f"permissionMode {mode} of agent {name!r}"))
    turns = _max_turns(path, meta)
    effort = meta.get("effort")
    if effort is not None and effort not in EFFORT_LEVELS:
        warnings.append(f"{path}: effort {effort!r} is not one of {', '.join(EFFORT_LEVELS)} (not applied: the run's "
                        "effort is used)")
        effort = None
    hooks = _agent_hooks(path, text, warnings) if "hooks" in meta else None
    if hooks and not users:  # a project's agent: its commands run only in a trusted workspace (the caller decides)
        ignored.append(Ignored("command", str(path), f"hooks of agent {name!r}"))
    servers = _agent_yaml(path, text, "mcpServers", warnings) if "mcpServers" in meta else None
    try:
        servers = agent_servers(servers, f"{path}")
    except ValueError as e:
        warnings.append(f"{e}; its MCP servers are not started")
        servers = None
    if servers and not users and any(isinstance(x, dict) for x in servers):  # commands of the workspace's
        ignored.append(Ignored("command", str(path), f"mcpServers of agent {name!r}"))
    isolation = meta.get("isolation")
    if isolation is not None and isolation != "worktree":
        warnings.append(f"{path}: isolation {isolation!r} is not applied (loopwright has \"worktree\" only; "
                        "the agent runs in the project)")
        isolation = None
    memory = meta.get("memory")
    if memory is not None and memory not in MEMORY_SCOPES:
        warnings.append(f"{path}: memory {memory!r} is not one of {', '.join(MEMORY_SCOPES)} (not applied)")
        memory = None
    if memory is not None and not users:  # a workspace's agent reading and writing a memory directory
        ignored.append(Ignored("grant", str(path), f"memory {memory} of agent {name!r}"))
    tools = as_list(meta["tools"]) if "tools" in meta else None
    denied = as_list(meta["disallowedTools"]) if "disallowedTools" in meta else None
    d = AgentDefinition(desc.strip(), body.strip(), tools, model if isinstance(model, str) and model else None,
                        turns, denied, mode, str(path), effort, hooks, mcp_servers=servers,
                        isolation=isolation, memory=memory)
    return name.strip(), d, warnings, ignored


def _name_and_description(path: Path, meta: dict[str, Any]) -> tuple[str, str]:
    """The agent's name (the file's stem when the front matter has none) and its description, both
    required (ValueError naming the file)."""
    name = meta.get("name") or path.stem
    desc = meta.get("description")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{path}: \"name\" must be a string; agent skipped")
    if not isinstance(desc, str) or not desc.strip():
        raise ValueError(f"{path}: the front matter has no description; agent skipped")
    return name, desc


def _key_warnings(path: Path, meta: dict[str, Any]) -> list[str]:
    """One line for the front-matter keys loopwright refuses (and why), one for those it does not know."""
    warnings: list[str] = []
    refused = [k for k in meta if k in REFUSED]
    if refused:
        warnings.append(f"{path}: loopwright does not apply {', '.join(f'{k} ({REFUSED[k]})' for k in refused)}")
    unknown = [k for k in meta if k not in REFUSED and k not in HONOURED]
    if unknown:
        warnings.append(f"{path}: unknown front-matter key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                        "(not applied)")
    return warnings


def _max_turns(path: Path, meta: dict[str, Any]) -> int | None:
    """maxTurns as a positive integer (ValueError naming the file for anything else), or None."""
    turns = meta.get("maxTurns")
    if turns is None:
        return None
    if not (isinstance(turns, str) and turns.isdigit() and int(turns) > 0):
        raise ValueError(f"{path}: maxTurns {turns!r} must be a positive integer; agent skipped")
    return int(turns)


def _agent_yaml(path: Path, text: str, key: str, warnings: list[str]) -> Any:
    """A nested front-matter value (YAML), or None with a warning line when it cannot be read."""
    import yaml

    try:
        return (yaml.safe_load(text.split("\n---", 1)[0].removeprefix("---")) or {}).get(key)
    except yaml.YAMLError as e:
        warnings.append(f"{path}: its front matter is not YAML loopwright can read ({e}); {key} not applied")
        return None


def _agent_hooks(path: Path, text: str, warnings: list[str]) -> dict[str, Any] | None:
    """The front matter's `hooks` (Claude Code's settings shape, in YAML) as {event: [HookMatcher]};
    None, with a warning line, when they cannot be read."""
    import yaml  # (only for an agent file with hooks: nested front matter)

    from .hooks import parse_matchers

    block = text.split("\n---", 1)[0].removeprefix("---")
    try:
        raw = (yaml.safe_load(block) or {}).get("hooks")
    except yaml.YAMLError as e:
        warnings.append(f"{path}: its front matter is not YAML loopwright can read ({e}); hooks not applied")
        return None
    if not isinstance(raw, dict):
        warnings.append(f"{path}: \"hooks\" must be an object of events, as in settings; hooks not applied")
        return None
    out: dict[str, Any] = {}
    for event, entries in raw.items():
        try:
            matchers = parse_matchers(str(event), entries, f"{path}: hooks", warnings)
        except ValueError as e:
            warnings.append(f"{e}; hooks not applied")
            return None
        if matchers:
            out.setdefault("SubagentStop" if event == "Stop" else str(event), []).extend(matchers)
    return out or None


def find_agent_files(cwd: str | Path, sources: Iterable[str], trusted: bool, home: Path | None = None) -> AgentFiles:
    """The agents of these setting sources (a project's shadows the user's of the same name).
    Untrusted, a project agent's widening permissionMode is dropped and listed in `ignored`."""
    cwd = Path(cwd).resolve()
    out = AgentFiles()
    for d, users in agent_dirs(cwd, sources, home):
        if not d.is_dir():
            continue
        for md in sorted(d.glob("*.md")):
            text = read_text_capped(md)
            if not isinstance(text, tuple):
                out.warnings.append(f"{md}: {text}; agent skipped")
                continue
            try:
                name, definition, warnings, ignored = parse_agent_file(md, text[0], users)
            except ValueError as e:
                out.warnings.append(str(e))
                continue
            out.warnings += warnings
            if ignored and not trusted:
                out.ignored += ignored
                if any(i.kind == "grant" and i.item.startswith("permissionMode") for i in ignored):
                    definition.permission_mode = None
                if any(i.kind == "grant" and i.item.startswith("memory") for i in ignored):
                    definition.memory = None
                if any(i.kind == "command" for i in ignored):  # its hooks, its servers: commands of the workspace's
                    definition.hooks = None
                    definition.mcp_servers = [x for x in definition.mcp_servers or [] if isinstance(x, str)] or None
            out.agents[name] = definition
            wanted = as_list((split_front_matter(text[0])[0] or {}).get("skills"))
            if wanted:
                definition.skills = wanted
                definition.preloaded = preload(str(md), name, wanted, cwd, sources, trusted, home, out.warnings)
    return out


def check_defined(agents: dict[str, AgentDefinition], cwd: Path, sources: Iterable[str], trusted: bool,
                  warnings: list[str]) -> dict[str, AgentDefinition]:
    """The `--agents` / Agent SDK agents with their `skills` read (copies: the caller's objects are
    not changed), and one line per agent naming the keys loopwright does not apply."""
    import dataclasses

    out = dict(agents)
    for name, d in agents.items():
        if d.unsupported:
            warnings.append(f"agent {name!r}: loopwright does not apply "
                            + ", ".join(f"{k} ({REFUSED.get(k, 'not a key loopwright knows')})" for k in d.unsupported))
        if d.skills and not d.preloaded:
            out[name] = dataclasses.replace(d, preloaded=preload(f"agent {name!r}", name, d.skills, cwd, sources,
                                                                 trusted, None, warnings))
    return out


def preload(where: str, agent: str, wanted: list[str], cwd: Path, sources: Iterable[str], trusted: bool,
            home: Path | None, warnings: list[str]) -> tuple[str | PreloadedSkill, ...]:
    """The `skills` an agent file names, as Claude Code 2.1.332 preloads them into the subagent's
    first message: a command block and the skill's body under its base directory. A skill that is
    not there is named (not preloaded)."""
    from .skills import find_skills

    found = {s.name: s for s in find_skills(cwd, sources, home, trusted)[0]}
    out: list[str | PreloadedSkill] = []
    for name in wanted:
        skill = found.get(name)
        if skill is None:
            warnings.append(f"{where}: skill {name!r} of agent {agent!r} is not found (skills live in .claude/skills/ "
                            "and ~/.claude/skills/); not preloaded")
            continue
        try:
            body = skill.body()
        except OSError as e:
            warnings.append(f"{where}: skill {name!r} of agent {agent!r} cannot be read ({e}); not preloaded")
            continue
        out += [f"<command-message>{name}</command-message>\n<command-name>{name}</command-name>\n"
                "<skill-format>true</skill-format>",
                PreloadedSkill(f"Base directory for this skill: {skill.folder}\n\n{body.lstrip()}", name, skill.source,
                               tuple(valid_rules(skill.allowed_tools)[0]))]
    return tuple(out)


def pick_agent(name: str, defined: dict[str, AgentDefinition], files: AgentFiles) -> AgentDefinition:
    """`--agent NAME`: the agent of that name (--agents first, then the files). Raises ValueError
    naming the agents there are."""
    found = defined.get(name) or files.agents.get(name)
    if found is None:
        there = sorted({*defined, *files.agents})
        raise ValueError(f"--agent {name}: no agent of that name (agents: {', '.join(there) or 'none'}; agent files "
                         "live in .claude/agents/ and ~/.claude/agents/)")
    return found


__all__ = ["pick_agent", "HONOURED", "REFUSED", "AgentFiles", "agent_dirs", "find_agent_files", "parse_agent_file"]
