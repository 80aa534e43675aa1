"""Room: loop. Owns MessageDisplay: what the caller is shown of an assistant message when hooks
rewrite its display; may import data types and hooks (types only).

Claude Code 2.1.332 fires MessageDisplay with an assistant message's newly completed lines; in
-p and SDK sessions that is one flush per message, once it is complete (index 0, final true, the
whole text), and a hook's `displayContent` is what is shown instead: the assistant message the
caller gets and the result's text (seen on the same scripted turns). Display-only: the run's
history, what the model is sent next and the transcript keep the original text."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..blocks import TextBlock
from ..ids import new_uuid
from ..messages import AssistantMessage, Message, ResultMessage

if TYPE_CHECKING:
    from ..hooks import RunHooks


class Display:
    """One run's MessageDisplay hooks: each top-level assistant message with text is shown
    through them (`shown`), and a result whose text was the last one shown says what was shown."""

    def __init__(self, hooks: RunHooks) -> None:
        self.hooks = hooks
        self.turn_id = new_uuid()
        self.last: tuple[str, str] | None = None  # (the last message's text, what was shown instead)

    async def shown(self, msg: Message) -> Message:
        """`msg` as the caller is shown it."""
        if isinstance(msg, ResultMessage):
            if self.last is not None and msg.result == self.last[0]:
                return replace(msg, result=self.last[1])
            return msg
        if not isinstance(msg, AssistantMessage) or msg.parent_tool_use_id is not None:
            return msg
        texts = [b.text for b in msg.content if isinstance(b, TextBlock)]
        text = "".join(texts)
        if not text:
            return msg
        instead = await self.hooks.message_display(self.turn_id, new_uuid(), 0, True, text)
        if instead is None or instead == text:
            self.last = None
            return msg
        self.last = (text, instead)
        first = next(i for i, b in enumerate(msg.content) if isinstance(b, TextBlock))
        content = [TextBlock(instead) if i == first else b for i, b in enumerate(msg.content)
                   if i == first or not isinstance(b, TextBlock)]  # the text shown once, where it began
        return replace(msg, content=content)
