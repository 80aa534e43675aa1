"""Room: built-in tools (on tools.base). Owns the implementation of Bash, BashOutput and KillShell
(tools.builtin defines them); may import data types, tools.base and tools.paths.

Bash {command, timeout?, description?, run_in_background?}, BashOutput {bash_id}, KillShell {shell_id}.

Each command runs in a fresh `bash -c` in its own process group (start_new_session), with
stdin from /dev/null and stdout+stderr merged. The working directory persists between calls
(tracked in ctx.state) as long as it stays inside the project. On timeout, on cancellation
(interrupt) and when the command finishes, the whole process group is terminated (SIGTERM,
then SIGKILL), so nothing the command started survives it; long-running processes belong in
run_in_background shells, which are killed at interpreter exit (atexit) at the latest.
If loopwright itself is killed (SIGKILL: no atexit), the watchdog of children.py, told each group as
it starts, sees its pipe close and kills the groups still registered.
With the OS sandbox on (ctx.sandbox, sandbox.py) each command runs under bubblewrap instead:
a new PID namespace with --die-with-parent, so not even a `setsid` daemon outlives it.
Output is kept in bounded head and tail buffers, so megabytes of output cost little memory.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ccenv import number
from ..children import disown, group_alive, own, signal_group, tag_env, watch
from ..hooks.envfile import session_script
from ..telemetry import trace_env
from ..workspace import shell_cwd
from .base import ToolContext, ToolError, ToolOutput
from .paths import within_project

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
KEEP_BYTES = 64 * 1024  # per head and per tail buffer
KILL_GRACE_S = 1.0  # between SIGTERM and SIGKILL
DRAIN_S = 0.3  # how long to wait for output after the command exits


# `$1` is the command, `$2` the file that receives the final working directory. `eval` keeps a
# syntax error in the command from aborting the wrapper.
# $3: the session's env files (CLAUDE_ENV_FILE: hooks/envfile.py), run ahead of the command
_WRAPPER = ('__lw_cmd=$1; __lw_pwd=$2; __lw_env=$3; shift 3\n[ -z "$__lw_env" ] || eval "$__lw_env"\n'
            'eval "$__lw_cmd"\n__lw_rc=$?\npwd -P >| "$__lw_pwd" 2>/dev/null\nexit $__lw_rc\n')

# --- bounded output -----------------------------------------------------------------------

class CappedBuffer:
    """The first and last KEEP_BYTES bytes of a stream, and how many bytes in between were dropped."""

    def __init__(self, keep: int = KEEP_BYTES) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.lines = 0  # over the whole stream: the notice says how many lines were cut, of how many
        self._open = False  # the last byte so far ends a line that has no newline yet

    def write(self, data: bytes) -> None:
        if data:
            self.lines += data.count(b"\n") + (not data.endswith(b"\n")) - self._open
            self._open = not data.endswith(b"\n")
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            extra = len(self.tail) - self.keep
            if extra > 0:
                del self.tail[:extra]
                self.dropped += extra

    @property
    def size(self) -> int:
        return len(self.head) + len(self.tail) + self.dropped

    def render(self, max_chars: int = MAX_OUTPUT_CHARS) -> str:
        """Decoded text; past max_chars, the head and the tail with a notice of what was cut."""
        if not self.dropped:
            text = bytes(self.head + self.tail).decode("utf-8", errors="replace").rstrip()
            if len(text) <= max_chars:
                return text
            head_t, tail_t, approx = text, text, ""
            omitted = len(text) - max_chars
        else:
            head_t = self.head.decode("utf-8", errors="replace")
            tail_t = self.tail.decode("utf-8", errors="replace").lstrip("\ufffd").rstrip()
            omitted = len(head_t) + len(tail_t) + self.dropped - max_chars
            approx = "about "
        half = max_chars // 2
        head_t, tail_t = head_t[:half], tail_t[-half:]
        cut = max(0, self.lines - len(head_t.splitlines()) - len(tail_t.splitlines()))
        return (f"{head_t}\n\n... [about {cut} of {self.lines} lines, {approx}{omitted} characters of output "
                f"truncated] ...\n\n{tail_t}")


# --- process groups -----------------------------------------------------------------------

async def kill_group(pgid: int, grace: float = KILL_GRACE_S) -> None:
    """SIGTERM the whole group, give it `grace` seconds, then SIGKILL whatever is left."""
    if not group_alive(pgid):
        return
    signal_group(pgid, signal.SIGTERM)
    try:
        deadline = time.monotonic() + grace
        while group_alive(pgid) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    finally:
        signal_group(pgid, signal.SIGKILL)


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Tells when bash itself exits, even while a leftover process still holds the pipe open
    (Process.wait() on Python 3.11 waits for the pipes to close too)."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


async def _reaped(protocol: _Protocol, timeout: float = 1.0) -> None:
    """Wait (briefly) until the event loop has seen bash exit, so no exit callback outlives it."""
    try:
        await asyncio.wait_for(protocol.exited.wait(), timeout)
    except TimeoutError:
        pass


def _spawn_args(argv: list[str], command: str, ctx: ToolContext, cwd: Path, bind_files: tuple[str, ...] = (),
                unsandboxed: bool = False) -> tuple[list[str], dict[str, str] | None, tuple[int, ...],
                                                    list[int], Any, str]:
    """(argv, env, pass_fds, fds to close after the spawn, the sandbox or None, the group's tag): `argv` as is,
    or wrapped in the run's OS sandbox unless the command is in sandbox.excludedCommands or
    asks to run `unsandboxed` (dangerouslyDisableSandbox) and sandbox.allowUnsandboxedCommands
    lets it (the gate has asked)."""
    env, tag = tag_env(_environ(ctx))  # (its strays are found by the tag: children.py)
    sb = ctx.sandbox
    if sb is None or sb.runs_outside(command, unsandboxed):
        return argv, env, (), [], None, tag
    w = sb.wrap(argv, cwd, env, bind_files=bind_files)
    return w.argv, w.env, w.pass_fds, w.close_after_spawn, sb, tag


# When the sandbox refuses the escape hatch (as Claude Code does, the input is ignored).
_IGNORED_ESCAPE = ("[sandbox] dangerouslyDisableSandbox was ignored: sandbox.allowUnsandboxedCommands is false, so "
                   "every command runs in the sandbox (a command in sandbox.excludedCommands runs outside it).")


def _close(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _shell_cwd(ctx: ToolContext) -> Path:
    return shell_cwd(ctx.state, ctx.cwd)


async def _run(command: str, ctx: ToolContext, timeout_s: float, unsandboxed: bool = False) -> ToolOutput:
    loop = asyncio.get_running_loop()
    import tempfile  # at the first command: a run may have none

    fd, pwd_file = tempfile.mkstemp(prefix="loopwright-cwd-")
    os.close(fd)
    cwd = _shell_cwd(ctx)
    buf = CappedBuffer()
    script = session_script(ctx.session_id) or ""  # what Setup/SessionStart/CwdChanged/FileChanged hooks exported
    argv, env, pass_fds, ours, sandbox, tag = _spawn_args(["bash", "-c", _WRAPPER, "bash", command, pwd_file, script],
                                                          command, ctx, cwd, (pwd_file,), unsandboxed)
    watch()  # (the watchdog started before the command: owning it right after is one write)
    # The process runs before subprocess_exec returns (it still connects the pipes): an
    # interrupt in that window must not leave it behind, so the spawn is shielded and the
    # group killed once it exists.
    spawn = asyncio.ensure_future(loop.subprocess_exec(
        lambda: _Protocol(limit=2**16, loop=loop), *argv,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        cwd=str(cwd), start_new_session=True, env=env, pass_fds=pass_fds,
    ))
    try:
        transport, protocol = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        try:
            transport, protocol = await spawn
            await kill_group(transport.get_pid())
            await _reaped(protocol)
            transport.close()
        finally:
            _close(ours)
            with contextlib.suppress(OSError):
                os.unlink(pwd_file)
        raise
    except OSError as e:
        _close(ours)
        with contextlib.suppress(OSError):
            os.unlink(pwd_file)
        raise ToolError(f"Could not start {'bwrap' if sandbox else 'bash'}: {e}") from e
    _close(ours)
    proc = asyncio.subprocess.Process(transport, protocol, loop)
    pgid = proc.pid
    own(pgid, "Bash", tag)
    assert proc.stdout is not None
    stdout = proc.stdout

    async def pump() -> None:
        while chunk := await stdout.read(65536):
            buf.write(chunk)

    pump_task = asyncio.ensure_future(pump())
    timed_out = False
    try:
        try:
            await asyncio.wait_for(protocol.exited.wait(), timeout_s)
        except TimeoutError:
            timed_out = True
        if not timed_out:  # let the last output arrive, unless a leftover process holds the pipe
            await asyncio.wait({pump_task}, timeout=DRAIN_S)
        if sandbox is not None and not timed_out:
            # bwrap has exited: its PID namespace (everything the command started) is being
            # killed by the kernel, and nothing else is in the group. No grace period to wait out.
            signal_group(pgid, signal.SIGKILL)
        else:
            await kill_group(pgid)
        await asyncio.wait({pump_task}, timeout=DRAIN_S)
        await _reaped(protocol)
    except asyncio.CancelledError:
        # An interrupt: nothing the command started may survive it. Shielded so a second
        # cancel cannot stop the kill half way.
        killer = asyncio.ensure_future(kill_group(pgid))
        try:
            await asyncio.shield(killer)
            await _reaped(protocol)
        except asyncio.CancelledError:
            pass
        raise
    finally:
        disown(pgid)
        pump_task.cancel()
        transport.close()
        try:
            new_cwd = Path(pwd_file).read_text(errors="replace").strip()
        except OSError:  # the command may have removed it
            new_cwd = ""
        with contextlib.suppress(OSError):
            os.unlink(pwd_file)
    limit = _knob(ctx, "BASH_MAX_OUTPUT_LENGTH", MAX_OUTPUT_CHARS)
    output = buf.render(limit)
    notes: list[str] = [_IGNORED_ESCAPE] if unsandboxed and sandbox is not None else []
    if new_cwd and not timed_out:
        p = Path(new_cwd)
        if within_project(p, ctx):
            ctx.state.bash.cwd = p
        else:
            ctx.state.bash.cwd = ctx.cwd
            notes.append(f"Shell cwd was reset to {ctx.cwd} (the command left the project directory).")
    if timed_out:
        msg = f"Command timed out after {timeout_s:g} s; it was killed with every process it started."
        return ToolOutput("\n".join(x for x in (output, msg, *notes) if x), is_error=True)
    code = proc.returncode if proc.returncode is not None else -1
    if code != 0:
        why = sandbox.explain(output, command) if sandbox is not None else None
        return ToolOutput("\n".join(x for x in (output, f"Exit code {code}", *notes, why) if x), is_error=True)
    details = bash_details(output, command)
    notes += _persisted(buf, limit, ctx, details)
    return ToolOutput("\n".join(x for x in (output or "(no output)", *notes) if x), details=details)


def _persisted(buf: CappedBuffer, limit: int, ctx: ToolContext, details: dict[str, Any]) -> list[str]:
    """An output cut for the model is saved whole beside the session (Claude Code's persisted
    output: persistedOutputPath, persistedOutputSize in bytes and its start as stdout, in the
    structured output),
    and the model is told where; [] when it was not cut, the session keeps no files, or the
    middle of it was not kept (over 2 * KEEP_BYTES: only its head and tail are held)."""
    if buf.dropped:
        return []
    full = bytes(buf.head + buf.tail).decode("utf-8", errors="replace")
    if len(full.rstrip()) <= limit:  # (as render decides: shown whole)
        return []
    saved = ctx.save_output(full)
    if saved is None:
        return []
    # (stdout: the output's first `limit` characters, as Claude Code's; the whole is in the file)
    details.update(stdout=full[:limit], persistedOutputPath=saved, persistedOutputSize=buf.size)
    return [f"The full output ({buf.size:,} bytes) is saved in {saved} (read it in parts with Read's offset/limit)."]


# Commands that print nothing when they succeed: Claude Code's noOutputExpected (a front end says
# "done" rather than "no output"), for a command made only of them.
_QUIET = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "ln", "chmod", "chown", "chgrp", "cd", "export",
                    "unset", "source", "."})
_SEPARATORS = re.compile(r"&&|\|\||[;|&\n]")


def bash_details(stdout: str, command: str, background_id: str | None = None) -> dict[str, Any]:
    """Bash's structured output (Claude Code's BashOutput): stdout is the output as the model got
    it (stderr merged in, bounded by MAX_OUTPUT_CHARS), without loopwright's notes."""
    words = [part.split()[0] for part in _SEPARATORS.split(command) if part.split()]
    out: dict[str, Any] = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False,
                           "noOutputExpected": bool(words) and all(w in _QUIET for w in words)}
    if background_id is not None:
        out["backgroundTaskId"] = background_id
    return out


