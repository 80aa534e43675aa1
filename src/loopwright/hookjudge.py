"""Room: assemble. Owns what a run gives its hooks beyond their registry: the judge of `prompt` and
`agent` hooks (the run's model, charged to the run) and the PermissionRequest/Notification hooks
in front of the gate's asks; may import tools, models, gate, hooks and below.

A prompt hook is one model call (Claude Code's instructions as the system prompt, the hook's
prompt with `$ARGUMENTS` as the user message); an agent hook is a subagent with Read, Glob and
Grep that answers through a StructuredOutput tool. Both answer `{"ok": bool, "reason": str}`."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .blocks import TextBlock
from .gate import Allow, Decision, Deny, Permissions
from .hooks import RunHooks
from .hooks.external import VERDICT_SCHEMA, Judge, McpCaller
from .hooks.kinds import ModelHook
from .models.base import ModelRequest, complete
from .tools.base import RunPorts, SubagentSpec, Tool, ToolContext, ToolOutput

if TYPE_CHECKING:
    from .loop.state import McpServers

AGENT_TOOLS = ("Read", "Glob", "Grep")
AGENT_MAX_TURNS = 50  # Claude Code's agent hooks stop at 50 turns too


def make_judge(ports: RunPorts) -> Judge:
    """The judge of the run's prompt and agent hooks: the hook's `model`, else the run's model."""

    async def judge(hook: ModelHook, system: str, text: str) -> dict[str, Any]:
        if hook.kind == "agent":
            return await _agent(ports, hook, system, text)
        model = ports.new_model(hook.model) if hook.model else ports.model
        if ports.budget().exhausted:
            raise RuntimeError("the run's budget is spent: no model call for the hook")
        response = await complete(model, ModelRequest(system, [], [{"role": "user", "content": [
            {"type": "text", "text": text}]}]))
        ports.charge(response)
        return verdict_of("".join(b.text for b in response.content if isinstance(b, TextBlock)))

    return judge


def verdict_of(text: str) -> dict[str, Any]:
    """The model's answer as a JSON object (the first {...} in its text). Raises ValueError."""
    m = re.search(r"\{.*\}", text, re.S)
    if m is None:
        raise ValueError(f"the model answered no JSON object: {text[:200]!r}")
    value = json.loads(m.group(0))
    if not isinstance(value, dict):
        raise ValueError("the model's answer is not a JSON object")
    return value


async def _agent(ports: RunPorts, hook: ModelHook, system: str, text: str) -> dict[str, Any]:
    said: dict[str, Any] = {}

    def answer(x: dict[str, Any]) -> str:
        said.update(x)
        return "Recorded."

    tools = [t for name, t in ports.tools.items() if name in AGENT_TOOLS]
    tools.append(Tool("StructuredOutput", "Return the hook's verdict: ok (true lets the action go ahead) "
                      "and its reason.", VERDICT_SCHEMA, answer, read_only=True))
    sub = ports.spawn(SubagentSpec(text, "hook-agent", system, tools, model=hook.model, max_turns=AGENT_MAX_TURNS))
    final = ""
    async for msg in sub.messages():
        final = getattr(msg, "result", None) or final
    ports.absorb(sub)
    if said:
        return said
    raise ValueError(f"the agent gave no verdict through StructuredOutput (it said {str(final)[:200]!r})")


def ask_hook(hooks: RunHooks, asks_user: bool) -> Callable[[str, dict[str, Any]], Awaitable[Decision | None]]:
    """What the gate does with an ask before anyone answers it: PermissionRequest hooks may
    answer it; if not, and a user will be asked (`asks_user`), Notification hooks hear of it."""

    async def ask(name: str, tool_input: dict[str, Any]) -> Decision | None:
        said = await hooks.permission_request(name, tool_input)
        if said.behavior == "allow":
            return Allow(updated_input=said.updated_input)
        if said.behavior == "deny":
            return Deny(said.message, interrupt=said.interrupt)
        if asks_user:
            await hooks.notification(f"Claude needs your permission to use {name}", "permission_prompt")
        return None

    return ask


def make_mcp_caller(mcp: McpServers, ctx: ToolContext) -> McpCaller:
    """The run's MCP servers for its mcp_tool hooks: (is_error, the answer's text)."""

    async def call(server: str, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        out: ToolOutput = await mcp.call_for_hook(server, tool, args, ctx)
        content = out.content
        text = content if isinstance(content, str) else "".join(b.text for b in content if isinstance(b, TextBlock))
        return out.is_error, text

    return call


def wire_hooks(hooks: RunHooks, permissions: Permissions, ports: RunPorts, mcp: McpServers | None = None,
               ctx: ToolContext | None = None) -> None:
    """Give a top-level run's hooks their judge and MCP servers, and the gate its PermissionRequest hooks."""
    hooks.state.context.judge = make_judge(ports)
    if mcp is not None and ctx is not None:
        hooks.state.context.mcp = make_mcp_caller(mcp, ctx)
    if hooks.registry.matchers.get("PermissionRequest") or hooks.registry.matchers.get("Notification"):
        permissions.ask_hook = ask_hook(hooks, permissions.can_use_tool is not None)
