"""Room: bases (hooks). Owns running one hook: a Python callable (sync in a daemon thread, or async),
a shell command (Claude Code's stdin JSON and exit-code protocol), an http or a prompt/agent hook
(hooks.external), each under its timeout; may import hooks.config, hooks.kinds, hooks.external, hooks.output, hooks.results,
telemetry, threads (the one thread runner), childout and children.

A hook that times out or crashes is reported through `report` and never hangs the run; a
timed-out command's process group is killed. A sync command's group is owned (children.py) while
it runs: loopwright ending, however it ends (a signal's bound passing, a SIGKILL), ends it too.
An `async` one is not: it is left to finish, as Claude Code leaves it. A command that prints over
MAX_OUTPUT_BYTES on stdout or stderr is ended there, its output cut (memory and disk stay bounded:
an endless stream filled them); a non-blocking error."""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import os
import signal
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from ..childout import close, finish, read_async, start
from ..children import disown, own, signal_group, tag_env, watch
from ..telemetry import trace_env
from ..threads import run_in_worker
from .config import HookContext
from .external import mcp_arguments, post_json, run_model_hook
from .kinds import (
    CONFIGURED_HOOKS,
    CommandHook,
    ConfiguredHook,
    HookCallback,
    HttpHook,
    McpToolHook,
)
from .output import COMMON_FIELDS, cap, python_names
from .results import Outcome

MAX_OUTPUT_BYTES = 10 << 20  # of a command hook's stdout, and of its stderr (Claude Code reads them whole)
REAP_S = 5.0  # how long a killed command's pipes are read to their end (a daemon it started may hold them)

# (event, hook label, kind, message): how a runner tells the run's state what went wrong
Report: TypeAlias = Callable[[str, str, str, str], None]


async def run_one(event: str, hook: HookCallback | ConfiguredHook, timeout: float, payload: dict[str, Any],
                  tool_use_id: str | None, context: HookContext, env: Mapping[str, str], report: Report) -> Outcome:
    """Run one hook on `payload` (the event's input) and read what it gave back. A configured
    hook with `onFailure: "block"` that fails counts as exit 2 (its error the reason)."""
    if isinstance(hook, CONFIGURED_HOOKS):
        outcome = await _run_configured(event, hook, timeout, payload, context, env, report)
        if outcome.failed and hook.on_failure == "block":
            outcome.exit_code = 2
            outcome.stderr = outcome.stderr.strip() or f"{event} hook {outcome.label} failed ({outcome.error or 'error'})"
        return outcome
    label = getattr(hook, "__qualname__", None) or repr(hook)
    mine = _own_input(payload)
    try:
        value = await asyncio.wait_for(_call(hook, mine, tool_use_id, context), timeout)
    except TimeoutError:
        report(event, label, "timeout", f"timed out after {timeout:g} s")
        return Outcome(label, failed=True, error=f"timed out after {timeout:g} s")
    except Exception as e:
        report(event, label, "error", f"raised {type(e).__name__}: {e}")
        return Outcome(label, failed=True, error=f"raised {type(e).__name__}: {e}")
    if value is None or isinstance(value, dict):
        out = _with_edit(event, python_names(value or {}), payload, mine)
        return Outcome(label, output=None if value is None and not out else out)
    if isinstance(value, str):
        return Outcome(label, stdout=value)
    report(event, label, "error", f"returned {type(value).__name__}, not a dict; ignored")
    return Outcome(label, failed=True, error=f"returned {type(value).__name__}, not a dict")


