"""Room: loop. Between steps, before each model request: the settings files and the watched files
that changed since the last look (one stat() each; a file written within its timestamp tick is
read too: mtime.py), with Claude Code's ConfigChange and FileChanged hooks fired for them. A settings change no hook blocked is applied to the run's permission rules
(the next tool call is judged by them); what cannot change mid-run is named once.

Claude Code watches with file-system events (chokidar) and fires within about a second of a
write; loopwright looks at the moments its loop can act on a change (before a model request),
so a change is never missed for having come just before a request, and costs no thread."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any

from ..messages import SystemMessage
from ..mtime import Stamp, stamp, unchanged
from ..runconfig import permission_rules
from ..settings import (
    OWN_WRITES,
    SETTING_SOURCES,
    SettingsError,
    load_settings,
    read_json_file,
    settings_scope,
)

if TYPE_CHECKING:
    from ..settings import Settings
    from .run import Run

# The keys whose change loopwright applies mid-run; any other changed key is named (it takes
# effect when the next run starts).
LIVE_KEYS = frozenset({"allow", "ask", "deny"})  # of "permissions"
MAX_WATCHED = 1000  # files FileChanged watches (a watched directory's files count): the rest are named
_SOURCES = {"user": "user_settings", "project": "project_settings", "local": "local_settings"}


@dataclass(slots=True, eq=False, repr=False)  # (identity: a conversation's mutable state)
class Watch:
    """What a run watches between its steps: its settings files (their stamps, and the objects it
    applied) and FileChanged's files. A conversation (LoopwrightClient, the SDK's and ACP's
    sessions) keeps one for all its runs: a change between two prompts fires at the next run's
    first step, and that run starts with the versions applied so far (a blocked change stays out).
    A run of its own gets one at its first step."""

    settings: Settings | None = None
    stamps: dict[Path, Stamp] = field(default_factory=dict)
    applied: dict[Path, Any] = field(default_factory=dict)
    files: dict[str, Stamp] = field(default_factory=dict)  # FileChanged: each watched file's stamp
    roots: list[str] = field(default_factory=list)  # and the paths watched (a directory: its files)
    named: set[str] = field(default_factory=set)  # what was named once already
    active: bool = False
    dynamic: list[str] = field(default_factory=list)  # the hooks' watchPaths, as the last run left them
    late: list[str] = field(default_factory=list)  # what `async` hooks said, shared by the runs (prompt.py)

    def adopt(self, run: Run) -> Watch:
        """This watch for `run` (built with `self.applied` as its settings files' contents)."""
        run.state.watch = self
        self.settings = run.deps.settings if run.is_top else None  # (a subagent's gate is its parent's)
        if self.settings is not None:
            for path, (mark, data) in self.settings.seen.items():  # the files read from disk
                self.stamps.setdefault(path, mark)
                self.applied.setdefault(path, data)
        hooks = run.deps.hooks
        hooks.state.watch_paths[:0] = self.dynamic
        if run.is_top:  # an `async` hook that exits after its run ended speaks with the next prompt
            self.late += hooks.state.late
            hooks.state.late = self.late
        self.active = run.is_top and (self.settings is not None or bool(hooks.registry.matchers.get("FileChanged")))
        return self


def watching(run: Run) -> bool:
    """Whether the run watches anything: it read settings files, or has FileChanged hooks (known
    at its first step; a run with neither pays one attribute read a step)."""
    w: Watch | None = run.state.watch
    if w is None:
        w = Watch().adopt(run)
    return w.active


async def between_steps(run: Run) -> AsyncIterator[SystemMessage]:
    """ConfigChange for each settings file changed since the last step, then FileChanged for
    each watched file; what happened, as SystemMessages (hook reports included)."""
    w = run.state.watch
    assert w is not None
    if w.settings is not None:
        for m in await _settings_changed(run, w):
            yield m
    if run.deps.hooks.registry.matchers.get("FileChanged"):
        for m in await _files_changed(run, w):
            yield m
    for m in run.hook_messages():
        yield m


# --- ConfigChange ----------------------------------------------------------------------------

async def _settings_changed(run: Run, w: Watch) -> list[SystemMessage]:
    out: list[SystemMessage] = []
    accepted = False
    for path, old in list(w.stamps.items()):
        new = stamp(path)
        w.stamps[path] = new  # (an unchanged file's too: its stamp settles once out of its tick window)
        if unchanged(path, old, new):
            continue
        try:
            data = read_json_file(path) if new is not None else None
        except SettingsError as e:
            out.append(_said(path, False, f"{e}; the version read before stays"))
            continue
        if data == w.applied.get(path):
            continue  # touched, or written back as it was: nothing changed
        own = OWN_WRITES.get(path)
        if new is not None and own is not None and unchanged(path, own, new):  # loopwright's own write ("don't ask again")
            w.applied[path], accepted = data, True
            continue
        source = _SOURCES.get(settings_scope(str(path)), "project_settings")
        hooks = run.deps.hooks
        blocked = await hooks.config_change(source, str(path)) if hooks.active else None
        if blocked is not None:
            out.append(_said(path, False, f"a ConfigChange hook blocked the change, so it was not applied: {blocked}",
                             source))
            continue
        later = _not_live(w.applied.get(path), data)
        w.applied[path], accepted = data, True
        note = f"; {', '.join(later)} take effect when the next run starts" if later else ""
        out.append(_said(path, True, f"applied: the permission rules now in force are the new ones{note}", source))
    if accepted:
        out += _apply(run, w)
    return out


def _apply(run: Run, w: Watch) -> list[SystemMessage]:
    """The run's permission rules, from the settings files as applied now (trust narrows an
    untrusted workspace's files as when the run started) and the options' flags."""
    assert w.settings is not None
    o = run.deps.options
    try:
        new = load_settings(run.deps.cwd, SETTING_SOURCES if o.setting_sources is None else o.setting_sources,
                            claude=o.claude_settings, extra=o.settings, trusted=w.settings.trusted,
                            accepted=w.applied)
        allow, ask, deny = permission_rules(o, new)
    except SettingsError as e:
        return [SystemMessage("config_change", {"applied": False, "message": f"{e}; the rules in force stay"})]
    run.deps.executor.permissions.set_rules(allow, ask, deny)
    w.settings = new
    return []


def _not_live(old: Any, new: Any) -> list[str]:
    """The keys whose values differ between two versions of a file, other than the permission
    rules (loopwright applies those mid-run), as `permissions.defaultMode`, `hooks`, ..."""
    a = old if isinstance(old, dict) else {}
    b = new if isinstance(new, dict) else {}
    keys: list[str] = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) == b.get(k):
            continue
        if k == "permissions" and isinstance(a.get(k, {}), dict) and isinstance(b.get(k, {}), dict):
            pa, pb = a.get(k, {}), b.get(k, {})
            keys += [f"permissions.{p}" for p in sorted(set(pa) | set(pb)) if p not in LIVE_KEYS and pa.get(p) != pb.get(p)]
        else:
            keys.append(k)
    return keys


