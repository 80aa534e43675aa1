"""Room: bases. Owns Tool and what a running tool may know of its run (ToolContext, RunPorts);
may import data types, tools.output, tools.schema, tools.views and threads.

Tools: `Tool` (seed Def 2.2, Def 6.1; SPEC §1); `@tool` is in tools.decorator, what a handler
returns in tools.output, input checking in tools.schema, the worker threads in threads, the
usage and budget a tool may read in tools.views.

A tool maps (input, environment) to (result, is_error, new environment). Handlers
may be sync or async, take the validated input dict (and optionally a
`ToolContext`), and return a string, a list of blocks, or a `ToolOutput`; raising
is fine: the loop turns any exception into an is_error result.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol

from ..threads import run_in_worker
from ..typevars import DepsT as DepsT  # (re-exported: ToolContext[Deps]'s type variable)
from ..workspace import ToolState
from .output import ToolError, ToolOutput, to_output
from .schema import InputCheck

if TYPE_CHECKING:
    from ..blocks import Prompt, WireMessage
    from ..hooks import RunHooks
    from ..interaction import AskUser, ReviewPlan
    from ..messages import Message
    from ..models.base import Model, ModelResponse
    from .views import BudgetView as BudgetView
    from .views import UsageView as UsageView

__all__ = ["NAME_CHARS", "BudgetView", "RunContext", "RunPorts", "Subagent", "SubagentSpec", "Tool", "ToolContext",
           "ToolError", "ToolOutput", "UsageView"]


def __getattr__(name: str) -> Any:
    """UsageView and BudgetView, from tools.views (where they moved; imported on first use, issue 41)."""
    if name in ("BudgetView", "UsageView"):
        from .views import BudgetView, UsageView

        return {"BudgetView": BudgetView, "UsageView": UsageView}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# What the APIs accept as a tool name, ^[a-zA-Z0-9_-]{1,64}$ (a set, not a pattern: `$` would let
# a name end in a newline, and compiling it is on every run's way)
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


# (not frozen: never changed nor hashed, and frozen doubles what declaring it costs every start, issue 41;
# eq/repr: identity, a request handed to spawn once, holding tools)
@dataclass(slots=True, eq=False, repr=False)
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
    hooks: dict[str, Any] | None = None  # its agent file's own hooks ({event: [HookMatcher]}), while it runs
    cwd: Path | None = None  # None: the parent's (an isolated subagent's: its worktree)


class Subagent(Protocol):
    """A subagent's run as the Agent tool drives it (built by `RunPorts.spawn`, not started)."""

    @property
    def hooks(self) -> RunHooks: ...

    def add_context(self, text: str) -> None:
        """Append text to the subagent's first message (SubagentStart's additionalContext)."""

    async def skill_shell(self, text: str, name: str, source: str,
                          allowed: tuple[str, ...]) -> tuple[str, str | None]:
        """A skill preloaded into it (an agent's `skills`): `allowed` granted in the subagent,
        then the skill's inline shell run through the subagent's Bash gate and PreSkillShellCommand
        hooks (invoked_by other): (the text, why it failed)."""

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

    @property
    def hooks(self) -> RunHooks:
        """The run's hooks (the Task tools fire TaskCreated/TaskCompleted, the Agent tool the
        worktree events, through them)."""

    async def inline_shell(self, text: str, name: str, source: str | None,
                           invoked_by: Literal["user", "claude", "other"],
                           ids: str | None = None) -> tuple[str, list[str], str | None]:
        """A skill's or command's text with its inline shell (`` !`cmd` ``) run through the run's
        Bash gate and PreSkillShellCommand hooks: (the text, warnings said to the user, why it
        failed: then nothing after the failing command ran)."""

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

    def usage(self) -> UsageView:
        """The run's model calls and tokens so far (a copy)."""

    def history(self) -> list[WireMessage]:
        """The run's conversation so far (a deep copy: changing it changes nothing of the run)."""

    @property
    def prompt(self) -> Prompt:
        """The prompt this run was started with."""

    def retries(self, tool_name: str) -> int:
        """How many of tool `tool_name`'s earlier calls in a row failed (0 after a success)."""


