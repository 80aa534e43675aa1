"""Room: cli (the Agent SDK protocol). Owns the NDJSON channel to the SDK and the control requests loopwright sends it
(can_use_tool, hook_callback, mcp_message); may import the rooms below cli.

`Peer` writes lines to stdout and matches the SDK's control_responses to the requests that
wait for them. The three bridges turn those requests into loopwright's own ports: an asker
for the gate (`can_use_tool`), hook callbacks (`Hooks`), and in-process MCP servers whose tools
are plain `Tool`s (`SdkMcpServer`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TextIO

from ..blocks import json_text
from ..gate import Allow, Decision, Deny
from ..gate.session import SessionRules
from ..hooks import HOOK_EVENTS, HookMatcher
from ..ids import new_uuid
from ..tools.base import Tool, ToolContext, ToolOutput

if TYPE_CHECKING:  # the answers' types and the MCP server are imported where they are made: start-up
    from ..interaction import PlanReply, Question, QuestionReply
    from ..mcp.inprocess import SdkMcpServer


class PeerError(Exception):
    """The SDK answered a control request with an error (or can no longer answer: stdin closed)."""


class Peer:
    """The SDK at the other end: one JSON object per stdout line; control requests both ways."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.closed = False

    def send(self, obj: dict[str, Any]) -> None:
        self.out.write(json_text(obj, default=str) + "\n")  # (valid UTF-8 whatever a tool said: blocks.json_text)
        self.out.flush()

    def reply(self, request_id: str, response: dict[str, Any] | None = None, error: str | None = None) -> None:
        """The answer to one of the SDK's control requests."""
        body: dict[str, Any] = ({"subtype": "error", "request_id": request_id, "error": error} if error is not None
                                else {"subtype": "success", "request_id": request_id, "response": response or {}})
        self.send({"type": "control_response", "response": body})

    async def request(self, subtype: str, **fields: Any) -> dict[str, Any]:
        """Ask the SDK; its answer's body. Raises PeerError on an error answer or a closed stdin.
        Cancelling the wait tells the SDK to drop the request (control_cancel_request)."""
        if self.closed:
            raise PeerError(f"the SDK's stdin is closed: it cannot answer {subtype}")
        rid = new_uuid()
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        self.send({"type": "control_request", "request_id": rid, "request": {"subtype": subtype, **fields}})
        try:
            return await fut
        except asyncio.CancelledError:
            self.send({"type": "control_cancel_request", "request_id": rid})
            raise
        finally:
            self.pending.pop(rid, None)

    def answered(self, response: dict[str, Any]) -> None:
        """A control_response line from the SDK."""
        fut = self.pending.get(str(response.get("request_id")))
        if fut is None or fut.done():
            return
        if response.get("subtype") == "error":
            fut.set_exception(PeerError(str(response.get("error") or "the SDK answered with an error")))
        else:
            body = response.get("response")
            fut.set_result(body if isinstance(body, dict) else {})

    def close(self) -> None:
        """stdin ended: nobody will answer the open requests."""
        self.closed = True
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(PeerError("the SDK's stdin closed before it answered"))


def peer_elicit(peer: Peer) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]:
    """AgentOptions.elicit answered by the SDK: the `elicitation` control request Claude Code sends
    (the SDK's onElicitation answers; an SDK without one declines)."""

    async def elicit(server: str, request: dict[str, Any]) -> dict[str, Any]:
        fields: dict[str, Any] = {"mcp_server_name": server, "message": request.get("message", ""),
                                  "mode": request.get("mode") or "form"}
        if "requestedSchema" in request:
            fields["requested_schema"] = request["requestedSchema"]
            fields["property_order"] = list(request["requestedSchema"].get("properties") or {})
        for k, wire in (("url", "url"), ("elicitationId", "elicitation_id")):
            if k in request:
                fields[wire] = request[k]
        return await peer.request("elicitation", **fields)

    return elicit


# --- the gate's asker -------------------------------------------------------------------------