def _said(path: Path, applied: bool, message: str, source: str = "") -> SystemMessage:
    return SystemMessage("config_change", {"file_path": str(path), "source": source, "applied": applied,
                                           "message": message})


# --- FileChanged -----------------------------------------------------------------------------

async def _files_changed(run: Run, w: Watch) -> list[SystemMessage]:
    """The watch list now (the FileChanged matchers' file names in the shell's directory, and the
    hooks' watchPaths), each file's stamp against the last one: add, change, unlink. A path new
    to the list is taken as it is (no event: Claude Code's ignoreInitial)."""
    out: list[SystemMessage] = []
    hooks = run.deps.hooks
    roots = _roots(run, hooks.state.watch_paths)
    now, over = _stamps(roots)
    if over and "cap" not in w.named:
        w.named.add("cap")
        out.append(SystemMessage("file_watch", {"message": f"FileChanged watches at most {MAX_WATCHED} files; "
                                                           "the others under the watched paths are not watched"}))
    events: list[tuple[str, str]] = []
    for path, mark in now.items():
        if path in w.files:
            old = w.files[path]
        elif _under(path, w.roots):  # a new file in a directory watched already
            old = None
        else:
            continue  # newly watched: taken as it is
        if not unchanged(path, old, mark):
            events.append((path, "add" if old is None else "unlink" if mark is None else "change"))
    events += [(p, "unlink") for p, mark in w.files.items() if p not in now and mark is not None and _under(p, roots)]
    w.files, w.roots, w.dynamic = now, roots, list(hooks.state.watch_paths)
    for path, event in events:
        await hooks.file_changed(path, event)
    return out


def _roots(run: Run, dynamic: list[str]) -> list[str]:
    """The watched paths: each FileChanged matcher's file names (`.envrc|.env`) in the Bash
    shell's directory, then the hooks' watchPaths (relative ones from that directory too)."""
    cwd = str(run.deps.executor.ctx.state.bash.cwd or run.deps.cwd)
    names = [n.strip() for m in run.deps.hooks.registry.matchers.get("FileChanged") or () if m.hooks
             for n in (m.matcher or "").split("|")]
    paths = [os.path.join(cwd, n) for n in names if n and n != "*"] + [os.path.join(cwd, p) for p in dynamic]
    return list(dict.fromkeys(os.path.normpath(p) for p in paths))


def _stamps(roots: list[str]) -> tuple[dict[str, Stamp], bool]:
    """Each watched file's stamp (a watched directory: the files in it, recursively, one scandir a
    directory and a stat a file), at most MAX_WATCHED of them; and whether there were more (the
    walk stops there)."""
    out: dict[str, Stamp] = {}
    dirs: list[str] = []
    now = time.time_ns()
    for root in roots:
        mark = stamp(root, now_ns=now)
        if mark is None and os.path.isdir(root):
            dirs.append(root)
        elif len(out) >= MAX_WATCHED:
            return out, True
        else:
            out[root] = mark
    while dirs:
        try:
            entries = os.scandir(dirs.pop())
        except OSError:
            continue
        with entries:
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        dirs.append(e.path)
                        continue
                    st = e.stat()
                except OSError:  # gone meanwhile
                    continue
                if not S_ISREG(st.st_mode):
                    continue
                if len(out) >= MAX_WATCHED:
                    return out, True
                out[e.path] = stamp(e.path, st, now)
    return out, False


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r + os.sep) for r in roots)
