"""Room: cli. Owns `!` shell mode: a command typed after `!` runs through the session's Bash tool
behind the same gate, hooks, sandbox and output cap as the model's calls, with no model call;
may import the rooms below cli, cli.render and cli.commands.host.

The command and its output join the conversation as Claude Code records them: two texts,
`<bash-input>CMD</bash-input>` and `<bash-stdout>OUT</bash-stdout><bash-stderr>ERR</bash-stderr>`
(blocks.local_command_texts), a user message written to the session's transcript as soon as the
command ends (client.record_local_command), so exiting loses nothing and a resume sends them;
the next prompt joins that message, so it can refer to them. loopwright's Bash tool gives one
merged output: it is the stdout of a command that succeeded and the stderr of one that failed
(with its exit code).
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from ...messages import TranscriptWriteError
from ..render import visible
from .host import Host

SHOWN_LINES = 12  # output lines shown in the trace (the whole output goes to the conversation)


async def run_shell(host: Host, command: str) -> None:
    """`!command`: run it as a Bash tool call of the user's, show its output, record both in the
    conversation (and the session's transcript) for the next prompt."""
    from ...assemble import build_gate
    from ...blocks import ToolUseBlock

    command = command.strip()
    if not command:
        host.say("  ! runs a shell command: !ls -la (its output goes with your next prompt)")
        return
    options = host.client.options  # what is in force now: the mode, the rules granted this session
    bash = [t for t in options.tools if t.name == "Bash"]
    if not bash:
        host.say("  ✗ this session has no Bash tool (--tools or --disallowedTools took it away): ! cannot run")
        return
    host.say(f"  ! {visible(command)}")
    try:
        _, executor = build_gate(replace(options, tools=bash))
    except (ValueError, TypeError, OSError) as e:
        host.say(f"  ✗ not run: {e}")
        return
    use = ToolUseBlock(f"toolu_user_{uuid.uuid4().hex[:16]}", "Bash",
                       {"command": command, "description": "the user's ! command"})
    outcome = await executor.run([use])
    result = outcome.results[0]
    text = result.content if isinstance(result.content, str) else "".join(
        str(getattr(b, "text", "")) for b in result.content)
    # Recorded before it is shown: what the user has seen is in the session already, so an exit
    # right after it (which interrupts a turn still running) cannot lose it.
    # (a refusal, by the gate or by the user, is an is_error result: the next prompt says so)
    not_kept = None
    try:
        out, err = ("", text) if result.is_error else (text, "")
        await host.client.record_local_command(command, out, err)
    except (RuntimeError, ValueError, OSError, TranscriptWriteError) as e:
        not_kept = f"  ✗ not recorded in the session: {e}"
    lines = text.splitlines() or ["(no output)"]
    mark = "✗" if result.is_error else "⎿"
    for i, ln in enumerate(lines[:SHOWN_LINES]):
        host.say(f"    {mark if i == 0 else ' '} {visible(ln)}")
    if len(lines) > SHOWN_LINES:
        host.say(f"      … +{len(lines) - SHOWN_LINES} lines (all of it goes with your next prompt)")
    if not_kept is not None:  # (after the output it is about)
        host.say(not_kept)
