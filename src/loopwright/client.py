"""Room: client / workflows (above assemble). Owns LoopwrightClient; may import assemble and below,
never cli.

LoopwrightClient: a conversation you can steer while it runs (the Agent SDK's ClaudeSDKClient).

    async with LoopwrightClient(options) as client:
        await client.query("fix the test")
        async for msg in client.receive_response():
            ...                      # meanwhile: client.interrupt(), client.send("also check X")
        await client.query("now commit it")   # continues the same conversation and session

`interrupt()` cancels the running model call or tool calls; every unfinished call gets an
is_error "Interrupted by user" result, so Inv holds and the conversation can go on.
`send(text)` queues a message the model reads right after the running tool calls finish, in
the same turn (text blocks after the tool_results). Text sent when no tool turn follows is
delivered with the next query.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from .assemble import query
from .blocks import WireMessage
from .context import DEFAULT_KEEP_TURNS, CompactResult
from .loop import RunControl
from .messages import Message, ResultMessage, SystemMessage
from .models.base import Model
from .options import AgentOptions, model_for


class _Done:
    """`client.interrupt()` works both plainly and awaited (the SDK's interrupt is async)."""

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


_END = object()


class LoopwrightClient:
    """A conversation over several queries (Claude Agent SDK's ClaudeSDKClient): each query
    continues the last history, with interrupt, send, compact, resume and clear."""

    def __init__(self, options: AgentOptions | None = None) -> None:
        self.options = options or AgentOptions()
        self.history: list[WireMessage] | None = None  # the last run's final history
        self.session_id: str | None = None
        self.results: list[ResultMessage] = []
        self.compact_cost_usd = 0.0  # summarizing calls of compact()
        self._model: Model | None = None
        self._connecting: asyncio.Future[Model] | None = None
        self._control: RunControl | None = None
        self._task: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._pending: list[str] = []  # sent while idle, or too late for the last run
        self._once: tuple[list[str], str | None] | None = None  # for_next_query()

    async def __aenter__(self) -> LoopwrightClient:
        await self.connect()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.disconnect()

    async def connect(self) -> None:
        # One model object for the whole conversation (a scripted model keeps its place).
        # Resolved in a thread: importing a provider SDK can take a second or more.
        if self._model is None:
            if self._connecting is None:
                self._connecting = asyncio.ensure_future(asyncio.to_thread(model_for, self.options))
            self._model = await self._connecting

    async def disconnect(self) -> None:
        if self.running:
            self.interrupt()
            assert self._task is not None
            try:
                await self._task
            except BaseException:  # noqa: BLE001 - shutting down; the run already reported
                pass

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def model(self) -> Model | None:
        """The conversation's one Model, once connect() resolved it (None before)."""
        return self._model

    @property
    def pending(self) -> list[str]:
        """Text sent that no run has delivered yet (it goes with the next query)."""
        return list(self._pending)

    def for_next_query(self, *, allowed_tools: list[str] | None = None, model: str | None = None) -> None:
        """More allowed tools and/or another model for the next query only (a custom command's
        `allowed-tools` and `model`, commands.py); the conversation goes on as before after it."""
        self._once = (list(allowed_tools or []), model)

    def _next_options(self) -> AgentOptions:
        if self.history is None:  # the first query: resume/continue/fork as configured
            options = replace(self.options, model=self._model)
        else:
            options = replace(self.options, model=self._model, resume=None, continue_conversation=False,
                              fork_session=False, session_id=self.session_id)
        if self._once is not None:
            extra, model = self._once
            self._once = None
            options = replace(options, allowed_tools=[*options.allowed_tools, *extra], model=model or options.model)
        return options

    async def query(self, prompt: str) -> None:
        """Start a run on `prompt` (continuing this client's conversation). Read its messages
        with receive_response()."""
        if self.running:
            raise RuntimeError("a query is already running: use send() to add to it, or interrupt() it")
        await self.connect()
        text = "\n\n".join(t for t in [*self._pending, prompt] if t)
        self._pending = []
        control = RunControl()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._control, self._queue = control, queue
        self._task = asyncio.create_task(self._drive(text, self._next_options(), control, queue))

    async def _drive(self, prompt: str, options: AgentOptions, control: RunControl, queue: asyncio.Queue[Any]) -> None:
        try:
            async for msg in query(prompt, options, control=control, history=self.history):
                if isinstance(msg, ResultMessage):
                    self.history = msg.messages
                    self.session_id = msg.session_id
                    self.results.append(msg)
                    self._pending.extend(control.take_queued())
                queue.put_nowait(msg)
        except BaseException as e:  # noqa: BLE001 - handed to the reader, who re-raises it
            queue.put_nowait(e)
        finally:
            self._pending.extend(control.take_queued())  # sent too late for this run
            queue.put_nowait(_END)

    async def receive_response(self) -> AsyncIterator[Message]:
        """The current run's messages, ending with its ResultMessage."""
        queue = self._queue
        if queue is None:
            return
        while True:
            item = await queue.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
            if isinstance(item, ResultMessage):
                return

    receive_messages = receive_response

    def interrupt(self) -> _Done:
        """Cancel the running model call or tool calls. The run ends error_during_execution with a
        valid history; the conversation can continue with the next query()."""
        if self._control is not None and self.running:
            self._control.interrupt()
        return _Done()

    def send(self, text: str) -> None:
        """Queue `text` for the model: delivered right after the running tool calls finish (same
        turn), else with the next query."""
        if self._control is not None and self.running:
            self._control.send(text)
        else:
            self._pending.append(text)

    @property
    def total_cost_usd(self) -> float:
        return sum(r.total_cost_usd for r in self.results) + self.compact_cost_usd

    async def compact(self, instructions: str | None = None, keep_last_turns: int = 2) -> CompactResult:
        """Summarize the conversation so far (all but the last `keep_last_turns` turns) with one
        model call; the next query continues from the summary. Persisted sessions get a
        compact_boundary line, so resume loads the compacted history. Raises CompactError
        (the conversation is then unchanged)."""
        from .context import CompactError

        if self.running:
            raise RuntimeError("cannot compact while a query is running")
        if not self.history:
            raise CompactError("nothing to compact yet")
        await self.connect()
        assert self._model is not None  # connect() resolved it
        result = await compact_conversation(self.history, self.options, self._model, session_id=self.session_id,
                                            instructions=instructions, keep_last_turns=keep_last_turns)
        self.history = result.history
        self.compact_cost_usd += result.cost_usd
        return result

    def clear(self) -> None:
        """Start a new conversation (a new session) with the same options."""
        if self.running:
            raise RuntimeError("cannot clear while a query is running")
        self.history = None
        self.session_id = None
        self.results = []
        self.compact_cost_usd = 0.0
        self._pending = []
        self.options = replace(self.options, resume=None, continue_conversation=False, fork_session=False,
                               session_id=None)

    def resume(self, session_id: str) -> None:
        """Continue a saved session with the next query."""
        if self.running:
            raise RuntimeError("cannot resume while a query is running")
        self.clear()
        self.options = replace(self.options, resume=session_id)


async def compact_conversation(history: list[WireMessage], options: AgentOptions, model: Model, *,
                               session_id: str | None, instructions: str | None = None,
                               keep_last_turns: int = DEFAULT_KEEP_TURNS) -> CompactResult:
    """Manual compaction between runs: PreCompact hook ("manual"), the summarizing call, and
    when the session is persisted a compact_boundary line in its transcript (so resume loads
    the compacted history). Raises CompactError; `history` is never changed."""
    from .context import CompactError, compact, turn_starts
    from .hooks import HookContext
    from .settings import build_run_config

    cwd = Path(options.cwd or ".").resolve()
    hooks = build_run_config(options, cwd).hooks
    if hooks.active:
        hooks.bind(HookContext(session_id or "", "", str(cwd), options.permission_mode or "default"))
        blocked = await hooks.pre_compact("manual", instructions or "")
        if blocked is not None:
            raise CompactError(f"blocked by a PreCompact hook: {blocked}")
    keep = min(keep_last_turns, max(0, len(turn_starts(history)) - 1))
    result = await compact(history, model, keep_last_turns=keep, instructions=instructions, prices=options.prices)
    if options.persist_session and session_id is not None:
        from .sessions import SessionRecorder, store_for

        writer = store_for(options).open_writer(session_id, cwd)
        recorder = SessionRecorder(writer, session_id, cwd)
        try:
            recorder.record(SystemMessage("compact_boundary", result.boundary_data("manual")), result.history)
        finally:
            recorder.close()
    return result
