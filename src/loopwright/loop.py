"""Room: loop. Owns Run, RunDeps, RunState and run_query(); may import options and every room
below it, never assemble, client, workflows or cli.

The agent loop: seed Def 3.1, one step with four cases, and `run_query(run, prompt)`, which
drives a Run the assembler (assemble.py: `build_run`, `query()`, `run()`) built.

State is (h, e, t): the history `h`, the environment (the tools' world), and the
tool-use turns done `t`. Everything around the step (accounting, results,
sessions) lives in `Run`: its fixed dependencies in `Run.deps`, what the steps change in
`Run.state`; the step itself is `_loop` below. No other module touches Run's private
attributes: the assembler's ports (assemble.py) use `messages`, `post` and `absorb`.

May import everything below it (options, execute, context, hooks); tools never see a Run,
only the ports of their ToolContext.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from .blocks import (
    Prompt,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    WireMessage,
    blocks_to_wire,
    prompt_text,
    text_of,
    tool_uses,
)
from .context import (
    DEFAULT_KEEP_TURNS,
    AutoCompactor,
    CompactError,
    CompactResult,
    plan_summary,
    summarize,
)
from .execute import INTERRUPTED, Executor, TurnOutcome
from .gate import Permissions
from .hooks import HookState, RunHooks
from .invariant import InvariantChecker
from .messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    ResultSubtype,
    SystemMessage,
    UserMessage,
)
from .models.base import STOP_REASONS, Model, ModelError, ModelRequest, ModelResponse, close_model
from .models.catalog import call_cost, cost_of
from .options import AgentOptions
from .telemetry.base import NULL, Observer
from .tokens import estimate_tokens
from .tools.base import Tool
from .trust import Trust
from .usage import Budget, CallUsage, Price, Usage

if TYPE_CHECKING:
    from .event_types import InitData, PermissionDenial
    from .memory import Memory
    from .sessions import SessionRecorder
    from .settings import Settings
    from .structured import StructuredOutput

log = logging.getLogger("loopwright.loop")



MAX_STOP_CONTINUATIONS = 3
MAX_OVERFLOW_RETRIES = 3  # a step refused as over the context window: compacted and retried at most this often
# A final answer cut off at max_tokens is continued by a reminder turn, at most this many times;
# the answer is then the parts joined. Still cut off after that: error_during_execution, never success.
MAX_OUTPUT_CONTINUATIONS = 3
OUTPUT_REMINDER = ("Your previous response was cut off at the output token limit (max_tokens). Continue it exactly "
                   "where it stopped, without repeating anything you already wrote.")


class RunError(Exception):
    """Ends a run with error_during_execution and this message; the history stays valid."""


class RunControl:
    """Lets another task steer a running query: `interrupt()` cancels the running model
    call or tool calls; `send(text)` queues a message the model reads right after the
    running tool calls finish, in the same turn (the c_1..c_r of seed Def 3.1 step 4)."""

    def __init__(self) -> None:
        self.queued: list[str] = []
        self.interrupted = False
        self._task: asyncio.Task[Any] | None = None

    def send(self, text: str) -> None:
        self.queued.append(text)

    def interrupt(self) -> None:
        self.interrupted = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def take_queued(self) -> list[str]:
        q, self.queued = self.queued, []
        return q


class McpServers(Protocol):
    """The run's MCP servers (mcp/client.py's McpRuntime), built by the assembler, opened by
    the loop before its init message."""

    async def open(self, taken: Collection[str]) -> list[Tool]: ...

    def status(self) -> list[dict[str, Any]]: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class RunDeps:
    """What a run is built with (assemble.py) and its steps never change (pydantic-ai's run
    dependencies): the options, the model and its price, the tools and their wire definitions,
    the gate, hooks and executor, the session's id and transcript, the RunControl. Frozen: the
    one change, the MCP servers' tools joining before the first step, makes a new RunDeps."""

    options: AgentOptions
    model: Model
    prices: dict[str, Price]
    price: Price | None  # of `model`; None: unknown (its cost counts 0 unless the model reports it)
    cwd: Path
    tools: dict[str, Tool]
    tool_defs: list[dict[str, Any]]  # built once: byte-stable across calls (prompt caching)
    system: str | None
    session_id: str
    control: RunControl | None
    permission_mode: str
    hooks: RunHooks  # the run's: its frozen registry and its own state
    executor: Executor
    recorder: SessionRecorder | None  # when persisting
    inbox: asyncio.Queue[Message] | None  # subagents post their messages here (agents.py)
    mcp: McpServers | None = None  # servers to open before the first step
    settings: Settings | None = None  # the settings files, merged: what tools read of them (tools/web)


