"""Room: cli (the top). Owns the parser, the subcommand table and `main`, which picks the interactive
or the headless mode; may import every room. No other cli module imports it.

The `loopwright` command. Kept light: argparse only at import; everything else is
imported by the subcommand that needs it, so `loopwright --version` stays fast.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import itertools
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..extras import MissingExtra
from .args import Parser
from .claude_flags import add_claude_flags
from .config import EXIT_RUN_ERROR, EXIT_USAGE, UsageError, pause_gc, resume_gc

# One line per subcommand: name -> ("module:function", usage). The function takes the rest of
# the arguments and returns the exit code; its module is imported only when it runs.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("loopwright.cli.demo:demo_main", "demo"),
    "serve-scripted": ("loopwright.cli.serve_scripted:serve_scripted_main", "serve-scripted SCRIPT --port N"),
    "sessions": ("loopwright.cli.sessions:sessions_main", "sessions list|show ID"),
    "rewind": ("loopwright.cli.rewind:rewind_main", "rewind SESSION"),
    "view": ("loopwright.cli.view:view_main", "view [SESSION]"),
    "stats": ("loopwright.cli.view:stats_main", "stats [SESSION]"),
    "batch": ("loopwright.cli.batch:batch_main", "batch TASKS.jsonl -o RESULTS.jsonl"),
    "mcp": ("loopwright.cli.mcp:mcp_main", "mcp list|get|add|remove|serve"),
    "trust": ("loopwright.cli.trust:trust_main", "trust [DIR] | trust list | trust revoke DIR"),
    "acp": ("loopwright.acp:acp_main", "acp [OPTIONS]"),
    "plugin": ("loopwright.cli.plugin:plugin_main", "plugin list|install|enable|disable|remove|marketplace add"),
    "plugins": ("loopwright.cli.plugin:plugin_main", "plugins (the same as plugin)"),
}


def _terminal_width() -> int:
    """The width help is written for: shutil.get_terminal_size's rules, without its import (bz2,
    lzma, fnmatch: ~2 ms on every run's way, for a width only help uses)."""
    columns = os.environ.get("COLUMNS", "")
    if not columns.isdigit():
        try:
            columns = str(os.get_terminal_size(sys.__stdout__.fileno()).columns)  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = "80"
    return max(int(columns) - 2, 11)


