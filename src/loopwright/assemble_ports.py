"""Room: assemble. Owns the ports a running tool gets (tools/base.py's RunPorts) on top of its
Run, and the Subagent a spawn returns; may import loop and every room below it.

Apart from assemble.py (which wires them into each Run it builds) so that each has room; a
subagent is built by the `build` function handed in (assemble.build_run): this module never
imports assemble.py back.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .blocks import Prompt, WireMessage
from .home import private_dir, write_private
from .ids import SAFE_ID
from .loop import Run, run_query
from .messages import Message
from .tools.base import Subagent, SubagentSpec, Tool, tool_retries

if TYPE_CHECKING:
    from .hooks import RunHooks
    from .models.base import Model, ModelResponse
    from .settings import Settings
    from .tools.views import BudgetView, UsageView

log = logging.getLogger("loopwright.assemble")
BuildRun = Callable[..., Run]  # assemble.build_run: a subagent's Run, built as every Run is


class RunPortsOf:
    """RunPorts on top of one Run: what its tools may ask of it, and nothing else."""

    __slots__ = ("_run", "_prompt", "_build")

    def __init__(self, run: Run, prompt: Prompt, build: BuildRun) -> None:
        self._run, self._prompt, self._build = run, prompt, build

    @property
    def prompt(self) -> Prompt:
        return self._prompt

    def usage(self) -> UsageView:
        from .tools.views import UsageView  # (imported by a tool that reads it, issue 41)

        s = self._run.state
        u = s.usage
        return UsageView(s.calls, u.input_tokens, u.output_tokens, u.cache_read_input_tokens,
                         u.cache_creation_input_tokens)

    def history(self) -> list[WireMessage]:
        return copy.deepcopy(self._run.state.h)

    def retries(self, tool_name: str) -> int:
        return tool_retries(self._run.state.h, tool_name)

    @property
    def tools(self) -> Mapping[str, Tool]:
        return self._run.deps.tools

    @property
    def model(self) -> Model:
        return self._run.deps.model

    @property
    def cwd(self) -> Path:
        return self._run.deps.cwd

    @property
    def settings(self) -> Settings | None:
        return self._run.deps.settings

    @property
    def max_pause_continuations(self) -> int:
        return self._run.deps.options.max_pause_continuations

    @property
    def hooks(self) -> RunHooks:
        return self._run.deps.hooks

    async def inline_shell(self, text: str, name: str, source: str | None,
                           invoked_by: Literal["user", "claude", "other"],
                           ids: str | None = None) -> tuple[str, list[str], str | None]:
        from .loop.prompt import inline_shell, skill_shell_note

        out, notes, error = await inline_shell(self._run, text, name, source, invoked_by, ids)
        for n in notes:
            self._run.post(skill_shell_note(n))
        return out, notes, error

    def budget(self) -> BudgetView:
        from .tools.views import BudgetView  # (imported by a tool that reads it, issue 41)

        b = self._run.state.budget
        return BudgetView(b.limit_usd, b.spent_usd, b.exhausted())

    def new_model(self, spec: str) -> Model:
        from .models import resolve_model

        o = self._run.deps.options
        return resolve_model(spec, base_url=o.base_url, api_key=o.api_key, max_retries=o.max_retries,
                             prompt_caching=False)

    def charge(self, response: ModelResponse) -> None:
        self._run.charge_aside(response)

    def emit(self, msg: Message) -> None:
        self._run.post(msg)

    def save_artifact(self, name: str, text: str) -> Path | None:
        recorder = self._run.deps.recorder
        path = recorder.path if recorder is not None else None
        if path is None or not SAFE_ID.fullmatch(name):  # (a file's name, never a path: ids come from models)
            return None
        target = path.with_suffix("") / "tool-results" / name
        try:
            private_dir(target.parent, path.parent)  # beside the transcript, as private as it
            write_private(target, text)
        except OSError as e:
            log.warning("cannot save %s: %s", target, e)
            return None
        return target

    def spawn(self, spec: SubagentSpec) -> Subagent:
        p = self._run.deps
        fallbacks = p.options.fallback_model  # the parent's, less the subagent's own model
        model = spec.model if spec.model is not None else p.model
        if isinstance(fallbacks, list):
            fallbacks = [m for m in fallbacks if m != model] or None
        options = replace(
            p.options, model=model, tools=spec.tools, agents={}, system_prompt=spec.system_prompt,
            append_system_prompt=None, fallback_model=fallbacks,
            max_turns=spec.max_turns if spec.max_turns is not None else p.options.max_turns,
            max_budget_usd=spec.max_budget_usd, hooks=None, session_id=None, resume=None, fork_session=False,
            continue_conversation=False, persist_session=False, handoffs=[],
            output_format=None, output_type=None, output_guardrails=[],  # the parent's answer, not the subagent's
            effort=spec.effort or p.options.effort,  # an agent's own effort, else the parent's
            cwd=str(spec.cwd) if spec.cwd is not None else p.options.cwd)
        return _SubagentRun(self._build(options, spec.prompt, self._run, agent_type=spec.agent_type,
                                        agent_mode=spec.permission_mode, agent_hooks=spec.hooks),
                            spec.prompt, self._build)

    def absorb(self, sub: Subagent) -> None:
        assert isinstance(sub, _SubagentRun)
        self._run.absorb(sub.run)


class _SubagentRun:
    """Subagent (tools/base.py) on top of the subagent's Run."""

    __slots__ = ("run", "prompt", "_build")

    def __init__(self, run: Run, prompt: str, build: BuildRun) -> None:
        self.run, self.prompt, self._build = run, prompt, build

    @property
    def hooks(self) -> RunHooks:
        return self.run.deps.hooks

    def add_context(self, text: str) -> None:
        h = self.run.state.h
        h.replace_last({**h[-1], "content": [*h[-1]["content"], {"type": "text", "text": text}]})

    async def skill_shell(self, text: str, name: str, source: str, allowed: tuple[str, ...]) -> tuple[str, str | None]:
        self.run.deps.executor.ctx.state.grants.add(allowed)  # (as the Skill tool grants them)
        out, _, error = await RunPortsOf(self.run, self.prompt, self._build).inline_shell(text, name, source, "other")
        return out, error

    def messages(self) -> AsyncGenerator[Message, None]:
        return run_query(self.run, self.prompt)
