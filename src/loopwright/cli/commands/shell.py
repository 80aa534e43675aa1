"""Room: cli. Owns `!` shell mode: a command typed after `!` runs through the session's Bash tool
behind the same gate, hooks, sandbox and output cap as the model's calls, with no model call;
may import the rooms below cli, cli.render and cli.commands.host.

The command and its output join the conversation as Claude Code records them: two texts,
`<bash-input>CMD</bash-input>` and `<bash-stdout>OUT</bash-stdout><bash-stderr>ERR</bash-stderr>`,
at the head of the next prompt's user message (host.shell_notes), so that prompt can refer to
them. loopwright's Bash tool gives one merged output: it is the stdout of a command that
succeeded and the stderr of one that failed (with its exit code).
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from ..render import visible
from .host import Host

SHOWN_LINES = 12  # output lines shown in the trace (the whole output goes to the conversation)


def shell_notes(command: str, output: str, failed: bool) -> list[str]:
    """The two texts Claude Code adds to the conversation for `!command`."""
    out, err = ("", output) if failed else (output, "")
    return [f"<bash-input>{command}</bash-input>", f"<bash-stdout>{out}</bash-stdout><bash-stderr>{err}</bash-stderr>"]


async def run_shell(host: Host, command: str) -> None:
    """`!command`: run it as a Bash tool call of the user's, show its output, keep both for the
    next prompt."""
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
    lines = text.splitlines() or ["(no output)"]
    mark = "✗" if result.is_error else "⎿"
    for i, ln in enumerate(lines[:SHOWN_LINES]):
        host.say(f"    {mark if i == 0 else ' '} {visible(ln)}")
    if len(lines) > SHOWN_LINES:
        host.say(f"      … +{len(lines) - SHOWN_LINES} lines (all of it goes with your next prompt)")
    # (a refusal, by the gate or by the user, is an is_error result: the next prompt says so)
    host.shell_notes += shell_notes(command, text, result.is_error)
