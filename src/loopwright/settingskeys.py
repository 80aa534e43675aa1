"""Room: settings (above options). Owns the table of Claude Code's settings keys as loopwright reads
them: each key honoured (and the test that shows it) or refused (and what loopwright does
instead), and the page made from it with the hooks' tables; may import hooks.

Claude Code 2.1.332's settings schema (tests/fixtures/claude_code_settings_keys.json, read from
its binary) has 202 top-level keys. Every one is here: tests/settings/test_claude_settings_keys.py
walks the schema and fails on a key in neither table, and on an honoured key whose test is gone.
A settings file naming refused keys gets one warning line naming them (`refused_line`), and
docs/claude-code-settings.md is made from these tables (`compat_rows`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# key -> (what loopwright does with it, the test that shows it)
HONOURED: dict[str, tuple[str, str]] = {
    "$schema": ("accepted: a reference for editors, nothing to do",
                "tests/settings/test_claude_settings_keys.py::test_honoured_and_loopwright_keys_get_no_warning"),
    "apiKeyHelper": ("run when no API key is given; its output is the key, cached for "
                     "CLAUDE_CODE_API_KEY_HELPER_TTL_MS (default 5 min), run again after a 401 (the call is "
                     "retried with the new key); never logged",
                     "tests/settings/test_model_and_key_settings.py::test_api_key_helper_is_run_cached_and_never_logged"),
    "env": ("set for tools and hooks", "tests/settings/test_settings.py::test_env_from_settings_reaches_bash_commands"),
    "permissions": ("allow / ask / deny rules, defaultMode, additionalDirectories, disableBypassPermissionsMode "
                    "(\"disable\": bypassPermissions from a flag or defaultMode runs in default mode with one "
                    "line, and a change to it (the SDK's set_permission_mode, ACP's mode, the interactive mode's "
                    "cycle) is refused; an untrusted project may set it), blockReadsOutsideWorkingDirectories and "
                    "blockWritesOutsideWorkingDirectories (true in any file: the file tools' reads, or writes, "
                    "outside the working directories are refused in every mode whatever the rules, and so are "
                    "writes to settings files; a Bash command reading outside them is asked about in every mode; "
                    "an OS sandbox is not narrowed by it); the other sub-keys are named as not applied",
                    "tests/settings/test_settings.py::test_settings_mode_rules_dirs_and_options_on_top"),
    "model": ("the model when --model (AgentOptions.model), LOOPWRIGHT_MODEL and ANTHROPIC_MODEL give none; "
              "aliases (sonnet, opus, haiku) as in Claude Code",
              "tests/settings/test_model_and_key_settings.py::test_settings_model_is_used_unless_a_flag_names_one"),
    "fallbackModel": ("the fallback models when --fallback-model gives none",
                      "tests/settings/test_model_and_key_settings.py::test_fallback_model_and_effort_from_settings"),
    "effortLevel": ("the effort when --effort gives none",
                    "tests/settings/test_model_and_key_settings.py::test_fallback_model_and_effort_from_settings"),
    "enableAllProjectMcpServers": ("approves every server of the project's .mcp.json",
                                   "tests/mcp/test_mcp_config.py::test_scopes_priority_and_project_approval"),
    "enabledMcpjsonServers": ("approves the named .mcp.json servers",
                              "tests/mcp/test_mcp_config.py::test_scopes_priority_and_project_approval"),
    "disabledMcpjsonServers": ("rejects the named .mcp.json servers",
                               "tests/mcp/test_mcp_config.py::test_interactive_approval_of_project_servers"),
    "hooks": ("every event loopwright fires; the others named (docs/claude-code-settings.md)",
              "tests/hooks/test_hooks_claude_events.py::test_permission_request_answers_an_ask_no_one_could_answer"),
    "disableSkillShellExecution": ("custom commands' inline shell (!`cmd`) is not run: each becomes a placeholder",
                                   "tests/hooks/test_command_expansion.py::test_disable_skill_shell_execution_runs_nothing"),
    "disableAllHooks": ("no hook of the settings files or plugins runs, and no statusLine (in a file other than "
                        "managed settings, the managed hooks still run; a managed `false` overrides it)",
                        "tests/settings/test_model_and_key_settings.py::test_disable_all_hooks"),
    "statusLine": ("the interactive mode's status line command (type, command, padding; refreshInterval and "
                   "hideVimModeIndicator are named as not applied)",
                   "tests/cli/test_status_line.py::test_settings_select_it_and_trust_gates_a_projects"),
    "enabledPlugins": ("which installed plugins a run loads", "tests/plugins/test_plugins.py::test_local_marketplace_install_enable_disable_remove"),
    "outputStyle": ("the output style", "tests/skills/test_output_styles.py::test_settings_output_style_changes_the_system_prompt"),
    "sandbox": ("Bash in the OS sandbox", "tests/sandbox/test_sandbox.py::test_invalid_sandbox_settings_name_the_key"),
    "agent": ("the main thread's agent when --agent is not given", "tests/agents/test_agent_files.py::test_the_agent_setting_and_trust"),
    "allowManagedPermissionRulesOnly": (
        "in managed settings (docs/managed-settings.md): the permission rules of every other file and "
        "--settings, and --allowedTools, are not used (--disallowedTools still is); in any other file it is "
        "named and ignored", "tests/settings/test_managed.py::test_only_managed_permission_rules"),
    "allowManagedHooksOnly": ("in managed settings: only their hooks run (not the other files' nor plugins'; the "
                              "SDK's and Python callbacks do); in any other file it is named and ignored",
                              "tests/settings/test_managed.py::test_which_hooks_run"),
    "parentSettingsBehavior": ("in managed settings: \"merge\" takes what restricts of a host's managed settings "
                               "(the TypeScript SDK's managedSettings, --managed-settings) under them; \"first-wins\" "
                               "(the default) leaves those out; in any other file it is named and ignored",
                               "tests/settings/test_managed.py::test_a_hosts_managed_settings_keep_what_restricts"),
    "skillOverrides": ("per skill or command: \"name-only\" lists it to the model without its description, "
                       "\"user-invocable-only\" hides it from the model (/name still runs it), \"off\" hides it "
                       "from both (/name is refused, the lists of commands leave it out)",
                       "tests/skills/test_skill_overrides.py::test_overrides_hide_and_shorten_as_claude_code_does"),
}

# loopwright's own keys (not Claude Code's): honoured, never warned about.
LOOPWRIGHT_KEYS: dict[str, str] = {
    "mcpServers": "MCP servers in a settings file (Claude Code reads them from ~/.claude.json and .mcp.json)",
    "smallFastModel": "the model of WebFetch's own calls",
    "webFetch": "WebFetch's limits and address policy",
    "webSearch": "WebSearch's backend",
}

_UI = "a display setting of Claude Code's terminal UI (loopwright's interactive mode has its own)"
_MANAGED = "a managed (organization) policy of a feature loopwright does not have (docs/managed-settings.md)"
_CLOUD = "a claude.ai, cloud or Remote Control feature loopwright does not have"
_AUTH = "a cloud provider's or proxy's login helper: loopwright uses API keys (ANTHROPIC_API_KEY, apiKeyHelper)"
_INTERNAL = "internal to Claude Code"
_MODELS = "loopwright has no model picker or allowlist (--model names any model)"
_PLUGINS = "a marketplace or plugin-policy setting loopwright does not have (plugins: --plugin-dir, enabledPlugins)"
_COMPACT = "compaction is automatic at the context window (--context-window N sets it; AgentOptions(auto_compact=False) turns it off in Python)"
_UPDATES = "loopwright is updated by its package manager"
_MEMORY = "no auto-memory (memory files: CLAUDE.md, LOOPWRIGHT.md)"
_WORKFLOWS = "no Workflows, Artifacts or agent teams"

REFUSED: dict[str, str] = {
    **dict.fromkeys(("proxyAuthHelper", "awsCredentialExport", "awsAuthRefresh", "gcpAuthRefresh", "xaaIdp",
                     "otelHeadersHelper", "forceLoginMethod", "forceLoginGatewayUrl", "forceLoginOrgUUID",
                     "gatewayInternalNetworks", "allowNestedModelAccessUnderForceLogin"), _AUTH),
    **dict.fromkeys(("processWrapper", "policyHelper", "policyHelpers", "wslInheritsWindowsSettings",
                     "allowedHttpHookUrls", "httpHookAllowedEnvVars", "allowManagedMcpServersOnly", "allowAllClaudeAiMcps",
                     "allowClaudeInChromeWithManagedMcp", "strictPluginOnlyCustomization", "managedMcpServers",
                     "allowedMcpServers", "deniedMcpServers", "managedSourcesBehavior",
                     "allowedProviders", "forceRemoteSettingsRefresh", "claudeMd", "pluginTrustMessage",
                     "disableSideloadFlags", "disableDirectMcpSkills", "desktopMcpServersListScope",
                     "requiredMinimumVersion", "requiredMaximumVersion", "channelsEnabled", "allowedChannelPlugins"),
                    _MANAGED),
    **dict.fromkeys(("fileSuggestion", "respectGitignore", "breakReminder", "quietHours", "viewMode",
                     "spinnerTipsEnabled", "clawdFileProgressEnabled", "spinnerVerbs", "spinnerTipsOverride",
                     "syntaxHighlightingDisabled", "maxProseWidth", "spellcheck", "terminalTitleFromRename",
                     "emojiCompletionEnabled", "prefersReducedMotion", "timeFormat", "timeZone", "theme", "editorMode",
                     "keybindingFlavor", "vimInsertModeRemaps", "verbose", "preferredNotifChannel", "autoScrollEnabled",
                     "wheelScrollAccelerationEnabled", "showTurnDuration", "showMessageTimestamps",
                     "terminalProgressBarEnabled", "todoFeatureEnabled", "tui", "voice", "prUrlTemplate",
                     "footerLinksRegexes", "subagentStatusLine", "companyAnnouncements", "feedbackSurveyRate",
                     "feedbackDrafts", "promptSuggestionEnabled", "showClearContextOnPlanAccept",
                     "askUserQuestionTimeout", "dialogExpiry", "showThinkingSummaries", "bashEditDiffEnabled",
                     "defaultShell", "respondToBashCommands", "inputNeededNotifEnabled", "agentPushNotifEnabled"), _UI),
    **dict.fromkeys(("syncClaudeAiSkills", "syncClaudeAiPlugins", "disableClaudeAiConnectors", "disableRemoteControl",
                     "remote", "remoteControlAtStartup", "remoteControl", "isolatePeerMachines", "daemonColdStart",
                     "crossSessionInbound", "remoteMessageReceipts", "autoUploadSessions", "sshConfigs",
                     "sshHostCommands", "remoteTools", "disableAgentView", "teammateMode", "attributionProject",
                     "attributionProjectPolicy", "autoContinueAtUsageLimit", "switchModelsOnFlag",
                     "desktopSessionCleanupPeriodDays", "disableReplyCheck"), _CLOUD),
    **dict.fromkeys(("availableModels", "enforceAvailableModels", "availableModelsMatch", "deniedModels",
                     "modelOverrides", "modelPicker", "modelCatalogUrl", "modelCatalogPublicKey", "modelSettings",
                     "maxEffortLevel", "advisorModel", "fastMode", "fastModePerSessionOptIn"), _MODELS),
    **dict.fromkeys(("prependPlugins", "appendPlugins", "extraKnownMarketplaces", "additionalMarketplaces",
                     "strictKnownMarketplaces", "allowedMarketplaces", "blockedMarketplaces",
                     "disableCommandPluginSources", "pluginSuggestionMarketplaces", "pluginConfigs"), _PLUGINS),
    **dict.fromkeys(("autoCompactWindow", "autoCompactEnabled", "precomputeCompactionEnabled", "idleCompaction"),
                    _COMPACT),
    **dict.fromkeys(("autoUpdatesChannel", "minimumVersion", "downloadsMirrorUrl"), _UPDATES),
    **dict.fromkeys(("autoMemoryEnabled", "autoMemoryDirectory", "autoDreamEnabled"), _MEMORY),
    **dict.fromkeys(("disableWorkflows", "disableArtifact", "enableArtifact", "enableWorkflows",
                     "workflowSizeGuideline", "workflowKeywordTriggerEnabled", "ultracode", "skipWorkflowUsageWarning"),
                    _WORKFLOWS),
    **dict.fromkeys(("additionalDirectoryConfigRoots", "modelPricing", "awaySummaryEnabled",
                     "responseComparisonEnabled", "modelProposedGoals", "doneMeansMerged", "totalTokensReminder",
                     "totalTokensReminderBudget", "totalTokensReminderAfterUserTurn", "precomputeArmTokens",
                     "autoCompactRaisedForLoad", "autoCompactOfferAnswer"), _INTERNAL),
    "cleanupPeriodDays": "transcripts are kept until `loopwright sessions` removes them",
    "skillListingMaxDescChars": "the Skill tool lists each skill's description in full",
    "skillListingBudgetFraction": "the Skill tool lists every skill",
    "disableBundledSkills": "loopwright bundles no skills",
    "attribution": "loopwright adds no attribution to commits or pull requests",
    "includeCoAuthoredBy": "loopwright adds no attribution to commits or pull requests",
    "includeGitInstructions": "loopwright's system prompt has no built-in git workflow section",
    "worktree": ("baseRef is honoured for --worktree (\"head\": from HEAD; \"fresh\": origin/HEAD, else HEAD); "
                 "symlinkDirectories, sparsePaths, bgIsolation, and baseRef for isolated subagents, are not applied: "
                 "they check out the whole tree from origin/HEAD, else HEAD (docs/worktrees.md)"),
    "disableWindowsBashCommandSplit": "Windows only",
    "bashOutputMaxChars": "Bash output is capped by loopwright's own limit",
    "taskOutputMaxChars": "no effect in Claude Code either (deprecated)",
    "language": "say it in the prompt or in CLAUDE.md",
    "skipWebFetchPreflight": "WebFetch makes no blocklist preflight call",
    "promptCacheTtl": "prompt caching uses the provider's default TTL",
    "subagentPromptCacheTtl": "prompt caching uses the provider's default TTL",
    "alwaysThinkingEnabled": "thinking follows --effort / --thinking",
    "plansDirectory": "plans are kept in the session, not in files",
    "skipDangerousModePermissionPrompt": "bypassPermissions needs no dialog in loopwright",
    "disableAutoMode": "the auto mode is chosen only when asked for (--permission-mode auto)",
    "claudeMdExcludes": "every memory file of the setting sources is read",
    "fileCheckpointingEnabled": "file checkpoints are always kept for persisted sessions",
}


# Keys honoured in part: the sub-keys loopwright applies (the others are named as `key.sub`).
HONOURED_SUBKEYS = {"worktree": frozenset({"baseRef"}),
                    "permissions": frozenset({"allow", "ask", "deny", "defaultMode", "additionalDirectories",
                                               "disableBypassPermissionsMode", "blockReadsOutsideWorkingDirectories",
                                               "blockWritesOutsideWorkingDirectories"}),
                    "statusLine": frozenset({"type", "command", "padding"})}
# Claude Code 2.1.332's sub-keys of those that loopwright does not apply (named as not honoured;
# any other sub-key is named as unknown), and why.
REFUSED_SUBKEYS = {
    **dict.fromkeys(("permissions.blockFileToolReadsOutsideWorkingDirectories", "permissions.blockReadsExemptPaths",
                     "permissions.workingDirectoriesAsGiven"),
                    "not applied: Claude Code reads it only from the --settings of a program that starts it; use "
                    "blockReadsOutsideWorkingDirectories, or deny rules (`Read(//outside/**)`)"),
    **dict.fromkeys(("statusLine.refreshInterval", "statusLine.hideVimModeIndicator"),
                    "the status line command runs after each turn's messages; the interactive mode has no vim mode"),
}


def refused_line(data: Mapping[str, Any], where: str) -> str | None:
    """One line naming the keys of one settings file loopwright does not honour (None: none);
    of a key honoured in part (HONOURED_SUBKEYS), the sub-keys it does not apply."""
    names = []
    for k, v in data.items():
        if k in HONOURED_SUBKEYS:
            if isinstance(v, dict):
                names += [f"{k}.{sub}" for sub in v if sub not in HONOURED_SUBKEYS[k]]
            elif k not in HONOURED:  # (a wrong type of an honoured one: its reader names it)
                names.append(k)
        elif k not in HONOURED and k not in LOOPWRIGHT_KEYS:
            names.append(k)
    if not names:
        return None
    unknown = [k for k in names if k.partition(".")[0] not in REFUSED and k not in REFUSED_SUBKEYS]
    known = [k for k in names if k.partition(".")[0] in REFUSED or k in REFUSED_SUBKEYS]
    parts = []
    if known:
        parts.append("settings loopwright does not honour (ignored; docs/claude-code-settings.md says why): "
                     + ", ".join(known))
    if unknown:
        parts.append("unknown settings (ignored): " + ", ".join(k + _meant(k) for k in unknown))
    return f"{where}: " + "; ".join(parts)


def _meant(key: str) -> str:
    """" (did you mean permissions?)" for a key close to one loopwright or Claude Code knows ("" if none
    is): a typo's rules or hooks do nothing, and the line says which key would have taken them."""
    import difflib  # (only for a settings file with an unknown key)

    top, dot, sub = key.partition(".")
    names = sorted(HONOURED_SUBKEYS.get(top, ())) if dot else sorted({*HONOURED, *LOOPWRIGHT_KEYS, *REFUSED})
    close = difflib.get_close_matches(sub if dot else key, names, n=1, cutoff=0.75)
    if not close:
        return ""
    return f" (did you mean {top + '.' if dot else ''}{close[0]}?)"


