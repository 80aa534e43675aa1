"""Room: bases. Owns Tool, ToolContext, ToolOutput and @tool; may import data types only.

Tools: `Tool` and the `@tool` decorator (seed Def 2.2, Def 6.1; SPEC §1).

A tool maps (input, environment) to (result, is_error, new environment). Handlers
may be sync or async, take the validated input dict (and optionally a
`ToolContext`), and return a string, a list of blocks, or a `ToolOutput`; raising
is fine: the loop turns any exception into an is_error result.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import contextvars
import dataclasses
import inspect
import json
import os
import re
import threading
import time
import typing
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType
from typing import TYPE_CHECKING, Any, Generic, Protocol

from ..blocks import (
    Block,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    WireFormatError,
    block_from_wire,
)
from ..workspace import ToolState

if TYPE_CHECKING:
    from ..hooks import RunHooks
    from ..interaction import AskUser, ReviewPlan
    from ..messages import Message
    from ..models.base import Model, ModelResponse

_BLOCK_CLASSES: tuple[type, ...] = typing.get_args(Block)
# The type of a run's dependencies (AgentOptions.deps): `ToolContext[Deps]` (alias RunContext[Deps],
# pydantic-ai's name) types `ctx.deps` for mypy; unparameterized, it is Any.
# (typing_extensions for mypy only: importing it costs ~20 ms of start-up; 3.11's TypeVar has no default)
if TYPE_CHECKING:
    from typing_extensions import TypeVar

    DepsT = TypeVar("DepsT", default=Any)
else:
    DepsT = typing.TypeVar("DepsT")

# What the APIs accept as a tool name, ^[a-zA-Z0-9_-]{1,64}$ (a set, not a pattern: `$` would let
# a name end in a newline, and compiling it is on every run's way)
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class ToolError(Exception):
    """Raise from a handler to return a clean is_error result with just this message."""


@dataclass(slots=True)
class ToolOutput:
    """What a tool handler returns: text or blocks, and whether the call failed (an is_error result)."""

    content: str | list[Block]
    is_error: bool = False


@dataclass(frozen=True, slots=True)  # (not a NamedTuple: its string annotations are compiled at import)
class BudgetView:
    """What a tool may know of its run's budget: the limit B (None: none) and the spend S so far."""

    limit_usd: float | None
    spent_usd: float
    exhausted: bool = False  # S >= B, or a batch's shared spend is spent: no model call may start

    @property
    def left_usd(self) -> float | None:
        return None if self.limit_usd is None else self.limit_usd - self.spent_usd


@dataclass(frozen=True, slots=True)
class SubagentSpec:
    """A subagent the Agent tool asks its run for (agents.py): the run's assembler turns it into
    the subagent's options (the parent's, with these changes)."""

    prompt: str
    agent_type: str
    system_prompt: str
    tools: list[Tool]
    model: str | Model | None = None  # None: the parent's model
    max_turns: int | None = None  # None: the parent's turn limit
    max_budget_usd: float | None = None
    permission_mode: str | None = None  # None: the parent's (agents.py: the definition's permissionMode)
    effort: str | None = None  # None: the parent's


class Subagent(Protocol):
    """A subagent's run as the Agent tool drives it (built by `RunPorts.spawn`, not started)."""

    @property
    def hooks(self) -> RunHooks: ...

    def add_context(self, text: str) -> None:
        """Append text to the subagent's first message (SubagentStart's additionalContext)."""

    def messages(self) -> AsyncGenerator[Message, None]:
        """Run it: its messages, the ResultMessage last."""


class RunPorts(Protocol):
    """What a running tool may ask of the run it belongs to: narrow, typed ports (never the
    Run itself). The loop's assembler (assemble.py) provides them; a tool called outside a
    run has `ctx.ports is None`."""

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The run's tools (MCP ones included), by name."""

    @property
    def model(self) -> Model: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def settings(self) -> Any:
        """The run's settings files, merged (settings.Settings), or None when none were read."""

    @property
    def max_pause_continuations(self) -> int: ...

    def budget(self) -> BudgetView: ...

    def new_model(self, spec: str) -> Model:
        """A model of `spec` reached as the run's own is (its base_url, api_key, retries), with no
        prompt caching (a tool's own call is made once). Raises ValueError for a bad spec."""

    def charge(self, response: ModelResponse) -> None:
        """A model call a tool made for the run (WebFetch, WebSearch): its usage and cost count in
        the run's budget like the loop's calls (Prop 5.4), without being a turn."""

    def emit(self, msg: Message) -> None:
        """Pass a message on, live, to the caller of query() (a subagent's; never into history)."""

    def save_artifact(self, name: str, text: str) -> Path | None:
        """Save text beside the session transcript (`<session>/tool-results/<name>`): its path,
        or None when the run keeps no transcript or it cannot be written."""

    def spawn(self, spec: SubagentSpec) -> Subagent:
        """A subagent of this run: the parent's gate and hooks, its own history and shell cwd.
        Raises (ValueError, ...) when the spec cannot make a run (unknown model, price)."""

    def absorb(self, sub: Subagent) -> None:
        """What the subagent spent is this run's too (cost, usage, API time, denials)."""


