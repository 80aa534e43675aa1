"""Room: options (above execute and settings). Owns AgentOptions; may import the rooms below it,
never loop, agents, client, workflows or cli.

AgentOptions: everything a run is configured with (Claude Agent SDK field names)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agents import AgentDefinition, has_agent_tool, make_agent_tool
from .hooks import Hooks
from .models.base import Model
from .permissions import CanUseTool, PermissionMode
from .tools.base import Tool
from .usage import Price

if TYPE_CHECKING:
    from .sessions import SessionStore


@dataclass
class AgentOptions:
    """Everything a run is configured with (the Claude Agent SDK's ClaudeAgentOptions, in small):
    model, tools, limits, permissions, hooks, sessions."""

    model: str | Model | None = None  # a Model, or a string such as "claude-sonnet-5-5", "openai:gpt-4o"
    tools: list[Tool] = field(default_factory=list)
    max_turns: int | None = None  # T: tool-use turns (seed Def 3.1); None = no limit
    max_budget_usd: float | None = None  # B (seed Prop 5.4)
    can_use_tool: CanUseTool | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    cwd: str | Path | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    permission_mode: PermissionMode | None = None
    hooks: Hooks | dict[str, Any] | None = None  # Hooks, or the Agent SDK's {event: [HookMatcher]}
    add_dirs: list[str | Path] = field(default_factory=list)  # more directories writes may go to
    # Subagent types for the Agent tool (agents.py; AgentDefinitions or `--agents`-style dicts);
    # when set, the tool is added to `tools`.
    agents: Mapping[str, AgentDefinition | dict[str, Any]] = field(default_factory=dict)
    # Settings files (settings.py). None: read none (the Agent SDK's default); the CLI reads
    # ["user", "project", "local"]. `settings`: --settings, a file path, a JSON string or a dict.
    setting_sources: list[str] | None = None
    settings: str | dict[str, Any] | None = None
    claude_settings: bool = False  # also read Claude Code's .claude/settings*.json files
    # Project memory (memory.py): AGENTS.md / CLAUDE.md / LOOPWRIGHT.md of the setting_sources,
    # in the first user message. False: none (the CLI's --bare).
    memory: bool = True
    # Structured output (structured.py): the Agent SDK's {"type": "json_schema", "schema": {...}},
    # or a pydantic model class whose instance becomes ResultMessage.structured_output.
    output_format: dict[str, Any] | None = None
    output_type: type | None = None
    include_partial_messages: bool = False
    prices: dict[str, Price] | None = None  # overrides/extends the built-in price table
    max_tokens: int | None = None
    max_pause_continuations: int = 5
    # providers
    base_url: str | None = None
    api_key: str | None = None
    max_retries: int = 4
    prompt_caching: bool = True  # Anthropic cache_control breakpoints (tools, system, newest messages)
    # sessions
    session_id: str | None = None
    resume: str | None = None
    fork_session: bool = False
    continue_conversation: bool = False
    persist_session: bool = False
    sessions_dir: str | Path | None = None
    session_fsync: str = "none"  # "none" (flush per event: survives a killed process) | "turn" | "always"
    session_store: SessionStore | None = None  # default: JSONL files under sessions_dir
    # context compaction (context.py): W = context_window, else a per-model default (None: off)
    context_window: int | None = None
    auto_compact: bool = True  # summarize older turns when the next input is forecast above threshold * W
    compact_threshold: float = 0.8
    # Bash in an OS sandbox (sandbox.py): True, the settings' "sandbox" object, or a SandboxConfig;
    # on top of the settings files' "sandbox". None: as the settings files say (default off).
    sandbox: Any = None
    # MCP servers (mcp/config.py): Claude Code's `{name: {...}}` (or `{"mcpServers": ...}`), a
    # path to such a JSON file, or in-process servers from create_sdk_mcp_server. With
    # setting_sources, settings' `mcpServers` and the project's `.mcp.json` add to them;
    # strict_mcp_config: only these (--strict-mcp-config).
    mcp_servers: dict[str, Any] | str | Path | None = None
    strict_mcp_config: bool = False

    def __post_init__(self) -> None:
        if self.max_turns is not None and (not isinstance(self.max_turns, int) or self.max_turns < 0):
            raise ValueError(f"max_turns must be a non-negative integer or None, got {self.max_turns!r}")
        if self.max_budget_usd is not None and not self.max_budget_usd > 0:
            raise ValueError(f"max_budget_usd must be positive, got {self.max_budget_usd!r}")
        if self.agents and not has_agent_tool(self.tools):
            self.tools = [*self.tools, make_agent_tool(self.agents)]
        names = [t.name for t in self.tools]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate tool names: {', '.join(sorted(dup))}")
