"""Room: cli (the Agent SDK protocol). Owns the stdout shapes of the Agent SDK protocol; may import cli.headless and the
rooms below cli.

loopwright's messages as the lines Claude Code writes with `--output-format stream-json
--verbose`: the `loopwright -p --output-format stream-json` shapes (cli.headless.message_json)
plus what the SDKs' parsers read besides (uuid on every line, message.id, the init message's
Claude Code fields). `num_turns` keeps loopwright's meaning: tool-use turns (seed Def 3.1).
"""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..cli.headless import message_json, message_lines
from ..ids import new_uuid
from ..messages import Message, ResultMessage, SystemMessage, UserMessage


def sdk_lines(msg: Message, session_id: str, extra_init: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The stdout lines for `msg` of the session `session_id`: one, but a turn's tool results are
    one line each, with their `tool_use_result` (cli.headless.message_lines)."""
    if isinstance(msg, UserMessage):
        return message_lines(msg, session_id)
    return [sdk_line(msg, session_id, extra_init)]


def sdk_line(msg: Message, session_id: str, extra_init: dict[str, Any] | None = None) -> dict[str, Any]:
    """One stdout line for `msg` of the session `session_id`."""
    line = message_json(msg, session_id)  # (its uuid too)
    if isinstance(msg, SystemMessage):
        line.setdefault("session_id", session_id)
        if msg.subtype == "init":
            line.pop("permission_mode", None)  # Claude Code spells it permissionMode only
            line.setdefault("mcp_servers", [])
            line.setdefault("apiKeySource", "none")
            line.update({"slash_commands": [], "agents": [], "skills": [], "plugins": [], "output_style": "default",
                         "loopwright_version": __version__, **(extra_init or {})})
    elif isinstance(msg, ResultMessage):
        line.setdefault("session_id", session_id)
    return line


def error_result(error: str, session_id: str, subtype: str = "error_during_execution") -> dict[str, Any]:
    """The result line of a prompt that could not become a run (bad options found when it starts)."""
    return {"type": "result", "subtype": subtype, "is_error": True, "duration_ms": 0, "duration_api_ms": 0,
            "num_turns": 0, "result": error, "stop_reason": None, "session_id": session_id, "total_cost_usd": 0.0,
            "usage": {"input_tokens": 0, "output_tokens": 0}, "modelUsage": {}, "permission_denials": [],
            "errors": [error], "uuid": new_uuid()}
