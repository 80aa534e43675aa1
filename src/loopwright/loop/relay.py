"""Room: loop. Subagents' messages: which are a subagent's, and Relay, which passes them on live while a turn's tools run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Generic, TypeVar

from ..messages import (
    Message,
    SystemMessage,
)

# --- subagents' messages ----------------------------------------------------------------------

def _from_subagent(msg: Message) -> bool:
    """A message a subagent posted (it belongs to no session transcript of the parent)."""
    if isinstance(msg, SystemMessage):
        return "parent_tool_use_id" in msg.data
    return getattr(msg, "parent_tool_use_id", None) is not None


R = TypeVar("R")


class Relay(Generic[R]):
    """Runs `work` (one turn's tool calls) in a task and passes on, live, the messages subagents
    post to `inbox` meanwhile; `value` is then work's result. (A run that spawns no subagents
    has no inbox: its turn (loop/turn.py's run_tools) is awaited in place, no task, no iterator: the Relay costs
    ~90,000 instructions a turn, ~2 % of the CLI's per-turn gap, issue 41's rule for a second path.)"""

    def __init__(self, work: Awaitable[R], inbox: asyncio.Queue[Message]) -> None:
        self.work = work
        self.inbox = inbox
        self.value: R

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._relayed(self.inbox)

    async def _relayed(self, inbox: asyncio.Queue[Message]) -> AsyncIterator[Message]:
        done = SystemMessage("_relay_done")

        async def step() -> R:
            try:
                return await self.work
            finally:
                inbox.put_nowait(done)

        task = asyncio.ensure_future(step())
        try:
            while (m := await inbox.get()) is not done:
                yield m
            self.value = await task
        except asyncio.CancelledError:
            # The consumer was cancelled: cancel the tool calls too and wait for their is_error
            # results, so the history stays paired (the loop then goes on cancelling).
            task.cancel()
            self.value = await task
            while not inbox.empty():
                inbox.get_nowait()
        finally:
            if not task.done():
                task.cancel()
