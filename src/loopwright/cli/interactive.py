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
- Permission questions are answered at the prompt: y(es), n(o), a(lways for this tool).
- Multi-line input: end a line with `\\` or press Ctrl-J for a newline; history is kept in
  $LOOPWRIGHT_HOME/repl_history.
- Slash commands: /help, /clear, /compact [instructions], /resume [N|ID], /rewind [N|UUID], /cost, /memory,
  /init, /exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..blocks import TextBlock
from ..client import LoopwrightClient
from ..messages import AssistantMessage, Message, ResultMessage, StreamEvent
from ..options import AgentOptions
from ..permissions import Allow, Deny
from .config import EXIT_USAGE, UsageError, build_options

HELP = """Commands:
  /help            this help
  /clear           start a new conversation (a new session)
  /compact [text]  summarize the conversation so far to free context (text: what the summary should focus on)
  /resume [N|ID]   list this directory's sessions, or continue one
  /rewind [N|UUID] list the prompts of this session, or rewind files and conversation to before one
  /cost            tokens and cost of this conversation
  /memory          the memory files (AGENTS.md, CLAUDE.md, LOOPWRIGHT.md) this session reads
  /init            write a starter AGENTS.md in the working directory
  /exit            quit (also Ctrl-D, or Ctrl-C twice)
Keys: Enter sends · `\\` at the end of a line or Ctrl-J adds a newline · Esc or Ctrl-C interrupts a turn.
While the agent works, what you type is queued and delivered after the running tool calls finish."""

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

    def __init__(self, options: AgentOptions) -> None:
        self.base_options = options
        # partial messages: text is shown line by line as the model writes it
        self.client = LoopwrightClient(replace(options, can_use_tool=self.ask_permission,
                                               include_partial_messages=True))
        self.partial = ""  # streamed text not yet printed (no newline yet)
        self.streamed = False  # the current model call's text was shown while streaming
        self.turn: asyncio.Task[None] | None = None
        self.last_ctrl_c = 0.0
        self.started = time.monotonic()
        self.status = ""
        self.permission: asyncio.Future[str] | None = None
        self.always: set[str] = set()
        self.renderer: Any = None
        self.app: Any = None

    # --- state -----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.turn is not None and not self.turn.done()

    def say(self, text: str) -> None:
        print(text, flush=True)

    # --- permission questions ------------------------------------------------------------------

    async def ask_permission(self, name: str, tool_input: dict[str, Any]) -> Allow | Deny:
        # "always" remembers the tool, except for Bash where it remembers this exact command:
        # approving one command must not approve every later one.
        key = f"Bash({tool_input.get('command', '')})" if name == "Bash" else name
        if key in self.always:
            return Allow()
        # In full: a shortened command could hide what is being approved.
        from .render import describe_call

        loop = asyncio.get_running_loop()
        self.permission = loop.create_future()
        always = "always this command" if name == "Bash" else f"always {name}"
        self.say(f"  ? allow {name}({describe_call(name, tool_input)})?  y = yes · n = no · a = {always}")
        try:
            answer = (await self.permission).strip().lower()
        finally:
            self.permission = None
        if answer.startswith("a"):
            self.always.add(key)
            return Allow()
        if answer.startswith("y"):
            return Allow()
        return Deny(f"The user refused {name}. Ask them how to proceed.")

    # --- a turn -------------------------------------------------------------------------------

    async def run_turn(self, prompt: str) -> None:
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
            if self.app is not None:
                self.app.invalidate()

    def show(self, msg: Message) -> None:
        """Render one message; streamed text deltas are printed as whole lines as they come."""
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
                    self.say(f"  {line}")
            return
        if self.partial:
            self.say(f"  {self.partial}")
            self.partial = ""
        if isinstance(msg, AssistantMessage):
            if not self.streamed:  # the whole text (the trace renderer would shorten it)
                for b in msg.content:
                    if isinstance(b, TextBlock) and b.text.strip():
                        self.say("\n".join(f"  {ln}" for ln in b.text.strip().splitlines()))
            msg = replace(msg, content=[b for b in msg.content if not isinstance(b, TextBlock)])
        if isinstance(msg, (AssistantMessage, ResultMessage)):
            self.streamed = False
        self.renderer.show(msg)

    def interrupt(self) -> None:
        if self.busy:
            self.say("  ⏹ interrupting…")
            if self.permission is not None and not self.permission.done():
                self.permission.set_result("n")
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
            self.rewind(arg)
        elif cmd == "memory":
            self.show_memory()
        elif cmd == "init":
            self.init_agents_md()
        elif (custom := self.custom_command(line)) is not None:
            await self.run_turn(custom)
        else:
            self.say(f"  unknown command /{cmd} (try /help)")
        return True

    def custom_command(self, line: str) -> str | None:
        """A custom command's prompt (commands.py), or None."""
        from ..commands import expand, find_commands

        ex = expand(line, find_commands(self.cwd(), self.base_options.setting_sources or []))
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
        mem = load_memory(self.cwd(), o.setting_sources)
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
        from ..sessions import list_sessions

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
        sid = infos[int(arg) - 1].session_id if arg.isdigit() and 0 < int(arg) <= len(infos) else arg
        from ..sessions import JsonlSessionStore

        store = JsonlSessionStore(self.base_options.sessions_dir)
        path = store.find(sid)
        if path is None:
            self.say(f"  no session {sid!r}")
            return
        loaded = store.load(path.stem)
        self.client.resume(path.stem)
        self.say(f"  ● resuming {path.stem[:8]}: {len(loaded.history)} messages; the next prompt continues it")

    def rewind(self, arg: str) -> None:
        from ..checkpoints import rewind, rewind_points

        sid = self.client.session_id
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
        report = rewind(sid, point.uuid, sessions_dir=self.base_options.sessions_dir)
        self.say("\n".join("  " + ln for ln in report.text().splitlines()))
        self.client.resume(sid)  # the next prompt continues from the cut conversation

    # --- the prompt --------------------------------------------------------------------------------

    def toolbar(self) -> str:
        if self.permission is not None:
            return " permission needed: type y, n or a and press Enter"
        if self.busy:
            frame = FRAMES[int(time.monotonic() * 10) % len(FRAMES)]
            return f" {frame} working… Esc to interrupt · type to queue a message for the agent"
        return f" /help for commands · Ctrl-C twice to exit · ${self.client.total_cost_usd:.4f}"

    async def main(self) -> int:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.patch_stdout import patch_stdout

        from ..sessions import loopwright_home
        from .render import TraceRenderer

        kb = KeyBindings()

        @kb.add("escape", eager=True)
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
            if not event.app.current_buffer.text:
                event.app.exit(exception=EOFError())

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

        try:
            home = loopwright_home()
            home.mkdir(parents=True, exist_ok=True)
            history: Any = FileHistory(str(home / "repl_history"))
        except OSError:
            history = InMemoryHistory()
        session: PromptSession[str] = PromptSession(
            history=history, key_bindings=kb, multiline=True, bottom_toolbar=self.toolbar,
            refresh_interval=0.1, prompt_continuation="  ")
        self.app = session.app

        async def warm_up() -> None:  # load the provider while the user types the first prompt
            try:
                await self.client.connect()
                await asyncio.to_thread(preimport_sdk, self.client.model)
            except Exception:  # noqa: BLE001 - the first query reports it
                pass

        # SIGTERM / SIGHUP (terminal closed): end like Ctrl-C twice, cancelling the running
        # tools first, so no process group is left behind and the transcript stays paired.
        terminated: list[int] = []

        def on_signal(signum: int) -> None:
            terminated.append(signum)  # leaving the prompt loop interrupts a running turn
            if self.app is not None and self.app.is_running:
                self.app.exit(exception=EOFError())

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, on_signal, signum)

        warming = asyncio.ensure_future(warm_up())
        with patch_stdout(raw=True):
            self.renderer = TraceRenderer(sys.stdout, spinner=False)
            model = self.base_options.model
            self.say(f"loopwright · {model if isinstance(model, str) else getattr(model, 'name', '?')} · "
                     f"{self.cwd()} · /help for commands")
            if self.base_options.resume or self.base_options.continue_conversation:
                self.say("  ● the first prompt continues the saved session")
            while True:
                try:
                    line = await session.prompt_async("› ")
                except (EOFError, KeyboardInterrupt):
                    break
                text = line.strip()
                if not text:
                    continue
                if self.permission is not None and not self.permission.done():
                    self.permission.set_result(text)
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
        self.say("bye")
        return 0


def interactive_main(args: argparse.Namespace) -> int:
    """The REPL on the options from the command line; returns the exit code."""
    try:
        options = build_options(args)
        from ..mcp.config import ask_project_approval

        ask_project_approval(options, input)  # .mcp.json servers are untrusted until approved
    except (UsageError, ValueError) as e:
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(Repl(options).main())
    except ValueError as e:  # a configuration problem found when the first run starts
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
