"""Room: testing. Owns OtlpReceiver; may import nothing of loopwright.

A loopback OTLP receiver for tests and benchmarks: it takes what the real exporters send
(http/protobuf or http/json on /v1/traces, /v1/metrics, /v1/logs, or grpc) and decodes it with
`opentelemetry-proto` (installed with the `otel` extra) into plain records.

    with OtlpReceiver() as rx:                      # http/protobuf
        env = rx.env()                              # OTEL_* for a child process
        ...
        spans = rx.wait_spans(lambda s: any(x.name.startswith("invoke_agent") for x in s))
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Span:
    """One span an OTLP exporter sent, decoded."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root
    kind: int
    attributes: dict[str, Any]
    status: int  # 0 unset, 1 ok, 2 error
    events: list[tuple[str, dict[str, Any]]]
    resource: dict[str, Any]
    start_ns: int
    end_ns: int


@dataclass
class Point:
    """One metric data point: a histogram's count and sum, or a sum's value."""

    metric: str
    unit: str
    attributes: dict[str, Any]
    value: float
    count: int = 0


@dataclass
class LogRecord:
    """One log record (an event) an OTLP exporter sent, decoded."""

    event_name: str
    attributes: dict[str, Any]
    trace_id: str
    span_id: str


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


_IDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> Any:
    """OTLP/JSON's ids are hex, protobuf JSON's bytes are base64: the one difference to mend
    before protobuf's own JSON parser reads the body."""
    import base64

    if isinstance(node, list):
        return [_hex_ids(x) for x in node]
    if not isinstance(node, dict):
        return node
    return {k: base64.b64encode(bytes.fromhex(v)).decode() if k in _IDS and isinstance(v, str) else _hex_ids(v)
            for k, v in node.items()}


def _from_json(path: str, body: bytes) -> bytes:
    """An OTLP/JSON request body as the protobuf bytes of the same request."""
    import json

    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    kinds: dict[str, Any] = {"/v1/traces": ExportTraceServiceRequest, "/v1/metrics": ExportMetricsServiceRequest,
                             "/v1/logs": ExportLogsServiceRequest}
    cls = kinds[path]
    message = json_format.ParseDict(_hex_ids(json.loads(body)), cls())  # unknown fields: an error, as they should be
    return bytes(message.SerializeToString())


@dataclass
class OtlpReceiver:
    """`protocol`: "http/protobuf", "http/json" or "grpc". Records everything received, in order."""

    protocol: str = "http/protobuf"
    spans: list[Span] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    requests: int = 0
    content_types: set[str] = field(default_factory=set)  # of the HTTP requests received
    headers: dict[str, str] = field(default_factory=dict)  # the last HTTP request's (names in lower case)
    port: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.RLock()  # wait() holds it while done() may call named()
        self._server: Any = None

    # decoding

    def _traces(self, data: bytes) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        req = ExportTraceServiceRequest.FromString(data)
        out = []
        for rs in req.resource_spans:
            resource = _attrs(rs.resource.attributes)
            for ss in rs.scope_spans:
                for s in ss.spans:
                    out.append(Span(s.name, s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.kind,
                                    _attrs(s.attributes), s.status.code,
                                    [(e.name, _attrs(e.attributes)) for e in s.events], resource,
                                    s.start_time_unix_nano, s.end_time_unix_nano))
        with self._lock:
            self.spans += out
            self.requests += 1

    def _metrics(self, data: bytes) -> None:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
        )

        req = ExportMetricsServiceRequest.FromString(data)
        out = []
        for rm in req.resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    kind = m.WhichOneof("data")
                    if kind == "histogram":
                        out += [Point(m.name, m.unit, _attrs(p.attributes), p.sum, p.count) for p in m.histogram.data_points]
                    elif kind == "sum":
                        out += [Point(m.name, m.unit, _attrs(p.attributes), p.as_double or p.as_int)
                                for p in m.sum.data_points]
        with self._lock:
            self.points += out
            self.requests += 1

    def _logs(self, data: bytes) -> None:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

        req = ExportLogsServiceRequest.FromString(data)
        out = [LogRecord(r.event_name, _attrs(r.attributes), r.trace_id.hex(), r.span_id.hex())
               for rl in req.resource_logs for sl in rl.scope_logs for r in sl.log_records]
        with self._lock:
            self.logs += out
            self.requests += 1

    # serving

    def start(self) -> OtlpReceiver:
        if self.protocol == "grpc":
            self._start_grpc()
        else:
            self._start_http()
        return self

    def _start_http(self) -> None:
        routes: dict[str, Callable[[bytes], None]] = {
            "/v1/traces": self._traces, "/v1/metrics": self._metrics, "/v1/logs": self._logs}
        rx = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                route = routes.get(self.path)
                if route is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                kind = (self.headers.get("Content-Type") or "").split(";")[0].strip()
                with rx._lock:
                    rx.content_types.add(kind)
                    rx.headers = {k.lower(): v for k, v in self.headers.items()}
                json_body = kind == "application/json"
                route(_from_json(self.path, body) if json_body else body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json" if json_body else "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _start_grpc(self) -> None:
        from concurrent import futures

        import grpc
        from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
        from opentelemetry.proto.collector.metrics.v1 import (
            metrics_service_pb2,
            metrics_service_pb2_grpc,
        )
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

        rx = self

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - the generated API
                rx._traces(request.SerializeToString())
                return trace_service_pb2.ExportTraceServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:  # noqa: N802
                rx._metrics(request.SerializeToString())
                return metrics_service_pb2.ExportMetricsServiceResponse()

        class Logs(logs_service_pb2_grpc.LogsServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:  # noqa: N802
                rx._logs(request.SerializeToString())
                return logs_service_pb2.ExportLogsServiceResponse()

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)  # type: ignore[no-untyped-call]
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)  # type: ignore[no-untyped-call]
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)  # type: ignore[no-untyped-call]
        self.port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self._server = server

    def stop(self) -> None:
        if self._server is None:
            return
        if self.protocol == "grpc":
            self._server.stop(0)
        else:
            self._server.shutdown()
            self._server.server_close()
        self._server = None

    def __enter__(self) -> OtlpReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self, *, metrics: bool = True, logs: bool = False) -> dict[str, str]:
        """The standard variables that send a process's telemetry here."""
        return {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp" if metrics else "none",
                "OTEL_LOGS_EXPORTER": "otlp" if logs else "none", "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
                "OTEL_EXPORTER_OTLP_PROTOCOL": self.protocol}

    def wait(self, done: Callable[[OtlpReceiver], bool], timeout: float = 10.0) -> bool:
        """Wait until `done(self)` (exports arrive from other threads and processes)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if done(self):
                    return True
            time.sleep(0.02)
        with self._lock:
            return done(self)

    def named(self, prefix: str) -> list[Span]:
        with self._lock:
            return [s for s in self.spans if s.name.startswith(prefix)]