@dataclass
class ToolContext(Generic[DepsT]):
    """What a running tool may know about its run: the working directory and session state.

    `state` is shared by all tools of one session (for example the set of files Read
    has seen, which Write and Edit check). `deps`: the run's AgentOptions.deps (typed by
    annotating the parameter `ToolContext[Deps]`, or its alias `RunContext[Deps]`)."""

    cwd: Path
    session_id: str = ""
    tool_use_id: str = ""
    state: ToolState = field(default_factory=ToolState)
    # Called with a file's path just before a tool changes or creates it (checkpoints).
    before_file_change: Callable[[Path], None] | None = None
    # Called just after a tool changed a file (checkpoints note the agent's version: rewind warns
    # when the file was changed again since).
    after_file_change: Callable[[Path], None] | None = None
    add_dirs: list[Path] = field(default_factory=list)
    # Extra environment for the processes tools start (the settings files' "env").
    env: dict[str, str] = field(default_factory=dict)
    # The run this call belongs to, as narrow ports (agents.py spawns subagents through them).
    ports: RunPorts | None = None
    # sandbox.Sandbox when Bash (and Grep's rg) run in the OS sandbox; None: they run unsandboxed.
    sandbox: Any = None
    # How many calls of this tool run concurrently with this one, itself included (concurrent
    # subagents split what is left of the budget: agents.py).
    siblings: int = 1
    # The user, when the front end has one (interaction.py): AskUserQuestion asks through
    # `ask_user`, ExitPlanMode through `review_plan`; None: nobody to ask (a headless run).
    ask_user: AskUser | None = None
    review_plan: ReviewPlan | None = None
    # The gate's permission mode, to read and (ExitPlanMode, once approved) to change.
    permission_mode: Callable[[], str] | None = None
    set_permission_mode: Callable[[str], None] | None = None
    # Ends the run after this turn with `text` as its success result (a headless plan).
    finish: Callable[[str], None] | None = None
    deps: DepsT = None  # type: ignore[assignment]  # AgentOptions.deps (None when none were given)

    def for_call(self, tool_use_id: str, siblings: int) -> ToolContext[DepsT]:
        """This context for one call (concurrent calls must not share one): dataclasses.replace's
        result, without its field-by-field __init__ (a few µs a call)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.tool_use_id, new.siblings = tool_use_id, siblings
        return new


RunContext = ToolContext  # pydantic-ai's name: a tool's `ctx: RunContext[Deps]` (docs/porting-from-pydantic-ai.md)
Handler = Callable[..., Any]


def remote_refs(schema: Any) -> list[str]:
    """The `$ref`s of a schema that point outside it (a URL, a file): never fetched, by anyone
    (a tool's schema from an MCP server would make this machine send requests: SSRF)."""
    out: list[str] = []
    stack = [schema]
    while stack and len(out) < 10:
        x = stack.pop()
        if isinstance(x, dict):
            ref = x.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                out.append(ref)
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


def _fast_validator(schema: Any) -> Any:
    """fastjsonschema's compiled check of `schema`, or False (a draft it does not know, a schema
    it refuses: jsonschema decides). No defaults filled in, no formats checked, as jsonschema.
    A schema with a remote `$ref` is never given to it (it would GET the URL)."""
    draft = str(schema.get("$schema", "draft-07")) if isinstance(schema, dict) else ""
    if not draft.rstrip("/#").endswith(("draft-04/schema", "draft-06/schema", "draft-07/schema", "draft-07")):
        return False
    if remote_refs(schema):
        return False
    try:
        import fastjsonschema

        return fastjsonschema.compile(schema, use_default=False, use_formats=False)
    except Exception:
        return False


class Tool:
    """A tool the model may call: `Tool(name, description, input_schema, handler, read_only=False)`.
    `takes_context`: whether the handler is called as handler(input, ctx) (from its signature)."""

    __slots__ = ("name", "description", "input_schema", "handler", "read_only", "needs_approval", "spawns_agents",
                 "read_only_call", "takes_context", "_is_async", "_validator", "_fast", "_convert", "_quick", "_prove")

    def __init__(
        self,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        handler: Handler,
        read_only: bool = False,
        *,
        needs_approval: bool = True,
        spawns_agents: bool = False,
        read_only_call: Callable[[dict[str, Any], dict[str, Tool]], bool] | None = None,
        _convert: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        """`needs_approval=False` marks a tool that only manages the agent's own work (a todo
        list, a background shell's output, a subagent whose own calls are gated): permission
        modes pass it like a read-only tool; deny and ask rules still apply.
        `spawns_agents`: the Agent tool (agents.py), whose subagents post messages to the run.
        `read_only_call(input, run_tools)`: for a tool that is read-only for some inputs only (an
        Agent call whose subagent type has read-only tools): such calls run concurrently with
        the read-only calls next to them (seed Prop 6.2)."""
        if not (isinstance(name, str) and 0 < len(name) <= 64 and NAME_CHARS.issuperset(name)):
            raise ValueError(f"tool name {name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")
        if not isinstance(input_schema, dict) or input_schema.get("type") != "object":
            raise ValueError(f"tool {name!r}: input_schema must be a JSON Schema with type 'object'")
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.handler = handler
        self.read_only = read_only
        self.needs_approval = needs_approval
        self.spawns_agents = spawns_agents
        self.read_only_call = read_only_call
        self.takes_context = _wants_ctx(name, handler)  # handler(input, ctx), not handler(input)
        self._is_async = inspect.iscoroutinefunction(handler)
        self._validator: Any = None  # compiled lazily: jsonschema is not imported at startup
        self._fast: Any = None  # fastjsonschema's check, compiled at the first call (False: not usable)
        self._convert = _convert
        # A sync handler's record (see _run_sync): lone calls in a row quicker than QUICK_S in a
        # worker thread, and how many prove it quick (doubled each time a call on the loop was slow).
        self._quick = 0
        self._prove = PROVE_CALLS

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, read_only={self.read_only})"

    def definition(self) -> dict[str, Any]:
        """The wire tool definition {name, description, input_schema}."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def validate(self, data: Any) -> str | None:
        """None if `data` fits the schema, else a message that says what is wrong.

        A valid input is recognised by fastjsonschema, compiled once per tool (loading it
        and compiling a tool takes ~10x less than loading jsonschema); only an invalid
        input, or a schema fastjsonschema does not take, loads jsonschema, for its messages."""
        fast = self._fast  # (a local: Python 3.11 does not specialize calling an attribute as a method)
        if fast is None:
            fast = self._fast = _fast_validator(self.input_schema)
        if fast:
            try:
                fast(data)
                return None
            except Exception:  # JsonSchemaValueException: jsonschema says what is wrong, below
                pass
        if self._validator is None:
            import jsonschema
            from jsonschema_specifications import REGISTRY  # the drafts' own schemas, no retrieval

            cls = jsonschema.validators.validator_for(self.input_schema)
            cls.check_schema(self.input_schema)
            self._validator = cls(self.input_schema, registry=REGISTRY)  # a remote $ref: an error, never a GET
        errors = sorted(self._validator.iter_errors(data), key=lambda e: list(e.path))
        if not errors:
            return None
        parts = []
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.path)
            parts.append(f"{where or '(input)'}: {e.message}")
        return f"Invalid input for tool {self.name}: " + "; ".join(parts)

    async def call(self, data: dict[str, Any], ctx: ToolContext, in_thread: bool = False,
                   wait: float = 0.0) -> ToolOutput:
        """Validate and run. Never raises for tool failures: they become is_error outputs.
        `in_thread`: a sync handler runs in a worker thread; `wait`: see run_in_worker."""
        try:
            problem = self.validate(data)
        except Exception as e:  # jsonschema.SchemaError: the tool's own schema is broken
            self._validator = None
            why = getattr(e, "message", None) or str(e)
            return ToolOutput(f"Tool {self.name} cannot be called: its input_schema is invalid: {why}", is_error=True)
        if problem is not None:
            return ToolOutput(problem, is_error=True)
        try:
            arg: Any = self._convert(data) if self._convert is not None else data
        except Exception as e:  # pydantic conversion of a schema-valid input
            return ToolOutput(f"Invalid input for tool {self.name}: {e}", is_error=True)
        try:
            if self._is_async:  # (called directly, not with *args: Python 3.11 specializes such a call)
                handler = self.handler
                raw = await (handler(arg, ctx) if self.takes_context else handler(arg))
            else:
                args = (arg, ctx) if self.takes_context else (arg,)
                if in_thread:
                    raw = await self._run_sync(args, wait)
                    if inspect.isawaitable(raw):  # a sync handler that returned a coroutine
                        raw = await raw
                else:
                    raw = self.handler(*args)
                    if inspect.isawaitable(raw):
                        raw = await raw
        except ToolError as e:
            return ToolOutput(str(e), is_error=True)
        except Exception as e:
            return ToolOutput(f"{type(e).__name__}: {e}", is_error=True)
        return to_output(raw)

    async def _run_sync(self, args: tuple[Any, ...], wait: float) -> Any:
        """The sync handler off the event loop (a worker thread) unless proven quick: after
        PROVE_CALLS lone calls in a row each quicker than QUICK_S in the worker, it runs on the
        loop (the hand-off costs ten times a no-op handler). A call there slower than
        INLINE_WAIT_S (what a lone call may hold the loop anyway) sends it back to the worker,
        and it must prove itself twice as long: a new or slow handler never holds up an
        interrupt for more than INLINE_WAIT_S, a quick one that turns slow does it once, a
        sometimes-slow one ever more rarely (log2 of its calls), and a busy machine's odd
        preemption costs a few calls in a thread. A handler that needs the loop to finish
        (run_coroutine_threadsafe(...).result()) holds the worker for at least `wait` (the loop
        is held as long), so it is never proven quick and never deadlocks. Calls side by side
        (wait 0) always run in threads and prove nothing."""
        if wait <= 0:
            return await run_in_worker(contextvars.copy_context().run, self.handler, *args)
        if self._quick >= self._prove:
            t0 = time.perf_counter()
            try:
                return _inline(self.handler, args)
            finally:
                if time.perf_counter() - t0 > INLINE_WAIT_S:
                    self._quick, self._prove = 0, self._prove * 2
        took: list[float] = []
        try:
            raw = await run_in_worker(_timed, took, contextvars.copy_context().run, self.handler, *args, wait=wait)
        finally:
            self._quick = self._quick + 1 if took and took[0] < QUICK_S else 0
        return raw


def _timed(took: list[float], fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, its duration appended to `took` (in the worker thread, however it ends)."""
    t0 = time.perf_counter()
    try:
        return fn(*args)
    finally:
        took.append(time.perf_counter() - t0)


def _inline(handler: Handler, args: tuple[Any, ...]) -> Any:
    """A proven-quick sync handler on the loop's thread, as it ran in a worker: in a copy of the
    context, and with no running loop (so asyncio.run inside it works as it did there)."""
    loop = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        return contextvars.copy_context().run(handler, *args)
    finally:
        asyncio.events._set_running_loop(loop)


def _shape(handler: Handler) -> tuple[list[tuple[str, bool]], list[str]] | None:
    """The handler's positional parameters (name, has a default) and its required keyword-only
    ones, as inspect.signature gives them; None: it has no signature. A plain function's are
    read from its code (~1 µs, not ~7: each tool is made at every start)."""
    if type(handler) is FunctionType and not handler.__dict__:  # (no __wrapped__, __signature__, _partialmethod)
        code = handler.__code__
        n = code.co_argcount
        first_default = n - len(handler.__defaults__ or ())
        kw_defaults = handler.__kwdefaults__ or {}
        return ([(code.co_varnames[i], i >= first_default) for i in range(n)],
                [k for k in code.co_varnames[n:n + code.co_kwonlyargcount] if k not in kw_defaults])
    try:
        params = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return None
    return ([(p.name, p.default is not p.empty) for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)],
            [p.name for p in params if p.kind == p.KEYWORD_ONLY and p.default is p.empty])


