"""Room: telemetry. The observer interface of telemetry/ and the test of whether the OTEL_* variables ask for
telemetry: no opentelemetry import here (the loop, the executor and the hooks hold one)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..blocks import ToolResultBlock, ToolUseBlock
    from ..gate.verdict import Verdict
    from ..messages import Message
    from ..usage import CallUsage

T = TypeVar("T")

_SIGNALS = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER")
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
              "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")


class Observer:
    """What a run tells its telemetry. This base is the null observer (telemetry off): each
    method does nothing, and the wrappers (run, model_call, within) hand back what they were
    given: one path, the loop and the executor call it the same way whether telemetry is on or
    off (off, a turn pays ~7 calls that return at once, ~4,000 instructions). `enabled` says
    which it is, for a caller that wants to know."""

    enabled: bool = False  # (a subclass that skips __init__ still has it)

    def __init__(self) -> None:
        self.enabled = False  # (an instance's attribute too: Python 3.11 specializes its reads, not a class's)

    def run(self, run: Any, messages: AsyncGenerator[Message, None]) -> AsyncGenerator[Message, None]:
        """The run's messages, inside its `invoke_agent` span."""
        return messages

    def model_call(self, run: Any, request: Any, events: AsyncIterator[Any],
                   charged: bool = True, purpose: str | None = None) -> AsyncIterator[Any]:
        """One model call's events, inside its `chat` span (ended by `charged` when `charged`)."""
        return events

    def charged(self, call: CallUsage) -> None:
        """The call just streamed was charged: its usage and cost."""

    def tool_start(self, use: ToolUseBlock, ctx: Any) -> None:
        """A tool call enters the gate (its `execute_tool` span starts)."""

    def tool_gated(self, use_id: str, allowed: bool, via: str, verdict: Verdict | None = None) -> None:
        """The gate's decision on the call: `via` says who decided (rules, hook, can_use_tool...)."""

    def tool_end(self, use_id: str, result: ToolResultBlock) -> None:
        """The call's result (is_error sets the span's error status)."""

    def within(self, use_id: str, work: Awaitable[T]) -> Awaitable[T]:
        """`work` awaited with the tool call's span as the current context (a subagent, Bash, a
        hook or an MCP request started in it is the span's child). Off: `work` itself, so a
        tool call pays one call, not a context manager's enter and exit (~2,500 instructions)."""
        return work

    def span(self, name: str, attributes: Mapping[str, Any] | None = None
             ) -> contextlib.AbstractContextManager[None]:
        """A span of loopwright's own (a hook, a compaction) under the current tool call or the run."""
        return _NO_SPAN


NULL = Observer()
_NO_SPAN: contextlib.AbstractContextManager[None] = contextlib.nullcontext()  # (reusable: one for every call)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def requested(env: Mapping[str, str]) -> bool:
    """Do these variables ask for telemetry (an exporter other than none, or an OTLP endpoint)?"""
    if _truthy(env.get("OTEL_SDK_DISABLED")):
        return False
    if any((env.get(k) or "none").strip().lower() not in ("", "none") for k in _SIGNALS):
        return True
    return any(env.get(k) for k in _ENDPOINTS)


def app_tracing() -> bool:
    """Has the application set an SDK TracerProvider of its own (itself, or through
    opentelemetry-instrument)? Only looked at when it has imported opentelemetry already: it
    costs nothing otherwise."""
    if "opentelemetry.trace" not in sys.modules:
        return False
    from opentelemetry import trace

    return type(trace.get_tracer_provider()).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider")
