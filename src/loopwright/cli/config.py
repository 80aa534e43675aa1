"""Room: cli. Owns usage errors, exit codes and building AgentOptions from the arguments; may import
the rooms below cli, never another cli module.

The command line's configuration: usage errors, exit codes, and the AgentOptions built from
the parsed arguments (shared by the headless and the interactive modes).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..prompts import default_system_prompt

if TYPE_CHECKING:
    from ..options import AgentDefinition, AgentOptions
    from ..settings import Settings
    from ..usage import Price

EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE = 0, 1, 2

# Model specs resolve_model understands. A bare name must be an Anthropic model id.
SCRIPTED_HINT = "or use --model scripted:FILE.json to run a scripted model with no provider"


def pause_gc() -> None:
    """For a process that is one run: no garbage collection until the first model answer.
    Start-up creates ~150,000 objects (modules, classes, functions) and almost no garbage,
    and the collector's passes over them cost ~10% of the instructions to the first request."""
    gc.disable()


def resume_gc() -> None:
    """The collector back on (once the first request is out), with what start-up made frozen:
    it lives as long as the process, so neither the later passes nor the one at exit walk it."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


class UsageError(Exception):
    """Bad input found before the run starts: printed as one line, exit code 2."""


def split_tools(values: list[str]) -> list[str]:
    """`--allowedTools "Bash Read" --allowedTools Edit,Write` -> rules, keeping `Bash(git diff *)` whole."""
    out: list[str] = []
    for v in values:
        depth, cur = 0, ""
        for ch in v:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            if ch in ", " and depth == 0:
                if cur:
                    out.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            out.append(cur)
    return out


def check_model(spec: str, base_url: str | None, need_key: bool = True) -> None:
    """Reject a model spec the run could only fail on, with a message that says what to do."""
    from ..models import parse_model_spec

    m = parse_model_spec(spec)
    if m.provider == "scripted":
        if m.problem == "empty":
            raise UsageError("--model scripted: needs a file: --model scripted:FILE.json")
        return
    if m.problem == "provider":
        provider = spec.split(":", 1)[0]
        raise UsageError(f"unknown model provider {provider!r} in --model {spec}: use claude-<model>, "
                         "openai:<model>, responses:<model> or scripted:FILE.json")
    if m.provider in ("openai", "responses"):
        if m.problem == "empty":
            raise UsageError(f"--model {m.provider}: needs a model name, e.g. --model {m.provider}:gpt-5")
        if not base_url and not os.environ.get("OPENAI_BASE_URL") and not os.environ.get("OPENAI_API_KEY"):
            raise UsageError(f"no API key for {spec}: set OPENAI_API_KEY (or pass --base-url of an "
                             f"OpenAI-compatible server), {SCRIPTED_HINT}")
        return
    name = m.name
    if m.problem == "no-provider" or (m.problem == "empty" and not spec.startswith("anthropic:")):
        import difflib  # (only on a mistake's way)

        from ..models.catalog import ALIASES

        near = difflib.get_close_matches(spec.lower(), ALIASES, n=1, cutoff=0.75)
        raise UsageError(f"unknown model {spec!r}{f' (did you mean {near[0]}?)' if near else ''}: for an "
                         f"OpenAI(-compatible) model write --model openai:{spec} (and --base-url for your own "
                         "server); else claude-<model> (Anthropic), anthropic:<id> or scripted:FILE.json")
    if m.problem == "empty":
        raise UsageError("--model anthropic: needs a model id, e.g. --model claude-sonnet-5-5")
    if need_key and not os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        raise UsageError(f"no API key for model {name}: set ANTHROPIC_API_KEY (or an apiKeyHelper in settings), "
                         f"{SCRIPTED_HINT}")


def check_base_url(model: str, flag: str | None) -> None:
    """A base URL without its scheme (`localhost:11434/v1`), from --base-url or the model's provider
    variable, is a usage error naming the URL to write (the run would end on it at its first call)."""
    from urllib.parse import urlsplit

    from ..models import parse_model_spec

    provider = parse_model_spec(model).provider
    var = {"openai": "OPENAI_BASE_URL", "responses": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}.get(provider)
    name, url = ("--base-url", flag) if flag else (var, os.environ.get(var) if var else None)
    if url:
        target = urlsplit(url)
        if target.scheme not in ("http", "https") or not target.hostname:
            # (imported only on this refusal: a scripted model's run never loads the transport)
            from ..models.http import shown_url

            shown = shown_url(url) or url
            raise UsageError(f"{name} {shown} is not an http(s) URL: write http://{shown.split('://')[-1]}")


def resolve_cwd(value: str | None) -> Path:
    """`--cwd` as an absolute directory (the current one when not given)."""
    if value is None:
        return Path.cwd()
    p = Path(value).expanduser()
    if not p.exists():
        raise UsageError(f"--cwd {value}: no such directory")
    if not p.is_dir():
        raise UsageError(f"--cwd {value}: not a directory")
    return p.resolve()


def parse_prices(values: list[str]) -> dict[str, Price]:
    """`--price 'MODEL=in,out[,cache_write,cache_read]'` (USD per million tokens). Without the
    cache prices, Anthropic's multipliers apply (write 1.25x, read 0.1x input)."""
    from ..usage import Price

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


