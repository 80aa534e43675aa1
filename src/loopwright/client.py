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

As the SDK's client: `query()` also takes an async iterable of user messages (each a run, in
order); `receive_messages()` reads every message of every query until `disconnect()`, while
`receive_response()` stops at each ResultMessage; `set_model()` and `set_permission_mode()`
apply from the next query; `get_server_info()` tells the commands, agents and output style.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Generator
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic

from .assemble import query
from .blocks import Prompt, WireMessage, local_command_texts, prompt_content
from .context import DEFAULT_KEEP_TURNS, CompactResult
from .errors import CLIConnectionError, ProcessError
from .gate import PermissionMode
from .hooks import RunHooks
from .loop import RunControl
from .loop.watch import Watch
from .messages import AssistantMessage, Message, OutputT, ResultMessage, SystemMessage
from .models.base import Model
from .options import AgentOptions, model_for

if TYPE_CHECKING:
    from .commands import Expanded


class _Done:
    """`client.interrupt()` works both plainly and awaited (the SDK's interrupt is async)."""

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


_END = object()  # a run that ended without a ResultMessage
_CLOSED = object()  # disconnect(): receive_messages() ends


class LoopwrightClient(Generic[OutputT]):
    """A conversation over several queries (Claude Agent SDK's ClaudeSDKClient): each query
    continues the last history, with interrupt, send, compact, resume and clear. Typed by the
    options' output_type: its messages' ResultMessage is a ResultMessage[T] for mypy."""

    def __init__(self, options: AgentOptions[Any, OutputT] | None = None) -> None:
        self.options: AgentOptions[Any, OutputT] = options or AgentOptions()
        self.history: list[WireMessage] | None = None  # the last run's final history
        self._watch = Watch()  # its settings files and FileChanged's, across its runs (loop/watch.py)
        self.session_id: str | None = None
        self.results: list[ResultMessage[OutputT]] = []
        self.compact_cost_usd = 0.0  # summarizing calls of compact()
        self._model: Model | None = None
        self._connecting: asyncio.Future[Model] | None = None
        self._control: RunControl | None = None
        self._task: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()  # every query's messages, in order
        self._feeder: asyncio.Task[None] | None = None  # query(async iterable): one run per message
        self._pending: list[str] = []  # sent while idle, or too late for the last run
        self._once: tuple[list[str], str | None, Expanded | None] | None = None  # for_next_query()
        self._last_call: tuple[int, float] | None = None  # the last main-thread response: its tokens, when

    async def __aenter__(self) -> LoopwrightClient[OutputT]:
        await self.connect()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.disconnect()

    async def connect(self) -> None:
        """Make the model (`async with` does it): CLIConnectionError when it cannot be made (no key, an
        unknown model string). Nothing is sent until the first query()."""
        # One model object for the whole conversation (a scripted model keeps its place).
        # Resolved in a thread: importing a provider SDK can take a second or more.
        if self._model is None:
            if self._connecting is None:
                self._connecting = asyncio.ensure_future(asyncio.to_thread(model_for, self.options))
            try:
                self._model = await self._connecting
            except (ValueError, TypeError, OSError) as e:  # no key, an unknown model string, ...
                self._connecting = None
                raise CLIConnectionError(str(e)) from e

    async def disconnect(self) -> None:
        """Interrupt a running query, wait for it to end (its history stays paired) and close the stream."""
        if self._feeder is not None and not self._feeder.done():
            self._feeder.cancel()
            with contextlib.suppress(BaseException):
                await self._feeder
        if self.running:
            self.interrupt()
            assert self._task is not None
            try:
                await self._task
            except BaseException:  # noqa: BLE001 - shutting down; the run already reported
                pass
        self._queue.put_nowait(_CLOSED)

    @property
    def running(self) -> bool:
        """A query is running now."""
        return self._task is not None and not self._task.done()

    async def wait_ended(self) -> None:
        """Wait until the running query has ended, its work after the ResultMessage included: text
        sent until then that the run did not deliver is in `pending` once this returns."""
        if self._task is not None:
            await asyncio.wait([self._task])

    @property
    def model(self) -> Model | None:
        """The conversation's one Model, once connect() resolved it (None before)."""
        return self._model

    @property
    def pending(self) -> list[str]:
        """Text sent that no run has delivered yet (it goes with the next query)."""
        return list(self._pending)

    def for_next_query(self, *, allowed_tools: list[str] | None = None, model: str | None = None,
                       command: Expanded | None = None) -> None:
        """More allowed tools and/or another model for the next query only (a custom command's
        `allowed-tools` and `model`, commands.py), and the command its prompt invokes
        (AgentOptions.slash_command); the conversation goes on as before after it."""
        self._once = (list(allowed_tools or []), model, command)

    def _next_options(self) -> AgentOptions[Any, OutputT]:
        if self.history is None:  # the first query: resume/continue/fork as configured
            options = replace(self.options, model=self._model)
        else:
            options = replace(self.options, model=self._model, resume=None, continue_conversation=False,
                              fork_session=False, session_id=self.session_id)
        if self._once is not None:
            extra, model, command = self._once
            self._once = None
            options = replace(options, allowed_tools=[*options.allowed_tools, *extra], model=model or options.model,
                              slash_command=command)
        return options

    async def query(self, prompt: Prompt | AsyncIterable[dict[str, Any]]) -> None:
        """Start a run on `prompt` (continuing this client's conversation). Read its messages
        with receive_response(). An async iterable of the SDK's user messages
        ({"type": "user", "message": {"role": "user", "content": ...}}) runs one query per
        message, each after the last has ended. `/name args` naming a custom command or skill
        runs it when the options read setting sources or name plugins (as query() does)."""
        if self.running or (self._feeder is not None and not self._feeder.done()):
            raise RuntimeError("a query is already running: use send() to add to it, or interrupt() it")
        if not isinstance(prompt, (str, list)):
            if not isinstance(prompt, AsyncIterable):
                raise TypeError(f"query() takes a string, a list of content blocks or an async iterable of user "
                                f"messages, not {type(prompt).__name__}")
            await self.connect()
            self._feeder = asyncio.create_task(self._feed(prompt))
            return
        await self._start(prompt)

    async def _feed(self, messages: AsyncIterable[dict[str, Any]]) -> None:
        try:
            async for m in messages:
                if self._task is not None:
                    await asyncio.wait([self._task])
                await self._start(streamed_prompt(m))
        except Exception as e:  # noqa: BLE001 - a bad message or a failing iterable: the reader's error
            self._queue.put_nowait(e)

    async def _start(self, prompt: Prompt) -> None:
        await self.connect()
        text: Prompt
        if isinstance(prompt, str):
            text = "\n\n".join(t for t in [*self._pending, prompt] if t)
        else:  # content blocks (an image with its text): what was sent meanwhile goes first
            text = [*({"type": "text", "text": t} for t in self._pending if t), *prompt_content(prompt)]
        self._pending = []
        control = RunControl()
        self._control = control
        self._task = asyncio.create_task(self._drive(text, self._next_options(), control, self._queue))

    async def _drive(self, prompt: Prompt, options: AgentOptions[Any, OutputT], control: RunControl, queue: asyncio.Queue[Any]) -> None:
        ended: Any = _END  # what the reader gets after the last message when no result came
        try:
            async for msg in query(prompt, options, control=control, history=self.history, watch=self._watch):
                if isinstance(msg, AssistantMessage) and msg.usage is not None and msg.parent_tool_use_id is None:
                    self._last_call = (msg.usage.input_tokens + msg.usage.output_tokens, time.monotonic())
                if isinstance(msg, ResultMessage):
                    self.history = msg.messages
                    self.session_id = msg.session_id
                    self.results.append(msg)
                    self._pending.extend(control.take_queued())
                    ended = None
                queue.put_nowait(msg)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # noqa: BLE001 - handed to the reader, who re-raises it
            ended = e
            if not isinstance(e, (TypeError, ValueError)):  # bad arguments pass as they are
                ended = ProcessError(f"the run failed: {e!r}")
                ended.__cause__ = e
        finally:
            self._pending.extend(control.take_queued())  # sent too late for this run
            if ended is not None:
                queue.put_nowait(ended)

    async def receive_response(self) -> AsyncIterator[Message[OutputT]]:
        """The current run's messages, ending with its ResultMessage (nothing when no query
        runs and none is left unread)."""
        async for m in self._receive(until_result=True):
            yield m

    async def receive_messages(self) -> AsyncIterator[Message[OutputT]]:
        """Every message of every query, across results, until disconnect()."""
        async for m in self._receive(until_result=False):
            yield m

    async def _receive(self, until_result: bool) -> AsyncIterator[Message[OutputT]]:
        queue = self._queue
        while True:
            if until_result and queue.empty() and not self.running and not self._feeding:
                return
            item = await queue.get()
            if item is _CLOSED:
                queue.put_nowait(_CLOSED)  # for any other reader
                return
            if item is _END:
                if until_result:
                    return
                continue
            if isinstance(item, BaseException):
                raise item
            yield item
            if until_result and isinstance(item, ResultMessage):
                return

    @property
    def _feeding(self) -> bool:
        return self._feeder is not None and not self._feeder.done()

    async def set_model(self, model: str | Model | None = None, *, source: str = "sdk") -> None:
        """The model of the next query (None: the options' model). A bad model string raises here.
        The settings' PreModelSwitch hooks may refuse the switch (PermissionError; `source`:
        "command" for /model, "sdk" for a program's call); PostModelSwitch hooks' additionalContext
        goes to the model with the next query."""
        spec = model if model is not None else self.options.model
        new = await asyncio.to_thread(model_for, replace(self.options, model=spec)) \
            if not isinstance(spec, Model) else spec
        was = self._model.name if self._model is not None else str(self.options.model or "(default)")

        def apply() -> None:
            self._model = new
            self._connecting = None
            self.options = replace(self.options, model=spec)

        context = await switch_model(self.options, self.session_id or "", was, new.name,
                                     model if isinstance(model, str) else None, source, self._last_call, apply)
        if context:
            self._pending.append(context)

    async def add_dir(self, path: str | Path, *, source: str = "slash_command") -> None:
        """Another working directory for the next queries; the settings' DirectoryAdded hooks hear of
        it (`source`: Claude Code's "slash_command" for /add-dir)."""
        path = Path(self.options.cwd or ".", path).resolve()
        self.options = replace(self.options, add_dirs=[*(self.options.add_dirs or []), path])
        hooks = self._hooks_for("DirectoryAdded")
        if hooks is not None:
            await hooks.directory_added(str(path), source)

    def _hooks_for(self, *events: str) -> RunHooks | None:
        return hooks_between_runs(self.options, self.session_id or "", *events)

    async def set_permission_mode(self, mode: PermissionMode) -> None:
        """The permission mode of the next query (default, acceptEdits, plan, bypassPermissions,
        dontAsk); an unknown one raises ValueError, and so does bypassPermissions when the settings
        set permissions.disableBypassPermissionsMode."""
        from .runconfig import refuse_bypass

        refuse_bypass(self.options, mode)
        self.options = replace(self.options, permission_mode=mode)  # AgentOptions checks it

    async def get_server_info(self) -> dict[str, Any]:
        """What the SDK's client reads after connecting: the slash commands (custom commands and
        skills of the setting sources and the plugins, listed and described as Claude Code's:
        commands.command_listing), the subagent types, the output style, the model."""
        from .commands import command_listing, described
        from .plugins import plugin_command_dirs
        from .runconfig import skills_off
        from .trust import trusted_for

        await self.connect()
        cwd = Path(self.options.cwd or ".").resolve()
        extra, plugin_skills = plugin_command_dirs(self.options, cwd, [])
        commands = described(command_listing(cwd, self.options.setting_sources or [], trusted_for(self.options, cwd),
                                             extra, plugin_skills, skills_off(self.options, cwd)))
        return {"commands": commands, "agents": sorted(["general-purpose", *self.options.agents]),
                "output_style": "default", "available_output_styles": ["default"],
                "model": self._model.name if self._model is not None else None, "pid": os.getpid()}

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

    async def record_local_command(self, command: str, stdout: str = "", stderr: str = "") -> None:
        """Add a command the user ran without the model (the interactive `!cmd`) to the
        conversation now: one user message of its `<bash-input>` and `<bash-stdout>`/`<bash-stderr>`
        texts, as Claude Code records them. It is written to the session's transcript at once, so
        a resume (or continue) sends it even when no prompt followed; the next query's prompt
        joins it in one user message, once. With no query yet, the session starts here as the
        first query would start it (resume, continue and fork as configured). Raises RuntimeError
        while a query runs; ValueError when the session cannot be opened (SessionBusy,
        SessionNotFound, an unwritable home); TranscriptWriteError when the line cannot be written."""
        if self.running or self._feeding:
            raise RuntimeError("a query is running: a local command is recorded between queries")
        texts = local_command_texts(command, stdout, stderr)
        message: WireMessage = {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}
        self.history, self.session_id = await asyncio.to_thread(self._record, message)

    def _record(self, message: WireMessage) -> tuple[list[WireMessage], str]:
        from .sessions import start_session

        options = self.options if self.history is None else replace(
            self.options, resume=None, continue_conversation=False, fork_session=False, session_id=self.session_id)
        start = start_session(options, Path(options.cwd or ".").resolve(), history_given=self.history is not None)
        history = list(self.history if self.history is not None else start.history or [])
        if start.recorder is not None:
            try:
                start.recorder.user(message)
            finally:
                start.recorder.close()
        return [*history, message], start.session_id

    @property
    def total_cost_usd(self) -> float:
        """What the whole conversation cost: every query's result and the manual compactions."""
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
    from .hooks import HookContext, run_hooks
    from .runconfig import build_run_config

    cwd = Path(options.cwd or ".").resolve()
    registry = build_run_config(options, cwd).hooks
    hooks = None
    if registry.active:
        hooks = run_hooks(registry, HookContext(session_id or "", "", str(cwd), options.permission_mode or "default"),
                          options.hooks)
        blocked = await hooks.pre_compact("manual", instructions or "")
        if blocked is not None:
            raise CompactError(f"blocked by a PreCompact hook: {blocked}")
    keep = min(keep_last_turns, max(0, len(turn_starts(history)) - 1))
    result = await compact(history, model, keep_last_turns=keep, instructions=instructions, prices=options.prices)
    if hooks is not None:
        await hooks.post_compact("manual", result.summary)
    if options.persist_session and session_id is not None:
        from .sessions import SessionRecorder, store_for

        writer = store_for(options).open_writer(session_id, cwd)
        recorder = SessionRecorder(writer, session_id, cwd)
        try:
            recorder.record(SystemMessage("compact_boundary", result.boundary_data("manual")), result.history)
        finally:
            recorder.close()
    return result


