"""Room: acp. Owns the ACP Agent (LoopwrightAcpAgent) and `serve`; may import every room below the
front ends, cli.config (the options a command line builds) and the other acp modules.

One editor connection; each ACP session is a loopwright session (its JSONL transcript, the one
`loopwright -r` resumes). A prompt is one run of the loop (`query`) continuing that session:
its messages become session/update notifications as they come (updates.py), the gate asks
through session/request_permission (permission.py), session/cancel is RunControl.interrupt().
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import logging
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import acp
from acp import schema as s
from acp.helpers import update_available_commands, update_current_mode

from .. import __version__

if TYPE_CHECKING:  # imported by the first session: the editor waits for initialize's answer
    from ..blocks import Prompt
    from ..commands import Expanded
    from ..options import AgentOptions
    from .permission import AcpAsker
    from .updates import Updates

log = logging.getLogger(__name__)
MODES: dict[str, tuple[str, str]] = {
    "default": ("Default", "Asks before edits and commands that are not pre-approved"),
    "acceptEdits": ("Accept Edits", "Edits inside the working directories run without asking"),
    "plan": ("Plan", "Read-only: looks and plans, changes nothing"),
    "dontAsk": ("Don't Ask", "Runs what is pre-approved, refuses the rest without asking"),
    "bypassPermissions": ("Bypass Permissions", "Runs every tool call without asking"),
    "auto": ("Auto", "A classifier call judges what the rules would ask; risky calls are still asked"),
}
PROMPT_BUSY = "a prompt is already running in this session: cancel it first (session/cancel)"


class AcpSession:
    """One ACP session: its options (what "always" rules change), mode, model and the running prompt."""

    def __init__(self, sid: str, cwd: Path, options: AgentOptions, mode: str, model: str, *,
                 resumable: bool, terminals: dict[str, str]) -> None:
        self.id = sid
        self.cwd = cwd
        self.options = options
        self.mode = mode
        self.model = model
        self.resumable = resumable  # its transcript exists: the next prompt resumes it
        self.terminals = terminals
        self.control: Any = None  # loop.RunControl of the running prompt
        self.updates: Updates | None = None
        self.notes: list[str] = []  # what "always" did, for the editor
        self.asker: AcpAsker | None = None
        self.pending: list[str] = []  # PostModelSwitch hooks' context, for the next prompt
        self.last_call: tuple[int, float] | None = None  # the last response's tokens, when (model switch hooks)
        from ..loop.watch import Watch

        self.watch = Watch()  # its settings and FileChanged's files, across its prompts (loop/watch.py)


class LoopwrightAcpAgent:
    """The ACP Agent side (acp.interfaces.Agent): what an editor calls."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.conn: Any = None
        self.caps: s.ClientCapabilities | None = None
        self.sessions: dict[str, AcpSession] = {}
        self.gone = False  # the editor closed the connection
        self._background: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # --- the connection ----------------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: s.ClientCapabilities | None = None,
                         client_info: s.Implementation | None = None, **_: Any) -> s.InitializeResponse:
        self.caps = client_capabilities
        # One protocol version exists (1); a client asking for another gets the one we speak.
        return s.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=s.AgentCapabilities(
                load_session=True,
                prompt_capabilities=s.PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=s.McpCapabilities(http=True, sse=True),
                session_capabilities=s.SessionCapabilities(list=s.SessionListCapabilities()),
            ),
            agent_info=s.Implementation(name="loopwright", title="loopwright", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **_: Any) -> s.AuthenticateResponse | None:
        return s.AuthenticateResponse()  # the model's key comes from the environment, as in the CLI

    # --- sessions ---------------------------------------------------------------------------

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None,
                          additional_directories: list[str] | None = None, **_: Any) -> s.NewSessionResponse:
        from ..sessions import new_session_id

        session = await self._open(new_session_id(), cwd, mcp_servers, additional_directories, resumable=False)
        self._announce(session)
        return s.NewSessionResponse(session_id=session.id, modes=self._modes(session),
                                    config_options=self._config(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **_: Any) -> s.LoadSessionResponse:
        from ..sessions import InvalidSessionId, SessionNotFound, check_session_id, store_for
        from .updates import Updates

        try:  # an id that is a path: refused before a session is opened or a file read
            check_session_id(session_id)
        except InvalidSessionId as e:
            raise acp.RequestError.invalid_params({"sessionId": session_id, "message": str(e)}) from None
        if session_id in self.sessions and self.sessions[session_id].control is not None:
            raise acp.RequestError.invalid_request({"message": PROMPT_BUSY})
        previous = self.sessions.get(session_id)  # a live session a failed load must not take away
        session = await self._open(session_id, cwd, mcp_servers, additional_directories, resumable=True)
        if previous is not None and previous.control is not None:
            # a prompt started while the options were built (off the loop): it keeps its session,
            # or the next prompt would run beside it and a cancel would reach the idle new one
            self.sessions[session_id] = previous
            raise acp.RequestError.invalid_request({"message": PROMPT_BUSY})
        try:
            loaded = await asyncio.to_thread(store_for(session.options).load, session_id, session.cwd)
        except (SessionNotFound, OSError, ValueError) as e:
            if previous is not None:
                self.sessions[session_id] = previous
            else:
                self.sessions.pop(session_id, None)
            raise acp.RequestError.invalid_params({"sessionId": session_id, "message": str(e)}) from None
        await Updates(self._sender(session), session.cwd).replay(loaded.history)
        self._announce(session)
        return s.LoadSessionResponse(modes=self._modes(session), config_options=self._config(session))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any) -> s.ListSessionsResponse:
        from ..sessions import JsonlSessionStore

        # the default store (LOOPWRIGHT_HOME), the CLI's: `loopwright sessions list` shows the same
        infos = await asyncio.to_thread(JsonlSessionStore().list, Path(cwd).resolve() if cwd else None)
        return s.ListSessionsResponse(sessions=[
            s.SessionInfo(session_id=i.session_id, cwd=i.cwd, title=(i.first_prompt or "")[:80] or None,
                          updated_at=i.modified or None) for i in infos])

    async def _open(self, sid: str, cwd: str, mcp_servers: list[Any] | None, add_dirs: list[str] | None, *,
                    resumable: bool) -> AcpSession:
        from ..cli.config import UsageError, build_options
        from ..runconfig import build_run_config, has_hooks
        from .client_tools import client_tools
        from .permission import AcpAsker

        root = Path(cwd)
        if not root.is_absolute() or not root.is_dir():
            raise acp.RequestError.invalid_params({"cwd": f"{cwd!r} is not an absolute path of a directory"})
        args = copy.copy(self.args)
        args.cwd = str(root)
        args.add_dirs = [*self.args.add_dirs, *(add_dirs or [])]
        try:
            options = await asyncio.to_thread(build_options, args)
        except UsageError as e:
            raise acp.RequestError.invalid_params({"message": str(e)}) from None
        terminals: dict[str, str] = {}
        mcp = {**_mcp_dict(options.mcp_servers), **client_mcp(mcp_servers or [])}
        options = replace(options, tools=client_tools(options.tools, self.conn, sid, self.caps, terminals),
                          # text streams as chunks; whole messages when MessageDisplay hooks rewrite them
                          include_partial_messages=not has_hooks(options, "MessageDisplay"),
                          persist_session=True, mcp_servers=mcp or None,
                          resume=None, continue_conversation=False, fork_session=False, session_id=None)
        # (--permission-mode is in the options; bypassPermissions is dropped if the settings disable it)
        mode = build_run_config(options, root.resolve()).permissions.mode or "default"
        model = str(options.model)  # build_options always names one
        session = AcpSession(sid, root.resolve(), options, mode, model, resumable=resumable, terminals=terminals)
        session.asker = AcpAsker(session, self.conn, sid, lambda: session.updates, session.notes.append)
        session.asker.caps = self.caps  # (whether the editor answers elicitation/create itself)
        self._trust(session)
        self.sessions[sid] = session
        return session

    def _trust(self, session: AcpSession) -> None:
        """Workspace trust (trust/): an untrusted workspace is narrowed by the run itself, as in
        the CLI; here the editor is told what of the project is left out and how to trust it
        (a thought message with the first prompt's updates). Reads files only; runs nothing."""
        from ..trust.review import review

        r = review(session.options)
        if not r.trusted and r.ignored:
            session.notes.append(f"The workspace {r.workspace} is not trusted: what of the project could run "
                                 "code, grant permissions or send data is ignored:\n" + "\n".join(r.lines()))

    def _announce(self, session: AcpSession) -> None:
        """available_commands_update: custom commands and skills, after the session's answer."""

        async def later() -> None:
            await asyncio.sleep(0)
            try:
                cmds = await asyncio.to_thread(commands_of, session)
            except Exception as e:  # noqa: BLE001 - a broken command file must not end the session
                log.warning("cannot list the commands of %s: %s", session.cwd, e)
                return
            await self._sender(session)(update_available_commands(cmds))

        task = asyncio.get_running_loop().create_task(later())
        self._background.add(task)  # held until done: the loop keeps only weak references
        task.add_done_callback(self._background.discard)

    def _modes(self, session: AcpSession) -> s.SessionModeState:
        from ..gate import PERMISSION_MODES

        return s.SessionModeState(current_mode_id=session.mode, available_modes=[
            s.SessionMode(id=m, name=MODES[m][0], description=MODES[m][1]) for m in PERMISSION_MODES if m in MODES])

    def _config(self, session: AcpSession) -> list[Any]:
        from ..gate import PERMISSION_MODES

        models = [session.model, *model_choices(session.model)]
        return [
            s.SessionConfigOptionSelect(
                type="select", id="mode", name="Mode", category="mode", current_value=session.mode,
                options=[s.SessionConfigSelectOption(value=m, name=MODES[m][0], description=MODES[m][1])
                         for m in PERMISSION_MODES if m in MODES]),
            s.SessionConfigOptionSelect(
                type="select", id="model", name="Model", category="model", current_value=session.model,
                options=[s.SessionConfigSelectOption(value=m, name=m) for m in dict.fromkeys(models)]),
        ]

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.invalid_params({"sessionId": f"unknown session {session_id!r}: "
                                                   "create it with session/new or session/load"})
        return session

    async def set_session_mode(self, mode_id: str, session_id: str, **_: Any) -> s.SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in MODES:
            raise acp.RequestError.invalid_params({"modeId": f"unknown mode {mode_id!r}: one of {', '.join(MODES)}"})
        from ..runconfig import refuse_bypass

        try:
            refuse_bypass(session.options, mode_id)  # (permissions.disableBypassPermissionsMode)
        except ValueError as e:
            raise acp.RequestError.invalid_params({"modeId": str(e)}) from None
        session.mode = mode_id  # the next prompt's gate runs in it
        await self._sender(session)(update_current_mode(mode_id))
        return s.SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **_: Any) -> s.SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id == "mode" and isinstance(value, str):
            await self.set_session_mode(value, session_id)
        elif config_id == "model" and isinstance(value, str) and value:
            from ..models import check_model_spec

            try:
                check_model_spec(value, "model")
                await self._switch_model(session, value)
            except (TypeError, ValueError) as e:
                raise acp.RequestError.invalid_params({"value": str(e)}) from None
            except PermissionError as e:  # a PreModelSwitch hook refused it
                raise acp.RequestError.invalid_request({"message": str(e)}) from None
        else:
            raise acp.RequestError.invalid_params({"configId": f"unknown option {config_id!r} or value {value!r}"})
        return s.SetSessionConfigOptionResponse(config_options=self._config(session))

    async def _switch_model(self, session: AcpSession, value: str) -> None:
        """The editor picked a model: the settings' PreModelSwitch hooks may refuse it and
        PostModelSwitch hooks' context goes with the next prompt (`source` "sdk", as Claude Code's
        headless set_model, which its ACP adapters call)."""
        from ..client import switch_model
        from ..options import model_for

        options = replace(session.options, permission_mode=session.mode)  # type: ignore[arg-type]
        new = await asyncio.to_thread(model_for, replace(options, model=value))

        def apply() -> None:
            session.model = value

        context = await switch_model(options, session.id, session.model, new.name, value, "sdk", session.last_call,
                                     apply)
        if context:
            session.pending.append(context)

    # --- prompts -------------------------------------------------------------------------------

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> s.PromptResponse:
        from ..assemble import query
        from ..loop import RunControl
        from ..messages import ResultMessage
        from .updates import Updates, limit_note, stop_reason

        session = self._session(session_id)
        if session.control is not None:
            raise acp.RequestError.invalid_request({"message": PROMPT_BUSY})
        text = prompt_text(prompt)
        images = prompt_images(prompt)
        if not text.strip() and not images:
            raise acp.RequestError.invalid_params({"prompt": "the prompt has no text"})
        control = session.control = RunControl()  # busy from here: a second prompt is refused
        result: ResultMessage | None = None
        try:
            text, extra_rules, model, command = await asyncio.to_thread(expand_command, text, session)
            assert session.asker is not None
            session.asker.cancelled = False
            options = replace(session.options, permission_mode=session.mode,  # type: ignore[arg-type]
                              model=model or session.model,
                              allowed_tools=[*session.options.allowed_tools, *extra_rules], slash_command=command,
                              can_use_tool=session.asker.ask, review_plan=session.asker.review_plan,
                              ask_user=session.asker.ask_user, elicit=session.asker.elicit,
                              session_id=None if session.resumable else session.id,
                              resume=session.id if session.resumable else None)
            updates = session.updates = Updates(self._sender(session, control), session.cwd,
                                                terminals=session.terminals)
            if session.pending:  # a PostModelSwitch hook's context goes first
                text, session.pending = "\n\n".join([*session.pending, text]), []
            run_prompt: Prompt = [{"type": "text", "text": text}, *images] if images else text
            async for msg in query(run_prompt, options, control=control, watch=session.watch):
                await updates.message(msg)
                await self._notes(session)
                if isinstance(msg, ResultMessage):
                    result = msg
                    if msg.call_usage:
                        last = msg.call_usage[-1]
                        session.last_call = (last.input_tokens + last.output_tokens, time.monotonic())
        except (TypeError, ValueError) as e:  # the run could not start (a session in use, a bad model)
            raise acp.RequestError.invalid_params({"message": str(e)}) from None
        finally:
            session.control = session.updates = None
        session.resumable = True
        assert result is not None and session.asker is not None
        reason = stop_reason(result, control.interrupted or session.asker.cancelled)
        if reason is None:
            raise acp.RequestError.internal_error({"message": "; ".join(result.errors) or "the run failed",
                                                   "sessionId": result.session_id})
        note = limit_note(result)
        if note:
            await self._sender(session)(acp.update_agent_message_text(note))
        return s.PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.control is not None:
            session.control.interrupt()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # --- sending ---------------------------------------------------------------------------------

    def _sender(self, session: AcpSession, control: Any = None) -> Any:
        """session/update for this session; once the editor is gone, the run is interrupted
        (it ends with a paired history on disk) instead of failing on a closed pipe."""

        async def send(update: Any) -> None:
            if self.gone:
                return
            try:
                await self.conn.session_update(session_id=session.id, update=update)
            except Exception:  # noqa: BLE001 - the connection closed under us
                self.gone = True
                if control is not None:
                    control.interrupt()

        return send

    async def _notes(self, session: AcpSession) -> None:
        while session.notes:
            await self._sender(session)(acp.update_agent_thought_text(session.notes.pop(0) + "\n"))

    async def shutdown(self, timeout: float = 10.0) -> None:
        """The editor left: interrupt every running prompt and let it end (its result and a
        paired history reach the transcript) before the connection's tasks are cancelled."""
        self.gone = True
        running = [x for x in self.sessions.values() if x.control is not None]
        for x in running:
            x.control.interrupt()
        deadline = asyncio.get_running_loop().time() + timeout
        while any(x.control is not None for x in running) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)


