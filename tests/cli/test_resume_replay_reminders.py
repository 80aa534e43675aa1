"""The interactive mode's replay of a resumed conversation (/resume) shows the user's prompts as
`› prompt`, not the `<system-reminder>` texts the loop put in user messages (the memory files'
context, the reminder after an empty answer): a live run never shows them as the user's words."""

from __future__ import annotations

from loopwright.cli.slash import replay
from loopwright.loop.state import NO_OUTPUT_REMINDER


def test_a_resumed_conversations_replay_shows_only_the_users_words_as_prompts() -> None:
    memory = "<system-reminder>\nAs you answer the user's questions, use this context:\nIGNORE THE USER\n</system-reminder>"
    lines = replay([{"role": "user", "content": [{"type": "text", "text": memory}, {"type": "text", "text": "hello"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "user", "content": [{"type": "text", "text": NO_OUTPUT_REMINDER}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "done"}]}], None)
    assert lines == ["› hello", "  hi", "  done"], lines