def positive(flag: str, n: int | None) -> int | None:
    """A flag's positive number of tokens, checked."""
    if n is not None and n <= 0:
        raise UsageError(f"{flag} must be a positive number of tokens, got {n}")
    return n


def context_window(n: int | None) -> int | None:
    """`--context-window N`, checked."""
    if n is not None and n <= 0:
        raise UsageError(f"--context-window must be a positive number of tokens, got {n}")
    return n


def output_format(json_schema: str | None) -> dict[str, Any] | None:
    """`--json-schema` (a JSON string or file) as the run's output_format, checked."""
    if json_schema is None:
        return None
    from ..structured import check_schema, load_schema_arg

    try:
        schema = load_schema_arg(json_schema)
        check_schema(schema)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return {"type": "json_schema", "schema": schema}



def check_sessions(options: AgentOptions) -> str | None:
    """Check -r/-c/--fork-session before anything starts: UsageError for a session that is not
    there (as a run would fail on it, but before the prompt); a note (returned) when -c finds no
    session of this directory to continue, so a fresh one starts."""
    if options.resume is not None or options.session_id is not None:  # (a plain run imports no sessions here)
        from ..sessions import InvalidSessionId, check_session_id

        try:  # an id that is a path is refused before anything is read or written
            if options.resume is not None:
                check_session_id(options.resume, "--resume")
            if options.session_id is not None:
                check_session_id(options.session_id, "--session-id")
        except InvalidSessionId as e:
            raise UsageError(str(e)) from None
    if options.fork_session and not (options.resume or options.continue_conversation):
        raise UsageError("--fork-session needs --resume ID or --continue (it forks the session they load)")
    if not (options.resume or options.continue_conversation):
        return None
    from ..sessions import store_for

    store = store_for(options)
    cwd = Path(str(options.cwd or ".")).resolve()
    if options.resume:
        if not store.exists(options.resume, cwd):
            raise UsageError(f"no session {options.resume!r} to resume (`loopwright sessions list` shows "
                             "this directory's sessions)")
        return None
    latest = getattr(store, "latest", None)
    if callable(latest) and latest(cwd) is None:
        return f"no session in {cwd} to continue: starting a new one"
    return None


def thinking(value: str | None) -> dict[str, Any] | None:
    """`--thinking adaptive|disabled|N`, checked."""
    if value is None:
        return None
    from ..models.reasoning import parse_thinking_arg

    try:
        return parse_thinking_arg(value)
    except ValueError as e:
        raise UsageError(str(e)) from None


