"""Room: mcp. Owns what MCP servers ask of loopwright mid-call: elicitation, sampling, roots; may import models.base, blocks.

* **Elicitation** (a server asks the user a question). `Asks.elicit` (a front end's dialog, the
  SDK protocol's callback) answers when one is set. Otherwise (headless) the answer is the
  spec's: a form whose every required field has a default is accepted with the defaults
  (SEP-1034); any other form, and every URL elicitation, is declined.
* **Sampling** (a server asks the model). Through the run's own model, only when the gate allows
  the name `mcp__<server>__sampling` (a rule `mcp__<server>__sampling` or `mcp__<server>`; asked
  like a tool call where someone can be asked), never once the run's budget is spent, and its
  usage and cost count in the run's (as compaction's calls do). Without a run (`mcp list`) it is
  refused.
* **Roots**: the run's working directories (its cwd and `--add-dir`s) as `file://` URIs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("loopwright.mcp")

# (server name, the request's params) -> an mcp_types.ElicitResult
ElicitFn = Callable[[str, Any], Awaitable[Any]]


def form_defaults(schema: Any) -> dict[str, Any] | None:
    """A requested schema's defaults, when they fill every required field; else None."""
    if schema is None:
        return None
    raw = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
    props = raw.get("properties") or {}
    content = {k: p["default"] for k, p in props.items() if isinstance(p, dict) and "default" in p}
    if not all(r in content for r in raw.get("required") or []):
        return None
    return content


def headless_elicit(params: Any) -> Any:
    """The answer nobody is asked for: the schema's defaults when they fill every required field,
    else a decline (URL elicitations are always declined)."""
    from mcp_types import ElicitResult

    content = None if getattr(params, "mode", None) == "url" else form_defaults(getattr(params, "requested_schema", None))
    if content is None:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=content)


def user_elicit(callback: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]) -> ElicitFn:
    """AgentOptions.elicit (plain dicts, the MCP wire's names) as the SDK client's ElicitFn. An answer
    that is not a valid ElicitResult is a decline; a callback that raises too."""

    async def elicit(server: str, params: Any) -> Any:
        from mcp_types import ElicitResult

        request = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            answer = await callback(server, request)
            return ElicitResult.model_validate(answer)
        except Exception as e:  # noqa: BLE001 - a failing front end declines; the server's call goes on
            log.info("the elicitation of MCP server %r was declined: %s: %s", server, type(e).__name__, e)
            return ElicitResult(action="decline")

    return elicit


