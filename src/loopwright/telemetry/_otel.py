"""Room: telemetry. The OpenTelemetry side of telemetry/ (imported only when telemetry is on): the
observer that turns a run into GenAI spans, and the batch's spans (the providers: telemetry/_providers.py).

Span parents are always passed explicitly (the run's context), never attached across a
`yield`: the loop's generators hand control to their consumer, which must not find the run's
span current. A span is made current only around plain awaits (a tool call, a hook), so that
a subagent, a Bash command, a hook command or an MCP request started there is its child.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..blocks import ToolResultBlock, ToolUseBlock
from ..gate.verdict import Verdict
from ..messages import Message, ResultMessage, SystemMessage
from ..models.base import ModelResponse
from ..usage import CallUsage
from ._providers import providers
from .base import Observer, T

_PROPAGATOR = TraceContextTextMapPropagator()
_PROVIDERS = {"Anthropic": "anthropic", "OpenAI-compatible": "openai"}


def carrier(upper: bool) -> dict[str, str]:
    """The current span's W3C trace context (traceparent, tracestate), {} without one."""
    if not trace.get_current_span().get_span_context().is_valid:
        return {}
    out: dict[str, str] = {}
    _PROPAGATOR.inject(out)
    return {k.upper(): v for k, v in out.items()} if upper else out


def _parent(env: Mapping[str, str]) -> Any:
    """The run's parent: the caller's current span, else a TRACEPARENT in the environment
    (a CI system's, the Agent SDK's), else none (a new trace)."""
    current = otel_context.get_current()
    if trace.get_current_span(current).get_span_context().is_valid:
        return current
    if env.get("TRACEPARENT"):
        return _PROPAGATOR.extract({"traceparent": env["TRACEPARENT"], "tracestate": env.get("TRACESTATE", "")})
    return None


def _provider_name(model: Any) -> str:
    inner = getattr(model, "models", None)
    if inner:  # FallbackModel: the one in use
        model = inner[getattr(model, "current", 0)]
    return _PROVIDERS.get(str(getattr(model, "provider", "")), "loopwright." + type(model).__name__.lower())


def _server(model: Any) -> dict[str, Any]:
    from urllib.parse import urlsplit

    inner = getattr(model, "models", None)
    if inner:
        model = inner[getattr(model, "current", 0)]
    url = getattr(model, "base_url", None) or getattr(model, "default_base_url", None)
    if not isinstance(url, str):
        return {}
    parts = urlsplit(url)
    if not parts.hostname:
        return {}
    return {"server.address": parts.hostname,
            "server.port": parts.port or (443 if parts.scheme == "https" else 80)}


def _model_name(model: Any) -> str:
    inner = getattr(model, "models", None)
    if inner:
        return str(inner[getattr(model, "current", 0)].name)
    return str(getattr(model, "name", "") or "")


@dataclass
class _Chat:
    """A model call's span while it is open, with what its attributes and events need."""

    span: Any
    t0: float
    attrs: dict[str, Any]
    request: Any
    response: ModelResponse | None = None


