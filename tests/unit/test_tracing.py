"""homing.tracing: which OTEL_* settings turn tracing on, which traceparent headers are
read, what an off process pays, and the spans' shape and contents when it is on (an
in-memory exporter; tests/e2e/test_tracing.py exports over OTLP/HTTP)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from homing import tracing
from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.errors import ConfigError
from homing.models import Priority, Queue
from homing.store.accepting import traced

CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _finished(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    assert tracing.flush()
    return list(exporter.get_finished_spans())


def _new_job() -> NewJob:
    return NewJob(
        tenant_id="t1",
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload={"to": "ada@example.com"},
    )


@pytest.mark.parametrize(
    ("environ", "wanted"),
    [
        ({}, set()),
        ({"OTEL_SERVICE_NAME": "homing-eu"}, set()),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, {"otlp"}),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, {"otlp"}),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, {"otlp"}),
        ({"OTEL_TRACES_EXPORTER": "otlp, console"}, {"otlp", "console"}),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, set()),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, set()),
        ({"OTEL_SDK_DISABLED": "TRUE ", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, set()),
        ({"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "console"}, {"console"}),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
            {"otlp"},
        ),
        # The traces' own protocol is the one that counts.
        (
            {
                "OTEL_TRACES_EXPORTER": "otlp",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            },
            {"otlp"},
        ),
    ],
)
def test_tracing_is_off_unless_the_otel_variables_ask(
    environ: dict[str, str], wanted: set[str]
) -> None:
    assert tracing.exporters_wanted(environ) == wanted


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER: zipkin"),
        ({"OTEL_TRACES_EXPORTER": "otlp,jaeger"}, "OTEL_TRACES_EXPORTER: jaeger"),
        (
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            "OTEL_EXPORTER_OTLP_PROTOCOL: only http/protobuf",
        ),
    ],
)
def test_an_exporter_or_protocol_homing_does_not_ship_is_a_config_error(
    environ: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        tracing.exporters_wanted(environ)
    assert raised.value.message.startswith(named)


def test_an_unknown_exporter_name_is_cut_in_the_error() -> None:
    with pytest.raises(ConfigError) as raised:
        tracing.exporters_wanted({"OTEL_TRACES_EXPORTER": "x" * 10_000})
    assert len(raised.value.message) < 200


@pytest.mark.parametrize(
    ("header", "read"),
    [
        (CALLER, CALLER),
        (CALLER.encode(), CALLER),
        (f" \t{CALLER}\t ", CALLER),
        (CALLER[:-2] + "00", CALLER[:-2] + "00"),
        # A later version: its first four fields, as version 00.
        ("01" + CALLER[2:] + "-later-fields", "00" + CALLER[2:]),
        ("cc" + CALLER[2:], "00" + CALLER[2:]),
        # Version 00 with anything after it, or a later version not followed by "-".
        (CALLER + "-extra", None),
        ("01" + CALLER[2:] + "x", None),
        ("ff" + CALLER[2:], None),
        (CALLER.upper(), None),
        (CALLER.replace("-", "_"), None),
        (CALLER[:-1], None),
        ("00-" + "0" * 32 + "-00f067aa0ba902b7-01", None),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-" + "0" * 16 + "-01", None),
        ("00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", None),
        (CALLER.encode() + b"\xff", None),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0\u0661", None),
        ("", None),
        (None, None),
    ],
)
def test_a_traceparent_is_read_only_in_the_w3c_form(
    header: str | bytes | None, read: str | None
) -> None:
    assert tracing.valid_traceparent(header) == read


def test_a_traceparent_over_512_bytes_is_not_read_at_all() -> None:
    later = "01" + CALLER[2:] + "-" + "a" * 456  # 512 characters: read
    assert len(later) == 512
    assert tracing.valid_traceparent(later) == "00" + CALLER[2:]
    assert tracing.valid_traceparent(later + "a") is None
    assert tracing.valid_traceparent((later + "a").encode()) is None


def test_off_every_span_is_one_shared_no_op_and_a_job_keeps_no_traceparent() -> None:
    assert not tracing.on()
    assert tracing.current_traceparent() is None
    first = tracing.delivery(CALLER, job_id="j", tenant_id="t", channel="email", pass_number=1)
    assert first is tracing.provider_call("resend", "acc")
    assert first is tracing.request("POST", CALLER, None)
    with first as span:
        span.set(tracing.OUTCOME, "completed")
        span.failed()
        span.rename("x")
    tracing.event_applied(CALLER, started_ns=0, job_id="j", source="resend", event_type="x")
    assert traced(_new_job(), tracing.current_traceparent).traceparent is None
    assert tracing.flush()


def test_a_job_made_inside_a_request_keeps_that_requests_span(
    spans: InMemorySpanExporter,
) -> None:
    with tracing.request("POST", CALLER, None):
        kept = tracing.current_traceparent()
        job = traced(_new_job(), tracing.current_traceparent)
    assert kept is not None
    assert job.traceparent == kept
    assert kept.startswith("00-4bf92f3577b34da6a3ce929d0e0e4736-")
    assert kept != CALLER  # the request's own span, a child of the caller's
    [server] = _finished(spans)
    assert server.kind is SpanKind.SERVER
    assert server.parent is not None and server.parent.span_id == int(CALLER[36:52], 16)
    assert f"{server.context.span_id:016x}" == kept[36:52]


def test_a_delivery_its_provider_calls_and_an_event_join_the_accepts_trace(
    spans: InMemorySpanExporter,
) -> None:
    with tracing.request("POST", None, None) as request:
        request.rename("POST /v1/notifications/email")
        accepted = tracing.current_traceparent()
    assert accepted is not None
    with tracing.delivery(
        accepted, job_id="j1", tenant_id="t1", channel="email", pass_number=2
    ) as deliver:
        with tracing.provider_call("resend", "acc1") as call:
            call.set(tracing.OUTCOME, "transient")
            call.set(tracing.HTTP_STATUS, 503)
            call.failed()
        with tracing.provider_call("postmark", "acc2") as call:
            call.set(tracing.OUTCOME, "success")
        deliver.set(tracing.OUTCOME, "completed")
    tracing.event_applied(
        accepted,
        started_ns=time.time_ns(),
        job_id="j1",
        source="postmark",
        event_type="delivered",
    )
    by_name = {s.name: s for s in _finished(spans)}
    server = by_name["POST /v1/notifications/email"]
    trace_id = server.context.trace_id
    assert {s.context.trace_id for s in by_name.values()} == {trace_id}
    deliver_span = by_name["deliver"]
    assert deliver_span.parent is not None
    assert deliver_span.parent.span_id == server.context.span_id
    assert dict(deliver_span.attributes or {}) == {
        tracing.JOB_ID: "j1",
        tracing.TENANT_ID: "t1",
        tracing.CHANNEL: "email",
        tracing.ATTEMPT: 2,
        tracing.OUTCOME: "completed",
    }
    failed, sent = by_name["send resend"], by_name["send postmark"]
    for call_span in (failed, sent):
        assert call_span.kind is SpanKind.CLIENT
        assert call_span.parent is not None
        assert call_span.parent.span_id == deliver_span.context.span_id
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description is None
    assert (failed.attributes or {})[tracing.HTTP_STATUS] == 503
    event = by_name["provider event"]
    assert event.kind is SpanKind.CONSUMER
    assert event.parent is not None and event.parent.span_id == server.context.span_id
    assert (event.attributes or {})[tracing.EVENT_TYPE] == "delivered"


def test_a_span_ended_by_an_exception_is_an_error_without_the_exceptions_text(
    spans: InMemorySpanExporter,
) -> None:
    with (
        pytest.raises(RuntimeError),
        tracing.delivery(None, job_id="j", tenant_id="t", channel="sms", pass_number=1),
    ):
        raise RuntimeError("+15555550100 refused")
    [span] = _finished(spans)
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is None
    assert not span.events  # no recorded exception, whose message may name an address


def test_a_delivery_of_a_job_without_a_traceparent_starts_a_trace_of_its_own(
    spans: InMemorySpanExporter,
) -> None:
    with tracing.delivery("garbage", job_id="j", tenant_id="t", channel="email", pass_number=1):
        pass
    [span] = _finished(spans)
    assert span.parent is None


def test_the_service_is_named_homing_unless_otel_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for named, expected in ((None, "homing"), ("homing-eu", "homing-eu")):
        if named is None:
            monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
        else:
            monkeypatch.setenv("OTEL_SERVICE_NAME", named)
        exporter = InMemorySpanExporter()
        tracing.start(exporter)
        try:
            with tracing.delivery(None, job_id="j", tenant_id="t", channel="sms", pass_number=1):
                pass
            [span] = _finished(exporter)
        finally:
            tracing.stop()
        assert span.resource.attributes["service.name"] == expected


def test_a_serving_command_with_an_unshipped_exporter_stops_with_one_line(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HOMING_", "OTEL_"))}
    env |= {"HOMING_DATA_DIR": str(tmp_path), "OTEL_TRACES_EXPORTER": "zipkin"}
    done = subprocess.run(
        [sys.executable, "-m", "homing", "worker", "--once"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("homing: OTEL_TRACES_EXPORTER: zipkin is not"), done.stderr
    assert "Traceback" not in done.stderr


def test_a_job_accepted_unsampled_makes_no_span_but_carries_its_trace(
    spans: InMemorySpanExporter,
) -> None:
    unsampled = CALLER[:-2] + "00"
    with tracing.delivery(unsampled, job_id="j", tenant_id="t", channel="webhook", pass_number=1):
        # An outbound webhook still carries the trace, its flag off.
        assert tracing.current_traceparent() == unsampled
        call = tracing.provider_call("webhook", "direct")
        assert call is tracing.provider_call("resend", "acc")  # the shared no-op
    assert tracing.current_traceparent() is None
    tracing.event_applied(
        unsampled, started_ns=time.time_ns(), job_id="j", source="resend", event_type="opened"
    )
    assert _finished(spans) == []


def test_a_pass_sampled_out_at_its_root_makes_no_provider_call_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "traceidratio")
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "0")
    exporter = InMemorySpanExporter()
    tracing.start(exporter)
    try:
        with tracing.delivery(None, job_id="j", tenant_id="t", channel="email", pass_number=1):
            kept = tracing.current_traceparent()
            assert tracing.provider_call("resend", "acc") is tracing.provider_call("x", "y")
        assert kept is not None and not int(kept[53:55], 16) & 1  # not sampled
        assert _finished(exporter) == []
    finally:
        tracing.stop()
