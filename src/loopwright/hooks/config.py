"""Room: bases (hooks). Owns what a hook configuration is: Claude Code's hook events, the kinds of
hook, matchers, the frozen registry of a run's hooks, and reading them from a settings file; may import hooks.matching.

The registry is configured apart from what happens: `Hooks` (hooks.registry) is where hooks are
registered; the assembler freezes what a run has into a `HookRegistry` once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias

from .matching import matcher_matches

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)

# Every hook event of Claude Code 2.1.332 (the Agent SDK's HOOK_EVENTS): a hook on one of these is
# accepted; one on an event loopwright does not fire is named once (HookRegistry.unfired), never an error.
CLAUDE_HOOK_EVENTS = (
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "UserPromptSubmit",
    "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
    "PreCompact", "PostCompact", "PreModelSwitch", "PostModelSwitch", "PermissionRequest", "PermissionDenied",
    "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange",
    "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged", "DirectoryAdded",
    "MessageDisplay", "PreSkillShellCommand",
)

DEFAULT_TIMEOUT = 60.0


@dataclass(slots=True)
class HookContext:
    """Fields every hook input carries (Claude Code's stdin JSON)."""

    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    permission_mode: str = "default"
    deps: Any = None  # AgentOptions.deps: a Python hook's third argument carries them (never sent to a command hook)


HookCallback: TypeAlias = Callable[..., Any]


@dataclass(slots=True)
class CommandHook:
    """A shell command hook (Claude Code's `{"type": "command", "command": ..., "timeout": s}`)."""

    command: str
    timeout: float | None = None


@dataclass
class HookMatcher:
    """Hooks for the calls whose tool name (or source/trigger/reason) the matcher matches:
    None, "" or "*" = all; `Bash`, `Edit|Write` = exact names; anything else a regex."""

    matcher: str | None = None
    hooks: list[HookCallback | CommandHook] = field(default_factory=list)
    timeout: float | None = None  # default for the hooks in this matcher


@dataclass(frozen=True, slots=True)
class RegisteredMatcher:
    """One matcher of a HookRegistry: like HookMatcher, but frozen."""

    matcher: str | None
    hooks: tuple[HookCallback | CommandHook, ...]
    timeout: float | None = None


_NO_MATCHERS: Mapping[str, tuple[RegisteredMatcher, ...]] = MappingProxyType({})

_NO_ENV: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class HookRegistry:
    """What hooks are configured for a run (settings files, SDK callbacks, code), per event, and
    the extra environment of command hooks. Built once by the assembler (`Hooks.freeze()`, merged
    with the settings by settings.build_run_config) and never changed: the run's state is apart,
    in HookState."""

    matchers: Mapping[str, tuple[RegisteredMatcher, ...]] = field(default_factory=lambda: _NO_MATCHERS)
    env: Mapping[str, str] = field(default_factory=lambda: _NO_ENV)
    # Any hook at all: known once (the registry never changes), asked several times a turn.
    active: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "active", any(self.matchers.values()))

    def unfired(self) -> list[str]:
        """One line per event that has hooks but that loopwright never fires (a Claude Code event
        it does not have): they are kept, never run, and named."""
        out = []
        for event, ms in self.matchers.items():
            n = sum(len(m.hooks) for m in ms)
            if n and event not in HOOK_EVENTS:
                out.append(f"hook event {event}: loopwright never fires it; its {n} hook{'s' * (n != 1)} "
                           "will not run")
        return out

    def with_env(self, env: Mapping[str, str]) -> HookRegistry:
        """The same hooks, their environment updated with `env`."""
        return HookRegistry(self.matchers, MappingProxyType({**self.env, **env}))

    def jobs(self, event: str, target: str | None) -> list[tuple[HookCallback | CommandHook, float]]:
        """The hooks an event runs, each with its timeout: the matchers that match `target`
        (events without a target, UserPromptSubmit and Stop, ignore matchers); identical commands
        run once (as Claude Code does)."""
        jobs: list[tuple[HookCallback | CommandHook, float]] = []
        seen: set[str] = set()
        for m in self.matchers.get(event) or ():
            if target is not None and not matcher_matches(m.matcher, target):
                continue
            for h in m.hooks:
                if isinstance(h, CommandHook):
                    if h.command in seen:
                        continue
                    seen.add(h.command)
                    timeout = h.timeout or m.timeout or DEFAULT_TIMEOUT
                else:
                    timeout = m.timeout or DEFAULT_TIMEOUT
                jobs.append((h, float(timeout)))
        return jobs


def parse_matchers(event: str, entries: Any, where: str, warnings: list[str]) -> list[HookMatcher] | None:
    """A settings file's `hooks.<event>` list (Claude Code's schema) as matchers; None (and a line in
    `warnings`) for an event Claude Code does not have. Raises ValueError, naming `where`, for a
    malformed entry. A hook of a type loopwright does not run is left out with a line naming it."""
    if event not in CLAUDE_HOOK_EVENTS:
        warnings.append(f"{where}: unknown hook event {event!r} (not one of Claude Code's); its hooks will not run")
        return None
    if not isinstance(entries, list):
        raise ValueError(f"{where}: hooks.{event} must be a list of {{matcher, hooks}} objects")
    out: list[HookMatcher] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
            raise ValueError(f"{where}: each hooks.{event} entry needs a \"hooks\" list")
        matcher = entry.get("matcher")
        if matcher is not None and not isinstance(matcher, str):
            raise ValueError(f"{where}: hooks.{event} matcher must be a string")
        commands: list[Any] = []
        for h in entry["hooks"]:
            if not isinstance(h, dict):
                raise ValueError(f"{where}: hooks.{event}: each hook must be an object like {{\"type\": \"command\"}}")
            kind = h.get("type", "command")
            if kind != "command":
                warnings.append(f"{where}: hooks.{event}: a hook of type {kind!r} is not supported by loopwright; "
                                "it will not run")
                continue
            cmd = h.get("command")
            if not isinstance(cmd, str) or not cmd.strip():
                raise ValueError(f"{where}: hooks.{event}: a command hook needs a \"command\" string")
            timeout = h.get("timeout")
            if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
                raise ValueError(f"{where}: hooks.{event}: timeout must be a positive number of seconds")
            commands.append(CommandHook(cmd, float(timeout) if timeout is not None else None))
        out.append(HookMatcher(matcher, commands))
    return out
