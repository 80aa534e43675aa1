"""Room: cli. Owns `loopwright serve-scripted`'s entry; may import testing and cli.args.

The loopback server's command (testing/server.py) with the CLI's parser, so a mistake there is one
line and a pointer to `--help` like every other command's."""

from __future__ import annotations

from collections.abc import Sequence


def serve_scripted_main(argv: Sequence[str]) -> int:
    """`loopwright serve-scripted SCRIPT.json [--port N]`: serve a scripted model on loopback."""
    from ..testing.server import serve_main
    from .args import Parser

    return serve_main(argv, Parser)
