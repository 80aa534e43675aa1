"""Room: options (above sessions, below settings). Owns AgentOptions; may import the rooms below it,
never loop, agents, client, workflows or cli.

AgentOptions: everything a run is configured with (Claude Agent SDK field names). Plain data:
building one checks its fields (a clear TypeError / ValueError naming the field and the fix) and
changes nothing else. The Agent tool for `agents` is added when a run is built (loop.Run).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal

from .gate import PERMISSION_MODES, CanUseTool, PermissionMode
from .hooks import Hooks
from .messages import OutputT
from .models.base import Model
from .tools.base import DepsT, Tool
from .usage import Price

if TYPE_CHECKING:
    from .commands import Expanded
    from .handoffs import Handoff
    from .interaction import AskUser, ReviewPlan
    from .limits import UsageLimits
    from .permission_context import ToolPermissionContext as ToolPermissionContext
    from .sessions import SessionStore
    from .skills import PreloadedSkill


@dataclass
class AgentDefinition:
    """A subagent type (the Agent SDK's AgentDefinition). `tools`: names of the parent's
    tools it may use (None: all of them); `model`: None or "inherit" for the parent's model,
    "sonnet" | "opus" | "haiku", any model string `AgentOptions.model` takes, or a Model."""

    description: str
    prompt: str
    tools: list[str] | None = None
    model: str | Model | None = None
    max_turns: int | None = None
    disallowed_tools: list[str] | None = None  # names taken away from the tools it gets
    # None: the parent's mode; else the mode its calls are judged in (not when the parent
    # bypasses permissions or accepts edits: those win, as in Claude Code)
    permission_mode: PermissionMode | None = None
    source: str = ""  # the agent file it was read from ("" for --agents / AgentOptions.agents)
    effort: str | None = None  # None: the parent's (AgentOptions.effort's levels)
    hooks: dict[str, Any] | None = None  # an agent file's `hooks` ({event: [HookMatcher]}): fired while it runs
    skills: list[str] | None = None  # skills preloaded into its first message (names of the run's skills)
    # its own MCP servers: the name of one of the run's (its tools too), or {name: config}, started
    # for the subagent and stopped when it ends (Claude Code's agent `mcpServers`)
    mcp_servers: list[str | dict[str, Any]] | None = None
    # a persistent memory directory of its own: "user" (~/.claude/agent-memory/<name>/), "project"
    # (.claude/agent-memory/<name>/) or "local" (.claude/agent-memory-local/<name>/)
    memory: str | None = None
    # `skills`, read: the text blocks that follow the task in its first message (set by the assembler)
    preloaded: tuple[str | PreloadedSkill, ...] = ()
    unsupported: tuple[str, ...] = ()  # keys of the `--agents` / SDK form loopwright does not apply (named)
    isolation: str | None = None  # "worktree": each run in a git worktree of its own (kept when it changed)


# The keys of an agent in the `--agents` / Agent SDK form that loopwright applies (any other is named).
_AGENT_KEYS = frozenset({"description", "prompt", "tools", "maxTurns", "max_turns", "model", "disallowedTools",
                         "disallowed_tools", "permissionMode", "permission_mode", "effort", "skills", "mcpServers",
                         "memory"})
MEMORY_SCOPES = ("user", "project", "local")


def agent_servers(value: Any, where: str) -> list[str | dict[str, Any]] | None:
    """An agent's `mcpServers`: a list of server names and {name: config} objects (or one such
    object). Raises ValueError naming `where`."""
    if value is None:
        return None
    if isinstance(value, dict):
        value = [{k: v} for k, v in value.items()]
    if not (isinstance(value, list) and all(isinstance(x, str) or (isinstance(x, dict) and x) for x in value)):
        raise ValueError(f"{where}: \"mcpServers\" must be a list of server names and {{name: config}} objects")
    return list(value)


def agents_from_json(value: str | dict[str, Any]) -> dict[str, AgentDefinition]:
    """Claude Code's `--agents` JSON: `{"name": {"description", "prompt", "tools"?, "model"?,
    "maxTurns"?}}`, as a dict, a JSON string or the path of a JSON file. Raises ValueError."""
    data: Any = value
    if isinstance(value, str):
        text = value if value.lstrip().startswith("{") else Path(value).expanduser().read_text()
        data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("--agents must be a JSON object of agent definitions")
    out: dict[str, AgentDefinition] = {}
    for kind, d in data.items():
        if not isinstance(d, dict) or not isinstance(d.get("description"), str) or not isinstance(d.get("prompt"), str):
            raise ValueError(f"agent {kind!r} needs a \"description\" and a \"prompt\" (strings)")
        tools = d.get("tools")
        if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
            raise ValueError(f"agent {kind!r}: \"tools\" must be a list of tool names")
        turns = d.get("maxTurns", d.get("max_turns"))
        if turns is not None and not (isinstance(turns, int) and turns >= 0):
            raise ValueError(f"agent {kind!r}: \"maxTurns\" must be a non-negative integer")
        model = d.get("model")
        denied = d.get("disallowedTools", d.get("disallowed_tools"))
        if denied is not None and not (isinstance(denied, list) and all(isinstance(t, str) for t in denied)):
            raise ValueError(f"agent {kind!r}: \"disallowedTools\" must be a list of tool names")
        mode = d.get("permissionMode", d.get("permission_mode"))
        if mode is not None and mode not in PERMISSION_MODES:
            raise ValueError(f"agent {kind!r}: \"permissionMode\" must be one of {', '.join(PERMISSION_MODES)}")
        effort = d.get("effort")
        if effort is not None:
            from .models.reasoning import check_effort

            check_effort(effort, f"agent {kind!r}: \"effort\"")
        skills = d.get("skills")
        if skills is not None and not (isinstance(skills, list) and all(isinstance(x, str) for x in skills)):
            raise ValueError(f"agent {kind!r}: \"skills\" must be a list of skill names")
        servers = agent_servers(d.get("mcpServers"), f"agent {kind!r}")
        memory = d.get("memory")
        if memory is not None and memory not in MEMORY_SCOPES:
            raise ValueError(f"agent {kind!r}: \"memory\" must be one of {', '.join(MEMORY_SCOPES)}")
        unsupported = tuple(k for k, v in d.items() if k not in _AGENT_KEYS and v is not None)
        out[kind] = AgentDefinition(d["description"], d["prompt"], tools, model if isinstance(model, str) else None,
                                    turns, denied, mode, effort=effort, skills=skills, mcp_servers=servers,
                                    memory=memory, unsupported=unsupported)
    return out


def agent_definitions(agents: Mapping[str, AgentDefinition | dict[str, Any]]) -> dict[str, AgentDefinition]:
    """`agents` as AgentDefinitions (dicts in the `--agents` form are parsed). Raises TypeError/ValueError."""
    out: dict[str, AgentDefinition] = {}
    for kind, d in agents.items():
        if isinstance(d, dict):
            d = agents_from_json({kind: d})[kind]
        if not isinstance(d, AgentDefinition):
            raise TypeError(f"agents[{kind!r}] must be an AgentDefinition, not {type(d).__name__}")
        out[kind] = d
    return out


@dataclass
class AgentOptions(Generic[DepsT, OutputT]):
    """Everything a run is configured with (the Claude Agent SDK's ClaudeAgentOptions, in small):
    model, tools, limits, permissions, hooks, sessions. `AgentOptions[Deps, Output]`: the types of
    `deps` and of the answer (`output_type`), which mypy infers from the two fields."""

    model: str | Model | None = None
    """The model: a `Model` object (`ScriptedModel`, `AnthropicModel`, ...) or a string: `"claude-…"` or
    `"anthropic:<id>"` (Anthropic), `"openai:<model>"` (chat completions), `"responses:<model>"` (OpenAI's
    Responses API), `"scripted:FILE.json"`. A bare name that is no Claude id (`"gpt-4o"`) is a ValueError
    naming the fix. None: `$LOOPWRIGHT_MODEL`, else the default Claude model."""
    tools: list[Tool] = field(default_factory=list)
    """The tools the model may call: `Tool` objects (`@lw.tool` functions), names of built-in tools
    (`"Read"`, `"Bash"`, ...), or the Agent SDK's `{"type": "preset", "preset": "claude_code"}` for all of
    them (`lw.default_tools()`). Left out: no tools (unlike the SDK, whose default is all)."""
    max_turns: int | None = None
    """Tool-use turns T (seed Def 3.1): at most T turns and T + 1 model calls (Thm 4.1); the run then
    ends `error_max_turns`. None: no limit. Claude Code's `--max-turns` counts model calls instead."""
    max_budget_usd: float | None = None
    """Budget B in US dollars (seed Prop 5.4): Stop after the response that reaches B, so B ≤ spent <
    B + c_max; the run ends `error_max_budget_usd`. Refused at start with a model whose price is unknown."""
    usage_limits: UsageLimits | None = None
    """Caps on model requests and tokens (`loopwright.UsageLimits`, pydantic-ai's UsageLimits), each
    checked before the request it would pass and ending the run with its own subtype."""
    can_use_tool: CanUseTool | Callable[..., Any] | None = None
    """The permission callback, asked where the gate would ask a person: `(tool_name, input)` or the
    Agent SDK's `(tool_name, input, context: ToolPermissionContext)`, sync or async, returning
    `True`/`False`, `Allow(updated_input=None)`, `Deny(message, interrupt=False)` or the SDK's dict.
    One that raises or returns anything else ends the run with `error_during_execution`."""
    system_prompt: str | dict[str, Any] | None = None
    """The system prompt: a string, or the Agent SDK's `{"type": "preset", "preset": "claude_code",
    "append": "..."}` (loopwright's own coding-agent prompt with more text after it). None: no prompt."""
    append_system_prompt: str | None = None
    """Text appended to the system prompt (the CLI's `--append-system-prompt`)."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment for the processes tools and hooks start (Bash, command hooks, stdio MCP servers), over the
    settings files' `"env"`; also read by the provider (`ANTHROPIC_API_KEY`, `OPENAI_BASE_URL`, ...)."""
    stderr: Callable[[str], None] | None = None
    """Called with each diagnostic line of a run (a warning, a retry, a hook error, a model fallback),
    as the Agent SDK's stderr callback gets the CLI's."""
    cwd: str | Path | None = None
    """The working directory of the run: tools resolve paths from it, reads and writes are confined to it
    (and `add_dirs`), and its project's settings and memory are read. Must exist. None: the process's."""
    allowed_tools: list[str] = field(default_factory=list)
    """Allow rules, Claude Code's syntax: `["Read", "Bash(git diff *)", "Edit(./src/**)", "mcp__fs"]`:
    calls they match run without asking. Deny rules still win."""
    disallowed_tools: list[str] = field(default_factory=list)
    """Deny rules (`["Bash(rm *)", "WebFetch"]`): a call they match is refused, whatever else allows it;
    a bare tool name is not offered to the model at all."""
    permission_mode: PermissionMode | None = None
    """`"default"`, `"acceptEdits"` (file edits in the working directories run), `"plan"` (read-only),
    `"bypassPermissions"` (everything but deny rules runs) or `"dontAsk"` (what would ask is refused).
    None: the settings' `defaultMode`, else `"default"`."""
    hooks: Hooks | dict[str, Any] | None = None
    """Hooks: a `Hooks` object, or the Agent SDK's `{event: [HookMatcher(...)]}` with Python callables for
    `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, `SessionStart`, ... (command hooks come from
    the settings files)."""
    add_dirs: list[str | Path] = field(default_factory=list)
    """More directories the run may read and write, beside `cwd` (the CLI's `--add-dir`)."""
    agents: Mapping[str, AgentDefinition | dict[str, Any]] = field(default_factory=dict)
    """Subagent types for the Agent tool: `{name: AgentDefinition(...)}` or `--agents`-style dicts; when
    set, a run built from these options gets the Agent tool (`general-purpose` is always there)."""
    setting_sources: list[str] | None = None
    """Which settings files to read: `["user", "project", "local"]` or a subset (also their memory
    files, skills and commands). None: none (the Agent SDK's default; the CLI reads all three).
    Given (or with `plugins`), a prompt `/name args` naming one of their commands or skills runs it,
    as in the SDK's CLI; with None a prompt is always sent as it is (docs/python-api.md)."""
    settings: str | dict[str, Any] | None = None
    """More settings, as the CLI's `--settings`: a file path, a JSON string or a dict; applied over the
    settings files and never narrowed by an untrusted workspace."""
    claude_settings: bool = False
    """Also read Claude Code's `.claude/settings.json` and `settings.local.json` files."""
    managed_settings: dict[str, Any] | None = None
    """A host's managed settings (the TypeScript Agent SDK's `managedSettings`, the CLI's
    `--managed-settings`): only what restricts is kept, on top of every settings file; left out
    (said in one line) where the machine's managed settings do not set `parentSettingsBehavior:
    "merge"` (docs/managed-settings.md)."""
    trust_workspace: bool | None = None
    """Workspace trust: True trusts `cwd`'s project files for this run, False never; None (the default):
    trusted only when the user trusted the workspace (`loopwright trust DIR`). Untrusted, the project's
    settings, `.mcp.json`, skills and commands can only narrow what you allow."""
    memory: bool = True
    """Project memory: `AGENTS.md` / `CLAUDE.md` / `LOOPWRIGHT.md` of the `setting_sources`, sent in the first
    user message. False: none (the CLI's `--bare`)."""
    bare: bool = False
    """Claude Code's `--bare`: besides no memory files, no hooks from the settings files and no installed
    plugins (hooks given here, `plugins` and the settings' other keys still apply)."""
    output_format: dict[str, Any] | None = None
    """Structured output, the Agent SDK's `{"type": "json_schema", "schema": {...}}`: the model answers
    through a `StructuredOutput` tool of that schema, and the value is `ResultMessage.structured_output`."""
    output_style: str | None = None
    """An output style's name (`"Explanatory"`, `"Concise"`, a style file's name); None: the settings'
    `"outputStyle"`, else the default style."""
    plugins: list[str | Path | dict[str, Any]] = field(default_factory=list)
    """Plugin directories for this run: paths, or the Agent SDK's `{"type": "local", "path": ...}`; the
    installed plugins that are enabled join them."""
    output_type: type[OutputT] | None = None
    """The answer's type: any type pydantic's TypeAdapter handles (a model, `int`, `list[str]`, a TypedDict,
    a dataclass, a union); `ResultMessage.output` is its value, checked (a wrong answer is sent back)."""
    output_guardrails: list[Callable[..., Any]] = field(default_factory=list)
    """Functions on the final answer, `fn(output)` or `fn(ctx, output)`, that keep it (or return a changed
    one) or reject it by raising `guardrails.ModelRetry(reason)`: a bounded reminder turn follows."""
    output_retries: int | None = None
    """Reminder turns after a rejected answer (a guardrail's or the output schema's). None: 2; then the
    run ends with `error_output_rejected`."""
    handoffs: list[Handoff] = field(default_factory=list)
    """Agents the conversation can be handed to (the Agents SDK's handoffs): a `transfer_to_<name>` tool
    each, whose call makes the target's system prompt, tools and model the run's for the next call."""
    deps: DepsT = None  # type: ignore[assignment]
    """The run's dependencies (pydantic-ai's deps, the Agents SDK's context): any object, given to tools
    (`ctx: RunContext[Deps]`, `ctx.deps`), Python hooks, `can_use_tool` and output validators. Never copied,
    never sent to the model."""
    include_partial_messages: bool = False
    """Also yield `StreamEvent`s (the provider's stream: text and tool-input deltas) as they arrive."""
    include_hook_events: bool = False
    """Also yield a `hook_started` and a `hook_response` SystemMessage for each hook that runs
    (Claude Code's --include-hook-events)."""
    setup_trigger: Literal["init", "maintenance"] | None = None
    """Fire the Setup hooks with this trigger before the first query's SessionStart (Claude Code's
    `--init`/`--init-only`: "init", `--maintenance`: "maintenance")."""
    prices: dict[str, Price] | None = None
    """Prices per model (`{"my-model": Price(input=..., output=...)}`, USD per million tokens), over the
    built-in catalog; a model without a price costs 0 and the result says so."""
    max_tokens: int | None = None
    """The output limit sent on every call (`max_tokens`, `max_completion_tokens` or `max_output_tokens` as
    the API takes it). None: the catalog's limit for the model, 4096 for one it does not know."""
    effort: str | None = None
    """How hard the model thinks: `"low"`, `"medium"`, `"high"`, `"xhigh"` or `"max"`, sent as the model
    family takes it (`output_config.effort`, `reasoning_effort`)."""
    thinking: dict[str, Any] | None = None
    """Extended thinking: `{"type": "enabled", "budget_tokens": N}`, `{"type": "adaptive"}` or
    `{"type": "disabled"}`; thinking blocks go back verbatim so the model keeps thinking between calls."""
    fallback_model: str | list[str] | None = None
    """Models to switch to when the model is overloaded or unavailable after its retries (529, 503): a
    model string, or a list tried in order, for the rest of the run (a `model_fallback` system message)."""
    max_pause_continuations: int = 5
    """How many times a response paused by the server (`pause_turn`, a long server-tool call) is
    continued before the run ends."""
    max_empty_answer_reminders: int = 3
    """How many times in a run an answer with nothing in it (no blocks, or only blank text; never kept
    in the conversation) is followed by a reminder asking the model once more, as Claude Code does;
    a second empty answer right after one ends the run all the same (result `""`). 0: an empty
    answer ends the run (seed Def 3.1 step 2), so a run keeps the T + 1 call bound."""
    base_url: str | None = None
    """The API's base URL (an Anthropic-compatible or OpenAI-compatible server; `--base-url`). None:
    `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`, else the provider's own."""
    api_key: str | None = None
    """The API key. None: `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`) / `OPENAI_API_KEY`."""
    max_retries: int = 4
    """Retries of a model call that failed in a way worth retrying (429, 5xx, a dropped connection),
    with backoff, each one visible on `stderr`."""
    prompt_caching: bool = True
    """Anthropic prompt caching: `cache_control` breakpoints on the tools, the system prompt and the newest
    messages (a 30-turn session costs ~0.17× of uncached)."""
    session_id: str | None = None
    """The id of a new session (a UUID or a safe name, never a path). None: a fresh UUID."""
    resume: str | None = None
    """A session id to continue: its history is loaded and the run goes on from it."""
    fork_session: bool = False
    """With `resume`: copy the session to a new id instead of appending to it."""
    continue_conversation: bool = False
    """Continue the latest session of `cwd` (the CLI's `-c`)."""
    persist_session: bool = False
    """Save the session as a JSONL transcript under `sessions_dir` (resumable, viewable with
    `loopwright view`). The CLI saves by default; the library only when asked."""
    sessions_dir: str | Path | None = None
    """Where transcripts go. None: `$LOOPWRIGHT_SESSIONS_DIR`, else `$LOOPWRIGHT_HOME/projects`, else
    `~/.loopwright/projects`."""
    session_fsync: str = "none"
    """How durable the transcript is: `"none"` (flushed per event: survives a killed process), `"turn"`
    or `"always"` (fsync: survives a power loss, at a cost per turn)."""
    session_store: SessionStore | None = None
    """Where sessions are kept: a `SessionStore`. None: JSONL files under `sessions_dir`."""
    context_window: int | None = None
    """The model's context window W in tokens, for compaction. None: the catalog's window for the model,
    or the one a local server reports (off for a model nobody knows)."""
    auto_compact: bool = True
    """Summarize the older turns when the next input is forecast above `compact_threshold × W`
    (seed Prop 5.2 (3)); the cut keeps Inv."""
    compact_threshold: float = 0.8
    """The share of the window W at which `auto_compact` summarizes (0.8: at 80 %)."""
    sandbox: Any = None
    """Bash in an OS sandbox (bubblewrap): True, Claude Code's `"sandbox"` settings object, or a
    `SandboxConfig`; on top of the settings files' `"sandbox"`. None: as the settings files say (off)."""
    mcp_servers: dict[str, Any] | str | Path | None = None
    """MCP servers: Claude Code's `{name: {...}}` (or `{"mcpServers": ...}`), a path to such a JSON file, or
    in-process servers from `create_sdk_mcp_server`. With `setting_sources`, the settings' `mcpServers` and
    the project's `.mcp.json` add to them."""
    strict_mcp_config: bool = False
    """Use only `mcp_servers`, none from settings files or `.mcp.json` (`--strict-mcp-config`)."""
    refusal_advice: Literal["python", "cli"] = "python"
    """How refusals tell the model (and you) to allow a call: as AgentOptions fields (`"python"`) or as
    command-line flags (`"cli"`, what the loopwright CLI sets)."""
    ask_user: AskUser | None = None
    """The user, for AskUserQuestion: an async callback a front end with a user gives. None: nobody to ask
    (AskUserQuestion gets an error result)."""
    elicit: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
    """The user, for an MCP server's elicitation (a question mid-call): an async callback
    `(server_name, request) -> {"action": "accept" | "decline" | "cancel", "content": {...}}`, the request
    being the MCP params (`message`, `mode`, `requestedSchema` or `url`). None: nobody to ask (the
    spec's headless answer: the schema's defaults, else a decline; mcp/asks.py)."""
    review_plan: ReviewPlan | None = None
    """The user, for ExitPlanMode in plan mode: an async callback approving or refusing the plan. None:
    the plan ends the run as its result."""
    file_mentions: bool = False
    """`@path` in the prompt includes that file, gated as a Read (the CLI sets it)."""
    slash_command: Expanded | None = None
    """The custom command the prompt (`/name args`, kept as typed) invokes, as a front end found it
    (`commands.expand`): the run puts its text in the prompt's place after the UserPromptSubmit
    hooks, with the UserPromptExpansion hooks and its inline shell (`` !`cmd` ``) run through the
    Bash gate (skillshell.py). ACP and the interactive mode set it, for one query; left None, a run
    finds it itself (the CLI's and the SDK protocol's runs do) when the options read setting
    sources or name plugins (query's rule)."""

    def __post_init__(self) -> None:
        self._check_limits()
        self._check_model()
        self._check_fallbacks()
        self._check_tools()
        from .prompts import check_system_prompt

        check_system_prompt(self.system_prompt)
        self._check_environment()
        self._check_rules_hooks_agents()
        self._check_paths()

    def _check_limits(self) -> None:
        if self.max_turns is not None and (not isinstance(self.max_turns, int) or isinstance(self.max_turns, bool)
                                           or self.max_turns < 0):
            raise ValueError(f"max_turns must be a non-negative integer or None, got {self.max_turns!r}")
        if self.max_budget_usd is not None:
            if isinstance(self.max_budget_usd, bool) or not isinstance(self.max_budget_usd, (int, float)):
                raise TypeError(f"max_budget_usd must be a number of US dollars (e.g. max_budget_usd=1.0), "
                                f"not {type(self.max_budget_usd).__name__} {self.max_budget_usd!r}")
            if not self.max_budget_usd > 0:
                raise ValueError(f"max_budget_usd must be positive, got {self.max_budget_usd!r}")
        if self.usage_limits is not None:
            # (imported here: only a run with limits needs the module; start-up, issue 41)
            from .limits import UsageLimits

            if not isinstance(self.usage_limits, UsageLimits):
                raise TypeError("usage_limits must be a UsageLimits (loopwright.UsageLimits(request_limit=..., "
                                f"total_tokens_limit=...)), not {type(self.usage_limits).__name__}")
        if self.output_retries is not None and (isinstance(self.output_retries, bool)
                                                or not isinstance(self.output_retries, int) or self.output_retries < 0):
            raise ValueError(f"output_retries must be a non-negative integer or None, got {self.output_retries!r}")
        if isinstance(self.max_empty_answer_reminders, bool) or not isinstance(self.max_empty_answer_reminders, int) \
                or self.max_empty_answer_reminders < 0:
            raise ValueError("max_empty_answer_reminders must be a non-negative integer, got "
                             f"{self.max_empty_answer_reminders!r}")
        if self.handoffs:
            from .handoffs import check_handoffs

            self.handoffs = check_handoffs(self.handoffs)
        if self.output_guardrails:
            from .guardrails import check_guardrails

            self.output_guardrails = check_guardrails(self.output_guardrails)
        if self.max_tokens is not None and (not isinstance(self.max_tokens, int) or isinstance(self.max_tokens, bool)
                                            or self.max_tokens <= 0):
            raise ValueError(f"max_tokens must be a positive integer (the output limit of each call) or None, "
                             f"got {self.max_tokens!r}")

    def _check_model(self) -> None:
        if self.model is not None and not isinstance(self.model, (str, Model)):
            raise TypeError(f"model must be a model string such as 'claude-sonnet-5-5' or 'openai:gpt-4o', or a "
                            f"Model instance, not {type(self.model).__name__} {self.model!r}")
        if isinstance(self.model, str):
            from .models import check_model_spec

            check_model_spec(self.model, "model")
        from .models.reasoning import check_effort, check_thinking

        check_effort(self.effort)
        check_thinking(self.thinking)

    def _check_environment(self) -> None:
        if not isinstance(self.env, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                        for k, v in self.env.items()):
            raise TypeError("env must be a dict of strings {NAME: value}")
        if self.stderr is not None and not callable(self.stderr):
            raise TypeError(f"stderr must be a function of one line (str), not {type(self.stderr).__name__}")

    def _check_rules_hooks_agents(self) -> None:
        for name in ("allowed_tools", "disallowed_tools"):
            _check_rules(name, getattr(self, name))
        if self.permission_mode is not None and self.permission_mode not in PERMISSION_MODES:
            raise ValueError(f"permission_mode must be one of {', '.join(PERMISSION_MODES)}, "
                             f"not {self.permission_mode!r}")
        if self.hooks is not None and not isinstance(self.hooks, Hooks):
            if not isinstance(self.hooks, Mapping):
                raise TypeError("hooks must be a Hooks object or a dict {event: [HookMatcher(...)]}, "
                                f"not {type(self.hooks).__name__}")
            Hooks(dict(self.hooks))  # raises TypeError/ValueError naming the event and the fix
        if not isinstance(self.agents, Mapping):
            raise TypeError(f"agents must be a dict {{name: AgentDefinition}}, not {type(self.agents).__name__}")
        if self.managed_settings is not None and not isinstance(self.managed_settings, Mapping):
            raise TypeError(f"managed_settings must be a dict of settings, not {type(self.managed_settings).__name__}")
        agent_definitions(self.agents)  # raises on a bad definition

    def _check_paths(self) -> None:
        if self.cwd is not None and not isinstance(self.cwd, (str, Path)):
            raise TypeError(f"cwd must be a str or Path, not {type(self.cwd).__name__}")
        if isinstance(self.setting_sources, str):
            raise TypeError(f"setting_sources must be a list such as ['user', 'project', 'local']; write "
                            f"setting_sources=[{self.setting_sources!r}]")
        if self.trust_workspace is not None and not isinstance(self.trust_workspace, bool):
            raise TypeError(f"trust_workspace must be True, False or None, not {self.trust_workspace!r}")
        if isinstance(self.add_dirs, (str, Path)):
            raise TypeError(f"add_dirs must be a list of directories; write add_dirs=[{str(self.add_dirs)!r}]")

    def _check_fallbacks(self) -> None:
        fb: Any = self.fallback_model
        if fb is None:
            return
        if isinstance(fb, str):
            fb = [x.strip() for x in fb.split(",") if x.strip()]
        if not isinstance(fb, (list, tuple)) or not fb or not all(isinstance(x, str) and x for x in fb):
            raise TypeError("fallback_model must be a model string or a list of them, such as "
                            f"['claude-sonnet-5-5'], not {self.fallback_model!r}")
        from .models import check_model_spec

        for x in fb:
            check_model_spec(x, "fallback_model")
        main = self.model
        if isinstance(main, str) and main in fb:
            raise ValueError(f"fallback_model {main!r} is the model itself: name another model")
        self.fallback_model = list(fb)

    def _check_tools(self) -> None:
        tools: Any = self.tools
        if isinstance(tools, dict):  # the Agent SDK's preset: every built-in tool
            if tools.get("type") != "preset" or tools.get("preset") not in ("claude_code", "loopwright"):
                raise ValueError('tools as a dict must be the preset {"type": "preset", "preset": "claude_code"}')
            from .tools.builtin import default_tools

            tools = default_tools()
        if isinstance(tools, (list, tuple)) and any(isinstance(t, str) for t in tools):
            tools = _named_tools(tools)
        if isinstance(tools, Tool):
            raise TypeError(f"tools must be a list of Tool objects; write tools=[{tools.name}] for a single tool")
        if isinstance(tools, (str, bytes)) or not isinstance(tools, (list, tuple)):
            raise TypeError("tools must be a list of Tool objects (e.g. tools=default_tools() from "
                            f"loopwright.tools.builtin), not {type(tools).__name__}")
        for t in tools:
            if not isinstance(t, Tool):
                raise TypeError(f"tools must hold Tool objects (made with Tool(...) or @tool), not "
                                f"{type(t).__name__}")
        self.tools = list(tools)
        names = [t.name for t in self.tools]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate tool names: {', '.join(sorted(dup))}")


def _named_tools(items: list[Any] | tuple[Any, ...]) -> list[Any]:
    """Names of built-in tools ("Read", "Bash", ...) as fresh Tool objects; other items as given."""
    from .tools.builtin import default_tools

    builtin = {t.name: t for t in default_tools()}
    out: list[Any] = []
    for t in items:
        if isinstance(t, str):
            if t not in builtin:
                raise ValueError(f"tools: {t!r} is not a built-in tool (these are: {', '.join(builtin)}); "
                                 f"to pre-approve a tool by name use allowed_tools=[{t!r}]")
            t = builtin[t]
        out.append(t)
    return out


def model_for(options: AgentOptions) -> Model:
    """The Model these options name (models.resolve_model with the options' provider settings)."""
    # provider SDKs load only when a provider is used
    from .ccenv import api_timeout
    from .models import parse_model_spec, resolve_model

    o, env = options, options.env  # (API_TIMEOUT_MS: the env's over the process's, read by the provider)

    def one(spec: str | Model | None) -> Model:
        # The provider variables in `env` count as they would in the environment (the Agent SDK
        # passes its env to the CLI), before the process's own.
        kind = "OPENAI" if isinstance(spec, str) and parse_model_spec(spec).provider in ("openai", "responses") else "ANTHROPIC"
        return resolve_model(spec, base_url=o.base_url or env.get(f"{kind}_BASE_URL"),
                             api_key=o.api_key or env.get(f"{kind}_API_KEY"), max_retries=o.max_retries,
                             max_tokens=o.max_tokens, include_partial_messages=o.include_partial_messages,
                             prompt_caching=o.prompt_caching, timeout=api_timeout(env))

    model = one(o.model if o.model is not None else env.get("LOOPWRIGHT_MODEL") or env.get("ANTHROPIC_MODEL"))
    if not o.fallback_model:
        return model
    from .models.fallback import FallbackModel

    if isinstance(model, FallbackModel):  # a subagent inherits its parent's (its place in the list too)
        return model
    return FallbackModel([model, *(one(x) for x in o.fallback_model)])


def _check_rules(name: str, value: Any) -> None:
    """A tool list is a security setting: a string is never read as a list of its letters, nor ignored."""
    if isinstance(value, str):
        items = [x.strip() for x in value.split(",") if x.strip()] or [value]
        raise TypeError(f"{name} must be a list of rule strings, not a str; write {name}={items!r}")
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list of rule strings such as ['Read', 'Bash(git diff *)'], "
                        f"not {type(value).__name__}")
    for item in value:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold rule strings such as 'Read' or 'Bash(git diff *)', "
                            f"not {type(item).__name__} {item!r}")


__all__ = ["AgentDefinition", "AgentOptions", "ToolPermissionContext", "agent_definitions", "agents_from_json", "model_for"]


def __getattr__(name: str) -> Any:
    """ToolPermissionContext, from permission_context.py (where it moved; imported on first use, issue 41)."""
    if name == "ToolPermissionContext":
        from .permission_context import ToolPermissionContext

        return ToolPermissionContext
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
