"""Room: loop. The prompt's message before the first call: an MCP prompt or a custom command
expanded (UserPromptExpansion hooks, the command's inline shell), the SessionStart and
UserPromptSubmit hooks' context and the `@file` mentions added to it (each a rewrite of h's last
message: History.replace_last)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..blocks import TextBlock, prompt_block
from ..messages import AssistantMessage, Message, SystemMessage

if TYPE_CHECKING:
    from .run import Run


def skill_shell_note(note: str) -> SystemMessage:
    """A warning about a command's or skill's inline shell (a hook refused one), as Claude Code's."""
    return SystemMessage("informational", {"content": note, "level": "warning", "tag": "skill_shell_hook"})


async def inline_shell(run: Run, text: str, name: str, source: str | None,
                       invoked_by: Literal["user", "claude", "other"],
                       ids: str | None = None) -> tuple[str, list[str], str | None]:
    """A command's or skill's text with its inline shell run through this run's Bash gate and
    PreSkillShellCommand hooks (skillshell.py): (the text, warnings for the user, why it failed)."""
    from ..skillshell import ShellSource, run_inline_shell
    from ..tools.builtin import make_bash_tools

    d = run.deps
    bash = d.tools.get("Bash") or make_bash_tools()[0]  # (Claude Code runs it without a Bash tool too)
    shell = await run_inline_shell(text, ShellSource(name, source, invoked_by, ids), d.executor.permissions, bash,
                                   d.executor.ctx, d.hooks, d.settings is not None and d.settings.disable_skill_shell)
    return shell.text, shell.notes, shell.error


async def mcp_prompt(run: Run) -> None:
    """A prompt `/mcp__<server>__<prompt> args` becomes that MCP prompt's messages (mcp/prompts.py)."""
    h, mcp = run.state.h, run.deps.mcp
    content = h[-1].get("content") if mcp is not None and run.is_top and h and h[-1].get("role") == "user" else None
    at = prompt_block(content) if mcp is not None and isinstance(content, list) else None
    if mcp is None or not isinstance(content, list) or at is None \
            or not str(content[at].get("text", "")).startswith("/mcp__"):
        return
    line = str(content[at]["text"]).strip()
    blocks, why = await mcp.expand_prompt(line)
    if why:
        run.warnings.append(why)
    if blocks:
        h.replace_last({"role": "user", "content": [*content[:at], *blocks, *content[at + 1:]]})
        name, _, args = line[1:].partition(" ")
        run.expanded = ("mcp_prompt", name, args.strip(), None, line)  # UserPromptExpansion's fields


def late_hook_output(run: Run) -> None:
    """What `async` hooks of the conversation's earlier runs said after their run had ended
    (loop/watch.py shares the list): each goes before this prompt as a system reminder, as Claude
    Code 2.1.332 sends it with the next prompt of a session."""
    texts = run.deps.hooks.take_late_texts() if run.is_top else []
    if texts:
        h = run.state.h
        content = h[-1]["content"]
        at = prompt_block(content)
        at = len(content) if at is None else at
        said = [TextBlock(f"<system-reminder>\n{t}\n</system-reminder>").to_wire() for t in texts]
        h.replace_last({"role": "user", "content": [*content[:at], *said, *content[at:]]})


async def start_hooks(run: Run, prompt: str) -> PromptStop | str | None:
    """SessionStart and UserPromptSubmit. Returns how a UserPromptSubmit hook stopped the prompt
    (ended as Claude Code ends it: prompt_stopped), an earlier hook's `continue: false` (the run's
    error), or None to go on."""
    hooks, h = run.deps.hooks, run.state.h
    late_hook_output(run)
    if not hooks.active:
        return None
    trigger = run.deps.options.setup_trigger
    if trigger is not None and len(h) == 1 and run.is_top:  # --init / --maintenance: the first query's
        await hooks.setup(trigger)  # (its `continue: false` stops the prompt at UserPromptSubmit)
    extra = [await hooks.session_start("resume" if len(h) > 1 else "startup")]
    if run.memory is not None and len(h) == 1:  # InstructionsLoaded: each memory file sent with the prompt
        kinds = {"user": "User", "project": "Project", "local": "Local"}
        for f in run.memory.files:
            await hooks.instructions_loaded(str(f.path), kinds.get(f.scope, "Project"),
                                            "include" if f.scope == "import" else "session_start")
    submitted = await hooks.user_prompt_submit(prompt)
    if submitted.block is not None:
        return PromptStop(submitted.block, True, None)
    if submitted.halted is not None:
        return submitted.halted
    extra.append(submitted.context)
    context = [TextBlock(c).to_wire() for c in extra if c]
    if context:
        h.replace_last({"role": "user", "content": [*h[-1]["content"], *context]})
    return None


