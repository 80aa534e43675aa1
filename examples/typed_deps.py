"""Typed dependencies and a typed answer (docs/porting-from-pydantic-ai.md).

The run's `deps` reach a tool (`ctx: RunContext[Deps]`), a Python hook (`HookContext[Deps].deps`)
and `can_use_tool` (`ToolPermissionContext[Deps].deps`); `output_type=list[str]` makes
`result.output` a `list[str]` for mypy, and so the ResultMessage of `query()`'s stream and of a
`LoopwrightClient`'s (tests/assemble/test_typed_api.py runs mypy --strict on
this file). Runs offline on a scripted model: `python examples/typed_deps.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import loopwright as lw
from loopwright import RunContext, ToolPermissionContext


@dataclass
class Deps:
    user_id: int
    allowed: set[str]
    log: list[str] = field(default_factory=list)


@lw.tool
def favourite_colours(ctx: RunContext[Deps], count: int) -> list[str]:
    """The user's favourite colours, most liked first."""
    ctx.deps.log.append(f"tool for user {ctx.deps.user_id}")  # mypy knows ctx.deps is a Deps
    return ["teal", "amber", "plum"][:count]


async def may_use(name: str, tool_input: dict[str, Any], context: ToolPermissionContext[Deps]) -> lw.Allow | lw.Deny:
    return lw.Allow() if name in context.deps.allowed else lw.Deny(f"{name} is not for this user")


async def audit(hook_input: dict[str, Any], tool_use_id: str | None, context: lw.HookContext[Deps]) -> dict[str, Any]:
    context.deps.log.append(f"hook saw {hook_input['tool_name']}")  # a Deps for mypy too
    return {}


def scripted() -> lw.ScriptedModel:
    return lw.ScriptedModel([
        [{"type": "tool_use", "id": "c1", "name": "favourite_colours", "input": {"count": 2}}],
        [{"type": "tool_use", "id": "c2", "name": "StructuredOutput", "input": {"result": ["teal", "amber"]}}],
    ])


def main(model: lw.Model | None = None) -> tuple[list[str], Deps]:
    deps = Deps(user_id=7, allowed={"favourite_colours", "StructuredOutput"})
    options = lw.AgentOptions(
        model=model or scripted(), tools=[favourite_colours], deps=deps, output_type=list[str],
        can_use_tool=may_use, hooks={"PreToolUse": [lw.HookMatcher(hooks=[audit])]})
    result = lw.run("Which two colours does the user like best?", options)
    colours: list[str] = result.output  # a list[str] for mypy: no cast
    return colours, deps


async def streamed(model: lw.Model | None = None) -> list[str]:
    """The same answer through query(): mypy sees a ResultMessage[list[str]] in the stream."""
    options = lw.AgentOptions(model=model or scripted(), tools=[favourite_colours], output_type=list[str],
                              deps=Deps(user_id=8, allowed=set()), permission_mode="bypassPermissions")
    async for msg in lw.query("Which two colours?", options=options):
        if isinstance(msg, lw.ResultMessage):
            streamed_colours: list[str] = msg.output  # a list[str] for mypy: no cast
            return streamed_colours
    return []


async def conversation(model: lw.Model | None = None) -> list[str]:
    """And through LoopwrightClient: LoopwrightClient[list[str]], its messages typed the same way."""
    options = lw.AgentOptions(model=model or scripted(), tools=[favourite_colours], output_type=list[str],
                              deps=Deps(user_id=9, allowed=set()), permission_mode="bypassPermissions")
    async with lw.LoopwrightClient(options) as client:
        await client.query("Which two colours?")
        async for msg in client.receive_response():
            if isinstance(msg, lw.ResultMessage):
                client_colours: list[str] = msg.output
                return client_colours
    return []


if __name__ == "__main__":
    colours, deps = main()
    print(colours, deps.log)
