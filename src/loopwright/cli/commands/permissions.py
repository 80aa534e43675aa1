"""Room: cli. Owns /permissions: the mode and the allow/ask/deny rules in force with where each
comes from, and adding or removing a rule for this session or in the user's settings; may import
the rooms below cli and cli.commands' host and panel.

    /permissions                          the mode, then every rule: kind, rule, source (file)
    /permissions allow|ask|deny RULE      add RULE for this session (allow/deny: later runs' gate)
    /permissions allow|ask|deny RULE --user   ... and save it in $LOOPWRIGHT_HOME/settings.json
    /permissions remove RULE [--user]     take RULE out of this session's rules (or the user file)
    /permissions mode MODE                the mode of the next prompts (as Shift+Tab)

A rule in a project's or a flag's list cannot be removed here (it is named with its file);
the session's own rules are the ones "don't ask again", /permissions or the command line added.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from .host import Command, Host
from .panel import Panel

KINDS = ("allow", "ask", "deny")


def user_settings() -> Path:
    from ...home import loopwright_home

    return loopwright_home() / "settings.json"


def file_rules(path: Path) -> dict[str, list[str]]:
    """permissions.allow/ask/deny of one settings file (empty lists for what it lacks)."""
    from ...settings import SettingsError, read_json_file

    try:
        data = read_json_file(path)
    except SettingsError:
        return {k: [] for k in KINDS}
    perms = data.get("permissions") if isinstance(data, dict) else None
    perms = perms if isinstance(perms, dict) else {}
    return {k: [r for r in perms.get(k, []) if isinstance(r, str)] if isinstance(perms.get(k), list) else []
            for k in KINDS}


def edit_user_rule(kind: str, rule: str, add: bool) -> Path:
    """Add or remove `rule` in permissions.<kind> of the user's settings file (0600, the rest of
    the file kept). SettingsError when the file is not a JSON object with lists there."""
    from ...gate import Rule
    from ...home import locked, private_dir, write_private
    from ...settings import SettingsError, read_json_file

    Rule.parse(rule)  # never write a rule the reader would reject
    path = user_settings()
    with locked(path):  # (another loopwright changing the file meanwhile keeps its change)
        data: Any = read_json_file(path) if path.exists() else {}
        perms = data.setdefault("permissions", {}) if isinstance(data, dict) else None
        if not isinstance(perms, dict) or not isinstance(perms.setdefault(kind, []), list):
            raise SettingsError(f"{path}: permissions.{kind} is not a list in an object; not changed")
        items: list[Any] = perms[kind]
        if add and rule not in items:
            items.append(rule)
        elif not add:
            if rule not in items:
                raise SettingsError(f"{path} has no {kind} rule {rule}")
            items.remove(rule)
        private_dir(path.parent)
        write_private(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


def rule_lines(host: Host) -> list[str]:
    """Every rule in force, `kind  rule  source`, the session's first."""
    from ...runconfig import build_run_config

    o, base = host.client.options, host.base_options
    cwd = Path(host.cwd()).resolve()
    lines: list[str] = []
    session = {"allow": [r for r in o.allowed_tools if r not in base.allowed_tools],
               "deny": [r for r in o.disallowed_tools if r not in base.disallowed_tools]}
    for kind, rules in session.items():
        lines += [f"{kind:<5}  {r}  (this session)" for r in rules]
    lines += [f"allow  {r}  (this session: don't ask again)" for r in host.asker.granted.rules
              if r not in session["allow"]]
    lines += [f"allow  {r}  (--allowedTools)" for r in base.allowed_tools]
    lines += [f"deny   {r}  (--disallowedTools)" for r in base.disallowed_tools]
    settings = build_run_config(o, cwd).settings
    for path in settings.files if settings is not None else []:
        for kind, rules in file_rules(path).items():
            lines += [f"{kind:<5}  {r}  ({path})" for r in rules]
    if settings is not None:
        lines += [f"⚠ ignored: {i.line('')}" for i in settings.ignored]
    return lines