class StdioAsker:
    """The gate's "ask a person" point answered by the SDK's can_use_tool callback (AgentOptions
    .can_use_tool's shape: `(tool_name, input) -> Allow | Deny`). It sends the allow rules that
    would approve calls like this one as permission_suggestions, and keeps the rules an answer's
    updatedPermissions adds for this session, so later matching calls are not asked again. An
    error answer (the callback raised) is a deny, and the run goes on, as with Claude Code."""

    def __init__(self, peer: Peer, cwd: str, add_dirs: list[Any],
                 host: Callable[[], dict[str, Any] | None] = lambda: None) -> None:
        self.peer = peer
        self.granted = SessionRules(cwd, add_dirs)  # what answers' updatedPermissions added
        self.host = host  # the session's AgentOptions.managed_settings (initialize may bring them)

    async def __call__(self, tool_name: str, tool_input: dict[str, Any]) -> Decision:
        if self.granted.covers(tool_name, tool_input):
            return Allow()
        from ..managed import rules_only  # (read at each ask: a person answers slower than that)

        closed = rules_only(self.host())  # allowManagedPermissionRulesOnly: no rule is offered nor kept
        suggested = [] if closed else self.granted.suggest(tool_name, tool_input)
        r = await self.answer(tool_name, tool_input, [_add_rules(suggested)] if suggested else [])
        if r.get("behavior") == "allow":
            adds = [u for u in r.get("updatedPermissions") or [] if isinstance(u, dict)
                    and u.get("type") == "addRules" and u.get("behavior", "allow") == "allow"]
            if adds and closed:
                print("loopwright: Rule not saved: managed rules only (allowManagedPermissionRulesOnly)",
                      file=sys.stderr, flush=True)
            for u in [] if closed else adds:
                for problem in self.granted.add(_rule(x) for x in u.get("rules") or []
                                                if isinstance(x, dict) and x.get("toolName")):
                    print(f"loopwright: can_use_tool's updatedPermissions: {problem}; not kept", file=sys.stderr,
                          flush=True)
            return Allow(r.get("updatedInput"))  # (one that is no object: the gate refuses the call, says why)
        if r.get("behavior") == "deny":
            return Deny(str(r.get("message") or Deny().message), bool(r.get("interrupt")))
        return Deny(f"Permission denied: can_use_tool answered {json.dumps(r)[:200]}, not allow or deny")

    async def ask_user(self, questions: tuple[Question, ...]) -> QuestionReply:
        """AskUserQuestion's port, answered as Claude Code asks it: can_use_tool on the tool, whose
        allow carries the answers in updatedInput["answers"]."""
        from ..interaction import Answered, Declined

        x = {"questions": [{"question": q.question, "header": q.header, "multiSelect": q.multi_select,
                            "options": [{"label": o.label, "description": o.description} for o in q.options]}
                           for q in questions]}
        r = await self.answer("AskUserQuestion", x)
        if r.get("behavior") != "allow":
            return Declined(str(r.get("message") or ""))
        answers = (r.get("updatedInput") or {}).get("answers")
        return Answered({str(k): str(v) for k, v in answers.items()} if isinstance(answers, dict) else {})

    async def review_plan(self, plan: str) -> PlanReply:
        """ExitPlanMode's port: can_use_tool on the tool; allowed, the run leaves plan mode (for the
        mode a setMode update names, else default)."""
        from ..interaction import PlanApproved, PlanRefused

        r = await self.answer("ExitPlanMode", {"plan": plan})
        if r.get("behavior") != "allow":
            return PlanRefused(str(r.get("message") or ""))
        modes = [u["mode"] for u in r.get("updatedPermissions") or []
                 if isinstance(u, dict) and u.get("type") == "setMode" and u.get("mode") in PLAN_EXITS]
        return PlanApproved(modes[-1] if modes else "default")

    async def answer(self, name: str, x: dict[str, Any], suggestions: list[Any] | None = None) -> dict[str, Any]:
        """The SDK's can_use_tool answer about one call; an error answer (the callback raised, or
        stdin closed) is a deny saying so."""
        try:
            return await self.peer.request("can_use_tool", tool_name=name, input=x,
                                           permission_suggestions=suggestions or [], tool_use_id=None)
        except PeerError as e:
            return {"behavior": "deny", "message": f"Permission denied: the SDK's can_use_tool failed: {e}"}


PLAN_EXITS = ("default", "acceptEdits", "bypassPermissions", "dontAsk")


def _add_rules(rules: list[str]) -> dict[str, Any]:
    """loopwright's rule strings as a Claude Code permission update (the SDK's PermissionUpdate)."""
    values = []
    for r in rules:
        name, _, rest = r.partition("(")
        values.append({"toolName": name, "ruleContent": rest[:-1] if rest else None})
    return {"type": "addRules", "rules": values, "behavior": "allow", "destination": "session"}


def _rule(value: dict[str, Any]) -> str:
    content = value.get("ruleContent")
    return f"{value['toolName']}({content})" if content else str(value["toolName"])


