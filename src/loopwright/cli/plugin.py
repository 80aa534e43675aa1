"""Room: cli. Owns `loopwright plugin` (Claude Code's `claude plugin`): marketplaces and installed
plugins; may import plugins and the rooms below cli, no other cli module but cli.args (its parser).

    loopwright plugin marketplace add DIR_OR_GIT_URL | marketplace list
    loopwright plugin install NAME[@MARKETPLACE]     # lists what it may run, then installs
    loopwright plugin list | enable NAME | disable NAME | remove NAME
"""

from __future__ import annotations

import argparse
import sys

from .args import Parser

USAGE = ("loopwright plugin marketplace add DIR_OR_GIT_URL | marketplace list | install NAME[@MARKETPLACE] | list | "
         "enable NAME | disable NAME | remove NAME")


# Each command and what it does (its line in `loopwright plugin --help`).
_ACTIONS = (
    ("marketplace add SOURCE", "add a marketplace: a directory or a git URL"),
    ("marketplace list", "list the marketplaces added"),
    ("install NAME[@MARKET]", "install a plugin (listing what it may run) and enable it"),
    ("list", "list the installed plugins"),
    ("enable NAME", "enable an installed plugin"),
    ("disable NAME", "disable an installed plugin"),
    ("remove NAME", "uninstall a plugin"),
)


def plugin_main(argv: list[str]) -> int:
    """`loopwright plugin ...`: exit 0, 1 when the plugin or marketplace cannot be used, 2 for bad usage."""
    from ..plugins import PluginError, store

    p = Parser(prog="loopwright plugin", usage=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter,
               description="Manage Claude Code plugins (docs/plugins.md; --plugin-dir DIR loads one for a run).\n\n"
                           "commands:\n" + "\n".join(f"  {name:<24}{does}" for name, does in _ACTIONS))
    p.add_argument("action", choices=("marketplace", "install", "list", "enable", "disable", "remove", "uninstall"),
                   help="one of the commands above (uninstall is remove)")
    p.add_argument("rest", nargs="*", metavar="ARG", help="the command's arguments: a NAME, or add DIR_OR_GIT_URL")
    args = p.parse_args(argv)
    try:
        if args.action == "marketplace":
            return _marketplace(args.rest)
        if args.action == "list":
            rows = store.listing()
            for r in rows:
                print(f"{r['id']}\t{'enabled' if r['enabled'] else 'disabled'}\t{r['path']}")
            if not rows:
                print("no plugins installed (loopwright plugin install NAME@MARKETPLACE)")
            return 0
        if len(args.rest) != 1:
            print(f"loopwright plugin {args.action}: name one plugin (NAME or NAME@MARKETPLACE)", file=sys.stderr)
            return 2
        spec = args.rest[0]
        if args.action == "install":
            plugin, runs = store.install(spec)
            print(f"installed {plugin.source} ({plugin.root}), enabled")
            for line in runs or ["nothing (no hooks, no MCP servers)"]:
                print(f"  it may run: {line}")
        elif args.action in ("enable", "disable"):
            print(f"{store.set_enabled(spec, args.action == 'enable')} {args.action}d")
        else:
            print(f"{store.remove(spec)} removed")
        return 0
    except BrokenPipeError:
        raise  # (the reader of `plugin list | head` left: main ends quietly, as for every command)
    except (PluginError, OSError) as e:
        print(f"loopwright: {e}", file=sys.stderr)
        return 1


def _marketplace(rest: list[str]) -> int:
    from ..plugins import store

    if rest[:1] == ["add"] and len(rest) == 2:
        name, plugins = store.add_marketplace(rest[1])
        print(f"marketplace {name}: {', '.join(plugins) or 'no plugins'}")
        return 0
    if rest == ["list"]:
        for name, info in store.marketplaces().items():
            print(f"{name}\t{info.get('kind')}\t{info.get('source')}")
        return 0
    print("loopwright plugin marketplace add DIR_OR_GIT_URL | marketplace list", file=sys.stderr)
    return 2