def _wants_ctx(name: str, handler: Handler) -> bool:
    """Does the handler take (input, ctx) or just (input)? Anything else is a TypeError now,
    not a failed call later (or a ToolContext passed into a parameter meant for something else)."""
    shape = _shape(handler)
    if shape is None:
        return False  # a builtin without a signature: called with the input only
    positional, required_kw = shape
    if required_kw:
        raise TypeError(f"tool {name!r}: the handler's keyword-only parameters {required_kw} are never passed; "
                        "a handler takes (input) or (input, ctx: ToolContext)")
    if len(positional) >= 2 and positional[1][1]:
        raise TypeError(f"tool {name!r}: the handler's second parameter {positional[1][0]!r} is optional, but "
                        "the loop passes the ToolContext there; make it `ctx: ToolContext` (required) or "
                        "keyword-only")
    if len(positional) > 2 and not all(optional for _, optional in positional[2:]):
        raise TypeError(f"tool {name!r}: the handler takes more than (input, ctx); declare (input) or "
                        "(input, ctx: ToolContext)")
    return len(positional) >= 2


# --- worker threads for sync handlers ------------------------------------------------------------
#
# A sync handler runs in a worker thread so that a slow one cannot block the event loop (an
# interrupt is answered at once; the thread finishes on its own), until it has proven quick
# (Tool._run_sync: then a lone call runs on the loop). The hand-off is kept small: idle threads wait on a SimpleQueue each (no ThreadPoolExecutor,
# no concurrent.futures.Future, no callback chaining). A lone call first waits for its result on
# a lock for at most `wait` seconds (most handlers take microseconds: the loop thread is woken
# directly, without the self-pipe, epoll and two loop iterations of call_soon_threadsafe), then
# yields to the loop and gets the result by call_soon_threadsafe into an asyncio Future. A
# thread busy with a slow (or abandoned) call is simply not idle: the next call gets another.
# Costs: bench/bench_thread_handoff.py.

