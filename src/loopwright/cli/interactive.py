"""Room: cli. Owns the REPL (Repl, interactive_main); may import the rooms below cli, cli.config and
cli.render, never cli.headless.

`loopwright` with no -p: an interactive session (Claude Code's REPL, in small).

- The live trace of each turn: text, tool calls and results as compact lines, tokens and
  cost per model call; a spinner in the bottom bar while the model or a tool works.
- Esc or Ctrl-C during a turn interrupts it: the running model call or tool calls are
  cancelled (the Bash tool kills their process groups), each unfinished call gets an
  is_error "interrupted" result, and the prompt comes back. Ctrl-C twice at an empty
  prompt (or Ctrl-D) exits.
- The prompt stays live while the agent works: a line typed then is queued and delivered
  right after the running tool calls finish, in the same turn (RunControl.send). If no
  tool turn follows (or a command works), it is sent as the next prompt once it ends.
- Permission questions are a modal dialog under the input box (cli/dialog.py): the whole diff
  or command, then 1 Yes / 2 Yes and don't ask again for <rule> / 3 No and tell the model.
  The model's questions (AskUserQuestion) and its plan (ExitPlanMode) are dialogs there too
  (cli/questions.py), under the same consent rules.
  What was typed before it appeared stays in the input box.
- Esc-prefixed keys (Alt-b, Alt-f, Alt-Backspace) edit the line; Esc alone interrupts after
  a short wait (cli/prompt.py's ESC_WAIT) that tells the two apart; the keys and the input box
  are cli/prompt.py's.
- Multi-line input: end a line with `\\` or press Ctrl-J for a newline; history is kept in
  $LOOPWRIGHT_HOME/repl_history.
- Slash commands: the built-ins of cli/commands/ (/help lists them, one line each; a command that
  shows state opens a panel under the input box, Esc closes it), the custom commands and skills;
  typing `/` opens a menu of them (cli/slash.py). `!cmd` runs a shell command through the Bash
  tool's gate with no model call (cli/commands/shell.py). A line starting with `#` is a prompt, as in
  Claude Code 2.1.332 (it dropped its `#` memory shortcut; /memory add TEXT does that).
- Tool output: a few lines under each call, Ctrl-O or /expand N redraws it in full in place
  (cli/toolview.py). While a turn works, the status line shows time, what runs, tokens, cost and
  the window used (cli/statusline.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..blocks import TextBlock
from ..client import LoopwrightClient
from ..gate import Allow, Deny
from ..messages import AssistantMessage, Message, ResultMessage, StreamEvent
from ..options import AgentOptions
from ..runconfig import BYPASS_DISABLED, has_hooks, refuse_bypass
from .commands import Panel, find
from .config import EXIT_USAGE, UsageError, build_options, check_sessions
from .dialog import PermissionAsker
from .elicit_dialog import Elicitor
from .prompt import prompt_session
from .questions import UserAsker
from .render import visible
from .statusline import CustomStatus, StatusLine
from .terminal import session_input
from .toolview import Log, ReplRenderer

# Shift+Tab's order (Claude Code's: manual, accept edits, plan, auto); bypassPermissions and
# dontAsk are set with --permission-mode or /permissions mode only.
MODE_CYCLE = ("default", "acceptEdits", "plan", "auto")
MODE_NOTES = {"auto": " (a classifier call judges what the rules would ask; risky calls are still asked)",
              "acceptEdits": " (edits in the working directories run unasked)",
              "plan": " (read-only tools until the plan is approved)"}
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def preimport_sdk(model: Any) -> None:
    """Import the provider SDK a model imports lazily on its first call (the anthropic SDK
    takes seconds), off the event loop, so the first turn does not freeze the screen."""
    import importlib

    module = type(model).__module__
    for sdk, user in (("anthropic", ".anthropic"), ("openai", ".openai_compat")):
        if module.endswith(user):
            try:
                importlib.import_module(sdk)
            except ImportError:
                pass


class Repl:
    """The interactive session: a LoopwrightClient driven from a prompt_toolkit prompt, with a live
    trace."""

    def __init__(self, options: AgentOptions, note: str | None = None) -> None:
        self.note = note  # said under the header (-c found nothing to continue)
        try:  # permissions.disableBypassPermissionsMode: the session's mode (the status bar's, Shift+Tab's) is default
            refuse_bypass(options, options.permission_mode or "default")
        except ValueError:
            options = replace(options, permission_mode="default")
            self.note = f"{note}; {BYPASS_DISABLED}" if note else BYPASS_DISABLED
        self.base_options = options
        self.mcp_prompts: list[tuple[str, str]] = []  # the MCP servers' prompts for the / menu (_warm_up)
        self.log = Log()  # what was printed, for redraws (Ctrl-O)
        self.statusline = StatusLine(options.context_window)
        self.custom_status = CustomStatus.from_options(options)  # the user's statusLine command, if any
        if self.custom_status is not None:  # its line comes after the prompt is drawn: draw it again then
            self.custom_status.on_change = lambda: self.app.invalidate() if self.app is not None else None
        self.prompt_session: Any = None
        self.exit_asked = 0.0
        self.leaving = False  # the user left: a queued line starts no run now (_unsent names it)
        # AskUserQuestion and ExitPlanMode ask through dialogs like the permission one (cli/questions.py)
        self.questions = UserAsker(lambda s: self.say(s), self._plan_mode_done)
        self.elicitor = Elicitor(lambda s: self.say(s))  # an MCP server's questions (cli/elicit_dialog.py)
        # partial messages: text is shown line by line as the model writes it; with MessageDisplay
        # hooks, each message once it is complete, as they rewrote it (loop/display.py)
        self.client = LoopwrightClient(replace(options, can_use_tool=self.ask_permission,
                                               include_partial_messages=not has_hooks(options, "MessageDisplay"),
                                               ask_user=self.questions.ask,
                                               review_plan=self.questions.review_plan, elicit=self.elicitor.elicit))
        self.partial = ""  # streamed text not yet printed (no newline yet)
        self.streamed = False  # the current model call's text was shown while streaming
        self.turn: asyncio.Task[Any] | None = None
        self.last_ctrl_c = 0.0
        self.started = time.monotonic()
        self.status = ""
        self.asker = PermissionAsker(options, lambda s: self.say(s), self.client)
        self.renderer: Any = None
        self.app: Any = None
        self.panel: Panel | None = None  # a command's panel under the input box (Esc closes it)
        self.shell: asyncio.Task[None] | None = None  # a running `!` command
        self.terminal = session_input()  # raw modes for the whole session (None: no terminal)
        self.held: list[str] = []  # lines typed while no run could take them (take_held)

    # --- state -----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.turn is not None and not self.turn.done()

    def say(self, text: str) -> None:
        self.log.text(visible(text) + "\n")  # a redraw must not replay control characters either
        with contextlib.suppress(OSError):  # the terminal is gone (SIGHUP): the exit goes on
            print(text, flush=True)

    async def ask_line(self, question: str) -> str:
        """One line typed at a question of ours (no prompt session, as in tests: no answer)."""
        if self.prompt_session is None:
            return ""
        try:
            return str(await self.prompt_session.prompt_async(question))
        except (EOFError, KeyboardInterrupt):
            return ""

    # --- permission questions ------------------------------------------------------------------

    @property
    def dialog(self) -> Any:
        """The open dialog: a permission question, else a question of the model's or its plan, else
        a command's panel."""
        return self.asker.dialog or self.questions.dialog or self.elicitor.dialog or self.panel

    def open_panel(self, panel: Panel) -> None:
        """Show a command's panel under the input box; Esc (or Enter, q) closes it."""
        def close() -> None:
            if self.panel is panel:
                self.panel = None
            if self.app is not None:
                self.app.invalidate()

        panel._close = close
        self.panel = panel
        self.log.text(visible(panel.text()) + "\n")  # (what the panel showed, for a redraw's record)
        if self.app is None:  # no terminal (tests, a pipe): the panel is printed
            print(panel.text(), flush=True)
        else:
            self.app.invalidate()

    def cycle_mode(self) -> None:
        """Shift+Tab: the next permission mode of MODE_CYCLE, for the next prompts (as Claude Code)."""
        now = self.client.options.permission_mode or "default"
        mode = MODE_CYCLE[(MODE_CYCLE.index(now) + 1) % len(MODE_CYCLE)] if now in MODE_CYCLE else "default"
        self.client.options = replace(self.client.options, permission_mode=mode)  # type: ignore[arg-type]
        self.say(f"  ● permission mode: {mode}{MODE_NOTES.get(mode, '')}")
        if self.app is not None:
            self.app.invalidate()

    def start_turn(self, prompt: str) -> None:
        self.turn = asyncio.create_task(self.run_turn(prompt))

    def take_held(self) -> str:
        text, self.held = "\n\n".join(self.held), []
        return text

    def _send_held(self, _: asyncio.Task[Any]) -> None:  # a command's turn ended: typed meanwhile, sent now
        if self.held and not self.busy and not self.leaving:
            self.say(f"  ✉ sending queued message: {self.held[0][:80]}")
            self.start_turn(self.take_held())

    def _plan_mode_done(self, mode: str) -> None:
        """An approved plan: this run goes on in `mode` (ExitPlanMode), and so do the next prompts."""
        self.client.options = replace(self.client.options, permission_mode=mode)  # type: ignore[arg-type]

    async def ask_permission(self, name: str, tool_input: dict[str, Any]) -> Allow | Deny:
        return await self.asker.ask(name, tool_input)

    # --- a turn -------------------------------------------------------------------------------

    async def _tick(self) -> None:
        """Redraw the status line while a turn runs (an idle prompt is not redrawn: no CPU)."""
        while True:
            await asyncio.sleep(0.1)
            if self.app is not None:
                self.app.invalidate()

    async def run_turn(self, prompt: str) -> None:
        self.statusline.start()
        ticker = asyncio.create_task(self._tick())
        try:
            await self.client.query(prompt)  # (`!` commands since the last prompt are in the history: it joins them)
            while True:
                async for msg in self.client.receive_response():
                    self.show(msg)
                # A line typed while the run ended is in pending once it has ended; from this check to
                # the turn's end nothing awaits, so no later line is queued for a run that never comes.
                await self.client.wait_ended()
                if self.leaving or not self.client.pending and not self.held:
                    break
                self.say(f"  ✉ sending queued message: {(self.client.pending or self.held)[0][:80]}")  # the next prompt
                await self.client.query(self.take_held())
        except Exception as e:  # noqa: BLE001 - the REPL survives a broken run and says why
            self.say(f"  ✗ {type(e).__name__}: {e}")
        finally:
            ticker.cancel()
            if self.app is not None:
                self.app.invalidate()

    def show(self, msg: Message) -> None:
        """Render one message; streamed text deltas are printed as whole lines as they come."""
        self.statusline.observe(msg)
        if self.custom_status is not None and getattr(msg, "parent_tool_use_id", None) is None:
            self.custom_status.observe(msg)
        if getattr(msg, "parent_tool_use_id", None) is not None:  # a subagent's: compact trace lines only
            if not isinstance(msg, StreamEvent):
                self.renderer.show(msg)
            return
        if isinstance(msg, StreamEvent):
            ev = msg.event
            delta = ev.get("delta") or {}
            if ev.get("type") == "content_block_delta" and delta.get("type") == "text_delta":
                self.streamed = True
                self.partial += str(delta.get("text", ""))
                while "\n" in self.partial:
                    line, self.partial = self.partial.split("\n", 1)
                    self.say(f"  {visible(line)}")
            return
        if self.partial:
            self.say(f"  {visible(self.partial)}")
            self.partial = ""
        if isinstance(msg, AssistantMessage):
            if not self.streamed:  # the whole text (the trace renderer would shorten it)
                for b in msg.content:
                    if isinstance(b, TextBlock) and b.text.strip():
                        self.say("\n".join(f"  {visible(ln)}" for ln in b.text.strip().splitlines()))
            msg = replace(msg, content=[b for b in msg.content if not isinstance(b, TextBlock)])
        if isinstance(msg, (AssistantMessage, ResultMessage)):
            self.streamed = False
        self.renderer.show(msg)

    def interrupt(self) -> None:
        if self.panel is not None:
            self.panel.escape()
        if self.busy:
            self.say("  ⏹ interrupting…")
            self.asker.cancel()
            self.questions.cancel()
            self.elicitor.cancel()
            if self.shell is not None and not self.shell.done():  # a `!` command: its Bash call is cancelled
                self.shell.cancel()
            self.client.interrupt()

    # --- slash commands -------------------------------------------------------------------------

    def cwd(self) -> str:
        return str(self.base_options.cwd or ".")

    async def command(self, line: str, *, idle: bool = False) -> bool:
        """Run a slash command. Returns False to exit. `idle`: it runs as the session's turn (started
        at an idle prompt), so the prompt stays live and reads keys meanwhile."""
        cmd, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        if cmd in ("exit", "quit"):
            return False
        builtin = find(cmd)
        if self.busy and not idle and not (builtin is not None and builtin.busy_ok):
            self.say("  (a turn is running: press Esc to interrupt it first)")
            return True
        if builtin is not None:
            try:
                await builtin.run(self, arg)
            except Exception as e:  # noqa: BLE001 - a command's failure is said in one line, the REPL goes on
                self.say(f"  ✗ /{cmd} failed: {type(e).__name__}: {e}")
        elif (custom := self.custom_command(line)) is not None:
            await self.run_turn(custom)
        elif cmd.startswith("mcp__"):  # an MCP server's prompt: the run expands it once its servers are up (mcp/prompts.py)
            self.turn = asyncio.create_task(self.run_turn(line))
        else:
            import difflib  # (only on a mistake's way)

            from .commands import BUILTINS

            close = difflib.get_close_matches(cmd, [*BUILTINS, "exit", "quit"], n=1, cutoff=0.7)
            self.say(f"  unknown command /{cmd} ({f'did you mean /{close[0]}?' if close else 'try /help'})")
        return True

    def run_shell(self, command: str) -> None:
        """`!command`: through the Bash tool's gate, no model call (cli/commands/shell.py)."""
        from .commands.shell import run_shell

        async def shell() -> None:
            ticker = asyncio.create_task(self._tick())  # (the dialog's arming and the spinner are redrawn)
            try:
                await run_shell(self, command)
            finally:
                ticker.cancel()
                if self.app is not None:
                    self.app.invalidate()

        self.shell = self.turn = asyncio.create_task(shell())
        self.turn.add_done_callback(self._send_held)

    def custom_command(self, line: str) -> str | None:
        """A custom command's prompt (commands.py), or None."""
        from ..commands import expand, find_commands
        from ..plugins import plugin_command_dirs
        from ..trust import advice, trusted_for

        notes: list[str] = []
        extra, plugin_skills = plugin_command_dirs(self.base_options, Path(self.cwd()).resolve(), notes)
        ex = expand(line, find_commands(self.cwd(), self.base_options.setting_sources or [],
                                        trusted=trusted_for(self.base_options, self.cwd()), warnings=notes, extra=extra,
                                        skills=True, plugin_skills=plugin_skills))
        for note in [*notes, *(i.line(advice(self.cwd())) for i in (ex.command.ignored if ex else []))]:
            self.say(f"  ⚠ {note}")
        if ex is None:
            return None
        self.say(f"  /{ex.command.name}: {ex.command.description or ex.command.path}")
        # as in -p: this turn only; the run expands the line after UserPromptSubmit
        self.client.for_next_query(allowed_tools=ex.allowed_tools, model=ex.model, command=ex)
        return line.strip()

    # --- the prompt --------------------------------------------------------------------------------

    def toolbar(self) -> Any:
        dialog = self.dialog
        if dialog is not None and self.app is not None:
            size = self.app.output.get_size()
            # the input box keeps room for the slash menu (prompt_toolkit's reserve_space_for_menu)
            box = max(self.app.current_buffer.document.line_count, self.prompt_session.reserve_space_for_menu)
            return dialog.formatted(size.columns, size.rows - box - 2)
        own = self.custom_status.text if self.custom_status is not None else ""
        if self.busy:
            return f"{self.statusline.text()}\n{own}" if own else self.statusline.text()
        mode = self.client.options.permission_mode
        shown = f" ⏵⏵ {mode} mode (shift+tab to cycle) ·" if mode not in (None, "default") else ""
        hint = f"{shown} /help for commands · Ctrl-C twice to exit · ${self.client.total_cost_usd:.4f}"
        if own:  # the user's status line first, the hint under it
            return f"{own}\n{hint}"
        return hint

    async def main(self) -> int:
        session = prompt_session(self)
        with self.terminal.session() if self.terminal is not None else contextlib.nullcontext():
            return await self._session(session)  # (raw modes all along: typeahead, cli/terminal.py)

    async def _session(self, session: Any) -> int:
        from prompt_toolkit.patch_stdout import patch_stdout

        from ..children import Ending, end_all

        # SIGTERM / SIGHUP (terminal closed): end like Ctrl-C twice, cancelling the running
        # tools first, so no process group is left behind and the transcript stays paired; what
        # has not ended within the bound is killed and the process exits (children.py).
        reading = asyncio.ensure_future(self._read_prompts(session))
        ending = Ending(lambda _: self._leave(reading), last=getattr(self.terminal, "restore", None)).install()
        warming = asyncio.ensure_future(self._warm_up())
        if self.custom_status is not None:  # the user's status line from the start, before a first prompt
            self.custom_status.refresh()
        with patch_stdout(raw=True):
            self.renderer = ReplRenderer(sys.stdout, self.log)
            model = self.base_options.model
            self.say(f"loopwright · {model if isinstance(model, str) else getattr(model, 'name', '?')} · "
                     f"{self.cwd()} · /help for commands")
            if self.note:
                self.say(f"  ● {self.note}")
            elif self.base_options.resume or self.base_options.continue_conversation:
                self.say("  ● the first prompt continues the saved session")
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            self.leaving = True  # (no run starts for a queued line now)
            if self.busy:
                self.interrupt()
                assert self.turn is not None
                await asyncio.wait([self.turn], timeout=10)
            self._unsent()
            await self.client.disconnect()
        warming.cancel()
        # A server some task still shuts down (the / menu's warm-up) is ended now: a shutdown
        # asyncio.run would cancel under it could wait forever for a server that keeps its stdout open.
        end_all()
        await asyncio.wait([warming], timeout=2)
        self.renderer.close()
        if ending.received:
            self.say(f"terminated ({signal.Signals(ending.received).name})")
            return 128 + ending.received
        sid = self.client.session_id or self.client.options.resume  # (after a rewind or /resume: the latter)
        if sid and self.base_options.persist_session:
            self.say(f"to resume this session: loopwright --resume {sid}")
        self.say("bye")
        return 0

    def _unsent(self) -> None:
        """The lines still queued when the user left (typed while a run, a command or a `!`
        command worked): named, not sent. Leaving starts no run for them (one started as the
        session exited, its tools and all), nor drops them without a word."""
        for line in [*self.client.pending, *self.held]:
            self.say(f"  ✉ not sent (you left first): {line[:80]}")
        self.held.clear()

    async def _warm_up(self) -> None:
        """Load the provider while the user types the first prompt."""
        try:
            await self.client.connect()
            await asyncio.to_thread(preimport_sdk, self.client.model)
        except Exception:  # noqa: BLE001 - the first query reports it
            pass
        from .commands.mcp import prompt_entries

        self.mcp_prompts = await prompt_entries(self)  # (for the / menu; a run lists them again)

    def _leave(self, reading: asyncio.Future[None]) -> None:
        """End the prompt loop (a signal): main() then interrupts a running turn and exits. The
        prompt may not be reading now (a command that asks, between two prompts): then the loop
        itself is cancelled, or the signal would only be noted and the process would go on."""
        if self.app is not None and self.app.is_running and not self.app.future.done():
            self.app.exit(exception=EOFError())
        else:
            reading.cancel()

    async def _read_prompts(self, session: Any) -> None:
        """Each prompt typed until the user leaves: a command, a message for the running turn, or a turn."""
        while True:
            try:
                line = await session.prompt_async("› ")
            except (EOFError, KeyboardInterrupt):
                break
            self.log.text("› " + visible(line).replace("\n", "\n  ") + "\n")  # as the prompt showed it
            text = line.strip()
            if not text:
                continue
            if text.startswith("/") and "\n" not in text:
                builtin = find(text[1:].split()[0]) if text[1:].strip() else None
                if self.busy or text.split()[0] in ("/exit", "/quit") or (builtin is not None and builtin.asks):
                    if not await self.command(text):
                        break
                else:  # as a turn: a slow command (/compact, /model) leaves the prompt live
                    self.turn = asyncio.create_task(self.command(text, idle=True))
                    self.turn.add_done_callback(self._send_held)
                continue
            if text.startswith("!") and not self.busy:  # shell mode (while a turn works: a message, as typed)
                self.run_shell(text[1:])
                continue
            if self.busy and self.client.running:  # the run takes it after its running tool calls
                self.client.send(text)
                self.say(f"  ↳ queued: {text[:80]} (delivered after the running tool calls finish)")
                continue
            if self.busy:  # a command, a `!` command, a run not started yet: the next prompt once it ends
                self.held.append(text)
                self.say(f"  ↳ queued: {text[:80]} (sent when this ends)")
                continue
            self.turn = asyncio.create_task(self.run_turn(text))