@dataclass(eq=False, repr=False)  # (identity: one call's view of its run, holding callables)
class ToolContext(Generic[DepsT]):
    """What a running tool may know about its run: the working directory and session state.

    `state` is shared by all tools of one session (for example the set of files Read
    has seen, which Write and Edit check). `deps`: the run's AgentOptions.deps (typed by
    annotating the parameter `ToolContext[Deps]`, or its alias `RunContext[Deps]`)."""

    cwd: Path
    session_id: str = ""
    tool_use_id: str = ""
    tool_name: str = ""  # the called tool's (for_call), so `retry` can count its failures
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

    def for_call(self, tool_use_id: str, siblings: int, tool_name: str = "") -> ToolContext[DepsT]:
        """This context for one call (concurrent calls must not share one)."""
        return dataclasses.replace(self, tool_use_id=tool_use_id, siblings=siblings, tool_name=tool_name)

    # pydantic-ai's RunContext reads, through the ports (read-only; outside a run: nothing yet).
    @property
    def usage(self) -> UsageView:
        """The run's model calls and tokens so far."""
        if self.ports is not None:
            return self.ports.usage()
        from .views import UsageView  # (imported by a tool that reads it: tools.views, issue 41)

        return UsageView()

    @property
    def messages(self) -> list[WireMessage]:
        """The run's conversation before this turn's answer (the model's message asking for this
        call joins it with the turn's results): a copy."""
        return self.ports.history() if self.ports is not None else []

    @property
    def prompt(self) -> Prompt | None:
        """The prompt the run was started with (None outside a run)."""
        return self.ports.prompt if self.ports is not None else None

    def save_output(self, text: str) -> str | None:
        """Save a call's whole output beside the session transcript (`tool-results/<call id>.txt`,
        private to the user) and give its path; None when the run keeps no session (or the file
        could not be written)."""
        if self.ports is None:
            return None
        from ..ids import SAFE_ID, new_hex

        uid = self.tool_use_id
        # (the id came from the model's answer: a provider or proxy may send `../x`; an id is never a path)
        saved = self.ports.save_artifact(f"{uid if SAFE_ID.fullmatch(uid) else 'output-' + new_hex(12)}.txt", text)
        return str(saved) if saved is not None else None

    @property
    def retry(self) -> int:
        """How many times in a row this tool failed (an error result) before this call; 0 after a success."""
        return self.ports.retries(self.tool_name) if self.ports is not None and self.tool_name else 0


def tool_retries(h: list[WireMessage], name: str) -> int:
    """pydantic-ai's `ctx.retry` read from a history: the results of the earlier calls of tool
    `name`, newest first, counting the errors up to its last success."""
    names = {b["id"]: b["name"] for b in _blocks(h, "assistant", "tool_use")}
    failed = 0
    for b in reversed([b for b in _blocks(h, "user", "tool_result") if names.get(b.get("tool_use_id")) == name]):
        if not b.get("is_error"):
            break
        failed += 1
    return failed


def _blocks(h: list[WireMessage], role: str, kind: str) -> list[dict[str, Any]]:
    return [b for m in h if m.get("role") == role and isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == kind]


RunContext = ToolContext  # pydantic-ai's name: a tool's `ctx: RunContext[Deps]` (docs/porting-from-pydantic-ai.md)
Handler = Callable[..., Any]


class Tool:
    """A tool the model may call: `Tool(name, description, input_schema, handler, read_only=False)`.
    `takes_context`: whether the handler is called as handler(input, ctx) (from its signature)."""

    __slots__ = ("name", "description", "input_schema", "handler", "read_only", "needs_approval", "spawns_agents",
                 "read_only_call", "takes_context", "_is_async", "_check", "_convert")

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
        self._check = InputCheck(name, input_schema)
        self._convert = _convert

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, read_only={self.read_only})"

    def definition(self) -> dict[str, Any]:
        """The wire tool definition {name, description, input_schema}."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def validate(self, data: Any) -> str | None:
        """None if `data` fits the schema, else a message that says what is wrong (tools.schema)."""
        return self._check.problem(data)

    async def call(self, data: dict[str, Any], ctx: ToolContext, in_thread: bool = False,
                   wait: float = 0.0) -> ToolOutput:
        """Validate and run. Never raises for tool failures: they become is_error outputs.
        `in_thread`: a sync handler runs in a worker thread (threads.run_in_worker), waited for
        on a lock for `wait` seconds before the call yields to the loop. The executor always
        asks for it: a sync handler never runs on the loop, whether it is quick or not (the
        OpenAI Agents SDK runs it inline: a slow one there holds up an interrupt, a read-only
        batch and every other task on the loop, and `asyncio.run` inside it fails). The
        hand-off costs ~15,000 instructions a call (bench/bench_thread_handoff.py); inline,
        the turn of bench_sync_vs_async.py would still be ~1.4x 29ce199's (issue 41)."""
        try:
            problem = self._check.problem(data)  # (validate's work, without its layer)
        except Exception as e:  # jsonschema.SchemaError: the tool's own schema is broken
            why = getattr(e, "message", None) or str(e)
            return ToolOutput(f"Tool {self.name} cannot be called: its input_schema is invalid: {why}", is_error=True)
        if problem is not None:
            return ToolOutput(problem, is_error=True)
        try:
            arg: Any = self._convert(data) if self._convert is not None else data
        except Exception as e:  # pydantic conversion of a schema-valid input
            return ToolOutput(f"Invalid input for tool {self.name}: {e}", is_error=True)
        args = (arg, ctx) if self.takes_context else (arg,)
        try:
            if self._is_async:
                raw = await self.handler(*args)
            else:
                raw = await run_in_worker(self.handler, *args, wait=wait) if in_thread else self.handler(*args)
                # a sync handler that returned a coroutine (a str, what most return, never is: its
                # isawaitable check asks the Awaitable ABC, ~3,000 instructions a call)
                if type(raw) is not str and inspect.isawaitable(raw):
                    raw = await raw
        except ToolError as e:
            return ToolOutput(str(e), is_error=True)
        except Exception as e:
            return ToolOutput(f"{type(e).__name__}: {e}", is_error=True)
        return to_output(raw)


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