INLINE_WAIT_S = 0.001  # how long a lone call may hold the event loop waiting for a fast handler
QUICK_S = 0.00025  # a lone call quicker than this in the worker counts towards running on the loop
PROVE_CALLS = 3  # lone calls in a row that prove a handler quick (Tool._run_sync)

_IDLE: list[_Worker] = []
_MAX_IDLE = 64  # threads kept for whole read-only batches; more are made when needed, then end


def _settle(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if fut.cancelled():  # interrupted: nobody waits for this result any more
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


class _Job:
    __slots__ = ("fn", "args", "loop", "done", "mutex", "finished", "ok", "value", "fut")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], loop: asyncio.AbstractEventLoop) -> None:
        self.fn, self.args, self.loop = fn, args, loop
        self.done = threading.Lock()  # held until the result is in: the lone caller waits on it
        self.done.acquire()
        self.mutex = threading.Lock()  # orders `finished` against the caller's switch to `fut`
        self.finished = False
        self.ok = False
        self.value: Any = None
        self.fut: asyncio.Future[Any] | None = None

    def result(self) -> Any:
        if self.ok:
            return self.value
        raise self.value


class _Worker(threading.Thread):
    def __init__(self) -> None:
        from queue import SimpleQueue  # (at the first sync tool's call: ~0.5 ms of start-up)

        super().__init__(daemon=True, name="loopwright-tool")
        self.jobs: SimpleQueue[_Job] = SimpleQueue()

    def run(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                value, ok = job.fn(*job.args), True
            except BaseException as e:  # handed to the awaiting coroutine, as run_in_executor does
                value, ok = e, False
            idle = len(_IDLE) < _MAX_IDLE
            if idle:
                _IDLE.append(self)  # before the wake-up, so the caller's next call finds it
            with job.mutex:
                job.value, job.ok, job.finished = value, ok, True
                fut = job.fut
            job.done.release()
            if fut is not None:
                with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
                    job.loop.call_soon_threadsafe(_settle, fut, ok, value)
            del job, fut, value
            if not idle:
                return


async def run_in_worker(fn: Callable[..., Any], *args: Any, wait: float = 0.0) -> Any:
    """`fn(*args)` in a worker thread. `wait`: seconds to block the loop waiting for a fast
    result before yielding to it (0 for calls that run side by side: each would wait in turn)."""
    job = _Job(fn, args, asyncio.get_running_loop())
    try:
        w = _IDLE.pop()
    except IndexError:
        w = _Worker()
        w.start()
    w.jobs.put(job)
    if wait > 0 and job.done.acquire(True, wait):
        return job.result()
    with job.mutex:
        if job.finished:
            return job.result()
        job.fut = fut = job.loop.create_future()
    return await fut


os.register_at_fork(after_in_child=_IDLE.clear)  # a forked child has none of these threads


# Blocks that may not sit inside a tool_result: the API rejects them, and a nested
# tool_result would be a stray result for (P3).
_NOT_IN_RESULT = (ToolUseBlock, ToolResultBlock, ThinkingBlock, RedactedThinkingBlock)
_NOT_IN_RESULT_TYPES = frozenset({"server_tool_use", "mcp_tool_use", "mcp_tool_result"})


def _result_blocks(raw: list[Any]) -> list[Block]:
    """A handler's list as tool_result content: wire dicts parsed, strings as text blocks.
    Raises WireFormatError for anything else, so it never reaches the history."""
    blocks: list[Block] = []
    for b in raw:
        if isinstance(b, str):
            b = TextBlock(b)
        elif isinstance(b, dict):
            b = block_from_wire(b)
        elif not isinstance(b, Block):
            raise WireFormatError(f"content block must be a block or an object, got {type(b).__name__}")
        if isinstance(b, _NOT_IN_RESULT) or (isinstance(b, UnknownBlock) and b.type in _NOT_IN_RESULT_TYPES):
            raise WireFormatError(f"a {b.to_wire().get('type')} block cannot be part of a tool result")
        blocks.append(b)
    return blocks


# Block types: a list of strings, blocks and dicts of one of these "type"s is meant as content
# (and checked as such: a tool_use in a result is an error); any other list is data, sent as JSON.
_BLOCK_TYPES = frozenset({"text", "image", "document", "search_result", "tool_use", "tool_result", "thinking",
                          "redacted_thinking", *_NOT_IN_RESULT_TYPES})
_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
                (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))