@dataclass(slots=True)
class RunState:
    """What the steps change: (h, t) of seed Def 3.1 (the environment is the tools' world)
    and the accounting around them."""

    h: list[WireMessage]
    budget: Budget
    t: int = 0
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    inv: InvariantChecker = field(default_factory=InvariantChecker)
    denials: list[PermissionDenial] = field(default_factory=list)
    api_seconds: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    last_stop: str | None = None
    stop_continuations: int = 0
    cut_off_text: list[str] = field(default_factory=list)  # the parts of an answer cut off at max_tokens
    output_continuations: int = 0
    final: str | None = None  # set by a tool through ToolContext.finish: the run's result, after this turn
    hooks: HookState = field(default_factory=HookState)  # what this run's hooks did (deps.hooks fires them with it)


class Run:
    """One run: `deps` (fixed when built) and `state` (what the steps change). The step that
    changes (h, e, t) is `_loop`. Built by `assemble.build_run`, never by hand: this class
    only holds what the assembler made."""

    deps: RunDeps
    state: RunState
    compactor: AutoCompactor

    def __init__(self, deps: RunDeps, state: RunState, compactor: AutoCompactor, *,
                 structured: StructuredOutput | None = None, memory: Memory | None = None,
                 warnings: list[str] | None = None, obs: Observer = NULL, is_top: bool = True,
                 trust: Trust | None = None) -> None:
        self.deps, self.state, self.compactor = deps, state, compactor
        self.trust = trust if trust is not None else Trust(True)  # workspace trust (trust/): the decision, and what was left out
        self.structured = structured
        self.memory = memory  # project memory (memory.py); its files are not sent again
        self.memory_seen: set[Path] = {f.path.resolve() for f in memory.files} if memory is not None else set()
        self.warnings = warnings if warnings is not None else []  # about the user's own files, for init
        self.obs: Observer = obs  # telemetry (telemetry/): the run's spans, or NULL when off
        self.is_top = is_top  # not a subagent: `@file` mentions are read (mentions.py)
        self._fixed: tuple[RunDeps, int] | None = None  # (deps, their system + tool_defs size): _fixed_chars
        self._request: ModelRequest | None = None  # the last call's (request())
        self._reach: tuple[bool, Any] | None = None  # (trusted, memory.project_reach): nested_memory

    async def open_mcp(self) -> None:
        """The MCP servers' tools join the run before its first step (a new RunDeps: the
        executor and the tool definitions with them; subagents then get them too)."""
        d = self.deps
        if d.mcp is None:
            return
        added = await d.mcp.open(d.tools)
        if not added:
            return
        tools = {**d.tools, **{t.name: t for t in added}}
        ex = d.executor
        self.deps = replace(
            d, tools=tools, tool_defs=[*d.tool_defs, *(t.definition() for t in added)],
            options=replace(d.options, tools=[*d.options.tools, *added], mcp_servers=None, strict_mcp_config=True),
            executor=Executor(tools, ex.permissions, ex.hooks, ex.ctx, ex.obs))

    async def include_mentions(self, prompt: str) -> None:
        """The files the prompt mentions (`@path`), appended to its message (mentions.py)."""
        if "@" not in prompt:  # no mention (most prompts): mentions.py, its pattern, are not even loaded
            return
        from .mentions import mention_blocks
        from .tools.builtin import make_read_tool

        d = self.deps
        read = d.tools.get("Read") or make_read_tool()
        blocks, denied = await mention_blocks(prompt, d.cwd, d.executor.permissions.decide, read, d.executor.ctx)
        self.state.h[-1]["content"].extend(blocks)
        self.state.denials += denied

    def mode_port(self, gate: Permissions) -> tuple[Callable[[], str], Callable[[str], None]]:
        """The permission mode as tools see it (ExitPlanMode): read it, change it for the rest of the run."""
        def set_mode(mode: str) -> None:
            gate.mode = mode  # type: ignore[assignment]  # a PermissionMode: interaction.PlanApproved
            self.deps = replace(self.deps, permission_mode=mode)

        return (lambda: gate.mode or "default"), set_mode

    def nested_memory(self, uses: list[ToolUseBlock]) -> list[TextBlock]:
        """Memory files of subdirectories a tool touched for the first time (Claude Code's
        nested CLAUDE.md): appended after the tool results, once each."""
        if self.memory is None:
            return []
        from .memory import nested_memory

        out: list[TextBlock] = []
        for u in uses:
            path = u.input.get("file_path") or u.input.get("notebook_path") or u.input.get("path")
            if isinstance(path, str) and path:
                trusted = self.trust.trusted
                if self._reach is None or self._reach[0] != trusted:  # the same for the whole run: ~8 lstat walks
                    from .memory import project_reach

                    self._reach = (trusted, project_reach(self.deps.cwd, trusted))
                mem = nested_memory(path, self.deps.cwd, self.memory_seen, self.deps.options.setting_sources or [],
                                    trusted=trusted, reach=self._reach[1])
                self.memory.files += mem.files
                self.warnings += mem.warnings
                self.warnings += self.trust.note(mem.ignored)
                text = mem.block_text()
                if text:
                    out.append(TextBlock(text))
        return out

    # --- the pieces of one step ---------------------------------------------------------

    async def call_model(self) -> AsyncIterator[Any]:
        """a = M(h): one model call (plus continuations of a paused turn), timed and charged.

        A request the server refuses as over its context window W (in its own words:
        models/window.py) teaches W (remembered per base URL and model); h is compacted to fit
        (context.py, in chunks when h is larger than W) and the same step is retried, at most
        MAX_OVERFLOW_RETRIES times. When even the minimum cannot fit, the error says what to shrink.
        Yields a ResultMessage (and no response) only when that compaction spent the budget.
        (One async generator for both, not one around the other: each costs as much as the rest
        of a trivial turn's step.)"""
        d, s = self.deps, self.state
        for overflows in range(MAX_OVERFLOW_RETRIES + 1):
            try:
                s.inv.check(s.h)  # Inv on exactly what the model is about to see (Thm 3.4)
                req = self.request()
                content: list[Any] = []
                for attempt in range(d.options.max_pause_continuations + 1):
                    t0 = time.perf_counter()
                    a: ModelResponse | None = None
                    try:
                        events = self._stream(req)
                        if self.obs.enabled:  # (telemetry off: no span, not even a call to skip one)
                            events = self.obs.model_call(self, req, events)
                        async for ev in events:
                            if isinstance(ev, ModelResponse):
                                a = ev
                            else:
                                yield ev
                    finally:
                        s.api_seconds += time.perf_counter() - t0
                        if attempt:
                            s.h.pop()  # drop the paused partial turn sent for continuation
                    if a is None:
                        raise ModelError(f"model {d.model.name!r} returned no response")
                    self.charge(a)
                    if a.stop_reason not in STOP_REASONS:
                        raise RunError(f"model returned an unknown stop_reason {a.stop_reason!r}")
                    if content:  # (the parts of a paused turn before this call's)
                        a.content = content + a.content
                    if a.stop_reason != "pause_turn" or tool_uses(a.content) or s.budget.exhausted():
                        yield a  # (a paused turn that reached the budget is not continued: Prop 5.4)
                        return
                    content = a.content  # pause_turn: send the partial turn back so the model continues
                    if attempt == d.options.max_pause_continuations:
                        break
                    s.h.append({"role": "assistant", "content": blocks_to_wire(content)})
                raise RunError(f"the model paused its turn more than {d.options.max_pause_continuations} times")
            except ModelError as e:
                from .models.window import parse_overflow  # (imported on a failure only: start-up)

                over = parse_overflow(str(e)) if e.status in (None, 400, 413) else None
                if over is None:
                    raise
                if overflows == MAX_OVERFLOW_RETRIES:
                    raise RunError(f"{e} (still over the context window of {self.compactor.window} tokens after "
                                   f"{overflows} compactions)") from e
                async for m in self.fit_window(over, overflows, str(e)):
                    yield m
                    if isinstance(m, ResultMessage):
                        return

    async def fit_window(self, over: Any, attempt: int, error: str) -> AsyncIterator[Message]:
        """Learn W from an overflow error and compact h to fit it (raises RunError when nothing can)."""
        from .context import turn_starts
        from .models.window import remember, too_small

        c, d, s = self.compactor, self.deps, self.state
        fixed = len(d.system or "") + len(json.dumps(d.tool_defs))
        sent = fixed // 4 + estimate_tokens(s.h)  # our estimate of the refused request
        n = over.prompt_tokens or None
        cpt = 4.0 * sent / n if n else None  # the server's own count calibrates the estimate
        window = over.window or int(0.8 * min(c.window or n or sent, n or sent))  # no number said: below it
        c.learn(window, "error", cpt)
        remember(d.model, window)
        yield SystemMessage("context_window", {"context_window": window, "source": "error", "prompt_tokens": n,
                                               "error": error})
        if n is not None and n < 0.75 * window:  # the input fits: max_tokens did not (vLLM), now lowered
            return
        ratio = 4.0 / c.chars_per_token
        first = estimate_tokens(s.h[:1])
        if (fixed / 4 + first) * ratio >= 0.9 * window or not turn_starts(s.h):
            raise RunError(too_small(window, d.system, d.tool_defs, s.h, ratio, n))
        keep = (c.keep_turns(s.h) or 0) if attempt == 0 else 0
        async for m in self.compact("overflow", keep_last_turns=keep,
                                    extra={"context_window": window, "prompt_tokens": n}):
            if isinstance(m, SystemMessage) and m.subtype == "compact_error":
                raise RunError(f"{error}; compacting to fit the context window of {window} tokens failed: "
                               f"{m.data.get('error')}")
            yield m

    async def discover_window(self) -> SystemMessage | None:
        """W of an OpenAI-compatible server's model, asked before the first call when neither
        --context-window nor the catalog says it for a server of our own choosing (models/window.py)."""
        d, c = self.deps, self.compactor
        if d.options.context_window is not None or not getattr(d.model, "discovers_window", False):
            return None
        from .models.window import discover

        window = await discover(d.model)
        if window is None:
            return None
        c.learn(window, "server")
        return SystemMessage("context_window", {"context_window": window, "source": "server"})

    def request(self) -> ModelRequest:
        """M(h)'s input. The last call's while each of its fields is still what this call would
        get (h is one live list): most steps need no new one (~4,500 instructions each). Each is
        compared, so a model that changed the request it was given gets a new one."""
        d, h, limit, o = self.deps, self.state.h, self._output_limit(), self.deps.options
        req = self._request
        if (req is None or req.messages is not h or req.max_tokens != limit or req.system is not d.system
                or req.tools is not d.tool_defs or req.effort != o.effort or req.thinking is not o.thinking
                or req.extra):
            req = self._request = ModelRequest(d.system, d.tool_defs, h, limit, effort=o.effort, thinking=o.thinking)
        return req

    def _output_limit(self) -> int | None:
        """This call's max_tokens: the caller's, lowered to what is left of a window a server told
        (a server such as vLLM refuses input + max_tokens > W)."""
        d, c = self.deps, self.compactor
        want = d.options.max_tokens
        # (no window told: the caller's, without the getattr, which raises inside for most models)
        if c.source not in ("server", "error") or c.window is None:
            return want
        limit = want or getattr(d.model, "max_tokens", None)
        if not isinstance(limit, int):
            return want
        n = c.forecast(self.state.budget.calls, self.state.h, len(d.system or "") + len(json.dumps(d.tool_defs)))
        room = c.window - int(n * 4.0 / c.chars_per_token)
        return min(limit, max(64, room))


    def _stream(self, req: ModelRequest) -> AsyncIterator[Any]:
        """The model's events. Under a RunControl the stream runs in its own task, so that
        interrupt() cancels just the model call: the run then ends with h intact. (Without
        one: the model's own stream, not a generator around it.)"""
        control, model = self.deps.control, self.deps.model
        if control is None:
            return model.stream(req)
        return self._controlled_stream(req, control, model)

    async def _controlled_stream(self, req: ModelRequest, control: Any, model: Model) -> AsyncIterator[Any]:
        if control.interrupted:
            raise asyncio.CancelledError
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()

        async def pump() -> None:
            async for ev in model.stream(req):
                queue.put_nowait(ev)

        task = asyncio.ensure_future(pump())
        # A callback, not a `finally` in pump: a task cancelled before it first ran never enters it
        task.add_done_callback(lambda _: queue.put_nowait(done))
        control._task = task
        try:
            while (ev := await queue.get()) is not done:
                yield ev
            await task  # re-raises the model's error, or CancelledError after interrupt()
        finally:
            control._task = None
            if not task.done():
                task.cancel()

    def _cost(self, a: ModelResponse) -> float:
        d = self.deps
        return call_cost(a.usage, a.model, a.cost_usd, d.prices, d.model.name)

    def _priced(self, a: ModelResponse) -> bool:
        """Whether a price is known for a call whose model did not report its cost (else it counts
        0 and the result says its price is unknown)."""
        d = self.deps
        return any(cost_of(a.usage, name, d.prices) is not None for name in (a.model, d.model.name) if name)

    def charge(self, a: ModelResponse) -> None:
        s = self.state
        s.calls += 1
        self.charge_aside(a)
        if self.obs.enabled:
            self.obs.charged(s.budget.calls[-1])  # the call's chat span ends with its cost
        s.last_stop = a.stop_reason

    def charge_aside(self, a: ModelResponse) -> None:
        """A tool's own model call (WebFetch's small model, WebSearch's search): its usage and
        cost count in this run's budget like the loop's calls (Prop 5.4), without being a turn."""
        s = self.state
        u = a.usage
        s.usage.add(u)
        known = a.cost_usd is not None or self._priced(a)  # reported by the model, or a price for it
        s.budget.charge(CallUsage(u.total_input_tokens, u.output_tokens, u.cache_creation_input_tokens,
                                  u.cache_read_input_tokens, self._cost(a), a.model or self.deps.model.name,
                                  u.web_search_requests, known))  # (price_known, positional: a keyword costs ~1,000 instructions)

    async def execute(self, a: ModelResponse, uses: list[ToolUseBlock]) -> tuple[list[Any], TurnOutcome]:
        """Step 4: one result per tool_use, in order, then any queued user text."""
        control, executor = self.deps.control, self.deps.executor
        self.state.cut_off_text.clear()  # a cut-off answer went on with tool calls: not the final answer
        if control is None:  # (a call cut off at max_tokens is answered with CUT_OFF: models/base.py)
            outcome = await executor.run(uses)
        elif control.interrupted:  # interrupted between the model call and its tools: run none
            outcome = TurnOutcome([ToolResultBlock(u.id, INTERRUPTED, True) for u in uses], interrupted=True)
        else:
            task = asyncio.ensure_future(executor.run(uses))
            control._task = task
            try:
                outcome = await task
            finally:
                control._task = None
        self.state.denials.extend(outcome.denials)
        # Text sent during calls the user interrupted stays queued: the client delivers it as the
        # next prompt, as after an interrupted model call (here the model would never read it).
        b: list[Any] = outcome.results
        if self.memory is not None:
            b = [*b, *self.nested_memory(uses)]
        if control is not None and not outcome.interrupted and control.queued:
            b = [*b, *(TextBlock(q) for q in control.take_queued())]
        return b, outcome

    def result(self, subtype: ResultSubtype, final: ModelResponse | None = None, error: str | None = None) -> ResultMessage:
        s, recorder = self.state, self.deps.recorder
        return ResultMessage(
            subtype=subtype,
            is_error=subtype != "success",
            num_turns=s.t,
            model_calls=s.calls,
            messages=list(s.h),
            result="".join([*s.cut_off_text, text_of(final.content)]) if final is not None and subtype == "success"
            else error,
            stop_reason=s.last_stop,
            total_cost_usd=s.budget.spent_usd,
            usage=s.usage,
            call_usage=s.budget.calls,
            subagent_call_usage=s.budget.subagent_calls,
            duration_ms=int((time.perf_counter() - s.started) * 1000),
            duration_api_ms=int(s.api_seconds * 1000),
            session_id=self.deps.session_id,
            permission_denials=s.denials,
            errors=[error] if error else [],
            user_message_uuid=recorder.prompt_uuid if recorder is not None else None,
        )

    def structured_outcome(self, uses: list[ToolUseBlock], results: list[Any]) -> ResultMessage | None:
        """After a turn: the run's success when StructuredOutput accepted an answer; its end when
        the model has failed too often (structured.py)."""
        from .structured import MAX_FAILURES, TOOL_NAME

        s = self.structured
        assert s is not None
        if s.done:
            r = self.result("success")
            r.result, r.structured_output = s.text(), s.value
            return r
        calls = {u.id for u in uses if u.name == TOOL_NAME}
        s.failures += sum(1 for b in results if isinstance(b, ToolResultBlock) and b.tool_use_id in calls and b.is_error)
        if s.failures >= MAX_FAILURES:
            return self.result("error_max_structured_output_retries",
                               error=f"no valid {TOOL_NAME} call after {s.failures} tries")
        return None

    def structured_reminder(self) -> ResultMessage | None:
        """A final answer in text while a structured one is owed: remind once more, or stop."""
        from .structured import MAX_FAILURES, REMINDER, TOOL_NAME

        s = self.structured
        assert s is not None
        s.failures += 1
        if s.failures >= MAX_FAILURES:
            return self.result("error_max_structured_output_retries",
                               error=f"the model answered without calling {TOOL_NAME} ({s.failures} times)")
        self.state.h.append({"role": "user", "content": [{"type": "text", "text": REMINDER}]})
        self.persist_user()
        return None

    def output_reminder(self, a: ModelResponse) -> ResultMessage | None:
        """A final answer cut off at max_tokens: a reminder turn asks for the rest (bounded, counted
        in model_calls like every call), or the run ends with the error saying what to raise."""
        s = self.state
        if s.output_continuations >= MAX_OUTPUT_CONTINUATIONS:
            return self.result("error_during_execution", error=(
                f"the answer was cut off at max_tokens {s.output_continuations + 1} times ({s.output_continuations} "
                "continuations asked for): raise --max-tokens (AgentOptions.max_tokens) or ask for a shorter answer"))
        s.output_continuations += 1
        s.cut_off_text.append(text_of(a.content))
        s.h.append({"role": "user", "content": [{"type": "text", "text": OUTPUT_REMINDER}]})
        self.persist_user()
        return None

    def budget_stop(self) -> ResultMessage:
        """The budget rule's stop (seed Prop 5.4): S >= B after a charged call."""
        b = self.state.budget
        return self.result("error_max_budget_usd", error=f"spent ${b.spent_usd:.4f} of ${b.limit_usd}")

    async def stop_hook(self) -> str | None:
        """A blocking Stop hook makes the agent continue, at most `max_stop_continuations` times."""
        s, hooks = self.state, self.deps.hooks
        if not hooks.active or s.stop_continuations >= MAX_STOP_CONTINUATIONS:
            return None
        reason = await hooks.stop(s.stop_continuations > 0)
        if reason is None or s.budget.exhausted():  # the budget rule: no call starts at S >= B
            return None
        s.stop_continuations += 1
        return reason

    async def start_hooks(self, prompt: str) -> str | None:
        """SessionStart and UserPromptSubmit. Returns a block reason, or None to go on."""
        hooks, h = self.deps.hooks, self.state.h
        if not hooks.active:
            return None
        extra = [await hooks.session_start("resume" if len(h) > 1 else "startup")]
        submitted = await hooks.user_prompt_submit(prompt)
        if submitted.block is not None:
            return submitted.block
        extra.append(submitted.context)
        context = [TextBlock(c).to_wire() for c in extra if c]
        if context:
            h[-1] = {"role": "user", "content": [*h[-1]["content"], *context]}
        return None

    def persist(self, msg: Message) -> Message:
        """Append a yielded message to the session transcript (before the caller sees it, so
        an assistant message is on disk before its tools run)."""
        recorder = self.deps.recorder
        if recorder is not None and not _from_subagent(msg):
            recorder.record(msg, self.state.h)
            if isinstance(msg, UserMessage):
                msg.uuid = recorder.last_uuid
        return msg

    def hook_messages(self) -> list[SystemMessage]:
        """Hook failures and systemMessages since the last call, as SystemMessages."""
        hooks = self.deps.hooks
        if not self.deps.executor.hooked:  # (hooks.active, known once: its registry is frozen)
            return []
        return [SystemMessage("hook_error" if r["kind"] in ("error", "timeout") else "hook_message", dict(r))
                for r in hooks.take_reports()]

    def persist_prompt(self) -> None:
        if self.deps.recorder is not None:
            self.deps.recorder.prompt(self.state.h[-1])

    def persist_user(self) -> None:
        """A user message the loop adds without yielding it (a Stop hook's reason)."""
        if self.deps.recorder is not None:
            self.deps.recorder.user(self.state.h[-1])

    def init_message(self) -> SystemMessage:
        d = self.deps
        data: InitData = {
            "session_id": d.session_id, "model": d.model.name, "cwd": str(d.cwd),
            "tools": list(d.tools), "permission_mode": d.permission_mode,
            "max_turns": d.options.max_turns, "max_budget_usd": d.options.max_budget_usd,
        }
        if self.memory is not None:
            data["memory_files"] = self.memory.describe()
        if self.warnings:
            data["warnings"] = self.warnings
        out: dict[str, Any] = dict(data)
        if d.mcp is not None:
            out["mcp_servers"] = d.mcp.status()
        if self.trust.ignored:  # workspace trust (trust/): what this run left out
            out["trust"] = self.trust.to_json()
        return SystemMessage("init", out)

    # --- automatic compaction (context.py holds the pure operation) ----------------------

    def auto_compact(self) -> AsyncIterator[Message] | None:
        """The loop's step 0: the compaction of h when the next call's input is forecast above
        threshold * W, else None (most steps: nothing to iterate, not even an empty iterator)."""
        c, h = self.compactor, self.state.h
        if not c.enabled or c.failed:  # (before the forecast)
            return None
        n = c.due(self.state.budget.calls, h, self._fixed_chars())
        if n is None:
            return None
        keep = c.keep_turns(h)
        if keep is None:
            return None
        return self.compact("auto", keep_last_turns=keep, extra={"forecast_tokens": n, "context_window": c.window})

    def _fixed_chars(self) -> int:
        """The system prompt's and tool definitions' size, serialized once per RunDeps (they are
        frozen: new ones come as new deps), not at every step 0."""
        d = self.deps
        if self._fixed is None or self._fixed[0] is not d:
            self._fixed = (d, len(d.system or "") + len(json.dumps(d.tool_defs)))
        return self._fixed[1]

    async def compact(self, trigger: str, *, keep_last_turns: int = DEFAULT_KEEP_TURNS,
                      instructions: str | None = None, extra: dict[str, Any] | None = None
                      ) -> AsyncIterator[Message]:
        """Compact the running loop's history: PreCompact hook, the summarizing call (interruptible,
        charged), then h replaced, Inv's checker reset and compact_boundary yielded (the session
        recorder saves the new h with it). Ends the run with error_max_budget_usd if its cost
        reached B (a ResultMessage, the last message yielded)."""
        s, hooks = self.state, self.deps.hooks
        if hooks.active:
            blocked = await hooks.pre_compact(trigger, instructions or "")
            for m in self.hook_messages():
                yield m
            if blocked is not None:
                yield SystemMessage("compact_error", {"trigger": trigger, "error": f"blocked by a PreCompact hook: {blocked}"})
                return
        c = self.compactor
        told = c.window if c.source in ("server", "error") else None  # a window a server told: must fit
        try:  # when h exceeds it, one summarizing call per chunk that fits
            plan = plan_summary(s.h, keep_last_turns, instructions, told, c.chars_per_token)
        except CompactError as e:
            yield SystemMessage("compact_error", {"trigger": trigger, "error": str(e)})
            return
        charged = False

        def call(req: ModelRequest) -> AsyncIterator[Any]:  # interrupt() cancels it, h intact
            return self.obs.model_call(self, req, self._stream(req), charged=False, purpose=f"compact_{trigger}")

        def charge(response: ModelResponse) -> float:
            # The summarizing calls count in usage and cost, not in the loop's calls (context.py).
            nonlocal charged
            s.usage.add(response.usage)
            cost = self._cost(response)
            s.budget.charge_outside(cost)
            charged = True
            return cost

        result: CompactResult | None = None
        error: str | None = None
        t0 = time.perf_counter()
        try:
            async for ev in summarize(s.h, plan, call, charge):
                if isinstance(ev, CompactResult):
                    result = ev
                elif isinstance(ev, SystemMessage):
                    yield ev  # api_retry; partial StreamEvents of the summary are not shown
        except CompactError as e:
            error = str(e)
        except Exception as e:  # noqa: BLE001 - any failure leaves h as it was (CancelledError passes)
            error = f"the summarizing call failed: {type(e).__name__}: {e}"
        finally:
            s.api_seconds += time.perf_counter() - t0
        if result is None:
            if trigger == "auto":
                self.compactor.failed = True
            yield SystemMessage("compact_error", {"trigger": trigger, "error": error})
        else:
            s.h = result.history
            s.inv.reset()  # the history was replaced, not appended to
            yield SystemMessage("compact_boundary", {**result.boundary_data(trigger), "calls": len(plan.chunks),
                                                     **(extra or {})})
        if charged and s.budget.exhausted():  # the budget rule: this response counts like any other
            yield self.result("error_max_budget_usd",
                              error=f"spent ${s.budget.spent_usd:.4f} of ${s.budget.limit_usd} (compaction)")

    # --- subagents (agents.py runs them through these) -----------------------------------

    def post(self, msg: Message) -> None:
        """A subagent's message, passed on live to the caller of query()."""
        if self.deps.inbox is not None:  # None: the tool was added to a run by hand after it started
            self.deps.inbox.put_nowait(msg)

    def absorb(self, sub: Run) -> None:
        """What a subagent spent is the parent's too (cost, usage, API time, denials)."""
        s = self.state
        s.denials.extend(sub.state.denials)
        s.budget.absorb(sub.state.budget)
        s.usage.add(sub.state.usage)
        s.api_seconds += sub.state.api_seconds

    def messages(self, prompt: Prompt) -> AsyncGenerator[Message, None]:
        """query() on this Run (built already: assemble.build_run)."""
        return run_query(self, prompt)


