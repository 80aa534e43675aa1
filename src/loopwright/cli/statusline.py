"""Room: cli. Owns the interactive mode's status line while a turn works; may import data types,
models.catalog and cli.render.

The status line under the prompt while the agent works: time since the prompt, what runs now
(the model call k, or the tool call), tokens so far (input + output over the turn's calls),
the turn's cost, and the window used: the last call's n_k over the model's context window W
(seed §5), from --context-window or the model catalog.
"""

from __future__ import annotations

import time

from ..blocks import ToolUseBlock
from ..messages import AssistantMessage, Message, ResultMessage, SystemMessage, UserMessage
from ..models.catalog import context_window
from .render import describe_input

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def tokens(n: int) -> str:
    """1234 -> '1.2k', 200000 -> '200k' (a status line has little room)."""
    if n < 1000:
        return str(n)
    k = n / 1000
    return f"{k:.1f}k" if k < 10 else f"{k:.0f}k"


class StatusLine:
    """What a turn has done so far, fed with the messages the REPL shows."""

    def __init__(self, window: int | None = None) -> None:
        self.window_option = window  # --context-window, else the catalog's for the model
        self.started = time.monotonic()
        self.activity = ""
        self.calls = 0
        self.tokens = 0
        self.cost = 0.0
        self.n_k = 0
        self.model = ""

    def start(self) -> None:
        """A new prompt: the counts start over (the window used carries on)."""
        self.started = time.monotonic()
        self.calls = 0
        self.tokens = 0
        self.cost = 0.0
        self.activity = "model call 1"

    @property
    def window(self) -> int | None:
        return self.window_option or (context_window(self.model) if self.model else None)

    def observe(self, msg: Message) -> None:
        if getattr(msg, "parent_tool_use_id", None) is not None:
            return  # a subagent's call: its own window (its cost reaches the result)
        if isinstance(msg, SystemMessage) and msg.subtype == "init":
            self.model = str(msg.data.get("model") or self.model)
        elif isinstance(msg, AssistantMessage):
            self.calls += 1
            self.model = msg.model or self.model
            u = msg.usage
            if u is not None:
                self.tokens += u.input_tokens + u.output_tokens
                self.cost += u.cost_usd
                self.n_k = u.input_tokens
            uses = [b for b in msg.content if isinstance(b, ToolUseBlock)]
            if uses:
                first = f"{uses[0].name}({describe_input(uses[0].name, uses[0].input, None)})"
                self.activity = first if len(uses) == 1 else f"{first} +{len(uses) - 1} more"
        elif isinstance(msg, UserMessage):
            self.activity = f"model call {self.calls + 1}"
        elif isinstance(msg, ResultMessage):
            self.activity = ""

    def text(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        elapsed = now - self.started
        frame = FRAMES[int(now * 10) % len(FRAMES)]
        activity = self.activity if len(self.activity) <= 60 else self.activity[:59] + "…"
        w = self.window
        used = (f"window {tokens(self.n_k)}/{tokens(w)} ({100 * self.n_k / w:.0f}%)" if w
                else f"window {tokens(self.n_k)} tokens")
        # the counts first: a narrow terminal cuts the end of the line
        return (f" {frame} working… {elapsed:.0f}s · {tokens(self.tokens)} tokens · ${self.cost:.4f} · {used} · "
                f"{activity} · Esc to interrupt")
