"""Room: cli. Owns the live trace; may import data types only.

The live trace of a run: each model call (n_k, output tokens, cost, time), each tool
call (name + short input) and its outcome, and a spinner while the model or a tool runs.

The spinner is drawn only when the output stream is a TTY, so logs and pipes get
plain lines with no carriage returns or escape codes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from ..blocks import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from ..messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    UserMessage,
    diagnostics,
)

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
EXIT_RE = r"^Exit code (-?\d+)$"  # (patterns as strings: compiled at first use, by re's cache)


# Control characters (ESC, BEL, CR, ...) and bidi overrides from model output, files or
# commands would drive the terminal: move the cursor, erase a line, rewrite what a trace or a
# permission question shows. They are printed as visible escapes instead.
_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"


def visible(s: str) -> str:
    """`s` with every control character (but newline and tab) shown as an escape."""
    # No character of _CONTROL is printable: most text (its lines and tabs too) needs no pattern.
    if s.isprintable() or s.replace("\n", " ").replace("\t", " ").isprintable():
        return s
    return re.sub(_CONTROL, lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                  else f"\\u{ord(m.group()):04x}", s)


def short(value: Any, limit: int = 80) -> str:
    """One line of at most `limit` characters."""
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    s = visible(" ".join(s.split()))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def is_tty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


class Spinner:
    """A tiny thread spinner (a thread, not a task: a sync tool may block the event loop).

    All writes to the stream go through `write()`, which clears the spinner line
    first, so trace lines and spinner frames never interleave."""

    def __init__(self, out: TextIO, enabled: bool) -> None:
        self.out = out
        self.enabled = enabled
        self._lock = threading.Lock()
        self._label: str | None = None
        self._since = 0.0
        self._drawn = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, label: str) -> None:
        with self._lock:
            self._label = label
            self._since = time.monotonic()
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._spin, name="loopwright-spinner", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._label = None
            self._clear()

    def write(self, text: str) -> None:
        with self._lock:
            self._clear()
            self.out.write(text)
            self.out.flush()

    def close(self) -> None:
        self.stop()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
            self._thread = None

    def _clear(self) -> None:
        if self._drawn:
            self.out.write("\r\x1b[2K")
            self.out.flush()
            self._drawn = False

    def _spin(self) -> None:
        i = 0
        while not self._stop.wait(0.08):
            with self._lock:
                if self._label is None:
                    continue
                elapsed = time.monotonic() - self._since
                try:
                    self.out.write(f"\r\x1b[2K{FRAMES[i % len(FRAMES)]} {self._label} {elapsed:.1f}s")
                    self.out.flush()
                except (OSError, ValueError):  # the stream went away: stop drawing
                    return
                self._drawn = True
            i += 1


def describe_input(name: str, tool_input: dict[str, Any], cwd: Path | None) -> str:
    """The short form of a tool call's input that a reader needs: the command, the path, the pattern."""
    return visible(_describe_input(name, tool_input, cwd))


def rel_path(path: Any, cwd: Path | None) -> str:
    """`path` relative to `cwd` when it lies under it (as a reader of the trace wants it), else whole."""
    s = str(path)
    if cwd is not None:
        try:
            return str(Path(s).relative_to(cwd)) or "."
        except ValueError:
            pass
    return s


_SHOWN_FIELD = {"WebFetch": "url", "WebSearch": "query"}  # the one input field that says what the call does


def _edit_summary(name: str, tool_input: dict[str, Any]) -> str:
    """What an Edit or MultiEdit changes, after its path ("" for the other file tools)."""
    if name == "Edit" and isinstance(tool_input.get("old_string"), str):
        return f": {short(tool_input['old_string'], 30)} → {short(str(tool_input.get('new_string', '')), 30)}"
    if name == "MultiEdit" and isinstance(tool_input.get("edits"), list):
        return f": {len(tool_input['edits'])} edits"
    return ""