def _is_content(items: list[Any]) -> bool:
    """A list the handler meant as content blocks (not data such as rows or numbers)."""
    return bool(items) and all(
        isinstance(b, (str, *_BLOCK_CLASSES)) or (isinstance(b, dict) and b.get("type") in _BLOCK_TYPES)
        for b in items)


# The keys of MCP's CallToolResult, which the Agent SDK's tool handlers return:
# {"content": [blocks], "is_error": True}.
_CALL_TOOL_RESULT_KEYS = frozenset({"content", "is_error", "isError", "structuredContent", "_meta"})


def _is_call_tool_result(d: dict[str, Any]) -> bool:
    """{"content": [content blocks], "is_error"?: bool}: a result, not data to send as JSON."""
    content = d.get("content")
    return isinstance(content, list) and d.keys() <= _CALL_TOOL_RESULT_KEYS and (not content or all(
        isinstance(b, dict) and b.get("type") in _BLOCK_TYPES for b in content))


def _from_mcp_block(b: dict[str, Any]) -> dict[str, Any]:
    """MCP's image block {type, data, mimeType} as the Messages API's {type, source}."""
    if b.get("type") == "image" and "source" not in b and isinstance(b.get("data"), str):
        return {"type": "image", "source": {"type": "base64", "media_type": b.get("mimeType") or b.get("mime_type")
                                            or "image/png", "data": b["data"]}}
    return b


