"""Room: cli. Owns the interactive mode's status line while a turn works, and the user's own
(Claude Code's `statusLine` command); may import data types, models.catalog, settings, trust, childout, children and cli.render.

The status line under the prompt while the agent works: time since the prompt, what runs now
(the model call k, or the tool call), tokens so far (input + output over the turn's calls),
the turn's cost, and the window used: the last call's n_k over the model's context window W
(seed §5), from --context-window or the model catalog.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..blocks import ToolUseBlock
from ..childout import close, finish, read_async, start
from ..children import disown, own, signal_group
from ..messages import AssistantMessage, Message, ResultMessage, SystemMessage, UserMessage
from ..models.catalog import context_window
from .render import describe_input, visible

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..options import AgentOptions

STATUS_TIMEOUT = 5.0  # seconds a statusLine command may take; its line stays the last one it printed
STATUS_MAX_BYTES = 1 << 20  # of its output, read (its first line is shown); past it the command is ended
STATUS_MAX_CHARS = 4096  # of that line kept (a terminal shows far fewer)

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


class CustomStatus:
    """Claude Code's custom status line: `"statusLine": {"type": "command", "command": "...",
    "padding"?: N}` in settings. The command gets Claude Code's JSON on stdin (session_id, cwd,
    model, workspace, output_style, cost) and its first line of output is the status line; it is
    run again (one at a time) when the conversation moves on. A project's statusLine runs only in a
    trusted workspace (trust/ narrows it away otherwise, and says so)."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str] | None = None, padding: int = 0) -> None:
        self.command, self.cwd, self.padding = command, cwd, max(0, padding)
        self.env = {**os.environ, **(env or {})}
        self.text = ""
        self.error = ""
        self.data: dict[str, Any] = {"hook_event_name": "Status", "session_id": "", "transcript_path": "",
                                     "cwd": str(cwd), "model": {"id": "", "display_name": ""},
                                     "workspace": {"current_dir": str(cwd), "project_dir": str(cwd)},
                                     "version": "", "output_style": {"name": "default"},
                                     "cost": {"total_cost_usd": 0.0, "total_duration_ms": 0}}
        self._task: asyncio.Task[None] | None = None
        self._again = False
        # called when a run has ended (the REPL redraws its toolbar): the line arrives after the
        # prompt was drawn, and nothing else may redraw it until the user types
        self.on_change: Callable[[], None] | None = None

    @classmethod
    def from_options(cls, options: AgentOptions) -> CustomStatus | None:
        """The statusLine of the settings these options read (None: none, or settings off)."""
        from ..runconfig import uses_settings
        from ..settings import SETTING_SOURCES, load_settings
        from ..trust import trusted_for

        if not uses_settings(options):
            return None
        cwd = Path(options.cwd or ".").resolve()
        sources = SETTING_SOURCES if options.setting_sources is None else options.setting_sources
        settings = load_settings(cwd, sources, claude=options.claude_settings, extra=options.settings,
                                 trusted=trusted_for(options, cwd))
        line = None if settings.disable_all_hooks else settings.status_line  # disableAllHooks: no statusLine
        if not line:
            return None
        padding = line.get("padding", 0)
        status = cls(str(line["command"]), cwd, settings.env, padding if isinstance(padding, int) else 0)
        from .. import __version__

        status.data["version"] = __version__
        status.data["output_style"] = {"name": options.output_style or settings.output_style or "default"}
        return status

    def observe(self, msg: Message) -> None:
        """Take what the status JSON shows from a message, and run the command again."""
        if isinstance(msg, SystemMessage) and msg.subtype == "init":
            model = str(msg.data.get("model") or "")
            self.data.update(session_id=str(msg.data.get("session_id") or ""), model={"id": model, "display_name": model})
        elif isinstance(msg, ResultMessage):
            self.data["cost"] = {"total_cost_usd": msg.total_cost_usd, "total_duration_ms": msg.duration_ms}
        else:
            return
        self.refresh()

    def refresh(self) -> None:
        """Run the command (later, if it is running now)."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        with contextlib.suppress(RuntimeError):  # no event loop: nothing to run it on
            self._task = asyncio.get_running_loop().create_task(self.run())

    async def run(self) -> None:
        """Run the command once; its first line becomes `text` (an error is kept in `error`)."""
        self._again = False
        try:
            child = await start(self.command, None, lambda pid: signal_group(pid, signal.SIGKILL),
                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                stderr=asyncio.subprocess.DEVNULL, cwd=self.cwd, env=self.env, start_new_session=True)
        except OSError as e:
            self.error = f"statusLine command could not start: {e}"
            return
        proc = child.proc
        own(proc.pid, "statusLine")  # ended with loopwright, however it ends (children.py)
        try:
            got = await asyncio.wait_for(read_async(proc, json.dumps(self.data).encode(), STATUS_MAX_BYTES),
                                         STATUS_TIMEOUT)
            if got.truncated:  # (no further: an endless stream filled memory)
                signal_group(proc.pid, signal.SIGKILL)
                await finish(child, STATUS_TIMEOUT)
        except TimeoutError:
            signal_group(proc.pid, signal.SIGKILL)  # the command's whole group (a shell's children too)
            await finish(child, STATUS_TIMEOUT)  # (bounded: proc.wait() alone waited for a daemon holding its pipe)
            self.error = f"statusLine command took over {STATUS_TIMEOUT:.0f}s"
            return
        except asyncio.CancelledError:  # the interactive mode is ending: the command goes with it
            signal_group(proc.pid, signal.SIGKILL)
            raise
        finally:
            await close(child, STATUS_TIMEOUT)  # (its pipes and transport: never left to the loop's end)
            disown(proc.pid)
        lines = got.stdout.decode("utf-8", "replace").splitlines()
        self.text = " " * self.padding + visible(lines[0][:STATUS_MAX_CHARS]) if lines else ""
        self.error = (f"statusLine command printed over {STATUS_MAX_BYTES:,} bytes; it was ended" if got.truncated
                      else "" if proc.returncode == 0 else f"statusLine command exited with {proc.returncode}")
        if self.on_change is not None:
            self.on_change()
        if self._again:
            self.refresh()

    async def aclose(self) -> None:
        """Wait for a running command (at most its timeout)."""
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
