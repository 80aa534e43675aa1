"""Room: bases (hooks). Owns the events of a prompt's expansion and display: UserPromptExpansion,
PreSkillShellCommand, Setup and MessageDisplay (Claude Code 2.1.332's stdin fields and stdout
decisions); may import hooks.output and hooks.results (imported where the event runs hooks).

A mixin of RunHooks (hooks.events), apart so each module stays small: it uses RunHooks' `_fire`,
`_notes` and `_report`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .output import cap, contexts, join, specific

if TYPE_CHECKING:
    from .results import ExpansionResult, Outcome


class PromptEvents:
    """UserPromptExpansion, PreSkillShellCommand, Setup and MessageDisplay (RunHooks has them)."""

    if TYPE_CHECKING:
        async def _fire(self, event: str, target: str | None, data: dict[str, Any],
                        tool_use_id: str | None = None, tool_input: dict[str, Any] | None = None) -> list[Outcome]: ...

        def _notes(self, event: str, outs: list[Outcome], blocking_to_user: bool = False) -> None: ...

        def _report(self, event: str, label: str, kind: str, message: str) -> None: ...

    async def user_prompt_expansion(self, expansion_type: str, command_name: str, command_args: str,
                                    command_source: str | None, prompt: str) -> ExpansionResult:
        """A `/name args` prompt expands (expansion_type slash_command: a custom command;
        mcp_prompt: an MCP server's prompt); matchers match `command_name`. Exit 2, `decision:
        block` or `continue: false` stop the prompt, with Claude Code's message (prompt_block);
        additionalContext goes to the model with the prompt."""
        from .results import ExpansionResult

        data: dict[str, Any] = {"expansion_type": expansion_type, "command_name": command_name,
                                "command_args": command_args, "prompt": prompt}
        if command_source is not None:
            data["command_source"] = command_source
        outs = await self._fire("UserPromptExpansion", command_name, data)
        self._notes("UserPromptExpansion", outs)
        block = prompt_block("UserPromptExpansion", outs, prompt)
        return ExpansionResult(block=block) if block is not None else \
            ExpansionResult(context=join(contexts(outs, plain_stdout=False)))

    async def pre_skill_shell_command(self, tool_name: str, command: str, tool_use_id: str, command_name: str,
                                      command_source: str | None, invoked_by: str) -> str | None:
        """Before a command's or skill's inline shell command runs (matchers match `tool_name`,
        Bash): the refusal's reason ("" for none given), or None to run it. Exit 2, `decision:
        block`, permissionDecision deny/ask/defer and any `updatedInput` refuse (a skill cannot
        wait for an approval, and a changed command is not run), as in Claude Code."""
        data: dict[str, Any] = {"tool_name": tool_name, "tool_input": {"command": command},
                                "tool_use_id": tool_use_id, "command_name": command_name,
                                "invoked_by": invoked_by}
        if command_source is not None:
            data["command_source"] = command_source
        outs = await self._fire("PreSkillShellCommand", tool_name, data, tool_use_id, {"command": command})
        self._notes("PreSkillShellCommand", outs)
        reasons: list[str] = []
        refused = False
        for o in outs:
            if o.error:  # a check that crashed or timed out did not approve: fail closed
                refused = True
                reasons.append("the hook couldn't run")
                continue
            if o.exit_code == 2:
                refused = True
                reasons.append(o.stderr.strip())
                continue
            spec = specific(o)
            decision = spec.get("permissionDecision")
            reason = str(spec.get("permissionDecisionReason") or o.out.get("reason") or "")
            if o.out.get("decision") == "block" or decision == "deny":
                refused = True
                reasons.append(reason)
            elif decision in ("ask", "defer"):
                refused = True
                reasons.append(f"{reason + '; ' if reason else ''}the hook asked for approval, which a skill "
                               "can't wait for")
            elif spec.get("updatedInput") is not None:
                refused = True
                reasons.append("the hook changed the command, which isn't supported here")
            elif decision not in (None, "allow"):
                self._report("PreSkillShellCommand", o.label, "error", f"unknown permissionDecision {decision!r}")
        return cap("; ".join(r for r in reasons if r)) if refused else None

    async def setup(self, trigger: str) -> None:
        """`--init`/`--init-only` (trigger init) or `--maintenance` (maintenance), before the
        session starts; matchers match `trigger`. Exit 2 shows stderr to the user and blocks
        nothing; `continue: false` ends the run. Its additionalContext and plain stdout do not
        reach the model: Claude Code 2.1.332 does not send them in -p or an SDK session (seen on
        the same scripted turns), so a hook's additionalContext is named as not honoured."""
        outs = await self._fire("Setup", trigger, {"trigger": trigger})
        self._notes("Setup", outs, blocking_to_user=True)

    async def message_display(self, turn_id: str, message_id: str, index: int, final: bool,
                              delta: str) -> str | None:
        """Newly completed lines of an assistant message about to be shown (`final` on its last
        flush): the text to show instead (displayContent), or None to show `delta`. Display-only:
        the message kept and what the model sees are untouched."""
        outs = await self._fire("MessageDisplay", None, {"turn_id": turn_id, "message_id": message_id,
                                                         "index": index, "final": final, "delta": delta})
        self._notes("MessageDisplay", outs, blocking_to_user=True)
        shown = None
        for o in outs:
            value = specific(o).get("displayContent")
            if isinstance(value, str):
                shown = value
        return shown



def prompt_block(event: str, outs: list[Outcome], prompt: str) -> str | None:
    """Why `event`'s hooks (UserPromptSubmit, UserPromptExpansion) stop `prompt`, worded as Claude
    Code 2.1.332 words it (seen on the same scripted turns): `continue: false` anywhere wins ("Operation stopped by hook[:
    stopReason]"); else the first blocking hook in order: exit 2 as `[command]: stderr` (its
    stderr as written, "No stderr output" when there was none), `decision: block` as its reason
    ("Blocked by hook" when it gave none), then the original prompt unless that hook (not
    another) set `suppressOriginalPrompt`. None: the prompt goes on."""
    for o in outs:
        if o.out.get("continue") is False:
            why = o.out.get("stopReason")
            return cap(f"Operation stopped by hook: {why}" if why else "Operation stopped by hook")
    for o in outs:
        if o.exit_code == 2:
            why = f"[{o.command or o.label}]: {o.stderr or 'No stderr output'}"
        elif o.out.get("decision") == "block":
            why = str(o.out.get("reason") or "Blocked by hook")
        else:
            continue
        text = f"{event} operation blocked by hook:\n" + cap(why)
        return text if specific(o).get("suppressOriginalPrompt") is True else f"{text}\n\nOriginal prompt: {prompt}"
    return None
