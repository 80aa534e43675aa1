"""Room: acp. Owns the gate's "ask a person" point as session/request_permission, and the run's
other questions to its user (ExitPlanMode's plan, AskUserQuestion, an MCP server's elicitation:
ACP's elicitation/create when the editor has it) through the same request; may import the gate,
interaction, mcp.asks and the interactive dialog's asker (whose "don't ask again" rules it shares).

The gate calls `ask(name, input)` exactly where an interactive run opens its dialog. The
editor gets the tool call and four options; "allow always" adds and saves the rules the
dialog's "don't ask again" saves (Permissions.suggest_rules, into
.loopwright/settings.local.json), "reject always" refuses calls like this one for the rest of
the session. A rejection is an is_error result and the run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import acp
from acp import schema as s
from acp.helpers import update_current_mode

from ..cli.dialog import LOCAL_SETTINGS, Answer, PermissionAsker
from ..gate import Allow, Deny
from ..gate.session import SessionRules
from ..ids import new_hex
from ..interaction import (
    Answered,
    Declined,
    PlanApproved,
    PlanRefused,
    PlanReply,
    Question,
    QuestionReply,
)
from .updates import Updates, diffs, tool_kind, tool_title

ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS = "allow_once", "allow_always", "reject_once", "reject_always"


class AcpAsker(PermissionAsker):
    """The session's can_use_tool: one request_permission at a time (parallel calls queue).

    `owner` is the ACP session: "allow always" adds its rules to `owner.options.allowed_tools`
    (later prompts) and "reject always" to `owner.options.disallowed_tools`."""

    def __init__(self, owner: Any, conn: Any, session_id: str, updates: Callable[[], Updates | None],
                 notes: Callable[[str], None]) -> None:
        super().__init__(owner.options, self._note, client=owner)
        self.notes = notes
        self._saving = False  # only what "always" did is told: the editor shows the answer itself
        self.conn = conn
        self.session_id = session_id
        self.updates = updates  # the running prompt's Updates: which tool call this is
        self.refused = SessionRules(self.cwd, list(self.options.add_dirs or []), "deny")  # "reject always"
        self.asked: set[str] = set()
        self.cancelled = False  # the editor answered `cancelled` (its prompt was cancelled)
        self.caps: Any = None  # the editor's ClientCapabilities (its elicitation support: `elicit`)

    def _call_id(self, name: str, tool_input: dict[str, Any] | None) -> tuple[str, bool]:
        """The announced tool call this question is about (False: none, announce one now).
        `tool_input` None: the first call of that name not asked about yet."""
        u = self.updates()
        if u is not None:
            for cid, b in u.calls.items():
                if cid not in self.asked and b.name == name and (tool_input is None or b.input == tool_input):
                    self.asked.add(cid)
                    return cid, True
        return f"ask-{new_hex(12)}", False

    async def ask(self, name: str, tool_input: dict[str, Any]) -> Allow | Deny:
        async with self._lock:
            closed = self.closed()  # allowManagedPermissionRulesOnly: no "allow always" (PermissionAsker.closed)
            if not closed and self.approved(name, tool_input):
                return Allow()
            if self.refused.covers(name, tool_input):
                return Deny(f"The user refused {name} calls like this one for this session. Ask them how to proceed.")
            escape = name == "Bash" and isinstance(tool_input, dict) and tool_input.get("dangerouslyDisableSandbox")
            rules = [] if escape is True or closed else self.granted.suggest(name, tool_input)
            where = f" (saved to {LOCAL_SETTINGS})" if rules and self.saves() else " (this session)"
            always = f"Always allow {', '.join(rules)}{where}" if rules else "Always allow this exact call (this session)"
            options = [
                s.PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once"),
                *([] if closed else [s.PermissionOption(option_id=ALLOW_ALWAYS, name=always, kind="allow_always")]),
                s.PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
                # (refusing only narrows: kept, as --disallowedTools is under managed rules only)
                s.PermissionOption(option_id=REJECT_ALWAYS, name="Always reject (this session)", kind="reject_always"),
            ]
            call_id, announced = self._call_id(name, tool_input)
            title = tool_title(name, tool_input, self.cwd)
            if not announced:
                await self.conn.session_update(self.session_id, acp.start_tool_call(
                    call_id, title, kind=tool_kind(name), status="pending", raw_input=tool_input))
            call = s.ToolCallUpdate(tool_call_id=call_id, title=title, kind=tool_kind(name), status="pending",
                                    content=diffs(name, tool_input, self.cwd) or None, raw_input=tool_input)
            resp = await self.conn.request_permission(session_id=self.session_id, tool_call=call, options=options)
            outcome = resp.outcome
            if not isinstance(outcome, s.AllowedOutcome):  # the editor cancelled the prompt
                self.cancelled = True
                return Deny("The user cancelled the prompt.", interrupt=True)
            choice = outcome.option_id
            if choice == REJECT_ALWAYS:
                self.refused.add(rules or [name])
                o = self.client.options
                self.client.options = replace(o, disallowed_tools=[*o.disallowed_tools, *(rules or [name])])
                return Deny(f"The user refused {name} and asked not to be asked again for such calls. "
                            "Ask them how to proceed.")
            answer = {ALLOW_ONCE: "yes", ALLOW_ALWAYS: "always"}.get(choice, "no")
            self._saving = answer == "always"
            try:
                return self._apply(Answer(answer), name, tool_input, rules, closed)  # type: ignore[arg-type]
            finally:
                self._saving = False

    async def review_plan(self, plan: str) -> PlanReply:
        """ExitPlanMode's plan to the editor (interaction.ReviewPlan): approved, the run goes on
        in the mode chosen (and the editor is told the mode changed); refused, it keeps planning."""
        async with self._lock:
            call_id, announced = self._call_id("ExitPlanMode", None)
            if not announced:
                await self.conn.session_update(self.session_id, acp.start_tool_call(
                    call_id, "Ready to code?", kind="switch_mode", status="pending", raw_input={"plan": plan}))
            call = s.ToolCallUpdate(tool_call_id=call_id, title="Ready to code?", kind="switch_mode", status="pending",
                                    content=[acp.tool_content(acp.text_block(plan))], raw_input={"plan": plan})
            options = [
                s.PermissionOption(option_id="acceptEdits", name="Yes, and accept edits", kind="allow_always"),
                s.PermissionOption(option_id="default", name="Yes, and ask before edits", kind="allow_once"),
                s.PermissionOption(option_id="plan", name="No, keep planning", kind="reject_once"),
            ]
            resp = await self.conn.request_permission(session_id=self.session_id, tool_call=call, options=options)
            outcome = resp.outcome
            if not isinstance(outcome, s.AllowedOutcome):
                self.cancelled = True
                return PlanRefused("The user cancelled the prompt.")
            if outcome.option_id not in ("acceptEdits", "default"):
                return PlanRefused()
            mode: Any = outcome.option_id
            self.client.mode = mode  # the session's later prompts too
            await self.conn.session_update(self.session_id, update_current_mode(mode))
            return PlanApproved(mode)

    async def ask_user(self, questions: tuple[Question, ...]) -> QuestionReply:
        """AskUserQuestion's questions (interaction.AskUser), one permission request each: its
        options are the question's choices, and "skip" declines them all. (A multiSelect question
        gets one choice: a permission request picks one option.)"""
        async with self._lock:
            call_id, announced = self._call_id("AskUserQuestion", None)
            if not announced:
                await self.conn.session_update(self.session_id, acp.start_tool_call(
                    call_id, "Questions", kind="other", status="pending"))
            answers: dict[str, str] = {}
            for q in questions:
                options = [s.PermissionOption(option_id=f"choice-{i}", kind="allow_once",
                                              name=f"{o.label}: {o.description}" if o.description else o.label)
                           for i, o in enumerate(q.options)]
                options.append(s.PermissionOption(option_id="skip", name="Skip the questions", kind="reject_once"))
                call = s.ToolCallUpdate(tool_call_id=call_id, title=q.question, kind="other", status="pending",
                                        content=[acp.tool_content(acp.text_block(f"{q.header}: {q.question}"))])
                resp = await self.conn.request_permission(session_id=self.session_id, tool_call=call, options=options)
                outcome = resp.outcome
                if not isinstance(outcome, s.AllowedOutcome):
                    self.cancelled = True
                    return Declined("The user cancelled the prompt.")
                if not outcome.option_id.startswith("choice-"):
                    return Declined()
                answers[q.question] = q.options[int(outcome.option_id.removeprefix("choice-"))].label
            return Answered(answers)

    async def elicit(self, server: str, request: dict[str, Any]) -> dict[str, Any]:
        """An MCP server's elicitation (AgentOptions.elicit): ACP's own `elicitation/create` when
        the editor advertises it for the request's mode (form or url); otherwise a permission
        request whose options are "Accept" (the form's defaults, offered only when they fill every
        required field) and "Decline". The editor cancelling is the elicitation's cancel."""
        async with self._lock:
            caps = getattr(self.caps, "elicitation", None)
            url = request.get("mode") == "url"
            message = f"MCP server {server}: {request.get('message', '')}"
            if caps is not None and (caps.url if url else caps.form) is not None:
                mode: Any = (s.ElicitationUrlSessionMode(session_id=self.session_id, url=request.get("url", ""),
                                                         elicitation_id=str(request.get("elicitationId") or new_hex(12)))
                             if url else
                             s.ElicitationFormSessionMode(session_id=self.session_id, requested_schema=s.ElicitationSchema
                                                          .model_validate(request.get("requestedSchema") or {})))
                resp = await self.conn.create_elicitation(message=message, mode=mode)
                answer: dict[str, Any] = resp.model_dump(mode="json", exclude_none=True, by_alias=True)
                answer.pop("_meta", None)
                return answer
            return await self._elicit_by_permission(message, request)

    async def _elicit_by_permission(self, message: str, request: dict[str, Any]) -> dict[str, Any]:
        from ..mcp.asks import form_defaults

        defaults = None if request.get("mode") == "url" else form_defaults(request.get("requestedSchema"))
        options = [s.PermissionOption(option_id="decline", name="Decline", kind="reject_once")]
        if defaults is not None:
            shown = ", ".join(f"{k}={v}" for k, v in defaults.items())
            options.insert(0, s.PermissionOption(option_id="accept", kind="allow_once",
                                                 name=f"Accept{f' ({shown})' if shown else ''}"))
        detail = request.get("url") or json.dumps(request.get("requestedSchema") or {}, indent=1)
        call = s.ToolCallUpdate(tool_call_id=f"elicit-{new_hex(12)}", title=message, kind="other", status="pending",
                                content=[acp.tool_content(acp.text_block(f"{message}\n{detail}"))])
        await self.conn.session_update(self.session_id, acp.start_tool_call(
            call.tool_call_id, message, kind="other", status="pending"))
        resp = await self.conn.request_permission(session_id=self.session_id, tool_call=call, options=options)
        outcome = resp.outcome
        if not isinstance(outcome, s.AllowedOutcome):
            return {"action": "cancel"}
        if outcome.option_id == "accept" and defaults is not None:
            return {"action": "accept", "content": defaults}
        return {"action": "decline"}

    def _note(self, line: str) -> None:
        if self._saving:
            self.notes(line.strip())