def _jsonable(value: Any) -> Any:
    """`json.dumps` default: pydantic models, dataclasses, bytes, paths and sets as JSON data."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)  # Path, datetime, Decimal, UUID, enums...


def _bytes_output(data: bytes, is_error: bool) -> ToolOutput:
    """An image when the bytes are one (PNG, JPEG, GIF, WebP), else base64 text that says so."""
    media = next((m for magic, m in _IMAGE_MAGIC if data.startswith(magic)), None)
    if media is None and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        media = "image/webp"
    encoded = base64.b64encode(data).decode("ascii")
    if media is not None:
        return ToolOutput([ImageBlock({"type": "base64", "media_type": media, "data": encoded})], is_error)
    return ToolOutput(f"(the tool returned {len(data)} bytes of binary data, base64-encoded below)\n{encoded}",
                      is_error)


def to_output(raw: Any) -> ToolOutput:
    """Normalize a handler's return value: a string as is; content blocks as blocks; bytes as an
    image (or base64 text); any other data (dicts, lists, numbers, pydantic models, dataclasses)
    as JSON text, never Python's repr."""
    if type(raw) is str:  # (what most handlers return: as the checks below would, without them)
        return ToolOutput(raw, False)
    if isinstance(raw, ToolOutput):
        if isinstance(raw.content, str):
            return raw
        content: Any = raw.content
        is_error = raw.is_error
        if isinstance(content, list):  # a ToolOutput's list is content by construction
            try:
                return ToolOutput(_result_blocks(content), is_error)
            except WireFormatError as e:
                return ToolOutput(f"tool returned malformed content: {e}", is_error=True)
    else:
        content, is_error = raw, False
    if isinstance(content, dict) and _is_call_tool_result(content):  # MCP's CallToolResult shape
        is_error = is_error or bool(content.get("is_error") or content.get("isError"))
        content = [_from_mcp_block(b) for b in content["content"]] or ""
    if content is None:
        return ToolOutput("", is_error)
    if isinstance(content, str):
        return ToolOutput(content, is_error)
    if isinstance(content, (bytes, bytearray)):
        return _bytes_output(bytes(content), is_error)
    if isinstance(content, _BLOCK_CLASSES):
        content = [content]
    if isinstance(content, list) and _is_content(content):
        try:
            return ToolOutput(_result_blocks(content), is_error)
        except WireFormatError as e:
            return ToolOutput(f"tool returned malformed content: {e}", is_error=True)
    try:  # the model reads it as data
        return ToolOutput(json.dumps(content, ensure_ascii=False, default=_jsonable), is_error)
    except (TypeError, ValueError) as e:  # a circular structure, a NaN-free encoder, ...
        return ToolOutput(f"tool returned a value that is not JSON data: {type(e).__name__}: {e}", is_error=True)