class Asks:
    """The answers of one run's servers' requests. `run` (the loop's Run, set when the run opens
    the servers) gives the model, the gate, the budget and the working directories."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.run: Any = None
        self.elicit: ElicitFn | None = None

    def callbacks(self, server: str, part: str | None) -> dict[str, Any]:
        """The SDK Client's callbacks for one server (`part`: its name in tool names)."""

        async def on_elicit(context: Any, params: Any) -> Any:
            hooks = self.run.deps.hooks if self.run is not None else None  # Elicitation/ElicitationResult
            hooked = hooks is not None and hooks.active
            answer = await self._hooked_elicit(hooks, server, params) if hooked else None
            if answer is None and self.elicit is not None:
                answer = await self.elicit(server, params)
            elif answer is None:
                answer = headless_elicit(params)
                log.info("MCP server %r asked %r: %s (no one to ask)", server, getattr(params, "message", ""),
                         answer.action)
            if hooked:
                answer = await self._hooked_result(hooks, server, params, answer)
            return answer

        async def on_sample(context: Any, params: Any) -> Any:
            return await self.sample(server, part, params)

        async def on_roots(context: Any) -> Any:
            from mcp_types import ListRootsResult, Root
            from pydantic import FileUrl

            return ListRootsResult(roots=[Root(uri=FileUrl(d.as_uri()), name=d.name or str(d)) for d in self.roots()])

        return {"elicitation_callback": on_elicit, "sampling_callback": on_sample, "list_roots_callback": on_roots}

    async def _hooked_elicit(self, hooks: Any, server: str, params: Any) -> Any:
        """Claude Code's Elicitation hooks: their answer instead of the dialog, or None."""
        from mcp_types import ElicitResult

        raw = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        data = {"mcp_server_name": server, "message": raw.get("message", ""), "mode": raw.get("mode", "form"),
                **{k: raw[w] for k, w in (("url", "url"), ("elicitation_id", "elicitationId"),
                                           ("requested_schema", "requestedSchema")) if w in raw}}
        said = await hooks.elicitation(data)
        return None if said is None else ElicitResult.model_validate(said)

    async def _hooked_result(self, hooks: Any, server: str, params: Any, answer: Any) -> Any:
        """Claude Code's ElicitationResult hooks: the answer, or their override of it."""
        from mcp_types import ElicitResult

        data: dict[str, Any] = {"mcp_server_name": server, "mode": getattr(params, "mode", None) or "form",
                                "action": answer.action}
        if getattr(params, "elicitation_id", None):
            data["elicitation_id"] = params.elicitation_id
        if answer.content is not None:
            data["content"] = answer.content
        said = await hooks.elicitation_result(data)
        return answer if said is None else ElicitResult.model_validate(said)

    def roots(self) -> list[Path]:
        """The working directories: the run's cwd and added directories."""
        run = self.run
        if run is None:
            return [self.cwd.resolve()]
        d = run.deps
        dirs = [Path(d.cwd).resolve(), *(Path(x).resolve() for x in d.options.add_dirs or [])]
        return list(dict.fromkeys(dirs))

    async def sample(self, server: str, part: str | None, params: Any) -> Any:
        """A server's sampling/createMessage, through the run's model (see the module docstring)."""
        from mcp_types import INVALID_REQUEST, CreateMessageResult, ErrorData, TextContent

        run = self.run
        if run is None or part is None:
            return ErrorData(code=INVALID_REQUEST, message="sampling is not available here (no model)")
        name = f"mcp__{part}__sampling"
        d = run.deps
        decision = await d.executor.permissions.decide(name, {"server": server}, False)
        if getattr(decision, "behavior", "allow") != "allow":
            why = getattr(decision, "message", "") or f"allow it with a rule {name}"
            return ErrorData(code=INVALID_REQUEST, message=f"sampling refused by loopwright's gate: {why}")
        if run.state.budget.exhausted():
            return ErrorData(code=INVALID_REQUEST, message="sampling refused: the run's budget is spent")
        from ..blocks import TextBlock
        from ..models.base import ModelRequest, complete

        messages = [{"role": m.role, "content": _wire_content(m.content)} for m in params.messages]
        request = ModelRequest(system=params.system_prompt, tools=[], messages=messages, max_tokens=params.max_tokens)
        try:
            response = await complete(d.model, request)
        except Exception as e:  # noqa: BLE001 - the server gets an error answer, the run goes on
            return ErrorData(code=INVALID_REQUEST, message=f"the model call failed: {type(e).__name__}: {e}")
        run.state.usage.add(response.usage)
        run.state.budget.charge_outside(run.cost(response))
        text = "".join(b.text for b in response.content if isinstance(b, TextBlock))
        return CreateMessageResult(role="assistant", content=TextContent(text=text), model=response.model,
                                   stop_reason=_stop(response.stop_reason))


def _wire_content(content: Any) -> list[dict[str, Any]]:
    items = content if isinstance(content, list) else [content]
    out: list[dict[str, Any]] = []
    for c in items:
        kind = getattr(c, "type", None)
        if kind == "text":
            out.append({"type": "text", "text": c.text})
        elif kind == "image":
            out.append({"type": "image", "source": {"type": "base64", "media_type": c.mime_type, "data": c.data}})
        else:
            out.append({"type": "text", "text": f"[{kind} content not sent to the model]"})
    return out


def _stop(reason: str | None) -> str | None:
    return {"end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence"}.get(reason or "", reason)
