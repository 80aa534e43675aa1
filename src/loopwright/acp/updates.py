"""Room: acp. Owns the mapping from what the loop yields to ACP session/update notifications
(tool kinds, titles, locations, diffs, plans, stop reasons) and the replay of a saved history;
may import data types, tools' path helpers and cli.render's call descriptions.

One Updates per prompt (or per replay): it turns messages into the library's update models and
hands each to `send` (the connection's session_update for that session).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import acp
from acp import schema as s

from ..blocks import (
    Block,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    blocks_from_wire,
)
from ..messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    UserMessage,
)

Send = Callable[[Any], Awaitable[None]]

# loopwright's tools -> ACP's tool kinds (docs/acp.md: the tool-kind table).
KINDS: dict[str, s.ToolKind] = {
    "Read": "read", "NotebookRead": "read",
    "Write": "edit", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit",
    "Bash": "execute", "BashOutput": "execute", "KillShell": "execute",
    "Glob": "search", "Grep": "search", "LS": "search",
    "WebFetch": "fetch", "WebSearch": "fetch",
    "TodoWrite": "think", "Agent": "think", "Task": "think", "Skill": "think",
    "ExitPlanMode": "switch_mode",
}
EDIT_TOOLS = ("Write", "Edit", "MultiEdit")
PLAN_STATUS: dict[str, s.PlanEntryStatus] = {"pending": "pending", "in_progress": "in_progress",
                                            "completed": "completed"}


def tool_kind(name: str) -> s.ToolKind:
    return KINDS.get(name, "other")


def tool_title(name: str, tool_input: dict[str, Any], cwd: Path) -> str:
    from ..cli.render import describe_input

    what = describe_input(name, tool_input, cwd) if isinstance(tool_input, dict) else ""
    return f"{name} {what}".strip()


def _line_of(path: str, needle: str) -> int | None:
    """The 1-based line where `needle` starts in the file (None: not found, or unreadable)."""
    try:
        p = Path(path)
        if not needle or p.stat().st_size > 4 << 20:
            return None
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    i = text.find(needle)
    return None if i < 0 else text.count("\n", 0, i) + 1


def locations(name: str, x: dict[str, Any], cwd: Path) -> list[s.ToolCallLocation]:
    """Where the call looks or writes, with a line number when there is one."""
    if not isinstance(x, dict):
        return []
    raw = x.get("file_path") or x.get("notebook_path") or (x.get("path") if name in ("Glob", "Grep") else None)
    if not isinstance(raw, str) or not raw:
        return []
    path = str(Path(cwd, raw)) if not Path(raw).is_absolute() else raw
    line: int | None = None
    if name == "Read" and isinstance(x.get("offset"), int):
        line = max(1, x["offset"])
    elif name == "Edit" and isinstance(x.get("old_string"), str):
        line = _line_of(path, x["old_string"])
    elif name == "MultiEdit" and isinstance(x.get("edits"), list) and x["edits"] and isinstance(x["edits"][0], dict):
        line = _line_of(path, str(x["edits"][0].get("old_string") or ""))
    return [s.ToolCallLocation(path=path, line=line)]


def diffs(name: str, x: dict[str, Any], cwd: Path) -> list[Any]:
    """The `diff` content of an edit: old and new text as the call gave them."""
    raw = x.get("file_path") if isinstance(x, dict) else None
    if not isinstance(raw, str):
        return []
    path = str(Path(cwd, raw)) if not Path(raw).is_absolute() else raw
    if name == "Write" and isinstance(x.get("content"), str):
        return [acp.tool_diff_content(path, x["content"], None)]
    if name == "Edit" and isinstance(x.get("new_string"), str):
        return [acp.tool_diff_content(path, x["new_string"], str(x.get("old_string") or "") or None)]
    if name == "MultiEdit" and isinstance(x.get("edits"), list):
        return [acp.tool_diff_content(path, str(e.get("new_string", "")), str(e.get("old_string") or "") or None)
                for e in x["edits"] if isinstance(e, dict)]
    return []


def plan(x: dict[str, Any]) -> Any | None:
    """TodoWrite's list as an ACP plan."""
    todos = x.get("todos") if isinstance(x, dict) else None
    if not isinstance(todos, list):
        return None
    entries = [acp.plan_entry(str(t.get("content", "")), status=PLAN_STATUS.get(str(t.get("status")), "pending"))
               for t in todos if isinstance(t, dict)]
    return acp.update_plan(entries)


def result_text(content: str | list[Block]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.text for b in content if isinstance(b, TextBlock))