def _describe_input(name: str, tool_input: dict[str, Any], cwd: Path | None) -> str:

    def rel(p: Any) -> str:
        return rel_path(p, cwd)

    if not isinstance(tool_input, dict):
        return short(tool_input)
    if name == "Bash" and isinstance(tool_input.get("command"), str):
        background = " &" if tool_input.get("run_in_background") else ""
        return short(tool_input["command"], 100) + background
    if name in ("BashOutput", "KillShell"):
        return str(tool_input.get("bash_id") or tool_input.get("shell_id") or short(tool_input))
    if name in ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit") and "file_path" in tool_input:
        return rel(tool_input["file_path"]) + _edit_summary(name, tool_input)
    if name in ("Glob", "Grep") and "pattern" in tool_input:
        where = f" in {rel(tool_input['path'])}" if tool_input.get("path") else ""
        return short(tool_input["pattern"], 60) + where
    if name == "NotebookEdit" and isinstance(tool_input.get("notebook_path"), str):
        cell = f" {tool_input['cell_id']}" if isinstance(tool_input.get("cell_id"), str) else ""
        return f"{rel(tool_input['notebook_path'])}: {tool_input.get('edit_mode') or 'replace'}{cell}"
    if name == "AskUserQuestion" and isinstance(tool_input.get("questions"), list):
        return short("; ".join(str(q.get("question", "")) for q in tool_input["questions"] if isinstance(q, dict)), 100)
    if name == "ExitPlanMode" and isinstance(tool_input.get("plan"), str):
        return short(tool_input["plan"].strip().split("\n", 1)[0], 80)
    field = _SHOWN_FIELD.get(name)
    if field is not None and isinstance(tool_input.get(field), str):
        return short(tool_input[field], 100)
    if name == "TodoWrite" and isinstance(tool_input.get("todos"), list):
        return f"{len(tool_input['todos'])} todos"
    if name in ("Agent", "Task") and "prompt" in tool_input:
        kind = tool_input.get("subagent_type") or "general-purpose"
        return f"{kind}: {short(str(tool_input.get('description') or tool_input['prompt']), 60)}"
    return short(tool_input, 100)


def describe_result(name: str, r: ToolResultBlock, cwd: Path | None = None) -> str:
    """One line saying how a tool call went."""
    text = r.text.rstrip()
    if cwd is not None:  # paths inside the project read better relative to it
        text = text.replace(f"{cwd}/", "")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if r.is_error and text.startswith("Permission denied"):
        return visible(" ".join(text.split()))  # in full: the end says which flag or rule allows it
    if name == "Bash" and lines:  # the end of a command's output is where the verdict is
        status = ""
        m = re.match(EXIT_RE, lines[-1].strip())
        if m and len(lines) > 1:
            status = f"exit {m.group(1)}: "
            lines.pop()
        more = f"  ({len(lines)} lines)" if len(lines) > 1 else ""
        return status + short(lines[-1], 110) + more
    if r.is_error:
        return short(lines[0] if lines else "error", 120)
    if not lines:
        return "(no output)"
    if name == "Read":
        return f"{len(text.splitlines())} lines"
    return short(lines[0], 120)