async def _loop(run: Run) -> AsyncIterator[Message]:
    """Seed Def 3.1, step after step, until one of its stops."""
    s = run.state
    T = run.deps.options.max_turns
    while True:
        if (compaction := run.auto_compact()) is not None:          # 0. near the window W: compact h
            async for ev in compaction:
                yield ev
                if isinstance(ev, ResultMessage):                   #    (its cost reached the budget)
                    return
        if s.budget.exhausted():                                    # budget rule: no call starts at
            yield run.budget_stop()                                 #    S >= B (S shared in a batch)
            return
        a: ModelResponse | None = None
        async for ev in run.call_model():                           # 1. a = M(h)
            if isinstance(ev, ModelResponse):
                a = ev
            else:
                yield ev
        if a is None:                                               #    (compacting to fit W spent B:
            return                                                  #     its result was yielded)
        yield AssistantMessage(a.content, a.model, a.stop_reason, s.budget.calls[-1])
        if a.stop_reason == "pause_turn" and s.budget.exhausted() and not tool_uses(a.content):
            yield run.budget_stop()
            return                                                  # (the unfinished turn is not kept)
        uses = tool_uses(a.content)
        if not uses:                                                # 2. done: h·a
            s.h.append({"role": "assistant", "content": blocks_to_wire(a.content)})
            if a.stop_reason == "max_tokens":                       #    (cut off: a reminder turn asks
                stop = run.output_reminder(a)                       #     for the rest, bounded)
                if stop is not None:
                    yield stop
                    return
                continue
            if run.structured is not None:                          #    (owed a structured answer:
                stop = run.structured_reminder()                    #     a reminder turn, bounded)
                if stop is not None:
                    yield stop
                    return
                continue
            reason = await run.stop_hook()
            if reason is None:
                yield run.result("success", a)
                return
            s.h.append({"role": "user", "content": [{"type": "text", "text": reason}]})
            run.persist_user()
            continue                                                # a Stop hook asked for more
        if len(uses) > 1 and len({u.id for u in uses}) != len(uses):  # a malformed a: run nothing
            ids = [u.id for u in uses]
            raise RunError(f"model response repeats tool_use ids {sorted({i for i in ids if ids.count(i) > 1})}; nothing was run")
        if s.budget.exhausted():                                    # budget rule (Prop 5.4)
            yield run.budget_stop()
            return
        if s.t == T:                                                # 3. turn limit: h unchanged
            yield run.result("error_max_turns", error=f"reached max_turns={T}")
            return
        if run.deps.inbox is None:                                  # 4. gate + execute
            b, outcome = await run.execute(a, uses)
        else:                                                       #    (subagents' messages
            relay = Relay(run.execute(a, uses), run.deps.inbox)     #     pass on live)
            async for m in relay:
                yield m
            b, outcome = relay.value
        a_wire, b_wire = blocks_to_wire(a.content), blocks_to_wire(b)  # both, or neither
        s.h.append({"role": "assistant", "content": a_wire})
        s.h.append({"role": "user", "content": b_wire})
        s.t += 1
        if outcome.interrupted and (task := asyncio.current_task()) is not None and task.cancelling():
            # The consumer itself was cancelled (not RunControl.interrupt()): keep the
            # transcript paired, then let the cancellation go on (asyncio.timeout, TaskGroup).
            run.persist(UserMessage(b))
            raise asyncio.CancelledError
        yield UserMessage(b)
        for m in run.hook_messages():
            yield m
        if outcome.interrupted or outcome.stop_message:
            yield run.result("error_during_execution", error=outcome.stop_message or "interrupted by user")
            return
        if run.structured is not None:                              # a valid StructuredOutput call
            stop = run.structured_outcome(uses, b)                  #    ends the run at once
            if stop is not None:
                yield stop
                return
        if s.final is not None:                                     # a tool ended the run (a plan,
            r = run.result("success")                               #    headless): its text is the result
            r.result = s.final
            yield r
            return
        if s.budget.exhausted():                                    # subagents spent the rest of B
            yield run.budget_stop()
            return


