"""Helpers the test files share: the blocks a scripted model answers with, running a query to
the end, the `loopwright` command as a subprocess, and waiting with a deadline (`until`,
`still_alive`), a loopback port held (`held_port`). (The autouse HOME / LOOPWRIGHT_HOME fixture is in conftest.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from loopwright.assemble import query
from loopwright.invariant import check
from loopwright.messages import ResultMessage
from loopwright.options import AgentOptions
from loopwright.tools.base import Tool, ToolContext

# The tests folder: node/, llama/, fixtures/ and the MCP test servers live here.
TESTS = Path(__file__).resolve().parent

# The installed console script; `python -c` on the package where it is missing.
LOOPWRIGHT_BIN = Path(sys.executable).parent / "loopwright"


def text(s: str) -> dict[str, Any]:
    """A text block, as a model writes it."""
    return {"type": "text", "text": s}


def use(uid: str, name: str, x: dict[str, Any] | None = None, /, **kw: Any) -> dict[str, Any]:
    """A tool_use block: its input is `x` and/or the keyword arguments."""
    return {"type": "tool_use", "id": uid, "name": name, "input": {**(x or {}), **kw}}


def bash(command: str, uid: str = "t1") -> dict[str, Any]:
    """A Bash tool_use block."""
    return use(uid, "Bash", {"command": command})


def result_text(block: dict[str, Any]) -> str:
    """The text of a tool_result block (its content is a string or a list of blocks)."""
    c = block["content"]
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c)


async def collect_async(prompt: str, options: AgentOptions, **kw: Any) -> list[Any]:
    """Every message of one query, in order (the last is the ResultMessage)."""
    return [m async for m in query(prompt, options, **kw)]


def collect(prompt: str, options: AgentOptions, **kw: Any) -> list[Any]:
    """`collect_async` on a fresh event loop."""
    return asyncio.run(collect_async(prompt, options, **kw))


async def interrupted(prompt: str, options: AgentOptions, ready: Callable[[], Awaitable[Any]]) -> Any:
    """Run a query under a RunControl, interrupt it once `ready()` returns, and give its last
    message (the ResultMessage)."""
    from loopwright.loop import RunControl

    control = RunControl()
    last: Any = None

    async def consume() -> None:
        nonlocal last
        async for m in query(prompt, options, control=control):
            last = m

    task = asyncio.ensure_future(consume())
    await ready()
    control.interrupt()
    await asyncio.wait_for(task, 30)
    return last


def classifier_action(history: list[dict[str, Any]]) -> str | None:
    """What the auto mode's classifier is asked to judge (the `<action>` of the last message that
    gate/auto.py sends), or None when the call is the agent's own: one scripted model serves both."""
    last = history[-1]["content"]
    prompt = last if isinstance(last, str) else "".join(b.get("text", "") for b in last if isinstance(b, dict))
    if "<action>" not in prompt:
        return None
    return prompt.split("<action>", 1)[1].split("</action>", 1)[0]


def verdict(decision: str, reason: str = "scripted") -> list[dict[str, Any]]:
    """The classifier's answer: its verdict tool called with `decision` (allow, ask or deny)."""
    return [{"type": "tool_use", "id": "v", "name": "verdict", "input": {"decision": decision, "reason": reason}}]


def loopwright_cmd() -> list[str]:
    """The command that runs the `loopwright` CLI in a subprocess."""
    if LOOPWRIGHT_BIN.exists():
        return [str(LOOPWRIGHT_BIN)]
    return [sys.executable, "-c", "import sys; from loopwright.cli import main; sys.exit(main())"]


def claude_code_env(url: str, home: str) -> dict[str, str]:
    """The environment for Claude Code (the reference CLI) offline against the loopback server at
    `url`, with its own HOME."""
    return {**os.environ, "HOME": home, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "any",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for a CLI subprocess (the one scrubber): no provider keys, loopwright,
    Claude Code or MCP settings from the caller's environment (HOME is the test's own, from
    conftest.py), plus `extra`. The workspace trust of conftest.py (LOOPWRIGHT_TRUSTED_DIRS) is kept."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "LOOPWRIGHT_", "MCP_", "OPENAI_"))
           or k == "LOOPWRIGHT_TRUSTED_DIRS"}
    env.update(extra)
    return env


def write_script(directory: Path, turns: list[Any], name: str = "script.json") -> str:
    """Write a scripted model's turns to directory/name; returns the `--model` spec that runs it."""
    path = directory / name
    path.write_text(json.dumps(turns))
    return f"scripted:{path}"