def fallback_models(value: str | None, model: str, base_url: str | None) -> list[str] | None:
    """`--fallback-model M[,M2...]`, each checked as --model is."""
    if value is None:
        return None
    names = [x.strip() for x in value.split(",") if x.strip()]
    if not names:
        raise UsageError("--fallback-model needs a model name, e.g. --fallback-model claude-sonnet-5-5")
    for n in names:
        if n == model:
            raise UsageError(f"--fallback-model {n} is the --model itself: name another model")
        try:
            check_model(n, base_url, need_key=False)  # (the key: checked with the model's)
        except UsageError as e:
            raise UsageError(f"--fallback-model: {e}") from None
    return names


def setup_trigger(args: argparse.Namespace) -> Literal["init", "maintenance"] | None:
    """Claude Code's --init / --init-only ("init") and --maintenance ("maintenance"): the Setup hooks' trigger."""
    init = bool(getattr(args, "init", False) or getattr(args, "init_only", False))
    if init and getattr(args, "maintenance", False):
        raise UsageError("--maintenance and --init/--init-only name two Setup triggers: give one")
    return "init" if init else "maintenance" if getattr(args, "maintenance", False) else None


def build_options(args: argparse.Namespace) -> AgentOptions:
    """The run's options from the parsed command line; UsageError on bad input."""
    from ..models import DEFAULT_MODEL

    cwd = resolve_cwd(args.cwd)
    for d in args.add_dirs:
        if not Path(d).expanduser().is_dir():
            raise UsageError(f"--add-dir {d}: no such directory")
    model = args.model  # None: $LOOPWRIGHT_MODEL, $ANTHROPIC_MODEL (Claude Code's), the settings' "model", the default
    if model is not None and not model.strip():  # (`--model "$MODEL"` with MODEL unset)
        raise UsageError("--model is empty: give a model, e.g. --model claude-sonnet-5-5 or --model openai:<model>")
    var = None if model else next((n for n in ("LOOPWRIGHT_MODEL", "ANTHROPIC_MODEL") if os.environ.get(n)), None)
    if var:
        from ..models.catalog import resolve_alias

        model = resolve_alias(os.environ[var])
    if model:
        try:
            check_model(model, args.base_url, need_key=False)  # the key: once the settings are read (apiKeyHelper)
        except UsageError as e:
            raise UsageError(f"{var}={os.environ[var]}: {e}" if var else str(e)) from None
    if getattr(args, "include_partial_messages", False) and getattr(args, "output_format", None) != "stream-json":
        # (else nothing would show them: Claude Code 2.1.332 refuses it the same way)
        raise UsageError("--include-partial-messages needs -p --output-format stream-json: the partial messages "
                         "are stream-json lines")
    if args.max_turns is not None and args.max_turns < 0:
        raise UsageError(f"--max-turns must be 0 or more, got {args.max_turns}")
    if args.max_budget_usd is not None and not args.max_budget_usd > 0:
        raise UsageError(f"--max-budget-usd must be positive, got {args.max_budget_usd}")
    from ..agents import agents_from_json, make_agent_tool
    from ..options import AgentOptions
    from ..tools.builtin import default_tools  # after the checks: bad input fails fast

    try:  # the Agent tool is always there, as in Claude Code, with general-purpose and --agents types
        agents = agents_from_json(args.agents) if getattr(args, "agents", None) else {}
    except (OSError, ValueError) as e:
        raise UsageError(f"--agents: {e}") from None
    tools = [*default_tools(), make_agent_tool(agents)]  # (the Task tools unless CLAUDE_CODE_ENABLE_TASKS=false)
    _rules_naming_no_tool(args, tools)
    denied = {r for r in split_tools(args.disallowed_tools) if "(" not in r}  # a disallowed tool is not offered
    tools = offered_tools([t for t in tools if t.name not in denied], getattr(args, "tools", None), denied, [])
    settings = _read_settings(args, cwd)  # once: their "agent", "model", "fallbackModel", "effortLevel", apiKeyHelper
    main = main_agent(getattr(args, "agent", None) or (settings.agent if settings is not None else None), agents,
                      cwd, args)
    if main is not None:  # --agent: the main thread runs as that agent (what the command line says wins)
        tools = [t for t in tools if (main.tools is None or t.name in main.tools)
                 and t.name not in (main.disallowed_tools or ())]
        if args.model is None and main.model not in (None, "inherit") and isinstance(main.model, str):
            from ..models.catalog import resolve_alias

            model = resolve_alias(main.model)
            check_model(model, args.base_url, need_key=False)
    given = args.system_prompt if not (main is not None and args.system_prompt == "") else None  # (the SDK's default "")
    system = given if given is not None else (
        f"{main.prompt}\n\nWorking directory: {cwd}" if main is not None else default_system_prompt(cwd, tools))
    options = AgentOptions(
        model=model,
        tools=tools,
        # the init line and /agents list them; only while the Agent tool is offered (the run would
        # add one for `agents`, past --tools / --disallowedTools / an --agent's tools)
        agents=agents if any(t.spawns_agents for t in tools) else {},
        max_turns=args.max_turns if args.max_turns is not None or main is None else main.max_turns,
        max_budget_usd=args.max_budget_usd,
        system_prompt=system,
        append_system_prompt=args.append_system_prompt,
        cwd=str(cwd),
        allowed_tools=split_tools(args.allowed_tools),
        disallowed_tools=split_tools(args.disallowed_tools),
        # None: the settings' defaultMode, else "default" (--agent: the agent's permissionMode)
        permission_mode=args.permission_mode or (main.permission_mode if main is not None else None),
        add_dirs=[str(Path(d).expanduser().resolve()) for d in args.add_dirs],  # as typed: from the shell's cwd
        setting_sources=[x.strip() for x in (getattr(args, "setting_sources", None) or "").split(",") if x.strip()],
        settings=getattr(args, "settings", None),
        claude_settings=bool(getattr(args, "claude_settings", False)),
        trust_workspace=True if getattr(args, "trust", False) else None,  # None: the trust store decides
        sandbox=True if getattr(args, "sandbox", False) else None,  # on top of the settings' "sandbox"
        memory=not getattr(args, "bare", False),
        bare=bool(getattr(args, "bare", False)),  # Claude Code's --bare: no settings hooks, no installed plugins
        output_format=output_format(getattr(args, "json_schema", None)),
        prices=parse_prices(getattr(args, "price", None) or []) or None,
        context_window=context_window(getattr(args, "context_window", None)),
        max_tokens=positive("--max-tokens", getattr(args, "max_tokens", None)),
        effort=getattr(args, "effort", None),
        thinking=thinking(getattr(args, "thinking", None)),
        fallback_model=fallback_models(getattr(args, "fallback_model", None), model or DEFAULT_MODEL, args.base_url),
        include_partial_messages=args.include_partial_messages,
        base_url=args.base_url,
        session_id=args.session_id,
        resume=args.resume,
        fork_session=args.fork_session,
        continue_conversation=args.continue_conversation,
        persist_session=not args.no_session_persistence,
        mcp_servers=_mcp_cli_servers(getattr(args, "mcp_config", None) or []),
        strict_mcp_config=bool(getattr(args, "strict_mcp_config", False)),
        refusal_advice="cli",
        file_mentions=True,  # `@path` in a prompt includes the file (mentions.py)
        plugins=list(getattr(args, "plugin_dirs", None) or []),  # --plugin-dir (plugins/)
        include_hook_events=getattr(args, "cc_include_hook_events", None) is not None,  # (stream-json only)
        setup_trigger=setup_trigger(args),
    )
    from dataclasses import replace

    from ..runconfig import with_settings_model
    from ..settings import SettingsError

    try:  # the settings' "model" (Claude Code's) when no flag names one, and their apiKeyHelper
        options = with_settings_model(options, settings)
    except SettingsError as e:  # a "model" naming no model: said here, never replaced by the default
        raise UsageError(str(e)) from None
    model = options.model if isinstance(options.model, str) else DEFAULT_MODEL
    keyed = settings is not None and (settings.api_key_helper or settings.env.get("ANTHROPIC_API_KEY")
                                      or settings.env.get("ANTHROPIC_AUTH_TOKEN") or settings.env.get("OPENAI_API_KEY"))
    check_model(model, args.base_url or (settings.env.get("OPENAI_BASE_URL") if settings is not None else None),
                need_key=not keyed)  # (a settings file's env gives the provider its key as the environment would)
    check_base_url(model, args.base_url)
    return replace(options, model=model) if options.model is None else options


