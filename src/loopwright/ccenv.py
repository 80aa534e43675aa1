"""Room: data types. Owns the table of Claude Code's environment variables loopwright reads on
its own knobs or refuses by name (in the environment or a settings file's `env` block), the
reading of their numbers, and the one line per variable a run starts with when one is refused or
malformed: nothing a user sets is silently ignored (docs/claude-code-settings.md).

Variables owned elsewhere (ANTHROPIC_MODEL and the alias ones in models.catalog, MCP_TIMEOUT and
MAX_MCP_OUTPUT_TOKENS in mcp, ANTHROPIC_BETAS / _CUSTOM_HEADERS / _AUTH_TOKEN in models.anthropic)
are listed in HONOURED too, so this table is the one place to look."""

from __future__ import annotations

from collections.abc import Mapping

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
    "CLAUDE_CODE_SUBAGENT_MODEL": ("every subagent's model, over its agent file's (aliases as --model's)",
                                   "tests/cli/test_cc_env.py::test_subagent_model_from_env"),
    "MCP_TIMEOUT": ("MCP servers' start timeout (ms, default 30,000; MCP_TOOL_TIMEOUT a call's), a settings "
                    "file's env too", "tests/cli/test_cc_env.py::test_mcp_timeout_from_a_settings_files_env"),
    "DISABLE_PROMPT_CACHING": ("no cache_control marks on the calls (any value but empty, 0, false, no, off)",
                               "tests/cli/test_cc_env.py::test_disable_prompt_caching_leaves_out_the_cache_marks"),
    "MAX_MCP_OUTPUT_TOKENS": ("MCP tool outputs are cut past it (docs/mcp.md), a settings file's env too",
                              "tests/cli/test_cc_env.py::test_max_mcp_output_tokens_from_a_settings_files_env"),
    "API_TIMEOUT_MS": ("how long a model call waits for the server (the HTTP providers' `timeout`, default "
                       "600,000; a whole call is never cut sooner); a timed-out call's error names it",
                       "tests/cli/test_cc_env.py::test_api_timeout_ms_ends_a_call_to_a_slow_server"),
    "CLAUDE_CODE_MAX_RETRIES": ("the retries of a failed model call (AgentOptions.max_retries, default 4)",
                                "tests/cli/test_cc_env.py::test_api_timeout_ms_ends_a_call_to_a_slow_server"),
    "ANTHROPIC_DEFAULT_SONNET_MODEL": ("the model `sonnet` names (also _OPUS_, _HAIKU_)", "tests/models/test_catalog.py::test_claude_codes_alias_variables_name_the_aliases_model"),
}

# name -> why loopwright does not use it (said in one line when it is set)
REFUSED: dict[str, str] = {
    "CLAUDE_CODE_USE_BEDROCK": "loopwright has no Amazon Bedrock provider; the model is called as "
                               "--model / ANTHROPIC_BASE_URL say",
    "CLAUDE_CODE_USE_VERTEX": "loopwright has no Google Vertex AI provider; the model is called as "
                              "--model / ANTHROPIC_BASE_URL say",
    "ANTHROPIC_SMALL_FAST_MODEL": "loopwright makes no side calls to a small model",
}

TRUTHY_OFF = ("", "0", "false", "no", "off")


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


def env_lines(env: Mapping[str, str]) -> list[str]:
    """One line per Claude Code variable in `env` that loopwright does not use (a flag variable
    set to 0/false is not said), and per honoured number that is not one."""
    lines = [f"{name} is set: loopwright does not use it ({why})" for name, why in REFUSED.items()
             if env.get(name) is not None and not (name.startswith("CLAUDE_CODE_USE_")
                                                   and env[name].strip().lower() in TRUTHY_OFF)]
    for name in ("BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "BASH_MAX_OUTPUT_LENGTH",
                 "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "MAX_THINKING_TOKENS", "API_TIMEOUT_MS", "CLAUDE_CODE_MAX_RETRIES"):
        raw = env.get(name, "").strip()
        if raw and number(env, name, -1) < 0:
            lines.append(f"{name}={raw!r} is not a non-negative number; loopwright uses its default")
    return lines
