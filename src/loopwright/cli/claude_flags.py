"""Room: cli. Owns Claude Code's command line as loopwright reads it: the flags it honours with Claude
Code's meaning, the ones it refuses by name (one line each), Claude Code's subcommands it does not
have; may import cli.config and the rooms below cli, never another cli module but cli.config.

Every flag of `claude --help` (2.1.332; tests/fixtures/claude_code_help.txt) is either an option
of the `loopwright` parser with Claude Code's meaning, or in REFUSED / STREAM_ONLY here: then
argparse still takes it (so the error is this module's one line naming it, never argparse's
usage dump) and `refusal` names it. tests/cli/test_claude_flags.py walks the help text and fails
on a flag that is neither.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # logging is imported by --debug only (loopwright --version stays light)
    import logging

from .config import UsageError

# Claude Code's flags loopwright does not have, and what it does instead (exit 2, one line).
REFUSED: dict[str, str] = {
    "--autocompact": "the auto-compaction window is the model's context window (--context-window N sets it)",
    "--ax-screen-reader": "no screen-reader rendering (-p's text output is plain text)",
    "--background": "no background sessions (run it under nohup, or `loopwright batch`)",
    "--bg": "no background sessions (run it under nohup, or `loopwright batch`)",
    "--brief": "no SendUserMessage tool",
    "--chrome": "no Claude in Chrome",
    "--cloud": "no cloud sessions (it runs here)",
    "--desktop": "no desktop app",
    "--disable-slash-commands": "skills and custom commands come from the setting sources (--setting-sources '' "
                                "turns them off with the settings files)",
    "--environment": "no cloud sessions (it runs here)",
    "--exclude-dynamic-system-prompt-sections": "the system prompt is loopwright's own (--system-prompt replaces it)",
    "--file": "no Files API downloads (put the files in the working directory)",
    "--from-pr": "no sessions linked to pull requests (--resume ID)",
    "--ide": "no IDE connection (`loopwright acp` serves editors)",
    "--name": "sessions have no display names (`loopwright sessions list` shows their first prompts)",
    "--plugin-url": "no plugins fetched from URLs (--plugin-dir DIR, or `loopwright plugin install`)",
    "--prompt-suggestions": "no prompt suggestions",
    "--remote-control": "no Remote Control",
    "--remote-control-session-name-prefix": "no Remote Control",
    "--restricted": "no restricted mode (--tools and --setting-sources narrow what a run has)",
    "--safe-mode": "no safe mode (--bare, --setting-sources '' and --strict-mcp-config leave customizations out)",
    "--system-prompt-snapshot": "the system prompt is made at each start (a resumed session gets today's)",
    "--teleport": "no teleport sessions",
    "--tmux": "no tmux or iTerm2 session is opened for a worktree (--worktree works without it)",
}
SHORT = {"-n": "--name"}  # short forms of refused flags
# Flags of the Agent SDK's stream-json protocol: they work there (sdkproto/), and only there.
STREAM_ONLY = ("--replay-user-messages", "--include-hook-events", "--permission-prompt-tool")
# Claude Code's subcommands: `loopwright NAME` says what to use instead.
COMMANDS: dict[str, str] = {
    "agents": "no background agents", "attach": "no background sessions", "logs": "no background sessions",
    "stop": "no background sessions", "kill": "no background sessions", "rm": "no background sessions",
    "respawn": "no background sessions", "auth": "no login (ANTHROPIC_API_KEY, or apiKeyHelper in settings)",
    "setup-token": "no login (ANTHROPIC_API_KEY, or apiKeyHelper in settings)",
    "auto-mode": "no auto mode", "doctor": "no doctor (`loopwright --version`; errors name their cause)",
    "gateway": "no gateway", "import": "no config import (it reads Claude Code's files with --claude-settings)",
    "install": "no native build (pip install -U loopwright)", "update": "no self-update (pip install -U loopwright)",
    "upgrade": "no self-update (pip install -U loopwright)", "purge": "no purge (`loopwright sessions` lists them)",
    "ultrareview": "no cloud review",
}
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")


def add_claude_flags(p: argparse.ArgumentParser) -> None:
    """Claude Code's flags that loopwright honours beyond its own options, and the refused ones
    (taken with or without a value, so `refusal` can name them)."""
    p.add_argument("--dangerously-skip-permissions", action="store_true",
                   help="the same as --permission-mode bypassPermissions")
    p.add_argument("--allow-dangerously-skip-permissions", action="store_true",
                   help="accepted: bypassPermissions needs no second flag in loopwright")
    p.add_argument("--tools", nargs="+", default=None, metavar="TOOLS",
                   help="the built-in tools offered: \"\" for none, \"default\", or names (\"Bash,Edit,Read\")")
    p.add_argument("--system-prompt-file", metavar="FILE", help="the system prompt, read from FILE")
    p.add_argument("--append-system-prompt-file", metavar="FILE", help="text added to the system prompt, from FILE")
    p.add_argument("-d", "--debug", nargs="?", const="", default=None, metavar="FILTER",
                   help="debug logs on stderr; FILTER: categories (logger names) such as hooks,mcp or !hooks")
    p.add_argument("--debug-file", metavar="PATH", help="debug logs to PATH (turns debug on)")
    p.add_argument("--input-format", choices=("text", "stream-json"), default="text",
                   help="stream-json: the Agent SDK protocol on stdin/stdout (with --output-format stream-json)")
    p.add_argument("--permission-prompts", choices=("host", "none"), default="host",
                   help="none: what would ask is refused (-p never has anyone to ask)")
    p.add_argument("--forward-subagent-text", action="store_true",
                   help="accepted: subagents' messages always carry parent_tool_use_id in stream-json")
    p.add_argument("--no-chrome", action="store_true", help="accepted: there is no Claude in Chrome to turn off")
    p.add_argument("--plugin-dir", dest="plugin_dirs", action="append", default=[], metavar="DIR",
                   help="load a plugin from DIR for this run (a folder of plugins: each child); repeatable")
    p.add_argument("-w", "--worktree", nargs="?", const="", default=None, metavar="NAME",
                   help="start the session in a new git worktree, .claude/worktrees/NAME on branch worktree-NAME "
                        "(a random name when none is given; a WorktreeCreate hook may make it instead)")
    p.add_argument("--betas", nargs="+", metavar="BETA", help="accepted and said: no beta headers are sent")
    for flag in (*REFUSED, *STREAM_ONLY):
        names = [flag, *[s for s, long in SHORT.items() if long == flag]]
        p.add_argument(*names, nargs="?", const="", default=None, dest=dest(flag), metavar="X",
                       help=argparse.SUPPRESS)


def dest(flag: str) -> str:
    """The argparse destination of a table flag."""
    return "cc_" + flag.lstrip("-").replace("-", "_")


# Claude Code 2.1.332's words (its exit code is 1, loopwright's for bad usage 2): stream-json is the
# full message stream, which Claude Code writes only with --verbose; a script that leaves it out
# would run under loopwright and fail under Claude Code, so it is refused here too.
NEEDS_VERBOSE = "When using --print, --output-format=stream-json requires --verbose"


def refusal(args: argparse.Namespace, protocol: bool = False) -> str | None:
    """The one line refusing the first Claude Code flag given that loopwright does not have, or
    -p's (or the Agent SDK protocol's) --output-format stream-json without --verbose."""
    for flag, what in REFUSED.items():
        if getattr(args, dest(flag), None) is not None:
            return f"{flag} is not supported by loopwright: {what}"
    if (getattr(args, "output_format", None) == "stream-json" and not getattr(args, "verbose", False)
            and (protocol or getattr(args, "prompt", None) is not None)):
        return NEEDS_VERBOSE
    if not protocol:
        for flag in STREAM_ONLY:
            if flag == "--include-hook-events" and getattr(args, "output_format", None) == "stream-json":
                continue  # -p --output-format stream-json: hook_started / hook_response lines (cli.config)
            if getattr(args, dest(flag), None) is not None:
                return (f"{flag} works only in the Agent SDK protocol (--input-format stream-json --output-format "
                        "stream-json)")
    return None


def command_refusal(word: str) -> str | None:
    """`loopwright doctor` and the like: Claude Code's subcommand, and what to use instead."""
    what = COMMANDS.get(word)
    return None if what is None else f"`{word}` is a Claude Code command loopwright does not have: {what}"


