"""A loopback OTLP/HTTP trace receiver: what a collector is to Homing's exporter.

It answers ``POST /v1/traces`` with 200 and an empty ``ExportTraceServiceResponse``, as
the OTLP/HTTP specification asks, from threads of its own (the exporter posts from a
thread, and a test flushing it blocks its event loop). ``bench all --tracing`` points
Homing at it to measure tracing's cost; tests/e2e/test_tracing.py keeps the bodies and
reads the spans in them. Only 127.0.0.1.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

TRACES_PATH = "/v1/traces"
_EMPTY = ExportTraceServiceResponse().SerializeToString()


class OtlpSink:
    """``with OtlpSink() as sink``: serving on ``sink.endpoint`` until the block ends;
    ``keep``: whether to keep each body (``sink.spans()`` reads them)."""

    def __init__(self, *, keep: bool = True) -> None:
        self.keep = keep
        self.bodies: list[bytes] = []
        self.requests = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """The full traces URL (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}{TRACES_PATH}"

    def __enter__(self) -> OtlpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def spans(self) -> list[Any]:
        """Every span received so far (``opentelemetry.proto.trace.v1.Span``)."""
        with self._lock:
            bodies = list(self.bodies)
        found = []
        for body in bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    found.extend(scope_spans.spans)
        return found

    def resources(self) -> list[dict[str, str]]:
        """The resource attributes of every export received (string values)."""
        with self._lock:
            bodies = list(self.bodies)
        found = []
        for body in bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource_spans in request.resource_spans:
                attributes = resource_spans.resource.attributes
                found.append({a.key: a.value.string_value for a in attributes})
        return found

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path != TRACES_PATH:
                    self.send_error(404)
                    return
                with sink._lock:
                    sink.requests += 1
                    if sink.keep:
                        sink.bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(_EMPTY)))
                self.end_headers()
                self.wfile.write(_EMPTY)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler
