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
  tool turn follows, it is sent as the next prompt.
- Permission questions are a modal dialog under the input box (cli/dialog.py): the whole diff
  or command, then 1 Yes / 2 Yes and don't ask again for <rule> / 3 No and tell the model.
  The model's questions (AskUserQuestion) and its plan (ExitPlanMode) are dialogs there too
  (cli/questions.py), under the same consent rules.
  What was typed before it appeared stays in the input box.
- Esc-prefixed keys (Alt-b, Alt-f, Alt-Backspace) edit the line; Esc alone interrupts after
  a short wait (ESC_WAIT) that tells the two apart.
- Multi-line input: end a line with `\\` or press Ctrl-J for a newline; history is kept in
  $LOOPWRIGHT_HOME/repl_history.
- Slash commands: /help, /clear, /compact [instructions], /resume [N|ID], /rewind [N|UUID], /expand [N],
  /cost, /memory, /init, /exit; typing `/` opens a menu of them with the custom commands and skills
  (cli/slash.py).
- Tool output: a few lines under each call, Ctrl-O or /expand N redraws it in full in place
  (cli/toolview.py). While a turn works, the status line shows time, what runs, tokens, cost and
  the window used (cli/statusline.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
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
from .config import EXIT_USAGE, UsageError, build_options, check_sessions
from .dialog import PermissionAsker
from .questions import UserAsker
from .render import visible
from .slash import pick_session, replay, skill_prompt
from .statusline import CustomStatus, StatusLine
from .toolview import Log, ReplRenderer

HELP = """Commands:
  /help            this help
  /clear           start a new conversation (a new session)
  /compact [text]  summarize the conversation so far to free context (text: what the summary should focus on)
  /resume [N|ID]   list this directory's sessions, or continue one
  /rewind [N|UUID] list the prompts of this session, or rewind files and conversation to before one
  /expand [N]      show tool result N in full, in place (no N: all of them; Ctrl-O too)
  /cost            tokens and cost of this conversation
  /memory          the memory files (AGENTS.md, CLAUDE.md, LOOPWRIGHT.md) this session reads
  /init            write a starter AGENTS.md in the working directory
  /exit            quit (also Ctrl-D, or Ctrl-C twice)
Keys: Enter sends · `\\` at the end of a line or Ctrl-J adds a newline · Esc or Ctrl-C interrupts a turn ·
  Ctrl-O expands or collapses the tool output · Tab completes a /command.
While the agent works, what you type is queued and delivered after the running tool calls finish."""

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
# A terminal sends an Alt key as ESC and the key in one write; a lone ESC is the Esc key. How
# long to wait for the rest of an escape sequence, then for a second key after ESC.
ESC_WAIT = (0.05, 0.3)


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
        self.base_options = options
        self.note = note  # said under the header (-c found nothing to continue)
        self.log = Log()  # what was printed, for redraws (Ctrl-O)
        self.statusline = StatusLine(options.context_window)
        self.custom_status = CustomStatus.from_options(options)  # the user's statusLine command, if any
        self.prompt_session: Any = None
        self.exit_asked = 0.0
        # AskUserQuestion and ExitPlanMode ask through dialogs like the permission one (cli/questions.py)
        self.questions = UserAsker(lambda s: self.say(s), self._plan_mode_done)
        # partial messages: text is shown line by line as the model writes it
        self.client = LoopwrightClient(replace(options, can_use_tool=self.ask_permission,
                                               include_partial_messages=True, ask_user=self.questions.ask,
                                               review_plan=self.questions.review_plan))
        self.partial = ""  # streamed text not yet printed (no newline yet)
        self.streamed = False  # the current model call's text was shown while streaming
        self.turn: asyncio.Task[None] | None = None
        self.last_ctrl_c = 0.0
        self.started = time.monotonic()
        self.status = ""
        self.asker = PermissionAsker(options, lambda s: self.say(s), self.client)
        self.renderer: Any = None
        self.app: Any = None

    # --- state -----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.turn is not None and not self.turn.done()

    def say(self, text: str) -> None:
        self.log.text(visible(text) + "\n")  # a redraw must not replay control characters either
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
        """The open dialog: a permission question, else a question of the model's or its plan."""
        return self.asker.dialog or self.questions.dialog

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
            await self.client.query(prompt)
            async for msg in self.client.receive_response():
                self.show(msg)
            while self.client.pending:  # sent while no tool ran: it becomes the next prompt
                self.say(f"  ✉ sending queued message: {self.client.pending[0][:80]}")
                await self.client.query("")
                async for msg in self.client.receive_response():
                    self.show(msg)
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
        if self.busy:
            self.say("  ⏹ interrupting…")
            self.asker.cancel()
            self.questions.cancel()
            self.client.interrupt()

    # --- slash commands -------------------------------------------------------------------------

    def cwd(self) -> str:
        return str(self.base_options.cwd or ".")

    async def command(self, line: str) -> bool:
        """Run a slash command. Returns False to exit."""
        cmd, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        if cmd in ("exit", "quit"):
            return False
        if self.busy and cmd not in ("help", "cost"):
            self.say("  (a turn is running: press Esc to interrupt it first)")
            return True
        if cmd == "help":
            self.say(HELP)
            from ..commands import find_commands

            for c in find_commands(self.cwd(), self.base_options.setting_sources or []).values():
                self.say(f"  /{c.name:<15} {c.description or c.path}")
        elif cmd == "clear":
            self.client.clear()
            self.say("  ● new conversation")
        elif cmd == "cost":
            rs = self.client.results
            inp = sum(r.usage.total_input_tokens for r in rs)
            out = sum(r.usage.output_tokens for r in rs)
            calls = sum(r.model_calls for r in rs)
            self.say(f"  {len(rs)} prompts · {calls} model calls · {inp} input / {out} output tokens · "
                     f"${self.client.total_cost_usd:.4f} · session {self.client.session_id or '(none yet)'}")
        elif cmd == "compact":
            await self.compact(arg)
        elif cmd == "resume":
            self.resume(arg)
        elif cmd == "rewind":
            await self.rewind(arg)
        elif cmd == "expand":
            self.expand(arg)
        elif cmd == "memory":
            self.show_memory()
        elif cmd == "init":
            self.init_agents_md()
        elif (custom := self.custom_command(line)) is not None:
            await self.run_turn(custom)
        elif (skill := skill_prompt(line, self.cwd(), self.base_options.setting_sources or [])) is not None:
            self.turn = asyncio.create_task(self.run_turn(skill))
        else:
            self.say(f"  unknown command /{cmd} (try /help)")
        return True

    def custom_command(self, line: str) -> str | None:
        """A custom command's prompt (commands.py), or None."""
        from ..commands import expand, find_commands
        from ..plugins import run_plugins
        from ..trust import advice, trusted_for

        notes: list[str] = []
        extra = [(d, p.name) for p in run_plugins(self.base_options, Path(self.cwd()).resolve(), notes)
                 for d in p.commands_dirs]  # a plugin's /plugin:command
        ex = expand(line, find_commands(self.cwd(), self.base_options.setting_sources or [],
                                        trusted=trusted_for(self.base_options, self.cwd()), warnings=notes, extra=extra))
        for note in [*notes, *(i.line(advice(self.cwd())) for i in (ex.command.ignored if ex else []))]:
            self.say(f"  ⚠ {note}")
        if ex is None:
            return None
        self.say(f"  /{ex.command.name}: {ex.command.description or ex.command.path}")
        self.client.for_next_query(allowed_tools=ex.allowed_tools, model=ex.model)  # as in -p: this turn only
        return ex.prompt

    def show_memory(self) -> None:
        from ..memory import load_memory

        o = self.base_options
        if not o.memory or not o.setting_sources:
            self.say("  project memory is off (--bare)")
            return
        from ..trust import trusted_for

        mem = load_memory(self.cwd(), o.setting_sources, trusted=trusted_for(o, self.cwd()))
        for f in mem.files:
            self.say(f"  {f.scope:8} {f.path} ({len(f.text):,} chars)")
        for w in mem.warnings:
            self.say(f"  ⚠ {w}")
        if not mem.files:
            self.say("  no memory files (/init writes a starter AGENTS.md)")

    def init_agents_md(self) -> None:
        from ..memory import INIT_TEMPLATE

        path = Path(self.cwd()) / "AGENTS.md"
        try:
            with open(path, "x", encoding="utf-8") as f:  # never over an existing file
                f.write(INIT_TEMPLATE)
        except FileExistsError:
            self.say(f"  {path} already exists; not changed")
            return
        except OSError as e:
            self.say(f"  cannot write {path}: {e}")
            return
        self.say(f"  wrote {path}: fill in the TODOs (it is read at the start of each new conversation)")

    async def compact(self, instructions: str) -> None:
        from ..context import CompactError

        self.say("  ✂ compacting…")
        try:
            r = await self.client.compact(instructions or None)
        except CompactError as e:
            self.say(f"  ✗ not compacted: {e}")
            return
        self.say(f"  ✂ compacted: {r.summarized_messages} messages summarized, {r.kept_messages} kept · "
                 f"~{r.pre_tokens} → ~{r.post_tokens} tokens · ${r.cost_usd:.4f}")

    def resume(self, arg: str) -> None:
        from ..sessions import InvalidSessionId, JsonlSessionStore, check_session_id, list_sessions

        infos = list_sessions(self.cwd(), self.base_options.sessions_dir)
        if not arg:
            if not infos:
                self.say("  no saved sessions in this directory")
            for i, s in enumerate(infos[:15], 1):
                self.say(f"  {i:2}. {s.session_id[:8]}  {s.modified}  {s.prompts} prompts  ${s.cost_usd:.4f}  "
                         f"{s.last_prompt[:50]!r}")
            if infos:
                self.say("  /resume N (or an id) to continue one")
            return
        if not arg.isdigit():
            try:  # an id that is a path: nothing is looked up
                check_session_id(arg)
            except InvalidSessionId as e:
                self.say(f"  {e}")
                return
        store = JsonlSessionStore(self.base_options.sessions_dir)
        sid, why = pick_session(arg, [s.session_id for s in infos[:15]] if arg.isdigit() else
                                [s.session_id for s in infos], lambda x: (p := store.find(x)) is not None and p.stem == x)
        if sid is None:
            self.say(f"  {why}")
            return
        loaded = store.load(sid)
        self.client.resume(sid)
        self.say(f"  ● resuming {sid[:8]}: {len(loaded.history)} messages; the next prompt continues it")
        for line in replay(loaded.history, Path(self.cwd())):
            self.say(line)
        self.say("  ● (end of the resumed conversation)")

    def expand(self, arg: str) -> None:
        if arg and not arg.isdigit():
            self.say("  /expand N: N is the number after /expand in a result's '… +K lines' line")
            return
        error = self.renderer.toggle(int(arg) if arg else None)
        if error:
            self.say(f"  {error}")

    async def rewind(self, arg: str) -> None:
        from ..sessions.rewind import conflict_text, rewind, rewind_conflicts, rewind_points

        sid = self.client.session_id or self.client.options.resume  # (a rewind or /resume sets the latter)
        if sid is None or not self.base_options.persist_session:
            self.say("  nothing to rewind yet (or session persistence is off)")
            return
        points = rewind_points(sid, self.base_options.sessions_dir)
        if not arg:
            for i, pt in enumerate(points, 1):
                files = f"  ({len(pt.files)} files)" if pt.files else ""
                self.say(f"  {i:2}. {pt.uuid[:8]}  {pt.prompt[:60]!r}{files}")
            self.say("  /rewind N (or a uuid) restores files and conversation to before that prompt")
            return
        match = [p for p in points if p.uuid.startswith(arg)]
        point = points[int(arg) - 1] if arg.isdigit() and 0 < int(arg) <= len(points) else (
            match[0] if len(match) == 1 else None)
        if point is None:
            self.say(f"  no prompt {arg!r} (see /rewind)")
            return
        conflicts = rewind_conflicts(sid, point.uuid, sessions_dir=self.base_options.sessions_dir)
        if conflicts:  # changed since the agent's edit: show what would be lost, and ask (one prompt: in order)
            warning = "".join(f"  {visible(ln)}\n" for ln in conflict_text(conflicts).splitlines())
            if (await self.ask_line(f"{warning}  rewind anyway? [y/N] ")).strip().lower() not in ("y", "yes"):
                self.say("  not rewound")
                return
        report = rewind(sid, point.uuid, sessions_dir=self.base_options.sessions_dir)
        self.say("\n".join("  " + ln for ln in report.text().splitlines()))
        self.client.resume(sid)  # the next prompt continues from the cut conversation

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
        hint = f" /help for commands · Ctrl-C twice to exit · ${self.client.total_cost_usd:.4f}"
        if own:  # the user's status line first, the hint under it
            return f"{own}\n{hint}"
        return f" /help for commands · Ctrl-C twice to exit · ${self.client.total_cost_usd:.4f}"

    async def main(self) -> int:
        from prompt_toolkit.patch_stdout import patch_stdout

        session = self._prompt_session()
        # SIGTERM / SIGHUP (terminal closed): end like Ctrl-C twice, cancelling the running
        # tools first, so no process group is left behind and the transcript stays paired.
        terminated: list[int] = []
        self._end_on_signals(terminated)
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
            await self._read_prompts(session)
            if self.busy:
                self.interrupt()
                assert self.turn is not None
                await asyncio.wait([self.turn], timeout=10)
            await self.client.disconnect()
        warming.cancel()
        self.renderer.close()
        if terminated:
            self.say(f"terminated ({signal.Signals(terminated[0]).name})")
            return 128 + terminated[0]
        sid = self.client.session_id or self.client.options.resume  # (after a rewind or /resume: the latter)
        if sid and self.base_options.persist_session:
            self.say(f"to resume this session: loopwright --resume {sid}")
        self.say("bye")
        return 0

    def _key_bindings(self) -> Any:
        from prompt_toolkit.key_binding import KeyBindings

        kb = KeyBindings()

        @kb.add("escape")  # not eager: ESC b is Alt-b (ESC_WAIT)
        def _esc(event: Any) -> None:
            self.interrupt()

        @kb.add("c-c")
        def _ctrl_c(event: Any) -> None:
            buf = event.app.current_buffer
            if self.busy:
                self.interrupt()
            elif buf.text:
                buf.reset()
            elif time.monotonic() - self.last_ctrl_c < 2.0:
                event.app.exit(exception=EOFError())
            else:
                self.last_ctrl_c = time.monotonic()
                self.say("  (press Ctrl-C again to exit)")

        @kb.add("c-d")
        def _ctrl_d(event: Any) -> None:
            if event.app.current_buffer.text:
                return
            if self.busy and time.monotonic() - self.exit_asked > 3.0:  # work would be cut: ask first
                self.exit_asked = time.monotonic()
                self.say("  a turn is running: press Ctrl-D again to interrupt it and exit (Esc only interrupts)")
                return
            event.app.exit(exception=EOFError())

        @kb.add("c-o")
        def _expand(event: Any) -> None:
            self.expand("")

        @kb.add("enter")
        def _enter(event: Any) -> None:
            buf = event.current_buffer
            if buf.text.endswith("\\"):
                buf.delete_before_cursor(1)
                buf.insert_text("\n")
            else:
                buf.validate_and_handle()

        @kb.add("c-j")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        return kb

    def _prompt_session(self) -> Any:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import merge_completers
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import merge_key_bindings

        from ..home import open_private, private_dir
        from ..sessions import loopwright_home
        from .dialog import dialog_bindings
        from .mention_complete import mention_completer
        from .slash import menu_entries, slash_completer

        try:
            home = private_dir(loopwright_home())
            os.close(open_private(home / "repl_history"))  # the prompts typed: 0600 before prompt_toolkit appends
            history: Any = FileHistory(str(home / "repl_history"))
        except OSError:
            history = InMemoryHistory()
        session: PromptSession[str] = PromptSession(
            history=history, key_bindings=merge_key_bindings([self._key_bindings(), dialog_bindings(lambda: self.dialog)]),
            multiline=True, bottom_toolbar=self.toolbar,
            prompt_continuation="  ", complete_while_typing=True,
            completer=merge_completers([
                slash_completer(lambda: menu_entries(self.cwd(), self.base_options.setting_sources or [])),
                mention_completer(self.cwd)]))  # `@path` (cli/mention_complete.py)
        self.app = session.app
        self.app.ttimeoutlen, self.app.timeoutlen = ESC_WAIT
        self.prompt_session = session
        return session

    async def _warm_up(self) -> None:
        """Load the provider while the user types the first prompt."""
        try:
            await self.client.connect()
            await asyncio.to_thread(preimport_sdk, self.client.model)
        except Exception:  # noqa: BLE001 - the first query reports it
            pass

    def _end_on_signals(self, terminated: list[int]) -> None:
        def on_signal(signum: int) -> None:
            terminated.append(signum)  # leaving the prompt loop interrupts a running turn
            if self.app is not None and self.app.is_running:
                self.app.exit(exception=EOFError())

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, on_signal, signum)

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
                if not await self.command(text):
                    break
                continue
            if self.busy:
                self.client.send(text)
                self.say(f"  ↳ queued: {text[:80]} (delivered after the running tool calls finish)")
                continue
            self.turn = asyncio.create_task(self.run_turn(text))


def interactive_main(args: argparse.Namespace) -> int:
    """The REPL on the options from the command line; returns the exit code."""
    try:
        options = build_options(args)
        from ..mcp.config import ask_project_approval

        note = check_sessions(options)  # before the prompt: -r with no such session exits 2 now
        from .trust import trust_dialog

        options = trust_dialog(options, input, print)  # before anything of the project runs (trust.py)
        ask_project_approval(options, input)  # .mcp.json servers are untrusted until approved
    except (UsageError, ValueError) as e:
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(Repl(options, note).main())
    except ValueError as e:  # a configuration problem found when the first run starts
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