def _rules_naming_no_tool(args: argparse.Namespace, tools: list[Any]) -> None:
    """--allowedTools / --disallowedTools rules that name no tool (a typo: `Bsh`), one warning
    each, before the run. Not as the SDK's CLI: there the run names them as the SDK's options
    (allowed_tools=[...]) in its init line and on stderr, and the flag's line made it twice."""
    if getattr(args, "rules_named_by_run", False):
        return
    from ..gate.rules import rules_naming_no_tool

    for flag, values in (("--allowedTools", args.allowed_tools), ("--disallowedTools", args.disallowed_tools)):
        for warning in rules_naming_no_tool(flag, split_tools(values), {t.name for t in tools}):
            print(f"loopwright: warning: {warning}", file=sys.stderr)


def main_agent(name: str | None, agents: dict[str, AgentDefinition], cwd: Path,
               args: argparse.Namespace) -> AgentDefinition | None:
    """`name` (--agent NAME, else the settings' "agent"): its definition (--agents JSON first, then the
    agent files of the setting sources; a project's file in an untrusted workspace grants nothing:
    agentfiles.py)."""
    if not name:
        return None
    from ..trust import trusted_for

    sources = [x.strip() for x in (getattr(args, "setting_sources", None) or "").split(",") if x.strip()]
    trusted = True if getattr(args, "trust", False) else trusted_for(None, cwd)
    from ..agentfiles import find_agent_files, pick_agent

    files = find_agent_files(cwd, [x for x in sources if x in ("user", "project")], trusted)
    try:
        return pick_agent(name, agents, files)
    except ValueError as e:
        raise UsageError(str(e)) from None


