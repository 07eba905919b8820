"""A notice end to end: recorded once, delivered as a signed operational webhook to the
tenant's operations URL (verified with the ``standardwebhooks`` package) and as platform
email through the platform tenant's sandbox provider; never twice for one event."""

from __future__ import annotations

import json

import standardwebhooks
from prometheus_client import REGISTRY
from sqlalchemy import func, select

from homing.managers.notices import NoticeKind
from homing.models import JobStatus, Priority, Queue
from homing.services import Services
from homing.store.tables.core import jobs
from tests.conftest import TenantClient, deliver
from tests.fixtures import Sandbox
from tests.notices.conftest import PLATFORM_FROM
from tests.store_helpers import notices_of
from tests.webhooks.conftest import create_secret
from tests.webhooks.receiver import Receiver

CONTACT = "ops@acme.example"


async def _configure(tenant: TenantClient, receiver: Receiver) -> str:
    secret = await create_secret(tenant)
    response = await tenant.patch(
        "/v1/settings",
        json={"contact_email": CONTACT, "operations_url": receiver.url + "/homing-ops"},
    )
    assert response.status_code == 200, response.text
    return secret


async def _job_count(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(jobs))).scalar_one())


async def test_a_notice_is_a_signed_webhook_and_a_platform_email(
    services: Services,
    tenant: TenantClient,
    platform: TenantClient,
    receiver: Receiver,
    sb: Sandbox,
) -> None:
    secret = await _configure(tenant, receiver)
    data = {"url": "https://hooks.acme.example/gone", "job_id": "j1"}
    notice = await services.notices.notify(
        tenant.tenant_id, NoticeKind.ENDPOINT_DISABLED, "urlhash1", data
    )
    assert notice is not None and not notice.held
    await deliver(services)

    [request] = receiver.requests
    assert request.path == "/homing-ops"
    standardwebhooks.Webhook(secret).verify(request.body, request.headers)  # raises if not
    body = json.loads(request.body)
    assert body["type"] == "endpoint.disabled"
    assert body["data"] == {"notice_id": notice.id, **data}
    assert request.headers["x-webhook-event"] == "endpoint.disabled"

    [mail] = await sb.messages("sendgrid")
    assert mail["to"] == [CONTACT]
    assert mail["from"] in PLATFORM_FROM
    assert "webhook URL is gone" in mail["subject"]
    assert "https://hooks.acme.example/gone" in mail["text"]

    listed = (await platform.get("/v1/jobs")).json()["data"]
    [logged] = listed
    assert logged["status"] == JobStatus.COMPLETED.value
    stored, _ = await services.jobs.get(platform.tenant_id, logged["id"])
    assert stored.queue is Queue.PLATFORM_EMAIL and stored.priority is Priority.CRITICAL


async def test_the_same_event_is_noticed_once(
    services: Services, tenant: TenantClient, platform: TenantClient, receiver: Receiver
) -> None:
    await _configure(tenant, receiver)
    labels = {"kind": "domain.verified", "result": "duplicate"}
    duplicates = REGISTRY.get_sample_value("homing_notices_total", labels) or 0.0
    first = await services.notices.notify(tenant.tenant_id, NoticeKind.DOMAIN_VERIFIED, "d1", {})
    jobs_after_first = await _job_count(services)
    again = await services.notices.notify(tenant.tenant_id, NoticeKind.DOMAIN_VERIFIED, "d1", {})
    assert first is not None and again is None
    assert REGISTRY.get_sample_value("homing_notices_total", labels) == duplicates + 1
    assert await _job_count(services) == jobs_after_first == 2
    await deliver(services)
    assert len(receiver.requests) == 1


async def test_without_targets_a_notice_is_recorded_and_nothing_is_sent(
    services: Services, tenant: TenantClient, platform: TenantClient, sb: Sandbox
) -> None:
    notice = await services.notices.notify(tenant.tenant_id, NoticeKind.DOMAIN_FAILED, "d1", {})
    assert notice is not None
    assert await _job_count(services) == 0
    [stored] = await notices_of(services.db, tenant.tenant_id)
    assert stored.id == notice.id and stored.kind == "domain.failed"


async def test_without_a_platform_tenant_only_the_webhook_goes(
    services: Services, tenant: TenantClient, receiver: Receiver, sb: Sandbox
) -> None:
    await _configure(tenant, receiver)
    await services.notices.notify(tenant.tenant_id, NoticeKind.DOMAIN_FAILED, "d1", {})
    await deliver(services)
    assert len(receiver.requests) == 1
    assert await sb.messages() == []
