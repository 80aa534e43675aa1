"""Room: cli. Owns the REPL's settings views: /status (this session at a glance), /config (the
settings files read and what they set), /output-style (the styles and their files; switching),
/hooks (the hooks in force, by event, with their files); may import the rooms below cli and
cli.commands' host, panel and model.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from .host import Command, Host
from .panel import Panel


def _settings(host: Host) -> Any:
    from ...runconfig import build_run_config

    return build_run_config(host.client.options, Path(host.cwd()).resolve()).settings


def _json(path: Path) -> dict[str, Any]:
    from ...settings import SettingsError, read_json_file

    try:
        data = read_json_file(path)
    except SettingsError:
        return {}
    return data if isinstance(data, dict) else {}


async def status(host: Host, arg: str) -> None:
    from ... import __version__
    from .model import model_name

    c, o = host.client, host.client.options
    s = _settings(host)
    lines = [f"loopwright {__version__}",
             f"model: {model_name(c.model if c.model is not None else o.model)}"
             f"{' (fallback: ' + ', '.join(o.fallback_model) + ')' if o.fallback_model else ''}",
             f"API: {o.base_url or 'the provider default (or *_BASE_URL)'}",
             f"session: {c.session_id or '(none yet)'} · {len(c.results)} prompts · ${c.total_cost_usd:.4f}",
             f"working directory: {host.cwd()}",
             *(f"  + {d}" for d in o.add_dirs or []),
             f"permission mode: {o.permission_mode or 'default'}",
             f"output style: {o.output_style or (s.output_style if s is not None else None) or 'default'}",
             f"setting sources: {', '.join(o.setting_sources or []) or 'none (--bare)'}",
             *(f"  settings file: {p}" for p in (s.files if s is not None else []))]
    host.open_panel(Panel("Status", lines))


async def config(host: Host, arg: str) -> None:
    s = _settings(host)
    if s is None:
        host.open_panel(Panel("Config", ["no settings files are read (--bare or no --setting-sources)"]))
        return
    lines: list[str] = []
    for path in s.files:
        data = _json(path)
        lines.append(f"{path}")
        for key, value in data.items():
            shown = json_short(value)
            lines.append(f"    {key}: {shown}")
    if not s.files:
        lines.append("no settings file exists yet (user: $LOOPWRIGHT_HOME/settings.json, project: "
                     ".loopwright/settings.json or .claude/settings.json)")
    lines += [f"⚠ {w}" for w in s.warnings]
    host.open_panel(Panel("Config", lines, "change: /model, /permissions, /output-style, /add-dir, or edit the file"))


def json_short(value: Any, width: int = 100) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 1] + "…"


def style_files(host: Host) -> dict[str, Path]:
    """Output style name -> the file it was read from (the last of a name wins, as find_styles)."""
    from ...outputstyles import read_style, style_dirs

    out: dict[str, Path] = {}
    for d, source in style_dirs(Path(host.cwd()).resolve(), host.client.options.setting_sources or []):
        for md in sorted(d.glob("*.md")) if d.is_dir() else []:
            try:
                style, _ = read_style(md, source)
            except ValueError:
                continue
            out[style.name] = md
    return out


async def output_style(host: Host, arg: str) -> None:
    from ...outputstyles import find_styles

    o = host.client.options
    styles, warnings = find_styles(Path(host.cwd()).resolve(), o.setting_sources or [])
    s = _settings(host)
    now = o.output_style or (s.output_style if s is not None else None) or "default"
    if arg:
        found = next((n for n in styles if n.lower() == arg.lower()), None)
        if found is None:
            host.say(f"  no output style {arg!r} (styles: {', '.join(styles)})")
            return
        host.client.options = replace(o, output_style=found)
        host.say(f"  ● output style: {found} (the next prompts' system prompt)")
        return
    files = style_files(host)
    lines: list[str] = []
    for name, st in styles.items():
        mark = "❯" if name.lower() == now.lower() else " "
        where = files.get(name) or st.source
        lines.append(f"{mark} {name}  ({where})  {st.description}")
    lines += [f"⚠ {w}" for w in warnings]
    host.open_panel(Panel("Output style", lines, "/output-style NAME switches"))


async def hooks(host: Host, arg: str) -> None:
    s = _settings(host)
    lines: list[str] = []
    for path in s.files if s is not None else []:
        for event, matchers in (_json(path).get("hooks") or {}).items():
            for m in matchers if isinstance(matchers, list) else []:
                if not isinstance(m, dict):
                    continue
                for h in m.get("hooks") or []:
                    what = h.get("command") or h.get("url") or h.get("prompt") or h.get("type") if isinstance(h, dict) else h
                    lines.append(f"{event}  [{m.get('matcher') or '*'}]  {json_short(what, 70)}  ({path})")
    if host.client.options.hooks:
        lines.append("hooks given in code (AgentOptions.hooks) also run")
    if s is not None:
        lines += [f"⚠ {w}" for w in s.warnings if "hook" in w.lower()]
    host.open_panel(Panel("Hooks", lines or ["no hooks configured"], "hooks are set in the settings files' \"hooks\""))


COMMANDS = [
    Command("status", "this session: version, model, API, session, directories, mode, settings files", status,
            busy_ok=True),
    Command("config", "the settings files read and what each sets", config, busy_ok=True),
    Command("output-style", "the output styles (and their files); switch the style", output_style,
            usage="/output-style [NAME]"),
    Command("hooks", "the hooks in force, by event, with their files", hooks, busy_ok=True),
]
