"""Traces end to end (docs/tracing.md): the OTEL_* variables turn tracing on, spans
leave through the OTLP/HTTP exporter to a collector on loopback (``bench.otlp_sink``),
and one trace runs from the caller's traceparent through the accept, the worker's
pass and provider call, to the provider's event; an outbound webhook carries it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.otlp_sink import OtlpSink
from homing import tracing
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, register, send
from tests.fixtures import settings_for
from tests.processes import HomingProcess, cli_tenant, eventually, free_port, healthy
from tests.webhooks.receiver import Receiver

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
CALLER = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
SECRETS = ("ada@example.com", "Welcome", "Hello Ada", "hello@acme.example")


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_timeout_seconds=1,
        alert_slack_webhook_url=sandbox.base_url + SLACK_PATH,
        webhook_allowed_networks="127.0.0.0/8",
    )


@pytest.fixture
def collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpSink]:
    """Tracing on, as an operator turns it on: the standard variables, read at start."""
    with OtlpSink() as sink:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", sink.endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "homing-e2e")
        assert tracing.start_from_environment()
        try:
            yield sink
        finally:
            tracing.stop()


def _hex(raw: bytes) -> str:
    return raw.hex()


def _attributes(span: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for attribute in span.attributes:
        value = attribute.value
        found[attribute.key] = (
            value.int_value if value.HasField("int_value") else value.string_value
        )
    return found


def _received(sink: OtlpSink) -> list[Any]:
    assert tracing.flush(), "the OTLP exporter did not finish"
    return sink.spans()


def _one(spans: list[Any], name: str) -> Any:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, (name, sorted(s.name for s in spans))
    return found[0]


def _clean(spans: list[Any]) -> None:
    """No span carries an address, a subject, a body or a sender."""
    for span in spans:
        text = span.name + json.dumps(_attributes(span))
        assert not any(secret in text for secret in SECRETS), text


async def _inbound_url(tenant: TenantClient, sb: Sandbox, account_id: str, base: str) -> str:
    keys = (await sb.http.get("/_sandbox/keys")).json()
    response = await tenant.put(f"/v1/providers/{account_id}/inbound", json=keys["resend"])
    assert response.status_code == 200, response.text
    return base + response.json()["path"]


async def test_one_trace_runs_from_the_callers_traceparent_to_the_providers_event(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
    collector: OtlpSink,
) -> None:
    account = await register(tenant, sandbox, "resend", 1)
    events_url = await _inbound_url(tenant, sb, account["id"], homing_url)
    job_id = await send(tenant, headers={"traceparent": CALLER})
    stored, _ = await services.jobs.get(tenant.tenant_id, job_id)
    assert await deliver(services) == 1
    posted = await sb.http.post(
        "/_sandbox/events",
        json={
            "provider": "resend",
            "message_to": "ada@example.com",
            "type": "delivered",
            "target_url": events_url,
        },
    )
    assert posted.json()["response"]["applied"] == 1, posted.text

    spans = _received(collector)
    accept = _one(spans, "POST /v1/notifications/email")
    assert _hex(accept.trace_id) == CALLER_TRACE
    assert _hex(accept.parent_span_id) == CALLER_SPAN
    assert _attributes(accept)[tracing.HTTP_STATUS] == 202
    # The job kept its accept's span: that is how the worker finds the trace.
    assert stored.traceparent == f"00-{CALLER_TRACE}-{_hex(accept.span_id)}-01"

    deliver_span = _one(spans, "deliver")
    assert _hex(deliver_span.trace_id) == CALLER_TRACE
    assert deliver_span.parent_span_id == accept.span_id
    assert _attributes(deliver_span) == {
        tracing.JOB_ID: job_id,
        tracing.TENANT_ID: tenant.tenant_id,
        tracing.CHANNEL: "email",
        tracing.ATTEMPT: 1,
        tracing.OUTCOME: "completed",
    }
    call = _one(spans, "send resend")
    assert call.parent_span_id == deliver_span.span_id
    assert _attributes(call)[tracing.OUTCOME] == "success"
    assert _attributes(call)[tracing.PROVIDER_ACCOUNT] == account["id"]

    event = _one(spans, "provider event")
    assert _hex(event.trace_id) == CALLER_TRACE
    assert event.parent_span_id == accept.span_id
    assert _attributes(event)[tracing.EVENT_TYPE] == "delivered"
    # Linked to the request that brought it, a trace of its own (the vendor's).
    inbound = _one(spans, "POST /inbound/{provider}/{account_id}")
    assert [link.span_id for link in event.links] == [inbound.span_id]
    assert inbound.trace_id != accept.trace_id
    _clean(spans)
    assert {r["service.name"] for r in collector.resources()} == {"homing-e2e"}


async def test_a_retried_job_is_one_trace_and_a_failed_call_an_error(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    collector: OtlpSink,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=503, count=1)
    job_id = await send(tenant)
    await deliver(services)
    services.clock.advance(3600)  # type: ignore[attr-defined]
    assert await deliver(services) == 1
    spans = _received(collector)
    accept = _one(spans, "POST /v1/notifications/email")
    passes = sorted(
        (s for s in spans if s.name == "deliver"), key=lambda s: _attributes(s)[tracing.ATTEMPT]
    )
    assert [_attributes(s)[tracing.OUTCOME] for s in passes] == ["rescheduled", "completed"]
    assert {s.parent_span_id for s in passes} == {accept.span_id}
    assert {s.trace_id for s in passes} == {accept.trace_id}
    calls = [s for s in spans if s.name == "send resend"]
    failed = [c for c in calls if _attributes(c)[tracing.OUTCOME] == "transient"]
    [failed_call] = failed
    assert _attributes(failed_call)[tracing.HTTP_STATUS] == 503
    assert failed_call.status.code == 2  # STATUS_CODE_ERROR
    assert failed_call.status.message == ""
    assert _attributes(passes[0])[tracing.JOB_ID] == job_id
    _clean(spans)


async def test_an_outbound_webhook_carries_the_traceparent_of_its_call(
    services: Services, tenant: TenantClient, receiver: Receiver, collector: OtlpSink
) -> None:
    foreign = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
    response = await tenant.post(
        "/v1/notifications/webhook",
        json={
            "url": f"{receiver.url}/hooks/orders",
            "payload": {"id": 1},
            "headers": {"Traceparent": foreign, "tracestate": "vendor=x", "X-Kept": "1"},
        },
        headers={"traceparent": CALLER},
    )
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    [request] = receiver.requests
    spans = _received(collector)
    call = _one(spans, "send webhook")
    assert request.headers["traceparent"] == f"00-{CALLER_TRACE}-{_hex(call.span_id)}-01"
    assert "tracestate" not in request.headers
    assert [k for k, _ in request.raw_headers if k.lower() == "traceparent"] == ["traceparent"]
    assert request.headers["x-kept"] == "1"


async def test_off_a_job_keeps_no_traceparent_and_a_webhook_keeps_the_tenants_header(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    assert not tracing.on()
    own = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
    response = await tenant.post(
        "/v1/notifications/webhook",
        json={"url": f"{receiver.url}/h", "payload": {"id": 1}, "headers": {"traceparent": own}},
        headers={"traceparent": CALLER},
    )
    assert response.status_code == 202, response.text
    job, _ = await services.jobs.get(tenant.tenant_id, response.json()["id"])
    assert job.traceparent is None
    assert await deliver(services) == 1
    [request] = receiver.requests
    assert request.headers["traceparent"] == own


async def test_homing_run_traces_as_the_otel_variables_say(
    sandbox: SandboxServer, sb: Sandbox, tmp_path: Path
) -> None:
    env = {
        "HOMING_DATA_DIR": str(tmp_path / "embedded"),
        "HOMING_POLL_INTERVAL_SECONDS": "0.05",
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
    }
    key = cli_tenant(env, tmp_path)["api_key"]
    port = free_port()
    with OtlpSink() as sink:
        traced_env = {
            **env,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": sink.endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
        server = HomingProcess(["run", "--port", str(port)], traced_env, tmp_path / "run.log")
        server.start()
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {key}"},
                timeout=10,
            ) as client:
                await eventually(lambda: healthy(client), what="homing run to listen")
                provider = await client.post(
                    "/v1/providers",
                    json={
                        "channel": "email",
                        "provider": "resend",
                        "credentials": {"api_key": "re_live_Sup3rSecretValue_98765"},
                        "config": {"base_url": sandbox.provider_base_url("resend")},
                    },
                )
                assert provider.status_code == 201, provider.text
                accepted = await client.post(
                    "/v1/notifications/email",
                    json={"to": "ada@example.com", "from": "a@acme.example", "subject": "s"}
                    | {"text": "t"},
                    headers={"traceparent": CALLER},
                )
                assert accepted.status_code == 202, accepted.text
                await eventually(lambda: _has(sink, "send resend"), what="the provider call's span")
        finally:
            assert server.stop() == 0, server.output()
        spans = sink.spans()
    by_name = {s.name: s for s in spans}
    assert _hex(by_name["POST /v1/notifications/email"].trace_id) == CALLER_TRACE
    assert _hex(by_name["deliver"].trace_id) == CALLER_TRACE
    assert by_name["send resend"].parent_span_id == by_name["deliver"].span_id
    _clean(spans)


async def _has(sink: OtlpSink, name: str) -> bool:
    return any(s.name == name for s in sink.spans())
