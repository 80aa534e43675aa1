"""Room: telemetry. The OpenTelemetry providers of telemetry/ (imported only when telemetry is on):
the tracer, meter and logger providers built from the OTEL_* variables (exporters, their
timeouts, one line said per failing exporter), flushed at exit."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace

from .base import app_tracing, requested

log = logging.getLogger("loopwright.telemetry")

EXPORT_TIMEOUT_S = 2.0  # per export when no OTEL_EXPORTER_OTLP_*TIMEOUT is set: a dead collector costs little


EXIT_FLUSH_S = 2.0  # the most a process waits at exit for what is still buffered


CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


# The semantic conventions' advice for gen_ai.client.* histograms
_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]


_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("loopwright")
    except PackageNotFoundError:
        return "0"


@dataclass
class _Providers:
    """The OpenTelemetry providers a run reports through, and the instruments made from them."""

    tracer: Any
    meter: Any
    logger: Any  # None: no content events
    owned: list[Any]  # providers we made (flushed at exit); empty when the application's are used
    capture: bool
    tokens: Any = None
    duration: Any = None
    cost: Any = None


_P: _Providers | None = None


_LOCK = threading.Lock()


def providers(env: Mapping[str, str]) -> _Providers:
    """The process's providers, built once: ours from the OTEL_* variables when they ask for
    telemetry, else the application's global ones."""
    global _P
    with _LOCK:
        if _P is None:
            _P = _build(env)
        return _P


def _signal(env: Mapping[str, str], name: str) -> str:
    """otlp / console / none for a signal; an OTLP endpoint alone means otlp."""
    value = (env.get(f"OTEL_{name}_EXPORTER") or "").strip().lower()
    if value:
        return value.split(",")[0].strip()
    if env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get(f"OTEL_EXPORTER_OTLP_{name}_ENDPOINT"):
        return "otlp"
    return "none"


def _exporter(env: Mapping[str, str], name: str, kind: str) -> Any:
    """The exporter for signal `name` (TRACES, METRICS, LOGS), or None (none, or unsupported:
    a one-line warning)."""
    if kind == "none":
        return None
    if kind == "console":  # on stderr: stdout is -p's result
        import sys

        if name == "TRACES":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            return ConsoleSpanExporter(out=sys.stderr)
        if name == "METRICS":
            from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

            return ConsoleMetricExporter(out=sys.stderr)
        from opentelemetry.sdk._logs.export import ConsoleLogRecordExporter

        return ConsoleLogRecordExporter(out=sys.stderr)
    if kind != "otlp":
        log.warning("telemetry: OTEL_%s_EXPORTER=%s is not supported (otlp, console, none): %s not exported",
                    name, kind, name.lower())
        return None
    protocol = (env.get(f"OTEL_EXPORTER_OTLP_{name}_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").strip().lower()
    timeout = (None if env.get("OTEL_EXPORTER_OTLP_TIMEOUT") or env.get(f"OTEL_EXPORTER_OTLP_{name}_TIMEOUT")
               else EXPORT_TIMEOUT_S)
    kwargs: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    if protocol == "grpc":
        if name == "TRACES":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as Grpc,
            )

            return Grpc(**kwargs)
        if name == "METRICS":
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                OTLPMetricExporter as GrpcM,
            )

            return GrpcM(**kwargs)
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcL

        return GrpcL(**kwargs)
    if protocol == "http/json":
        return _json_exporter(name, kwargs)
    if protocol != "http/protobuf":
        log.warning("telemetry: OTEL_EXPORTER_OTLP_PROTOCOL=%s is not an OTLP protocol (http/protobuf, http/json, "
                    "grpc): %s not exported", protocol, name.lower())
        return None
    if name == "TRACES":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(**kwargs)
    if name == "METRICS":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter(**kwargs)
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

    return OTLPLogExporter(**kwargs)


def _json_exporter(name: str, kwargs: dict[str, Any]) -> Any:
    """http/json: the official OTLP JSON exporter, an extra of its own (otel-json)."""
    try:
        if name == "TRACES":
            from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter

            return OTLPSpanExporter(**kwargs)
        if name == "METRICS":
            from opentelemetry.exporter.otlp.json.http.metric_exporter import OTLPMetricExporter

            return OTLPMetricExporter(**kwargs)
        from opentelemetry.exporter.otlp.json.http._log_exporter import OTLPLogExporter

        return OTLPLogExporter(**kwargs)
    except ImportError:
        log.warning('telemetry: OTEL_EXPORTER_OTLP_PROTOCOL=http/json needs the OTLP JSON exporter '
                    '(pip install "loopwright[otel-json]"): %s not exported', name.lower())
        return None