# --- background shells --------------------------------------------------------------------

@dataclass
class BackgroundShell:
    """A command run in the background (run_in_background): its process and the output it has written so far."""

    id: str
    command: str
    popen: subprocess.Popen[bytes]
    started: float = field(default_factory=time.time)
    buf: CappedBuffer = field(default_factory=CappedBuffer)
    lock: threading.Lock = field(default_factory=threading.Lock)
    killed: bool = False
    eof: threading.Event = field(default_factory=threading.Event)

    def status(self) -> str:
        code = self.popen.poll()
        if self.killed:
            return "killed"
        if code is None:
            return "running"
        return "completed" if code == 0 else "failed"

    def take(self, max_chars: int = MAX_OUTPUT_CHARS) -> str:
        """Output since the last take (bounded: head and tail of it if there was a lot)."""
        with self.lock:
            text = self.buf.render(max_chars)
            self.buf = CappedBuffer()
        return text


_ALL_SHELLS: dict[int, BackgroundShell] = {}  # every live background process group, for atexit


def _reader(shell: BackgroundShell) -> None:
    out = shell.popen.stdout
    assert out is not None
    try:
        while chunk := os.read(out.fileno(), 65536):
            with shell.lock:
                shell.buf.write(chunk)
    except OSError:
        pass
    finally:
        shell.eof.set()


