"""Room: bases (hooks). Owns the hooks one configures: Claude Code's hook events (a hook may be
configured on), the kinds of hook (command, http, prompt/agent, mcp_tool, a Python callback),
matchers, and reading them from a settings file's `hooks`; may import gate.rules (an `if` rule is
checked where it is read).

Apart from hooks.config (the events and the frozen registry every run has) because a run without
hooks never needs these classes: this module is imported where hooks are registered, read or run,
so a plain `-p` run does not declare them (~18 M instructions of its start, issue 41)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

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

HookCallback: TypeAlias = Callable[..., Any]  # a Python hook: (input) or (input, tool_use_id, context)


@dataclass(slots=True)
class CommandHook:
    """A shell command hook (Claude Code's `{"type": "command", "command": ..., "timeout": s}`).
    `args`: the exec form (`command` run with these arguments, no shell). `if_rule`: a permission
    rule (`Bash(git *)`) the tool call must match for the hook to run. `once`: it runs once a run.
    `on_failure` "block": a hook that cannot start, times out or fails counts as exit 2.
    `background` (Claude Code's `async: true`): the hook starts and the event goes on without
    waiting; when it exits, its `systemMessage` and `additionalContext` reach the model with the
    next request (hooks.events.RunHooks.take_late); it decides nothing."""

    command: str
    timeout: float | None = None
    args: tuple[str, ...] | None = None
    if_rule: str | None = None
    once: bool = False
    on_failure: str = "continue"
    background: bool = False

    @property
    def key(self) -> str:
        """What makes two hooks the same one (identical commands run once)."""
        return "command\0" + self.command + "\0" + "\0".join(self.args or ())


@dataclass(slots=True)
class HttpHook:
    """Claude Code's `{"type": "http", "url": ...}`: the input POSTed as JSON, the response body
    read as a command's stdout (a 2xx status as exit 0; any other a non-blocking error).
    `$VAR`/`${VAR}` in a header value is filled from the environment for the names in
    `allowed_env_vars` only (any other is empty)."""

    url: str
    timeout: float | None = None
    headers: tuple[tuple[str, str], ...] = ()
    allowed_env_vars: tuple[str, ...] = ()
    if_rule: str | None = None
    once: bool = False
    on_failure: str = "continue"

    @property
    def key(self) -> str:
        return "http\0" + self.url


@dataclass(slots=True)
class ModelHook:
    """Claude Code's `{"type": "prompt" | "agent", "prompt": ...}`: a model judges the event
    (`$ARGUMENTS` in the prompt is the input JSON) and answers `{"ok": bool, "reason": str}`;
    ok false blocks (and ends the turn unless `continue_on_block`). "agent": a subagent with
    the read-only tools that may look before it answers. `model` None: the run's model."""

    prompt: str
    kind: str = "prompt"  # "prompt" | "agent"
    timeout: float | None = None
    model: str | None = None
    continue_on_block: bool = False
    if_rule: str | None = None
    once: bool = False
    on_failure: str = "continue"

    @property
    def key(self) -> str:
        return f"{self.kind}\0{self.model}\0{self.prompt}"


@dataclass(slots=True)
class McpToolHook:
    """Claude Code's `{"type": "mcp_tool", "server": ..., "tool": ..., "input": {...}}`: the tool
    of a configured MCP server called with `input` (`${path}` in a string is the value at that
    path of the hook's input JSON); its text answer read as a command's stdout, an error result
    as a failure (blocking with `onFailure: "block"`)."""

    server: str
    tool: str
    input: Mapping[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    if_rule: str | None = None
    once: bool = False
    on_failure: str = "continue"

    @property
    def key(self) -> str:
        import json

        return f"mcp_tool\0{self.server}\0{self.tool}\0" + json.dumps(self.input, sort_keys=True, default=str)


ConfiguredHook: TypeAlias = CommandHook | HttpHook | ModelHook | McpToolHook
CONFIGURED_HOOKS = (CommandHook, HttpHook, ModelHook, McpToolHook)


@dataclass
class HookMatcher:
    """Hooks for the calls whose tool name (or source/trigger/reason) the matcher matches:
    None, "" or "*" = all; `Bash`, `Edit|Write` = exact names; anything else a regex."""

    matcher: str | None = None
    hooks: list[HookCallback | ConfiguredHook] = field(default_factory=list)
    timeout: float | None = None  # default for the hooks in this matcher


@dataclass(frozen=True, slots=True)
class RegisteredMatcher:
    """One matcher of a HookRegistry: like HookMatcher, but frozen."""

    matcher: str | None
    hooks: tuple[HookCallback | ConfiguredHook, ...]
    timeout: float | None = None


# A hook's keys loopwright does not honour, and what it does instead: each is named once, where it is read.
REFUSED_HOOK_KEYS = {
    "statusMessage": "no spinner shows it",
    "cloud": "no cloud sessions",
    "holdsTools": "the hook runs and is waited for",
    "rewakeMessage": "an asyncRewake hook is waited for (as in Claude Code's -p), so nothing wakes the model later",
    "rewakeSummary": "an asyncRewake hook is waited for (as in Claude Code's -p), so nothing wakes the model later",
}
HOOK_TYPES = ("command", "http", "prompt", "agent", "mcp_tool")
_KEYS = {"command": {"type", "command", "args", "if", "shell", "timeout", "onFailure", "once", "async", "asyncRewake"},
         "http": {"type", "url", "if", "timeout", "onFailure", "headers", "allowedEnvVars", "once"},
         "prompt": {"type", "prompt", "if", "timeout", "model", "continueOnBlock", "once"},
         "agent": {"type", "prompt", "if", "timeout", "model", "once"},
         "mcp_tool": {"type", "server", "tool", "input", "if", "timeout", "onFailure", "once"}}


def parse_matchers(event: str, entries: Any, where: str, warnings: list[str]) -> list[HookMatcher] | None:
    """A settings file's `hooks.<event>` list (Claude Code's schema) as matchers; None (and a line in
    `warnings`) for an event Claude Code does not have. Raises ValueError, naming `where`, for a
    malformed entry. A hook of a type loopwright does not run, or a key it does not
    honour, is named in one line in `warnings` (the hook is left out, or runs without the key)."""
    if event not in CLAUDE_HOOK_EVENTS:
        import difflib  # (only for a settings file with an unknown event)

        close = difflib.get_close_matches(event, CLAUDE_HOOK_EVENTS, n=1, cutoff=0.75)
        meant = f"; did you mean {close[0]}?" if close else ""
        warnings.append(f"{where}: unknown hook event {event!r} (not one of Claude Code's{meant}); its hooks will "
                        "not run")
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
        hooks: list[Any] = []
        for h in entry["hooks"]:
            hook = _parse_hook(h, f"{where}: hooks.{event}", warnings)
            if hook is not None:
                hooks.append(hook)
        out.append(HookMatcher(matcher, hooks))
    return out


def _parse_hook(h: Any, where: str, warnings: list[str]) -> ConfiguredHook | None:
    if not isinstance(h, dict):
        raise ValueError(f"{where}: each hook must be an object like {{\"type\": \"command\"}}")
    kind = h.get("type", "command")
    if kind not in HOOK_TYPES:
        warnings.append(f"{where}: a hook of type {kind!r} is not supported by loopwright; it will not run")
        return None
    for key in sorted(set(h) - _KEYS[kind]):
        why = REFUSED_HOOK_KEYS.get(key, "not a key loopwright knows for this hook type")
        warnings.append(f"{where}: {kind} hook key {key!r} is ignored: {why}")
    common = _common_keys(h, kind, where)
    if kind == "command":
        return _command_hook(h, where, warnings, common)
    if kind == "http":
        return _http_hook(h, where, common)
    if kind == "mcp_tool":
        return _mcp_tool_hook(h, where, common)
    prompt = h.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"{where}: a {kind} hook needs a \"prompt\" string")
    return ModelHook(prompt, kind, model=_opt_str(h, "model", where), continue_on_block=h.get("continueOnBlock") is True,
                     **common)


def _common_keys(h: dict[str, Any], kind: str, where: str) -> dict[str, Any]:
    """The keys every hook type reads (timeout, if, once; onFailure but for an agent hook), checked."""
    timeout = h.get("timeout")
    if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0):
        raise ValueError(f"{where}: timeout must be a positive number of seconds")
    common: dict[str, Any] = {"timeout": float(timeout) if timeout is not None else None,
                              "if_rule": _opt_str(h, "if", where), "once": h.get("once") is True}
    if kind != "agent":
        common["on_failure"] = "block" if h.get("onFailure", "continue") != "continue" else "continue"
    if common["if_rule"] is not None:
        _check_rule(common["if_rule"], where)
    return common


def _command_hook(h: dict[str, Any], where: str, warnings: list[str], common: dict[str, Any]) -> CommandHook | None:
    cmd = h.get("command")
    if not isinstance(cmd, str) or not cmd.strip():
        raise ValueError(f"{where}: a command hook needs a \"command\" string")
    args = h.get("args")
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise ValueError(f"{where}: a command hook's \"args\" must be a list of strings")
    if h.get("shell", "bash") != "bash":
        warnings.append(f"{where}: shell {h.get('shell')!r} is not supported (loopwright runs hooks with sh); "
                        "the hook will not run")
        return None
    for key in ("async", "asyncRewake"):
        if h.get(key) is not None and not isinstance(h.get(key), bool):
            raise ValueError(f"{where}: a command hook's \"{key}\" must be true or false")
    # `asyncRewake` runs the hook and waits for it, as Claude Code does in -p and SDK sessions
    # (its exit 2 reaches the model as any hook's); only `async` runs it in the background.
    background = h.get("async") is True and h.get("asyncRewake") is not True
    return CommandHook(cmd, args=tuple(args) if args is not None else None, background=background, **common)


def _http_hook(h: dict[str, Any], where: str, common: dict[str, Any]) -> HttpHook:
    url = h.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"{where}: an http hook needs a \"url\" (http:// or https://)")
    headers = h.get("headers") or {}
    names = h.get("allowedEnvVars") or []
    if not (isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())):
        raise ValueError(f"{where}: an http hook's \"headers\" must be an object of strings")
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise ValueError(f"{where}: an http hook's \"allowedEnvVars\" must be a list of names")
    return HttpHook(url, headers=tuple((str(k), v) for k, v in headers.items()), allowed_env_vars=tuple(names),
                    **common)


def _mcp_tool_hook(h: dict[str, Any], where: str, common: dict[str, Any]) -> McpToolHook:
    server, tool, given = h.get("server"), h.get("tool"), h.get("input", {})
    if not (isinstance(server, str) and server and isinstance(tool, str) and tool):
        raise ValueError(f"{where}: an mcp_tool hook needs \"server\" and \"tool\" strings")
    if not isinstance(given, dict):
        raise ValueError(f"{where}: an mcp_tool hook's \"input\" must be an object")
    return McpToolHook(server, tool, given, **common)


def _opt_str(h: dict[str, Any], key: str, where: str) -> str | None:
    value = h.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where}: \"{key}\" must be a string")
    return value


def _check_rule(rule: str, where: str) -> None:
    from ..gate.rules import Rule  # the permission rule syntax `if` is written in

    try:
        Rule.parse(rule)
    except ValueError as e:
        raise ValueError(f"{where}: \"if\": {e}") from None