class TraceRenderer:
    """Renders the messages of `query()` as a readable live trace."""

    init_warnings = False  # the init message's warnings are shown here (-p prints them itself, to stderr)

    def __init__(self, out: TextIO, verbose: bool = False, spinner: bool | None = None) -> None:
        self.out = out
        self.verbose = verbose
        self.spinner = Spinner(out, is_tty(out) if spinner is None else spinner)
        self.calls = 0
        self.cwd: Path | None = None
        self._names: dict[str, tuple[str, dict[str, Any]]] = {}
        self._call_started = time.monotonic()

    def _w(self, text: str) -> None:
        self.spinner.write(visible(text))

    def _model_running(self) -> None:
        self._call_started = time.monotonic()
        self.spinner.start(f"model call {self.calls + 1}…")

    def show(self, msg: Message) -> None:
        if isinstance(msg, (AssistantMessage, UserMessage)) and msg.parent_tool_use_id is not None:
            self._subagent(msg)
        elif isinstance(msg, SystemMessage):
            self._system(msg)
        elif isinstance(msg, AssistantMessage):
            self._assistant(msg)
        elif isinstance(msg, UserMessage):
            self._user(msg)
        elif isinstance(msg, ResultMessage):
            self.spinner.stop()
            if self._names and msg.subtype in ("error_max_turns", "error_max_budget_usd"):
                pending = ", ".join(name for name, _ in self._names.values())
                self._w(f"    ⎿ not run ({msg.subtype}): {pending}\n")
                self._names.clear()
            cost = f"${msg.total_cost_usd:.4f}"
            sub = f" (+{len(msg.subagent_call_usage)} in subagents)" if msg.subagent_call_usage else ""
            self._w(f"● {msg.subtype}: {msg.num_turns} tool-use turns, {msg.model_calls} model calls{sub}, "
                    f"{cost}, {msg.duration_ms / 1000:.1f}s\n")
            if msg.is_error and msg.result:
                self._w(f"  {msg.result}\n")
        elif isinstance(msg, StreamEvent):
            pass  # partial events only move the spinner along

    def _system(self, msg: SystemMessage) -> None:
        d = msg.data
        if msg.subtype == "init":
            self.cwd = Path(d["cwd"]) if d.get("cwd") else None
            limit = f", max_turns={d['max_turns']}" if d.get("max_turns") is not None else ""
            self._w(f"● session {str(d.get('session_id', ''))[:8]} · model {d.get('model')} · "
                    f"{d.get('permission_mode')} mode{limit}\n")
            if d.get("memory_files"):
                self._w(f"  memory: {', '.join(str(f['path']) for f in d['memory_files'])}\n")
            for w in d.get("warnings") or [] if self.init_warnings else []:  # the user's own files (agent files, MCP names)
                self._w(f"  ⚠ {short(str(w), 300)}\n")
            for srv in d.get("mcp_servers") or []:  # MCP servers that are not there, and why
                if srv.get("status") != "connected":
                    self._w(f"  ⚠ MCP server {srv.get('name')}: {srv.get('status')}: {short(str(srv.get('error', '')), 300)}\n")
            self._model_running()
        elif msg.subtype == "api_retry":
            self._w(f"  ↻ API retry {d.get('attempt')} in {float(d.get('delay_ms', 0)) / 1000:.1f}s: "
                    f"{short(str(d.get('error', '')), 100)}\n")
        elif msg.subtype == "compact_boundary":
            self._w(f"  ✂ context compacted ({short(d, 100)})\n")
        elif msg.subtype == "informational" and d.get("level") == "warning":  # (a hook stopped the prompt, ...)
            self._w(f"  ⚠ {short(str(d.get('content', '')), 300)}\n")
        elif msg.subtype in ("config_change", "file_watch"):  # a settings file changed mid-run (loop/watch.py)
            self._w(f"  ⚙ {short(diagnostics(msg)[0], 300)}\n")
        elif self.verbose:
            self._w(f"  [{msg.subtype}] {short(d, 120)}\n")

    def _assistant(self, msg: AssistantMessage) -> None:
        self.spinner.stop()
        self.calls += 1
        secs = time.monotonic() - self._call_started
        u = msg.usage
        if u is not None:
            cache = ""
            if u.cache_read_input_tokens or u.cache_creation_input_tokens:
                cache = f" (cache read {u.cache_read_input_tokens}, write {u.cache_creation_input_tokens})"
            self._w(f"◆ call {self.calls}: n_k={u.input_tokens} in{cache}, {u.output_tokens} out, "
                    f"${u.cost_usd:.4f}, {secs:.1f}s\n")
        uses: list[ToolUseBlock] = []
        for b in msg.content:
            if isinstance(b, TextBlock) and b.text.strip():
                self._w(f"  {b.text.strip() if self.verbose else short(b.text, 300)}\n")
            elif isinstance(b, ThinkingBlock) and self.verbose:
                self._w(f"  ∴ {short(b.thinking, 200)}\n")
            elif isinstance(b, ToolUseBlock):
                uses.append(b)
                self._names[b.id] = (b.name, b.input)
                self._w(f"  ⏺ {b.name}({describe_input(b.name, b.input, self.cwd)})\n")
        if uses and msg.stop_reason in ("tool_use", "max_tokens", None):
            label = uses[0].name if len(uses) == 1 else f"{len(uses)} tools"
            self.spinner.start(f"running {label}…")

    def _user(self, msg: UserMessage) -> None:
        self.spinner.stop()
        for r in msg.tool_results:
            name, _ = self._names.pop(r.tool_use_id, ("?", {}))
            mark = "✗" if r.is_error else "✓"
            self._w(f"    ⎿ {mark} {name}: {describe_result(name, r, self.cwd)}\n")
            if self.verbose and r.text.strip():
                body = r.text.rstrip().splitlines()
                for ln in body[:40]:
                    self._w(f"      │ {ln}\n")
                if len(body) > 40:
                    self._w(f"      │ … {len(body) - 40} more lines\n")
        for b in () if msg.is_synthetic else msg.content:  # (the loop's own reminder: not the user's)
            if isinstance(b, TextBlock):
                self._w(f"  ✉ queued message: {short(b.text, 100)}\n")
        self._model_running()

    def _subagent(self, msg: AssistantMessage | UserMessage) -> None:
        """A subagent's activity, indented under its Agent call: its tool calls and their
        outcomes, and its final text (the spinner keeps running for the Agent call)."""
        pad = "      "
        if isinstance(msg, AssistantMessage):
            uses = [b for b in msg.content if isinstance(b, ToolUseBlock)]
            for b in uses:
                self._names[f"{msg.parent_tool_use_id}/{b.id}"] = (b.name, b.input)
                self._w(f"{pad}⏺ {b.name}({describe_input(b.name, b.input, self.cwd)})\n")
            said = " ".join(b.text for b in msg.content if isinstance(b, TextBlock)).strip()
            if said and (not uses or self.verbose):
                self._w(f"{pad}{short(said, 120)}\n")
            return
        for r in msg.tool_results:
            name, _ = self._names.pop(f"{msg.parent_tool_use_id}/{r.tool_use_id}", ("?", {}))
            self._w(f"{pad}  ⎿ {'✗' if r.is_error else '✓'} {name}: {describe_result(name, r, self.cwd)}\n")

    def close(self) -> None:
        self.spinner.close()
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass
