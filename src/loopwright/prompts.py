"""Room: bases (imports tools.base for types only). Owns the system prompt: loopwright's own
coding-agent prompt (what the CLI sends, and the Agent SDK's `{"type": "preset", "preset":
"claude_code"}` names) and how a run's options make its system text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tools.base import Tool

PRESETS = ("claude_code", "loopwright")  # the SDK's preset name, and ours for the same prompt


def default_system_prompt(cwd: str | Path, tools: list[Tool]) -> str:
    """The coding agent's system prompt. Byte-stable for a given cwd and tool set (no dates,
    no random ids), so a provider's prompt cache keeps hitting across runs."""
    names = ", ".join(t.name for t in tools) or "none"
    here = Path(cwd)
    git = "yes" if any((d / ".git").exists() for d in (here, *here.parents)) else "no"
    return (
        "You are loopwright, a coding agent working in a software project on the user's machine.\n"
        f"Working directory: {cwd}\n"
        f"Is a git repository: {git}\n"
        f"Platform: {sys.platform}\n"
        f"Tools: {names}.\n\n"
        "How to work:\n"
        "- Use the tools to look before you change anything: read the relevant files, run the tests.\n"
        "- Use absolute paths (or paths relative to the working directory) for file tools.\n"
        "- Read a file before you Edit or Write it; keep edits small and focused on the task.\n"
        "- Calls that only read (Read, Glob, Grep) may be issued together in one turn; they run concurrently.\n"
        "- A refused tool call comes back as an error result: do not retry it unchanged; "
        "find another way or explain what permission is needed.\n"
        "- After a change, verify it (run the tests or the command that shows it works).\n"
        "- Be concise. When done, answer in a few sentences: what was wrong, what you changed, "
        "and how you verified it."
    )


def check_system_prompt(value: Any) -> None:
    """A string, None, or the Agent SDK's preset {"type": "preset", "preset": "claude_code",
    "append"?: str}. Raises TypeError / ValueError naming the fix."""
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, dict) or value.get("type") != "preset":
        raise TypeError('system_prompt must be a string, None, or {"type": "preset", "preset": "claude_code", '
                        f'"append": "..."}}, not {value!r:.100}')
    if value.get("preset") not in PRESETS:
        raise ValueError(f"system_prompt preset {value.get('preset')!r} is unknown: use \"claude_code\" "
                         "(loopwright's own coding-agent prompt)")
    if not isinstance(value.get("append", ""), str):
        raise TypeError("system_prompt's \"append\" must be a string")


def system_prompt_text(system_prompt: str | dict[str, Any] | None, append: str | None, cwd: Path,
                       tools: list[Tool]) -> str | None:
    """A run's system text: the prompt (a preset: loopwright's coding-agent prompt and its
    "append"), then `append_system_prompt`; None when there is none."""
    parts: list[str | None]
    if isinstance(system_prompt, dict):
        parts = [default_system_prompt(cwd, tools), system_prompt.get("append"), append]
    else:
        parts = [system_prompt, append]
    return "\n\n".join(p for p in parts if p) or None