# --- the @tool decorator -------------------------------------------------------------------

def _doc_description(fn: Callable[..., Any]) -> str:
    return inspect.cleandoc(fn.__doc__ or "").strip() or fn.__name__


def _schema_from_signature(fn: Callable[..., Any]) -> tuple[dict[str, Any], Callable[[dict[str, Any]], Any]]:
    """Build input_schema from type hints with pydantic; return (schema, converter).

    Supports Annotated[T, "description"], pydantic models, TypedDict, Literal, defaults.
    A parameter annotated `ToolContext` is passed the context and left out of the schema."""
    hints = typing.get_type_hints(fn, include_extras=True)
    params = {pname: (hints.get(pname, Any), p.default if p.default is not inspect.Parameter.empty else ...)
              for pname, p in inspect.signature(fn).parameters.items() if not _is_ctx(hints.get(pname, Any))}
    schema, model = _model_schema(f"{fn.__name__}_input", params)
    fields = list(params)

    def convert(data: dict[str, Any]) -> Any:
        obj = model.model_validate(data)
        return {name: getattr(obj, name) for name in fields}

    return schema, convert


def _model_schema(title: str, params: dict[str, tuple[Any, Any]]) -> tuple[dict[str, Any], Any]:
    """The JSON Schema of fields {name: (type, default or ...)} and the pydantic model behind it.
    `Annotated[T, "description"]` describes a field."""
    import pydantic

    fields: dict[str, Any] = {}
    for pname, (ann, default) in params.items():
        if typing.get_origin(ann) is typing.Annotated:
            base, *meta = typing.get_args(ann)
            descs = [m for m in meta if isinstance(m, str)]
            others = [m for m in meta if not isinstance(m, str)]
            if descs:
                ann = typing.Annotated[(base, *others)] if others else base
                fields[pname] = (ann, pydantic.Field(default, description=descs[0]))
                continue
        fields[pname] = (ann, default)
    model = pydantic.create_model(title, **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema, model


def _sdk_schema(name: str, input_schema: Any) -> dict[str, Any]:
    """The Agent SDK's `@tool(name, description, input_schema)` schema forms: a JSON Schema, a
    dict of parameter names to types (all required), or a TypedDict class."""
    if isinstance(input_schema, dict) and isinstance(input_schema.get("type"), str) and "properties" in input_schema:
        return input_schema
    if isinstance(input_schema, dict):
        return _model_schema(f"{name}_input", {k: (t, ...) for k, t in input_schema.items()})[0]
    if typing.is_typeddict(input_schema):
        required: frozenset[str] = getattr(input_schema, "__required_keys__", frozenset())
        hints = typing.get_type_hints(input_schema, include_extras=True)
        params = {}
        for k, t in hints.items():
            while typing.get_origin(t) in (typing.NotRequired, typing.Required):
                t = typing.get_args(t)[0]
            params[k] = (t, ... if k in required else None)
        return _model_schema(f"{name}_input", params)[0]
    raise TypeError(f"@tool({name!r}, ...): input_schema must be a JSON Schema, a dict of parameter names to "
                    f"types, or a TypedDict, got {type(input_schema).__name__}")


def _hint(annotations: Any, key: str) -> Any:
    """An MCP tool annotation (ToolAnnotations object or dict), in its camelCase or snake_case name."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
    if isinstance(annotations, dict):
        return annotations.get(key, annotations.get(snake))
    return getattr(annotations, key, getattr(annotations, snake, None))


def _is_ctx(ann: Any) -> bool:
    """`ToolContext` (`ToolContext[Deps]`, `RunContext[Deps]`), or `ToolContext | None` (an
    optional context is still the context)."""
    return ann is ToolContext or typing.get_origin(ann) is ToolContext or any(
        a is ToolContext or typing.get_origin(a) is ToolContext for a in typing.get_args(ann))


def _check_signature(fn: Callable[..., Any]) -> None:
    """The model calls a tool with named arguments: every parameter must be one it can name."""
    where = getattr(fn, "__qualname__", repr(fn))
    for p in inspect.signature(fn).parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            raise TypeError(f"@tool {where}: *{p.name} cannot be called with named arguments; "
                            "declare each parameter (with a type hint) instead")
        if p.kind == p.VAR_KEYWORD:
            raise TypeError(f"@tool {where}: **{p.name} gives the model no schema to fill; "
                            "declare each parameter (with a type hint) instead")
        if p.kind == p.POSITIONAL_ONLY:
            raise TypeError(f"@tool {where}: parameter {p.name!r} is positional-only, but tools are "
                            "called with named arguments; remove the '/'")


@typing.overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@typing.overload
def tool(*, name: str | None = None, description: str | None = None,
         read_only: bool = False) -> Callable[[Callable[..., Any]], Tool]: ...


@typing.overload
def tool(name: str, description: str, input_schema: Any, /, annotations: Any = None, *,
         read_only: bool = False) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | str | None = None,
    /,
    *sdk: Any,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    annotations: Any = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a Tool from a function: `@tool`, or `@tool(name=..., read_only=True)`.

    The schema comes from the type hints, the description from the docstring. The
    function is called with keyword arguments; a parameter annotated `ToolContext` gets the
    call's context. `*args`, `**kwargs` and positional-only parameters are a TypeError here.

    The Agent SDK's form works too: `@tool("add", "Add two numbers", {"a": float, "b": float})`
    on `async def add(args)`, which gets the input dict and returns `{"content": [...]}` (with
    `"is_error": True` for a failed call); `annotations` with `readOnlyHint` marks it read-only."""
    if isinstance(fn, str):  # the SDK's positional form
        if not 2 <= len(sdk) <= 3:
            raise TypeError("@tool(name, description, input_schema, annotations=None): "
                            f"got {1 + len(sdk)} positional arguments")
        sdk_name, (sdk_description, input_schema, *rest) = fn, sdk
        hints = rest[0] if rest else annotations
        ro = read_only or (hints is not None and bool(_hint(hints, "readOnlyHint")))
        schema = _sdk_schema(sdk_name, input_schema)
        return lambda f: Tool(sdk_name, sdk_description, schema, f, read_only=ro)
    if sdk:
        raise TypeError("@tool takes a function, or name, description and input_schema (the Agent SDK's form)")

    def wrap(f: Callable[..., Any]) -> Tool:
        _check_signature(f)
        schema, convert = _schema_from_signature(f)
        ctx_name = next((n for n, a in typing.get_type_hints(f).items() if _is_ctx(a)), None)
        is_async = inspect.iscoroutinefunction(f)

        if is_async:
            async def handler(kwargs: dict[str, Any], ctx: ToolContext) -> Any:
                if ctx_name:
                    kwargs = {**kwargs, ctx_name: ctx}
                return await f(**kwargs)
        else:
            def handler(kwargs: dict[str, Any], ctx: ToolContext) -> Any:  # type: ignore[misc]
                if ctx_name:
                    kwargs = {**kwargs, ctx_name: ctx}
                return f(**kwargs)

        return Tool(
            name or f.__name__,
            description if description is not None else _doc_description(f),
            schema,
            handler,
            read_only=read_only,
            _convert=convert,
        )

    return wrap(fn) if fn is not None else wrap