def hooks_between_runs(options: AgentOptions[Any, Any], session_id: str, *events: str) -> RunHooks | None:
    """The hooks of an event between runs (settings read as a run reads them), or None when none
    of `events` has any."""
    if options.hooks is None and options.settings is None and not options.setting_sources:
        return None
    from .hooks import HookContext, run_hooks
    from .runconfig import build_run_config

    cwd = Path(options.cwd or ".").resolve()
    registry = build_run_config(options, cwd).hooks
    if not any(registry.matchers.get(e) for e in events):
        return None
    return run_hooks(registry, HookContext(session_id, "", str(cwd), options.permission_mode or "default"),
                     options.hooks)


async def switch_model(options: AgentOptions[Any, Any], session_id: str, was: str, to: str, requested: str | None,
                       source: str, last_call: tuple[int, float] | None, apply: Callable[[], None]) -> str | None:
    """A model switch as Claude Code makes it (/model: `source` "command"; a program's or an SDK's
    or ACP's set_model: "sdk"): PreModelSwitch hooks may refuse it (PermissionError, in Claude
    Code's words), then `apply()` makes it, then PostModelSwitch hooks run: their additionalContext,
    for the model with the next prompt, or None."""
    hooks = hooks_between_runs(options, session_id, "PreModelSwitch", "PostModelSwitch")
    if hooks is None:
        apply()
        return None
    data = _switch_data(was, to, requested, source, last_call, options.prices)
    refusal = await hooks.pre_model_switch(data)
    if refusal is not None:
        raise PermissionError(f"Model switch blocked by a PreModelSwitch hook: {refusal}")
    apply()
    return await hooks.post_model_switch(data)


