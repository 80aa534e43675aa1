"""Room: cli. Owns the REPL's conversation commands (/clear, /compact, /resume, /rewind, /expand,
/cost, /export); may import the rooms below cli, cli.render, cli.slash and cli.commands.host.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..render import visible
from ..slash import pick_session, replay
from .host import Command, Host


async def clear(host: Host, arg: str) -> None:
    host.client.clear()
    host.say("  ● new conversation")


async def cost(host: Host, arg: str) -> None:
    rs = host.client.results
    inp = sum(r.usage.total_input_tokens for r in rs)
    out = sum(r.usage.output_tokens for r in rs)
    calls = sum(r.model_calls for r in rs)
    host.say(f"  {len(rs)} prompts · {calls} model calls · {inp} input / {out} output tokens · "
             f"${host.client.total_cost_usd:.4f} · session {host.client.session_id or '(none yet)'}")


async def compact(host: Host, arg: str) -> None:
    from ...context import CompactError

    host.say("  ✂ compacting…")
    try:
        r = await host.client.compact(arg or None)
    except CompactError as e:
        host.say(f"  ✗ not compacted: {e}")
        return
    host.say(f"  ✂ compacted: {r.summarized_messages} messages summarized, {r.kept_messages} kept · "
             f"~{r.pre_tokens} → ~{r.post_tokens} tokens · ${r.cost_usd:.4f}")


async def resume(host: Host, arg: str) -> None:
    from ...sessions import InvalidSessionId, JsonlSessionStore, check_session_id, list_sessions

    o = host.base_options
    # (the list and its numbers: the 15 newest, the others not read; an id: any of this directory's)
    infos = list_sessions(host.cwd(), o.sessions_dir, limit=None if arg and not arg.isdigit() else 15)
    if not arg:
        if not infos:
            host.say("  no saved sessions in this directory")
        for i, s in enumerate(infos[:15], 1):
            host.say(f"  {i:2}. {s.session_id[:8]}  {s.modified}  {s.prompts} prompts  ${s.cost_usd:.4f}  "
                     f"{s.last_prompt[:50]!r}")
        if infos:
            host.say("  /resume N (or an id) to continue one")
        return
    if not arg.isdigit():
        try:  # an id that is a path: nothing is looked up
            check_session_id(arg)
        except InvalidSessionId as e:
            host.say(f"  {e}")
            return
    store = JsonlSessionStore(o.sessions_dir)
    sid, why = pick_session(arg, [s.session_id for s in infos[:15]] if arg.isdigit() else
                            [s.session_id for s in infos], lambda x: (p := store.find(x)) is not None and p.stem == x)
    if sid is None:
        host.say(f"  {why}")
        return
    loaded = store.load(sid)
    host.client.resume(sid)
    host.say(f"  ● resuming {sid[:8]}: {len(loaded.history)} messages; the next prompt continues it")
    for line in replay(loaded.history, Path(host.cwd())):
        host.say(line)
    host.say("  ● (end of the resumed conversation)")


async def expand(host: Host, arg: str) -> None:
    if arg and not arg.isdigit():
        host.say("  /expand N: N is the number after /expand in a result's '… +K lines' line")
        return
    error = host.renderer.toggle(int(arg) if arg else None)
    if error:
        host.say(f"  {error}")


async def rewind(host: Host, arg: str) -> None:
    from ...sessions.rewind import conflict_text, rewind_conflicts, rewind_points
    from ...sessions.rewind import rewind as do_rewind

    o = host.base_options
    sid = host.client.session_id or host.client.options.resume  # (a rewind or /resume sets the latter)
    if sid is None or not o.persist_session:
        host.say("  nothing to rewind yet (or session persistence is off)")
        return
    points = rewind_points(sid, o.sessions_dir)
    if not arg:
        for i, pt in enumerate(points, 1):
            files = f"  ({len(pt.files)} files)" if pt.files else ""
            host.say(f"  {i:2}. {pt.uuid[:8]}  {pt.prompt[:60]!r}{files}")
        host.say("  /rewind N (or a uuid) restores files and conversation to before that prompt")
        return
    match = [p for p in points if p.uuid.startswith(arg)]
    point = points[int(arg) - 1] if arg.isdigit() and 0 < int(arg) <= len(points) else (
        match[0] if len(match) == 1 else None)
    if point is None:
        host.say(f"  no prompt {arg!r} (see /rewind)")
        return
    conflicts = rewind_conflicts(sid, point.uuid, sessions_dir=o.sessions_dir)
    if conflicts:  # changed since the agent's edit: show what would be lost, and ask (one prompt: in order)
        warning = "".join(f"  {visible(ln)}\n" for ln in conflict_text(conflicts).splitlines())
        if (await host.ask_line(f"{warning}  rewind anyway? [y/N] ")).strip().lower() not in ("y", "yes"):
            host.say("  not rewound")
            return
    report = do_rewind(sid, point.uuid, sessions_dir=o.sessions_dir)
    host.say("\n".join("  " + ln for ln in report.text().splitlines()))
    host.client.resume(sid)  # the next prompt continues from the cut conversation


async def export(host: Host, arg: str) -> None:
    """The conversation as Markdown (or JSON for a .json name) in FILE (default: a dated name in
    the working directory); never over an existing file."""
    import time

    from ...home import open_private

    history = host.client.history or []
    if not history:
        host.say("  nothing to export yet")
        return
    name = arg or time.strftime("loopwright-conversation-%Y%m%d-%H%M%S.md")
    path = Path(host.cwd(), name).expanduser()
    if path.suffix == ".json":
        body = json.dumps(history, ensure_ascii=False, indent=1)
    else:
        body = "\n".join(replay(history, Path(host.cwd()))) + "\n"
    try:
        fd = open_private(path, os.O_WRONLY | os.O_EXCL)
    except FileExistsError:
        host.say(f"  {path} already exists; not changed (give another name: /export FILE)")
        return
    except OSError as e:
        host.say(f"  cannot write {path}: {e}")
        return
    with open(fd, "w", encoding="utf-8") as f:
        f.write(body)
    host.say(f"  exported {len(history)} messages to {path}")


COMMANDS = [
    Command("clear", "start a new conversation (a new session)", clear),
    Command("compact", "summarize the conversation so far to free context (text: what to keep)", compact,
            usage="/compact [text]"),
    Command("resume", "list this directory's sessions, or continue one", resume, usage="/resume [N|ID]"),
    Command("rewind", "list the prompts, or rewind files and conversation to before one", rewind,
            usage="/rewind [N|UUID]", asks=True),
    Command("expand", "show tool result N in full, in place (no N: all; also Ctrl-O)", expand, busy_ok=True,
            usage="/expand [N]"),
    Command("cost", "tokens and cost of this conversation", cost, busy_ok=True),
    Command("export", "write the conversation to FILE (Markdown; .json: the messages)", export, usage="/export [FILE]"),
]
