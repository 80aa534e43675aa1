"""Room: cli (the Agent SDK protocol). Owns the Claude Code command line the Agent SDKs pass; may import
cli.config, cli.claude_flags and the rooms below cli.

The SDKs spawn their CLI with Claude Code's flags (never `-p`): this module reads them into the
same AgentOptions the `loopwright` command builds (cli.config.build_options), so a run here is
assembled exactly as one of `loopwright -p`. Every flag either works or fails with a message that
names it; none exits 2 as an unknown argument.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cli.claude_flags import refusal, resolve
from ..cli.config import UsageError, build_options, check_sessions
from ..options import AgentOptions

# Flags that change nothing loopwright does: accepted, and said so on stderr (never silently).
IGNORED = {
    "--thinking-display": "thinking blocks are passed on as the model sends them",
}
# Flags only the SDKs pass (not in `claude --help`) whose capability loopwright does not have: a
# clear error, exit 1. (Claude Code's documented flags: cli/claude_flags.py, shared with -p.)
UNSUPPORTED = {
    "--resume-session-at": "resuming part of a session",
    "--resume-drops-turn": "resuming part of a session",
    "--session-mirror": "session stores fed from the CLI's stdout (transcript_mirror)",
    "--task-budget": "task budgets",
    "--plugin-dir-no-mcp": "Claude Code plugins",
    "--sdk-url": "a remote SDK connection",
}
ALIASES = {"--allowed-tools": "--allowedTools", "--disallowed-tools": "--disallowedTools"}


class FlagError(Exception):
    """A flag the protocol front end cannot honour: printed as one line, exit code 1."""


@dataclass
class SdkFlags:
    """What the protocol itself reads from the command line (the rest goes into AgentOptions)."""

    options: AgentOptions
    ask_stdio: bool = False  # --permission-prompt-tool stdio: can_use_tool goes to the SDK
    partial: bool = False  # --include-partial-messages
    replay: bool = False  # --replay-user-messages: each prompt echoed with its uuid (rewind_files takes it)
    sdk_servers: list[str] = field(default_factory=list)  # {"type": "sdk"} names in --mcp-config
    debug: bool = False
    debug_file: str | None = None
    notes: list[str] = field(default_factory=list)  # accepted flags that change nothing, for stderr
    managed_in_initialize: bool = False  # --managed-settings-in-initialize: no prompt runs before they come


def build_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """loopwright's own run options (`p`, the cli's parser) plus the Claude Code flags only the SDKs pass."""
    p.prog = "loopwright (Agent SDK stream-json)"
    p.allow_abbrev = False  # a Claude Code flag loopwright lacks must not pass as a prefix of one it has
    p.add_argument("--max-thinking-tokens", type=int)
    p.add_argument("--debug-to-stderr", action="store_true")
    # The TypeScript SDK: wait for initialize, which carries these option fields (session.initialize).
    p.add_argument("--await-initialize", action="store_true")
    p.add_argument("--initialize-fields")
    # The TypeScript SDK's managedSettings (docs/managed-settings.md): as JSON, or in initialize.
    p.add_argument("--managed-settings", metavar="JSON")
    p.add_argument("--managed-settings-in-initialize", action="store_true")
    for flag, why in IGNORED.items():
        p.add_argument(flag, nargs="?", const="", dest=_dest(flag), metavar="X", help=f"accepted, changes nothing: {why}")
    for flag, what in UNSUPPORTED.items():  # (with or without a value: refused either way)
        p.add_argument(flag, nargs="?", const="", dest=_dest(flag), metavar="X",
                       help=f"not supported by loopwright: {what}")

    def fail(message: str) -> Any:
        raise FlagError(message)

    p.error = fail  # type: ignore[method-assign]  # argparse's own messages name the flag
    return p


def _dest(flag: str) -> str:
    return "x_" + flag.lstrip("-").replace("-", "_")


def parse(argv: list[str], parser: argparse.ArgumentParser) -> SdkFlags:
    """The SDK's argv as AgentOptions and the protocol's own settings; `parser`: the cli's, with
    loopwright's run options (cli.build_parser(); the cli hands it over). Raises FlagError."""
    argv = [ALIASES.get(a, a) for a in argv]
    args, extra = build_parser(parser).parse_known_args(argv)
    if extra:
        raise FlagError(f"unknown option {extra[0]!r}: it is not one of Claude Code's options that loopwright "
                        "takes (loopwright --input-format stream-json --help lists them)")
    for flag, what in UNSUPPORTED.items():
        if getattr(args, _dest(flag)) is not None:
            raise FlagError(f"{flag} is not supported by loopwright ({what})")
    if (said := refusal(args, protocol=True)) is not None:
        raise FlagError(said)
    notes = [f"{flag} is accepted and ignored: {why}" for flag, why in IGNORED.items()
             if getattr(args, _dest(flag)) is not None]
    if args.input_format != "stream-json" or args.output_format != "stream-json":
        raise FlagError("the Agent SDK protocol needs --input-format stream-json --output-format stream-json")
    if args.prompt not in (None, "-") or args.prompt_arg is not None:
        raise FlagError("a prompt does not go with --input-format stream-json: prompts arrive as user lines on stdin "
                        "(-p alone is fine)")
    try:
        notes += resolve(args)
    except UsageError as e:
        raise FlagError(str(e)) from None
    ask_stdio = False
    tool = args.cc_permission_prompt_tool
    if tool is not None:
        if tool != "stdio":
            raise FlagError(f"--permission-prompt-tool {tool}: loopwright asks only over "
                            "the protocol (--permission-prompt-tool stdio, the SDK's can_use_tool)")
        ask_stdio = args.permission_prompts == "host"  # none: what would ask is refused
    if args.max_thinking_tokens is not None and args.thinking is None:
        args.thinking = "disabled" if args.max_thinking_tokens == 0 else str(args.max_thinking_tokens)
    args.mcp_config, sdk_servers = split_sdk_servers(args.mcp_config)
    from ..models.catalog import resolve_alias  # Claude Code's "sonnet" / "opus" / "haiku"

    if args.fallback_model:
        args.fallback_model = ",".join(resolve_alias(m) for m in args.fallback_model.split(","))
    args.rules_named_by_run = True  # (a typo'd allowed_tools rule: named once, by the run, as the SDK's option)
    try:
        options = build_options(args)
        if (said := check_sessions(options)) is not None:
            notes.append(said)
    except UsageError as e:
        raise FlagError(str(e)) from None
    options.managed_settings = managed_flag(args)
    options.refusal_advice = "python"  # a refusal names the SDK's option fields (allowed_tools=[...]), not flags
    # As the SDK's CLI, loopwright is Claude Code: its setting sources are Claude Code's files
    # (~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json) besides loopwright's own.
    options.claude_settings = True
    return SdkFlags(options, ask_stdio=ask_stdio, partial=args.include_partial_messages, sdk_servers=sdk_servers,
                    replay=args.cc_replay_user_messages is not None,
                    debug=bool(args.debug_to_stderr or args.debug is not None),
                    debug_file=args.debug_file, notes=notes,
                    managed_in_initialize=args.managed_settings_in_initialize)