def _waiter(shell: BackgroundShell) -> None:
    """When a background command exits, stop what it left running (as for foreground commands),
    at once: before its process group id could be reused."""
    pgid = shell.popen.pid
    shell.popen.wait()
    shell.eof.wait(timeout=DRAIN_S)
    if group_alive(pgid):
        signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + KILL_GRACE_S
        while group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.02)
        signal_group(pgid, signal.SIGKILL)
    _ALL_SHELLS.pop(pgid, None)
    disown(pgid)


def _kill_all_at_exit() -> None:
    for pgid in list(_ALL_SHELLS):
        signal_group(pgid, signal.SIGKILL)
    _ALL_SHELLS.clear()


atexit.register(_kill_all_at_exit)


def _environ(ctx: ToolContext) -> dict[str, str] | None:
    """The process environment: ours plus the settings' `env` and, with telemetry on, the tool
    call's TRACEPARENT / TRACESTATE (None: inherit unchanged)."""
    extra = {**ctx.env, **trace_env()}
    return {**os.environ, **extra} if extra else None


def _start_background(command: str, ctx: ToolContext, unsandboxed: bool = False) -> ToolOutput:
    n = ctx.state.bash.next_id
    ctx.state.bash.next_id = n + 1
    shell_id = f"bash_{n}"
    cwd = _shell_cwd(ctx)
    script = session_script(ctx.session_id)  # the hooks' env files (CLAUDE_ENV_FILE), run ahead of it
    run = ["bash", "-c", 'eval "$1"\neval "$2"', "bash", script, command] if script else ["bash", "-c", command]
    argv, env, pass_fds, ours, sandbox, tag = _spawn_args(run, command, ctx, cwd, unsandboxed=unsandboxed)
    watch()
    try:
        popen = subprocess.Popen(
            argv, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, env=env, pass_fds=pass_fds,
        )
    except OSError as e:
        raise ToolError(f"Could not start {argv[0]}: {e}") from e
    finally:
        _close(ours)
    shell = BackgroundShell(shell_id, command, popen)
    _ALL_SHELLS[popen.pid] = shell
    own(popen.pid, "Bash", tag)
    ctx.state.bash.shells[shell_id] = shell
    threading.Thread(target=_reader, args=(shell,), daemon=True, name=f"loopwright-{shell_id}-out").start()
    threading.Thread(target=_waiter, args=(shell,), daemon=True, name=f"loopwright-{shell_id}-wait").start()
    note = f"\n{_IGNORED_ESCAPE}" if unsandboxed and sandbox is not None else ""
    return ToolOutput(f"Command running in background with ID: {shell_id}. "
                      f"Use BashOutput to read its output and KillShell to stop it.{note}",
                      details=bash_details("", command, shell_id))


