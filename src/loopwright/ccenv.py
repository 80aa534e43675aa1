"""Room: models (data only). Owns the table of Claude Code's environment variables loopwright reads on
its own knobs or refuses by name (in the environment or a settings file's `env` block), the
reading of their numbers, and the one line per variable a run starts with when one is refused or
malformed: nothing a user sets is silently ignored (docs/claude-code-settings.md).

Variables owned elsewhere (ANTHROPIC_MODEL and the alias ones in models.catalog, MCP_TIMEOUT and
MAX_MCP_OUTPUT_TOKENS in mcp, ANTHROPIC_BETAS / _CUSTOM_HEADERS / _AUTH_TOKEN in models.anthropic)
are listed in HONOURED too, so this table is the one place to look. Every variable Claude Code
documents (tests/fixtures/claude_code_env_vars.json) is in HONOURED, REFUSED or NOT_APPLICABLE.
Imports models.reasoning only (the effort levels)."""

from __future__ import annotations

from collections.abc import Mapping

from .models.reasoning import EFFORT_LEVELS

# name -> (what loopwright does with it, the test that shows it)
HONOURED: dict[str, tuple[str, str]] = {
    "BASH_DEFAULT_TIMEOUT_MS": ("the Bash tool's timeout when the call gives none (default 120,000)",
                                "tests/cli/test_cc_env.py::test_bash_timeouts_and_output_length_from_env"),
    "BASH_MAX_TIMEOUT_MS": ("the longest timeout a Bash call may ask for (default 600,000)",
                            "tests/cli/test_cc_env.py::test_bash_timeouts_and_output_length_from_env"),
    "BASH_MAX_OUTPUT_LENGTH": ("the characters of a Bash (or BashOutput) output the model sees (default 30,000)",
                               "tests/cli/test_cc_env.py::test_bash_timeouts_and_output_length_from_env"),
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS": ("max_tokens of every call when AgentOptions.max_tokens gives none",
                                      "tests/cli/test_cc_env.py::test_output_and_thinking_tokens_from_env"),
    "MAX_THINKING_TOKENS": ("extended thinking with this budget when --thinking / AgentOptions.thinking give none "
                            "(0: off; a model that thinks adaptively only gets adaptive thinking, as from --thinking N)",
                            "tests/cli/test_cc_env.py::test_output_and_thinking_tokens_from_env"),
    "CLAUDE_CODE_EFFORT_LEVEL": ("the effort when --effort / AgentOptions.effort give none (auto, unset: none)",
                                 "tests/cli/test_cc_env.py::test_effort_from_env"),
    "CLAUDE_CODE_MAX_CONTEXT_TOKENS": ("the context window W compaction keeps to when --context-window / "
                                       "AgentOptions.context_window give none",
                                       "tests/cli/test_cc_env.py::test_disable_compact_and_max_context_tokens_from_env"),
    "DISABLE_COMPACT": ("no automatic compaction (AgentOptions.auto_compact=False); any value but empty, 0, false, no, off",
                        "tests/cli/test_cc_env.py::test_disable_compact_and_max_context_tokens_from_env"),
    "CLAUDE_CODE_SUBAGENT_MODEL": ("every subagent's model, over its agent file's (aliases as --model's)",
                                   "tests/cli/test_cc_env.py::test_subagent_model_from_env"),
    "MCP_TIMEOUT": ("MCP servers' start timeout (ms, default 30,000), a settings file's env too",
                    "tests/cli/test_cc_env.py::test_mcp_timeout_from_a_settings_files_env"),
    "MCP_TOOL_TIMEOUT": ("an MCP tool call's timeout (ms)", "tests/mcp/test_mcp.py::test_failing_servers_do_not_stop_the_run"),
    "MCP_CLIENT_SECRET": ("a pre-registered MCP OAuth client's secret (mcp add --client-secret)",
                          "tests/mcp/test_mcp_oauth.py::test_a_pre_registered_client_from_mcp_add_logs_in_with_its_secret_kept_out_of_the_config"),
    "CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS": ("how long WebFetch keeps a page (default 900,000; 0: not kept), a settings "
                                          "file's env too",
                                          "tests/tools/test_web_fetch.py::test_the_cache_time_comes_from_claude_codes_variable"),
    "ENABLE_PROMPT_CACHING_1H": ("one-hour cache entries (ttl 1h, its beta) when AnthropicModel's cache_ttl gives none",
                                 "tests/cli/test_cc_env.py::test_one_hour_prompt_caching_from_env"),
    "FORCE_PROMPT_CACHING_5M": ("5-minute cache entries over ENABLE_PROMPT_CACHING_1H",
                                "tests/cli/test_cc_env.py::test_one_hour_prompt_caching_from_env"),
    "DISABLE_PROMPT_CACHING": ("no cache_control marks on the calls (any value but empty, 0, false, no, off)",
                               "tests/cli/test_cc_env.py::test_disable_prompt_caching_leaves_out_the_cache_marks"),
    "MAX_MCP_OUTPUT_TOKENS": ("MCP tool outputs are cut past it (docs/mcp.md), a settings file's env too",
                              "tests/cli/test_cc_env.py::test_max_mcp_output_tokens_from_a_settings_files_env"),
    "API_TIMEOUT_MS": ("how long a model call waits for the server (the HTTP providers' `timeout`, default "
                       "600,000; a whole call is never cut sooner); a timed-out call's error names it",
                       "tests/cli/test_cc_env.py::test_api_timeout_ms_ends_a_call_to_a_slow_server"),
    "CLAUDE_CODE_MAX_RETRIES": ("the retries of a failed model call (AgentOptions.max_retries, default 4)",
                                "tests/cli/test_cc_env.py::test_api_timeout_ms_ends_a_call_to_a_slow_server"),
    "ANTHROPIC_API_KEY": ("the Anthropic provider's key (x-api-key), a settings file's env too",
                          "tests/cli/test_cc_env.py::test_the_provider_from_a_settings_files_env"),
    "ANTHROPIC_AUTH_TOKEN": ("sent as `Authorization: Bearer`",
                             "tests/models/test_anthropic_provider.py::test_missing_credentials_and_unreachable_server_end_cleanly"),
    "ANTHROPIC_BASE_URL": ("the Anthropic provider's URL (--base-url over it), a settings file's env too",
                           "tests/cli/test_cc_env.py::test_the_provider_from_a_settings_files_env"),
    "ANTHROPIC_BETAS": ("added to the anthropic-beta header",
                        "tests/models/test_transport.py::test_anthropic_sends_claude_codes_headers"),
    "ANTHROPIC_CUSTOM_HEADERS": ("headers added to every call (Name: Value, one a line)",
                                 "tests/models/test_transport.py::test_anthropic_sends_claude_codes_headers"),
    "ANTHROPIC_MODEL": ("the model when --model gives none (after LOOPWRIGHT_MODEL)",
                        "tests/settings/test_model_and_key_settings.py::test_settings_model_is_used_unless_a_flag_names_one"),
    "ANTHROPIC_DEFAULT_SONNET_MODEL": ("the model `sonnet` names",
                                       "tests/models/test_catalog.py::test_claude_codes_alias_variables_name_the_aliases_model"),
    "ANTHROPIC_DEFAULT_OPUS_MODEL": ("the model `opus` names",
                                     "tests/models/test_catalog.py::test_claude_codes_alias_variables_name_the_aliases_model"),
    "ANTHROPIC_DEFAULT_HAIKU_MODEL": ("the model `haiku` names",
                                      "tests/models/test_catalog.py::test_claude_codes_alias_variables_name_the_aliases_model"),
    "CLAUDE_CODE_API_KEY_HELPER_TTL_MS": ("how long an apiKeyHelper's key is kept",
                                          "tests/settings/test_model_and_key_settings.py::test_api_key_helper_is_run_cached_and_never_logged"),
    "CLAUDE_CODE_ENABLE_TASKS": ("false: TodoWrite instead of the task tools, as Claude Code",
                                 "tests/hooks/test_hooks_tasks.py::test_the_task_tools_are_left_out_as_claude_code_leaves_them_out"),
    "HTTPS_PROXY": ("the model calls' proxy (also HTTP_PROXY, ALL_PROXY, NO_PROXY)",
                    "tests/models/test_transport.py::test_the_proxy_comes_from_the_environment_by_httpx_rules"),
    "HTTP_PROXY": ("the proxy of http:// model calls",
                   "tests/models/test_transport.py::test_the_proxy_comes_from_the_environment_by_httpx_rules"),
    "NODE_EXTRA_CA_CERTS": ("its CAs are trusted besides the system's store (or SSL_CERT_FILE's)",
                            "tests/models/test_transport.py::test_tls_also_trusts_what_node_extra_ca_certs_names"),
    "NO_PROXY": ("hosts the model calls reach without the proxy",
                 "tests/models/test_transport.py::test_the_proxy_comes_from_the_environment_by_httpx_rules"),
    "OTEL_EXPORTER_OTLP_ENDPOINT": ("telemetry's collector (docs/telemetry.md)",
                                    "tests/telemetry/test_telemetry.py::test_an_unreachable_collector_neither_slows_nor_fails_the_run"),
    "OTEL_TRACES_EXPORTER": ("traces exported (otlp, console, none)",
                             "tests/telemetry/test_telemetry.py::test_an_unreachable_collector_neither_slows_nor_fails_the_run"),
    "OTEL_METRICS_EXPORTER": ("metrics exported (otlp, console, none)",
                              "tests/telemetry/test_telemetry.py::test_an_unreachable_collector_neither_slows_nor_fails_the_run"),
    "OTEL_LOGS_EXPORTER": ("logs exported (otlp, console, none)",
                           "tests/telemetry/test_telemetry.py::test_an_unreachable_collector_neither_slows_nor_fails_the_run"),
    "OTEL_RESOURCE_ATTRIBUTES": ("the telemetry resource's attributes",
                                 "tests/telemetry/test_telemetry_more.py::test_a_per_signal_endpoint_headers_and_resource_attributes_are_the_exporters"),
    "CLAUDE_PROJECT_DIR": ("set for hooks (and what they start), as Claude Code sets it",
                           "tests/hooks/test_hooks.py::test_command_hooks_get_the_project_dir"),
    "CLAUDE_ENV_FILE": ("set for SessionStart (and CwdChanged, FileChanged) hooks; what they write there is the Bash tool's env",
                        "tests/hooks/test_config_and_file_changed.py::test_a_change_between_two_prompts_fires_at_the_next_runs_first_step"),
    "CLAUDE_PLUGIN_ROOT": ("set for a plugin's hooks and MCP servers (and ${CLAUDE_PLUGIN_ROOT} in its files)",
                           "tests/plugins/test_plugins.py::test_a_plugin_dir_brings_every_part"),
    "XDG_CONFIG_HOME": ("where `mcp add-from-claude-desktop` finds Claude Desktop's config",
                        "tests/mcp/test_mcp_add.py::test_add_from_claude_desktop_reads_its_config_and_project_scope_still_needs_approval"),
}