def run_query(run: Run, prompt: Prompt) -> AsyncGenerator[Message, None]:
    """query() on a Run already built (assemble.build_run), inside its telemetry span."""
    return run.obs.run(run, _run_query(run, prompt))


async def _run_query(run: Run, prompt: Prompt) -> AsyncGenerator[Message, None]:
    text = prompt_text(prompt)  # what hooks and mentions read (the blocks are in h already)
    d = run.deps
    control = d.control
    try:
        await run.open_mcp()  # servers start together before the first call; they end in `finally`
        d = run.deps
        yield run.persist(run.init_message())
        discovered = await run.discover_window()
        if discovered is not None:
            yield run.persist(discovered)
        blocked = await run.start_hooks(text)
        for m in run.hook_messages():
            yield run.persist(m)
        if blocked is None and d.options.file_mentions and run.is_top:
            await run.include_mentions(text)  # `@file`s, gated as Reads (mentions.py)
        run.persist_prompt()  # before the first model call: a crash from here on can be resumed
        if blocked is not None:
            yield run.persist(run.result("error_during_execution", error=f"prompt blocked by a UserPromptSubmit hook: {blocked}"))
            return
        if d.recorder is None:  # (not persisting: the loop's messages as they come)
            async for msg in _loop(run):
                yield msg
        else:
            async for msg in _loop(run):
                yield run.persist(msg)
    except asyncio.CancelledError:
        if control is None or not control.interrupted:
            raise
        yield run.persist(run.result("error_during_execution", error="interrupted by user"))
    except (ModelError, RunError) as e:
        yield run.persist(run.result("error_during_execution", error=str(e)))
    except Exception as e:  # a harness bug or a broken model: report it, keep the history valid
        yield run.persist(run.result("error_during_execution", error=f"{type(e).__name__}: {e}"))
    finally:
        if d.mcp is not None:  # every server process ends with its run, whatever the ending
            await d.mcp.aclose()
        if d.executor.ctx.state.bash.shells:  # background shells end with their run
            from .tools.bash import kill_all_shells

            await kill_all_shells(d.executor.ctx)
        if d.recorder is not None:
            d.recorder.close()
        if d.hooks.active:
            await d.hooks.session_end("other")
        if isinstance(d.options.model, str) or d.options.model is None:  # the run made it: close it
            with contextlib.suppress(Exception):
                await close_model(d.model)


# --- subagents' messages ----------------------------------------------------------------------

def _from_subagent(msg: Message) -> bool:
    """A message a subagent posted (it belongs to no session transcript of the parent)."""
    if isinstance(msg, SystemMessage):
        return "parent_tool_use_id" in msg.data
    return getattr(msg, "parent_tool_use_id", None) is not None


T = TypeVar("T")


class Relay(Generic[T]):
    """Runs `work` (one turn's tool calls) in a task and passes on, live, the messages subagents
    post to `inbox` meanwhile; `value` is then work's result. (A run that spawns no subagents
    has no inbox: _loop awaits its work in place, no task, no iterator.)"""

    def __init__(self, work: Awaitable[T], inbox: asyncio.Queue[Message]) -> None:
        self.work = work
        self.inbox = inbox
        self.value: T

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._relayed(self.inbox)

    async def _relayed(self, inbox: asyncio.Queue[Message]) -> AsyncIterator[Message]:
        done = SystemMessage("_relay_done")

        async def step() -> T:
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
