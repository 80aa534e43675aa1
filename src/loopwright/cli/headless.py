"""`loopwright -p`: one headless run, rendered as text (trace on stderr), json or stream-json.

Exit codes: 0 when the run ends with `success`; 1 when it ends with an error result
(error_max_turns, error_max_budget_usd, error_during_execution, ...); 2 for bad
input found before the run starts (empty prompt, bad --cwd, unknown model, no API key).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import select
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from ..loop import query
from ..messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    UserMessage,
)
from ..options import AgentOptions
from ..tools.base import Tool
from ..usage import Price
from . import split_tools

EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE = 0, 1, 2

# Model specs resolve_model understands. A bare name must be an Anthropic model id.
MODEL_PREFIXES = ("scripted:", "openai:", "anthropic:")
SCRIPTED_HINT = "or use --model scripted:FILE.json to run a scripted model with no provider"


class UsageError(Exception):
    """Bad input found before the run starts: printed as one line, exit code 2."""


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


def check_model(spec: str, base_url: str | None) -> None:
    """Reject a model spec the run could only fail on, with a message that says what to do."""
    if spec.startswith("scripted:"):
        if not spec.removeprefix("scripted:"):
            raise UsageError("--model scripted: needs a file: --model scripted:FILE.json")
        return
    if ":" in spec.split("/", 1)[0] and not spec.startswith(MODEL_PREFIXES):
        provider = spec.split(":", 1)[0]
        raise UsageError(f"unknown model provider {provider!r} in --model {spec}: use claude-<model>, "
                         "openai:<model> or scripted:FILE.json")
    if spec.startswith("openai:"):
        if not spec.removeprefix("openai:"):
            raise UsageError("--model openai: needs a model name, e.g. --model openai:gpt-4o")
        if not base_url and not os.environ.get("OPENAI_BASE_URL") and not os.environ.get("OPENAI_API_KEY"):
            raise UsageError(f"no API key for {spec}: set OPENAI_API_KEY (or pass --base-url of an "
                             f"OpenAI-compatible server), {SCRIPTED_HINT}")
        return
    name = spec.removeprefix("anthropic:")
    if not spec.startswith("anthropic:") and not name.startswith("claude"):
        raise UsageError(f"unknown model {spec!r}: use claude-<model> (Anthropic), anthropic:<id>, "
                         "openai:<model> or scripted:FILE.json")
    if not name:
        raise UsageError("--model anthropic: needs a model id, e.g. --model claude-sonnet-5-5")
    if not os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        raise UsageError(f"no API key for model {name}: set ANTHROPIC_API_KEY, {SCRIPTED_HINT}")


def resolve_cwd(value: str | None) -> Path:
    if value is None:
        return Path.cwd()
    p = Path(value).expanduser()
    if not p.exists():
        raise UsageError(f"--cwd {value}: no such directory")
    if not p.is_dir():
        raise UsageError(f"--cwd {value}: not a directory")
    return p.resolve()


def build_options(args: argparse.Namespace) -> AgentOptions:
    from ..models import DEFAULT_MODEL

    cwd = resolve_cwd(args.cwd)
    for d in args.add_dirs:
        if not Path(d).expanduser().is_dir():
            raise UsageError(f"--add-dir {d}: no such directory")
    model = args.model or os.environ.get("LOOPWRIGHT_MODEL") or DEFAULT_MODEL
    check_model(model, args.base_url)
    if args.max_turns is not None and args.max_turns < 0:
        raise UsageError(f"--max-turns must be 0 or more, got {args.max_turns}")
    if args.max_budget_usd is not None and not args.max_budget_usd > 0:
        raise UsageError(f"--max-budget-usd must be positive, got {args.max_budget_usd}")
    from ..agents import agents_from_json, make_agent_tool
    from ..tools.builtin import default_tools  # after the checks: bad input fails fast

    try:  # the Agent tool is always there, as in Claude Code, with general-purpose and --agents types
        agents = agents_from_json(args.agents) if getattr(args, "agents", None) else {}
    except (OSError, ValueError) as e:
        raise UsageError(f"--agents: {e}") from None
    tools = [*default_tools(), make_agent_tool(agents)]
    system = args.system_prompt if args.system_prompt is not None else default_system_prompt(cwd, tools)
    return AgentOptions(
        model=model,
        tools=tools,
        max_turns=args.max_turns,
        max_budget_usd=args.max_budget_usd,
        system_prompt=system,
        append_system_prompt=args.append_system_prompt,
        cwd=str(cwd),
        allowed_tools=split_tools(args.allowed_tools),
        disallowed_tools=split_tools(args.disallowed_tools),
        permission_mode=args.permission_mode,  # None: the settings' defaultMode, else "default"
        add_dirs=[str(Path(d).expanduser().resolve()) for d in args.add_dirs],  # as typed: from the shell's cwd
        setting_sources=[x.strip() for x in (getattr(args, "setting_sources", None) or "").split(",") if x.strip()],
        settings=getattr(args, "settings", None),
        claude_settings=bool(getattr(args, "claude_settings", False)),
        memory=not getattr(args, "bare", False),
        output_format=output_format(getattr(args, "json_schema", None)),
        prices=parse_prices(getattr(args, "price", None) or []) or None,
        context_window=context_window(getattr(args, "context_window", None)),
        include_partial_messages=args.include_partial_messages,
        base_url=args.base_url,
        session_id=args.session_id,
        resume=args.resume,
        fork_session=args.fork_session,
        continue_conversation=args.continue_conversation,
        persist_session=not args.no_session_persistence,
        refusal_advice="cli",
    )


def message_json(msg: Message, session_id: str = "") -> dict[str, Any]:
    """One stream-json line (Claude Code's shapes)."""
    if isinstance(msg, ResultMessage):
        return msg.to_json()
    if isinstance(msg, SystemMessage):
        line = {"type": "system", "subtype": msg.subtype, **msg.data}
        if msg.subtype == "init" and "permission_mode" in msg.data:
            line["permissionMode"] = msg.data["permission_mode"]  # Claude Code's spelling, for its readers
        return line
    if isinstance(msg, AssistantMessage):
        return {"type": "assistant",
                "message": {"type": "message", "role": "assistant", "model": msg.model, **msg.to_wire(),
                            "stop_reason": msg.stop_reason,
                            "usage": msg.usage.to_json() if msg.usage else None},
                "parent_tool_use_id": msg.parent_tool_use_id, "session_id": session_id}
    if isinstance(msg, UserMessage):
        return {"type": "user", "message": msg.to_wire(), "parent_tool_use_id": msg.parent_tool_use_id,
                "session_id": session_id}
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


def valid_text(s: str) -> str:
    """Bytes that are not UTF-8 reach argv (and stdin) as lone surrogates, which no JSON
    encoder, transcript or API accepts: they become U+FFFD."""
    try:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # surrogates that did not come from undecodable bytes
        return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def parse_prices(values: list[str]) -> dict[str, Price]:
    """`--price 'MODEL=in,out[,cache_write,cache_read]'` (USD per million tokens). Without the
    cache prices, Anthropic's multipliers apply (write 1.25x, read 0.1x input)."""
    out: dict[str, Price] = {}
    for v in values:
        model, _, nums = v.partition("=")
        try:
            xs = [float(x) for x in nums.split(",")]
            if not model.strip() or len(xs) not in (2, 4) or any(x < 0 for x in xs):
                raise ValueError
        except ValueError:
            raise UsageError(f"--price {v!r}: expected MODEL=IN,OUT or MODEL=IN,OUT,CACHE_WRITE,CACHE_READ "
                             "(USD per million tokens, e.g. my-model=3,15)") from None
        p = Price.from_input(xs[0], xs[1])
        out[model.strip()] = p if len(xs) == 2 else Price(xs[0], xs[1], xs[2], xs[2] * 1.6, xs[3])
    return out


def context_window(n: int | None) -> int | None:
    if n is not None and n <= 0:
        raise UsageError(f"--context-window must be a positive number of tokens, got {n}")
    return n


def output_format(json_schema: str | None) -> dict[str, Any] | None:
    if json_schema is None:
        return None
    from ..structured import check_schema, load_schema_arg

    try:
        schema = load_schema_arg(json_schema)
        check_schema(schema)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return {"type": "json_schema", "schema": schema}


def custom_command(prompt: str, options: AgentOptions) -> tuple[str, AgentOptions]:
    """`/name args` naming a custom command (commands.py) becomes its prompt, with its
    allowed-tools and model for this run; any other prompt is kept as it is."""
    if not prompt.startswith("/") or options.setting_sources is None:
        return prompt, options
    from ..commands import expand, find_commands

    ex = expand(prompt, find_commands(str(options.cwd or "."), options.setting_sources))
    if ex is None:
        return prompt, options
    return ex.prompt, replace(options, allowed_tools=[*options.allowed_tools, *ex.allowed_tools],
                              model=ex.model or options.model)


def run_cli(args: argparse.Namespace) -> int:
    if args.prompt is None and sys.stdin is not None and sys.stdin.isatty():
        from .interactive import interactive_main

        return interactive_main(args)
    for name in ("system_prompt", "append_system_prompt"):
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, valid_text(getattr(args, name)))
    prompt = valid_text(read_prompt(args)).strip()
    try:
        if not prompt:
            raise UsageError("the prompt is empty: pass it with -p PROMPT or on stdin")
        options = build_options(args)
        prompt, options = custom_command(prompt, options)
    except (UsageError, ValueError) as e:
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_run(prompt, options, args))