def _get_shell(ctx: ToolContext, shell_id: str) -> BackgroundShell:
    shell = ctx.state.bash.shells.get(shell_id)
    if shell is None:
        known = ", ".join(ctx.state.bash.shells) or "none"
        raise ToolError(f"No background shell with ID {shell_id}. Known shells: {known}.")
    assert isinstance(shell, BackgroundShell)
    return shell


async def bash_output(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """The shell's new output; as `tool_use_result` the Bash tool's own output type (BashOutput of
    sdk-tools.d.ts: Claude Code 2.1.332 has no BashOutput tool, it reads the output file), the
    output since the last look as stdout and the shell's id as backgroundTaskId."""
    shell = _get_shell(ctx, inp["bash_id"])
    status = shell.status()
    deadline = time.monotonic() + DRAIN_S
    while status != "running" and not shell.eof.is_set() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)  # the reader may still be copying the last output
    text = shell.take(_knob(ctx, "BASH_MAX_OUTPUT_LENGTH", MAX_OUTPUT_CHARS))
    pattern = inp.get("filter")
    if pattern and text:
        try:
            rx = re.compile(pattern)
        except re.error as e:
            raise ToolError(f"Invalid filter regex {pattern!r}: {e}") from e
        text = "\n".join(line for line in text.split("\n") if rx.search(line))
    parts = [f"<status>{status}</status>"]
    code = shell.popen.returncode
    if status != "running" and code is not None:
        parts.append(f"<exit_code>{code}</exit_code>")
    parts.append(f"<output>\n{text}\n</output>" if text else "<output>(no new output)</output>")
    return ToolOutput("\n".join(parts), details={"stdout": text, "stderr": "", "interrupted": status == "killed",
                                                 "backgroundTaskId": shell.id})


