"""The signing secret: generate (shown once), inspect masked, rotate with overlap,
delete; sealed at rest and never in a log or a later response."""

from __future__ import annotations

import io

import httpx
import standardwebhooks
from sqlalchemy import select

from homing.clock import ManualClock
from homing.services import Services
from homing.store.tables.core import metadata
from homing.webhooks import verify
from tests.conftest import TenantClient, make_tenant
from tests.webhooks.conftest import OVERLAP_SECONDS, create_secret, deliver, job, send_webhook
from tests.webhooks.receiver import Received, Receiver


async def test_a_secret_is_shown_once_then_only_masked(tenant: TenantClient) -> None:
    before = await tenant.get("/v1/webhook-secret")
    assert before.json() == {
        "configured": False,
        "preview": None,
        "created_at": None,
        "previous_preview": None,
        "previous_expires_at": None,
    }
    created = await tenant.post("/v1/webhook-secret")
    assert created.status_code == 201
    assert created.headers["Cache-Control"] == "no-store"
    secret = created.json()["secret"]
    assert secret.startswith("whsec_")
    status = (await tenant.get("/v1/webhook-secret")).json()
    assert status["configured"] is True
    assert status["preview"] == f"whsec_…{secret[-4:]}"
    assert status["created_at"] == created.json()["created_at"]
    assert secret not in str(status)
    again = await tenant.post("/v1/webhook-secret")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conflict"


async def test_secrets_belong_to_one_tenant(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    await create_secret(tenant)
    other = await make_tenant(services, api, "globex")
    assert (await other.get("/v1/webhook-secret")).json()["configured"] is False
    assert (await other.post("/v1/webhook-secret/rotate")).status_code == 404
    assert (await other.delete("/v1/webhook-secret")).status_code == 404
    assert (await tenant.get("/v1/webhook-secret")).json()["configured"] is True


async def test_delete_makes_deliveries_unsigned(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    await create_secret(tenant)
    assert (await tenant.delete("/v1/webhook-secret")).status_code == 204
    assert (await tenant.delete("/v1/webhook-secret")).status_code == 404
    assert (await tenant.post("/v1/webhook-secret/rotate")).status_code == 404
    await send_webhook(tenant, f"{receiver.url}/hook")
    await deliver(services)
    [request] = receiver.requests
    assert "webhook-signature" not in request.headers


def _verifies(secret: str, request: Received) -> bool:
    try:
        standardwebhooks.Webhook(secret).verify(request.body, request.headers)
    except standardwebhooks.WebhookVerificationError:
        return False
    return True


async def test_rotation_signs_with_both_secrets_during_the_overlap_and_one_after(
    services: Services, tenant: TenantClient, receiver: Receiver, clock: ManualClock
) -> None:
    old = await create_secret(tenant)
    rotated = await tenant.post("/v1/webhook-secret/rotate")
    assert rotated.status_code == 200
    assert rotated.headers["Cache-Control"] == "no-store"
    new = rotated.json()["secret"]
    assert new != old
    assert rotated.json()["previous_expires_at"] is not None
    status = (await tenant.get("/v1/webhook-secret")).json()
    assert status["preview"].endswith(new[-4:])
    assert status["previous_preview"].endswith(old[-4:])

    await send_webhook(tenant, f"{receiver.url}/during")
    await deliver(services)
    during = receiver.requests[-1]
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    # X-Webhook-Signature carries one signature: the previous secret's, until the
    # overlap ends (receivers holding the new one use the Standard Webhooks headers).
    x_only = {k: v for k, v in during.headers.items() if k.startswith("x-webhook")}
    assert len(during.headers["x-webhook-signature"].split(" ")) == 1
    verify(old, x_only, during.body)
    assert _verifies(new, during) and _verifies(old, during)

    clock.advance(OVERLAP_SECONDS + 1)
    assert (await tenant.get("/v1/webhook-secret")).json()["previous_preview"] is None
    await send_webhook(tenant, f"{receiver.url}/after")
    await deliver(services)
    after = receiver.requests[-1]
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    assert len(after.headers["x-webhook-signature"].split(" ")) == 1
    assert _verifies(new, after) and not _verifies(old, after)
    verify(new, {k: v for k, v in after.headers.items() if k.startswith("x-webhook")}, after.body)


async def test_a_second_rotation_ends_the_first_overlap(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    first = await create_secret(tenant)
    second = (await tenant.post("/v1/webhook-secret/rotate")).json()["secret"]
    third = (await tenant.post("/v1/webhook-secret/rotate")).json()["secret"]
    await send_webhook(tenant, f"{receiver.url}/hook")
    await deliver(services)
    [request] = receiver.requests
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    assert _verifies(third, request) and _verifies(second, request)
    assert not _verifies(first, request)


async def test_no_secret_or_tenant_header_value_in_the_database_logs_or_responses(
    services: Services, tenant: TenantClient, receiver: Receiver, log_stream: io.StringIO
) -> None:
    old = await create_secret(tenant)
    new = (await tenant.post("/v1/webhook-secret/rotate")).json()["secret"]
    header_value = "Bearer customer-endpoint-TopSecret-55555"
    job_id = await send_webhook(
        tenant, f"{receiver.url}/hook", headers={"Authorization": header_value}
    )
    await deliver(services)
    assert receiver.requests[0].headers["authorization"] == header_value
    responses = [
        (await tenant.get("/v1/webhook-secret")).text,
        repr(await job(tenant, job_id)),
        (await tenant.get("/v1/jobs")).text,
    ]
    dump = await _dump(services)
    logs = log_stream.getvalue()
    for secret in (old, new, old.removeprefix("whsec_"), new.removeprefix("whsec_")):
        assert secret not in dump
        assert secret not in logs
        assert all(secret not in text for text in responses)
    assert "TopSecret" not in dump
    assert "TopSecret" not in logs


async def _dump(services: Services) -> str:
    rows: list[str] = []
    async with services.db.transaction() as conn:
        for table in metadata.sorted_tables:
            for row in (await conn.execute(select(table))).all():
                rows.append(repr(tuple(row)))
    return "\n".join(rows)