def model_choices(current: str) -> list[str]:
    """The models offered beside the session's: its provider's rows of the model catalog (and
    Claude's aliases); a scripted model offers only itself."""
    from ..models.catalog import ALIASES, CATALOG

    if current.startswith("openai:"):
        return [f"openai:{k}" for k in CATALOG if not k.startswith("claude")]
    if current.removeprefix("anthropic:").startswith("claude"):
        return [*ALIASES, *(k for k, e in CATALOG.items() if k.startswith("claude-") and e.price is not None)]
    return []


def prompt_text(blocks: list[Any]) -> str:
    """The prompt's content blocks as the run's text: text, resource links as their URI, embedded
    text resources inline (the editor's selection or file)."""
    parts: list[str] = []
    for b in blocks:
        if isinstance(b, s.TextContentBlock):
            parts.append(b.text)
        elif isinstance(b, s.ResourceContentBlock):
            parts.append(f"@{_path_of(b.uri)}")
        elif isinstance(b, s.EmbeddedResourceContentBlock):
            r = b.resource
            if isinstance(r, s.TextResourceContents):
                parts.append(f'<context ref="{r.uri}">\n{r.text}\n</context>')
            else:
                parts.append(f"@{_path_of(r.uri)}")
        elif isinstance(b, s.AudioContentBlock):
            parts.append(f"[an {b.type} was attached; this agent reads text and images only]")
    return "\n".join(parts)


