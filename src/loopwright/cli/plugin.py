"""Room: cli. Owns `loopwright plugin` (Claude Code's `claude plugin`): marketplaces and installed
plugins; may import plugins and the rooms below cli, no other cli module but cli.args (its parser).

    loopwright plugin marketplace add DIR_OR_GIT_URL | marketplace list
    loopwright plugin install NAME[@MARKETPLACE]     # lists what it may run, then installs
    loopwright plugin list | enable NAME | disable NAME | remove NAME
"""

from __future__ import annotations

import sys

from .args import Parser

USAGE = ("loopwright plugin marketplace add DIR_OR_GIT_URL | marketplace list | install NAME[@MARKETPLACE] | list | "
         "enable NAME | disable NAME | remove NAME")


def plugin_main(argv: list[str]) -> int:
    """`loopwright plugin ...`: exit 0, 1 when the plugin or marketplace cannot be used, 2 for bad usage."""
    from ..plugins import PluginError, store

    p = Parser(prog="loopwright plugin", usage=USAGE)
    p.add_argument("action", choices=("marketplace", "install", "list", "enable", "disable", "remove", "uninstall"))
    p.add_argument("rest", nargs="*")
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
