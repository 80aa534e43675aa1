"""Room: mentions (beside execute; above tools and the gate). Owns running a custom command's or
a skill's inline shell (`` !`cmd` ``, ```` ```! ```` blocks) as it expands; may import data types,
the gate, hooks, tools.base and commands.

As Claude Code 2.1.332 does: each command goes through the run's Bash permission gate (the same
rules and mode as the model's Bash calls; the command's `allowed-tools` are among the run's allow
rules, and an untrusted project's were left out, so a workspace can only narrow). The gate is
never asked here (nobody waits on a command's text): a command the rules would ask about is
refused, and a refused or failing command fails the whole expansion, naming the pattern. Then
the PreSkillShellCommand hooks: a hook's refusal (exit 2, `decision: block`, a
permissionDecision deny/ask/defer, any `updatedInput`) leaves `[not run: blocked by hook: ...]`
in the text and a warning; `continue: false` stops the expansion. What ran is replaced by its
output (stdout trimmed, then `[stderr]` and stderr). `disableSkillShellExecution` runs nothing:
each command becomes a placeholder. PreToolUse/PostToolUse do not fire: these are no tool calls."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from .commands import inline_shell

if TYPE_CHECKING:
    from .gate import Permissions
    from .hooks import RunHooks
    from .tools.base import Tool, ToolContext

DISABLED = "[shell command not run: disableSkillShellExecution is set]"
NO_OUTPUT = "(no output)"


@dataclass
class ShellExpansion:
    """A text with its inline shell run: the new text, warnings for the user, or why it failed."""

    text: str
    notes: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ShellSource:
    """Whose text it is: the command or skill name (without the slash), Claude Code's
    command_source, and who invoked it (user | claude | other)."""

    name: str
    source: str | None = None
    invoked_by: Literal["user", "claude", "other"] = "user"
    ids: str | None = None  # the commands' tool_use_id prefix (the Skill call's id; None: a new one)


async def run_inline_shell(text: str, who: ShellSource, gate: Permissions, bash: Tool, ctx: ToolContext,
                           hooks: RunHooks | None = None, disabled: bool = False) -> ShellExpansion:
    """`text` with each inline shell command replaced by its output (see the module docstring)."""
    found = inline_shell(text)
    if not found:
        return ShellExpansion(text)
    if disabled:
        for raw, _ in found:
            text = text.replace(raw, DISABLED, 1)
        return ShellExpansion(text)
    out = ShellExpansion(text)
    batch = who.ids or f"{uuid.uuid4()}:inner"
    allowed: list[tuple[str, str]] = []
    for i, (raw, command) in enumerate(found):
        refusal = _refusal(gate, command)
        if refusal is not None:
            out.error = f'Shell command permission check failed for pattern "{raw}": {refusal}'
            return out
        if hooks is not None and hooks.active:
            blocked = await hooks.pre_skill_shell_command(bash.name, command, f"{batch}:preamble-{i}",
                                                          who.name, who.source, who.invoked_by)
            if hooks.halted:
                out.error = f"stopped by a PreSkillShellCommand hook: {hooks.halted}"
                return out
            if blocked is not None:
                shown = f"blocked by hook: {blocked}" if blocked else "blocked by hook"
                out.notes.append(f"Not run in /{who.name}: {command} ({shown})")
                out.text = out.text.replace(raw, f"[not run: {shown}]", 1)
                continue
        allowed.append((raw, command))
    for raw, command in allowed:
        call_ctx = ctx.for_call(f"{batch}:{raw}", 1, bash.name) if bash.takes_context else ctx
        result = await bash.call({"command": command}, call_ctx, True)
        output = result.content if isinstance(result.content, str) else "".join(
            str(getattr(b, "text", "")) for b in result.content)
        if result.is_error:
            out.error = f'Shell command failed for pattern "{raw}": {output.strip()}'
            return out
        output = "" if output.strip() == NO_OUTPUT else output.strip()  # (the Bash tool's word for nothing)
        out.text = out.text.replace(raw, output, 1)
    return out


def _refusal(gate: Permissions, command: str) -> str | None:
    """Why the gate's rules do not let `command` run here (None: they do). An ask is a refusal:
    nobody is asked about a command's text (Claude Code's asksNoHost)."""
    try:
        v = gate.evaluate("Bash", {"command": command})
    except Exception as e:  # odd input (a NUL): fail closed, as the executor does
        return f"the permission check failed: {type(e).__name__}: {e}"
    if v.kind == "allow" or (v.soft and gate.mode is None and gate.can_use_tool is None):
        return None
    if v.kind == "deny":
        return v.reason
    return (f"{v.reason}; a command's inline shell is never asked about: allow it with the command's "
            "allowed-tools or a Bash rule")