def compat_rows(schema_keys: Iterable[str]) -> list[tuple[str, str, str]]:
    """(key, "honoured" | "refused", what loopwright does) for each of Claude Code's keys."""
    rows = []
    for k in schema_keys:
        if k in HONOURED:
            rows.append((k, "honoured", HONOURED[k][0]))
        else:
            rows.append((k, "refused", REFUSED.get(k, "not in loopwright's table")))
    return rows


def compat_markdown(schema_keys: Iterable[str], version: str) -> str:
    """docs/claude-code-settings.md: Claude Code's settings keys, hook events, hook types, hook keys
    and output fields, each with loopwright's status (tests/settings/test_claude_settings_keys.py
    checks the page is this function's output)."""
    from .hooks.config import HOOK_EVENTS, UNFIRED_EVENTS
    from .hooks.kinds import HOOK_TYPES, REFUSED_HOOK_KEYS
    from .hooks.output import HONOURED_SPECIFIC, REFUSED_FIELDS

    lines = ["# Claude Code settings and hooks in loopwright", "",
             f"Every settings key, hook event, hook type and hook output field of Claude Code {version} (its "
             "settings schema and the Agent SDK's hook types), and what loopwright does with it. A refused one is "
             "named in a warning line when a run reads it, never silently ignored. Generated from "
             "`loopwright.settingskeys` (`compat_markdown`); the flags are in "
             "[claude-code-flags.md](claude-code-flags.md).", "",
             "Settings files are read with `--claude-settings` (`~/.claude/settings.json`, `.claude/settings.json`, "
             "`.claude/settings.local.json`) or `--settings FILE_OR_JSON`; see [permissions.md](permissions.md). "
             "Without `--claude-settings` (`AgentOptions(claude_settings=True)`), a run that reads settings files "
             "names each of Claude Code's files of its setting sources that exists and holds something loopwright "
             "would use, in one warning line (stderr, and the init message's `warnings`): `~/.claude/settings.json: "
             "not read, so its 3 deny rules, 2 hooks are not applied (Claude Code's settings files are read with "
             "--claude-settings)`; a malformed one is named as malformed. Not a file `--settings` reads, not with "
             "`--setting-sources ''`, not a library run that reads no settings files (no `setting_sources`, "
             "`settings` or `claude_settings`, as the Agent SDK with no settingSources), and never as the Agent "
             "SDK's CLI (it reads the sources the SDK asks for). "
             "Managed settings (`/etc/claude-code/managed-settings.json` and `managed-settings.d/`) are read on top "
             "of them all: [managed-settings.md](managed-settings.md).", "",
             "## Settings keys", "", "| Key | Status | What loopwright does |", "|---|---|---|"]
    lines += [f"| `{k}` | {status} | {what} |" for k, status, what in compat_rows(schema_keys)]
    lines += ["", "Sub-keys of honoured keys that loopwright does not apply (named when read, as any other "
              "unknown sub-key is): " + "; ".join(f"`{k}`: {v}" for k, v in REFUSED_SUBKEYS.items()) + "."]
    lines += ["", "loopwright's own keys (not Claude Code's): "
              + "; ".join(f"`{k}`: {v}" for k, v in LOOPWRIGHT_KEYS.items()) + ".", "",
              "## Hook events", "", "| Event | Status |", "|---|---|"]
    for e in sorted([*HOOK_EVENTS, *UNFIRED_EVENTS]):
        lines.append(f"| `{e}` | fired |" if e in HOOK_EVENTS else f"| `{e}` | never fired: {UNFIRED_EVENTS[e]} |")
    lines += ["", "## Hook types", "",
              "`" + "`, `".join(HOOK_TYPES) + "` run (`prompt` and `agent` are judged by the run's model, or the "
              "hook's `model`); an `mcp_tool` hook calls its `tool` on the run's configured MCP server `server` with "
              "`input` (`${path}` in a string is the value at that path of the hook's input JSON), its text answer "
              "read as a command's output; a server that is not there or an error result is a non-blocking "
              "failure unless `onFailure` is `block`.", "",
              "A command hook with `async: true` starts and the event goes on without it; when it exits, its "
              "`systemMessage` and `additionalContext` go to the model with the next tool result (it decides "
              "nothing, as in Claude Code); one that exits after its run ended speaks with the session's next "
              "prompt (each a system reminder before the prompt's text, as Claude Code sends it in an SDK "
              "session; `-p` ends with its run). `asyncRewake: true` is waited for and its exit 2 reaches the model "
              "like any hook's, as Claude Code does in `-p` and SDK sessions (its interactive mode runs it in the "
              "background and wakes the model later; loopwright's waits).", "",
              "A command hook's stdout and its stderr are each read up to 10 MiB: a hook that prints more is "
              "ended there, its output kept cut and marked so, a non-blocking error (Claude Code reads it all: an "
              "endless stream fills its memory). The statusLine command and apiKeyHelper are ended past 1 MiB. "
              "What of a hook's output reaches the model, the transcript or a front end (exit 2's stderr, a reason, "
              "a message, additionalContext, the hook_response of --include-hook-events) is cut at 10,000 "
              "characters, saying how many more there were; a PostToolUse updatedToolOutput at the length of the "
              "tool's own output when that is longer.", "",
              "Hook keys loopwright does not honour (named when read; the hook still runs): "
              + "; ".join(f"`{k}`: {v}" for k, v in REFUSED_HOOK_KEYS.items()) + ".", "",
              "## Hook output fields", "",
              "`continue`/`stopReason`, `decision`/`reason`, `systemMessage` and `suppressOutput` on every event. "
              "`hookSpecificOutput` fields honoured per event:", ""]
    lines += [f"- `{e}`: " + ", ".join(f"`{f}`" for f in sorted(fs)) for e, fs in HONOURED_SPECIFIC.items()]
    lines += ["", "Any other field a hook gives is named in a `hook_error` line and ignored; these with a reason:", ""]
    lines += [f"- `{k}`: {v}" for k, v in REFUSED_FIELDS.items()]
    from .ccenv import HONOURED as ENV_HONOURED
    from .ccenv import NOT_APPLICABLE as ENV_NOT_APPLICABLE
    from .ccenv import REFUSED as ENV_REFUSED

    lines += ["", "## Environment variables", "",
              "Every variable Claude Code documents (its CHANGELOG, checked against its binary: "
              "`tests/fixtures/claude_code_env_vars.json`), in the environment or a settings file's `env` (which "
              "is also set for tools and hooks). A refused one that is set is named in one warning line at run "
              "start (set to 0 or false it asks for nothing and is not said), as is an honoured value loopwright "
              "cannot take; one that does not apply is never said. Generated from `loopwright.ccenv`.", "",
              "| Variable | Status | What loopwright does |", "|---|---|---|"]
    lines += [f"| `{k}` | honoured | {v[0]} |" for k, v in ENV_HONOURED.items()]
    lines += [f"| `{k}` | refused | {v} |" for k, v in ENV_REFUSED.items()]
    lines += [f"| `{k}` | not applicable | {v} |" for k, v in ENV_NOT_APPLICABLE.items()]
    lines += ["", "## Permission rule forms", "",
              "Honoured, in Claude Code's deny → ask → allow order: `Tool`, `Bash(npm run test:*)` (prefix), "
              "`Bash(git diff *)` (wildcards), `Read(//abs/**)`, `Read(~/path)`, `Edit(/project-relative/**)`, "
              "`Edit(./cwd-relative)`, `Read(*.env)` (gitignore patterns), `WebFetch(domain:example.com)` "
              "(`*.` for subdomains), `mcp__server`, `mcp__server__tool`, `mcp__server__*`, and `Tool(param:value)`: "
              "the call's parameter `param`, as text, matches the `*` pattern `value` (`Agent(model:opus)`, "
              "`Agent(subagent_type:Explore)`).", "",
              "Wildcard tool names (`Bas*`, `mcp__*`) in deny and ask rules.", "",
              "Refused by name, as Claude Code refuses them: empty parentheses (`Bash()`: write `Bash`), a tool name "
              "starting in lowercase (`bash`), a wildcard tool name in an allow rule (`Bas*`, `mcp__*`; only "
              "`mcp__server__glob` with a literal server may have one), a pattern in parentheses after an MCP tool, a "
              "URL or a missing `domain:` in `WebFetch(...)`, wildcards in `WebSearch(...)`, an empty prefix "
              "`Bash(:*)`, `:*` in a file rule, and a malformed rule. In a settings file, such an allow rule is left out with "
              "one warning line (leaving it out only narrows); such a deny or ask rule stops the run (leaving it "
              "out would allow more; Claude Code skips it with a warning)."]
    return "\n".join(lines) + "\n"
