"""Room: bases (hooks). Owns what a hook configuration is: the events loopwright fires, the context
every hook input carries and the frozen registry of a run's hooks; may import hooks.matching,
hooks.kinds (the kinds of hook, matchers and reading them: imported when a registry has hooks) and typevars.

The registry is configured apart from what happens: `Hooks` (hooks.registry) is where hooks are
registered; the assembler freezes what a run has into a `HookRegistry` once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic

from ..typevars import DepsT
from .matching import if_matches, matcher_matches

if TYPE_CHECKING:
    from .kinds import ConfiguredHook, HookCallback, RegisteredMatcher

HOOK_EVENTS = (  # the events loopwright fires, each at Claude Code's moment
    "SessionStart", "InstructionsLoaded", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
    "PostToolUseFailure", "PostToolBatch", "Notification", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
    "PreCompact", "PostCompact", "SessionEnd", "PermissionDenied",
    "PreModelSwitch", "PostModelSwitch", "DirectoryAdded", "CwdChanged",
    "Elicitation", "ElicitationResult", "TaskCreated", "TaskCompleted",
    "UserPromptExpansion", "PreSkillShellCommand", "ConfigChange", "FileChanged", "Setup",
    "WorktreeCreate", "WorktreeRemove", "MessageDisplay",
)

# Claude Code's events loopwright never fires, and why (a hook on one is named once as a run starts).
UNFIRED_EVENTS = {
    "TeammateIdle": "there are no agent teams (Claude Code's are behind CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1)",
}
# ConfigChange sources Claude Code has and loopwright never reports (a matcher naming one is named once).
UNFIRED_CONFIG_SOURCES = {
    "policy_settings": "a change to the managed settings fires nothing (they are read as each run starts)",
    "skills": "skills are read once, when a run starts",
}
DEFAULT_TIMEOUT = 60.0


@dataclass(slots=True, eq=False)  # (identity: one run's context)
class HookContext(Generic[DepsT]):
    """Fields every hook input carries (Claude Code's stdin JSON); `deps`, typed as `HookContext[Deps]`."""

    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    permission_mode: str = "default"
    deps: DepsT = None  # type: ignore[assignment]  # AgentOptions.deps: a Python hook's third argument carries them (never sent to a command hook)
    judge: Any = None  # hooks.external.Judge: the run's model for prompt and agent hooks (set by the assembler)
    mcp: Any = None  # hooks.external.McpCaller: the run's MCP servers for mcp_tool hooks (set by the assembler)


_NO_MATCHERS: Mapping[str, tuple[RegisteredMatcher, ...]] = MappingProxyType({})

_NO_ENV: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True, eq=False, repr=False)  # (frozen: shared by runs; identity, callables)
class HookRegistry:
    """What hooks are configured for a run (settings files, SDK callbacks, code), per event, and
    the extra environment of command hooks. Built once by the assembler (`Hooks.freeze()`, merged
    with the settings by runconfig.build_run_config) and never changed: the run's state is apart,
    in HookState."""

    matchers: Mapping[str, tuple[RegisteredMatcher, ...]] = field(default_factory=lambda: _NO_MATCHERS)
    env: Mapping[str, str] = field(default_factory=lambda: _NO_ENV)
    # Any hook at all: known once (the registry never changes), asked several times a turn.
    active: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "active", any(self.matchers.values()))

    def unfired(self) -> list[str]:
        """One line per event that has hooks but that loopwright never fires (a Claude Code event
        it does not have): they are kept, never run, and named."""
        out = []
        for event, ms in self.matchers.items():
            n = sum(len(m.hooks) for m in ms)
            if n and event not in HOOK_EVENTS:
                why = UNFIRED_EVENTS.get(event, "not a Claude Code event")
                out.append(f"hook event {event}: loopwright never fires it ({why}); its {n} hook{'s' * (n != 1)} "
                           "will not run")
        for m in self.matchers.get("ConfigChange", ()):
            for source in (m.matcher or "").split("|"):
                never = UNFIRED_CONFIG_SOURCES.get(source.strip())
                if never is not None:
                    out.append(f"hook event ConfigChange, matcher {source.strip()!r}: never fires in loopwright ({never})")
        return out

    def with_env(self, env: Mapping[str, str]) -> HookRegistry:
        """The same hooks, their environment updated with `env`."""
        return HookRegistry(self.matchers, MappingProxyType({**self.env, **env}))

    def jobs(self, event: str, target: str | None, tool_input: dict[str, Any] | None = None,
             done: set[str] | None = None, cwd: str = "") -> list[tuple[HookCallback | ConfiguredHook, float]]:
        """The hooks an event runs, each with its timeout: the matchers that match `target`
        (events without a target, UserPromptSubmit and Stop, ignore matchers); identical hooks
        run once (as Claude Code does); a hook's `if` rule must match the tool call; a `once`
        hook already in `done` (the run's) is left out, and added to it when it runs."""
        matchers = self.matchers.get(event)
        if not matchers:
            return []
        from .kinds import CONFIGURED_HOOKS  # (this event has hooks: the kinds are loaded by now)

        jobs: list[tuple[HookCallback | ConfiguredHook, float]] = []
        seen: set[str] = set()
        for m in matchers:
            if target is not None and not matcher_matches(m.matcher, target):
                continue
            for h in m.hooks:
                if isinstance(h, CONFIGURED_HOOKS):
                    if h.key in seen or (h.once and done is not None and h.key in done):
                        continue
                    if h.if_rule is not None and not if_matches(h.if_rule, target, tool_input, cwd):
                        continue
                    seen.add(h.key)
                    if h.once and done is not None:
                        done.add(h.key)
                    timeout = h.timeout or m.timeout or DEFAULT_TIMEOUT
                else:
                    timeout = m.timeout or DEFAULT_TIMEOUT
                jobs.append((h, float(timeout)))
        return jobs
