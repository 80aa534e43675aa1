"""loopwright: the agent loop, done right.

    import loopwright as lw
    result = lw.run("fix the failing test", lw.AgentOptions(model=..., tools=[...], max_turns=10))
"""

from __future__ import annotations

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
from .invariant import InvariantViolation
from .loop import RunControl, query, run
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

__version__ = "0.1.0"

__all__ = [
    "AgentOptions", "Allow", "AssistantMessage", "Block", "CallUsage", "Deny", "ImageBlock",
    "InvariantViolation", "Message", "Model", "ModelError", "ModelRequest", "ModelResponse", "Price",
    "RedactedThinkingBlock", "ResultMessage", "RunControl", "ScriptedModel", "StreamEvent",
    "SystemMessage", "TextBlock", "ThinkingBlock", "Tool", "ToolContext", "ToolError", "ToolOutput",
    "ToolResultBlock", "ToolUseBlock", "UnknownBlock", "Usage", "UserMessage", "query", "run", "tool",
    "LoopwrightClient", "get_session_messages", "list_sessions", "rewind_files",
    "__version__",
]
