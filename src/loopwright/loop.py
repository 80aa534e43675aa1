"""Room: loop. Owns Run, query() and run(); may import options and every room below it, never agents,
client, workflows or cli.

The agent loop: seed Def 3.1, one step with four cases, and the entry points
`query()` (async stream of messages) and `run()` (sync, returns the ResultMessage).

State is (h, e, t): the history `h`, the environment (the tools' world), and the
tool-use turns done `t`. Everything around the step (accounting, results,
sessions) lives in `Run`; the step itself is `_loop` below.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

from .agents import Relay, from_subagent, has_agent_tool
from .blocks import TextBlock, ToolResultBlock, ToolUseBlock, WireMessage, text_of, tool_uses
from .context import AutoCompactor, auto_compact
from .execute import INTERRUPTED, Executor, TurnOutcome
from .hooks import HookContext
from .invariant import InvariantChecker
from .messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    ResultSubtype,
    SystemMessage,
    UserMessage,
)
from .models import resolve_model
from .models.base import STOP_REASONS, ModelError, ModelRequest, ModelResponse
from .models.catalog import cost_of
from .options import AgentOptions
from .settings import build_run_config
from .tools.base import Tool, ToolContext
from .usage import Budget, CallUsage, Usage, price_for

CUT_OFF = (
    "Not run: your response hit max_tokens before this tool call was complete, so its input "
    "may be cut off. Re-issue the call (split large inputs if needed)."
)


MAX_STOP_CONTINUATIONS = 3


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


class Run:
    """One run's state and bookkeeping. The step that changes (h, e, t) is `_loop`."""

    def __init__(self, prompt: str, options: AgentOptions, control: RunControl | None = None,
                 history: list[WireMessage] | None = None) -> None:
        self.options = options
        self.model = resolve_model(options)
        self.prices = {**(options.prices or {})}
        self._price = price_for(self.model.name, self.prices or None) or price_for(self.model.name)
        if options.max_budget_usd is not None and self._price is None and not getattr(self.model, "has_own_cost", False):
            raise ValueError(
                f"max_budget_usd is set but the price of model {self.model.name!r} is unknown, so the "
                "budget could not be kept: give its price (AgentOptions(prices={...}) in Python) "
                "or run without a budget (no --max-budget-usd)"
            )
        self.cwd = Path(options.cwd or ".").resolve()
        self.warnings: list[str] = []  # about the user's own files (memory, skills), for the init message
        from .structured import StructuredOutput

        self.structured = StructuredOutput.from_options(options.output_format, options.output_type)
        tools = [*options.tools, *self._skill_tool(options), *([self.structured.tool] if self.structured else [])]
        self.tools = {t.name: t for t in tools}
        self.tool_defs = [t.definition() for t in tools]  # built once: byte-stable across calls
        self.system = "\n\n".join(p for p in (options.system_prompt, options.append_system_prompt) if p) or None
        self.recorder: Any = None  # sessions.SessionRecorder when persisting
        if options.persist_session or (history is None and (options.resume or options.continue_conversation)):
            from .sessions import (
                start_session,  # resume/fork/continue: load h; persist: open the transcript
            )

            started = start_session(options, self.cwd, history is not None)
            self.session_id, self.recorder = started.session_id, started.recorder
            history = history if history is not None else started.history
        else:
            self.session_id = options.session_id or str(uuid.uuid4())
        self.h: list[WireMessage] = list(history or [])
        self.h.append({"role": "user", "content": [{"type": "text", "text": prompt}]})
        self.memory_seen: set[Path] = set()
        self.memory = self._load_memory(fresh=not self.h[:-1])
        self.t = 0
        self.calls = 0
        self.budget = Budget(options.max_budget_usd)
        self.usage = Usage()
        self.inv = InvariantChecker()
        self.compactor = AutoCompactor(options, self.model.name)  # context.py
        self.denials: list[dict[str, Any]] = []
        self.control = control
        config = build_run_config(options, self.cwd)  # settings files + options (settings.py)
        self.hooks, permissions = config.hooks, config.permissions
        self.permission_mode = permissions.mode or "default"
        ctx = ToolContext(self.cwd, self.session_id, add_dirs=config.add_dirs, env=config.env, run=self,
                          sandbox=config.sandbox)
        permissions.tool_state = ctx.state  # the gate resolves Bash paths from the shell's cwd
        if self.recorder is not None:
            from .checkpoints import snapshot_hook  # file checkpoints, keyed to this turn's prompt

            ctx.before_file_change = snapshot_hook(self.recorder)
        self.executor = Executor(self.tools, permissions, self.hooks, ctx)
        # MCP servers (mcp/): configured ones start in run_query; their tools join self.tools.
        from .mcp.config import for_run

        self.mcp_configs = for_run(options, self.cwd, config.settings)
        self.mcp: Any = None  # mcp.client.McpRuntime once started
        # Subagents (agents.py) post their messages here while the Agent tool runs.
        self.inbox: asyncio.Queue[Message] | None = asyncio.Queue() if has_agent_tool(options.tools) else None
        self.api_seconds = 0.0
        self.started = time.perf_counter()
        self.last_stop: str | None = None
        self.stop_continuations = 0
        transcript = str(getattr(self.recorder.writer, "path", "")) if self.recorder is not None else ""
        self.hooks.bind(HookContext(self.session_id, transcript, str(self.cwd), self.permission_mode))

    def _skill_tool(self, options: AgentOptions) -> list[Tool]:
        """The Skill tool (skills.py) when the setting sources hold skills and none is given."""
        sources = options.setting_sources or []
        if not sources or any(t.name == "Skill" for t in options.tools):
            return []
        from .skills import find_skills, make_skill_tool

        skills, warnings = find_skills(self.cwd, sources)
        self.warnings += warnings
        return [make_skill_tool(skills)] if skills else []

    def _load_memory(self, fresh: bool) -> Any:
        """Project memory (memory.py), sent once: in the first user message of a conversation."""
        sources = self.options.setting_sources or []
        if not self.options.memory or not sources:
            return None
        from .memory import load_memory

        mem = load_memory(self.cwd, sources)
        self.warnings += mem.warnings
        text = mem.block_text() if fresh else None
        if text:
            self.h[-1]["content"].insert(0, {"type": "text", "text": text})
        self.memory_seen = {f.path.resolve() for f in mem.files}
        return mem

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
                mem = nested_memory(path, self.cwd, self.memory_seen, self.options.setting_sources or [])
                self.memory.files += mem.files
                self.warnings += mem.warnings
                text = mem.block_text()
                if text:
                    out.append(TextBlock(text))
        return out

    # --- the pieces of one step ---------------------------------------------------------

    async def call_model(self) -> AsyncIterator[Any]:
        """a = M(h): one model call (plus continuations of a paused turn), timed and charged."""
        self.inv.check(self.h)  # Inv on exactly what the model is about to see (Thm 3.4)
        req = ModelRequest(self.system, self.tool_defs, self.h, self.options.max_tokens)
        content: list[Any] = []
        for attempt in range(self.options.max_pause_continuations + 1):
            t0 = time.perf_counter()
            a: ModelResponse | None = None
            try:
                async for ev in self._stream(req):
                    if isinstance(ev, ModelResponse):
                        a = ev
                    else:
                        yield ev
            finally:
                self.api_seconds += time.perf_counter() - t0
                if attempt:
                    self.h.pop()  # drop the paused partial turn sent for continuation
            if a is None:
                raise ModelError(f"model {self.model.name!r} returned no response")
            self.charge(a)
            if a.stop_reason not in STOP_REASONS:
                raise RunError(f"model returned an unknown stop_reason {a.stop_reason!r}")
            a.content = content + a.content
            if a.stop_reason != "pause_turn" or tool_uses(a.content) or self.budget.exhausted:
                yield a  # (a paused turn that reached the budget is not continued: Prop 5.4)
                return
            content = a.content  # pause_turn: send the partial turn back so the model continues
            if attempt == self.options.max_pause_continuations:
                break
            self.h.append({"role": "assistant", "content": [b.to_wire() for b in content]})
        raise RunError(f"the model paused its turn more than {self.options.max_pause_continuations} times")

    async def _stream(self, req: ModelRequest) -> AsyncIterator[Any]:
        """The model's events. Under a RunControl the stream runs in its own task, so that
        interrupt() cancels just the model call: the run then ends with h intact."""
        if self.control is None:
            async for ev in self.model.stream(req):
                yield ev
            return
        if self.control.interrupted:
            raise asyncio.CancelledError
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()

        async def pump() -> None:
            try:
                async for ev in self.model.stream(req):
                    queue.put_nowait(ev)
            finally:
                queue.put_nowait(done)

        task = asyncio.ensure_future(pump())
        self.control._task = task
        try:
            while (ev := await queue.get()) is not done:
                yield ev
            await task  # re-raises the model's error, or CancelledError after interrupt()
        finally:
            self.control._task = None
            if not task.done():
                task.cancel()

    def charge(self, a: ModelResponse) -> None:
        self.calls += 1
        cost = a.cost_usd if a.cost_usd is not None else (
            cost_of(a.usage, a.model, self.prices) or cost_of(a.usage, self.model.name, self.prices) or 0.0)
        u = a.usage
        self.usage.add(u)
        self.budget.charge(CallUsage(u.total_input_tokens, u.output_tokens, u.cache_creation_input_tokens,
                                     u.cache_read_input_tokens, cost, a.model))
        self.last_stop = a.stop_reason

    async def execute(self, a: ModelResponse, uses: list[ToolUseBlock]) -> tuple[list[Any], TurnOutcome]:
        """Step 4: one result per tool_use, in order, then any queued user text."""
        if a.stop_reason == "max_tokens":  # inputs may be truncated: run none of them
            outcome = TurnOutcome([ToolResultBlock(u.id, CUT_OFF, True) for u in uses])
        elif self.control is None:
            outcome = await self.executor.run(uses)
        elif self.control.interrupted:  # interrupted between the model call and its tools: run none
            outcome = TurnOutcome([ToolResultBlock(u.id, INTERRUPTED, True) for u in uses], interrupted=True)
        else:
            task = asyncio.ensure_future(self.executor.run(uses))
            self.control._task = task
            try:
                outcome = await task
            finally:
                self.control._task = None
        self.denials.extend(outcome.denials)
        queued = self.control.take_queued() if self.control else []
        return [*outcome.results, *self.nested_memory(uses), *(TextBlock(q) for q in queued)], outcome

    def result(self, subtype: ResultSubtype, final: ModelResponse | None = None, error: str | None = None) -> ResultMessage:
        return ResultMessage(
            subtype=subtype,
            is_error=subtype != "success",
            num_turns=self.t,
            model_calls=self.calls,
            messages=list(self.h),
            result=text_of(final.content) if final is not None and subtype == "success" else error,
            stop_reason=self.last_stop,
            total_cost_usd=self.budget.spent_usd,
            usage=self.usage,
            call_usage=self.budget.calls,
            subagent_call_usage=self.budget.subagent_calls,
            duration_ms=int((time.perf_counter() - self.started) * 1000),
            duration_api_ms=int(self.api_seconds * 1000),
            session_id=self.session_id,
            permission_denials=self.denials,
            errors=[error] if error else [],
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
        self.h.append({"role": "user", "content": [{"type": "text", "text": REMINDER}]})
        self.persist_user()
        return None

    def budget_stop(self) -> ResultMessage:
        """The budget rule's stop (seed Prop 5.4): S >= B after a charged call."""
        return self.result("error_max_budget_usd", error=f"spent ${self.budget.spent_usd:.4f} of ${self.budget.limit_usd}")

    async def stop_hook(self) -> str | None:
        """A blocking Stop hook makes the agent continue, at most `max_stop_continuations` times."""
        if not self.hooks.active or self.stop_continuations >= MAX_STOP_CONTINUATIONS:
            return None
        reason = await self.hooks.stop(self.stop_continuations > 0)
        if reason is None or self.budget.exhausted:  # the budget rule: no call starts at S >= B
            return None
        self.stop_continuations += 1
        return reason

    async def start_hooks(self, prompt: str) -> str | None:
        """SessionStart and UserPromptSubmit. Returns a block reason, or None to go on."""
        if not self.hooks.active:
            return None
        extra = [await self.hooks.session_start("resume" if len(self.h) > 1 else "startup")]
        submitted = await self.hooks.user_prompt_submit(prompt)
        if submitted.block is not None:
            return submitted.block
        extra.append(submitted.context)
        context = [TextBlock(c).to_wire() for c in extra if c]
        if context:
            self.h[-1] = {"role": "user", "content": [*self.h[-1]["content"], *context]}
        return None

    def persist(self, msg: Message) -> Message:
        """Append a yielded message to the session transcript (before the caller sees it, so
        an assistant message is on disk before its tools run)."""
        if self.recorder is not None and not from_subagent(msg):
            self.recorder.record(msg, self.h)
        return msg

    def hook_messages(self) -> list[SystemMessage]:
        """Hook failures and systemMessages since the last call, as SystemMessages."""
        if not self.hooks.active:
            return []
        return [SystemMessage("hook_error" if r["kind"] in ("error", "timeout") else "hook_message", r)
                for r in self.hooks.take_reports()]

    def persist_prompt(self) -> None:
        if self.recorder is not None:
            self.recorder.prompt(self.h[-1])

    def persist_user(self) -> None:
        """A user message the loop adds without yielding it (a Stop hook's reason)."""
        if self.recorder is not None:
            self.recorder.user(self.h[-1])

    def init_message(self) -> SystemMessage:
        return SystemMessage("init", {
            "session_id": self.session_id, "model": self.model.name, "cwd": str(self.cwd),
            "tools": list(self.tools), "permission_mode": self.permission_mode,
            "max_turns": self.options.max_turns, "max_budget_usd": self.options.max_budget_usd,
            **({"memory_files": self.memory.describe()} if self.memory is not None else {}),
            **({"warnings": self.warnings} if self.warnings else {}),
            **({"mcp_servers": self.mcp.status()} if self.mcp is not None else {}),
        })


async def _loop(run: Run) -> AsyncIterator[Message]:
    """Seed Def 3.1, step after step, until one of its stops."""
    T = run.options.max_turns
    while True:
        async for ev in auto_compact(run):                          # 0. near the window W: compact h
            yield ev
            if isinstance(ev, ResultMessage):                       #    (its cost reached the budget)
                return
        if run.budget.exhausted:                                    # budget rule: no call starts at
            yield run.budget_stop()                                 #    S >= B (S shared in a batch)
            return
        a: ModelResponse | None = None
        async for ev in run.call_model():                           # 1. a = M(h)
            if isinstance(ev, ModelResponse):
                a = ev
            else:
                yield ev
        assert a is not None
        yield AssistantMessage(a.content, a.model, a.stop_reason, run.budget.calls[-1])
        if a.stop_reason == "pause_turn" and run.budget.exhausted and not tool_uses(a.content):
            yield run.budget_stop()
            return                                                  # (the unfinished turn is not kept)
        uses = tool_uses(a.content)
        if not uses:                                                # 2. done: h·a
            run.h.append({"role": "assistant", "content": [b.to_wire() for b in a.content]})
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
            run.h.append({"role": "user", "content": [{"type": "text", "text": reason}]})
            run.persist_user()
            continue                                                # a Stop hook asked for more
        ids = [u.id for u in uses]
        if len(set(ids)) != len(ids):                               # a malformed a: run nothing
            raise RunError(f"model response repeats tool_use ids {sorted({i for i in ids if ids.count(i) > 1})}; nothing was run")
        if run.budget.exhausted:                                    # budget rule (Prop 5.4)
            yield run.budget_stop()
            return
        if run.t == T:                                              # 3. turn limit: h unchanged
            yield run.result("error_max_turns", error=f"reached max_turns={T}")
            return
        relay = Relay(run.execute(a, uses), run.inbox)              # 4. gate + execute; subagents'
        async for m in relay:                                       #    messages pass on live
            yield m
        b, outcome = relay.value
        a_wire, b_wire = [x.to_wire() for x in a.content], [x.to_wire() for x in b]  # both, or neither
        run.h.append({"role": "assistant", "content": a_wire})
        run.h.append({"role": "user", "content": b_wire})
        run.t += 1
        task = asyncio.current_task()
        if outcome.interrupted and task is not None and task.cancelling():
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
        if run.budget.exhausted:                                    # subagents spent the rest of B
            yield run.budget_stop()
            return


async def query(prompt: str, options: AgentOptions | None = None, *, control: RunControl | None = None,
                history: list[WireMessage] | None = None) -> AsyncIterator[Message]:
    """Run the agent loop on `prompt`, yielding SystemMessage("init"), AssistantMessage,
    UserMessage (tool results), optional partial events, and last a ResultMessage."""
    run = Run(prompt, options or AgentOptions(), control, history)
    async with contextlib.aclosing(run_query(run, prompt)) as stream:
        async for msg in stream:
            yield msg


async def run_query(run: Run, prompt: str) -> AsyncGenerator[Message, None]:
    """query() on a Run already built (a subagent's Run is adjusted first: agents.py)."""
    control = run.control
    try:
        if run.mcp_configs:  # servers start together before the first call; they end in `finally`
            from .mcp.client import attach

            await attach(run, run.mcp_configs)
        yield run.persist(run.init_message())
        blocked = await run.start_hooks(prompt)
        for m in run.hook_messages():
            yield run.persist(m)
        run.persist_prompt()  # before the first model call: a crash from here on can be resumed
        if blocked is not None:
            yield run.persist(run.result("error_during_execution", error=f"prompt blocked by a UserPromptSubmit hook: {blocked}"))
            return
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
        if run.mcp is not None:  # every server process ends with its run, whatever the ending
            await run.mcp.aclose()
        if run.executor.ctx.state.bash_shells:  # background shells end with their run
            from .tools.bash import kill_all_shells

            await kill_all_shells(run.executor.ctx)
        if run.recorder is not None:
            run.recorder.close()
        if run.hooks.active:
            await run.hooks.session_end("other")
        if isinstance(run.options.model, str) or run.options.model is None:  # the run made it: close it
            with contextlib.suppress(Exception):
                await getattr(run.model, "aclose", _nothing)()


async def _nothing() -> None:
    return None


def run(prompt: str, options: AgentOptions | None = None) -> ResultMessage:
    """Synchronous `query()`: run to the end and return the ResultMessage."""

    async def go() -> ResultMessage:
        last: Message | None = None
        async for msg in query(prompt, options):
            last = msg
        assert isinstance(last, ResultMessage)
        return last

    return asyncio.run(go())