def _build(env: Mapping[str, str]) -> _Providers:
    capture = (env.get(CAPTURE) or "").strip().lower() == "true"
    if not requested(env) or app_tracing():
        # The application's own providers: its pipeline (processors, sampler, exporters) takes
        # loopwright's spans too, even when OTEL_* variables are set (they configured it).
        from opentelemetry import _logs, metrics

        p = _Providers(trace.get_tracer("loopwright", _version()), metrics.get_meter("loopwright", _version()),
                       _logs.get_logger("loopwright", _version()) if capture else None, [], capture)
        return _instruments(p)
    for k, v in env.items():  # the settings' `env` reaches the exporters, which read os.environ
        if k.startswith("OTEL_"):
            os.environ.setdefault(k, v)
    from opentelemetry.sdk.resources import Resource

    named = "OTEL_SERVICE_NAME" in env or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    resource = Resource.create({"service.version": _version(), **({} if named else {"service.name": "loopwright"})})
    owned: list[Any] = []
    _quiet_exporter_errors()

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    tp = TracerProvider(resource=resource, shutdown_on_exit=False)
    exporter = _exporter(env, "TRACES", _signal(env, "TRACES"))
    if exporter is not None:
        tp.add_span_processor(BatchSpanProcessor(exporter))
    owned.append(tp)

    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    m_exporter = _exporter(env, "METRICS", _signal(env, "METRICS"))
    readers = [PeriodicExportingMetricReader(m_exporter)] if m_exporter is not None else []
    mp = MeterProvider(resource=resource, metric_readers=readers, shutdown_on_exit=False)
    owned.append(mp)

    logger = None
    l_exporter = _exporter(env, "LOGS", _signal(env, "LOGS")) if capture else None
    if l_exporter is not None:
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

        lp = LoggerProvider(resource=resource, shutdown_on_exit=False)
        lp.add_log_record_processor(BatchLogRecordProcessor(l_exporter))
        owned.append(lp)
        logger = lp.get_logger("loopwright", _version())
    global _FLUSHER
    _FLUSHER = _Flusher(owned)
    atexit.register(flush, EXIT_FLUSH_S)
    p = _Providers(tp.get_tracer("loopwright", _version()), mp.get_meter("loopwright", _version()), logger,
                   owned, capture)
    return _instruments(p)


def _instruments(p: _Providers) -> _Providers:
    m = p.meter
    p.tokens = m.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                  description="Number of input and output tokens used.",
                                  explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS)
    p.duration = m.create_histogram("gen_ai.client.operation.duration", unit="s",
                                    description="GenAI operation duration.",
                                    explicit_bucket_boundaries_advisory=_DURATION_BUCKETS)
    p.cost = m.create_counter("loopwright.cost.usage", unit="USD", description="Cost of the model calls.")
    return p


class _OneLine(logging.Handler):
    """The exporters' failures as one warning line per process (a dead collector must not fill
    the terminal or fail the run); each export failure is counted (flush stops waiting on it)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage().splitlines()[0][:200] if record.getMessage() else record.name
        if "export" in record.name or "export" in message.lower():
            _failure()
            _warn_once(f"export failed, the run goes on without it: {message}")
        else:
            _warn_once(message)


_SAID = threading.Event()  # the one line was said


def _warn_once(message: str) -> None:
    if not _SAID.is_set():
        _SAID.set()
        log.warning("telemetry: %s", message)


class _Flusher:
    """Flushes our providers in a daemon thread of its own, started with them: a flush (at exit,
    after a Ray task) waits for it only until the first export that fails, since a collector that
    refuses would only be retried with the SDK's backoff. Started early because Python 3.12+
    starts no thread in an atexit callback."""

    def __init__(self, owned: list[Any]) -> None:
        self.owned = owned
        self.cv = threading.Condition()
        self.failures = 0  # export failures (and retries) the exporters logged in this process
        self.asked = self.done = 0
        self.deadline = 0.0
        threading.Thread(target=self._loop, name="loopwright-telemetry-flush", daemon=True).start()

    def _loop(self) -> None:
        while True:
            with self.cv:
                self.cv.wait_for(lambda: self.asked > self.done)
                n, deadline = self.asked, self.deadline
            for provider in self.owned:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                with contextlib.suppress(Exception):
                    provider.force_flush(int(left * 1000))
            with self.cv:
                self.done = n
                self.cv.notify_all()

    def failed(self) -> None:
        with self.cv:
            self.failures += 1
            self.cv.notify_all()

    def flush(self, budget: float) -> None:
        with self.cv:
            self.asked += 1
            n, failures = self.asked, self.failures
            self.deadline = time.monotonic() + budget
            self.cv.notify_all()
            if not self.cv.wait_for(lambda: self.done >= n or self.failures > failures, budget):
                _warn_once(f"the collector did not take the spans within {budget:g} s; the run goes on without them")


_FLUSHER: _Flusher | None = None


def _failure() -> None:
    if _FLUSHER is not None:
        _FLUSHER.failed()


def _quiet_exporter_errors() -> None:
    logger = logging.getLogger("opentelemetry")
    if not any(isinstance(h, _OneLine) for h in logger.handlers):
        logger.addHandler(_OneLine())
        logger.propagate = False


def flush(timeout_s: float | None = None) -> None:
    """Export what our providers buffer, within `timeout_s` altogether (at exit: 2 s), and no
    longer than until an export fails; what is still being sent goes on in the daemon thread."""
    if _FLUSHER is not None:
        _FLUSHER.flush(timeout_s if timeout_s is not None else EXIT_FLUSH_S)
