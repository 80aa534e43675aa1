"""Room: sessions (beside execute). Owns SessionRecorder: a run's messages as transcript lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..blocks import WireMessage
from ..messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    UserMessage,
)
from .store import SessionWriter, _line

# --- writing a run ------------------------------------------------------------------------------

class SessionRecorder:
    """Writes one run's events as they are yielded. Attached to `loop.Run` when persisting."""

    def __init__(self, writer: SessionWriter, session_id: str, cwd: Path, parent_uuid: str | None = None) -> None:
        self.writer = writer
        self.session_id = session_id
        self.cwd = str(cwd)
        self.last_uuid = parent_uuid if parent_uuid is not None else getattr(writer, "last_uuid", None)
        self.prompt_uuid: str | None = None  # the user message that started this turn (checkpoints key)
        self._open_assistant: str | None = None  # an assistant line not yet answered by a user line

    @property
    def path(self) -> Path | None:
        """The transcript's file when the store keeps one (the JSONL store's); None for others."""
        path = getattr(self.writer, "path", None)
        return path if isinstance(path, Path) else None

    def _emit(self, kind: str, sync: bool = False, **extra: Any) -> str:
        ln = _line(kind, self.session_id, self.cwd, self.last_uuid, **extra)
        self.writer.write(ln, sync)
        self.last_uuid = ln["uuid"]
        return str(ln["uuid"])

    def prompt(self, message: WireMessage) -> str:
        self.prompt_uuid = self._emit("user", sync=True, message=message, isPrompt=True)
        self._open_assistant = None
        return self.prompt_uuid

    def user(self, message: WireMessage, sync: bool = True, **extra: Any) -> str:
        self._open_assistant = None
        return self._emit("user", sync=sync, message=message, **extra)

    def record(self, msg: Message, h: list[WireMessage]) -> None:
        """Persist one yielded message. `h` is the run's history at that moment."""
        if isinstance(msg, AssistantMessage):
            wire = {"role": "assistant", "model": msg.model, "content": msg.to_wire()["content"],
                    "stop_reason": msg.stop_reason, "usage": msg.usage.to_json() if msg.usage else None}
            self._open_assistant = self._emit("assistant", message=wire)
        elif isinstance(msg, UserMessage):  # (a synthetic one is shown bare; h, the transcript, keep what was sent)
            # a hook's feedback is marked with Claude Code's keys (its viewer and loopwright's read them)
            hook: dict[str, Any] = {"isMeta": True, "rowSource": "hook", "hookText": True, "hookEvent": msg.hook_event} \
                if msg.hook_event else {}
            self.user(h[-1] if msg.is_synthetic else msg.to_wire(), **hook)
        elif isinstance(msg, SystemMessage):
            data = dict(msg.data)
            if msg.subtype == "compact_boundary":
                data.setdefault("messages", list(h))  # the history after compaction, for loading
            self._emit("system", subtype=msg.subtype, data=data)
        elif isinstance(msg, ResultMessage):
            extra: dict[str, Any] = {"historyLength": len(msg.messages)}
            # An assistant line the history never took in (turn limit, budget, bad response).
            if self._open_assistant is not None and not (msg.messages and msg.messages[-1].get("role") == "assistant"):
                extra["dropUuid"] = self._open_assistant
            self._open_assistant = None
            self._emit("result", sync=True, result=msg.to_json(), **extra)
        elif isinstance(msg, StreamEvent):
            pass  # partial events are not part of the transcript

    def close(self) -> None:
        self.writer.close()