def resolve(args: argparse.Namespace) -> list[str]:
    """Claude Code's flags into loopwright's options (in `args`); notes for stderr. UsageError on bad input."""
    notes: list[str] = []
    if args.resume == "":  # `claude -r` alone opens a picker
        raise UsageError("-r/--resume without a session id: loopwright takes the id (`loopwright sessions list` shows "
                         "them; /resume in the interactive mode picks one)")
    if args.dangerously_skip_permissions:
        if args.permission_mode not in (None, "bypassPermissions"):
            raise UsageError(f"--dangerously-skip-permissions and --permission-mode {args.permission_mode} disagree: "
                             "give one")
        args.permission_mode = "bypassPermissions"
    if args.permission_mode == "manual":  # Claude Code's name for the default mode
        args.permission_mode = "default"
    if args.permission_mode is not None and args.permission_mode not in PERMISSION_MODES:
        raise UsageError(f"--permission-mode {args.permission_mode} is not supported by loopwright; use one of "
                         f"{', '.join(PERMISSION_MODES)}")
    for flag, attr in (("--system-prompt-file", "system_prompt"), ("--append-system-prompt-file", "append_system_prompt")):
        path = getattr(args, attr + "_file")
        if path is None:
            continue
        if getattr(args, attr) is not None:
            raise UsageError(f"{flag} and --{attr.replace('_', '-')} both give it: use one")
        try:
            setattr(args, attr, Path(path).expanduser().read_text(encoding="utf-8"))
        except OSError as e:
            raise UsageError(f"{flag} {path}: {e.strerror or e}") from None
    if args.model:
        from ..models.catalog import resolve_alias  # Claude Code's "sonnet" / "opus" / "haiku"

        args.model = resolve_alias(args.model)
    if args.tools is not None:  # `--tools Bash Edit` or `--tools "Bash,Edit"`: one spec
        args.tools = ",".join(args.tools)
        notes += _unknown_tools(args.tools)
    if args.betas:
        notes.append("--betas is accepted and ignored: loopwright sends no beta headers of yours")
    return notes


