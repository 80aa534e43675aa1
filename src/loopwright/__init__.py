"""Room: the front door. Owns the public names, exported lazily; may import every room (lazily only).

loopwright: the agent loop, done right.

    import loopwright as lw
    result = lw.run("fix the failing test", lw.AgentOptions(model=..., tools=[...], max_turns=10))

Names are imported on first use (PEP 562), so `import loopwright` and `loopwright --version`
stay fast and import no provider SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AgentDefinition": "options", "ToolPermissionContext": "permission_context",
    "batch": "batching",
    **dict.fromkeys(
        ["Block", "ImageBlock", "RedactedThinkingBlock", "TextBlock", "ThinkingBlock", "ToolResultBlock",
         "ToolUseBlock", "UnknownBlock"], "blocks"),
    "rewind_files": "sessions.rewind",
    "LoopwrightClient": "client",
    **dict.fromkeys(["CLIConnectionError", "CLINotFoundError", "LoopwrightError", "ProcessError"], "errors"),
    **dict.fromkeys(
        ["HookMatcher", "Hooks", "HookContext", "HookJSONOutput", "BaseHookInput", "PreToolUseHookInput",
         "PostToolUseHookInput", "PostToolUseFailureHookInput", "UserPromptSubmitHookInput",
         "SessionStartHookInput", "SessionEndHookInput", "StopHookInput", "SubagentStartHookInput",
         "SubagentStopHookInput", "PreCompactHookInput"], "hooks"),
    "InvariantViolation": "invariant",
    "create_sdk_mcp_server": "mcp.inprocess",
    "RunControl": "loop", "arun": "assemble", "query": "assemble", "run": "assemble", "build_run": "assemble",
    **dict.fromkeys(
        ["AssistantMessage", "Message", "ResultMessage", "StreamEvent", "SystemMessage", "UserMessage"], "messages"),
    **dict.fromkeys(["Model", "ModelError", "ModelRequest", "ModelResponse", "ScriptedModel"], "models"),
    "AgentOptions": "options", "UsageLimits": "limits", "ModelRetry": "guardrails", "Handoff": "handoffs",
    **dict.fromkeys(["Allow", "Deny", "PermissionResultAllow", "PermissionResultDeny"], "gate"),
    "get_session_messages": "sessions", "list_sessions": "sessions",
    **dict.fromkeys(["RunContext", "Tool", "ToolContext"], "tools.base"), "UsageView": "tools.views",
    **dict.fromkeys(["ToolError", "ToolOutput"], "tools.output"),
    "tool": "tools.decorator",
    "default_tools": "tools.builtin",
    **dict.fromkeys(["CallUsage", "Price", "Usage"], "usage"),
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'loopwright' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # cache: the next access is a plain attribute lookup
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # explicit re-exports (`X as X`), so `mypy --strict` sees the public names
    from .assemble import arun as arun
    from .assemble import build_run as build_run
    from .assemble import query as query
    from .assemble import run as run
    from .batching import batch as batch
    from .blocks import Block as Block
    from .blocks import ImageBlock as ImageBlock
    from .blocks import RedactedThinkingBlock as RedactedThinkingBlock
    from .blocks import TextBlock as TextBlock
    from .blocks import ThinkingBlock as ThinkingBlock
    from .blocks import ToolResultBlock as ToolResultBlock
    from .blocks import ToolUseBlock as ToolUseBlock
    from .blocks import UnknownBlock as UnknownBlock
    from .client import LoopwrightClient as LoopwrightClient
    from .errors import CLIConnectionError as CLIConnectionError
    from .errors import CLINotFoundError as CLINotFoundError
    from .errors import LoopwrightError as LoopwrightError
    from .errors import ProcessError as ProcessError
    from .gate import Allow as Allow
    from .gate import Deny as Deny
    from .gate import PermissionResultAllow as PermissionResultAllow
    from .gate import PermissionResultDeny as PermissionResultDeny
    from .guardrails import ModelRetry as ModelRetry
    from .handoffs import Handoff as Handoff
    from .hooks import BaseHookInput as BaseHookInput
    from .hooks import HookContext as HookContext
    from .hooks import HookJSONOutput as HookJSONOutput
    from .hooks import HookMatcher as HookMatcher
    from .hooks import Hooks as Hooks
    from .hooks import PostToolUseFailureHookInput as PostToolUseFailureHookInput
    from .hooks import PostToolUseHookInput as PostToolUseHookInput
    from .hooks import PreCompactHookInput as PreCompactHookInput
    from .hooks import PreToolUseHookInput as PreToolUseHookInput
    from .hooks import SessionEndHookInput as SessionEndHookInput
    from .hooks import SessionStartHookInput as SessionStartHookInput
    from .hooks import StopHookInput as StopHookInput
    from .hooks import SubagentStartHookInput as SubagentStartHookInput
    from .hooks import SubagentStopHookInput as SubagentStopHookInput
    from .hooks import UserPromptSubmitHookInput as UserPromptSubmitHookInput
    from .invariant import InvariantViolation as InvariantViolation
    from .limits import UsageLimits as UsageLimits
    from .loop import RunControl as RunControl
    from .mcp.inprocess import create_sdk_mcp_server as create_sdk_mcp_server
    from .messages import AssistantMessage as AssistantMessage
    from .messages import Message as Message
    from .messages import ResultMessage as ResultMessage
    from .messages import StreamEvent as StreamEvent
    from .messages import SystemMessage as SystemMessage
    from .messages import UserMessage as UserMessage
    from .models import Model as Model
    from .models import ModelError as ModelError
    from .models import ModelRequest as ModelRequest
    from .models import ModelResponse as ModelResponse
    from .models import ScriptedModel as ScriptedModel
    from .options import AgentDefinition as AgentDefinition
    from .options import AgentOptions as AgentOptions
    from .permission_context import ToolPermissionContext as ToolPermissionContext
    from .sessions import get_session_messages as get_session_messages
    from .sessions import list_sessions as list_sessions
    from .sessions.rewind import rewind_files as rewind_files
    from .tools.base import RunContext as RunContext
    from .tools.base import Tool as Tool
    from .tools.base import ToolContext as ToolContext
    from .tools.builtin import default_tools as default_tools
    from .tools.decorator import tool as tool
    from .tools.output import ToolError as ToolError
    from .tools.output import ToolOutput as ToolOutput
    from .tools.views import UsageView as UsageView
    from .usage import CallUsage as CallUsage
    from .usage import Price as Price
    from .usage import Usage as Usage