def _own_input(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload a Python hook is given: with its own copy of the tool input. The hooks of an
    event run side by side, so two that edit one shared input in place raced (which edit ran
    depended on the threads' timing), and a timed-out hook's thread could still edit it."""
    if "tool_input" not in payload:
        return payload
    return {**payload, "tool_input": copy.deepcopy(payload["tool_input"])}


def _with_edit(event: str, out: dict[str, Any], payload: dict[str, Any], mine: dict[str, Any]) -> dict[str, Any]:
    """A hook's output with its edit in place made its rewrite: PreToolUse's updatedInput, or the
    updatedInput of a PermissionRequest's allow (an explicit updatedInput wins). The rewrites are
    then taken in the hooks' order, and judged again like any rewrite."""
    edited = mine.get("tool_input")
    try:
        if edited is None or edited == payload.get("tool_input"):
            return out
    except RecursionError:  # (an edit that holds itself: a rewrite, refused as not JSON data where it is taken)
        pass
    spec = out.get("hookSpecificOutput")
    if event == "PreToolUse" and (spec is None or isinstance(spec, dict) and "updatedInput" not in spec):
        return {**out, "hookSpecificOutput": {"hookEventName": event, **(spec or {}), "updatedInput": edited}}
    decision = spec.get("decision") if isinstance(spec, dict) else None
    if (event == "PermissionRequest" and isinstance(spec, dict) and isinstance(decision, dict)
            and decision.get("behavior") == "allow" and "updatedInput" not in decision):
        return {**out, "hookSpecificOutput": {**spec, "decision": {**decision, "updatedInput": edited}}}
    return out


async def _call(fn: HookCallback, payload: dict[str, Any], tool_use_id: str | None, context: HookContext) -> Any:
    try:
        n = len([p for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    except (TypeError, ValueError):
        n = 1
    args = (payload, tool_use_id, context)[:max(1, min(n, 3))]
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    value = await run_in_worker(fn, *args)  # a slow sync hook must not block the loop (a daemon thread)
    if inspect.isawaitable(value):
        value = await value
    return value


async def _run_configured(event: str, hook: ConfiguredHook, timeout: float, payload: dict[str, Any],
                          context: HookContext, env: Mapping[str, str], report: Report) -> Outcome:
    if isinstance(hook, CommandHook):
        return await run_command(event, hook, timeout, payload, context, env, report)
    if isinstance(hook, HttpHook):
        label = label_of(hook.url)
        try:
            status, body = await post_json(hook, payload, timeout)
        except (OSError, TimeoutError, ValueError) as e:
            why = f"timed out after {timeout:g} s" if isinstance(e, TimeoutError) else f"no answer: {e}"
            report(event, label, "timeout" if isinstance(e, TimeoutError) else "error", why)
            return Outcome(label, failed=True, error=why)
        ok = 200 <= status < 300
        return decode(event, label, 0 if ok else status, body if ok else "", "" if ok else f"HTTP {status}: {body}",
                      report)
    if isinstance(hook, McpToolHook):
        return await run_mcp_tool(event, hook, timeout, payload, context, report)
    label = label_of(f"{hook.kind}: {hook.prompt}")
    try:
        outcome = await asyncio.wait_for(run_model_hook(event, hook, label, payload, context.judge), timeout)
    except TimeoutError:
        outcome = Outcome(label, failed=True, error=f"timed out after {timeout:g} s")
    except Exception as e:  # a model error, an unparseable answer: reported, as a command's crash
        outcome = Outcome(label, failed=True, error=f"{type(e).__name__}: {e}")
    if outcome.failed:
        report(event, label, "timeout" if outcome.error.startswith("timed out") else "error", outcome.error)
    return outcome


async def run_mcp_tool(event: str, hook: McpToolHook, timeout: float, payload: dict[str, Any],
                       context: HookContext, report: Report) -> Outcome:
    """An mcp_tool hook: the server's tool called through the run's MCP servers; its text answer
    read as a command's stdout. A server that is not there, an error result or a timeout is a
    failure (non-blocking unless `onFailure: "block"`). With "block", the answer must be a hook's
    JSON output, {} or nothing: other text fails too, as in Claude Code."""
    label = f"{hook.server}/{hook.tool}"
    if context.mcp is None:
        why = "this run has no MCP servers"
        report(event, label, "error", why)
        return Outcome(label, failed=True, stderr=f"[{label}]: {why}")
    try:
        is_error, text = await asyncio.wait_for(context.mcp(hook.server, hook.tool, mcp_arguments(hook.input, payload)),
                                                timeout)
    except TimeoutError:
        why = f"timed out after {timeout:g} s"
        report(event, label, "timeout", why)
        return Outcome(label, failed=True, stderr=f"[{label}]: {why}")
    except Exception as e:  # not configured, not connected, a broken connection: the hook's failure
        why = f"the call could not be made: {e}"
        report(event, label, "error", why)
        return Outcome(label, failed=True, stderr=f"[{label}]: {why}")
    if is_error:
        why = f"the MCP tool returned an error: {cap(text.strip(), 2000) or '(no text)'}"
        report(event, label, "error", why)
        return Outcome(label, failed=True, stderr=f"[{label}]: {why}")
    outcome = decode(event, label, 0, text, "", report)
    if hook.on_failure == "block" and text.strip():
        fields = set(outcome.output or {}) & (COMMON_FIELDS - {"reason"})
        if outcome.output is None or (outcome.output and not fields):
            why = "its answer is not a hook's JSON output (onFailure \"block\" needs one, {} or nothing)"
            report(event, label, "error", why)
            return Outcome(label, failed=True, stderr=f"[{label}]: {why}")
    return outcome


def label_of(text: str) -> str:
    """A hook's name in reports: its command (or URL, prompt), cut to 80 characters."""
    return text if len(text) <= 80 else text[:77] + "..."


async def run_command(event: str, hook: CommandHook, timeout: float, payload: dict[str, Any],
                      context: HookContext, extra_env: Mapping[str, str], report: Report) -> Outcome:
    """A command hook: the input as JSON on stdin; exit 0 (stdout: JSON output or text), exit 2
    (blocking, stderr the reason), anything else a non-blocking error (reported)."""
    label = label_of(hook.command if hook.args is None else " ".join([hook.command, *hook.args]))
    cwd = context.cwd or None
    env, tag = tag_env({**os.environ, **extra_env, **trace_env()})  # TRACEPARENT: the hook's span (telemetry on)
    if cwd:
        env.setdefault("LOOPWRIGHT_PROJECT_DIR", cwd)
        env.setdefault("CLAUDE_PROJECT_DIR", cwd)
    watch()
    try:
        pipes: dict[str, Any] = {"stdin": asyncio.subprocess.PIPE, "stdout": asyncio.subprocess.PIPE,
                                 "stderr": asyncio.subprocess.PIPE, "cwd": cwd, "env": env, "start_new_session": True}
        child = await start(hook.command, hook.args, _kill_group, **pipes)  # (args None: through the shell)
    except OSError as e:
        report(event, label, "error", f"could not start: {e}")
        return Outcome(label, failed=True, error=f"could not start: {e}")
    proc = child.proc
    own(proc.pid, f"hook {label}", tag)  # (start_new_session: the pid is the group)
    data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str).encode()  # as JSON.stringify writes it
    try:
        got = await asyncio.wait_for(read_async(proc, data, MAX_OUTPUT_BYTES), timeout)
        if got.truncated:  # (read no further: the rest, perhaps endless, would fill memory)
            _kill_group(proc.pid)
            await finish(child, REAP_S)
    except TimeoutError:
        _kill_group(proc.pid)
        await finish(child, REAP_S)
        report(event, label, "timeout", f"timed out after {timeout:g} s; its processes were killed")
        return Outcome(label, failed=True, error=f"timed out after {timeout:g} s")
    except asyncio.CancelledError:
        _kill_group(proc.pid)  # the run was interrupted: leave nothing behind
        raise
    finally:
        await close(child, REAP_S)  # (its pipes and transport, whoever holds them: never left to the loop's end)
        disown(proc.pid)  # (reaped, or killed: its id is not given to another process meanwhile)
    out, err = got.stdout.decode(errors="replace"), got.stderr.decode(errors="replace")
    if got.truncated:
        return _truncated(event, label, got.truncated, out, err, report)
    code = proc.returncode if proc.returncode is not None else -1
    outcome = decode(event, label, code, out, err, report)
    outcome.command = hook.command if hook.args is None else " ".join([hook.command, *hook.args])
    return outcome


def _truncated(event: str, label: str, stream: str, out: str, err: str, report: Report) -> Outcome:
    """A command hook that printed over MAX_OUTPUT_BYTES on `stream`: ended there, a non-blocking
    error (its output, cut, is kept and says so; its exit code never came)."""
    why = f"printed over {MAX_OUTPUT_BYTES:,} bytes on {stream}; its output was cut there and its processes were killed"
    report(event, label, "error", why)
    note = f"\n... [{stream} cut at {MAX_OUTPUT_BYTES:,} bytes]"
    return Outcome(label, -1, out + note if stream == "stdout" else out, cap(err) + (note if stream == "stderr" else ""),
                   failed=True)


async def run_background(event: str, hook: CommandHook, timeout: float, payload: dict[str, Any],
                         context: HookContext, extra_env: Mapping[str, str], report: Report) -> Outcome:
    """An `async: true` command hook, awaited by a task of its own (the event did not wait). Its
    output goes to unlinked temporary files, not pipes: a hook still running when loopwright
    exits is left to finish (as Claude Code leaves it), and never dies of a closed pipe. Past
    `timeout` its process group is killed."""
    import subprocess  # (here: only a run with a background hook needs Popen)
    import tempfile

    label = label_of(hook.command if hook.args is None else " ".join([hook.command, *hook.args]))
    env = {**os.environ, **extra_env, **trace_env()}
    if context.cwd:
        env.setdefault("LOOPWRIGHT_PROJECT_DIR", context.cwd)
        env.setdefault("CLAUDE_PROJECT_DIR", context.cwd)
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin.write(json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str).encode())
        stdin.seek(0)
        try:
            argv: Any = [hook.command, *hook.args] if hook.args is not None else hook.command
            proc = subprocess.Popen(argv, shell=hook.args is None, stdin=stdin, stdout=out, stderr=err,  # noqa: S602 - the user's configured hook
                                    cwd=context.cwd or None, env=env, start_new_session=True)
        except OSError as e:
            report(event, label, "error", f"could not start: {e}")
            return Outcome(label, failed=True, error=f"could not start: {e}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        big = ""
        while proc.poll() is None:  # (a cancelled wait leaves the hook running: see above)
            if loop.time() > deadline:
                _kill_group(proc.pid)
                proc.wait()
                report(event, label, "timeout", f"timed out after {timeout:g} s; its processes were killed")
                return Outcome(label, failed=True, error=f"timed out after {timeout:g} s")
            big = next((n for n, f in (("stdout", out), ("stderr", err)) if os.fstat(f.fileno()).st_size > MAX_OUTPUT_BYTES), "")
            if big:  # (the files would fill the disk: the cap is checked as it writes them)
                _kill_group(proc.pid)
                proc.wait()
                break
            await asyncio.sleep(0.05)
        out.seek(0)
        err.seek(0)
        text, etext = (f.read(MAX_OUTPUT_BYTES).decode(errors="replace") for f in (out, err))
        big = big or next((n for n, f in (("stdout", out), ("stderr", err)) if f.read(1)), "")
        if big:
            return _truncated(event, label, big, text, etext, report)
        return decode(event, label, proc.returncode, text, etext, report)


def decode(event: str, label: str, code: int, stdout: str, stderr: str, report: Report) -> Outcome:
    """What a command (or an HTTP hook, as its status) gave back, in command-hook terms: exit 0
    with a JSON object on stdout is its output; other text stays text; exit 2 blocks; any other
    code is a non-blocking error, reported."""
    # stderr is only ever text for the model, the user or a front end (exit 2's reason, a report):
    # kept to what any of them takes (output.cap), here once. stdout may be JSON and stays whole.
    outcome = Outcome(label, code, stdout, cap(stderr))
    if code == 0:
        text = stdout.strip()
        if text.startswith("{"):
            try:
                parsed = json.loads(text)
            except (ValueError, RecursionError) as e:  # (a 5000-digit number, nesting past the parser's depth:
                # each ended the run, error_during_execution)
                report(event, label, "error", f"printed invalid JSON ({type(e).__name__}: {str(e)[:200]}); "
                                              "treated as text")
            else:
                if isinstance(parsed, dict):
                    outcome.output, outcome.stdout = parsed, ""
    elif code != 2:
        msg = stderr.strip() or stdout.strip() or "(no output)"
        report(event, label, "error", f"exited with status {code}: {cap(msg, 2000)}")
        outcome.failed = True  # a non-blocking error, as in Claude Code (no `error`: not fail-closed)
    return outcome


def _kill_group(pid: int) -> None:
    signal_group(pid, signal.SIGKILL)  # (and what left the group while its parent lives: `setsid`)
