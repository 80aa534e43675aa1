"""Room: plugins. Owns one plugin directory: its manifest and what it brings (commands, agents,
skills, hooks, MCP servers, output styles, and what of it may run); may import agentfiles and below.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..options import AgentDefinition

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"
# plugin.json keys loopwright reads; the others Claude Code documents are display or distribution data
MANIFEST_KEYS = {"name", "version", "description", "author", "homepage", "repository", "license", "keywords",
                 "commands", "agents", "skills", "hooks", "mcpServers", "outputStyles"}


class PluginError(ValueError):
    """A plugin that cannot be used: the message names its directory and the field."""


@dataclass
class Plugin:
    """One plugin directory and its manifest."""

    name: str
    root: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # "--plugin-dir", or "NAME@MARKETPLACE" for an installed one

    def _paths(self, key: str, default: str) -> list[Path]:
        """The folders (or files) of one part: the manifest's path(s) for it, else the convention."""
        value = self.manifest.get(key)
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else [default]
        return [(self.root / str(v)).resolve() for v in items if isinstance(v, str)]

    @property
    def commands_dirs(self) -> list[Path]:
        return self._paths("commands", "commands")

    @property
    def skills_dirs(self) -> list[Path]:
        return self._paths("skills", "skills")

    @property
    def styles_dirs(self) -> list[Path]:
        return self._paths("outputStyles", "output-styles")

    def _json(self, key: str, default: str) -> dict[str, Any]:
        value = self.manifest.get(key)
        if isinstance(value, dict):  # given inline in plugin.json
            inline: dict[str, Any] = json.loads(json.dumps(value).replace(ROOT_VAR, json.dumps(str(self.root))[1:-1]))
            return inline
        path = self.root / (value if isinstance(value, str) else default)
        if not path.is_file():
            return {}
        try:
            text = path.read_text(encoding="utf-8").replace(ROOT_VAR, json.dumps(str(self.root))[1:-1])
            data = json.loads(text)
        except (OSError, ValueError) as e:
            raise PluginError(f"plugin {self.name!r}: {path}: {e}") from None
        if not isinstance(data, dict):
            raise PluginError(f"plugin {self.name!r}: {path} must hold a JSON object")
        return data

    def hooks(self) -> dict[str, Any]:
        """Its hooks, in the settings files' form ({event: [{matcher, hooks}]})."""
        data = self._json("hooks", "hooks/hooks.json")
        hooks = data.get("hooks", data)
        return hooks if isinstance(hooks, dict) else {}

    def mcp_servers(self) -> dict[str, Any]:
        """Its MCP servers, each named `plugin_<plugin>_<server>` (Claude Code: plugin:<plugin>:<server>)."""
        data = self._json("mcpServers", ".mcp.json")
        servers = data.get("mcpServers", data)
        return {f"plugin_{self.name}_{n}": c for n, c in servers.items()} if isinstance(servers, dict) else {}

    def agents(self, warnings: list[str]) -> dict[str, AgentDefinition]:
        """Its agents, named `<plugin>:<agent>`. A plugin agent's permissionMode, hooks and
        mcpServers are not applied (Claude Code ignores them too, and says so)."""
        from ..agentfiles import parse_agent_file

        out: dict[str, AgentDefinition] = {}
        for d in self._paths("agents", "agents"):
            for md in sorted(d.glob("*.md")) if d.is_dir() else [d] if d.is_file() else []:
                try:
                    name, definition, said, _ = parse_agent_file(md, md.read_text(encoding="utf-8"), True)
                except (OSError, ValueError) as e:
                    warnings.append(f"plugin {self.name!r}: {e}")
                    continue
                warnings += said
                if definition.permission_mode is not None:
                    warnings.append(f"{md}: permissionMode is not applied to a plugin's agent (as in Claude Code: "
                                    "define it in .claude/agents/ for that)")
                    definition.permission_mode = None
                out[f"{self.name}:{name}"] = definition
        return out

    def runs(self) -> list[str]:
        """What this plugin may run, one line each: its hook commands and MCP server commands."""
        out: list[str] = []
        for event, entries in self.hooks().items():
            for entry in entries if isinstance(entries, list) else []:
                for h in entry.get("hooks", []) if isinstance(entry, dict) else []:
                    if isinstance(h, dict) and h.get("command"):
                        out.append(f"hook {event}: {h['command']}")
        for name, cfg in self.mcp_servers().items():
            if isinstance(cfg, dict):
                what = " ".join([str(cfg.get("command", "")), *map(str, cfg.get("args", []))]).strip() or cfg.get("url")
                out.append(f"MCP server {name}: {what}")
        return out


def load_plugin(root: str | Path, source: str = "--plugin-dir") -> Plugin:
    """The plugin in `root` (its `.claude-plugin/plugin.json`; without one, the folder's name).
    Raises PluginError naming the directory and the field."""
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise PluginError(f"plugin directory {root}: no such directory")
    manifest: dict[str, Any] = {}
    path = root / ".claude-plugin" / "plugin.json"
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise PluginError(f"{path}: {e}") from None
        if not isinstance(data, dict):
            raise PluginError(f"{path}: must be a JSON object")
        manifest = data
    name = manifest.get("name", root.name)
    if not isinstance(name, str) or not NAME.match(name):
        raise PluginError(f"{path}: \"name\" must be letters, digits, '.', '_' and '-' (got {name!r})")
    return Plugin(name, root, manifest, source)


def plugin_dirs_of(root: Path) -> list[Path]:
    """`--plugin-dir DIR`: DIR itself when it is a plugin, else each child that is one (Claude
    Code: "a folder of plugins loads each child")."""
    if (root / ".claude-plugin").is_dir() or not root.is_dir():
        return [root]
    kids = [k for k in sorted(root.iterdir()) if (k / ".claude-plugin").is_dir()]
    return kids or [root]