async def _run(prompt: str, options: AgentOptions, args: argparse.Namespace) -> int:
    from .render import TraceRenderer

    renderer = TraceRenderer(sys.stderr, verbose=args.verbose) if args.output_format == "text" else None
    result: ResultMessage | None = None
    session_id = ""
    # SIGTERM (timeout(1), CI, docker stop) and SIGHUP (the terminal closed) cancel the run
    # like Ctrl-C does, so the commands tools started (in their own process groups) are killed
    # and the session is closed; the default action would end loopwright at once and leave
    # them running.
    terminated = 0
    main_task = asyncio.current_task()

    def on_signal(signum: int) -> None:
        nonlocal terminated
        terminated = signum
        if main_task is not None:
            main_task.cancel()

    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signals here
            asyncio.get_running_loop().add_signal_handler(signum, on_signal, signum)
    try:
        async for msg in query(prompt, options):
            if isinstance(msg, SystemMessage) and msg.subtype == "init":
                session_id = str(msg.data.get("session_id", ""))
                for w in msg.data.get("warnings") or []:  # in every output format: about the user's own files
                    print(f"loopwright: warning: {w}", file=sys.stderr)
            if args.output_format == "stream-json":
                sys.stdout.write(json.dumps(message_json(msg, session_id), ensure_ascii=False) + "\n")
                sys.stdout.flush()
            elif renderer is not None:
                renderer.show(msg)
            if isinstance(msg, ResultMessage):
                result = msg
    except ValueError as e:  # configuration problems found when the run starts (bad script file, ...)
        if renderer is not None:
            renderer.close()
        print(f"loopwright: {e}", file=sys.stderr)
        return EXIT_USAGE
    except asyncio.CancelledError:
        if not terminated:
            raise
        print(f"loopwright: terminated ({signal.Signals(terminated).name})", file=sys.stderr)
        return 128 + terminated
    finally:
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                asyncio.get_running_loop().remove_signal_handler(signum)
        if renderer is not None:
            renderer.close()
    if result is None:  # query() always ends with a result; this guards a broken extension
        print("loopwright: the run ended without a result", file=sys.stderr)
        return EXIT_RUN_ERROR
    if args.output_format == "json":
        print(json.dumps(result.to_json(), ensure_ascii=False), flush=True)
    elif args.output_format == "text":
        if result.subtype == "success":
            print(result.result or "", flush=True)
        else:
            print(f"loopwright: {result.subtype}: {result.result or ''}", file=sys.stderr)
    return EXIT_OK if not result.is_error else EXIT_RUN_ERROR