class RunObserver(Observer):
    """One run's telemetry: its `invoke_agent` span and the spans under it."""

    def __init__(self, env: Mapping[str, str], session_id: str, agent_name: str, model: Any) -> None:
        self.enabled = True
        self.p = providers(env)
        self.env = env
        self.session_id = session_id
        self.agent_name = agent_name
        self.model = model
        self.root: Any = None
        self.ctx: Any = None
        self.tools: dict[str, tuple[Any, Any]] = {}  # tool_use id -> (span, its context)
        self.chat: _Chat | None = None
        self.k = 0  # model calls charged so far

    def _base(self, operation: str) -> dict[str, Any]:
        return {"gen_ai.operation.name": operation, "gen_ai.provider.name": _provider_name(self.model)}

    # runs

    async def run(self, run: Any, messages: AsyncGenerator[Message, None]) -> AsyncGenerator[Message, None]:
        attrs = {**self._base("invoke_agent"), "gen_ai.agent.name": self.agent_name,
                 "gen_ai.conversation.id": self.session_id, "gen_ai.request.model": _model_name(self.model)}
        self.root = self.p.tracer.start_span(f"invoke_agent {self.agent_name}", context=_parent(self.env),
                                             kind=SpanKind.INTERNAL, attributes=attrs)
        self.ctx = trace.set_span_in_context(self.root)
        result: ResultMessage | None = None
        error: BaseException | None = None
        try:
            async with contextlib.aclosing(messages) as stream:
                async for m in stream:
                    if isinstance(m, ResultMessage):
                        result = m
                    yield m
        except BaseException as e:
            error = e
            raise
        finally:
            self._end_run(result, error)

    def _end_run(self, result: ResultMessage | None, error: BaseException | None) -> None:
        span = self.root
        if result is not None:
            span.set_attributes({
                "loopwright.result.subtype": result.subtype, "loopwright.num_turns": result.num_turns,
                "loopwright.model_calls": result.model_calls, "loopwright.cost_usd": result.total_cost_usd,
                "gen_ai.usage.input_tokens": result.usage.total_input_tokens,
                "gen_ai.usage.output_tokens": result.usage.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": result.usage.cache_read_input_tokens,
                "gen_ai.usage.cache_creation.input_tokens": result.usage.cache_creation_input_tokens,
            })
            if result.is_error:  # the subtype, not the message: it may quote the user's input
                span.set_attribute("error.type", result.subtype)
                span.set_status(Status(StatusCode.ERROR, result.subtype))
        elif error is not None:
            span.set_attribute("error.type", type(error).__name__)
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
        for tool_span, _ in self.tools.values():  # cut short (an interrupt): end them too
            tool_span.end()
        self.tools.clear()
        span.end()

    # model calls

    async def model_call(self, run: Any, request: Any, events: AsyncIterator[Any],
                         charged: bool = True, purpose: str | None = None) -> AsyncIterator[Any]:
        name = _model_name(self.model)
        attrs = {**self._base("chat"), "gen_ai.request.model": name, **_server(self.model)}
        span_attrs = {**attrs, "gen_ai.conversation.id": self.session_id}
        if getattr(request, "max_tokens", None):
            span_attrs["gen_ai.request.max_tokens"] = request.max_tokens
        if purpose:
            span_attrs["loopwright.call.purpose"] = purpose
        span = self.p.tracer.start_span(f"chat {name}", context=self.ctx, kind=SpanKind.CLIENT,
                                        attributes=span_attrs)
        chat = _Chat(span, time.perf_counter(), attrs, request)
        retries = 0
        try:
            async for ev in events:
                if isinstance(ev, ModelResponse):
                    chat.response = ev
                elif isinstance(ev, SystemMessage):
                    if ev.subtype == "api_retry":
                        retries += 1
                        span.add_event("api_retry", {"attempt": ev.data.get("attempt", retries),
                                                     "error_status": str(ev.data.get("error_status"))})
                    elif ev.subtype == "model_fallback":
                        span.set_attributes({"loopwright.fallback.from_model": str(ev.data.get("from_model")),
                                             "loopwright.fallback.to_model": str(ev.data.get("to_model"))})
                yield ev
        except BaseException as e:
            status = getattr(e, "status", None)
            self._end_chat(chat, None, error=str(status) if status else type(e).__name__, retries=retries)
            raise
        if chat.response is None:
            self._end_chat(chat, None, error="no_response", retries=retries)
        elif charged:
            span.set_attribute("loopwright.retries", retries)
            self.chat = chat  # ended by charged(), which knows the cost
        else:
            u = chat.response.usage
            self._end_chat(chat, CallUsage.of(u, 0.0, chat.response.model), retries=retries)

    def charged(self, call: CallUsage) -> None:
        chat, self.chat = self.chat, None
        if chat is not None:
            self.k += 1
            chat.span.set_attribute("loopwright.call.index", self.k)
            self._end_chat(chat, call)

    def _end_chat(self, chat: _Chat, call: CallUsage | None, *, error: str | None = None,
                  retries: int | None = None) -> None:
        span, a = chat.span, chat.response
        attrs = dict(chat.attrs)
        if retries is not None:
            span.set_attribute("loopwright.retries", retries)
        if a is not None:
            attrs["gen_ai.response.model"] = a.model or attrs["gen_ai.request.model"]
            span.set_attributes({"gen_ai.response.model": attrs["gen_ai.response.model"],
                                 "gen_ai.response.finish_reasons": [a.stop_reason or ""]})
        if call is not None:
            span.set_attributes(call_attributes(call))
            self.p.tokens.record(call.input_tokens, {**attrs, "gen_ai.token.type": "input"})
            self.p.tokens.record(call.output_tokens, {**attrs, "gen_ai.token.type": "output"})
            if call.cost_usd:
                self.p.cost.add(call.cost_usd, attrs)
        if error is not None:
            attrs["error.type"] = error
            span.set_attribute("error.type", error)
            span.set_status(Status(StatusCode.ERROR, error))
        self.p.duration.record(time.perf_counter() - chat.t0, attrs)
        if self.p.logger is not None:
            self._content_event(chat, attrs)
        span.end()

    def _content_event(self, chat: _Chat, attrs: dict[str, Any]) -> None:
        """gen_ai.client.inference.operation.details: the call's messages (opt-in only)."""
        req, a = chat.request, chat.response
        body: dict[str, Any] = {**attrs, "gen_ai.conversation.id": self.session_id,
                                "gen_ai.input.messages": json.dumps(getattr(req, "messages", []), default=str)}
        if getattr(req, "system", None):
            body["gen_ai.system_instructions"] = json.dumps([{"type": "text", "content": req.system}])
        if a is not None:
            body["gen_ai.output.messages"] = json.dumps(
                [{"role": "assistant", "content": [b.to_wire() for b in a.content],
                  "finish_reason": a.stop_reason}], default=str)
        self.p.logger.emit(event_name="gen_ai.client.inference.operation.details", attributes=body,
                           context=trace.set_span_in_context(chat.span))

    # tool calls

    def tool_start(self, use: ToolUseBlock, ctx: Any) -> None:
        attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": use.name[:64],
                                 "gen_ai.tool.call.id": use.id, "gen_ai.tool.type": "function"}
        if use.name.startswith("mcp__"):
            parts = use.name.split("__", 2)  # mcp__<server>__<tool>: a server name holds no "__"
            attrs.update({"gen_ai.tool.type": "extension", "mcp.method.name": "tools/call",
                          "loopwright.mcp.server": parts[1] if len(parts) == 3 else ""})
        if use.name == "Bash":
            sb = getattr(ctx, "sandbox", None)
            command = use.input.get("command") if isinstance(use.input, dict) else None
            attrs["loopwright.tool.sandboxed"] = bool(
                sb is not None and isinstance(command, str)
                and not sb.runs_outside(command, use.input.get("dangerouslyDisableSandbox") is True))
        if self.p.capture:
            attrs["gen_ai.tool.call.arguments"] = json.dumps(use.input, default=str)
        # (the name is the model's: an unknown tool's may be anything, so it is cut short)
        span = self.p.tracer.start_span(f"execute_tool {use.name[:64]}", context=self.ctx, kind=SpanKind.INTERNAL,
                                        attributes=attrs)
        self.tools[use.id] = (span, trace.set_span_in_context(span))

    def tool_gated(self, use_id: str, allowed: bool, via: str, verdict: Verdict | None = None) -> None:
        entry = self.tools.get(use_id)
        if entry is None:
            return
        attrs = {"loopwright.permission.decision": "allow" if allowed else "deny", "loopwright.permission.via": via}
        if verdict is not None:
            attrs["loopwright.permission.rules"] = verdict.kind
            attrs["loopwright.permission.code"] = verdict.code
            # which rule decided (its text) and where it came from (gate.verdict.RuleSource)
            attrs["loopwright.permission.rule_source"] = verdict.source
            if verdict.rule is not None:  # (a settings file's rule may be any length: cut short)
                rule = verdict.rule
                attrs["loopwright.permission.rule"] = rule if len(rule) <= 256 else rule[:255] + "…"
        entry[0].set_attributes(attrs)

    def tool_end(self, use_id: str, result: ToolResultBlock) -> None:
        entry = self.tools.pop(use_id, None)
        if entry is None:
            return
        span = entry[0]
        span.set_attribute("loopwright.tool.is_error", bool(result.is_error))
        if result.is_error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, "tool_error"))
        if self.p.capture:
            content = result.content
            span.set_attribute("gen_ai.tool.call.result",
                               content if isinstance(content, str) else json.dumps(
                                   [b.to_wire() for b in content], default=str))
        span.end()

    async def within(self, use_id: str, work: Awaitable[T]) -> T:
        with self._active(use_id):
            return await work

    @contextlib.contextmanager
    def _active(self, use_id: str) -> Iterator[None]:
        entry = self.tools.get(use_id)
        if entry is None:
            yield
            return
        token = otel_context.attach(entry[1])
        try:
            yield
        finally:
            otel_context.detach(token)

    @contextlib.contextmanager
    def span(self, name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[None]:
        current = trace.get_current_span().get_span_context()
        ours = any(s.get_span_context().span_id == current.span_id for s, _ in self.tools.values())
        parent = otel_context.get_current() if ours or self.ctx is None else self.ctx
        span = self.p.tracer.start_span(name, context=parent, kind=SpanKind.INTERNAL, attributes=attributes)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield
        except BaseException as e:
            span.set_status(Status(StatusCode.ERROR, type(e).__name__))
            raise
        finally:
            otel_context.detach(token)
            span.end()


def call_attributes(call: CallUsage) -> dict[str, Any]:
    """One model call's usage and cost as span attributes (n_k counts cached input: semconv)."""
    return {"gen_ai.usage.input_tokens": call.input_tokens, "gen_ai.usage.output_tokens": call.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": call.cache_read_input_tokens,
            "gen_ai.usage.cache_creation.input_tokens": call.cache_creation_input_tokens,
            "loopwright.n_k": call.input_tokens, "loopwright.cost_usd": call.cost_usd}


@contextlib.contextmanager
def current_span(name: str, attributes: Mapping[str, Any] | None) -> Iterator[None]:
    p = providers(os.environ)
    span = p.tracer.start_span(name, context=_parent(os.environ), kind=SpanKind.INTERNAL, attributes=attributes)
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield
    except BaseException as e:
        span.set_attribute("error.type", type(e).__name__)
        span.set_status(Status(StatusCode.ERROR, type(e).__name__))
        raise
    finally:
        otel_context.detach(token)
        span.end()


def annotate(attributes: Mapping[str, Any]) -> None:
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes(dict(attributes))


def start_batch(tasks: int, env: Mapping[str, str]) -> tuple[dict[str, str], Any]:
    """`env`: the process environment over the settings' `env` (either may turn telemetry on)."""
    p = providers(env)
    span = p.tracer.start_span("invoke_workflow batch", context=_parent(env), kind=SpanKind.INTERNAL,
                               attributes={"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "batch",
                                           "loopwright.batch.tasks": tasks, "loopwright.pid": os.getpid()})
    out: dict[str, str] = {}
    _PROPAGATOR.inject(out, context=trace.set_span_in_context(span))
    out.update({k: v for k, v in env.items() if k.startswith("OTEL_")})  # for Ray workers (telemetry.adopt)
    return out, span


def end_batch(span: Any) -> None:
    span.end()


@contextlib.contextmanager
def task_span(task_id: str, carrier: Mapping[str, str]) -> Iterator[None]:
    p = providers({**{k: v for k, v in carrier.items() if k.startswith("OTEL_")}, **os.environ})
    parent = _PROPAGATOR.extract({k: v for k, v in carrier.items() if k in ("traceparent", "tracestate")})
    span = p.tracer.start_span(f"task {task_id}", context=parent, kind=SpanKind.INTERNAL,
                               attributes={"loopwright.batch.task.id": task_id, "loopwright.pid": os.getpid()})
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield
    finally:
        otel_context.detach(token)
        span.end()
