"""Room: cli. Owns what `loopwright mcp serve` serves, as plain data both its SDK server and its
early answers give: the declared capabilities, the tools and the gate (Core), the listings, and
the answers to the first requests before the SDK is loaded (StdioApp); may import assemble,
tools, mcp.serve_resources, mcp.serve_prompts, mcp.serve_fixtures and below.

The early answers (see serve_stdio.py for why) are the SDK's, told without it: the handshake —
`initialize` (its version negotiation: the client's version when served, else the newest) or the
2026-07-28 protocol's `server/discover` — and `tools/list`, `prompts/list`, `resources/list` in the
shape of the era they came in (the 2026-07-28 results carry `resultType`, the cache hints and the
`serverInfo` stamp). A listing is answered early only on a connection whose era is known (after an
early `initialize`, or with the 2026-07-28 envelope in its `_meta`); anything odd is left to the SDK.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..execute import Executor
    from ..options import AgentOptions
    from ..tools.base import Tool
    from .serve_stdio import Serving

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # the SDK's, oldest first
MODERN = "2026-07-28"  # the per-request envelope protocol (no initialize)
META = "io.modelcontextprotocol/"


def capabilities(modern: bool = False) -> dict[str, Any]:
    """What the server declares (one place: the SDK derives the same from the handlers make_server
    gives it; tests check the early answers agree). On 2026-07-28, subscriptions exist only through
    `subscriptions/listen`, which is not served."""
    return {"prompts": {"listChanged": False}, "resources": {"subscribe": not modern,
                                                            "listChanged": False},
            "tools": {"listChanged": False}, "logging": {}, "completions": {}}


def server_info() -> dict[str, Any]:
    from .. import __version__

    return {"name": "loopwright", "version": __version__}


def build_executor(options: AgentOptions) -> tuple[list[Tool], Executor]:
    """The served tools and the gate they run behind, from the options of `mcp serve` (built by
    its CLI, cli/mcp.py: cwd, permission mode, rules, add-dirs, settings); the tools are the
    server's own choice, whatever `options.tools` holds."""
    from ..assemble import build_gate
    from ..tools.builtin import default_tools
    from ..tools.web import NAMES as WEB_TOOLS

    # The web tools answer through the run's model and settings, which a served tool has not; the
    # client has its own user: questions and plans are its business, not its tools'. The Task tools'
    # list lives as long as a run, which a served call has not.
    tools = [t for t in default_tools(tasks=False) if t.name not in (*WEB_TOOLS, "AskUserQuestion", "ExitPlanMode")]
    return build_gate(dataclasses.replace(options, tools=tools))


class Core:
    """The tools, the gate, the files and the prompts one server serves."""

    def __init__(self, options: AgentOptions, fixtures: bool) -> None:
        from . import serve_fixtures as fx
        from .serve_prompts import Prompts
        from .serve_resources import Files

        self.options = options
        self.fixtures = fixtures
        self.tools, self.executor = build_executor(options)
        self.names = {t.name for t in self.tools}
        cwd = Path(options.cwd or ".").resolve()
        self.files = Files(self.executor, [cwd, *map(Path, options.add_dirs or [])])
        self.prompts = Prompts(cwd, list(options.setting_sources or []), options)
        self.tool_list = [{"name": t.name, "description": t.description, "inputSchema": t.input_schema,
                           "annotations": {"readOnlyHint": t.read_only, "destructiveHint": not t.read_only}}
                          for t in self.tools]
        if fixtures:
            self.tool_list += [{"name": n, **d} for n, d in fx.TOOLS.items()]

    def prompt_list(self) -> list[dict[str, Any]]:
        from . import serve_fixtures as fx

        found = self.prompts.listed()
        return [*({"name": n, **d} for n, d in fx.PROMPTS.items()), *found] if self.fixtures else found

    async def resource_page(self, cursor: str | None) -> dict[str, Any]:
        """One page of `resources/list`'s result (the fixtures' first, when served)."""
        from . import serve_fixtures as fx

        found, nxt = await self.files.page(cursor)
        if self.fixtures and not cursor:
            found = [*fx.RESOURCES, *found]
        return {"resources": found, **({"nextCursor": nxt} if nxt else {})}


class StdioApp:
    """serve_stdio's App: the Core built first (no SDK), then the SDK server on it."""

    def __init__(self, options: AgentOptions, fixtures: bool, make: Any) -> None:
        self.options = options
        self.fixtures = fixtures
        self.make = make  # server.load_core: (Core) -> Serving
        self.core: Core | None = None
        self.legacy = False  # an initialize was answered early: this connection is of the handshake era

    def prepare(self) -> None:
        self.core = Core(self.options, self.fixtures)

    def load(self) -> Serving:
        assert self.core is not None
        served: Serving = self.make(self.core)
        return served

    async def early(self, method: str, params: Any) -> dict[str, Any] | None:
        if method == "initialize":
            result = self._initialize(params)
            self.legacy = result is not None
            return result
        modern = _modern(params)
        if method == "server/discover":
            return self._stamp({"capabilities": capabilities(modern=True), "supportedVersions": [MODERN]}) \
                if modern else None
        if not (modern or self.legacy) or self.core is None:
            return None
        if method == "tools/list" and not _cursor(params):
            payload: dict[str, Any] | None = {"tools": self.core.tool_list}
        elif method == "prompts/list" and not _cursor(params):
            payload = {"prompts": self.core.prompt_list()}
        elif method == "resources/list" and not _cursor(params):
            payload = await self.core.resource_page(None)
        else:
            payload = None
        return None if payload is None else (self._stamp(payload) if modern else payload)

    def _initialize(self, params: Any) -> dict[str, Any] | None:
        if not isinstance(params, dict):
            return None
        version, info = params.get("protocolVersion"), params.get("clientInfo")
        if not (isinstance(version, str) and isinstance(params.get("capabilities"), dict)
                and isinstance(info, dict) and isinstance(info.get("name"), str)
                and isinstance(info.get("version"), str)) or _modern(params):
            return None
        return {"protocolVersion": version if version in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
                "capabilities": capabilities(), "serverInfo": server_info()}

    @staticmethod
    def _stamp(payload: dict[str, Any]) -> dict[str, Any]:
        """A 2026-07-28 result as the SDK shapes it: its type, the cache hints, the serverInfo stamp."""
        return {**payload, "resultType": "complete", "cacheScope": "private", "ttlMs": 0,
                "_meta": {f"{META}serverInfo": server_info()}}


def _modern(params: Any) -> bool:
    """Does the request carry the 2026-07-28 envelope (its version, client info and capabilities)?"""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return (isinstance(meta, dict) and meta.get(f"{META}protocolVersion") == MODERN
            and isinstance(meta.get(f"{META}clientInfo"), dict)
            and isinstance(meta.get(f"{META}clientCapabilities"), dict))


def _cursor(params: Any) -> bool:
    return isinstance(params, dict) and params.get("cursor") is not None