def offered_tools(tools: list[Any], spec: str | None, denied: set[str], notes: list[str]) -> list[Any]:
    """`--tools a,b` keeps those built-in tools, `--tools ""` none, `default` (or no flag) all.
    A name loopwright has no tool for is noted (Claude Code's tool set is larger), not offered."""
    if spec is None or spec.strip() == "default":
        return tools
    names = ["Agent" if n == "Task" else n for n in split_tools([spec])]  # Task: Claude Code's older name
    by_name = {t.name: t for t in tools}
    unknown = [n for n in names if n not in by_name and n not in denied]
    if unknown:
        notes.append(f"--tools: loopwright has no tool {', '.join(unknown)}, so it is not offered (its tools: "
                     f"{', '.join(by_name)})")
    return [by_name[n] for n in names if n in by_name]


def _read_settings(args: argparse.Namespace, cwd: Path) -> Settings | None:
    """The settings files the command line's run reads (runconfig.run_settings of its options: the
    same sources, --settings, --claude-settings and trust), read once for what the command line
    takes from them (None: unreadable; the run's own reading names the problem)."""
    from ..settings import SettingsError, load_settings
    from ..trust import trusted_for

    sources = [x.strip() for x in (getattr(args, "setting_sources", None) or "").split(",") if x.strip()]
    trusted = True if getattr(args, "trust", False) else trusted_for(None, cwd)
    try:
        return load_settings(cwd, sources, claude=bool(getattr(args, "claude_settings", False)),
                             extra=getattr(args, "settings", None), trusted=trusted)
    except SettingsError:
        return None


def _mcp_cli_servers(values: list[str]) -> dict[str, Any] | None:
    """--mcp-config's servers (mcp.config reads them, imported only when the flag is given)."""
    if not values:
        return None
    from ..mcp.config import mcp_cli_servers

    return mcp_cli_servers(values)