def first_tool_result(r: ResultMessage, index: int = 2) -> dict[str, Any]:
    """The first block of message `index` of a run, a tool_result (2: the answer to the first
    tool-use turn)."""
    block: dict[str, Any] = r.messages[index]["content"][0]
    assert block["type"] == "tool_result", block
    return block


def call_tool(tool: Tool, ctx: ToolContext, x: dict[str, Any] | None = None, /, **kw: Any) -> tuple[Any, bool]:
    """Call one tool directly (no loop, no gate) on input `x` and/or the keyword arguments;
    returns (content, is_error)."""
    out = asyncio.run(tool.call({**(x or {}), **kw}, ctx))
    return out.content, out.is_error


class Recording:
    """A scripted model function (for ScriptedModel): answers with `replies` in order, checks
    Inv on every history it is shown and keeps a copy of each."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.seen: list[list[dict[str, Any]]] = []

    def __call__(self, h: list[dict[str, Any]]) -> Any:
        check(h)
        self.seen.append(json.loads(json.dumps(h)))
        return self.replies.pop(0)


def loopwright_pid(fragment: Path) -> int:
    """The loopwright process whose command line names `fragment` (not the shell that started it)."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                argv = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(fragment).encode() in argv and b"python" in Path(argv[0].decode()).name.encode():
                return int(d)
    raise AssertionError("no loopwright process")


def process_alive(pid: int) -> bool:
    """Is process `pid` running? One read of /proc/<pid>/stat: a process that is gone, a zombie
    that only waits to be reaped (a container's PID 1 may never reap an orphan) and one that is
    dying count as ended. (One read, not os.kill(pid, 0) then a look at its stat file: the process
    can be reaped between the two looks; the state is after the last ')', as the command's own name
    may hold spaces and parentheses.)"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] not in (["Z"], ["X"], [])


def until(condition: Callable[[], object], seconds: float = 30) -> bool:
    """Poll `condition` every 20 ms until it holds or `seconds` pass; whether it holds at the end.
    The one way a test waits for what another process, thread or timer does: a signal is sent,
    not waited for, and a write to a child is read when the child is scheduled, so on a loaded
    machine (CI: 2 cores, 3 workers) it takes a moment longer. A deadline, not a sleep: a
    passing test waits no longer than the condition takes."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        time.sleep(0.02)
    return True


def still_alive(pids: Iterable[int], seconds: float = 30) -> list[int]:
    """Those of `pids` still running once all have ended or `seconds` passed (`until`): a SIGKILL
    or a group's end is sent, not waited for, and a killed process may run a moment longer."""
    found = list(pids)
    until(lambda: not any(process_alive(p) for p in found), seconds)
    return [p for p in found if process_alive(p)]


@contextmanager
def held_port() -> Iterator[int]:
    """A loopback port held for the block: a socket bound to it (SO_REUSEADDR), never listening.
    Nothing listens there, so a connection to it is refused (a dead endpoint); no other process can
    get it meanwhile (bind to port 0 and the ports of outgoing connections pass over a bound port,
    even the suite's other workers'); and a server told to listen on it with SO_REUSEADDR (asyncio,
    uvicorn, cpp-httplib) can bind it while it is held, since the holder never listens. A port found
    free and let go before it is used can be taken by another process in between: never hand one over."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


T = TypeVar("T")


def cut_short(run: Callable[[float], T], started: Callable[[], bool], timeouts: tuple[float, ...] = (0.5, 2, 8, 30)) -> T:
    """`run(timeout)`'s result, with a timeout meant to cut a command (a Bash call, a hook) short
    after it `started` (wrote its pid file): the first, short one keeps the test quick; when the cut
    came before the command even started (a loaded machine: the shell was not scheduled in time),
    it runs again with the next longer one, so the test always checks a command cut mid-run."""
    for seconds in timeouts:
        got = run(seconds)
        if started():
            return got
    raise AssertionError(f"the command never started within {timeouts[-1]} s")


def check_resumable(h: list[dict[str, Any]]) -> None:
    """Inv holds for a saved history once the next prompt is appended (what resuming sends)."""
    check([*h, {"role": "user", "content": [{"type": "text", "text": "next"}]}] if h[-1]["role"] == "assistant" else h)


def notes_project(tmp_path: Path) -> Path:
    """tmp_path/work with a two-line notes.txt (alpha, beta)."""
    d = tmp_path / "work"
    d.mkdir()
    (d / "notes.txt").write_text("alpha\nbeta\n")
    return d
