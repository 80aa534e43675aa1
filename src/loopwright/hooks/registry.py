"""Room: bases (hooks). Owns registering hooks in code (`Hooks.on`, `Hooks.command`, the Agent
SDK's dict) and handing a run its own hooks; may import hooks.config, hooks.events and hooks.kinds
(the kinds of hook and matchers: imported where a hook is registered, so a run without hooks does
not load them, issue 41)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .config import HookContext, HookRegistry
from .events import HookState, RunHooks

if TYPE_CHECKING:
    from .kinds import HookCallback, HookMatcher


@dataclass(eq=False)  # (identity: a registry one or many runs are built from)
class Hooks(RunHooks):
    """Hooks as the user registers them (`on`, `command`, or the Agent SDK's dict). A run never
    uses this object: the assembler freezes it into the run's HookRegistry and gives the run its
    own HookState (`for_run`), so one Hooks may serve many runs at once and per-run state such as
    `continue: false` never crosses runs. Fired directly (after `bind`), it runs with its own state."""

    callbacks: dict[str, list[Any]] = field(default_factory=dict)
    context: HookContext = field(default_factory=HookContext)
    env: dict[str, str] = field(default_factory=dict)  # extra environment for command hooks

    def __post_init__(self) -> None:
        normalized: dict[str, list[HookMatcher]] = {}
        for event, entries in (self.callbacks or {}).items():  # (none: the kinds are not loaded)
            _check_event(event)
            if entries is not None and not isinstance(entries, (list, tuple)):
                raise TypeError(f"hooks[{event!r}] must be a list of HookMatcher, not {type(entries).__name__}; "
                                f"write hooks={{{event!r}: [HookMatcher(matcher=None, hooks=[...])]}} or use "
                                f"Hooks().on({event!r}, fn)")
            normalized[event] = [_as_matcher(e) for e in (entries or [])]
        self.callbacks = normalized
        self.state = HookState(self.context)
        self._frozen: HookRegistry | None = None  # set on a run's copy (for_run)

    # -- registration ----------------------------------------------------------------------------

    def on(self, event: str, callback: HookCallback | None = None, *, matcher: str | None = None,
           timeout: float | None = None) -> Any:
        """Register a callable; usable as `hooks.on("Stop", fn)` or as a decorator."""
        _check_event(event)
        from .kinds import HookMatcher

        def register(fn: HookCallback) -> HookCallback:
            self.callbacks.setdefault(event, []).append(HookMatcher(matcher, [fn], timeout))
            return fn

        return register(callback) if callback is not None else register

    def command(self, event: str, command: str, *, matcher: str | None = None,
                timeout: float | None = None) -> Hooks:
        """Register a shell command hook."""
        _check_event(event)
        from .kinds import CommandHook, HookMatcher

        self.callbacks.setdefault(event, []).append(HookMatcher(matcher, [CommandHook(command, timeout)]))
        return self

    def merged(self, other: Hooks | dict[str, Any] | None) -> Hooks:
        """A new Hooks with this one's hooks, then `other`'s (neither is changed)."""
        out = Hooks({e: list(ms) for e, ms in self.callbacks.items()}, env=dict(self.env))
        extra = other if isinstance(other, Hooks) else Hooks(other or {})
        for e, ms in extra.callbacks.items():
            out.callbacks.setdefault(e, []).extend(ms)
        out.env.update(extra.env)
        return out

    def freeze(self) -> HookRegistry:
        """The hooks registered so far, frozen (later registrations do not reach it)."""
        if not any(self.callbacks.values()):
            return HookRegistry(MappingProxyType({e: () for e in self.callbacks}), MappingProxyType(dict(self.env)))
        from .kinds import RegisteredMatcher

        matchers = {e: tuple(RegisteredMatcher(m.matcher, tuple(m.hooks), m.timeout) for m in ms)
                    for e, ms in self.callbacks.items()}
        return HookRegistry(MappingProxyType(matchers), MappingProxyType(dict(self.env)))

    @property
    def registry(self) -> HookRegistry:
        """What fires: a run's frozen registry, or (fired directly) the hooks registered so far."""
        return self._frozen if self._frozen is not None else self.freeze()

    @registry.setter
    def registry(self, value: HookRegistry) -> None:
        self._frozen = value

    @property
    def active(self) -> bool:
        """Any hook is registered (a run without hooks skips their machinery)."""
        return self._frozen.active if self._frozen is not None else any(self.callbacks.values())

    def for_run(self, context: HookContext, registry: HookRegistry | None = None) -> RunHooks:
        """One run's hooks: `registry` (this object's hooks, frozen, when not given) with a fresh
        HookState. A subclass keeps its behaviour: a copy of it runs (the caller's object is
        not changed)."""
        frozen = registry if registry is not None else self.freeze()
        if type(self) is Hooks:
            return RunHooks(frozen, HookState(context))
        mine = copy.copy(self)
        mine.registry, mine.state, mine.context = frozen, HookState(context), context
        return mine

    def bind(self, context: HookContext) -> None:
        """Fire this object's hooks directly (not in a run): its context, and fresh state."""
        self.context = context
        self.state = HookState(context)


def run_hooks(registry: HookRegistry, context: HookContext, given: object = None) -> RunHooks:
    """One run's hooks: `registry` (built once, by runconfig.build_run_config) fired with a fresh
    HookState. `given`: the caller's `AgentOptions.hooks`; a Hooks subclass keeps its behaviour."""
    if isinstance(given, Hooks):
        return given.for_run(context, registry)
    return RunHooks(registry, HookState(context))


def _check_event(event: str) -> None:
    """A name that is no Claude Code event is a mistake in the caller's code (a settings file's is
    a warning instead: settings.py). A Claude Code event loopwright does not fire is accepted and
    named when a run starts (HookRegistry.unfired)."""
    from .kinds import CLAUDE_HOOK_EVENTS

    if event not in CLAUDE_HOOK_EVENTS:
        raise ValueError(f"unknown hook event {event!r}; use one of {', '.join(CLAUDE_HOOK_EVENTS)}")


def _as_matcher(entry: Any) -> HookMatcher:
    from .kinds import CommandHook, HookMatcher

    if isinstance(entry, HookMatcher):
        entry.hooks = [CommandHook(h) if isinstance(h, str) else h for h in entry.hooks]
        return entry
    if isinstance(entry, (CommandHook, str)) or callable(entry):
        return HookMatcher(None, [CommandHook(entry) if isinstance(entry, str) else entry])
    raise TypeError(f"a hook must be a HookMatcher, a callable or a command string, not {type(entry).__name__}")

