"""Room: cli. Owns `loopwright trust` and the interactive mode's trust dialog; may import trust,
options and cli.config.

    loopwright trust [DIR]        trust DIR (default: the current directory) from now on
    loopwright trust list         the trusted workspaces
    loopwright trust revoke DIR   forget one
    loopwright trust show [DIR]   what an untrusted run in DIR ignores

Trust is kept in $LOOPWRIGHT_HOME/trust.json (trust.py), by the workspace's real path.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .args import Parser
from .config import EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="loopwright trust", description=(
        "Trust a workspace: its project settings (hooks, env, allow rules, modes, extra directories, "
        "sandbox allowances), .mcp.json servers, skills' and commands' allowed-tools and memory imports "
        "from outside it are used only once you trust it. Before, they can only narrow what you allow."))
    p.add_argument("what", nargs="?", default=".", help="DIR to trust (default: .), or list | revoke | show")
    p.add_argument("dir", nargs="?", help="the directory for revoke / show")
    return p


def trust_main(argv: list[str]) -> int:
    from .. import trust

    args = _parser().parse_args(argv)
    try:
        if args.what == "list":
            ws = trust.trusted_workspaces()
            for path, info in ws.items():
                print(f"{path}\t{info.get('since', '')}")
            if not ws:
                print(f"no trusted workspaces ({trust.store_path()})", file=sys.stderr)
            return EXIT_OK
        if args.what == "revoke":
            if not args.dir:
                print("loopwright trust revoke: name the directory (see `loopwright trust list`)", file=sys.stderr)
                return EXIT_USAGE
            if not trust.revoke_dir(args.dir):
                print(f"loopwright trust: {args.dir} is not a trusted workspace", file=sys.stderr)
                return EXIT_RUN_ERROR
            print(f"no longer trusted: {Path(args.dir).expanduser().resolve()}")
            return EXIT_OK
        if args.what == "show":
            return _show(args.dir or ".")
        if args.dir:
            print("loopwright trust: one directory at a time", file=sys.stderr)
            return EXIT_USAGE
        real = trust.trust_dir(args.what)
        print(f"trusted: {real} (kept in {trust.store_path()}; `loopwright trust revoke {real}` undoes it)")
        return EXIT_OK
    except trust.TrustError as e:
        print(f"loopwright trust: {e}", file=sys.stderr)
        return EXIT_RUN_ERROR


def _options(cwd: str, claude: bool = False) -> Any:
    from ..options import AgentOptions

    return AgentOptions(cwd=str(Path(cwd).resolve()), setting_sources=["user", "project", "local"],
                        claude_settings=claude)


def _show(cwd: str) -> int:
    from ..settings import SettingsError
    from ..trust.review import review

    try:
        r = review(_options(cwd, claude=True))
    except (SettingsError, ValueError) as e:
        print(f"loopwright trust: {e}", file=sys.stderr)
        return EXIT_RUN_ERROR
    state = "trusted" if r.trusted else "not trusted"
    print(f"{r.workspace}: {state}")
    for line in r.lines():
        print(f"  {line}")
    if not r.trusted and not r.ignored:
        print("  nothing of this project is ignored: trusting it would change nothing now")
    return EXIT_OK


def trust_dialog(options: Any, ask: Callable[[str], str], say: Callable[[str], None]) -> Any:
    """The interactive mode's question, before anything of the project runs (no hook, MCP server
    or other project command has run when it is asked): when the workspace is not trusted and
    trusting it would change something, list what and ask. Yes: trusted from now on (the store).
    No (or no answer): the run goes on untrusted, each ignored item named. Returns the options."""
    from dataclasses import replace

    from ..trust import trust_dir
    from ..trust.review import review

    r = review(options)
    if r.trusted or not r.ignored:
        return options
    say(f"This folder's project files ask for more than you allow by default:  {r.workspace}")
    for i in r.ignored:
        say(f"  · {i.item}  ({Path(i.source).name})")
    say("Trust them only if you trust the people who wrote this repository: hooks, MCP servers and env run "
        "code and see your keys.")
    try:
        answer = ask("Trust this folder? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        trust_dir(r.workspace)
        say(f"  trusted: {r.workspace} (`loopwright trust revoke {r.workspace}` undoes it)")
        return replace(options, trust_workspace=True)
    for line in r.lines():
        say(f"  {line}")
    return replace(options, trust_workspace=False)