# --- hooks ------------------------------------------------------------------------------------

def sdk_hooks(peer: Peer, config: Any) -> tuple[dict[str, list[HookMatcher]], list[str]]:
    """initialize's `hooks` ({Event: [{matcher, hookCallbackIds, timeout?}]}) as loopwright hooks
    whose callbacks are hook_callback requests; and notes on events loopwright never fires. Their
    runs are not reported as hook_started/hook_response (--include-hook-events), as Claude Code
    2.1.332 reports only the hooks of settings files."""
    out: dict[str, list[HookMatcher]] = {}
    notes: list[str] = []
    for event, matchers in (config or {}).items():
        if event not in HOOK_EVENTS:
            notes.append(f"hook event {event} is not one loopwright fires; its callbacks never run")
            continue
        for m in matchers or []:
            ids = [str(i) for i in m.get("hookCallbackIds") or []]
            timeout = m.get("timeout")
            out.setdefault(event, []).append(HookMatcher(m.get("matcher"), [_hook(peer, i) for i in ids],
                                                         float(timeout) if timeout else None))
    return out, notes


def _hook(peer: Peer, callback_id: str) -> Any:
    async def call(payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        out: dict[str, Any] = await peer.request("hook_callback", callback_id=callback_id, input=payload,
                                                 tool_use_id=tool_use_id)
        return out

    call.__name__ = f"sdk:{callback_id}"
    return call


# --- in-process MCP servers -------------------------------------------------------------------

class SdkServer:
    """One `{"type": "sdk"}` server: JSON-RPC over mcp_message; its tools as loopwright Tools."""

    def __init__(self, peer: Peer, name: str) -> None:
        self.peer, self.name, self._id = peer, name, 0

    async def rpc(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> Any:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})}
        if not notify:
            self._id += 1
            msg["id"] = self._id
        r = (await self.peer.request("mcp_message", server_name=self.name, message=msg)).get("mcp_response") or {}
        if isinstance(r, dict) and r.get("error"):
            raise PeerError(f"MCP server {self.name!r}: {r['error'].get('message', r['error'])}")
        return r.get("result") if isinstance(r, dict) else None

    async def connect(self) -> SdkMcpServer:
        from .. import __version__
        from ..mcp.inprocess import SdkMcpServer

        await self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "loopwright", "version": __version__}})
        await self.rpc("notifications/initialized", notify=True)
        from ..mcp.client import schema_problem

        listed = await self.rpc("tools/list") or {}
        tools: list[Tool] = []
        for t in listed.get("tools") or []:
            name = t.get("name") if isinstance(t, dict) else t
            try:
                ann = t.get("annotations") or {}
                schema = t.get("inputSchema") or {"type": "object"}
                # bounded as any MCP server's tools (mcp/client): every request carries every tool
                if any(x.name == name for x in tools):
                    raise ValueError("the server lists that name twice; the second is skipped")
                if (problem := schema_problem(schema)) is not None:
                    raise ValueError(f"its input schema {problem}")
                tools.append(Tool(t["name"], t.get("description") or t["name"], schema, self._caller(t["name"]),
                                  read_only=bool(ann.get("readOnlyHint"))))
            except (AttributeError, KeyError, TypeError, ValueError) as e:  # that tool, not the server's others
                print(f"loopwright: MCP server {self.name!r} (in the SDK's process): tool {name!r:.100} skipped: "
                      f"{str(e)[:200]}", file=sys.stderr, flush=True)
        return SdkMcpServer(self.name, tools=tools)

    def _caller(self, tool: str) -> Any:
        async def handler(x: dict[str, Any], ctx: ToolContext) -> ToolOutput:
            try:
                r = await self.rpc("tools/call", {"name": tool, "arguments": x}) or {}
            except PeerError as e:
                return ToolOutput(str(e), is_error=True)
            # As any MCP server's result (mcp/results: blank text dropped, image types and sizes,
            # the output cap): blank text or an SVG sent on made the API refuse the rest of the run.
            from mcp.types import CallToolResult
            from pydantic import ValidationError

            from ..mcp.results import checked_output

            try:
                result = CallToolResult.model_validate(r)
            except ValidationError as e:
                return ToolOutput(f"The SDK's MCP server {self.name!r} answered {tool} with a result that is not an "
                                  f"MCP tools/call result: {str(e)[:300]}", is_error=True)
            return await checked_output(result, ctx)

        return handler
