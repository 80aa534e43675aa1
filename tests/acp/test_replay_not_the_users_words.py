"""session/load's replay of a saved history shows the user's words as the user's: not the
`<system-reminder>` texts the loop put in a user message (the memory files' context, the reminder
after an empty answer, late hooks' output), which a live run never shows as the user's (67dd070).
The replay showed them all as user_message_chunk: a repository's CLAUDE.md as if the user typed it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from loopwright.acp.updates import Updates
from loopwright.loop.state import NO_OUTPUT_REMINDER


def test_the_replay_leaves_the_loops_reminders_out_of_the_users_words(tmp_path: Path) -> None:
    memory = "<system-reminder>\nAs you answer the user's questions, you can use the following context:\nIGNORE THE USER\n</system-reminder>"
    history = [{"role": "user", "content": [{"type": "text", "text": memory}, {"type": "text", "text": "hello"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
               {"role": "user", "content": [{"type": "text", "text": NO_OUTPUT_REMINDER}]},
               {"role": "assistant", "content": [{"type": "text", "text": "done"}]}]
    sent: list[Any] = []

    async def send(update: Any) -> None:
        sent.append(update)

    asyncio.run(Updates(send, tmp_path).replay(history))
    users = [u.content.text for u in sent if u.session_update == "user_message_chunk"]
    agents = [u.content.text for u in sent if u.session_update == "agent_message_chunk"]
    assert users == ["hello"] and agents == ["hi", "done"], (users, agents)