class Updates:
    """Messages of one prompt (or a replayed history) -> session/update notifications."""

    def __init__(self, send: Send, cwd: Path, *, terminals: dict[str, str] | None = None) -> None:
        self.send = send
        self.cwd = cwd
        self.calls: dict[str, ToolUseBlock] = {}  # announced tool calls, by id
        self.terminals = terminals if terminals is not None else {}  # tool_use id -> terminal id (client Bash)
        self.streamed_text = False
        self.streamed_thinking = False

    async def message(self, msg: Message) -> None:
        if getattr(msg, "parent_tool_use_id", None):
            return  # a subagent's own steps: its Agent call shows the result
        if isinstance(msg, StreamEvent):
            await self.stream(msg.event)
        elif isinstance(msg, AssistantMessage):
            await self.assistant(msg.content, live=True)
        elif isinstance(msg, UserMessage) and not msg.is_synthetic:  # (the loop's reminder: not the user's words)
            await self.results(msg.content)
        elif isinstance(msg, SystemMessage) and msg.subtype == "informational" and msg.data.get("prevent_continuation"):
            await self.send(acp.update_agent_message_text(str(msg.data.get("content", ""))))  # (a hook stopped it)

    async def stream(self, ev: dict[str, Any]) -> None:
        """A partial event: Anthropic's content_block_delta, or an OpenAI chunk's delta."""
        kind = ev.get("type")
        if kind == "content_block_delta":
            d = ev.get("delta") or {}
            if d.get("type") == "text_delta" and d.get("text"):
                self.streamed_text = True
                await self.send(acp.update_agent_message_text(d["text"]))
            elif d.get("type") == "thinking_delta" and d.get("thinking"):
                self.streamed_thinking = True
                await self.send(acp.update_agent_thought_text(d["thinking"]))
            return
        choices = ev.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            d = choices[0].get("delta") or {}
            thought = d.get("reasoning_content") or d.get("reasoning")
            if isinstance(thought, str) and thought:
                self.streamed_thinking = True
                await self.send(acp.update_agent_thought_text(thought))
            if isinstance(d.get("content"), str) and d["content"]:
                self.streamed_text = True
                await self.send(acp.update_agent_message_text(d["content"]))

    async def assistant(self, blocks: list[Block], *, live: bool) -> None:
        """Text and thinking (unless streamed already), and each tool call as `pending`."""
        for b in blocks:
            if isinstance(b, TextBlock) and b.text and not (live and self.streamed_text):
                await self.send(acp.update_agent_message_text(b.text))
            elif isinstance(b, ThinkingBlock) and b.thinking and not (live and self.streamed_thinking):
                await self.send(acp.update_agent_thought_text(b.thinking))
            elif isinstance(b, ToolUseBlock):
                await self.tool_call(b)
        self.streamed_text = self.streamed_thinking = False

    async def tool_call(self, b: ToolUseBlock) -> None:
        self.calls[b.id] = b
        await self.send(acp.start_tool_call(
            b.id, tool_title(b.name, b.input, self.cwd), kind=tool_kind(b.name), status="pending",
            content=diffs(b.name, b.input, self.cwd) or None,  # an edit shows its diff before it runs
            locations=locations(b.name, b.input, self.cwd) or None, raw_input=b.input))
        if b.name == "TodoWrite" and (p := plan(b.input)) is not None:
            await self.send(p)

    async def results(self, blocks: list[Block]) -> None:
        for b in blocks:
            if isinstance(b, ToolResultBlock):
                await self.tool_result(b)
            elif isinstance(b, TextBlock) and b.text:  # text the user sent during the turn
                await self.send(acp.update_user_message_text(b.text))

    async def tool_result(self, r: ToolResultBlock) -> None:
        use = self.calls.get(r.tool_use_id)
        text = result_text(r.content)
        content: list[Any] = []
        if use is not None and use.name in EDIT_TOOLS and not r.is_error:
            content = diffs(use.name, use.input, self.cwd)
        if (term := self.terminals.get(r.tool_use_id)) is not None:
            content.append(acp.tool_terminal_ref(term))
        if not content or r.is_error or (use is not None and use.name not in EDIT_TOOLS):
            if text:
                content.append(acp.tool_content(acp.text_block(text)))
        await self.send(acp.update_tool_call(r.tool_use_id, status="failed" if r.is_error else "completed",
                                             content=content or None, raw_output={"content": text,
                                                                                  "is_error": r.is_error}))

    async def replay(self, history: list[dict[str, Any]]) -> None:
        """A saved history as the notifications a live run would have sent (session/load)."""
        for m in history:
            blocks = blocks_from_wire(m.get("content") or [])
            if m.get("role") == "assistant":
                await self.assistant(blocks, live=False)
                continue
            for b in blocks:
                if isinstance(b, ToolResultBlock):
                    await self.tool_result(b)
                elif isinstance(b, TextBlock) and b.text and not b.text.startswith("<system-reminder>"):
                    # (a reminder the loop put in h, the memory files' context among them: not the
                    # user's words, which a live run never shows them as)
                    await self.send(acp.update_user_message_text(b.text))


def stop_reason(r: ResultMessage, cancelled: bool) -> s.StopReason | None:
    """The prompt's stopReason for the run's end; None: the run failed (a JSON-RPC error)."""
    if cancelled:
        return "cancelled"
    if r.subtype in ("error_max_turns", "error_max_budget_usd"):
        return "max_turn_requests"
    if r.subtype == "error_during_execution" and r.stop_reason == "max_tokens":
        return "max_tokens"  # cut off even after its continuations (loop.output_reminder)
    if r.subtype == "success":
        ends: dict[str, s.StopReason] = {"max_tokens": "max_tokens", "refusal": "refusal",
                                         "model_context_window_exceeded": "max_tokens"}
        return ends.get(r.stop_reason or "", "end_turn")
    return None


def limit_note(r: ResultMessage) -> str | None:
    """What the editor shows when a limit ended the prompt (a limit is always visible)."""
    if r.subtype == "error_max_turns":
        return f"\n\n[loopwright stopped: {r.errors[0] if r.errors else 'the turn limit was reached'}]"
    if r.subtype == "error_max_budget_usd":
        return f"\n\n[loopwright stopped: the budget was reached (${r.total_cost_usd:.4f} spent)]"
    if r.subtype == "error_max_structured_output_retries":
        return "\n\n[loopwright stopped: no valid structured answer]"
    if r.subtype == "error_during_execution" and r.stop_reason == "max_tokens":
        return f"\n\n[loopwright stopped: {r.errors[0] if r.errors else 'the answer was cut off at max_tokens'}]"
    return None