def build_parser() -> Parser:
    """The options of a run (each subcommand parses its own arguments)."""
    p = Parser(
        # (argparse makes a formatter per option it adds, to check its metavar: the width is looked up once)
        prog="loopwright", formatter_class=functools.partial(argparse.HelpFormatter, width=_terminal_width()),
        description="The agent loop, done right. Run headless with -p, or interactively with no prompt.",
    )
    p.add_argument("-v", "--version", action="version", version=f"loopwright {__version__}")
    p.add_argument("-p", "--print", dest="prompt", nargs="?", const="-", default=None,
                   help="run headless on PROMPT (or on stdin when PROMPT is omitted or '-')")
    p.add_argument("prompt_arg", nargs="?", default=None, metavar="PROMPT",
                   help="the prompt, as Claude Code takes it: `loopwright \"fix it\" -p`")
    p.add_argument("--model", help="claude-... | openai:<model> | responses:<model> | scripted:<file.json> "
                                        "(default: $LOOPWRIGHT_MODEL, $ANTHROPIC_MODEL, the settings' \"model\")")
    p.add_argument("--base-url", help="API base URL (Anthropic or OpenAI-compatible server)")
    p.add_argument("--output-format", choices=("text", "json", "stream-json"), default="text")
    p.add_argument("--max-turns", type=int, help="limit on tool-use turns T (seed Def 3.1: at most T+1 model calls)")
    p.add_argument("--max-budget-usd", type=float)
    p.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools", nargs="+", action="extend", default=[],
                   help="tools (or rules) allowed without asking; comma or space separated, or several values")
    p.add_argument("--disallowedTools", "--disallowed-tools", dest="disallowed_tools", nargs="+", action="extend",
                   default=[])
    p.add_argument("--permission-mode", default=None, metavar="MODE",
                   help="default (Claude Code's manual) | acceptEdits | plan | bypassPermissions | dontAsk | auto "
                        "(a classifier call to the model judges what the rules would ask: docs/auto-mode.md)")
    p.add_argument("--system-prompt")
    p.add_argument("--append-system-prompt")
    p.add_argument("--cwd", help="working directory for the tools (default: the current directory)")
    p.add_argument("--add-dir", dest="add_dirs", nargs="+", action="extend", default=[],
                   help="more directories the tools may write to")
    p.add_argument("--settings", help="a settings JSON file, or a JSON string, read after the settings files")
    p.add_argument("--setting-sources", default="user,project,local",
                   help="which settings files to read: comma-separated user, project, local ('' for none)")
    p.add_argument("--context-window", type=int, metavar="N",
                   help="the model's context window W in tokens (compaction and the forecast use it)")
    p.add_argument("--max-tokens", type=int, metavar="N",
                   help="the output limit of each model call (default: the model catalog's for the model)")
    p.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT[,CACHE_WRITE,CACHE_READ]",
                   help="a model's price in USD per million tokens (repeatable), e.g. for --max-budget-usd "
                        "on a model outside the price table")
    p.add_argument("--effort", choices=("low", "medium", "high", "xhigh", "max"),
                   help="how hard the model thinks (sent as the model family takes it: output_config.effort, a "
                        "thinking budget, or reasoning_effort)")
    p.add_argument("--thinking", metavar="adaptive|disabled|N",
                   help="extended thinking: adaptive, disabled, or a budget of N tokens (>= 1024)")
    p.add_argument("--fallback-model", metavar="MODEL[,MODEL2...]",
                   help="models to switch to when the model is overloaded or unavailable after its retries")
    p.add_argument("--json-schema", help="structured output: the final answer must fit this JSON Schema "
                   "(a JSON string or file); printed as structured_output with --output-format json")
    p.add_argument("--bare", action="store_true",
                   help="minimal, as Claude Code's: no project memory (AGENTS.md, CLAUDE.md, LOOPWRIGHT.md), no hooks "
                        "from the settings files, no installed plugins (--settings, --plugin-dir, --mcp-config and "
                        "--agents still apply)")
    p.add_argument("--init", action="store_true",
                   help="run the Setup hooks (trigger init) before the session starts, then go on (Claude Code's)")
    p.add_argument("--init-only", action="store_true",
                   help="run the Setup (trigger init) and SessionStart (startup) hooks, then exit (no prompt, no model)")
    p.add_argument("--maintenance", action="store_true",
                   help="run the Setup hooks (trigger maintenance) before the session starts, then go on")
    p.add_argument("--claude-settings", action="store_true",
                   help="also read Claude Code's settings files (~/.claude, .claude/settings*.json)")
    p.add_argument("--trust", action="store_true",
                   help="trust this workspace's project settings, .mcp.json, skills and commands for this run "
                        "(`loopwright trust DIR` keeps it); untrusted, they can only narrow what you allow")
    p.add_argument("--sandbox", action="store_true",
                   help="run each Bash command in the OS sandbox (bubblewrap; the settings' \"sandbox\" object)")
    p.add_argument("--agents", help="subagent types for the Agent tool: a JSON object (or file) "
                   "{name: {description, prompt, tools?, model?, maxTurns?}}; general-purpose is always there")
    p.add_argument("--agent", help="run the main conversation as this agent (an --agents entry or an agent file "
                   "of .claude/agents/ or ~/.claude/agents/): its prompt, tools, model and permissionMode")
    p.add_argument("--mcp-config", dest="mcp_config", nargs="+", action="extend", default=[], metavar="FILE_OR_JSON",
                   help="MCP servers: JSON files or strings in Claude Code's {\"mcpServers\": {...}} format")
    p.add_argument("--strict-mcp-config", action="store_true",
                   help="use only the --mcp-config servers (not settings' mcpServers nor .mcp.json)")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--include-partial-messages", action="store_true")
    # sessions
    p.add_argument("-c", "--continue", dest="continue_conversation", action="store_true",
                   help="continue the latest session in this directory")
    p.add_argument("-r", "--resume", nargs="?", const="", metavar="SESSION_ID")
    p.add_argument("--fork-session", action="store_true")
    p.add_argument("--session-id")
    p.add_argument("--no-session-persistence", action="store_true")
    add_claude_flags(p)  # Claude Code's other flags: honoured, or refused by name (claude_flags.py)
    return p


def main_parser() -> Parser:
    """`build_parser()` as `loopwright --help` shows it (batch and acp start from build_parser with
    their own usage): a short usage first, as Claude Code's, not argparse's ~50 lines of every
    option, and the commands at the end, one a line."""
    p = build_parser()
    p.usage = "%(prog)s [OPTIONS] [-p] [PROMPT]\n       %(prog)s COMMAND ...  (the commands: at the end)"
    p.formatter_class = functools.partial(argparse.RawDescriptionHelpFormatter, width=_terminal_width())
    p.epilog = ("commands:\n" + "\n".join(f"  loopwright {usage}" for _, usage in SUBCOMMANDS.values())
                + "\n\n`loopwright COMMAND --help` shows a command's options.")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The `loopwright` command: a subcommand, an interactive session (no -p and a terminal
    on stdin) or one headless run. Returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the process is this one run (a caller of main(argv) keeps its collector)
        pause_gc()  # the headless run resumes it at the first model answer
        _OWN_PROCESS[0] = True
    try:
        return _dispatch(args_list)
    except (KeyboardInterrupt, BrokenPipeError, MissingExtra, UsageError, Exception) as e:
        return _ended(e, "--verbose" in args_list)
    finally:
        resume_gc()


