"""Room: cli. Owns `loopwright -p`: the prompt, the output formats, run_cli; may import the rooms
below cli, cli.config and cli.render.

`loopwright -p`: one headless run, rendered as text (trace on stderr), json or stream-json.

Exit codes: 0 when the run ends with `success`; 1 when it ends with an error result
(error_max_turns, error_max_budget_usd, error_during_execution, ...); 2 for bad
input found before the run starts (empty prompt, bad --cwd, unknown model, no API key).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import select
import signal
import sys
from typing import Any, TextIO

from ..assemble import query
from ..blocks import ToolResultBlock, json_text, valid_text
from ..ids import new_hex, new_uuid
from ..messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TranscriptWriteError,
    UserMessage,
)
from ..options import AgentOptions
from .config import (
    EXIT_OK,
    EXIT_RUN_ERROR,
    EXIT_USAGE,
    UsageError,
    build_options,
    check_sessions,
    resume_gc,
)


def message_json(msg: Message, session_id: str = "") -> dict[str, Any]:
    """One stream-json line (Claude Code's shapes), with a fresh `uuid` as Claude Code gives every line,
    and on an assistant or user line its `timestamp` (ISO 8601, UTC, milliseconds: Claude Code's)."""
    line = _message_json(msg, session_id)
    line["uuid"] = new_uuid()
    if isinstance(msg, (AssistantMessage, UserMessage)):
        # (imported here: only stream-json's lines carry a timestamp, and a text or json run
        # never needs datetime, ~3.5 M instructions of `-p`'s start, issue 41)
        from datetime import UTC, datetime

        line["timestamp"] = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return line


def message_lines(msg: Message, session_id: str = "") -> list[dict[str, Any]]:
    """The stream-json lines of `msg` (message_json): a user message that answers tool calls is
    one line per result, as Claude Code writes them, each with the result's `tool_use_result`
    (the blocks after a turn's results, queued text, go with its last result's line)."""
    if not isinstance(msg, UserMessage) or not any(isinstance(b, ToolResultBlock) for b in msg.content):
        return [message_json(msg, session_id)]
    results = [b for b in msg.content if isinstance(b, ToolResultBlock)]
    rest = [b for b in msg.content if not isinstance(b, ToolResultBlock)]
    lines = []
    for i, r in enumerate(results, 1):
        line = message_json(dataclasses.replace(msg, content=[r, *(rest if i == len(results) else ())]), session_id)
        value = tool_use_result(r)
        if value is not None:
            line["tool_use_result"] = value
        lines.append(line)
    return lines


def tool_use_result(r: ToolResultBlock) -> Any:
    """Claude Code's `tool_use_result` of one result: the tool's structured output (its details);
    for a failed call without one, "Error: " and its text; else None (the key is left out: a
    tool whose output has no Claude Code shape gets none rather than a made-up one)."""
    if r.details is not None:
        return r.details
    if not r.is_error:
        return None
    return r.text if r.text.startswith("Error: ") else f"Error: {r.text}"


def _message_json(msg: Message, session_id: str) -> dict[str, Any]:
    if isinstance(msg, ResultMessage):
        return msg.to_json()
    if isinstance(msg, SystemMessage):
        line = {"type": "system", "subtype": msg.subtype, **msg.data}
        if msg.subtype == "init" and "permission_mode" in msg.data:
            line["permissionMode"] = msg.data["permission_mode"]  # Claude Code's spelling, for its readers
        return line
    if isinstance(msg, AssistantMessage):
        return {"type": "assistant",
                "message": {"id": f"msg_{new_hex(24)}", "type": "message", "role": "assistant", "model": msg.model,
                            **msg.to_wire(),
                            "stop_reason": msg.stop_reason,
                            "usage": msg.usage.to_json() if msg.usage else None},
                "parent_tool_use_id": msg.parent_tool_use_id, "session_id": session_id}
    if isinstance(msg, UserMessage):
        line = {"type": "user", "message": msg.to_wire(), "parent_tool_use_id": msg.parent_tool_use_id,
                "session_id": session_id}
        if msg.is_synthetic:  # the loop's own (the reminder after an empty answer), as Claude Code marks it
            line["isSynthetic"] = True
        return line
    assert isinstance(msg, StreamEvent)
    return {"type": "stream_event", "event": msg.event, "parent_tool_use_id": msg.parent_tool_use_id,
            "session_id": msg.session_id or session_id}


STDIN_WAIT_S = 3.0  # like Claude Code: piped input that never comes does not hang the run


def read_prompt(args: argparse.Namespace, stdin: TextIO | None = None) -> str:
    """The prompt: `-p PROMPT`, or stdin for `-p` / `-p -`. With both, piped stdin is
    appended to PROMPT (`git diff | loopwright -p "review this"`), as Claude Code does."""
    stdin = sys.stdin if stdin is None else stdin
    if stdin is None:  # fd 0 closed (e.g. `0<&-`, some CI runners): no input to read
        return "" if args.prompt in (None, "-") else str(args.prompt)
    piped = not stdin.isatty()
    if args.prompt in (None, "-"):
        return stdin.read() if piped else ""
    prompt = str(args.prompt)
    if not piped:
        return prompt
    try:
        ready, _, _ = select.select([stdin], [], [], STDIN_WAIT_S)
    except (OSError, ValueError):  # not selectable (closed, or not a real file): nothing to add
        return prompt
    if not ready:
        print(f"loopwright: no input on stdin after {STDIN_WAIT_S:.0f}s; going on without it "
              "(redirect stdin from /dev/null to skip the wait)", file=sys.stderr)
        return prompt
    data = stdin.read()
    return f"{prompt}\n\n{data}" if data.strip() else prompt


def init_only(args: argparse.Namespace) -> int:
    """Claude Code's --init-only: the Setup hooks (trigger init) and the SessionStart hooks
    (startup), with no prompt and no model call; what they report goes to stderr. Exit 0."""
    from ..assemble import build_gate

    options = build_options(args)
    _, executor = build_gate(options)
    hooks = executor.hooks
    hooks.state.context.session_id = new_uuid()

    async def fire() -> None:
        await hooks.setup("init")
        await hooks.session_start("startup")

    asyncio.run(fire())
    for r in hooks.take_reports():
        print(f"loopwright: {r.get('hook_event_name')} hook {r.get('hook')}: {r.get('message')}", file=sys.stderr)
    return 0


def run_cli(args: argparse.Namespace) -> int:
    """One headless run on the prompt from -p and/or stdin; returns the exit code."""
    for name in ("system_prompt", "append_system_prompt"):
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, valid_text(getattr(args, name)))
    prompt = valid_text(read_prompt(args)).strip()
    try:
        if not prompt:
            raise UsageError("the prompt is empty: pass it with -p PROMPT or on stdin")
        options = build_options(args)
        if getattr(args, "worktree", None) is not None:  # the session starts in it (and -p leaves it there)
            from .worktree import enter

            options, _ = enter(options, args.worktree)
        if (note := check_sessions(options)) is not None:
            print(f"loopwright: {note}", file=sys.stderr)
    except (UsageError, ValueError) as e:
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_run(prompt, options, args))


