"""Room: mcp. Owns starting a stdio server's process before the MCP SDK is imported, and handing it to the SDK.

Importing the official `mcp` SDK takes ~0.5 s of CPU (its client, its server half and ~550
pydantic models), and its `stdio_client` spawns the server only after that. A server takes
about as long to start (a Python SDK server imports the same SDK; node, npx, uvx start a
runtime), so a run waited for the two one after the other. Now McpRuntime spawns each stdio
server first, exactly as the SDK's stdio_client spawns it on POSIX (`anyio.open_process` of
`[command, *args]` with the server's environment, cwd and stderr, in a new session), and the
SDK's spawn hands over that process when it is asked for the same thing: the server boots on
another core while the SDK loads.

The hand-over is keyed by the connection's stderr file (one per server: the file object itself,
held by the table until the connection is over, never its id(), which a later file may reuse once
the first is gone) and checked: if the
SDK asks for another command, arguments, environment or directory (a newer SDK computing them
differently), the early process is ended and the SDK spawns its own, as before. A process the
SDK never took (its import failed, the start was cancelled) is ended with its process group.
On Windows the SDK spawns the server itself (a Job Object), as before.

Every server's process group is owned (children.py) from its spawn until its connection is over:
loopwright ending, however it ends, ends the server too. The SDK's own shutdown (stdin closed, a
grace, then its process group terminated) cannot end a server when its task is cancelled under
it (asyncio.run's teardown does that), and a server that keeps its stdout open then held the
whole process (its stdout reader never ended).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from typing import Any

from ..children import disown, own, signal_group

log = logging.getLogger("loopwright.mcp")

# The stderr file (the object: a key holds it alive, so no other file can stand for it) ->
# (what was spawned, the process or the error its spawn raised); and -> the pid (= process group)
# of the process the SDK took.
_EARLY: dict[Any, tuple[tuple[Any, ...], Any]] = {}
_TAKEN: dict[Any, int] = {}


def enabled() -> bool:
    """Whether stdio servers are spawned early here (POSIX: the SDK's own spawn there is plain)."""
    return sys.platform != "win32"


def _key(command: str, args: list[str], env: dict[str, str] | None, cwd: Any) -> tuple[Any, ...]:
    return (command, tuple(args), tuple(sorted((env or {}).items())), None if cwd is None else str(cwd))


async def spawn(command: str, args: list[str], env: dict[str, str], cwd: str, errlog: Any) -> None:
    """Start the server's process now. A failure (a missing command, a NUL in an argument) is kept
    and raised where the SDK would raise it, when it asks for the process: it fails this server
    only, in its own task."""
    import anyio

    what = _key(command, args, env, cwd)
    try:
        process: Any = await anyio.open_process([command, *args], env=env, stderr=errlog, cwd=cwd,
                                                start_new_session=True)
    except Exception as e:  # noqa: BLE001 - handed to the SDK's spawn, which raises it in the server's task
        process = e
    else:
        own(process.pid, f"MCP server {command}")  # its own session: ended with loopwright (children.py)
    _EARLY[errlog] = (what, process)


def install() -> None:
    """Have the SDK's stdio_client take a process spawned here (once; the SDK imported)."""
    from mcp.client import stdio

    original = getattr(stdio, "_create_platform_compatible_process", None)
    if original is None or getattr(original, "loopwright_early", False):
        return

    async def create(command: str, args: list[str], env: dict[str, str] | None = None,
                     errlog: Any = sys.stderr, cwd: Any = None) -> Any:
        early = _EARLY.pop(errlog, None)
        if early is not None:
            what, process = early
            if what == _key(command, args, env, cwd):
                if isinstance(process, BaseException):
                    raise process
                _TAKEN[errlog] = process.pid
                return process
            log.info("an MCP server was spawned early with other arguments than the SDK's: spawned again")
            await _end(process)
        process = await original(command, args, env, errlog, cwd)
        if enabled():  # (POSIX: the SDK's spawn makes a new session too, so the pid is the group)
            own(process.pid, f"MCP server {command}")
            _TAKEN[errlog] = process.pid
        return process

    create.loopwright_early = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = create


async def discard(errlog: Any) -> None:
    """The server's connection is over: end a process spawned for it that the SDK never took, and
    whatever is left of the one it took (its shutdown ended it, unless that shutdown was cut short)."""
    early = _EARLY.pop(errlog, None)
    if early is not None:
        await _end(early[1])
    taken = _TAKEN.pop(errlog, None)
    if taken is not None:
        signal_group(taken, signal.SIGKILL)
        disown(taken)


async def _end(process: Any) -> None:
    if isinstance(process, BaseException):
        return
    signal_group(process.pid, signal.SIGKILL)  # its own session: the server and what it started
    import anyio

    with anyio.move_on_after(2, shield=True), contextlib.suppress(Exception):
        await process.aclose()
    disown(process.pid)