async def kill_shell(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Stop the shell; as `tool_use_result` Claude Code's TaskStopOutput (its TaskStop tool stops a
    background command as KillShell does: {message, task_id, task_type, command})."""
    shell = _get_shell(ctx, inp["shell_id"])
    if shell.status() != "running":
        await kill_group(shell.popen.pid)  # leftovers of a finished command, if any
        _ALL_SHELLS.pop(shell.popen.pid, None)
        raise ToolError(f"Shell {shell.id} is not running (status: {shell.status()}).")
    shell.killed = True
    await kill_group(shell.popen.pid)
    _ALL_SHELLS.pop(shell.popen.pid, None)
    for _ in range(100):  # reap it, so its status is final
        if shell.popen.poll() is not None:
            break
        await asyncio.sleep(0.01)
    message = f"Successfully killed shell: {shell.id} ({shell.command})"
    return ToolOutput(message, details={"message": message, "task_id": shell.id, "task_type": "local_bash",
                                        "command": shell.command})


async def kill_all_shells(ctx: ToolContext) -> None:
    """Stop every background shell of a session (for callers that end a session early)."""
    for shell in list(ctx.state.bash.shells.values()):
        if shell.status() == "running":
            shell.killed = True
        await kill_group(shell.popen.pid)
        _ALL_SHELLS.pop(shell.popen.pid, None)


def _knob(ctx: ToolContext, name: str, default: int) -> int:
    """Claude Code's variable `name` (the settings' env over the environment), else `default`."""
    n = number({**os.environ, **ctx.env}, name, default)
    return n if n > 0 else default


async def bash(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    command: str = inp["command"]
    if not command.strip():
        raise ToolError("command is empty.")
    unsandboxed = inp.get("dangerouslyDisableSandbox") is True
    if inp.get("run_in_background"):
        return _start_background(command, ctx, unsandboxed)
    timeout_ms = inp.get("timeout") or _knob(ctx, "BASH_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS)
    timeout_ms = min(max(float(timeout_ms), 1.0), _knob(ctx, "BASH_MAX_TIMEOUT_MS", MAX_TIMEOUT_MS))
    return await _run(command, ctx, timeout_ms / 1000.0, unsandboxed)
