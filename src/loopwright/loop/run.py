"""Room: loop. Run: a run's frozen deps and its state, and what the steps ask of them."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..autocompact import AutoCompactor
from ..blocks import (
    TextBlock,
    ToolUseBlock,
    text_of,
)
from ..execute import Executor
from ..gate import Permissions
from ..messages import (
    Message,
    ResultMessage,
    ResultSubtype,
    SystemMessage,
    UserMessage,
)
from ..models.base import ModelRequest, ModelResponse
from ..models.catalog import call_cost, cost_of
from ..telemetry.base import NULL, Observer
from ..trust import Trust
from ..usage import CallUsage

if TYPE_CHECKING:
    from ..memory import Memory
    from ..structured import StructuredOutput
    from .display import Display

from .relay import _from_subagent
from .state import (
    RunDeps,
    RunState,
)

log = logging.getLogger("loopwright.loop")
# A hook report's kind -> its SystemMessage's subtype (others: hook_message)
_HOOK_SUBTYPES = {"error": "hook_error", "timeout": "hook_error", "started": "hook_started", "response": "hook_response"}


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
        # The prompt's expansion (kind, name, args, source, as typed): an MCP prompt's, or the custom command's (prompt.py)
        self.expanded: tuple[str, str, str, str | None, str] | None = None
        self._reach: tuple[bool, Any] | None = None  # (trusted, memory.project_reach): nested_memory

    async def open_mcp(self) -> None:
        """The MCP servers' tools join the run before its first step (a new RunDeps: the
        executor and the tool definitions with them; subagents then get them too)."""
        d = self.deps
        if d.mcp is None:
            return
        d.mcp.bind(self)  # the servers' sampling and roots requests are answered by this run (mcp/asks.py)
        added = await d.mcp.open(d.tools)
        self.warnings += d.mcp.init_warnings  # (a server needing a login names `loopwright mcp login`)
        if not added:
            return
        tools = {**d.tools, **{t.name: t for t in added}}
        ex = d.executor
        self.deps = replace(
            d, tools=tools, tool_defs=[*d.tool_defs, *(t.definition() for t in added)],
            options=replace(d.options, tools=[*d.options.tools, *added], mcp_servers=None, strict_mcp_config=True),
            executor=Executor(tools, ex.permissions, ex.hooks, ex.ctx, ex.obs))

    def display(self) -> Display | None:
        """The MessageDisplay hooks' view of this run's messages (None: no such hook, or a subagent)."""
        if not self.is_top or not self.deps.hooks.registry.matchers.get("MessageDisplay"):
            return None
        from .display import Display

        return Display(self.deps.hooks)

    def mode_port(self, gate: Permissions) -> tuple[Callable[[], str], Callable[[str], None]]:
        """The permission mode as tools see it (ExitPlanMode): read it, change it for the rest of the run."""
        def set_mode(mode: str) -> None:
            # a plan approved "in bypassPermissions" (the SDK's and ACP's plan exits offer it) that the
            # settings disable goes on in default mode, as Claude Code ignores that update
            from ..runconfig import allowed_mode

            mode = allowed_mode(self.deps.settings, mode) or "default"
            gate.mode = mode  # type: ignore[assignment]  # a PermissionMode: interaction.PlanApproved
            self.deps = replace(self.deps, permission_mode=mode)

        return (lambda: gate.mode or "default"), set_mode

    def nested_memory(self, uses: list[ToolUseBlock]) -> list[TextBlock]:
        """Memory files of subdirectories a tool touched for the first time (Claude Code's
        nested CLAUDE.md): appended after the tool results, once each."""
        if self.memory is None:
            return []
        from ..memory import nested_memory

        out: list[TextBlock] = []
        for u in uses:
            path = u.input.get("file_path") or u.input.get("notebook_path") or u.input.get("path")
            if isinstance(path, str) and path:
                trusted = self.trust.trusted
                if self._reach is None or self._reach[0] != trusted:  # the same for the whole run: ~8 lstat walks
                    from ..memory import project_reach

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

    def cost(self, a: ModelResponse) -> float:
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
        self.obs.charged(s.budget.calls[-1])  # the call's chat span ends with its cost
        s.last_stop = a.stop_reason

    def charge_aside(self, a: ModelResponse) -> None:
        """A tool's own model call (WebFetch's small model, WebSearch's search): its usage and
        cost count in this run's budget like the loop's calls (Prop 5.4), without being a turn."""
        s = self.state
        u = a.usage
        s.usage.add(u)
        known = a.cost_usd is not None or self._priced(a)  # reported by the model, or a price for it
        s.budget.charge(CallUsage.of(u, self.cost(a), a.model or self.deps.model.name, price_known=known))

    def result(self, subtype: ResultSubtype, final: ModelResponse | None = None, error: str | None = None) -> ResultMessage:
        s, recorder = self.state, self.deps.recorder
        # what this run verified and counted of h, for the conversation's next run (History.continuing)
        s.inv.note(s.h)
        self.compactor.measured(s.budget.calls, s.h, self._fixed_chars())
        return ResultMessage(
            subtype=subtype,
            is_error=subtype != "success",
            num_turns=s.t,
            model_calls=s.calls,
            messages=s.h,  # (the History itself: a conversation's next run continues from its notes)
            result="".join([*s.cut_off_text, text_of(final.content) or final.blank_text])
            if final is not None and subtype == "success"
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

    def budget_stop(self) -> ResultMessage:
        """The budget rule's stop (seed Prop 5.4): S >= B after a charged call."""
        b = self.state.budget
        return self.result("error_max_budget_usd", error=f"spent ${b.spent_usd:.4f} of ${b.limit_usd}")

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
        return [SystemMessage(_HOOK_SUBTYPES.get(r["kind"], "hook_message"),
                              {k: v for k, v in r.items() if k != "kind"} if r["kind"] in ("started", "response")
                              else dict(r)) for r in hooks.take_reports()]

    def persist_prompt(self) -> None:
        if self.deps.recorder is not None:
            self.deps.recorder.prompt(self.state.h[-1])

    def persist_user(self) -> None:
        """A user message the loop adds without yielding it (a Stop hook's reason)."""
        if self.deps.recorder is not None:
            self.deps.recorder.user(self.state.h[-1])

    # --- automatic compaction (compaction.py; context.py holds the pure operation) ---------

    def _fixed_chars(self) -> int:
        """The system prompt's and tool definitions' size, serialized once per RunDeps (they are
        frozen: new ones come as new deps), not at every step 0."""
        d = self.deps
        if self._fixed is None or self._fixed[0] is not d:
            self._fixed = (d, len(d.system or "") + len(json.dumps(d.tool_defs)))
        return self._fixed[1]

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