def _switch_data(was: str, to: str, requested: str | None, source: str, last: tuple[int, float] | None,
                 prices: Any) -> dict[str, Any]:
    """Claude Code's PreModelSwitch/PostModelSwitch fields: what the next request re-sends (the last
    main-thread response's tokens), whether the cache is likely warm (a response in the last 5
    minutes), and what re-caching it on the new model costs at its 5-minute cache-write price."""
    from .models.catalog import price_for

    tokens = last[0] if last is not None else 0
    own = price_for(to, prices) if prices else None
    price = own or price_for(to)
    return {"from_model": was, "to_model": to, "requested_model": requested, "source": source,
            "context_tokens": tokens, "prompt_cache_warm": last is not None and time.monotonic() - last[1] < 300,
            "cache_ttl": "5m", "estimated_cache_write_usd": tokens * price.cache_write_5m / 1e6 if price else 0.0,
            "pricing": "configured" if own else "catalog" if price else "default"}


def streamed_prompt(message: dict[str, Any] | str) -> Prompt:
    """The prompt of one of the SDK's streamed user messages ({"type": "user", "message": {"role":
    "user", "content": str | [blocks]}}): its string, or its text, image and document blocks."""
    if isinstance(message, str):
        return message
    inner = message.get("message", message) if isinstance(message, dict) else None
    content = inner.get("content") if isinstance(inner, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return prompt_content(content)  # a TypeError names a block that cannot be a prompt
    raise TypeError('a streamed user message is {"type": "user", "message": {"role": "user", "content": ...}}, '
                    f"not {message!r:.120}")
