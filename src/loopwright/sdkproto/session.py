"""Room: cli (the Agent SDK protocol). Owns one protocol session: the stdin lines, the control requests from the SDK and
the runs; may import loop, options and the rooms below cli.

`loopwright --input-format stream-json --output-format stream-json` (what the Agent SDKs spawn):
prompts arrive as `user` lines, each one run of loopwright's loop (loop.query, the path every
front end takes), continuing the conversation; the process lives until stdin closes, then ends
after the runs of the prompts already read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..assemble import query
from ..blocks import Prompt, WireMessage, prompt_content
from ..cli.config import resume_gc
from ..cli.initfields import PROTOCOL_VERSION
from ..gate import PERMISSION_MODES
from ..loop import RunControl
from ..loop.watch import Watch
from ..messages import ResultMessage, SystemMessage
from ..models.base import Model
from ..options import AgentOptions, agent_definitions, model_for
from ..protolines import BadLine, TooLong, parse_line, read_lines
from ..runconfig import refuse_bypass
from .flags import SdkFlags
from .peer import Peer, PeerError, SdkServer, StdioAsker, peer_elicit, sdk_hooks
from .schema import line_problem
from .wire import error_result, sdk_lines

MAX_LINE = 64 * 1024 * 1024  # one user line may carry a large prompt (images, documents)



# What a second `initialize` carries that Claude Code 2.1.332 leaves as the first one set it (seen on
# the same lines: its answer is a success, its hooks replace the first's, these change nothing).
SECOND_INIT_IGNORES = ("systemPrompt", "appendSystemPrompt", "jsonSchema", "agents", "disallowedTools", "settings")


class SdkSession:
    """A conversation driven by an Agent SDK over stdin/stdout."""

    def __init__(self, flags: SdkFlags, peer: Peer) -> None:
        self.flags, self.peer = flags, peer
        self.options: AgentOptions = flags.options
        if flags.ask_stdio:
            asker = StdioAsker(peer, str(self.options.cwd or "."), list(self.options.add_dirs),
                               lambda: self.options.managed_settings)
            # the gate's questions, AskUserQuestion's and ExitPlanMode's all go to the SDK's can_use_tool
            self.options = replace(self.options, can_use_tool=asker, ask_user=asker.ask_user,
                                   review_plan=asker.review_plan)
        if self.options.elicit is None:  # MCP servers' questions go to the SDK (its onElicitation), as Claude Code's
            self.options = replace(self.options, elicit=peer_elicit(peer))
        self.prompts: asyncio.Queue[Prompt | Refused | None] = asyncio.Queue()
        self.history: list[WireMessage] | None = None
        self.watch = Watch()  # its settings files and FileChanged's, across its prompts (loop/watch.py)
        self.session_id: str | None = None
        self.control: RunControl | None = None
        self.model: Model | None = None
        self.init_task: asyncio.Task[dict[str, Any]] | None = None
        # One initialize at a time: each reads the options and writes them back changed, and one
        # waits on the SDK (its in-process MCP servers); a second handled beside the first wrote back
        # the options from before it (the first's managedSettings lost, the session ran without them).
        self.init_lock = asyncio.Lock()
        self.last: ResultMessage | None = None
        self.last_error = False
        self.last_at = 0.0  # when the last run ended (time.monotonic): is the prompt cache warm?
        self.pending: list[str] = []  # PostModelSwitch hooks' context, for the next prompt
        self.mcp_status: list[dict[str, Any]] = []
        self.agent_names: list[str] = []
        self.tasks: set[asyncio.Task[Any]] = set()

    # --- stdin ----------------------------------------------------------------------------------

    async def serve(self, reader: asyncio.StreamReader, limit: int = MAX_LINE) -> int:
        worker = asyncio.create_task(self.work())
        try:
            async for line in read_lines(reader, limit):
                try:
                    if isinstance(line, TooLong):
                        self.too_long(line, limit)
                    else:
                        self.take(line)
                except Exception as e:  # noqa: BLE001 - a line we failed on is an error message, never an exit
                    note(f"stdin: a line could not be handled ({type(e).__name__}: {e}); skipped")
        finally:
            self.peer.close()
            self.prompts.put_nowait(None)
        await worker
        if self.tasks:  # requests read before stdin ended still get their answers
            await asyncio.wait(list(self.tasks), timeout=5)
        for t in list(self.tasks):
            t.cancel()
        if self.model is not None:
            with contextlib.suppress(Exception):
                await getattr(self.model, "aclose", _nothing)()
        return 1 if self.last_error else 0

    def take(self, raw: bytes) -> None:
        """One stdin line: checked against the protocol's schema (sdkproto/schema.py) first; a bad
        one is answered as the protocol can (a control request's error response, a prompt's error
        result) or named on stderr, and skipped."""
        if not raw.strip():
            return
        try:
            msg = parse_line(raw)
        except BadLine as e:
            note(f"stdin: a line that is {e} was skipped: {raw[:120].decode('utf-8', 'replace')}")
            return
        problem = line_problem(msg)
        if problem is not None:
            kind, rid = (msg.get("type"), msg.get("request_id")) if isinstance(msg, dict) else (None, None)
            if kind == "control_response" and isinstance(msg.get("response"), dict):
                rid = msg["response"].get("request_id")
            self.refuse(kind, rid, problem)
            return
        kind = msg["type"]
        if kind == "user":
            try:
                prompt: Prompt | Refused = line_prompt(msg["message"])
            except Exception as e:  # noqa: BLE001 - whatever the blocks are, the answer is an error result
                prompt = Refused(f"a user line whose content is no prompt ({type(e).__name__}: {e})")
            self.prompts.put_nowait(prompt)
        elif kind == "control_request":
            req = msg.get("request")
            self.spawn(self.handle(str(msg.get("request_id")), req if isinstance(req, dict) else {}))
        elif kind == "control_response" and isinstance(msg.get("response"), dict):
            self.peer.answered(msg["response"])
        elif kind not in ("control_cancel_request", "keep_alive"):  # nothing of ours runs long enough to cancel
            note(f"stdin: a line of type {kind!r} was skipped")

    def refuse(self, kind: Any, request_id: Any, problem: str) -> None:
        """A bad line answered in the protocol's terms: a control request gets its error response,
        a prompt its error result (in turn, after the runs before it), a malformed answer to one of
        our requests fails that request (a can_use_tool's is then a deny); anything else one stderr line."""
        if kind == "control_request" and isinstance(request_id, str) and request_id:
            note(f"stdin: {problem}")
            self.peer.reply(request_id, error=problem)
        elif kind == "user":
            self.prompts.put_nowait(Refused(problem))
        elif kind == "control_response" and isinstance(request_id, str):  # our request waits: it fails now
            note(f"stdin: {problem}")
            self.peer.answered({"subtype": "error", "request_id": request_id, "error": problem})
        else:
            note(f"stdin: {problem}; skipped")

    def too_long(self, line: TooLong, limit: int) -> None:
        problem = f"a line of {line.size:,} bytes, over the limit of {limit:,}, was skipped"
        self.refuse(line.field("type"), line.field("request_id"), problem)

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # --- control requests from the SDK ------------------------------------------------------------

    async def handle(self, rid: str, req: dict[str, Any]) -> None:
        subtype = req.get("subtype")
        try:
            if subtype == "initialize" and self.init_task is not None:  # a second one (SECOND_INIT_IGNORES)
                async with self.init_lock:
                    body = await self.initialize(req, again=True)
            elif subtype == "initialize":
                self.init_task = asyncio.ensure_future(self.first_initialize(req))
                body = await self.init_task
            elif subtype == "interrupt":
                if self.control is not None:
                    self.control.interrupt()
                body = {}
            elif subtype == "set_permission_mode":
                mode = req.get("mode")
                if mode not in PERMISSION_MODES:
                    raise ValueError(f"unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
                refuse_bypass(self.options, mode)  # (permissions.disableBypassPermissionsMode)
                self.options = replace(self.options, permission_mode=mode)
                body = {"mode": mode}
            elif subtype == "set_model":
                await self.set_model(req.get("model"))
                body = {}
            elif subtype == "mcp_status":
                body = {"mcpServers": self.mcp_status}
            elif subtype == "get_context_usage":
                body = self.context_usage()
            elif subtype == "rewind_files":
                await self.rewind_files(str(req.get("user_message_id") or ""))
                body = {}
            else:  # mcp_reconnect, mcp_toggle, stop_task, ...
                raise ValueError(f"loopwright does not support the control request {subtype!r}")
        except Exception as e:  # noqa: BLE001 - every failure is the SDK's error answer
            self.peer.reply(rid, error=str(e) if isinstance(e, (ValueError, PermissionError)) else f"{type(e).__name__}: {e}")
            return
        self.peer.reply(rid, body)

    async def first_initialize(self, req: dict[str, Any]) -> dict[str, Any]:
        async with self.init_lock:
            return await self.initialize(req)

    async def initialize(self, req: dict[str, Any], again: bool = False) -> dict[str, Any]:
        """The SDK's setup: hooks, agents and, from the TypeScript SDK, the options it delivers here
        instead of as flags (system prompt, JSON schema, settings, disallowed tools, MCP servers).
        `again`: a second initialize, answered as the first; as Claude Code 2.1.332 its hooks
        replace the first's but the options of SECOND_INIT_IGNORES stay the first's (said on stderr)."""
        hooks, notes = sdk_hooks(self.peer, req.get("hooks"))
        for n in notes:
            note(n)
        req = _of_their_shapes(req)
        if again and (kept := [k for k in SECOND_INIT_IGNORES if req.get(k) is not None]):
            note(f"a second initialize: its {', '.join(kept)} not applied (as Claude Code: the session keeps the "
                 "first initialize's; its hooks are applied)")
            req = {k: v for k, v in req.items() if k not in SECOND_INIT_IGNORES}
        o = self.options
        changes: dict[str, Any] = {}
        if hooks:
            changes["hooks"] = hooks
        tools = list(o.tools)
        if req.get("agents"):
            from ..agents import make_agent_tool

            agents = {**agent_definitions(o.agents), **agent_definitions(req["agents"])}
            # the Agent tool the command line built knows only --agents: it is rebuilt with these
            changes["agents"] = agents
            tools = [make_agent_tool(agents) if t.spawns_agents else t for t in tools]
        changes.update(_prompt_changes(req))
        applied: dict[str, Any] = {}
        if req.get("settings") is not None:
            changes["settings"] = req["settings"]
            applied["settings_applied"] = True
        self._managed_settings(req, changes, applied)
        denied = req.get("disallowedTools")
        if isinstance(denied, list):
            changes["disallowed_tools"] = [*o.disallowed_tools, *map(str, denied)]
            tools = [t for t in tools if t.name not in {d for d in denied if "(" not in str(d)}]
            applied["disallowed_tools_applied"] = True
        if tools != o.tools:
            changes["tools"] = tools
        servers = await self._mcp_servers(req, applied)
        if servers is not None:
            changes["mcp_servers"] = servers
        if changes:  # onto the options as they are now: a set_permission_mode or set_model answered while
            # this waited on the SDK (its MCP servers) stands; written over `o`, it was undone unsaid
            self.options = replace(self.options, **changes)
        return self._initialized(applied)

    def _managed_settings(self, req: dict[str, Any], changes: dict[str, Any], applied: dict[str, Any]) -> None:
        """--managed-settings-in-initialize: the first initialize's managedSettings, required (no
        session runs without them, as in Claude Code); any other initialize's are said, not applied."""
        if self.flags.managed_in_initialize:
            if not isinstance(req.get("managedSettings"), dict):
                raise ValueError("--managed-settings-in-initialize: the initialize request has no managedSettings "
                                 "object; no prompt runs without them")
            changes["managed_settings"], applied["managed_settings_applied"] = req["managedSettings"], True
            self.flags.managed_in_initialize = False
        elif req.get("managedSettings") is not None:  # (a second initialize's, or without the flag: said, not dropped unsaid)
            note("initialize: its managedSettings not applied (they are taken from the first initialize, with "
                 "--managed-settings-in-initialize; the session keeps the managed settings it has)")

    async def _mcp_servers(self, req: dict[str, Any], applied: dict[str, Any]) -> dict[str, Any] | None:
        """The MCP servers with the request's (an SDK server's config left out) and those running in
        the SDK's process, connected; None when they are the configured ones."""
        o = self.options
        configured = o.mcp_servers if isinstance(o.mcp_servers, dict) else {}
        inner: dict[str, Any] = dict(configured.get("mcpServers", configured))
        given = req.get("mcpServers")
        if isinstance(given, dict):
            given = given.get("mcpServers", given)
            inner.update({n: c for n, c in given.items() if not (isinstance(c, dict) and c.get("type") == "sdk")})
            applied["mcp_servers_applied"] = True
        for name in dict.fromkeys([*self.flags.sdk_servers, *(req.get("sdkMcpServers") or [])]):
            try:
                inner[str(name)] = await SdkServer(self.peer, str(name)).connect()
            except (PeerError, KeyError, TypeError, ValueError) as e:
                note(f"MCP server {name!r} (in the SDK's process) could not be listed: {e}")
        return {"mcpServers": inner} if inner != configured.get("mcpServers", configured) else None

    def _initialized(self, applied: dict[str, Any]) -> dict[str, Any]:
        """The initialize answer: the session's commands, agents, output styles and model, and which
        of the request's options were applied."""
        from ..cli.initfields import slash_commands, subagent_types

        self.agent_names = subagent_types(self.options)
        name = self.options.model if isinstance(self.options.model, str) else "default"
        from ..commands import described
        from ..outputstyles import find_styles

        sources = [x for x in self.options.setting_sources or [] if x in ("user", "project")]
        styles = list(find_styles(str(self.options.cwd or "."), sources)[0])
        return {"commands": described(slash_commands(self.options)), "agents": [{"name": a} for a in self.agent_names],
                "output_style": self.options.output_style or "default", "available_output_styles": styles, "models": [{"value": name, "displayName": name,
                                                                    "description": "the --model of this run"}],
                "account": {}, "pid": os.getpid(), "claude_code_version": PROTOCOL_VERSION, **applied}

    async def rewind_files(self, user_message_id: str) -> None:
        """The files the tools changed since that prompt, as they were before it (checkpoints.py;
        the prompt's uuid comes on its replayed user line, --replay-user-messages)."""
        from ..sessions.rewind import rewind_files

        if self.session_id is None:
            raise ValueError("rewind_files: no run has finished in this session yet")
        if self.control is not None:
            raise ValueError("rewind_files: a run is going on; interrupt it first")
        report = await asyncio.to_thread(rewind_files, self.session_id, user_message_id, self.options.sessions_dir,
                                         self.options.cwd)
        note(report.text())

    async def set_model(self, model: Any) -> None:
        """The model of the next run (None: the one the process started with). The settings'
        PreModelSwitch hooks may refuse it (the SDK's error); PostModelSwitch hooks'
        additionalContext goes with the next prompt, as in Claude Code (`source` "sdk")."""
        from ..client import switch_model
        from ..models.catalog import resolve_alias

        if model is not None and not isinstance(model, str):  # (it was taken as null: the start model, silently)
            raise ValueError(f"set_model: model must be a model name or null, not {type(model).__name__} {model!r:.100}")
        spec = resolve_alias(model) if isinstance(model, str) and model else self.flags.options.model
        new = model_for(replace(self.options, model=spec))  # raises on a bad spec: the SDK's error
        was = self.model.name if self.model is not None else str(self.options.model or "(default)")
        calls = self.last.call_usage if self.last is not None else []
        last = (calls[-1].input_tokens + calls[-1].output_tokens, self.last_at) if calls else None

        def apply() -> None:
            self.model, self.options = new, replace(self.options, model=spec)

        context = await switch_model(self.options, self.session_id or self.options.session_id or "", was, new.name,
                                     model if isinstance(model, str) and model else None, "sdk", last, apply)
        if context:
            self.pending.append(context)

    def context_usage(self) -> dict[str, Any]:
        """The seed's n_k (the last call's context: input plus output tokens) against W."""
        from ..context import default_context_window

        name = self.model.name if self.model is not None else str(self.options.model)
        window = self.options.context_window or default_context_window(name) or 0
        calls = self.last.call_usage if self.last is not None else []
        used = (calls[-1].input_tokens + calls[-1].output_tokens) if calls else 0
        return {"categories": [{"name": "Messages", "tokens": used, "color": "default"}], "totalTokens": used,
                "maxTokens": window, "rawMaxTokens": window, "percentage": 100.0 * used / window if window else 0.0,
                "model": name, "isAutoCompactEnabled": self.options.auto_compact and bool(window)}

    # --- runs -----------------------------------------------------------------------------------

    async def work(self) -> None:
        while (prompt := await self.prompts.get()) is not None:
            if self.init_task is not None:
                with contextlib.suppress(Exception):
                    await self.init_task
            if self.flags.managed_in_initialize:  # (initialize did not deliver them)
                prompt = Refused("the managed settings were not delivered in initialize "
                                 "(--managed-settings-in-initialize); no prompt runs without them")
            if isinstance(prompt, Refused):
                self.emit_error(f"stdin: {prompt.problem}", self.session_id or self.options.session_id or "")
            else:
                await self.run(prompt)

    def next_options(self) -> AgentOptions:
        if self.model is None:
            self.model = model_for(self.options)
        options = replace(self.options, model=self.model)
        if self.history is not None:  # the next prompt of this conversation, in the same session
            options = replace(options, resume=None, continue_conversation=False, fork_session=False,
                              session_id=self.session_id)
        return options

    async def run(self, prompt: Prompt) -> None:
        sid = self.session_id or self.options.session_id or ""
        try:
            options = self.next_options()
            shown = prompt
            if isinstance(prompt, str) and self.pending:  # the run finds `/name args` itself, as with -p; here the
                options = self.typed(prompt, options)  # command is found before a model switch's context goes first
        except (TypeError, ValueError) as e:
            self.emit_error(str(e), sid)
            return
        if self.pending:  # a PostModelSwitch hook's context goes first
            texts, self.pending = self.pending, []
            prompt = "\n\n".join([*texts, prompt]) if isinstance(prompt, str) else \
                [*({"type": "text", "text": t} for t in texts), *prompt_content(prompt)]
        control = RunControl()
        self.control = control
        from ..cli.initfields import init_fields, model_limits

        extra = init_fields(options, self.agent_names or None)
        try:
            async for msg in query(prompt, options, control=control, history=self.history, watch=self.watch):
                if not isinstance(msg, SystemMessage):  # the first request is out: start-up is over
                    resume_gc()
                if isinstance(msg, SystemMessage) and msg.subtype == "init":
                    sid = str(msg.data.get("session_id", sid))
                    self.mcp_status = list(msg.data.get("mcp_servers") or [])
                    for w in msg.data.get("warnings") or []:
                        note(f"warning: {w}")
                if isinstance(msg, ResultMessage):
                    self.history, self.session_id, self.last = msg.messages, msg.session_id, msg
                    self.last_at = time.monotonic()
                    self.last_error = msg.is_error
                    if self.flags.replay and msg.user_message_uuid:  # (known once the prompt is on disk)
                        self.peer.send({"type": "user", "message": {"role": "user", "content": shown},
                                        "parent_tool_use_id": None, "session_id": sid,
                                        "uuid": msg.user_message_uuid, "isReplay": True})
                lines = sdk_lines(msg, sid, extra if isinstance(msg, SystemMessage) else None)
                if isinstance(msg, ResultMessage):
                    model_limits(lines[0], options)
                for line in lines:
                    self.peer.send(line)
        except (TypeError, ValueError) as e:  # options found bad when the run starts (a bad script, a cwd gone)
            self.emit_error(str(e), sid)
        except Exception as e:  # noqa: BLE001 - the transcript's first line unwritable, a broken extension:
            self.emit_error(f"{type(e).__name__}: {e}", sid)  # this prompt fails, the session goes on
        finally:
            self.control = None

    @staticmethod
    def typed(prompt: str, options: AgentOptions) -> AgentOptions:
        """The options of a `/name args` prompt's run (assemble_parts.typed_command; the run names
        what it left out)."""
        from pathlib import Path

        from ..assemble_parts import run_trust, typed_command

        cwd = Path(options.cwd or ".").resolve()
        return typed_command(prompt, options, cwd, run_trust(options, cwd), [])

    def emit_error(self, error: str, session_id: str) -> None:
        note(error)
        self.last_error = True
        self.peer.send(error_result(error, session_id))


@dataclass(frozen=True)
class Refused:
    """A user line that was no prompt: its turn in the queue answers it with an error result."""

    problem: str


def line_prompt(message: Any) -> Prompt:
    """A user line's content as the prompt: a string, or its text, image and document blocks
    (other blocks are named, not dropped silently)."""
    content = message.get("content") if isinstance(message, dict) else message
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for b in content or []:
        if not isinstance(b, dict) or b.get("type") == "text" and isinstance(b.get("text"), str) \
                and not b["text"].strip():
            continue  # (a blank text block: the run leaves it out, and refuses a prompt of nothing else)
        try:
            blocks += prompt_content([b])
        except TypeError as e:
            blocks.append({"type": "text", "text": f"[a {b.get('type')} block of the prompt was left out: {e}]"})
            note(f"a {b.get('type')} block in a prompt was left out: {e}")
    if all(b["type"] == "text" for b in blocks):  # text only: a string, so `/command args` works
        return "\n\n".join(b["text"] for b in blocks)
    return blocks


def note(text: str) -> None:
    print(f"loopwright: {text}", file=sys.stderr, flush=True)


async def _nothing() -> None:
    return None


# initialize's options and the shapes the SDKs send them in: one of another shape is named, not passed over
_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "systemPrompt": (lambda v: isinstance(v, str) or isinstance(v, list) and all(isinstance(x, str) for x in v),
                     "a string or a list of strings"),
    "appendSystemPrompt": (lambda v: isinstance(v, str), "a string"),
    "jsonSchema": (lambda v: isinstance(v, dict), "an object (a JSON Schema)"),
    "disallowedTools": (lambda v: isinstance(v, list), "a list of tool names or rules"),
    "mcpServers": (lambda v: isinstance(v, dict), "an object of MCP servers"),
    "sdkMcpServers": (lambda v: isinstance(v, list), "a list of server names"),
}


def _prompt_changes(req: dict[str, Any]) -> dict[str, Any]:
    """The initialize's options that shape the prompt: the system prompt (a list of strings joined),
    its append, and a JSON schema for the answer (checked)."""
    changes: dict[str, Any] = {}
    system = req.get("systemPrompt")
    if isinstance(system, list) and all(isinstance(x, str) for x in system):
        system = "\n\n".join(system)
    if isinstance(system, str):
        changes["system_prompt"] = system
    if isinstance(req.get("appendSystemPrompt"), str):
        changes["append_system_prompt"] = req["appendSystemPrompt"]
    if isinstance(req.get("jsonSchema"), dict):
        from ..structured import check_schema

        check_schema(req["jsonSchema"])
        changes["output_format"] = {"type": "json_schema", "schema": req["jsonSchema"]}
    return changes


def _of_their_shapes(req: dict[str, Any]) -> dict[str, Any]:
    """`req` less the options that are not of the shape the SDKs send (each named on stderr): they
    were passed over without a word, the session running without them."""
    bad = [k for k, (ok, _) in _SHAPES.items() if req.get(k) is not None and not ok(req[k])]
    for k in bad:
        note(f"initialize: its {k} is {type(req[k]).__name__}, not {_SHAPES[k][1]}; not applied")
    return {k: v for k, v in req.items() if k not in bad}