def _each(why: str, *names: str) -> dict[str, str]:
    return dict.fromkeys(names, why)


_PROVIDER = ("loopwright has no {} provider: the model is called as --model / ANTHROPIC_BASE_URL say "
             "(an Anthropic-compatible gateway in front of it works)")
_ACCOUNT = "loopwright authenticates with ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN / apiKeyHelper only"
_OTEL = ("loopwright's telemetry sends message content only under OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT "
         "and has no such switch (docs/telemetry.md)")
_PLUGINS = "loopwright's plugins come from --plugin-dir and installed plugin folders, with no marketplace of its own"

# name -> why loopwright does not use it (said in one line when it is set; a flag set to 0/false asks
# for nothing loopwright lacks, and is not said)
REFUSED: dict[str, str] = {
    "CLAUDE_CODE_USE_BEDROCK": _PROVIDER.format("Amazon Bedrock"),
    "CLAUDE_CODE_USE_VERTEX": _PROVIDER.format("Google Vertex AI"),
    "CLAUDE_CODE_USE_FOUNDRY": _PROVIDER.format("Microsoft Foundry"),
    "CLAUDE_CODE_USE_MANTLE": _PROVIDER.format("Bedrock Mantle"),
    "CLAUDE_CODE_USE_ANTHROPIC_AWS": _PROVIDER.format("Claude Platform on AWS"),
    "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD": _PROVIDER.format("Claude on Google Cloud"),
    "CLAUDE_CODE_USE_POWERSHELL_TOOL": "loopwright has no PowerShell tool (Bash runs the commands)",
    "ANTHROPIC_SMALL_FAST_MODEL": "loopwright makes no side calls to a small model",
    "ANTHROPIC_DEFAULT_MODEL": "loopwright's default model comes from --model, LOOPWRIGHT_MODEL, ANTHROPIC_MODEL or the settings' model",
    "ANTHROPIC_LOG": "loopwright logs its calls with --debug / --debug-file",
    "ANTHROPIC_UNIX_SOCKET": "loopwright calls the API over TCP (ANTHROPIC_BASE_URL), not a Unix socket",
    **_each(_ACCOUNT, "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
            "ANTHROPIC_FEDERATION_RULE_ID", "ANTHROPIC_WORKSPACE_ID", "ANTHROPIC_ORGANIZATION_ID"),
    **_each("loopwright has one wait for a silent server, before the answer or between two reads of its "
            "stream: API_TIMEOUT_MS", "CLAUDE_STREAM_IDLE_TIMEOUT_MS", "API_FORCE_IDLE_TIMEOUT",
            "CLAUDE_ENABLE_STREAM_WATCHDOG"),
    "CLAUDE_CODE_RETRY_WATCHDOG": "loopwright has no persistent retry mode (CLAUDE_CODE_MAX_RETRIES sets the retries)",
    "CLAUDE_CODE_EXTRA_BODY": "loopwright sends no extra body fields from the environment (a library ModelRequest.extra does)",
    "CLAUDE_CODE_ALWAYS_ENABLE_EFFORT": "loopwright sends the effort as each model family takes it, and none to a model that takes none",
    "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS": "loopwright's betas are the ones its features need (ANTHROPIC_BETAS adds others)",
    "DISABLE_INTERLEAVED_THINKING": "loopwright asks for interleaved thinking with a budget and tools on Claude 4 models",
    "CLAUDE_CODE_DISABLE_UNKNOWN_MODEL_WINDOW_ENFORCEMENT": "loopwright's window for an unknown model is the server's "
                                                            "(models/window.py) or AgentOptions.context_window",
    "CLAUDE_CONFIG_DIR": "loopwright reads Claude Code's files from ~/.claude (and its own from LOOPWRIGHT_HOME)",
    "CLAUDE_CODE_TMPDIR": "loopwright's temporary files go where Python's tempfile says (TMPDIR)",
    "CLAUDE_CODE_SIMPLE": "no simple mode: --bare leaves customizations out",
    "CLAUDE_CODE_SAFE_MODE": "no safe mode: --bare, --setting-sources '' and --strict-mcp-config leave customizations out",
    **_each("loopwright's Bash runs bash with no wrapper, prefix or capability changes (its sandbox settings "
            "confine it: docs/sandbox.md)", "CLAUDE_CODE_SHELL", "CLAUDE_CODE_SHELL_PREFIX",
            "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "CLAUDE_CODE_SCRIPT_CAPS", "CLAUDE_CODE_TOOL_MEMORY_LIMIT"),
    "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR": "loopwright's Bash keeps the directory a command moved to, as Claude Code does by default",
    "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "loopwright keeps run_in_background and background agents (a deny rule can refuse them)",
    "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS": "loopwright's Read sends at most its own 100,000 characters a call",
    "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD": "loopwright reads CLAUDE.md from the cwd up, not from --add-dir directories",
    "CLAUDE_CODE_PERFORCE_MODE": "loopwright has no Perforce mode",
    **_each("loopwright has no limit of its own there to set", "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS",
            "CLAUDE_CODE_MAX_SUBAGENTS_PER_SESSION", "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH",
            "CLAUDE_CODE_MAX_WEB_SEARCHES_PER_SESSION", "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP",
            "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS"),
    "CLAUDE_CODE_FORK_SUBAGENT": "loopwright's subagents start fresh, not forked from the conversation",
    "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "loopwright has no agent teams",
    "CLAUDE_CODE_WORKFLOW_PREFIX_STAGGER_MS": "loopwright does not stagger workflow agents",
    "CLAUDE_CODE_ENABLE_TODO_TOOLS": "loopwright offers its task tools (CLAUDE_CODE_ENABLE_TASKS=false: TodoWrite) on every model",
    "CLAUDE_CODE_ENABLE_AUTO_MODE": "loopwright's auto mode is a permission mode (docs/auto-mode.md), with no switch in the environment",
    "CLAUDE_CODE_RESUME_INTERRUPTED_TURN": "loopwright does not resume an interrupted turn on its own",
    "CLAUDE_CODE_EXIT_AFTER_STOP_DELAY": "loopwright's stream-json front end exits when its input ends",
    "CLAUDE_CODE_GOAL_CHECKIN_MINUTES": "loopwright has no /goal",
    "CLAUDE_CODE_ENABLE_AWAY_SUMMARY": "loopwright has no session recap",
    "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "loopwright makes no prompt suggestions",
    "CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY": "loopwright's /model takes any model id; it lists none from the gateway",
    "CLAUDE_AX_SCREEN_READER": "loopwright's interactive screen has no screen-reader mode (-p prints plain text)",
    "CLAUDE_MEMORY_STORES": "loopwright has no mounted memory stores (CLAUDE.md files are its memory)",
    "ENABLE_TOOL_SEARCH": "loopwright has no tool search: every tool is offered",
    "MCP_CONNECTION_NONBLOCKING": "loopwright waits for its MCP servers (MCP_TIMEOUT bounds the wait)",
    "CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS": "loopwright does not move MCP calls to the background (MCP_TOOL_TIMEOUT bounds one)",
    "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT": "loopwright bounds an MCP call with MCP_TOOL_TIMEOUT",
    "CLAUDE_CODE_CERT_STORE": "loopwright trusts the system's store, and SSL_CERT_FILE / SSL_CERT_DIR",
    "ENABLE_ENHANCED_TELEMETRY_BETA": _OTEL,
    "CLAUDE_CODE_OTEL_CONTENT_MAX_LENGTH": _OTEL,
    **_each(_OTEL, "OTEL_LOG_ASSISTANT_RESPONSES", "OTEL_LOG_RAW_API_BODIES", "OTEL_LOG_TOOL_CONTENT",
            "OTEL_LOG_TOOL_DETAILS", "OTEL_LOG_USER_PROMPTS", "OTEL_METRICS_INCLUDE_ENTRYPOINT"),
    **_each(_PLUGINS, "CLAUDE_CODE_PLUGIN_CACHE_DIR", "CLAUDE_CODE_PLUGIN_GIT_TIMEOUT_MS",
            "CLAUDE_CODE_PLUGIN_KEEP_MARKETPLACE_ON_FAILURE", "CLAUDE_CODE_PLUGIN_PREFER_HTTPS",
            "CLAUDE_CODE_PLUGIN_SEED_DIR"),
}

_BEDROCK = "for Amazon Bedrock, which loopwright does not call (CLAUDE_CODE_USE_BEDROCK is named when set)"
_NO_UI = "changes Claude Code's terminal screen; loopwright's has no such part"
_OWN = "Claude Code's own service (updates, error reports, feature flags, metrics), which loopwright does not have"
_SET_BY_CLAUDE = "Claude Code sets it for what it starts; a user does not (a loopwright run inside Claude Code inherits it)"

# name -> why it has nothing to do with loopwright: never said (a variable Claude Code sets for its
# children, another program's, a switch that turns off what loopwright does not have)
NOT_APPLICABLE: dict[str, str] = {
    **_each(_BEDROCK, "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_BEDROCK_REGION_PREFIX", "ANTHROPIC_BEDROCK_SERVICE_TIER",
            "ANTHROPIC_BEDROCK_MANTLE_BASE_URL", "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION", "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
            "ENABLE_PROMPT_CACHING_1H_BEDROCK"),
    **_each("for a cloud provider loopwright does not call (its CLAUDE_CODE_USE_ variable is named when set)",
            "ANTHROPIC_VERTEX_BASE_URL", "CLOUD_ML_REGION", "ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_AWS_API_KEY",
            "ANTHROPIC_AWS_BASE_URL"),
    **_each(_NO_UI, "CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN", "CLAUDE_CODE_DISABLE_MOUSE", "CLAUDE_CODE_DISABLE_MOUSE_CLICKS",
            "CLAUDE_CODE_NO_FLICKER", "CLAUDE_CODE_FORCE_SYNC_OUTPUT", "CLAUDE_CODE_HIDE_CWD",
            "CLAUDE_CODE_DISABLE_TERMINAL_TITLE", "FORCE_HYPERLINK", "IS_DEMO"),
    **_each(_OWN, "DISABLE_AUTOUPDATER", "DISABLE_UPDATES", "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING",
            "DISABLE_GROWTHBOOK", "DISABLE_INSTALLATION_CHECKS", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "CLAUDE_CODE_PACKAGE_MANAGER_AUTO_UPDATE", "FORCE_AUTOUPDATE_PLUGINS",
            "CLAUDE_CODE_ENABLE_FEEDBACK_SURVEY_FOR_OTEL"),
    **_each(_SET_BY_CLAUDE, "AI_AGENT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_EFFORT", "CLAUDE_JOB_DIR",
            "CLAUDE_CODE_MCP_SERVER_NAME", "CLAUDE_CODE_MCP_SERVER_URL", "CLAUDE_PLUGIN_DATA",
            "CLAUDE_CODE_ACCOUNT_UUID", "CLAUDE_CODE_USER_EMAIL", "CLAUDE_CODE_ORGANIZATION_UUID",
            "CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST", "CLAUDE_CODE_PROJECT_DIR_NAME", "CLAUDE_CODE_PROCESS_WRAPPER"),
    **_each("a substitution in a skill's text (${...}), not a variable a user sets", "CLAUDE_SESSION_ID", "CLAUDE_SKILL_DIR"),
    **_each("Windows only (loopwright's Bash needs a POSIX shell)", "CLAUDE_CODE_GIT_BASH_PATH",
            "CLAUDE_CODE_POWERSHELL_RESPECT_EXECUTION_POLICY"),
    **_each("passed to the processes tools start, as Claude Code passes it (its own screen's colors are its own)",
            "NO_COLOR", "FORCE_COLOR"),
    **_each("git's own (loopwright's tools run git with the environment they get)", "GIT_DIR", "GIT_WORK_TREE"),
    "XDG_DATA_HOME": "where Claude Code registers its claude-cli:// handler; loopwright registers none",
    "CLAUDE_CLIENT_PRESENCE_FILE": "mutes Claude Code's mobile push notifications; loopwright sends none",
    "CLAUDE_CODE_AUTO_CONNECT_IDE": "loopwright connects to no IDE on its own",
    "ENABLE_CLAUDEAI_MCP_SERVERS": "loopwright offers no claude.ai MCP servers",
    "CLAUDE_CODE_DISABLE_1M_CONTEXT": "loopwright asks for no 1M-context beta",
    "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK": "loopwright has no non-streaming fallback to turn off",
    "CLAUDE_CODE_DISABLE_BG_SHELL_PRESSURE_REAP": "loopwright reaps no background shell on memory pressure",
    "CLAUDE_CODE_DISABLE_BUNDLED_SKILLS": "loopwright bundles no skills",
    "CLAUDE_CODE_DISABLE_CRON": "loopwright has no scheduled (cron) jobs",
    "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS": "loopwright's system prompt has no git status section",
    "CLAUDE_CODE_ATTRIBUTION_HEADER": "loopwright sends no attribution header",
    "CLAUDE_CODE_OPUS_4_6_FAST_MODE_OVERRIDE": "a no-op in Claude Code too",
    "CLAUDE_CODE_PROXY_RESOLVES_HOSTS": "loopwright names the host to its proxy (CONNECT host:port): the proxy resolves it",
    "CLAUDE_CODE_FORWARD_SUBAGENT_TEXT": "loopwright's stream-json always carries subagents' messages (what it asks for)",
    "USE_BUILTIN_RIPGREP": "loopwright's Grep runs its own search, or the rg on PATH",
    "ANTHROPIC_CUSTOM_MODEL_OPTION": "loopwright's /model takes any model id: there is no picker list to add to",
}

TRUTHY_OFF = ("", "0", "false", "no", "off")


def flag(env: Mapping[str, str], name: str) -> bool:
    """Whether a Claude Code switch is on: set to anything but empty, 0, false, no or off."""
    return env.get(name, "").strip().lower() not in TRUTHY_OFF


def number(env: Mapping[str, str], name: str, default: int) -> int:
    """The non-negative whole number `env[name]` says, else `default` (a malformed one is named at
    run start by `env_lines`)."""
    raw = env.get(name, "").strip()
    try:
        value = int(float(raw)) if raw else default
    except ValueError:
        return default
    return value if value >= 0 else default


def api_timeout(env: Mapping[str, str]) -> float | None:
    """API_TIMEOUT_MS in seconds (a model call's longest wait), None when unset, 0 or malformed."""
    ms = number(env, "API_TIMEOUT_MS", 0)
    return ms / 1000 if ms > 0 else None


# What a settings file's env gives the model as the environment would (Claude Code sets a settings
# file's env on its own process): carried into AgentOptions.env, where the model is made from.
SETTINGS_MODEL_VARS = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY", "API_TIMEOUT_MS")
# What the providers read from the process's environment only: in a settings file's env alone, named.
PROCESS_ONLY = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_BETAS", "ANTHROPIC_DEFAULT_SONNET_MODEL",
                "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "HTTPS_PROXY", "HTTP_PROXY",
                "NO_PROXY", "NODE_EXTRA_CA_CERTS", "ENABLE_PROMPT_CACHING_1H", "FORCE_PROMPT_CACHING_5M")