_OWN_PROCESS = [False]  # main() runs as the process (not called by a program): it may change process-wide state


def _own_children() -> None:
    """A front end that is the process takes back the orphans of the commands it runs (a double-
    forked daemon), to end them with their call (children.want_subreaper); not before --help or
    --version (children.py loads asyncio)."""
    if _OWN_PROCESS[0]:
        from ..children import want_subreaper

        want_subreaper()


def _dispatch(args_list: list[str]) -> int:
    """Which front end runs: a subcommand, the Agent SDK protocol, the interactive or the headless mode."""
    from .claude_flags import command_refusal, refusal, resolve, setup_debug

    if args_list and args_list[0] in SUBCOMMANDS:
        resume_gc()
        _own_children()
        return run_subcommand(args_list[0], args_list[1:])
    if args_list and (said := command_refusal(args_list[0]) or _mistyped_command(args_list)) is not None:
        raise UsageError(said)
    from ..sdkproto import wants_protocol

    if wants_protocol(args_list):  # an Agent SDK drives this process (sdkproto/)
        from ..sdkproto import sdk_main

        _own_children()
        return sdk_main(args_list, build_parser())
    args = main_parser().parse_args(args_list)
    if (said := refusal(args)) is not None:
        raise UsageError(said)
    _own_children()
    for note in resolve(args):
        print(f"loopwright: {note}", file=sys.stderr)
    setup_debug(args.debug, args.debug_file)
    if args.debug is not None or args.debug_file is not None:
        import logging

        logging.getLogger("loopwright.cli").debug("argv: %s", args_list)
    if args.prompt_arg is not None:  # `loopwright "fix it" -p` (Claude Code's positional prompt)
        if args.prompt not in (None, "-"):
            raise UsageError(f"two prompts: -p {args.prompt!r} and {args.prompt_arg!r}; give one")
        if args.prompt is None and sys.stdin is not None and sys.stdin.isatty():
            raise UsageError("a prompt without -p would start Claude Code's interactive mode on it: loopwright runs "
                             "it with -p, or start `loopwright` and type it")
        args.prompt = args.prompt_arg
    if args.init_only:  # Claude Code's --init-only: the Setup and SessionStart hooks, then exit
        from .headless import init_only

        return init_only(args)
    if args.prompt is None and sys.stdin is not None and sys.stdin.isatty():
        resume_gc()
        from .interactive import interactive_main

        return interactive_main(args)
    from .headless import run_cli

    return run_cli(args)


def _mistyped_command(args_list: list[str]) -> str | None:
    """`loopwright veiw` / `sesions list`: a first word that is no subcommand but looks like one (close, or
    its letters swapped), with no -p to say it is a prompt. Unsaid, it went to the model as a prompt
    (stdin not a terminal) or ended in "unrecognized arguments: list"."""
    word = args_list[0]
    if word.startswith("-") or " " in word or "-p" in args_list or "--print" in args_list:
        return None
    import difflib  # (only on a positional prompt's way)

    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.75) or [
        name for name in SUBCOMMANDS if sorted(name) == sorted(word)]
    if not close:
        return None
    words = " ".join(a for a in itertools.takewhile(lambda a: not a.startswith("-"), args_list))
    return f"unknown command '{word}' (did you mean `loopwright {close[0]}`?); a prompt goes with -p: loopwright -p \"{words}\""


def _ended(e: BaseException, verbose: bool) -> int:
    """The exit code (and the one line on stderr) of a command that ended in `e`."""
    if isinstance(e, KeyboardInterrupt):
        print("\ninterrupted", file=sys.stderr)
        return 130
    if isinstance(e, BrokenPipeError):  # `loopwright ... | head`: the reader left; silence the final flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_RUN_ERROR
    if isinstance(e, MissingExtra):  # a feature whose optional extra is not installed: say which
        print(f"loopwright: {e}", file=sys.stderr)
        return 2
    if isinstance(e, UsageError):
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    if verbose:  # never a traceback for users: one line, the traceback with --verbose
        import traceback

        traceback.print_exception(e)
    else:
        print(f"loopwright: unexpected error: {type(e).__name__}: {e} (run with --verbose for the traceback)",
              file=sys.stderr)
    return EXIT_RUN_ERROR


def run_subcommand(name: str, rest: list[str]) -> int:
    """Import the subcommand's module and run its function on the remaining arguments."""
    module, _, function = SUBCOMMANDS[name][0].partition(":")
    entry = getattr(importlib.import_module(module), function)
    return int(entry(rest))
