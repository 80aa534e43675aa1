"""Room: bases. Owns the process groups loopwright starts (Bash commands, MCP stdio servers) and
ending them, and how a front end ends on SIGTERM/SIGHUP within a bound (Ending); imports nothing
of loopwright.

Each command and each stdio MCP server runs in a process group of its own (start_new_session),
so the terminal's SIGHUP never reaches it and only loopwright ends it. Ending a group ends too
the descendants of its processes that left it (`setsid`, `setpgid`: a command hiding from the
kill of its group), found by their parents in /proc while a parent still runs, and, in a child
subreaper, its orphans (strays, below). Every such group
is `own`ed while it may run and `disown`ed once it is over:

- the watchdog (a tiny `sh` told each group and its tag) SIGKILLs the groups still owned when its
  pipe closes, that is when loopwright is gone, however it died (SIGKILL included: no atexit),
  and every process that carries one of their tags (a descendant that left its group);
- `end_all` ends them now (SIGTERM, a short grace, SIGKILL), for a process that must exit at once.

Ending: SIGTERM (timeout(1), CI, docker stop, a supervisor) and SIGHUP (the terminal closed)
first stop the front end gracefully (`stop`: the running tool calls are cancelled, the
transcript stays paired, MCP servers are shut down). If the process has not exited `bound`
seconds later (a shutdown that never completes: an MCP server that keeps its stdout open while
its client task is cancelled, a thread blocked on a dead terminal), or a second signal comes,
every owned group is ended and the process exits 128+signal at once. Before this, a signal
that came while the interactive prompt was not reading, or while asyncio.run was cancelling
leftover tasks, was swallowed by the loop's handler: the process lived on and ignored SIGTERM.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

GROUP_ENV_NAME = "LOOPWRIGHT_GROUP"  # (GROUP_ENV below; the watchdog's script is built first)
ENDING_BOUND_S = 2.0  # after SIGTERM/SIGHUP, the graceful stop's time before everything is ended
END_GRACE_S = 0.5  # end_all: between SIGTERM and SIGKILL


def signal_group(pgid: int, sig: int) -> None:
    """Send `sig` to process group `pgid` and to the descendants of its processes that left it
    (gone or not ours: nothing)."""
    tag = _TAGS.get(pgid)
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        if not tag or not _SUBREAPER[0]:
            return  # (the group is gone: so is any parent of an escaped child)
    procs = _processes()  # (before the group is signalled: a parent that dies hands its children to init)
    strays = _strays(pgid, tag, procs) if tag and _SUBREAPER[0] else []
    pinned = _pinned(_escaped(pgid, procs) + strays, procs or {}, adopted=set(strays))
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    for fd in pinned:
        try:
            signal.pidfd_send_signal(fd, sig)
        except OSError:
            pass  # (gone meanwhile)
        finally:
            os.close(fd)


def _pinned(pids: list[int], procs: dict[int, tuple[int, int, bytes]], adopted: set[int] = frozenset()) -> list[int]:  # type: ignore[assignment]
    """A pidfd of each of `pids` that is still the process the scan saw (its parent unchanged
    once the pidfd holds it): a pid that ended and was reused by another process meanwhile is
    never signalled. Without pidfds (not Linux, before 5.3): none, only the group is. The
    `adopted` ones (this process's children now: strays) are kept to be reaped (_reap)."""
    if not hasattr(os, "pidfd_open"):
        return []
    out = []
    for pid in dict.fromkeys(pids):
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                same = int(f.read().rsplit(b")", 1)[1].split()[1]) == procs[pid][0]
        except (OSError, IndexError, ValueError):
            same = False
        if same and pid in adopted:
            with _REAPING:
                if pid not in _ADOPTED:  # (kept to be reaped; a copy is signalled and closed)
                    _ADOPTED[pid], fd = (fd, time.monotonic() + REAP_WITHIN_S), os.dup(fd)
            out.append(fd)
        elif same:
            out.append(fd)
        else:
            os.close(fd)
    return out


def group_alive(pgid: int) -> bool:
    """Does any non-zombie process remain in the group, or a descendant of one that left it?
    (Zombie orphans wait for an init that may never reap them; counting them would turn every
    kill into a full grace period.)"""
    _reap()
    tag = _TAGS.get(pgid) if _SUBREAPER[0] else None
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        if not tag:
            return False
    procs = _processes()
    if procs is None:
        return True  # no procfs: trust killpg
    return any(pg == pgid and state not in (b"Z", b"X") for _, pg, state in procs.values()) or bool(
        _escaped(pgid, procs)) or bool(tag and _strays(pgid, tag, procs))


def _processes() -> dict[int, tuple[int, int, bytes]] | None:
    """Every process as pid -> (parent pid, process group, state), from /proc (None: no procfs)."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    out: dict[int, tuple[int, int, bytes]] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()  # state, ppid, pgrp, ...
            out[int(pid)] = (int(fields[1]), int(fields[2]), fields[0])
        except (OSError, IndexError, ValueError):
            continue
    return out


def _escaped(pgid: int, procs: dict[int, tuple[int, int, bytes]] | None = None) -> list[int]:
    """The live descendants of group `pgid`'s processes that are in another group: a command that
    ran `setsid` or `setpgid` (to outlive the tool call, or to hide from the kill of its group)
    is still their child, and is ended with them (signal_group pins each before signalling it)."""
    procs = _processes() if procs is None else procs
    if not procs:
        return []
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    todo = [pid for pid, (_, pg, _) in procs.items() if pg == pgid]
    seen, out = set(todo), []
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
                if procs[child][1] != pgid and procs[child][2] not in (b"Z", b"X"):
                    out.append(child)
    return out


# --- strays: what a group started that left it and lost its parent --------------------------

# A command's double-forked daemon (`setsid sh -c 'server &'`) has no parent left in the group
# when the group is ended: it was re-parented to init, and _escaped cannot find it. A process
# that is a child subreaper (Linux's PR_SET_CHILD_SUBREAPER) gets such orphans of its
# descendants instead of init: each tagged group's processes carry GROUP_ENV=<tag> in their
# environment (tag_env), so a child of ours that we did not start and that carries the tag of a
# group being ended is ended with it (signal_group, group_alive), and then reaped (as init would
# have). Only a process that owns itself turns this on (the CLI front ends: want_subreaper); a
# library must not change its host's process-wide state (an application may call it itself).

GROUP_ENV = GROUP_ENV_NAME
REAP_WITHIN_S = 5.0  # how long a signalled stray is waited for to become our child and exit
_SUBREAPER = [False, False]  # [on, wanted]
_TAGS: dict[int, str] = {}  # pgid -> the tag its processes carry
_ADOPTED: dict[int, tuple[int, float]] = {}  # a signalled stray's pid -> (its pidfd, reap deadline)
_COUNT = [0]
_REAPING = threading.Lock()


def want_subreaper() -> None:
    """Have this process become a child subreaper when it first starts a tagged group (lazily:
    ctypes is loaded only by a run that runs commands). For a process loopwright owns: the CLI
    front ends call it; a library user may, knowing that orphans of all its children then come
    to it (and are reaped only when they carry a loopwright tag)."""
    _SUBREAPER[1] = True


def subreaper() -> bool:
    """Make this process a child subreaper now (Linux; False elsewhere or if refused)."""
    if _SUBREAPER[0] or not sys.platform.startswith("linux"):
        return _SUBREAPER[0]
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _SUBREAPER[0] = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass
    return _SUBREAPER[0]


def tag_env(env: dict[str, str] | None) -> tuple[dict[str, str], str]:
    """`env` (None: this process's) with a new group tag set, and the tag (`own` it with the
    group): the group's strays are found by it. Becomes a subreaper first if wanted."""
    if _SUBREAPER[1] and not _SUBREAPER[0]:
        subreaper()
    _COUNT[0] += 1
    tag = f"{os.getpid()}.{_COUNT[0]}"
    return {**(os.environ if env is None else env), GROUP_ENV: tag}, tag


def _strays(pgid: int, tag: str, procs: dict[int, tuple[int, int, bytes]] | None) -> list[int]:
    """This process's live children other than group `pgid`'s leader that are in the group or carry
    its tag (orphans re-parented to us: we start only group leaders), with their live descendants."""
    if not procs:
        return []
    me, mine, needle = os.getpid(), os.getpgrp(), f"{GROUP_ENV}={tag}\0".encode()
    found = []
    for pid, (ppid, pg, state) in procs.items():
        if ppid != me or pid == pgid or pid in _TAGS:
            continue
        if state in (b"Z", b"X"):
            if pg not in (pid, mine):  # an orphan that ended (we start only leaders, or in our group): reap it
                _keep_to_reap(pid)
            continue
        if pg != pgid:
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    data = b"\0" + f.read()
            except OSError:
                continue
            if b"\0" + needle not in data:
                continue
        found.append(pid)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = list(found), list(found)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in out and procs[child][2] not in (b"Z", b"X"):
                out.append(child)
                todo.append(child)
    return out


def _keep_to_reap(pid: int) -> None:
    with _REAPING:
        if pid not in _ADOPTED:
            try:
                _ADOPTED[pid] = (os.pidfd_open(pid), time.monotonic() + REAP_WITHIN_S)
            except OSError:
                pass


def _reap() -> None:
    """Reap the strays signalled so far that have exited (init would have; now we are their
    parent). A pidfd names each: never another process that got its pid."""
    with _REAPING:  # (a background shell's waiter thread ends its group too)
        for pid, (fd, deadline) in list(_ADOPTED.items()):
            _reap_one(pid, fd, deadline)


def _reap_one(pid: int, fd: int, deadline: float) -> None:
    try:
        done = os.waitid(os.P_PIDFD, fd, os.WEXITED | os.WNOHANG) is not None
    except ChildProcessError:  # not (yet) our child: a descendant whose parent still lives
        done = time.monotonic() > deadline
    except OSError:
        done = True
    if done:
        os.close(fd)
        del _ADOPTED[pid]


# --- the watchdog: no group outlives a SIGKILLed loopwright -----------------------------------

# Reads "+ PGID TAG" / "- PGID" lines; when the pipe closes (loopwright is gone, however it died),
# SIGKILLs every group still registered and every process whose environment carries the tag of
# one (GROUP_ENV: the strays, re-parented to init by now, that would live on); one grep reads
# every environment, only when a registered group had a tag.
# POSIX sh (dash, macOS's bash 3.2): a space-separated list of PGID/TAG, no associative arrays.
_WATCHDOG = ('g=" "; while read -r op pg t; do case $op in +) g="$g$pg/$t ";; -) case $g in *" $pg/"*) '
             'r=${g#* $pg/}; g="${g%% $pg/*} ${r#* }";; esac;; esac; done; set --; for e in $g; do '
             'kill -9 "-${e%%/*}" 2>/dev/null; [ -n "${e#*/}" ] && set -- "$@" -e "^' + GROUP_ENV_NAME + '=${e#*/}\\$"; '
             'done; [ $# -gt 0 ] && for f in $(grep -lz "$@" /proc/[0-9]*/environ 2>/dev/null); do '
             'p=${f#/proc/}; kill -9 "${p%/environ}" 2>/dev/null; done')


class _Watchdog:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0

    def send(self, line: str) -> None:
        """Write `line` to the watchdog, starting it first if needed (`""`: only start it, so
        that registering a group right after its spawn is one write)."""
        with self.lock:
            if self.pid != os.getpid():  # none yet, or a forked child's inherited one
                self.proc, self.pid = None, os.getpid()
            if self.proc is None or self.proc.poll() is not None:
                try:
                    self.proc = subprocess.Popen(["sh", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                 start_new_session=True)
                except OSError:
                    return
            assert self.proc.stdin is not None
            with contextlib.suppress(OSError):
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()


WATCHDOG = _Watchdog()
_OWNED: dict[int, str] = {}  # pgid -> what it is (for a log line)


def watch() -> None:
    """Start the watchdog now, before a spawn whose group will be `own`ed: owning it right after
    the spawn is then one pipe write, not the watchdog's own start, during which a SIGKILL of
    loopwright left the just-started group unowned and running."""
    WATCHDOG.send("")


def own(pgid: int, what: str = "", tag: str = "") -> None:
    """Process group `pgid` is loopwright's until `disown`: ended with loopwright, however it ends.
    `tag`: its processes carry it (tag_env): its strays are ended with it."""
    _OWNED[pgid] = what
    if tag:
        _TAGS[pgid] = tag
    WATCHDOG.send(f"+ {pgid} {tag}\n")


def disown(pgid: int) -> None:
    """`pgid` is over (ended and reaped): forget it, before its id could be reused."""
    _TAGS.pop(pgid, None)
    if _ADOPTED:
        _reap()
    if _OWNED.pop(pgid, None) is not None:
        WATCHDOG.send(f"- {pgid}\n")


def owned() -> list[int]:
    """The groups owned now."""
    return list(_OWNED)


def end_all(grace: float = END_GRACE_S) -> None:
    """End every owned group now: SIGTERM, up to `grace` seconds to go, then SIGKILL (blocking:
    for a process about to exit)."""
    groups = list(_OWNED)
    for pgid in groups:
        signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(group_alive(g) for g in groups) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pgid in groups:
        signal_group(pgid, signal.SIGKILL)
        disown(pgid)


@atexit.register
def _kill_owned_at_exit() -> None:
    for pgid in list(_OWNED):
        signal_group(pgid, signal.SIGKILL)
        disown(pgid)


# --- SIGTERM / SIGHUP -------------------------------------------------------------------------

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Ending:
    """SIGTERM and SIGHUP end this process within `bound` seconds: `stop(signum)` starts the front
    end's graceful stop on the event loop; a second signal, or the bound passing, ends every owned
    group and exits 128+signal. The handlers stay until the loop closes, so a signal during
    asyncio.run's own teardown is not swallowed either. `received`: the first signal (0: none)."""

    def __init__(self, stop: Callable[[int], object], bound: float = ENDING_BOUND_S,
                 last: Callable[[], object] | None = None) -> None:
        self.stop, self.bound = stop, bound
        self.last = last  # what a forced exit does first too (the terminal's modes given back)
        self.received = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> Ending:
        """Take SIGTERM and SIGHUP on the running loop (where the platform has signals)."""
        self._loop = asyncio.get_running_loop()
        for signum in ENDING_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                self._loop.add_signal_handler(signum, self._on, signum)
        return self

    def _on(self, signum: int) -> None:
        if self.received:  # asked twice: no more waiting
            self.force(f"a second signal ({signal.Signals(signum).name}) came before the graceful stop ended")
            return
        self.received = signum
        assert self._loop is not None
        self._loop.call_later(self.bound, self.force)  # lives as long as the loop, past main()
        try:
            self.stop(signum)
        except Exception as e:  # noqa: BLE001 - a stop that fails must not keep the process alive
            self.force(f"the graceful stop failed ({type(e).__name__}: {e})")
        # The servers and commands are told now, not after their clients' own grace periods (an
        # MCP server gets 2 s to notice its stdin closed): the cancellation above reaches the
        # calls first (on the loop's next turn), so they end as interrupted, not as crashed.
        for pgid in owned():
            signal_group(pgid, signal.SIGTERM)

    def force(self, why: str = "") -> None:
        """End every owned group and exit now, 128+signal (the graceful stop did not finish, or
        `why`: a second signal came first)."""
        why = why or f"the graceful stop did not end within {self.bound:g} s"
        with contextlib.suppress(Exception):  # (the terminal may be gone)
            print(f"loopwright: {signal.Signals(self.received or signal.SIGTERM).name}: {why}; "
                  f"ending {len(_OWNED)} process group(s) and exiting", file=sys.stderr)
        end_all()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if self.last is not None:  # (os._exit runs no `finally`)
            with contextlib.suppress(Exception):
                self.last()
        os._exit(128 + (self.received or signal.SIGTERM))