def managed_flag(args: argparse.Namespace) -> dict[str, Any] | None:
    """--managed-settings' object (FlagError: not a JSON object, or with --managed-settings-in-initialize,
    which needs --await-initialize: Claude Code's rules)."""
    if args.managed_settings_in_initialize:
        if not args.await_initialize or args.managed_settings is not None:
            raise FlagError("--managed-settings-in-initialize requires --await-initialize and cannot be used with "
                            "--managed-settings")
        return None
    if args.managed_settings is None:
        return None
    try:
        data = json.loads(args.managed_settings)
    except json.JSONDecodeError as e:
        raise FlagError(f"--managed-settings: invalid JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
    if not isinstance(data, dict):
        raise FlagError("--managed-settings must be a JSON object of settings")
    return data


def split_sdk_servers(values: list[str]) -> tuple[list[str], list[str]]:
    """--mcp-config values without their `{"type": "sdk"}` entries (in-process servers that live in
    the SDK's process, reached with mcp_message), and those entries' names."""
    rest: list[str] = []
    sdk: list[str] = []
    for v in values:
        try:
            text = v if v.lstrip().startswith("{") else Path(v).expanduser().read_text()
            data = json.loads(text)
        except (OSError, ValueError):
            rest.append(v)  # the usual reader reports it
            continue
        servers = data.get("mcpServers", data) if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            rest.append(v)
            continue
        mine = [n for n, s in servers.items() if isinstance(s, dict) and s.get("type") == "sdk"]
        sdk += mine
        others = {n: s for n, s in servers.items() if n not in mine}
        if others:
            rest.append(json.dumps({"mcpServers": others}))
    return rest, sdk
