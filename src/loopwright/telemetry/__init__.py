"""Room: telemetry. Owns the observer interface the loop and a few other places call; may import
data types only (blocks, messages, usage), never the loop, options or above.

OpenTelemetry traces, metrics and (opt-in) content events, following the GenAI semantic
conventions: `invoke_agent {name}` per run, `chat {model}` per model call, `execute_tool {tool}`
per tool call, with hooks, compaction and batch tasks as spans of their own.

This module imports no opentelemetry code: a run gets `NULL` (every method does nothing and
costs a call) unless telemetry is on, and only then is `_otel` (the SDK) imported. It is on
when the standard OTEL_* variables ask for an exporter (`OTEL_TRACES_EXPORTER`,
`OTEL_METRICS_EXPORTER`, `OTEL_LOGS_EXPORTER`, an `OTEL_EXPORTER_OTLP_*ENDPOINT`), from the
process environment or the settings' `env`, or, in the Python API, when the application has
set an SDK TracerProvider of its own (the run's spans then join the application's traces).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .base import NULL, Observer, app_tracing, requested

if TYPE_CHECKING:
    from ..usage import CallUsage

__all__ = ["NULL", "Observer", "adopt", "annotate", "annotate_call", "span", "batch_context", "end_batch", "flush",
           "observer_for", "requested", "task_context", "trace_env", "trace_meta"]


def observer_for(env: Mapping[str, str], session_id: str, agent_name: str, *,
                 model: Any = None) -> Observer:
    """The observer for one run: NULL unless telemetry is on. `env`: the settings' `env`
    (the process environment wins over it, as for every other variable)."""
    merged = {**env, **os.environ}
    if not requested(merged) and not app_tracing():
        return NULL
    try:
        from . import _otel
    except ImportError:
        from ..extras import missing_extra

        raise missing_extra("telemetry (the OTEL_* variables ask for it)", "otel") from None
    return _otel.RunObserver(merged, session_id, agent_name, model)


def _on() -> bool:
    return requested(os.environ) or app_tracing()


@contextlib.contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[None]:
    """A span under the current one, current while the block runs (a workflow, its nodes);
    nothing when telemetry is off. Only around awaits, never across a `yield`."""
    if not _on():
        yield
        return
    try:
        from . import _otel
    except ImportError:
        from ..extras import missing_extra

        raise missing_extra("telemetry (the OTEL_* variables ask for it)", "otel") from None
    with _otel.current_span(name, attributes):
        yield


def annotate(attributes: Mapping[str, Any]) -> None:
    """Attributes on the current span (a workflow node's usage, a workflow's result)."""
    otel = _loaded()
    if otel is not None:
        otel.annotate(attributes)


def annotate_call(call: CallUsage, model: str) -> None:
    """A model call's usage and cost on the current span (a workflow's Node)."""
    otel = _loaded()
    if otel is not None:
        otel.annotate({"gen_ai.operation.name": "chat", "gen_ai.response.model": model,
                       **otel.call_attributes(call)})


def _loaded() -> Any:
    return sys.modules.get(f"{__name__}._otel")


def trace_env() -> dict[str, str]:
    """TRACEPARENT / TRACESTATE of the current span, for a child process (Bash, hooks); {} when
    telemetry is off."""
    otel = _loaded()
    return otel.carrier(upper=True) if otel is not None else {}


def trace_meta() -> dict[str, str]:
    """traceparent / tracestate of the current span, for an MCP request's `_meta`."""
    otel = _loaded()
    return otel.carrier(upper=False) if otel is not None else {}


def flush(timeout_s: float | None = None) -> None:
    """Export what is buffered, waiting at most `timeout_s` (a Ray worker after its task; -p
    flushes at exit)."""
    built = sys.modules.get(f"{__name__}._providers")  # (loaded with _otel: the providers are its)
    if built is not None:
        built.flush(timeout_s)


# --- batches: one span per batch, one per task under it, across processes ---------------------

def batch_context(tasks: int, env: Mapping[str, str] | None = None) -> tuple[dict[str, str], Any]:
    """The batch's span, started: (a carrier for its tasks, the span to end). ({}, None) when off.
    `env`: the settings' `env` the batch's runs get (the process environment wins over it)."""
    merged = {**(env or {}), **os.environ}
    if not requested(merged) and not app_tracing():
        return {}, None
    try:
        from . import _otel
    except ImportError:
        return {}, None
    return _otel.start_batch(tasks, merged)


def end_batch(span: Any) -> None:
    if span is not None:
        _loaded().end_batch(span)


@contextlib.contextmanager
def task_context(task_id: str, carrier: Mapping[str, str] | None) -> Iterator[None]:
    """A batch task's span, current while it runs (its runs become its children). The carrier
    also brings the driver's OTEL_* variables (a worker on a cluster has no settings of its own)."""
    if not carrier:
        yield
        return
    try:
        from . import _otel
    except ImportError:
        yield
        return
    with _otel.task_span(task_id, carrier):
        yield


def adopt(carrier: Mapping[str, str] | None) -> None:
    """In a worker process (Ray): take the driver's OTEL_* variables from a task's carrier, so
    that its runs export where the driver's do; the worker's own variables win."""
    for k, v in (carrier or {}).items():
        if k.startswith("OTEL_"):
            os.environ.setdefault(k, v)