async def permissions(host: Host, arg: str) -> None:
    from ...gate import PERMISSION_MODES, Rule
    from ...settings import SettingsError

    words = arg.split()
    user = "--user" in words
    words = [w for w in words if w != "--user"]
    o = host.client.options
    if not words:
        mode = o.permission_mode or "default"
        lines = [f"mode: {mode}  (Shift+Tab or /permissions mode MODE: {', '.join(PERMISSION_MODES)})",
                 *(rule_lines(host) or ["no rules: every call the mode does not allow is asked"])]
        host.open_panel(Panel("Permissions", lines,
                              "/permissions allow|ask|deny RULE [--user] · remove RULE [--user] · mode MODE"))
        return
    verb, rule = words[0], " ".join(words[1:])
    if verb == "mode" and rule:
        try:
            await host.client.set_permission_mode(rule)  # type: ignore[arg-type]
        except ValueError as e:
            host.say(f"  ✗ {e}")
            return
        host.say(f"  ● permission mode: {rule} (the next prompts)")
        return
    if verb not in (*KINDS, "remove") or not rule:
        host.say("  /permissions [allow|ask|deny RULE [--user] | remove RULE [--user] | mode MODE]")
        return
    try:
        Rule.parse(rule)
    except ValueError as e:
        host.say(f"  ✗ {e}")
        return
    if (user or verb == "allow") and host.asker.closed():  # a rule that would be ignored: not kept, said
        from ...managed import RULES_ONLY

        host.say(f"  ✗ {rule} not {'changed' if verb == 'remove' else 'added'}: {RULES_ONLY}")
        return
    if user:
        try:
            if verb == "remove":
                done = [k for k in KINDS if rule in file_rules(user_settings()).get(k, [])]
                if not done:
                    host.say(f"  {user_settings()} has no rule {rule}")
                    return
                for k in done:
                    path = edit_user_rule(k, rule, False)
            else:
                path = edit_user_rule(verb, rule, True)
        except SettingsError as e:
            host.say(f"  ✗ not changed: {e}")
            return
        host.say(f"  ✓ {'removed' if verb == 'remove' else verb} {rule} in {path} (the next prompts)")
        return
    if verb == "remove":
        removed = rule in o.allowed_tools or rule in o.disallowed_tools or rule in host.asker.granted.rules
        if rule in base_rules(host):
            host.say(f"  {rule} comes from the command line or a settings file (see /permissions): not removed")
            return
        host.client.options = replace(o, allowed_tools=[r for r in o.allowed_tools if r != rule],
                                      disallowed_tools=[r for r in o.disallowed_tools if r != rule])
        from ...gate.session import SessionRules

        g = host.asker.granted
        fresh = SessionRules(g.cwd, g.add_dirs)  # (a new one: its gate is built from its rules)
        fresh.add(r for r in g.rules if r != rule)
        host.asker.granted = fresh
        host.say(f"  ✓ removed {rule} from this session's rules" if removed else f"  no session rule {rule}")
        return
    if verb == "ask":  # (the options have no ask list: a session ask rule is the deny of its allow)
        host.say("  an ask rule is kept in a settings file: /permissions ask RULE --user")
        return
    if verb == "allow" and rule not in o.allowed_tools:
        host.client.options = replace(o, allowed_tools=[*o.allowed_tools, rule])
    elif verb == "deny" and rule not in o.disallowed_tools:
        host.client.options = replace(o, disallowed_tools=[*o.disallowed_tools, rule])
    host.say(f"  ✓ {verb} {rule} for this session (the next calls)")


def base_rules(host: Host) -> list[str]:
    b = host.base_options
    return [*b.allowed_tools, *b.disallowed_tools]


COMMANDS = [Command("permissions", "the permission mode and rules in force (and where from); add or remove one",
                    permissions, usage="/permissions [allow|deny RULE]")]