@dataclass(slots=True)
class PromptStop:
    """Why a prompt stopped before any model call: a UserPromptSubmit or UserPromptExpansion
    hook's block (`by_hook`), or the command's inline shell refused or failed, or a skill with
    `user-invocable: false`, or a command or skill the settings' skillOverrides turn `off`, was
    typed. `local_command`: Claude Code's field of the result, "custom" when a custom command's
    expansion stopped it (None after UserPromptSubmit, as Claude Code)."""

    text: str
    by_hook: bool
    local_command: str | None = "custom"


async def expand_command(run: Run) -> tuple[PromptStop | None, list[SystemMessage]]:
    """After UserPromptSubmit: the prompt's custom command (options.slash_command) or MCP
    prompt expands, with the UserPromptExpansion hooks and the command's inline shell
    (skillshell.py). Returns why the prompt stops (None: it goes on) and the warnings to show."""
    ex, hooks, h = run.deps.options.slash_command, run.deps.hooks, run.state.h
    if ex is not None and run.is_top:
        run.expanded = ("slash_command", ex.command.name, ex.args, ex.command.source, ex.line)
    if run.expanded is None:
        return None, []
    kind, name, args, source, line = run.expanded
    settings = run.deps.settings
    if ex is not None and run.is_top and settings is not None and settings.skill_overrides.get(name) == "off":
        return PromptStop(f"Skill \"{name}\" is disabled via skillOverrides. Remove the override from your settings "
                          "to run it. If your organization set it, only an admin can remove it.", False), []
    if ex is not None and run.is_top and not ex.command.user_invocable:  # (Claude Code's words)
        return PromptStop(f"This skill can only be invoked by Claude, not directly by users. Ask Claude to use "
                             f"the \"{name}\" skill for you.", False), []
    context = None
    if hooks.active:
        expanded = await hooks.user_prompt_expansion(kind, name, args, source, line)
        if expanded.block is not None:
            return PromptStop(expanded.block, True), []
        context = expanded.context
    notes: list[SystemMessage] = []
    if ex is not None and run.is_top:
        text_now, warned, error = await inline_shell(run, ex.prompt, name, source, "user")
        if error is not None:
            return PromptStop(error, False), []
        notes = [skill_shell_note(n) for n in warned]
        content = h[-1]["content"]
        first = prompt_block(content)  # (after the records of a `!` run before it)
        said = f"<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n" + (
            f"<command-args>{args}</command-args>\n" if args else "")  # which command ran, as Claude Code says it
        text: list[dict[str, Any]] = [{"type": "text", "text": said}, {"type": "text", "text": text_now}]
        h.replace_last({"role": "user", "content": [*text, *content] if first is None
                        else [*content[:first], *text, *content[first + 1:]]})
    if context:
        h.replace_last({"role": "user", "content": [*h[-1]["content"], TextBlock(context).to_wire()]})
    return None, notes


def prompt_stopped(run: Run, stop: PromptStop) -> list[Message]:
    """The end of a prompt a UserPromptSubmit hook or its command's expansion stopped, as Claude
    Code 2.1.332 ends it (seen on the same scripted turns): no model call; the prompt leaves the
    conversation and is not written to the transcript (a `!` command's records before it stay); a
    hook's block is shown as a warning (system `informational`, `prevent_continuation`, kept in the
    transcript), an inline shell's failure as an assistant message of model `<synthetic>` (shown,
    never kept); the result is a `success` (exit 0, num_turns 0) whose text is the reason, with
    `local_command` "custom" after an expansion."""
    h = run.state.h
    first = prompt_block(h[-1]["content"])
    kept = list(h[-1]["content"][:first]) if first else []
    if kept:
        h.replace_last({"role": "user", "content": kept})
    else:
        h.drop_last()
    shown: Message = (run.persist(SystemMessage("informational", {"content": stop.text, "level": "warning",
                                                                  "prevent_continuation": True}))
                      if stop.by_hook else AssistantMessage([TextBlock(stop.text)], "<synthetic>", "end_turn"))
    result = run.result("success")
    result.result, result.local_command = stop.text, stop.local_command
    return [shown, run.persist(result)]


async def include_mentions(run: Run, prompt: str) -> None:
    """The files the prompt mentions (`@path`), appended to its message (mentions.py)."""
    if "@" not in prompt:  # no mention (most prompts): mentions.py, its pattern, are not even loaded
        return
    from ..mentions import mention_blocks
    from ..tools.builtin import make_read_tool

    d = run.deps
    read = d.tools.get("Read") or make_read_tool()
    blocks, denied = await mention_blocks(prompt, d.cwd, d.executor.permissions.decide, read, d.executor.ctx)
    h = run.state.h
    h.replace_last({**h[-1], "content": [*h[-1]["content"], *blocks]})
    run.state.denials += denied
