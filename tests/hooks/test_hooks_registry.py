"""The hook registry apart from per-run hook state (issue 23): what a run's hooks are is frozen
when the run is built; what happened (reports, `continue: false`) lives in the run's HookState."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.assemble import build_run
from loopwright.hooks import HookContext, HookRegistry, Hooks, HookState, RunHooks
from loopwright.loop import run_query
from tests.helpers import text, use

NOOP = lw.Tool("noop", "does nothing", {"type": "object", "properties": {}}, lambda x: "ok")


def test_the_registry_is_frozen() -> None:
    hooks = Hooks().command("PreToolUse", "true", matcher="Bash")
    registry = hooks.freeze()
    with pytest.raises(dataclasses.FrozenInstanceError):
        registry.env = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        registry.matchers["Stop"] = ()  # type: ignore[index]
    hooks.command("Stop", "true")  # registering later changes the Hooks, not what was frozen
    assert set(registry.matchers) == {"PreToolUse"} and set(hooks.freeze().matchers) == {"PreToolUse", "Stop"}
    assert [h.command for h, _ in registry.jobs("PreToolUse", "Bash")] == ["true"]  # type: ignore[union-attr]
    assert registry.jobs("PreToolUse", "Read") == [] and not HookRegistry().active


def test_a_built_run_fires_the_hooks_it_was_built_with(tmp_path: Path) -> None:
    seen: list[str] = []
    hooks = Hooks()
    hooks.on("PreToolUse", lambda d: seen.append("before build"))
    opts = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "noop")], [text("done")]]), tools=[NOOP],
                           hooks=hooks, cwd=tmp_path)
    run = build_run(opts, "go")
    hooks.on("PreToolUse", lambda d: seen.append("after build"))  # reaches the next run, not this one

    async def drive() -> list[Any]:
        return [m async for m in run_query(run, "go")]

    msgs = asyncio.run(drive())
    assert isinstance(msgs[-1], lw.ResultMessage) and msgs[-1].subtype == "success"
    assert seen == ["before build"]
    assert isinstance(run.deps.hooks, RunHooks) and run.deps.hooks is not hooks
    assert run.state.hooks is run.deps.hooks.state  # the state is the run's, the registry fixed
    assert run.state.hooks.context.session_id == run.deps.session_id
    assert hooks.halted is None and hooks.reports == []


def test_run_state_is_per_run_and_the_registry_shared() -> None:
    hooks = Hooks()

    @hooks.on("UserPromptSubmit")
    def stop(data: dict[str, Any]) -> dict[str, Any]:
        return {"continue": False, "stopReason": f"stop {data['session_id']}", "systemMessage": "said"}

    registry = hooks.freeze()
    a, b = (RunHooks(registry, HookState(HookContext(session_id=s))) for s in ("a", "b"))

    async def both() -> tuple[lw.hooks.PromptResult, lw.hooks.PromptResult]:
        return await a.user_prompt_submit("hi"), await b.user_prompt_submit("hi")

    ra, rb = asyncio.run(both())
    assert (ra.block, rb.block) == ("Operation stopped by hook: stop a", "Operation stopped by hook: stop b")
    assert (a.halted, b.halted) == ("stop a", "stop b")
    assert [r["message"] for r in a.take_reports()] == ["said"] and a.reports == [] and len(b.reports) == 1
    assert a.registry is b.registry is registry


def test_a_hooks_subclass_keeps_its_behaviour_in_a_run(tmp_path: Path) -> None:
    class Refusing(Hooks):
        async def pre_tool_use(self, name: str, tool_input: dict[str, Any], tool_use_id: str) -> Any:
            result = await super().pre_tool_use(name, tool_input, tool_use_id)
            result.decision, result.reason = "deny", f"{name} refused by the subclass"
            return result

    hooks = Refusing().command("PreToolUse", "true")
    opts = lw.AgentOptions(model=lw.ScriptedModel([[use("u1", "noop")], [text("done")]]), tools=[NOOP],
                           hooks=hooks, cwd=tmp_path, permission_mode="bypassPermissions")
    r = lw.run("go", opts)
    results = [b for m in r.messages for b in m["content"] if b["type"] == "tool_result"]
    assert r.subtype == "success" and results[0]["is_error"] and "refused by the subclass" in str(results[0]["content"])
    assert hooks.halted is None and hooks.reports == []