# Refused variables whose 0 asks for something loopwright does otherwise (turning its one wait off);
# any other's empty, 0, false, no or off asks for nothing loopwright lacks, and is not said.
ZERO_ASKS = frozenset({"CLAUDE_STREAM_IDLE_TIMEOUT_MS", "API_FORCE_IDLE_TIMEOUT", "CLAUDE_ENABLE_STREAM_WATCHDOG"})
NUMBERS = ("BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "BASH_MAX_OUTPUT_LENGTH", "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
           "MAX_THINKING_TOKENS", "API_TIMEOUT_MS", "CLAUDE_CODE_MAX_RETRIES", "CLAUDE_CODE_MAX_CONTEXT_TOKENS",
           "CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS")


def env_lines(env: Mapping[str, str], process: Mapping[str, str] | None = None) -> list[str]:
    """One line per Claude Code variable in `env` that loopwright does not use (one set to 0/false
    is not said, but for ZERO_ASKS), per honoured value that is not one it takes, and per PROCESS_ONLY
    variable `env` has and the `process` environment has not (a settings file's env gives it)."""
    lines = [f"{name} is set in a settings file's env: loopwright reads it from the environment only (export it "
             "in the shell)" for name in PROCESS_ONLY if process is not None and name in env and name not in process]
    lines += [f"{name} is set: loopwright does not use it ({why})" for name, why in REFUSED.items()
             if (raw := env.get(name)) is not None
             and (name in ZERO_ASKS or raw.strip().lower() not in TRUTHY_OFF)]
    for name in NUMBERS:
        raw = env.get(name, "").strip()
        if raw and number(env, name, -1) < 0:
            lines.append(f"{name}={raw!r} is not a non-negative number; loopwright uses its default")
    effort = env.get("CLAUDE_CODE_EFFORT_LEVEL", "").strip()
    if effort and effort.lower() not in (*EFFORT_LEVELS, "auto", "unset"):
        lines.append(f"CLAUDE_CODE_EFFORT_LEVEL={effort!r} is not an effort level ({', '.join(EFFORT_LEVELS)}); "
                     "loopwright uses the model's own")
    return lines
