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
    "AgentDefinition": "agents",
    "batch": "batching",
    **dict.fromkeys(
        ["Block", "ImageBlock", "RedactedThinkingBlock", "TextBlock", "ThinkingBlock", "ToolResultBlock",
         "ToolUseBlock", "UnknownBlock"], "blocks"),
    "rewind_files": "checkpoints",
    "LoopwrightClient": "client",
    "HookMatcher": "hooks", "Hooks": "hooks",
    "InvariantViolation": "invariant",
    "create_sdk_mcp_server": "mcp.inprocess",
    "RunControl": "loop", "query": "loop", "run": "loop",
    **dict.fromkeys(
        ["AssistantMessage", "Message", "ResultMessage", "StreamEvent", "SystemMessage", "UserMessage"], "messages"),
    **dict.fromkeys(["Model", "ModelError", "ModelRequest", "ModelResponse", "ScriptedModel"], "models"),
    "AgentOptions": "options",
    "Allow": "permissions", "Deny": "permissions",
    "get_session_messages": "sessions", "list_sessions": "sessions",
    **dict.fromkeys(["Tool", "ToolContext", "ToolError", "ToolOutput", "tool"], "tools.base"),
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


if TYPE_CHECKING:
    from .agents import AgentDefinition
    from .batching import batch
    from .blocks import (
        Block,
        ImageBlock,
        RedactedThinkingBlock,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        UnknownBlock,
    )
    from .checkpoints import rewind_files
    from .client import LoopwrightClient
    from .hooks import HookMatcher, Hooks
    from .invariant import InvariantViolation
    from .loop import RunControl, query, run
    from .mcp.inprocess import create_sdk_mcp_server
    from .messages import (
        AssistantMessage,
        Message,
        ResultMessage,
        StreamEvent,
        SystemMessage,
        UserMessage,
    )
    from .models import Model, ModelError, ModelRequest, ModelResponse, ScriptedModel
    from .options import AgentOptions
    from .permissions import Allow, Deny
    from .sessions import get_session_messages, list_sessions
    from .tools.base import Tool, ToolContext, ToolError, ToolOutput, tool
    from .usage import CallUsage, Price, Usage