def interactive_main(args: argparse.Namespace) -> int:
    """The REPL on the options from the command line; returns the exit code."""
    try:
        options = build_options(args)
        from ..mcp.config import ask_project_approval
        from .worktree import enter, leave

        note = check_sessions(options)  # before the prompt: -r with no such session exits 2 now
        from .trust import trust_dialog

        options = trust_dialog(options, input, print)  # before anything of the project runs (trust.py)
        ask_project_approval(options, input)  # .mcp.json servers are untrusted until approved
        options, worktree = enter(options, getattr(args, "worktree", None))  # once the project is trusted
        from ..options import model_for
        from ..runconfig import build_run_config

        model_for(options)  # the model (a scripted model's file) and the settings (--settings): checked
        build_run_config(options, Path(options.cwd or ".").resolve())  # before the screen opens, as -p does
    except (UsageError, ValueError) as e:
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(Repl(options, note).main())
    except ValueError as e:  # a configuration problem found when the first run starts
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    finally:  # --worktree: removed when unchanged, else the user says
        leave(worktree, input, lambda line: print(f"loopwright: {line}", file=sys.stderr))
        # The interpreter's last collections walk the whole heap of a session (the SDKs, the
        # history): ~2 s on a busy machine between the goodbye (or SIGTERM) and the exit.
        # Frozen, they skip it; the memory goes back with the process.
        gc.freeze()
