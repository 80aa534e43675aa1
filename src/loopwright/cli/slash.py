"""Room: cli. Owns the slash-command menu, picking a session for /resume and replaying it; may
import the rooms below cli and cli.render.

- The menu: typing `/` lists the built-in commands, the custom commands (commands.py) and the
  skills (skills.py), each with its description, narrowed as one types; Tab or the arrows pick.
- `/resume N|ID`: N must be a number of the list, an ID one of this directory's sessions (or
  a whole session id); nothing else is guessed.
- The replay: the conversation a /resume continues, as the trace showed it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..blocks import ToolResultBlock, WireMessage, wire_blocks
from .render import describe_input, describe_result, short, visible


def menu_entries(cwd: str, sources: list[str], builtins: list[tuple[str, str]],
                 off: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(name, description) of every slash command: `builtins` (cli/commands), custom commands, then
    skills; not those named in `off` (the settings' skillOverrides: runconfig.skills_off)."""
    from ..commands import find_commands
    from ..skills import find_skills

    out = list(builtins)
    taken = {n for n, _ in out} | set(off)
    for c in find_commands(cwd, sources).values():
        if c.name not in taken:
            out.append((c.name, c.description or f"custom command ({c.path.name})"))
            taken.add(c.name)
    for s in find_skills(cwd, sources)[0]:
        if s.name not in taken:
            out.append((s.name, f"skill: {s.description}"))
            taken.add(s.name)
    return out


def slash_completer(entries: Callable[[], list[tuple[str, str]]]) -> Any:
    """A prompt_toolkit completer of the command word of a line that starts with `/` (prompt_toolkit
    is imported here: only the interactive mode needs it)."""
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document

    class SlashCompleter(Completer):
        def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
            text = document.text_before_cursor
            if not text.startswith("/") or any(c.isspace() for c in text):
                return
            for name, desc in entries():
                if name.startswith(text[1:]):
                    yield Completion(f"/{name}", start_position=-len(text), display=f"/{name}",
                                     display_meta=short(desc, 70))

    return SlashCompleter()


def pick_session(arg: str, ids: list[str], exists: Callable[[str], bool]) -> tuple[str | None, str]:
    """The session `/resume arg` means among this directory's sessions `ids` (newest first): a
    number of the list, an id or a unique id prefix of one of them, or a whole id of another
    directory's session. Returns (id, "") or (None, why not)."""
    if arg.isdigit() and len(arg) < 6:  # a list number (a session id prefix is longer)
        n = int(arg)
        if 0 < n <= len(ids):
            return ids[n - 1], ""
        return None, (f"no session {n}: the list has {len(ids)} (see /resume)" if ids
                      else "no saved sessions in this directory")
    matches = [s for s in ids if s == arg] or [s for s in ids if s.startswith(arg)]
    if len(matches) == 1:
        return matches[0], ""
    if len(matches) > 1:
        return None, f"{arg!r} matches {len(matches)} sessions: give more of the id"
    if exists(arg):  # a whole id, wherever it was saved; never a prefix outside this directory
        return arg, ""
    return None, f"no session {arg!r} in this directory (see /resume)"


def replay(history: Iterable[WireMessage], cwd: Path | None) -> list[str]:
    """The lines of a saved conversation as the trace showed it: prompts, the model's text, each
    tool call and its outcome; a hook's feedback as the hook's."""
    from ..loop.state import hook_feedback

    out: list[str] = []
    names: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in history:
        for b in wire_blocks(m):
            kind = b.get("type")
            if kind == "text" and str(b.get("text", "")).strip():
                lines = visible(str(b["text"]).strip()).splitlines()
                if m.get("role") == "user" and str(b["text"]).startswith("<system-reminder>"):
                    if (fed := hook_feedback(str(b["text"]))) is not None:  # a Stop hook's: shown as the hook's
                        said = visible(fed[1].strip()).splitlines() or [""]
                        out.append(f"  ⎿ {fed[0]} hook feedback: {said[0]}")
                        out += [f"    {ln}" for ln in said[1:]]
                    continue  # (the loop's, the memory files' context among them: not the user's words)
                if m.get("role") == "user":
                    out.append(f"› {lines[0]}")
                    out += [f"  {ln}" for ln in lines[1:]]
                else:
                    out += [f"  {ln}" for ln in lines]
            elif kind == "tool_use":
                raw = b.get("input")
                name, inp = str(b.get("name")), raw if isinstance(raw, dict) else {}
                names[str(b.get("id"))] = (name, inp)
                out.append(f"  ⏺ {name}({describe_input(name, inp, cwd)})")
            elif kind == "tool_result":
                name, _ = names.get(str(b.get("tool_use_id")), ("?", {}))
                c = b.get("content")
                text = c if isinstance(c, str) else "".join(str(x.get("text", "")) for x in c or [] if isinstance(x, dict))
                r = ToolResultBlock(str(b.get("tool_use_id")), text, bool(b.get("is_error")))
                out.append(f"    ⎿ {'✗' if r.is_error else '✓'} {name}: {describe_result(name, r, cwd)}")
    return out
