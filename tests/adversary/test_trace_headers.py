"""Adversary: a hostile ``traceparent`` or ``tracestate`` (docs/tracing.md). With tracing
on, a caller's trace context is continued and its parent's id kept with the job, so a
caller could try to store a header of its own choosing (megabytes, CR/LF, unicode), make
a job's spans join a trace it names with ids all zero, or, with its sampled flag, force
recording that the operator's sampler would not do. Only one header of the W3C form, at
most 512 bytes, is read (one pass); the job keeps Homing's own 55 characters; a
``tracestate`` over 512 bytes is dropped; under ``traceidratio`` the ratio decides."""

from __future__ import annotations

import json

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from homing import tracing
from homing.api.app import create_app
from homing.services import Services
from tests.conftest import TenantClient, deliver, make_tenant
from tests.request_id_helpers import call

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER = f"00-{CALLER_TRACE}-00f067aa0ba902b7-01"
EMAIL = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}

HOSTILE = {
    "a_megabyte": CALLER.encode() + b"-" + b"a" * 1_000_000,
    "later_version_over_512_bytes": b"01" + CALLER[2:].encode() + b"-" + b"a" * 500,
    "crlf": CALLER.encode() + b"\r\nSet-Cookie: x=y",
    "unicode_digits": CALLER[:-1].encode() + "\u0661".encode(),
    "uppercase": CALLER.upper().encode(),
    "version_ff": b"ff" + CALLER[2:].encode(),
    "zero_trace_id": b"00-" + b"0" * 32 + b"-00f067aa0ba902b7-01",
    "zero_span_id": f"00-{CALLER_TRACE}-{'0' * 16}-01".encode(),
    "nul": CALLER.encode() + b"\x00",
}


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    return await make_tenant(services, api, "acme", provider=True)


async def _accept(
    services: Services, tenant: TenantClient, headers: list[tuple[bytes, bytes]]
) -> str:
    """Accept one email with these raw headers, exactly as a client put them on the wire;
    the traceparent its job keeps."""
    response = await call(
        create_app(services),
        "/v1/notifications/email",
        [
            (b"authorization", f"Bearer {tenant.key}".encode()),
            (b"content-type", b"application/json"),
            *headers,
        ],
        method="POST",
        body=json.dumps(EMAIL).encode(),
    )
    assert response.status == 202, response.body
    job, _ = await services.jobs.get(tenant.tenant_id, response.json()["id"])
    assert job.traceparent is not None
    assert tracing.valid_traceparent(job.traceparent) == job.traceparent
    return job.traceparent


def _servers(spans: InMemorySpanExporter) -> list[ReadableSpan]:
    assert tracing.flush()
    return [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_hostile_traceparent_starts_a_trace_of_homings_own(
    services: Services, tenant: TenantClient, spans: InMemorySpanExporter, value: bytes
) -> None:
    kept = await _accept(services, tenant, [(b"traceparent", value)])
    assert len(kept) == 55
    assert CALLER_TRACE not in kept and "0" * 32 not in kept
    [server] = _servers(spans)
    assert server.parent is None


async def test_a_traceparent_sent_twice_is_read_as_none(
    services: Services, tenant: TenantClient, spans: InMemorySpanExporter
) -> None:
    other = f"00-{'1' * 32}-{'2' * 16}-01".encode()
    kept = await _accept(
        services, tenant, [(b"traceparent", CALLER.encode()), (b"traceparent", other)]
    )
    assert CALLER_TRACE not in kept and "1" * 32 not in kept


async def test_a_tracestate_over_512_bytes_is_dropped_and_a_short_one_kept(
    services: Services, tenant: TenantClient, spans: InMemorySpanExporter
) -> None:
    for state, kept in ((b"v=" + b"a" * 600, ""), (b"vendor=abc", "vendor=abc")):
        spans.clear()
        traceparent = await _accept(
            services, tenant, [(b"traceparent", CALLER.encode()), (b"tracestate", state)]
        )
        assert CALLER_TRACE in traceparent  # the caller's trace goes on either way
        [server] = _servers(spans)
        assert server.context.trace_state.to_header() == kept


async def test_a_callers_sampled_flag_cannot_force_recording_under_traceidratio(
    services: Services, tenant: TenantClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "traceidratio")
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "0")
    exporter = InMemorySpanExporter()
    tracing.start(exporter)
    try:
        kept = await _accept(services, tenant, [(b"traceparent", CALLER.encode())])
        assert kept.endswith("-00")  # not sampled: the worker records nothing either
        assert await deliver(services) == 1
        assert tracing.flush()
    finally:
        tracing.stop()
    assert exporter.get_finished_spans() == ()
