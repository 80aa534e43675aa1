"""Room: cli. Owns /add-dir (another working directory for the next prompts), /doctor (what is
installed and reachable: rg, bwrap, git, tmux, the provider's API) and /todos (the model's task
list, as its last TodoWrite left it); may import the rooms below cli and cli.commands' host and
panel.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from .host import Command, Host
from .panel import Panel


async def add_dir(host: Host, arg: str) -> None:
    if not arg:
        dirs = host.client.options.add_dirs or []
        host.say("  working directories: " + ", ".join([host.cwd(), *map(str, dirs)]) + " · /add-dir PATH adds one")
        return
    path = Path(host.cwd(), Path(arg).expanduser()).resolve()
    if not path.is_dir():
        host.say(f"  ✗ {path} is not a directory: not added")
        return
    o = host.client.options
    if path in [Path(host.cwd(), Path(d)).resolve() for d in o.add_dirs or []]:
        host.say(f"  {path} is a working directory already")
        return
    await host.client.add_dir(path)  # DirectoryAdded hooks hear of it
    host.asker.granted.add_dir(path)
    host.say(f"  ✓ {path} added: the tools may read and (with approval) write there from the next prompt")


async def doctor(host: Host, arg: str) -> None:
    import asyncio
    import sys

    from ... import __version__
    from .model import model_name

    lines: list[str] = [f"loopwright {__version__} · Python {sys.version.split()[0]} · {sys.executable}"]
    for tool, why in (("rg", "Grep and Glob (ripgrep)"), ("bwrap", "the OS sandbox (bubblewrap)"),
                      ("git", "checkpoints' repository checks, /init"), ("tmux", "nothing (tests)"),
                      ("node", "Node MCP servers")):
        found = shutil.which(tool)
        lines.append(f"{'✓' if found else '✗'} {tool:<6} {found or 'not found'}  ({why})")
    c = host.client
    name = model_name(c.model if c.model is not None else c.options.model)
    lines.append(f"model: {name}")
    reach = await asyncio.to_thread(_reachable, c.options.base_url, name)
    lines.append(reach)
    host.open_panel(Panel("Doctor", lines))


def _reachable(base_url: str | None, model: str) -> str:
    """Whether the provider's API answers (one HTTP request, 5 s)."""
    import os
    import urllib.error
    import urllib.request

    if model.startswith("scripted:"):
        return "✓ provider: a scripted model (no API)"
    openai = model.startswith(("openai:", "responses:"))
    from urllib.parse import urlsplit, urlunsplit

    from ...models.http import shown_url

    url = base_url or os.environ.get("OPENAI_BASE_URL" if openai else "ANTHROPIC_BASE_URL") or (
        "https://api.openai.com/v1" if openai else "https://api.anthropic.com")
    # Shown as errors show it: a gateway's user:password@ and ?key= stay off the screen (and the
    # panel's log); the request goes to its host (urllib took the user part for the host name).
    shown = shown_url(url)
    try:
        u = urlsplit(url)
        target = urlunsplit((u.scheme, u.netloc.rpartition("@")[2],
                             u.path.rstrip("/") + ("/models" if openai else "/v1/models"), u.query, ""))
        with urllib.request.urlopen(target, timeout=5) as r:
            return f"✓ provider API {shown} answers (HTTP {r.status})"
    except urllib.error.HTTPError as e:  # an answer (401 without a key) is reachable
        return f"✓ provider API {shown} answers (HTTP {e.code})"
    except (OSError, ValueError) as e:
        why = str(getattr(e, "reason", e)).replace(url, shown or "")
        return f"✗ provider API {shown} unreachable: {why}"


def last_todos(history: list[Any]) -> list[dict[str, Any]] | None:
    """The todos of the conversation's last TodoWrite call (None: it never wrote one)."""
    for m in reversed(history):
        content = m.get("content") if isinstance(m, dict) else None
        for b in reversed(content if isinstance(content, list) else []):
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "TodoWrite":
                todos = (b.get("input") or {}).get("todos")
                return [t for t in todos if isinstance(t, dict)] if isinstance(todos, list) else []
    return None


async def todos(host: Host, arg: str) -> None:
    items = last_todos(host.client.history or [])
    if items is None:
        host.open_panel(Panel("Todos", ["no task list in this conversation yet (the model writes one with TodoWrite)"]))
        return
    marks = {"completed": "☒", "in_progress": "◐", "pending": "☐"}
    host.open_panel(Panel("Todos", [f"{marks.get(str(t.get('status')), '?')} {t.get('content', '')}" for t in items]
                          or ["the task list is empty"]))


COMMANDS = [
    Command("add-dir", "add a working directory for the next prompts", add_dir, usage="/add-dir [PATH]"),
    Command("doctor", "what is installed (rg, bwrap, git) and whether the provider answers", doctor, busy_ok=True),
    Command("todos", "the model's task list, as its last TodoWrite left it", todos, busy_ok=True),
]