def _unknown_tools(spec: str) -> list[str]:
    """The note for --tools names loopwright has no built-in tool for (Claude Code has more)."""
    from ..tools.builtin import default_tools
    from .config import offered_tools

    notes: list[str] = []
    offered_tools(default_tools(tasks=True), spec, {"Agent", "Task"}, notes)
    return notes


def setup_debug(spec: str | None, path: str | None) -> None:
    """`--debug [FILTER]` / `--debug-file PATH`: loopwright's debug logs on stderr or in PATH (0600).
    FILTER: comma-separated categories, each the part of a logger's name after `loopwright.`
    (`hooks`, `mcp`, `sdkproto`...); `!name` leaves one out."""
    if spec is None and path is None:
        return
    import logging
    import os

    if path is not None:
        from ..home import open_private

        handler: logging.Handler = logging.StreamHandler(os.fdopen(open_private(Path(path)), "a", encoding="utf-8"))
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[debug] %(name)s: %(message)s"))
    cats = [c.strip() for c in (spec or "").split(",") if c.strip()]
    if cats:
        handler.addFilter(category_filter(cats))
    root = logging.getLogger("loopwright")
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)


def category_filter(cats: list[str]) -> Callable[[logging.LogRecord], bool]:
    """Claude Code's `--debug=hooks,mcp` / `--debug='!hooks'`, on loopwright's logger names."""
    want = [c for c in cats if not c.startswith("!")]
    skip = [c[1:] for c in cats if c.startswith("!")]

    def keep(record: logging.LogRecord) -> bool:
        parts = record.name.split(".")[1:]
        if any(s in parts for s in skip):
            return False
        return not want or any(w in parts for w in want)

    return keep


def compat_rows(parser: argparse.ArgumentParser) -> list[tuple[str, str, str]]:
    """(kind, name, loopwright's status) for this room's part of the Claude Code compatibility
    table: every flag of `parser` (cli.build_parser()), Claude Code's commands, the agent files'
    and output styles' front-matter keys. "honoured", or "refused: what loopwright does instead"."""
    from ..agentfiles import HONOURED
    from ..agentfiles import REFUSED as AGENT_REFUSED
    from ..outputstyles import KNOWN_KEYS

    rows: list[tuple[str, str, str]] = []
    for a in parser._actions:
        if not a.option_strings:
            continue
        flag = max(a.option_strings, key=len)
        refused = REFUSED.get(flag)
        said = a.help if isinstance(a.help, str) and a.help != argparse.SUPPRESS else ""
        status = (f"refused: {refused}" if refused is not None else
                  "honoured with --output-format stream-json: hook_started / hook_response lines"
                  if flag == "--include-hook-events" else
                  "only in the Agent SDK protocol (--input-format stream-json)" if flag in STREAM_ONLY else
                  f"honoured: {said}" if said else "honoured")
        rows.append(("flag", ", ".join(a.option_strings), status))
    rows += [("command", name, f"refused: {what}") for name, what in COMMANDS.items()]
    rows += [("command", "plugin", "honoured (loopwright plugin)"), ("command", "mcp", "honoured (loopwright mcp)")]
    rows += [("agent front matter", k, "honoured") for k in HONOURED]
    rows += [("agent front matter", k, f"refused: {what}") for k, what in AGENT_REFUSED.items()]
    rows += [("output style front matter", k, "honoured") for k in KNOWN_KEYS]
    return rows


def compat_markdown(rows: list[tuple[str, str, str]]) -> str:
    """docs/claude-code-flags.md: the rows as a Markdown table (tests/cli/test_claude_flags.py keeps
    the file equal to it, and says how to regenerate it)."""
    lines = ["# Claude Code's command line on loopwright", "",
             "Generated from `loopwright.cli.claude_flags.compat_rows` (the list tests/cli/test_claude_flags.py",
             "walks against `claude --help` 2.1.332): every flag and command, and the agent-file and",
             "output-style front-matter keys, with what loopwright does.", "",
             "| kind | name | loopwright |", "|---|---|---|"]
    lines += [f"| {kind} | `{name}` | {status.replace('|', '/')} |" for kind, name, status in rows]
    return "\n".join(lines) + "\n"


__all__ = ["COMMANDS", "compat_markdown", "compat_rows", "REFUSED", "STREAM_ONLY", "add_claude_flags", "command_refusal", "refusal", "resolve",
           "setup_debug"]
