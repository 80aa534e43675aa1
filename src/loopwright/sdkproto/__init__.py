"""Room: cli (the Agent SDK protocol, beside the cli). Owns Claude Code's stream-json control protocol, which the
official Agent SDKs speak to their CLI; may import cli.config, cli.headless, loop and below.

    ClaudeAgentOptions(cli_path=".venv/bin/loopwright", ...)             # Python SDK
    query({prompt, options: {pathToClaudeCodeExecutable: "loopwright"}})  # TypeScript SDK

`loopwright --output-format stream-json --verbose --input-format stream-json [Claude Code's flags]`
(the cli enters here when `--input-format stream-json` is given). Modules: `flags` (the command
line as AgentOptions), `peer` (the NDJSON channel and the requests loopwright sends the SDK:
can_use_tool, hook_callback, mcp_message), `session` (stdin, the SDK's control requests, the
runs), `wire` (loopwright's messages in Claude Code's stdout shapes).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (asyncio and logging at sdk_main: the cli asks wants_protocol before `--version`)
    import argparse

    from .flags import SdkFlags


def wants_protocol(argv: Sequence[str]) -> bool:
    """Does this command line ask for the Agent SDK protocol (`--input-format stream-json`)?"""
    for i, a in enumerate(argv):
        if a == "--input-format" and i + 1 < len(argv) and argv[i + 1] == "stream-json":
            return True
        if a == "--input-format=stream-json":
            return True
    return False


def sdk_main(argv: Sequence[str], parser: argparse.ArgumentParser) -> int:
    """The protocol front end: exit 0 when stdin ends after successful runs, 1 after an error
    result or a flag it cannot honour (said on stderr, naming the flag). `parser`: the cli's, with
    loopwright's run options, to which the Claude Code flags are added."""
    import asyncio
    import logging

    from .flags import FlagError, parse

    try:
        flags = parse(list(argv), parser)
    except (FlagError, ValueError, TypeError) as e:
        print(f"loopwright: {e}", file=sys.stderr, flush=True)
        return 1
    for n in flags.notes:
        print(f"loopwright: {n}", file=sys.stderr, flush=True)
    if flags.debug_file:
        logging.basicConfig(level=logging.DEBUG, filename=flags.debug_file)
    elif flags.debug:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    if flags.debug or flags.debug_file:
        logging.getLogger("loopwright.sdkproto").debug("argv: %s", " ".join(argv))
    return asyncio.run(_serve(flags))


async def _serve(flags: SdkFlags) -> int:
    import asyncio

    from ..children import Ending
    from ..protolines import fd_reader
    from .peer import Peer
    from .session import SdkSession

    # SIGTERM / SIGHUP: the running prompt is cancelled (its commands and MCP servers ended, its
    # transcript paired) and the process exits 128+signal, as Claude Code's does; within a bound
    # (children.py). A closed stdin is not that: the prompts read before it still run.
    task = asyncio.current_task()
    ending = Ending(lambda _: task.cancel() if task is not None else None).install()
    reader = await fd_reader(sys.stdin.fileno())  # (a pipe, or a file: `< lines.jsonl`)
    try:
        return await SdkSession(flags, Peer()).serve(reader)
    except asyncio.CancelledError:
        if not ending.received:
            raise
        return 128 + ending.received


__all__ = ["sdk_main", "wants_protocol"]