def transcript_failure(error: str, session_id: str) -> ResultMessage:
    """The result of a run that ended before its first turn because its transcript could
    not be written (later failures end the run inside the loop with the same subtype)."""
    from ..usage import Usage

    return ResultMessage(subtype="error_during_execution", is_error=True, num_turns=0, model_calls=0,
                         messages=[], result=f"TranscriptWriteError: {error}", stop_reason=None,
                         total_cost_usd=0.0, usage=Usage(), call_usage=[], duration_ms=0,
                         duration_api_ms=0, session_id=session_id, permission_denials=[],
                         errors=[f"TranscriptWriteError: {error}"])


class _Output:
    """Shows a run's messages in the output format asked for, and keeps its session id and result."""

    def __init__(self, output_format: str, verbose: bool, options: AgentOptions | None = None) -> None:
        self.format = output_format
        self.options = options  # (what the init line lists: cli/initfields.py)
        self.renderer = None
        if output_format == "text":
            from .render import TraceRenderer

            self.renderer = TraceRenderer(sys.stderr, verbose=verbose)
        self.session_id = ""
        self.result: ResultMessage | None = None
        # `json --verbose`: every message, written at the end as one JSON array (as Claude Code does)
        self.lines: list[dict[str, Any]] | None = [] if output_format == "json" and verbose else None

    def show(self, msg: Message) -> None:
        if not isinstance(msg, SystemMessage):  # the first request is out: start-up is over
            resume_gc()
        if isinstance(msg, SystemMessage) and msg.subtype == "init":
            self.session_id = str(msg.data.get("session_id", ""))
            if msg.data.get("warnings"):  # in every output format; a repository's file name may hold escapes
                from .render import visible

                for w in msg.data["warnings"]:
                    print(f"loopwright: warning: {visible(str(w))}", file=sys.stderr)
        if self.format == "stream-json":
            # (valid UTF-8: json_text; a tool's details that are not JSON data as their str, as the SDK peer's)
            sys.stdout.write("".join(json_text(ln, default=str) + "\n" for ln in self.lines_of(msg)))
            sys.stdout.flush()
        elif self.renderer is not None:
            self.renderer.show(msg)
        elif self.lines is not None:
            self.lines.extend(self.lines_of(msg))
        if isinstance(msg, ResultMessage):
            self.result = msg

    def lines_of(self, msg: Message) -> list[dict[str, Any]]:
        """The stream-json lines of `msg` (a turn's results: one line each, message_lines)."""
        if isinstance(msg, UserMessage):
            return message_lines(msg, self.session_id)
        return [self.line(msg)]

    def line(self, msg: Message) -> dict[str, Any]:
        """The stream-json line of `msg`; the init line with what Claude Code's lists besides the run's
        own fields (the commands, skills, agents, plugins and output style a prompt may name)."""
        line = message_json(msg, self.session_id)
        if isinstance(msg, SystemMessage) and msg.subtype == "init" and self.options is not None:
            from .initfields import init_fields

            line.setdefault("mcp_servers", [])
            line.update(init_fields(self.options))
        elif isinstance(msg, ResultMessage) and self.options is not None:
            from .initfields import model_limits

            model_limits(line, self.options)
        return line

    def close(self) -> None:
        if self.renderer is not None:
            self.renderer.close()

    def finish(self) -> int:
        """The result in the output format; the exit status."""
        result = self.result
        if result is None:  # query() always ends with a result; this guards a broken extension
            print("loopwright: the run ended without a result", file=sys.stderr)
            return EXIT_RUN_ERROR
        if self.lines is not None:  # (a result not shown, a transcript's failure, is the last line too)
            last = self.lines[-1] if self.lines else None
            lines = self.lines if last is not None and last.get("type") == "result" else [*self.lines, self.line(result)]
            print(json_text(lines, default=str), flush=True)
        elif self.format == "json":
            print(json_text(self.line(result)), flush=True)
        elif self.format == "text":
            if result.subtype == "success":
                print(result.result or "", flush=True)
            else:
                print(f"loopwright: {result.subtype}: {result.result or ''}", file=sys.stderr)
        return EXIT_OK if not result.is_error else EXIT_RUN_ERROR


async def _run(prompt: str, options: AgentOptions, args: argparse.Namespace) -> int:
    from ..children import Ending

    out = _Output(args.output_format, args.verbose, options)
    # SIGTERM (timeout(1), CI, docker stop) and SIGHUP (the terminal closed) cancel the run like
    # Ctrl-C does, so the commands and MCP servers it started are ended and its transcript stays
    # paired; within a bound, whatever does not end is killed (children.py)
    task = asyncio.current_task()
    signals = Ending(lambda _: task.cancel() if task is not None else None).install()
    try:
        async for msg in query(prompt, options):
            out.show(msg)
    except TranscriptWriteError as e:  # the transcript's first line could not be written (disk full)
        out.result = transcript_failure(str(e), out.session_id or e.session_id)
    except ValueError as e:  # configuration problems found when the run starts (bad script file, ...)
        out.close()
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    except asyncio.CancelledError:
        if not signals.received:
            raise
        print(f"loopwright: terminated ({signal.Signals(signals.received).name})", file=sys.stderr)
        return 128 + signals.received
    finally:
        out.close()
    return out.finish()