def prompt_images(blocks: list[Any]) -> list[dict[str, Any]]:
    """The prompt's images as the model's image blocks (base64 data with its media type)."""
    return [{"type": "image", "source": {"type": "base64", "media_type": b.mime_type, "data": b.data}}
            for b in blocks if isinstance(b, s.ImageContentBlock) and b.data]


def _path_of(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    u = urlparse(uri)
    return unquote(u.path) if u.scheme == "file" else uri


def expand_command(text: str, session: AcpSession) -> tuple[str, list[str], str | None, Expanded | None]:
    """`/name args` of a custom command or a skill -> (prompt, allowed rules, model, the command
    the run expands: the prompt stays as typed, AgentOptions.slash_command)."""
    if not text.startswith("/"):
        return text, [], None, None
    from ..commands import expand, find_commands
    from ..plugins import plugin_command_dirs

    extra, plugin_skills = plugin_command_dirs(session.options, Path(session.cwd).resolve(), [])
    ex = expand(text, find_commands(session.cwd, session.options.setting_sources or [], skills=True, extra=extra,
                                    plugin_skills=plugin_skills))
    return (text, list(ex.allowed_tools), ex.model, ex) if ex is not None else (text, [], None, None)


def commands_of(session: AcpSession) -> list[s.AvailableCommand]:
    """The editor's command list: the custom commands and skills, without those the settings'
    skillOverrides turn off."""
    from ..commands import find_commands
    from ..runconfig import skills_off
    from ..skills import find_skills

    sources = session.options.setting_sources or []
    off = set(skills_off(session.options, Path(session.cwd).resolve()))
    out = [s.AvailableCommand(name=c.name, description=c.description or f"custom command ({c.path.name})",
                              input=s.AvailableCommandInput(root=s.UnstructuredCommandInput(hint="arguments")))
           for c in find_commands(session.cwd, sources).values() if c.name not in off]
    out += [s.AvailableCommand(name=k.name, description=f"skill: {k.description}")
            for k in find_skills(session.cwd, sources)[0] if k.name not in off]
    return out


def client_mcp(servers: list[Any]) -> dict[str, Any]:
    """The editor's mcpServers in Claude Code's {name: {...}} form (mcp/config.py reads it)."""
    out: dict[str, Any] = {}
    for m in servers:
        if isinstance(m, s.McpServerStdio):
            out[m.name] = {"type": "stdio", "command": m.command, "args": list(m.args),
                           "env": {e.name: e.value for e in m.env}}
        elif isinstance(m, (s.HttpMcpServer, s.SseMcpServer)):
            out[m.name] = {"type": m.type, "url": m.url, "headers": {h.name: h.value for h in m.headers}}
    return out


def _mcp_dict(value: Any) -> dict[str, Any]:
    """The command line's --mcp-config servers as a dict (mcp_cli_servers gives one or None)."""
    if isinstance(value, dict):
        return dict(value.get("mcpServers", value))
    return {}


def serve(args: argparse.Namespace) -> int:
    """Serve ACP on this process's stdin/stdout until the editor closes them."""
    from ..cli.config import UsageError, check_model
    from ..models import DEFAULT_MODEL

    check_model(args.model or os.environ.get("LOOPWRIGHT_MODEL") or DEFAULT_MODEL, args.base_url)  # UsageError
    if args.no_session_persistence:
        raise UsageError("loopwright acp keeps its sessions (the editor loads them, `loopwright -r` resumes "
                         "them): drop --no-session-persistence")
    import stat

    if not stat.S_ISFIFO(mode := os.fstat(sys.stdout.fileno()).st_mode) and not stat.S_ISSOCK(mode) \
            and not stat.S_ISCHR(mode):  # (asyncio's pipe transport writes to nothing else)
        raise UsageError("it answers on stdout through a pipe, a socket or a terminal, not a file: "
                         "pipe it (`loopwright acp | tee answers.jsonl`)")
    return asyncio.run(_serve(args))


async def _stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin as protolines.fd_reader reads it (a pipe, or a file: `< lines.jsonl`, where the ACP
    library's stdio_streams failed with 'Pipe transport is for pipes/sockets only'), stdout as
    that library writes it (asyncio's pipe transport: a pipe, a socket or a terminal)."""
    from ..protolines import fd_reader

    reader = await fd_reader(sys.stdin.fileno())
    loop = asyncio.get_running_loop()
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())  # (its flow control: drain)
    transport, _ = await loop.connect_write_pipe(lambda: protocol, sys.stdout)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def _serve(args: argparse.Namespace) -> int:
    from acp.agent.connection import AgentSideConnection

    from .lines import MAX_LINE, vetted

    agent = LoopwrightAcpAgent(args)
    stdin, writer = await _stdio()
    reader = asyncio.StreamReader(limit=MAX_LINE + 1024)  # (vetted lines are at most MAX_LINE)
    pump = asyncio.ensure_future(vetted(stdin, reader, writer))
    conn = AgentSideConnection(cast(Any, agent), writer, reader, listening=False)
    from ..children import Ending

    stop = asyncio.Event()  # SIGTERM/SIGHUP: end as when the editor closes stdin, within a bound (children.py)
    Ending(lambda _: stop.set()).install()
    listening = asyncio.ensure_future(conn.listen())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({listening, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        await agent.shutdown()  # the running prompts end (their tools stopped, histories paired)
        for task in (pump, listening, stopping):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.shield(conn.close())
    if listening.done() and not listening.cancelled():
        listening.result()  # the receive loop's own failure, if it had one
    return 0
